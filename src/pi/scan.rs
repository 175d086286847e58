//! Following a JSON line's structure without parsing it: where a string,
//! a value or whitespace ends. The skim ([`super::skim`]) copies a line
//! around the values it leaves out with these, and the usage reader
//! ([`super::usage`]) steps over the keys it does not read; both stop at
//! what they cannot follow, and the line is parsed whole.

/// Index just past the string starting at `line[i] == b'"'`.
///
/// Searches for quotes only, then counts the backslashes before each one:
/// tool arguments are full of `\n` escapes but have far fewer `\"`, so
/// this stops about half as often as searching for both bytes.
#[inline]
pub(super) fn skip_string(line: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let q = j + memchr::memchr(b'"', line.get(j..)?)?;
        let mut backslashes = 0;
        while q - backslashes > i + 1 && line[q - 1 - backslashes] == b'\\' {
            backslashes += 1;
        }
        if backslashes % 2 == 0 {
            return Some(q + 1);
        }
        j = q + 1;
    }
}

/// Index just past the value starting at `line[i]`.
#[inline]
pub(super) fn skip_value(line: &[u8], i: usize) -> Option<usize> {
    match *line.get(i)? {
        b'"' => skip_string(line, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < line.len() {
                match line[j] {
                    b'"' => {
                        j = skip_string(line, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let rest = &line[i..];
            let end = rest.iter().position(|&c| matches!(c, b',' | b'}' | b']'))?;
            Some(i + end)
        }
    }
}

/// Index of the first byte at or after `i` that is not whitespace.
#[inline]
pub(super) fn skip_ws(line: &[u8], mut i: usize) -> usize {
    while i < line.len() && line[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}
