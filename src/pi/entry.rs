//! One line of a session, seen as cheaply as its content allows.
//!
//! Most of a real session's bytes are tool results and tool-call arguments;
//! only a few percent are text a person reads. So every line first goes
//! through [`peek`], a prefix scan of the top-level keys Pi writes first
//! (`type`, `id`, `parentId`, `timestamp`, then `message.role`). When that
//! prefix already shows the line holds nothing to index (a `toolResult`
//! when tools are not indexed, a `label`, extension state, an unknown entry
//! type), the scan returns the entry's `id` and `parentId`, borrowed from
//! the mapped bytes, and the line is never copied or parsed: the branch
//! computation still sees it.
//!
//! Every other line is parsed by [`LineParser`] with simd-json's tape API:
//! the line is copied once into a per-thread padded buffer (simd-json
//! unescapes strings in place and needs padding after the input, and the
//! mapping is read-only), then parsed into a reused tape with reused
//! buffers. Strings on the tape borrow from that buffer; nothing is
//! allocated per line once the buffers have grown to the longest line.
//!
//! When the prefix is not what Pi writes (keys in another order, escapes in
//! an id, whitespace), `peek` says [`Peek::Parse`]: the full parse is always
//! correct, the scan only ever saves work.

use simd_json::{Buffers, Node, Tape};

use super::skim::{reduce_into, SKIM_MIN_BYTES};
use super::usage::Met;
use super::Kinds;

/// What the prefix scan concluded about a line.
#[derive(Debug, PartialEq, Eq)]
pub enum Peek<'a> {
    /// The line may hold something to index (or the scan is unsure):
    /// parse it fully.
    Parse,
    /// The line is an entry with nothing to index; here are its tree links.
    Skip {
        /// The entry's `id`, if it has one.
        id: Option<&'a str>,
        /// The entry's `parentId`, if it has one and it is not null.
        parent: Option<&'a str>,
        /// A message's role, when the line is a message's.
        role: Option<&'a str>,
    },
}

/// Whether an entry of type `ty`, on `line`, can be skipped without
/// parsing under `kinds`: it produces no document, sets no session fact
/// and records no usage. `message` entries are decided by their role
/// instead.
fn type_is_inert(ty: &str, kinds: Kinds, line: &[u8]) -> bool {
    match ty {
        "message" | "model_change" | "session_info" | "session" => false,
        // Usage is what they are.
        "usage" | "model_usage" => false,
        // They may record usage (what a summary's model call cost), which
        // is read from the line's bytes: whatever the kinds, unless no
        // `usage` key is there.
        "compaction" | "branch_summary" => {
            !kinds.summary && memchr::memmem::find(line, b"\"usage\"").is_none()
        }
        // Oh My Pi's subagent prompt.
        "session_init" => !kinds.system,
        "custom_message" => !kinds.custom,
        // Needed for the edited marks of its target, whatever the kinds.
        "context_edit" => false,
        // thinking_level_change, label, custom (extension state), Oh My
        // Pi's title_change, ttsr_injection,
        // credential_pin, mode_change, service_tier_change and
        // reset_boundary, and entry types newer than this code: nothing
        // to index.
        _ => true,
    }
}

/// Whether a `message` entry with this role produces a document.
pub fn role_is_indexed(role: &str, kinds: Kinds) -> bool {
    match role {
        "user" | "assistant" => true,
        "toolResult" | "bashExecution" | "pythonExecution" | "fileMention" => kinds.tools,
        "custom" | "hookMessage" | "developer" => kinds.custom,
        "branchSummary" | "compactionSummary" => kinds.summary,
        "system" => kinds.system,
        _ => false,
    }
}

/// A tiny cursor over the line's bytes for the prefix scan.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    /// The bytes of a string with no escapes, borrowed; `None` if it has a
    /// backslash or does not end on this line. The strings looked at here
    /// are short keys and ids, so a plain loop beats a `memchr` call.
    #[inline]
    fn simple_bytes(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        let rest = &self.b[start..];
        let end = rest.iter().position(|&c| c == b'"' || c == b'\\')?;
        if rest[end] != b'"' {
            return None;
        }
        self.i += end + 1;
        Some(&rest[..end])
    }

    /// Like [`Cursor::simple_bytes`], as UTF-8 text.
    #[inline]
    fn simple_str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.simple_bytes()?).ok()
    }

    /// A string or `null`.
    #[inline]
    fn str_or_null(&mut self) -> Option<Option<&'a str>> {
        if self.b[self.i..].starts_with(b"null") {
            self.i += 4;
            Some(None)
        } else {
            self.simple_str().map(Some)
        }
    }
}

