//! Lines that hold several JSON objects back to back: a write that lost
//! its newline, then Pi's next append on the same line. Seen in real Pi
//! files, where the glued entries are ordinary messages that later entries
//! name as their parent: read as one damaged line, they would take the
//! rest of the session off the active branch.
//!
//! [`split`] finds the objects by following the line's structure (strings
//! and their escapes, nesting), stopping at the end of each top-level
//! value, as a streaming parser does; each object is then parsed and
//! indexed as its own entry at that line. What follows the last complete
//! object (a second write cut short) is left to be read as a line cut
//! short is.

use std::ops::Range;

/// Where the objects of a glued line are.
#[derive(Debug, PartialEq, Eq)]
pub struct Glued {
    /// Each complete top-level object, in order.
    pub objects: Vec<Range<usize>>,
    /// What follows the last one, trimmed: empty, or the start of an
    /// object that was cut short.
    pub tail: Range<usize>,
}

/// Whether `line` may hold glued objects: the two bytes that join them
/// (`}{`: Pi writes no space between values) followed by a key. The test
/// for the lines the prefix scan would skip (a glued line whose first
/// entry holds nothing to index must not hide the second): one SIMD
/// substring search over the line, the kind of pass the newline search
/// already makes, and a false positive (`}{"` inside a string) only costs
/// that line a full parse. (Not measured here: the benches say what it
/// costs a build.)
#[inline]
pub fn may_be_glued(line: &[u8]) -> bool {
    static JOIN: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"}{\""));
    JOIN.find(line).is_some()
}

/// The objects of `line` if it holds several back to back (the second
/// may be cut short); `None` for anything else, which is read as a
/// single line.
pub fn split(line: &[u8]) -> Option<Glued> {
    let mut objects = Vec::new();
    let mut i = skip_ws(line, 0);
    while line.get(i) == Some(&b'{') {
        match object_end(line, i) {
            Some(end) => {
                objects.push(i..end);
                i = skip_ws(line, end);
            }
            None => break,
        }
    }
    let end = line.trim_ascii_end().len().max(i);
    let tail = i..end;
    let more = line.get(i) == Some(&b'{');
    (objects.len() >= 2 || (objects.len() == 1 && more)).then_some(Glued { objects, tail })
}

fn skip_ws(line: &[u8], mut i: usize) -> usize {
    while line.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Just past the object that starts at `line[start] == b'{'`, if it ends
/// on this line.
fn object_end(line: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < line.len() {
        match line[i] {
            b'"' => {
                // To the closing quote: one not escaped by an odd number
                // of backslashes.
                i += 1;
                loop {
                    let q = i + memchr::memchr2(b'"', b'\\', line.get(i..)?)?;
                    if line[q] == b'\\' {
                        i = q + 2;
                        continue;
                    }
                    i = q + 1;
                    break;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(line: &str) -> Option<(Vec<&str>, &str)> {
        let g = split(line.as_bytes())?;
        Some((
            g.objects.iter().map(|r| &line[r.clone()]).collect(),
            &line[g.tail],
        ))
    }

    #[test]
    fn objects_back_to_back_are_split_at_the_end_of_each() {
        assert_eq!(
            parts(r#"{"a":"x}{\"y"}{"b":[1,{"c":"\\"}]}{"d":2}"#),
            Some((
                vec![r#"{"a":"x}{\"y"}"#, r#"{"b":[1,{"c":"\\"}]}"#, r#"{"d":2}"#],
                ""
            ))
        );
        // The second cut short: the first, and the rest as a tail.
        assert_eq!(
            parts(r#"{"a":1}{"b":"cut"#),
            Some((vec![r#"{"a":1}"#], r#"{"b":"cut"#))
        );
        assert_eq!(
            parts("{\"a\":1} {\"b\":2}  "),
            Some((vec![r#"{"a":1}"#, r#"{"b":2}"#], ""))
        );
    }

    #[test]
    fn single_objects_and_other_damage_are_not_glued() {
        for line in [
            r#"{"a":"}{\"x"}"#,
            r#"{"a":1}"#,
            r#"{"a":1} trailing words"#,
            r#"{"a":"cut"#,
            "not json",
            "",
            "[1,2][3]",
        ] {
            assert_eq!(split(line.as_bytes()), None, "{line}");
        }
        assert!(may_be_glued(br#"{"a":1}{"b":2}"#));
        assert!(!may_be_glued(br#"{"a":1}"#));
    }
}
