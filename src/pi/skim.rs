//! Skimming: copy a line for parsing, leaving out the big values that hold
//! nothing to index.
//!
//! An assistant line is mostly tool-call arguments (whole files being
//! written or edited), thinking, signatures and usage; its text blocks are
//! a small part. simd-json's cost grows with every byte it parses, so
//! before parsing, [`reduce_into`] copies the line into the parse buffer
//! with the values of such keys replaced by `null`. It only follows the
//! line's structure (strings are skipped with `memchr2`, nothing is
//! unescaped or validated), so it runs at several GB/s, and simd-json then
//! parses what is left. Extraction still sees a normal JSON object: the
//! rules stay in one place, in `extract`.
//!
//! The skim is conservative: if it cannot follow the line (cut short, too
//! deep, not an object), it returns `false` and the caller parses the line
//! whole, so damage is reported exactly as without it.

use super::scan::{skip_string, skip_value, skip_ws, Nesting};
use super::usage::{read_pi, Met};
use super::Kinds;

/// Whether the value of `key` (inside the entry, not at its top level) can
/// be left out under `kinds`.
#[inline]
pub(super) fn elide(key: &[u8], kinds: Kinds) -> bool {
    match key {
        // Tool-call arguments (both spellings); `input` is also a number in
        // `usage`, which is never indexed either.
        b"arguments" | b"input" => !kinds.tools,
        b"thinking" | b"thinkingSignature" => !kinds.thinking,
        // Image data, signatures, streaming leftovers, usage and tool
        // details: never indexed (what Pi spent is read from the line
        // itself, [`super::usage`]).
        b"data" | b"signature" | b"textSignature" | b"partialJson" | b"usage" | b"details" => true,
        _ => false,
    }
}

/// Lines shorter than this are copied whole: skimming them saves less than
/// it costs.
pub const SKIM_MIN_BYTES: usize = 1024;

/// Copy `line` into `out` with the values of inert keys (see the module
/// docs) replaced by `null`. Returns `false`, with `out` in an unspecified
/// state, when the line's structure cannot be followed.
///
/// The message's own `usage` object, if the skim met it (left out like
/// the rest), is left in `usage`: read on the way when Pi wrote it, which
/// costs less than skipping it and reading it again, else where it starts
/// ([`super::usage`]).
pub fn reduce_into(line: &[u8], kinds: Kinds, out: &mut Vec<u8>, usage: &mut Option<Met>) -> bool {
    *usage = None;
    reduce(line, kinds, out, usage).is_some()
}