/// Scan the start of `line` and decide whether it must be parsed. With
/// `needs_ids` (version 2 and later), a line is only skipped once its `id`
/// and `parentId` have been seen, so the active branch stays exact.
///
/// A skipped line is not validated as JSON beyond ending in `}`: it holds
/// nothing that would be indexed, so damage inside it loses nothing.
pub fn peek(line: &[u8], kinds: Kinds, needs_ids: bool) -> Peek<'_> {
    peek_inner(
        line,
        needs_ids,
        |ty| type_is_inert(ty, kinds, line),
        |role| !role_is_indexed(role, kinds),
    )
    .unwrap_or(Peek::Parse)
}

/// Like [`peek`], for a pass that only wants the tree links (and the
/// session facts: model changes and names): every message is inert.
pub fn peek_links(line: &[u8], needs_ids: bool) -> Peek<'_> {
    peek_inner(
        line,
        needs_ids,
        |ty| {
            !matches!(
                ty,
                "model_change" | "session_info" | "session" | "context_edit"
            )
        },
        |_| true,
    )
    .unwrap_or(Peek::Parse)
}

fn peek_inner(
    line: &[u8],
    needs_ids: bool,
    inert_type: impl Fn(&str) -> bool,
    inert_role: impl Fn(&str) -> bool,
) -> Option<Peek<'_>> {
    if line.last() != Some(&b'}') {
        return None;
    }
    let mut c = Cursor { b: line, i: 0 };
    c.eat(b'{')?;
    let mut ty: Option<&str> = None;
    let mut id: Option<Option<&str>> = None;
    let mut parent: Option<Option<&str>> = None;
    let ids_ready = |id: &Option<Option<&str>>, parent: &Option<Option<&str>>| {
        !needs_ids || (id.is_some() && parent.is_some())
    };
    loop {
        let key = c.simple_bytes()?;
        c.eat(b':')?;
        match key {
            b"type" => {
                if ty.is_some() {
                    return None;
                }
                ty = Some(c.simple_str()?);
            }
            b"id" => {
                if id.is_some() {
                    return None;
                }
                id = Some(c.str_or_null()?);
            }
            b"parentId" => {
                if parent.is_some() {
                    return None;
                }
                parent = Some(c.str_or_null()?);
            }
            b"timestamp" => {
                c.simple_bytes()?;
            }
            b"message" => {
                if ty? != "message" || !ids_ready(&id, &parent) {
                    return None;
                }
                c.eat(b'{')?;
                if c.simple_bytes()? != b"role" {
                    return None;
                }
                c.eat(b':')?;
                let role = c.simple_str()?;
                if !inert_role(role) {
                    return None;
                }
                return Some(Peek::Skip {
                    id: id.flatten(),
                    parent: parent.flatten(),
                    role: Some(role),
                });
            }
            _ => {
                // Any other key: the base fields are behind us. Decide on
                // the type alone, if we may.
                let ty = ty?;
                if ty == "message" || !inert_type(ty) || !ids_ready(&id, &parent) {
                    return None;
                }
                return Some(Peek::Skip {
                    id: id.flatten(),
                    parent: parent.flatten(),
                    role: None,
                });
            }
        }
        if c.eat(b',').is_none() {
            // End of the object (or something unexpected): decide now.
            c.eat(b'}')?;
            let ty = ty?;
            if ty == "message" || !inert_type(ty) || !ids_ready(&id, &parent) {
                return None;
            }
            return Some(Peek::Skip {
                id: id.flatten(),
                parent: parent.flatten(),
                role: None,
            });
        }
    }
}

