//! Repair of a line cut short: a crash while Pi was writing leaves an entry
//! whose end is missing. What was written is often the whole text of a
//! message but for its last words, so rather than lose it all, [`close`]
//! finishes the JSON (closes the open string, drops a dangling escape or
//! separator, closes every open object and array) and lets the normal
//! parser read what is there.
//!
//! A repaired line is still reported as damaged; its documents are indexed
//! but kept off the active branch, because Pi itself skips the line and
//! never shows it.

/// Write into `out` the line `line` completed as JSON, if it looks cut
/// short (an open string or container at its end). Returns `false` when the
/// line is not a cut-short JSON object, or its end cannot be closed.
pub fn close(line: &[u8], out: &mut Vec<u8>) -> bool {
    close_inner(line, out).is_some()
}

fn close_inner(line: &[u8], out: &mut Vec<u8>) -> Option<()> {
    if line.first() != Some(&b'{') {
        return None;
    }
    // Scan: which containers are open, are we in a string, and is that
    // string an object key (so the value is missing)?
    let mut stack: Vec<u8> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut expect_key = false;
    let mut string_is_key = false;
    let mut after_key = false;
    for &c in line {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
                after_key = string_is_key;
            }
            continue;
        }
        match c {
            b'"' => {
                in_string = true;
                string_is_key = expect_key;
                expect_key = false;
            }
            b'{' => {
                stack.push(b'}');
                expect_key = true;
            }
            b'[' => {
                stack.push(b']');
                expect_key = false;
            }
            b'}' | b']' => {
                if stack.pop()? != c {
                    return None;
                }
                after_key = false;
            }
            b',' => {
                expect_key = stack.last() == Some(&b'}');
                after_key = false;
            }
            b':' => after_key = false,
            _ => {}
        }
    }
    if stack.is_empty() {
        return None; // complete, so damaged some other way
    }
    out.clear();
    out.extend_from_slice(line);
    if in_string {
        if escaped {
            out.pop();
        }
        // A cut inside a \uXXXX escape: drop the partial escape.
        if let Some(pos) = out.iter().rposition(|&b| b == b'\\') {
            let tail = &out[pos + 1..];
            if tail.first() == Some(&b'u') && tail.len() < 5 {
                out.truncate(pos);
            }
        }
        out.push(b'"');
        if string_is_key {
            out.extend_from_slice(b":null");
        }
    } else {
        // Drop a dangling number, literal or separator, then finish a key.
        while let Some(&last) = out.last() {
            if last.is_ascii_whitespace() || last == b',' {
                out.pop();
            } else {
                break;
            }
        }
        match out.last() {
            Some(b':') => out.extend_from_slice(b"null"),
            Some(b'"') if after_key => out.extend_from_slice(b":null"),
            _ => {}
        }
    }
    while let Some(closer) = stack.pop() {
        out.push(closer);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed(s: &str) -> Option<String> {
        let mut out = Vec::new();
        close(s.as_bytes(), &mut out).then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn cut_lines_are_closed() {
        assert_eq!(
            closed(r#"{"type":"message","message":{"role":"user","content":"Now stop it and"#)
                .unwrap(),
            r#"{"type":"message","message":{"role":"user","content":"Now stop it and"}}"#
        );
        assert_eq!(
            closed(r#"{"a":[{"type":"text","text":"x\"#).unwrap(),
            r#"{"a":[{"type":"text","text":"x"}]}"#
        );
        assert_eq!(closed(r#"{"a":"caf\u00"#).unwrap(), r#"{"a":"caf"}"#);
        assert_eq!(closed(r#"{"a":1,"#).unwrap(), r#"{"a":1}"#);
        assert_eq!(closed(r#"{"a":"#).unwrap(), r#"{"a":null}"#);
        assert_eq!(closed(r#"{"a":1,"b""#).unwrap(), r#"{"a":1,"b":null}"#);
        assert_eq!(closed(r#"{"a":1,"bc"#).unwrap(), r#"{"a":1,"bc":null}"#);
        for s in [r#"{"a":1}"#, "not json", r#"[1,2"#, r#"{"a":1}}"#, ""] {
            assert_eq!(closed(s), None, "{s}");
        }
    }
}
