//! Giant lines: one entry of many megabytes (a pasted log, a tool's whole
//! output, a file written through a tool call), read in bounded memory.
//!
//! A line is parsed by copying it into simd-json's buffer, which then
//! unescapes its strings with a second buffer of the same size, and its
//! text is copied again into a document, which tantivy copies and indexes
//! whole: a line cost several times its size. A line longer than
//! [`max_document_bytes`] takes this path instead: `reduce` walks it once
//! (strings are skipped with `memchr`, nothing is unescaped) and copies
//! into a small buffer only its structure and the first
//! [`MAX_DOCUMENT_BYTES`] of its string values (cut where no escape or
//! UTF-8 character is split), leaving out the inert keys as the skim does;
//! that copy is what simd-json parses and what the rules extract from.
//! Past the budget, long strings are cut to nothing and, should the
//! structure alone pass twice the budget, the copy stops at the next
//! element and is closed like a line cut short. The walk reports its
//! progress, so that the mapped pages behind it can be released: the
//! line itself is never resident whole.
//!
//! A build of a file of one line of hundreds of megabytes then takes a
//! fraction of a second and a few tens of megabytes
//! ([docs/performance.md](../../docs/performance.md#lines-of-hundreds-of-megabytes)).
//!
//! What is left out is never silent: the chunk parser records each
//! truncated line ([`super::Truncation`]), which the build reports.

use memchr::memchr;

use super::scan::{skip_ws, Nesting};
use super::skim::elide;
use super::Kinds;

/// The most text one document (one message) contributes to the index:
/// 1 MiB. A document is copied a few times on its way into tantivy and
/// indexed whole, a search hit loads its stored text whole (and prints it
/// with `--json`), and a session's documents are held until its file is
/// read: this, with `--memory`, bounds what one line costs a build and
/// one hit a search: at 8 MiB a page of hits on giant messages, and the
/// build of a file of them, cost several times more memory
/// ([docs/performance.md](../../docs/performance.md#lines-of-hundreds-of-megabytes)).
/// It is far above any message a person writes or Pi's own tools return
/// (they cut their output far below it), and bounds pasted logs and
/// other tools' output, whose first MiB is indexed and the cut reported.
/// Lines longer than this are read
/// by `reduce` rather than parsed whole: such a line cannot yield a larger
/// document either way.
pub const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// [`MAX_DOCUMENT_BYTES`], or the size a test chose with
/// `PI_INDEX_TEST_MAX_DOCUMENT` (`failpoints` feature only), so that the
/// tests reach it with small files.
#[inline]
pub fn max_document_bytes() -> usize {
    crate::failpoint::max_document_bytes(MAX_DOCUMENT_BYTES)
}

/// Strings up to this long (ids, types, roles, model names) are kept
/// whole, whatever the budget.
const SMALL_STRING: usize = 256;

/// How often the walk reports its progress, in bytes.
pub(super) const PROGRESS_STEP: usize = crate::source::RELEASE_STEP;

/// How a reduced giant line ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum End {
    /// The line is complete, and so is the copy.
    Complete,
    /// The line itself is cut short (a crash while Pi wrote it): the copy
    /// ends where the line does, and needs closing.
    CutShort,
    /// The copy was stopped at the structure's budget: it needs closing,
    /// but the line is whole.
    Stopped,
}

/// What [`reduce`] made of a giant line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Reduced {
    pub(super) end: End,
    /// Some string value was cut, or the copy stopped early.
    pub(super) truncated: bool,
}