/// Why a line could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    /// Not valid JSON (cut short, garbage, …). Carries simd-json's message.
    Json(String),
    /// Valid JSON, but not an object.
    NotObject,
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::Json(e) => write!(f, "invalid JSON: {e}"),
            LineError::NotObject => f.write_str("not a JSON object"),
        }
    }
}

/// A reusable simd-json parser for whole lines: one per thread.
pub struct LineParser {
    buf: Vec<u8>,
    buffers: Buffers,
    tape: Option<Tape<'static>>,
}

impl Default for LineParser {
    fn default() -> Self {
        Self::new()
    }
}

impl LineParser {
    /// A parser whose buffers grow to the longest line seen.
    pub fn new() -> Self {
        LineParser {
            buf: Vec::new(),
            buffers: Buffers::new(4096),
            tape: Some(Tape::null().reset()),
        }
    }

    /// Parse `line` and hand its root value to `f`. The value borrows this
    /// parser's buffer, so it cannot outlive the call. Invalid UTF-8 is a
    /// JSON error here; see [`LineParser::parse_lossy`].
    pub fn parse<R>(
        &mut self,
        line: &[u8],
        f: impl FnOnce(simd_json::tape::Value<'_, '_>) -> R,
    ) -> Result<R, LineError> {
        let len = line.len();
        self.buf.clear();
        self.buf.reserve(len + simd_json::INPUT_PADDING);
        self.buf.extend_from_slice(line);
        self.buf.resize(len + simd_json::INPUT_PADDING, b' ');
        self.parse_buf(len, f)
    }

    /// Like [`LineParser::parse`], but a long line is first skimmed (see
    /// [`super::skim`]): values that hold nothing to index under `kinds`
    /// are left out of the copy simd-json parses. A line the skim cannot
    /// follow, or whose skimmed copy does not parse, is parsed whole, so
    /// errors are those of the whole line.
    ///
    /// `f` is also handed what the skim met of the message's own `usage`
    /// object, if it met it ([`Met`]).
    pub fn parse_skimmed<R>(
        &mut self,
        line: &[u8],
        kinds: Kinds,
        mut f: impl FnMut(simd_json::tape::Value<'_, '_>, Option<Met>) -> R,
    ) -> Result<R, LineError> {
        let mut usage = None;
        if line.len() >= SKIM_MIN_BYTES && reduce_into(line, kinds, &mut self.buf, &mut usage) {
            let len = self.buf.len();
            self.buf.resize(len + simd_json::INPUT_PADDING, b' ');
            if let Ok(r) = self.parse_buf(len, |v| f(v, usage)) {
                return Ok(r);
            }
        }
        self.parse(line, |v| f(v, None))
    }

    /// Like [`LineParser::parse`], after replacing every invalid UTF-8
    /// sequence with U+FFFD: how a damaged line is recovered.
    pub fn parse_lossy<R>(
        &mut self,
        line: &[u8],
        f: impl FnOnce(simd_json::tape::Value<'_, '_>) -> R,
    ) -> Result<R, LineError> {
        let fixed = String::from_utf8_lossy(line);
        let len = fixed.len();
        self.buf.clear();
        self.buf.extend_from_slice(fixed.as_bytes());
        self.buf.resize(len + simd_json::INPUT_PADDING, b' ');
        self.parse_buf(len, f)
    }