fn reduce(line: &[u8], kinds: Kinds, out: &mut Vec<u8>, usage: &mut Option<Met>) -> Option<()> {
    out.clear();
    // The last key of the entry itself: the key of the object open at
    // depth 2.
    let mut entry_key: &[u8] = b"";
    let mut copied = 0;
    let mut i = 0;
    let mut nest = Nesting::default();
    if line.first() != Some(&b'{') {
        return None;
    }
    while i < line.len() {
        match line[i] {
            b'"' => {
                let end = skip_string(line, i)?;
                if !nest.expect_key {
                    i = end;
                    continue;
                }
                nest.expect_key = false;
                let key = &line[i + 1..end - 1];
                let colon = skip_ws(line, end);
                if line.get(colon) != Some(&b':') {
                    return None;
                }
                let value = skip_ws(line, colon + 1);
                if nest.depth == 1 {
                    entry_key = key;
                }
                if nest.depth >= 2 && elide(key, kinds) {
                    let value_end = if nest.depth == 2
                        && key == b"usage"
                        && entry_key == b"message"
                        && line.get(value) == Some(&b'{')
                    {
                        let (met, end) = match read_pi(line, value) {
                            Some((u, end)) => (Met::Read(u), end),
                            None => (Met::At(value), skip_value(line, value)?),
                        };
                        *usage = Some(met);
                        end
                    } else {
                        skip_value(line, value)?
                    };
                    out.extend_from_slice(&line[copied..value]);
                    out.extend_from_slice(b"null");
                    copied = value_end;
                    i = value_end;
                } else {
                    i = value;
                }
            }
            b'{' | b'[' => {
                nest.open(line[i])?;
                i += 1;
            }
            b'}' | b']' => {
                nest.close()?;
                i += 1;
            }
            b',' => {
                nest.comma();
                i += 1;
            }
            _ => i += 1,
        }
    }
    if nest.depth != 0 {
        return None;
    }
    out.extend_from_slice(&line[copied..]);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduced(line: &str, kinds: Kinds) -> Option<String> {
        let mut out = Vec::new();
        reduce_into(line.as_bytes(), kinds, &mut out, &mut None)
            .then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn the_message_s_own_usage_is_where_the_skim_met_it() {
        fn met(line: &str) -> Option<Met> {
            let mut usage = None;
            assert!(reduce_into(
                line.as_bytes(),
                Kinds::default(),
                &mut Vec::new(),
                &mut usage
            ));
            usage
        }
        fn at(line: &str) -> Option<&str> {
            match met(line)? {
                Met::At(i) => Some(&line[i..i + 12]),
                Met::Read(_) => None,
            }
        }
        let own = r#"{"type":"message","details":{"usage":{"x":1}},"message":{"role":"assistant","content":[{"type":"toolCall","arguments":{"usage":{"y":2}}}],"usage":{"input":3},"stopReason":"stop"}}"#;
        assert_eq!(at(own), Some(r#"{"input":3},"#));
        // Written as Pi writes it: read on the way, and left out all the same.
        let pi = own.replace(
            r#"{"input":3}"#,
            r#"{"input":3,"output":4,"cacheRead":5,"cacheWrite":6,"totalTokens":18,"cost":{"input":0.1,"output":0.2,"cacheRead":0.01,"cacheWrite":0.02,"total":0.33}}"#,
        );
        match met(&pi) {
            Some(Met::Read(u)) => assert_eq!((u.input, u.cache_write, u.cost()), (3, 6, 0.33)),
            other => panic!("{other:?}"),
        }
        let mut out = Vec::new();
        assert!(reduce_into(
            pi.as_bytes(),
            Kinds::default(),
            &mut out,
            &mut None
        ));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"type":"message","details":{"usage":null},"message":{"role":"assistant","content":[{"type":"toolCall","arguments":null}],"usage":null,"stopReason":"stop"}}"#
        );
        // Only the message's: not another object's, not one in the content.
        let other = r#"{"type":"message","details":{"usage":{"x":1}},"message":{"role":"toolResult","content":[{"usage":{"y":2}}],"usage":null}}"#;
        assert_eq!(at(other), None);
        let entry = r#"{"type":"usage","usage":{"input":3},"message":{"usage":"text"}}"#;
        assert_eq!(at(entry), None);
    }

    #[test]
    fn tool_arguments_thinking_and_usage_are_left_out() {
        let line = r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"thinking","thinking":"long \"thought\"","thinkingSignature":"sig"},{"type":"text","text":"keep \"arguments\": {"},{"type":"toolCall","id":"c","name":"write","arguments":{"path":"x","content":"a\\b\n}{"}}],"usage":{"input":1,"output":2,"cost":{"input":0.5}},"model":"m"}}"#;
        assert_eq!(
            reduced(line, Kinds::default()).unwrap(),
            r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"thinking","thinking":null,"thinkingSignature":null},{"type":"text","text":"keep \"arguments\": {"},{"type":"toolCall","id":"c","name":"write","arguments":null}],"usage":null,"model":"m"}}"#
        );
        let all = reduced(line, Kinds::ALL).unwrap();
        assert!(all.contains(r#""thinking":"long \"thought\"""#));
        assert!(all.contains(r#""arguments":{"path":"x","content":"a\\b\n}{"}"#));
        assert!(all.contains(r#""usage":null"#));
    }

    #[test]
    fn top_level_keys_and_whitespace() {
        let line = r#"{ "type" : "custom_message", "details" : {"a":1}, "message" : { "content" : [ { "data" : "AAAA" , "text" : "t" } ] } }"#;
        assert_eq!(
            reduced(line, Kinds::default()).unwrap(),
            r#"{ "type" : "custom_message", "details" : {"a":1}, "message" : { "content" : [ { "data" : null , "text" : "t" } ] } }"#
        );
    }

    #[test]
    fn lines_it_cannot_follow_are_refused() {
        for line in [
            r#"{"type":"message","message":{"content":[{"arguments":{"a":"b"#,
            r#"{"a":"unterminated"#,
            r#"[1,2]"#,
            r#"{"a":1}}"#,
            "",
        ] {
            assert_eq!(reduced(line, Kinds::default()), None, "{line}");
        }
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(70), "]".repeat(70));
        assert_eq!(reduced(&deep, Kinds::default()), None);
    }
}