/// Copy into `out` the structure of `line` and at most `budget` bytes of
/// its long string values (see the module docs), leaving out inert keys.
/// `progress(at)` is called as the walk passes every [`PROGRESS_STEP`]
/// bytes: nothing before `at` is read again. `None` when the line is not a
/// JSON object whose structure can be followed.
pub(super) fn reduce(
    line: &[u8],
    kinds: Kinds,
    budget: usize,
    out: &mut Vec<u8>,
    progress: &mut dyn FnMut(usize),
) -> Option<Reduced> {
    out.clear();
    let max_out = budget.saturating_mul(2).saturating_add(1 << 20);
    let mut left = budget;
    let mut truncated = false;
    let mut nest = Nesting::default();
    let mut next_progress = PROGRESS_STEP;
    let mut i = skip_ws(line, 0);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    // Blanks before the object are left out: the copy starts at `{`.
    let mut copied = i;
    // The line ends inside its structure: copy what is pending, up to
    // `upto`, and say so.
    let cut_short = |out: &mut Vec<u8>, from: usize, upto: usize, truncated: bool| {
        out.extend_from_slice(&line[from..upto]);
        Some(Reduced {
            end: End::CutShort,
            truncated,
        })
    };
    while i < line.len() {
        if i >= next_progress {
            progress(i);
            next_progress = i + PROGRESS_STEP;
        }
        match line[i] {
            b'"' => {
                let Some(end) = skip_string(line, i, progress) else {
                    // Cut short inside this string.
                    if nest.expect_key {
                        return cut_short(out, copied, i, truncated);
                    }
                    let body = &line[i + 1..];
                    let cut = safe_cut(body, left.min(body.len()));
                    return cut_short(out, copied, i + 1 + cut, truncated || cut < body.len());
                };
                if !nest.expect_key {
                    let body = end - i - 2;
                    if body > SMALL_STRING {
                        if body > left {
                            let cut = safe_cut(&line[i + 1..end - 1], left);
                            out.extend_from_slice(&line[copied..i + 1 + cut]);
                            out.push(b'"');
                            copied = end;
                            truncated = true;
                            left -= cut;
                        } else {
                            left -= body;
                        }
                    }
                    i = end;
                    continue;
                }
                nest.expect_key = false;
                let key = &line[i + 1..end - 1];
                let colon = skip_ws(line, end);
                match line.get(colon) {
                    Some(b':') => {}
                    None => return cut_short(out, copied, i, truncated),
                    Some(_) => return None,
                }
                let value = skip_ws(line, colon + 1);
                if nest.depth >= 2 && elide(key, kinds) {
                    out.extend_from_slice(&line[copied..value]);
                    let Some(value_end) = skip_value(line, value, progress) else {
                        return cut_short(out, value, value, truncated);
                    };
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
                if out.len() + (i - copied) > max_out {
                    // Structure past its budget: stop after a whole value.
                    out.extend_from_slice(&line[copied..i]);
                    return Some(Reduced {
                        end: End::Stopped,
                        truncated: true,
                    });
                }
                nest.comma();
                i += 1;
            }
            _ => i += 1,
        }
    }
    if nest.depth != 0 {
        return cut_short(out, copied, line.len(), truncated);
    }
    out.extend_from_slice(&line[copied..]);
    Some(Reduced {
        end: End::Complete,
        truncated,
    })
}

/// Index just past the string starting at `line[i] == b'"'`, searching a
/// [`PROGRESS_STEP`] at a time and reporting progress past each (a giant
/// string is mostly text with quotes escaped all along it); `None` when
/// the line ends first.
fn skip_string(line: &[u8], i: usize, progress: &mut dyn FnMut(usize)) -> Option<usize> {
    let mut j = i + 1;
    let mut next_progress = j + PROGRESS_STEP;
    loop {
        if j >= next_progress {
            progress(j);
            next_progress = j + PROGRESS_STEP;
        }
        let window = next_progress.min(line.len());
        match memchr(b'"', &line[j..window]) {
            Some(k) => {
                let q = j + k;
                let mut backslashes = 0;
                while q - backslashes > i + 1 && line[q - 1 - backslashes] == b'\\' {
                    backslashes += 1;
                }
                if backslashes % 2 == 0 {
                    return Some(q + 1);
                }
                j = q + 1;
            }
            None if window == line.len() => return None,
            None => j = window,
        }
    }
}

/// Index just past the value starting at `line[i]`, reporting progress;
/// `None` when the line ends first.
fn skip_value(line: &[u8], i: usize, progress: &mut dyn FnMut(usize)) -> Option<usize> {
    match *line.get(i)? {
        b'"' => skip_string(line, i, progress),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            let mut next_progress = i + PROGRESS_STEP;
            while j < line.len() {
                if j >= next_progress {
                    progress(j);
                    next_progress = j + PROGRESS_STEP;
                }
                match line[j] {
                    b'"' => {
                        j = skip_string(line, j, progress)?;
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

/// The length of the longest prefix of the string body `s` (between its
/// quotes, escapes as written) that is at most `max` bytes and splits
/// neither an escape (a surrogate pair counts as one) nor a UTF-8
/// character.
pub(super) fn safe_cut(s: &[u8], max: usize) -> usize {
    let max = max.min(s.len());
    let mut i = 0;
    loop {
        let next = memchr(b'\\', &s[i..max]).map(|k| i + k);
        let Some(at) = next else {
            // Plain bytes up to `max`: back up to a character's start.
            let mut c = max;
            while c > i && c < s.len() && s[c] & 0xC0 == 0x80 {
                c -= 1;
            }
            return c;
        };
        let len = escape_len(&s[at..]);
        if at + len > max {
            return at;
        }
        i = at + len;
    }
}

/// The length of the escape at the start of `s` (`s[0] == b'\\'`): 2, 6
/// for `\uXXXX`, 12 for a surrogate pair.
fn escape_len(s: &[u8]) -> usize {
    let hex = |b: &[u8]| -> Option<u16> {
        let digits = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(digits, 16).ok()
    };
    if s.get(1) != Some(&b'u') {
        return 2.min(s.len());
    }
    match s.get(2..).and_then(hex) {
        None => 2.min(s.len()),
        Some(high) if (0xD800..0xDC00).contains(&high) => {
            let low = s.get(8..).and_then(hex);
            if s.get(6..8) == Some(b"\\u") && low.is_some() {
                12
            } else {
                6
            }
        }
        Some(_) => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduced(line: &str, budget: usize) -> (String, Option<Reduced>) {
        let mut out = Vec::new();
        let r = reduce(
            line.as_bytes(),
            Kinds::default(),
            budget,
            &mut out,
            &mut |_| {},
        );
        (String::from_utf8_lossy(&out).into_owned(), r)
    }

    #[test]
    fn long_strings_are_cut_to_the_budget_and_short_ones_kept() {
        let long = "x".repeat(1000);
        let line = format!(
            r#"{{"type":"message","id":"a1","message":{{"role":"user","content":"{long}","other":"{long}"}}}}"#
        );
        let (out, r) = reduced(&line, 600);
        assert_eq!(
            r,
            Some(Reduced {
                end: End::Complete,
                truncated: true
            })
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["message"]["content"].as_str().unwrap().len(), 600);
        assert_eq!(v["message"]["other"], "");
        assert_eq!(v["id"], "a1");
        let (out, r) = reduced(&line, 5000);
        assert_eq!(out, line);
        assert!(!r.unwrap().truncated);
    }

    #[test]
    fn cuts_split_no_escape_and_no_character() {
        for (body, max, want) in [
            (r"abc\ndef", 4, 3),
            (r"abc\ndef", 5, 5),
            (r"ab\u00e9cd", 5, 2),
            (r"ab\u00e9cd", 8, 8),
            (r"a\ud83d\ude00b", 8, 1),
            (r"a\ud83d\ude00b", 13, 13),
            (r"a\\\\b", 2, 1),
            (r"a\\\\b", 3, 3),
            ("aé", 2, 1),
            ("aé", 3, 3),
            ("a😀b", 3, 1),
        ] {
            assert_eq!(safe_cut(body.as_bytes(), max), want, "{body} {max}");
        }
    }

    #[test]
    fn inert_values_are_left_out_and_cut_lines_end_open() {
        let line = r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","arguments":{"path":"x"}},{"type":"text","text":"kept"}]}}"#;
        let (out, r) = reduced(line, 100);
        assert!(out.contains(r#""arguments":null"#), "{out}");
        assert_eq!(r.unwrap().end, End::Complete);
        let cut = r#"{"type":"message","message":{"role":"user","content":"so far"#;
        let (out, r) = reduced(cut, 100);
        assert_eq!(out, cut);
        assert_eq!(r.unwrap().end, End::CutShort);
        let cut = format!(r#"{{"a":{{"b":"{}"#, "y".repeat(1000));
        let (out, r) = reduced(&cut, 300);
        assert_eq!(out.len(), r#"{"a":{"b":""#.len() + 300);
        assert_eq!(
            r,
            Some(Reduced {
                end: End::CutShort,
                truncated: true
            })
        );
        assert_eq!(reduced("[1]", 10).1, None);
        assert_eq!(reduced(r#"{"a":1}}"#, 10).1, None);
    }

    #[test]
    fn structure_past_its_budget_stops_at_a_whole_element() {
        let items: Vec<String> = (0..200_000).map(|i| format!(r#"{{"t":"{i}"}}"#)).collect();
        let line = format!(r#"{{"type":"x","list":[{}]}}"#, items.join(","));
        let mut out = Vec::new();
        let r = reduce(line.as_bytes(), Kinds::default(), 0, &mut out, &mut |_| {}).unwrap();
        assert_eq!(r.end, End::Stopped);
        assert!(out.len() <= (1 << 20) + 20);
        let mut closed = Vec::new();
        assert!(super::super::repair::close(&out, &mut closed));
        let v: serde_json::Value = serde_json::from_slice(&closed).unwrap();
        assert!(!v["list"].as_array().unwrap().is_empty());
    }

    #[test]
    fn progress_is_reported_along_a_giant_string() {
        // Plain text, and text with an escaped quote every few bytes (the
        // search for the string's end stops at each).
        for text in [
            "z".repeat(3 * PROGRESS_STEP),
            r#"a \"b\" "#.repeat(PROGRESS_STEP / 3),
        ] {
            let line = format!(r#"{{"a":"{text}"}}"#);
            let mut seen = Vec::new();
            let mut out = Vec::new();
            reduce(line.as_bytes(), Kinds::default(), 10, &mut out, &mut |at| {
                seen.push(at)
            })
            .unwrap();
            assert!(seen.len() >= 2, "{seen:?}");
            assert!(seen.windows(2).all(|w| w[0] < w[1]));
            assert!(seen.windows(2).all(|w| w[1] - w[0] <= PROGRESS_STEP + 8));
            assert!(*seen.last().unwrap() + PROGRESS_STEP + 8 >= line.len());
        }
    }

    #[test]
    fn blanks_before_the_object_are_left_out() {
        let (out, r) = reduced(r#"  {"a":"b"}"#, 10);
        assert_eq!(out, r#"{"a":"b"}"#);
        assert_eq!(r.unwrap().end, End::Complete);
        let (out, r) = reduced(r#" {"a":"b"#, 10);
        assert_eq!(out, r#"{"a":"b"#);
        assert_eq!(r.unwrap().end, End::CutShort);
    }
}