    fn parse_buf<R>(
        &mut self,
        len: usize,
        f: impl FnOnce(simd_json::tape::Value<'_, '_>) -> R,
    ) -> Result<R, LineError> {
        let mut tape = self
            .tape
            .take()
            .unwrap_or_else(|| Tape::null().reset())
            .reset();
        let result = simd_json::fill_tape_padded(&mut self.buf, len, &mut self.buffers, &mut tape);
        let out = match result {
            Err(e) => Err(LineError::Json(e.to_string())),
            Ok(()) => {
                if matches!(tape.0.first(), Some(Node::Object { .. })) {
                    Ok(f(tape.as_value()))
                } else {
                    Err(LineError::NotObject)
                }
            }
        };
        self.tape = Some(tape.reset());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simd_json::prelude::*;

    const K: Kinds = Kinds {
        thinking: false,
        tools: false,
        summary: false,
        custom: false,
        system: false,
    };

    #[test]
    fn tool_results_are_skipped_with_their_links() {
        let line = br#"{"type":"message","id":"ab12cd34","parentId":"00ff00ff","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"x","content":[{"type":"text","text":"a\"b"}]}}"#;
        assert_eq!(
            peek(line, K, true),
            Peek::Skip {
                id: Some("ab12cd34"),
                parent: Some("00ff00ff"),
                role: Some("toolResult")
            }
        );
        let tools = Kinds { tools: true, ..K };
        assert_eq!(peek(line, tools, true), Peek::Parse);
    }

    #[test]
    fn text_bearing_and_unusual_lines_are_parsed() {
        for line in [
            &br#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi"}}"#[..],
            br#"{"type":"model_change","id":"a","parentId":null,"provider":"p","modelId":"m"}"#,
            br#"{"type":"session_info","id":"a","parentId":null,"name":"n"}"#,
            // id after message: the links are not known when the role is.
            br#"{"type":"message","message":{"role":"toolResult"},"id":"a","parentId":null}"#,
            // escaped id
            br#"{"type":"label","id":"a\"b","parentId":null,"targetId":"x"}"#,
            // cut short
            br#"{"type":"message","id":"a","parentId":null,"message":{"role":"toolResult","#,
            b"",
        ] {
            assert_eq!(peek(line, K, true), Peek::Parse, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn inert_entries_are_skipped_and_root_links_are_none() {
        let line = br#"{"type":"label","id":"aa","parentId":null,"timestamp":"t","targetId":"x"}"#;
        assert_eq!(
            peek(line, K, true),
            Peek::Skip {
                id: Some("aa"),
                parent: None,
                role: None
            }
        );
        let v1 =
            br#"{"type":"message","timestamp":"t","message":{"role":"toolResult","content":[]}}"#;
        assert_eq!(
            peek(v1, K, false),
            Peek::Skip {
                id: None,
                parent: None,
                role: Some("toolResult")
            }
        );
        assert_eq!(peek(v1, K, true), Peek::Parse);
        let unknown = br#"{"type":"future_thing","id":"b","parentId":"aa"}"#;
        assert_eq!(
            peek(unknown, K, true),
            Peek::Skip {
                id: Some("b"),
                parent: Some("aa"),
                role: None
            }
        );
    }

    #[test]
    fn summaries_are_parsed_for_their_kind_or_their_usage() {
        let line = br#"{"type":"compaction","id":"c","parentId":"aa","timestamp":"t","summary":"s","firstKeptEntryId":"b"}"#;
        assert_eq!(
            peek(line, K, true),
            Peek::Skip {
                id: Some("c"),
                parent: Some("aa"),
                role: None
            }
        );
        let summary = Kinds { summary: true, ..K };
        assert_eq!(peek(line, summary, true), Peek::Parse);
        let paid = br#"{"type":"branch_summary","id":"c","parentId":"aa","timestamp":"t","summary":"s","usage":{"input":1}}"#;
        assert_eq!(peek(paid, K, true), Peek::Parse);
        let usage =
            br#"{"type":"usage","id":"u","parentId":"aa","timestamp":"t","kind":"cache_warm"}"#;
        assert_eq!(peek(usage, K, true), Peek::Parse);
    }

    #[test]
    fn parser_reuses_buffers_and_reports_errors() {
        let mut p = LineParser::new();
        let got = p
            .parse(br#"{"a":"x\ny","b":[1,2]}"#, |v| {
                v.get_str("a").map(str::to_owned)
            })
            .unwrap();
        assert_eq!(got.as_deref(), Some("x\ny"));
        assert!(matches!(
            p.parse(br#"{"a":"#, |_| ()),
            Err(LineError::Json(_))
        ));
        assert_eq!(p.parse(b"[1,2]", |_| ()), Err(LineError::NotObject));
        let bad = b"{\"a\":\"caf\xE9\"}";
        assert!(p.parse(bad, |_| ()).is_err());
        let fixed = p
            .parse_lossy(bad, |v| v.get_str("a").map(str::to_owned))
            .unwrap();
        assert_eq!(fixed.as_deref(), Some("caf\u{FFFD}"));
    }
}
