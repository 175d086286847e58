//! From entries to documents: exactly what the format page says a person
//! reads as the conversation, plus the opt-in kinds.
//!
//! A file is parsed in chunks (possibly in parallel); each chunk yields a
//! [`ParsedChunk`]: its documents, the tree links of every entry, the
//! session facts it saw (model changes, names) and the damage it met. A
//! [`Session`] puts the chunks of one file back together in order and
//! resolves what needs the whole file: line numbers, the active branch,
//! the model in effect and the session's final name.

use simd_json::prelude::*;
use simd_json::tape::{Array, Object, Value};

use super::branch;
use super::entry::{peek, peek_links, role_is_indexed, LineParser, Peek};
use super::fingerprint::Header;
use super::repair;
use super::time::parse_iso_millis;
use super::{Kinds, Role};
use crate::source::Lines;

/// Typed lookups on a tape object (the tape `Value` has them, `Object`
/// does not).
trait ObjExt<'i> {
    fn get_str(&self, k: &str) -> Option<&'i str>;
    fn get_bool(&self, k: &str) -> Option<bool>;
}

impl<'i> ObjExt<'i> for Object<'_, 'i> {
    #[inline]
    fn get_str(&self, k: &str) -> Option<&'i str> {
        self.get(k)?.into_string()
    }
    #[inline]
    fn get_bool(&self, k: &str) -> Option<bool> {
        self.get(k)?.as_bool()
    }
}

/// One indexed document: a piece of text with everything search shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// 1-based line number of the entry in its file.
    pub line: u64,
    /// Byte offset of that line in its file.
    pub offset: u64,
    /// The entry's `id` (none in version 1 files).
    pub entry_id: Option<String>,
    /// What kind of text this is.
    pub role: Role,
    /// The entry's time, epoch milliseconds.
    pub timestamp_ms: Option<i64>,
    /// The model that produced it, or the model in effect.
    pub model: Option<String>,
    /// Whether the entry is on the session's active branch.
    pub active: bool,
    /// The text, trimmed and non-empty.
    pub text: String,
}

/// A damaged line: where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// 1-based line number.
    pub line: u64,
    /// What was wrong, and whether the line was recovered.
    pub error: String,
}

/// Tree links of one entry, as byte ranges into the chunk's id arena.
#[derive(Clone, Copy, Debug)]
struct Link {
    id: Option<(u32, u32)>,
    parent: Option<(u32, u32)>,
    /// Byte offset of the entry's line in its file.
    offset: u64,
}

/// A document before the whole file is known: its line number is relative
/// to its chunk, its entry is an index into the chunk's links, and its
/// model may still have to be inherited.
#[derive(Debug)]
struct PendingDoc {
    doc: Document,
    link: u32,
    inherit_model: bool,
}

/// What one chunk of a file yielded. Line numbers inside are relative to
/// the chunk (its first line is 0) until [`Session::finish`].
#[derive(Debug, Default)]
pub struct ParsedChunk {
    docs: Vec<PendingDoc>,
    links: Vec<Link>,
    arena: String,
    model_changes: Vec<(u64, String)>,
    names: Vec<(u64, Option<String>)>,
    damage: Vec<Damage>,
    /// Lines in the chunk, blank ones included.
    pub lines: u64,
    /// Bytes of the lines that were fully parsed (the rest were skipped by
    /// the prefix scan or blank).
    pub bytes_parsed: u64,
}

/// Parses chunks of one file's entries. Holds the per-thread buffers; make
/// one per thread (or per task) and reuse it.
pub struct ChunkParser {
    parser: LineParser,
    scratch: String,
    repaired: Vec<u8>,
}

impl Default for ChunkParser {
    fn default() -> Self {
        Self::new()
    }
}

/// The link of a document whose line was repaired: it has no place in the
/// tree, so it is never on the active branch.
const NO_LINK: u32 = u32::MAX;

/// Context for extracting one line's documents.
struct LineCtx {
    kinds: Kinds,
    line: u64,
    offset: u64,
    /// Only links and session facts are wanted: no documents.
    links_only: bool,
    /// A repaired line: documents, but no place in the tree.
    recovered: bool,
}

impl ChunkParser {
    /// A parser with empty buffers.
    pub fn new() -> Self {
        ChunkParser {
            parser: LineParser::new(),
            scratch: String::new(),
            repaired: Vec::new(),
        }
    }

    /// Parse the complete lines in `bytes`, which start at byte `offset` of
    /// the file. `version` is the header's version: from 2 on, entries form
    /// a tree and every entry's links are kept.
    pub fn parse_chunk(
        &mut self,
        bytes: &[u8],
        offset: u64,
        version: u64,
        kinds: Kinds,
    ) -> ParsedChunk {
        self.parse_with(bytes, offset, version, kinds, false)
    }

    /// Read only what an incremental build needs from lines it indexed
    /// before: every entry's tree links, model changes and names. Messages
    /// are not parsed (their links come from the prefix scan), no document
    /// is produced and damage is not reported again.
    pub fn parse_links(&mut self, bytes: &[u8], offset: u64, version: u64) -> ParsedChunk {
        let mut out = self.parse_with(bytes, offset, version, Kinds::default(), true);
        out.damage.clear();
        out
    }

    fn parse_with(
        &mut self,
        bytes: &[u8],
        offset: u64,
        version: u64,
        kinds: Kinds,
        links_only: bool,
    ) -> ParsedChunk {
        let needs_ids = version >= 2;
        let mut out = ParsedChunk::default();
        for line in Lines::new(bytes, offset, 0) {
            out.lines += 1;
            let b = line.bytes;
            if b.trim_ascii().is_empty() {
                continue;
            }
            let peeked = if links_only {
                peek_links(b, needs_ids)
            } else {
                peek(b, kinds, needs_ids)
            };
            if let Peek::Skip { id, parent } = peeked {
                out.push_link(id, parent, line.offset);
                continue;
            }
            out.bytes_parsed += b.len() as u64;
            let ctx = LineCtx {
                kinds,
                line: line.number,
                offset: line.offset,
                links_only,
                recovered: false,
            };
            let scratch = &mut self.scratch;
            let result = self
                .parser
                .parse_skimmed(b, kinds, |v| extract_line(v, &ctx, scratch, &mut out));
            if let Err(err) = result {
                let not_utf8 = std::str::from_utf8(b).is_err();
                let recovered = not_utf8
                    && self
                        .parser
                        .parse_lossy(b, |v| extract_line(v, &ctx, scratch, &mut out))
                        .is_ok();
                // Cut short: close what was written and read it, off the
                // tree (Pi skips the line, so it is not on any branch).
                let repaired = !not_utf8
                    && repair::close(b, &mut self.repaired)
                    && self
                        .parser
                        .parse(&self.repaired, |v| {
                            let ctx = LineCtx {
                                recovered: true,
                                ..ctx
                            };
                            extract_line(v, &ctx, scratch, &mut out)
                        })
                        .is_ok();
                out.damage.push(Damage {
                    line: line.number,
                    error: if recovered {
                        "invalid UTF-8, replaced with U+FFFD".into()
                    } else if repaired {
                        format!("{err}: cut short, the text written so far is indexed")
                    } else if not_utf8 {
                        format!("invalid UTF-8 and {err}")
                    } else {
                        err.to_string()
                    },
                });
            }
        }
        out
    }
}

impl ParsedChunk {
    fn span(&mut self, s: &str) -> (u32, u32) {
        let start = self.arena.len() as u32;
        self.arena.push_str(s);
        (start, s.len() as u32)
    }

    fn push_link(&mut self, id: Option<&str>, parent: Option<&str>, offset: u64) -> u32 {
        let id = id.map(|s| self.span(s));
        let parent = parent.map(|s| self.span(s));
        self.links.push(Link { id, parent, offset });
        (self.links.len() - 1) as u32
    }

    fn push_doc(&mut self, ctx: &LineCtx, link: u32, role: Role, meta: &EntryMeta, text: &str) {
        if ctx.links_only {
            return;
        }
        let text = text.trim();
        if text.is_empty() || !ctx.kinds.includes(role) {
            return;
        }
        self.docs.push(PendingDoc {
            doc: Document {
                line: ctx.line,
                offset: ctx.offset,
                entry_id: meta.id.map(str::to_owned),
                role,
                timestamp_ms: meta.timestamp_ms,
                model: meta.model.map(ModelName::joined),
                active: true,
                text: text.to_owned(),
            },
            link,
            inherit_model: meta.model.is_none(),
        });
    }
}

/// The fields of an entry that every document of it shares.
struct EntryMeta<'a> {
    id: Option<&'a str>,
    timestamp_ms: Option<i64>,
    model: Option<ModelName<'a>>,
}

/// Extract everything from one parsed line into `out`.
fn extract_line(root: Value<'_, '_>, ctx: &LineCtx, scratch: &mut String, out: &mut ParsedChunk) {
    let Some(obj) = root.as_object() else { return };
    let mut ty = None;
    let mut id = None;
    let mut parent = None;
    let mut ts = None;
    let mut message = None;
    for (k, v) in obj.iter() {
        match k {
            "type" if ty.is_none() => ty = v.into_string(),
            "id" if id.is_none() => id = v.into_string(),
            "parentId" if parent.is_none() => parent = v.into_string(),
            "timestamp" if ts.is_none() => ts = v.into_string(),
            "message" if message.is_none() => message = v.as_object(),
            _ => {}
        }
    }
    // Objects without a type, and repeated headers, are not entries.
    let Some(ty) = ty else { return };
    if ty == "session" {
        return;
    }
    let link = if ctx.recovered {
        NO_LINK
    } else {
        out.push_link(id, parent, ctx.offset)
    };
    let mut meta = EntryMeta {
        id,
        timestamp_ms: ts.and_then(parse_iso_millis),
        model: None,
    };
    match ty {
        "message" => {
            if let Some(m) = message {
                extract_message(&m, ctx, link, &mut meta, scratch, out);
            }
        }
        "model_change" => {
            if let Some(model) = ModelName::new(obj.get_str("provider"), obj.get_str("modelId")) {
                out.model_changes.push((ctx.line, model.joined()));
            }
        }
        "session_info" => {
            let name = obj.get_str("name").filter(|n| !n.trim().is_empty());
            out.names.push((ctx.line, name.map(str::to_owned)));
        }
        "compaction" | "branch_summary" => {
            if let Some(s) = obj.get_str("summary") {
                out.push_doc(ctx, link, Role::Summary, &meta, s);
            }
        }
        "custom_message" if ctx.kinds.custom => {
            if let Some(content) = obj.get("content") {
                content_text(content, scratch);
                out.push_doc(ctx, link, Role::Custom, &meta, scratch);
            }
        }
        _ => {}
    }
}

fn extract_message<'i>(
    m: &Object<'_, 'i>,
    ctx: &LineCtx,
    link: u32,
    meta: &mut EntryMeta<'i>,
    scratch: &mut String,
    out: &mut ParsedChunk,
) {
    let Some(role) = m.get_str("role") else {
        return;
    };
    if !role_is_indexed(role, ctx.kinds) {
        return;
    }
    if meta.timestamp_ms.is_none() {
        meta.timestamp_ms = m.get("timestamp").and_then(|t| {
            t.as_i64()
                .or_else(|| t.as_u64().map(|u| u as i64))
                .or_else(|| t.as_f64().map(|f| f as i64))
        });
    }
    match role {
        "user" => {
            if let Some(content) = m.get("content") {
                content_text(content, scratch);
                out.push_doc(ctx, link, Role::User, meta, scratch);
            }
        }
        "assistant" => {
            meta.model = ModelName::new(m.get_str("provider"), m.get_str("model"));
            let Some(blocks) = m.get("content").and_then(|c| c.as_array()) else {
                if let Some(s) = m.get_str("content") {
                    out.push_doc(ctx, link, Role::Assistant, meta, s);
                }
                return;
            };
            join_blocks(&blocks, "text", "text", scratch);
            out.push_doc(ctx, link, Role::Assistant, meta, scratch);
            if ctx.kinds.thinking {
                join_blocks(&blocks, "thinking", "thinking", scratch);
                out.push_doc(ctx, link, Role::Thinking, meta, scratch);
            }
            if ctx.kinds.tools {
                tool_calls_text(&blocks, scratch);
                out.push_doc(ctx, link, Role::Tool, meta, scratch);
            }
        }
        "toolResult" => {
            if let Some(content) = m.get("content") {
                content_text(content, scratch);
                out.push_doc(ctx, link, Role::Tool, meta, scratch);
            }
        }
        "bashExecution" => {
            scratch.clear();
            scratch.push_str(m.get_str("command").unwrap_or(""));
            scratch.push('\n');
            scratch.push_str(m.get_str("output").unwrap_or(""));
            out.push_doc(ctx, link, Role::Tool, meta, scratch);
        }
        "custom" | "hookMessage" => {
            if let Some(content) = m.get("content") {
                content_text(content, scratch);
                out.push_doc(ctx, link, Role::Custom, meta, scratch);
            }
        }
        "branchSummary" | "compactionSummary" => {
            if let Some(s) = m.get_str("summary") {
                out.push_doc(ctx, link, Role::Summary, meta, s);
            }
        }
        _ => {}
    }
}

/// A model's name as Pi wrote it, borrowed from the parsed line: only a
/// line that yields a document pays for the owned `provider/model` string
/// (most assistant lines are tool calls without text).
#[derive(Clone, Copy)]
struct ModelName<'a> {
    provider: Option<&'a str>,
    model: &'a str,
}

impl<'a> ModelName<'a> {
    /// The model, if there is one; an empty provider counts as none.
    fn new(provider: Option<&'a str>, model: Option<&'a str>) -> Option<Self> {
        Some(ModelName {
            provider: provider.filter(|p| !p.is_empty()),
            model: model?,
        })
    }

    /// `provider/model`, or just the model.
    fn joined(self) -> String {
        match self.provider {
            Some(p) => [p, "/", self.model].concat(),
            None => self.model.to_owned(),
        }
    }
}

/// A `content` value's text: a string as is, or its `text` blocks joined
/// with `\n`.
fn content_text(content: Value<'_, '_>, scratch: &mut String) {
    scratch.clear();
    if let Some(s) = content.as_str() {
        scratch.push_str(s);
    } else if let Some(blocks) = content.as_array() {
        join_blocks(&blocks, "text", "text", scratch);
    }
}

/// Join the `field` strings of blocks whose `type` is `block_type` with
/// `\n`. Thinking blocks marked `redacted` are left out.
fn join_blocks(blocks: &Array<'_, '_>, block_type: &str, field: &str, scratch: &mut String) {
    scratch.clear();
    let mut first = true;
    for block in blocks.iter() {
        let Some(b) = block.as_object() else { continue };
        if b.get_str("type") != Some(block_type) {
            continue;
        }
        if block_type == "thinking" && b.get_bool("redacted") == Some(true) {
            continue;
        }
        let Some(text) = b.get_str(field) else {
            continue;
        };
        if !first {
            scratch.push('\n');
        }
        first = false;
        scratch.push_str(text);
    }
}

/// Tool calls as text: each call's name on a line, then `key: value` per
/// top-level argument (strings as they are, anything else as compact JSON).
fn tool_calls_text(blocks: &Array<'_, '_>, scratch: &mut String) {
    scratch.clear();
    for block in blocks.iter() {
        let Some(b) = block.as_object() else { continue };
        if b.get_str("type") != Some("toolCall") {
            continue;
        }
        let name = b
            .get_str("name")
            .or_else(|| b.get_str("toolName"))
            .unwrap_or("");
        if !scratch.is_empty() {
            scratch.push('\n');
        }
        scratch.push_str(name);
        let args = b.get("arguments").or_else(|| b.get("input"));
        if let Some(args) = args.and_then(|a| a.as_object()) {
            for (k, v) in args.iter() {
                scratch.push('\n');
                scratch.push_str(k);
                scratch.push_str(": ");
                match v.as_str() {
                    Some(s) => scratch.push_str(s),
                    None => scratch.push_str(&v.encode()),
                }
            }
        }
    }
}

/// A whole session: its header and the parsed chunks of its entries, in
/// file order.
pub struct Session {
    /// The header, as the fingerprint read it.
    pub header: Header,
    /// The session's final display name.
    pub name: Option<String>,
    /// Every document, in file order, with line numbers, branch status and
    /// models resolved.
    pub documents: Vec<Document>,
    /// Damaged lines, in file order.
    pub damage: Vec<Damage>,
    /// Complete lines in the file, the header and any lines before it
    /// included.
    pub lines: u64,
    /// Bytes fully parsed.
    pub bytes_parsed: u64,
    /// Grown files only: entries indexed before whose branch status changed
    /// (byte offset of the entry's line, now active?). The offset names the
    /// entry's documents in the index (see `IndexBuilder::delete_entries`).
    pub flipped: Vec<(u64, bool)>,
}

impl Session {
    /// Put a file's chunks back together. `first_line` is the number of
    /// the first line of the first chunk (the line after the header).
    pub fn finish(header: Header, chunks: Vec<ParsedChunk>, first_line: u64) -> Session {
        Self::finish_inner(header, chunks, first_line, 0)
    }

    /// Put a grown file back together: `old` are the chunks of the lines
    /// indexed before (read with [`ChunkParser::parse_links`]), `new` those
    /// appended since. The documents are the new lines' only; entries of
    /// the old part whose branch status the new entries changed are listed
    /// in [`Session::flipped`].
    pub fn finish_grown(
        header: Header,
        old: Vec<ParsedChunk>,
        new: Vec<ParsedChunk>,
        first_line: u64,
    ) -> Session {
        let old_links = old.iter().map(|c| c.links.len()).sum();
        let mut chunks = old;
        chunks.extend(new);
        Self::finish_inner(header, chunks, first_line, old_links)
    }

    fn finish_inner(
        header: Header,
        chunks: Vec<ParsedChunk>,
        first_line: u64,
        old_links: usize,
    ) -> Session {
        // Absolute line numbers.
        let mut base = first_line;
        let mut chunks = chunks;
        for c in &mut chunks {
            for d in &mut c.docs {
                d.doc.line += base;
            }
            for (l, _) in &mut c.model_changes {
                *l += base;
            }
            for (l, _) in &mut c.names {
                *l += base;
            }
            for d in &mut c.damage {
                d.line += base;
            }
            base += c.lines;
        }

        // The active branch.
        let links: Vec<branch::Link<'_>> = chunks
            .iter()
            .flat_map(|c| {
                let arena = c.arena.as_str();
                let get = move |s: Option<(u32, u32)>| {
                    s.map(|(start, len)| &arena[start as usize..(start + len) as usize])
                };
                c.links.iter().map(move |l| branch::Link {
                    id: get(l.id),
                    parent: get(l.parent),
                })
            })
            .collect();
        let active = if header.version >= 2 {
            branch::active(&links)
        } else {
            vec![true; links.len()]
        };
        let mut flipped = Vec::new();
        if header.version >= 2 && old_links > 0 {
            let before = branch::active(&links[..old_links]);
            let offsets = chunks.iter().flat_map(|c| c.links.iter().map(|l| l.offset));
            for ((was, now), offset) in before.into_iter().zip(&active).zip(offsets) {
                if was != *now {
                    flipped.push((offset, *now));
                }
            }
        }
        drop(links);

        // The model in effect: the last model change before each document.
        let mut changes: Vec<(u64, String)> = Vec::new();
        let mut name = None;
        let mut damage = Vec::new();
        let mut lines = first_line.saturating_sub(1);
        let mut bytes_parsed = 0;
        let mut documents = Vec::with_capacity(chunks.iter().map(|c| c.docs.len()).sum());
        let mut link_base = 0usize;
        let mut pending = Vec::new();
        for c in chunks {
            changes.extend(c.model_changes);
            if let Some((_, n)) = c.names.into_iter().last() {
                name = n;
            }
            damage.extend(c.damage);
            lines += c.lines;
            bytes_parsed += c.bytes_parsed;
            for mut p in c.docs {
                p.doc.active = p.link != NO_LINK && active[link_base + p.link as usize];
                pending.push(p);
            }
            link_base += c.links.len();
        }
        let mut current = header.model.clone();
        let mut next_change = 0;
        for p in pending {
            while next_change < changes.len() && changes[next_change].0 < p.doc.line {
                current = Some(changes[next_change].1.clone());
                next_change += 1;
            }
            let mut doc = p.doc;
            if p.inherit_model {
                doc.model.clone_from(&current);
            }
            documents.push(doc);
        }
        Session {
            header,
            name,
            documents,
            damage,
            lines,
            bytes_parsed,
            flipped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pi::fingerprint::fingerprint;

    fn session(text: &str, kinds: Kinds) -> Session {
        let (head, rest) = text.split_once('\n').unwrap();
        let header = fingerprint(head.as_bytes()).unwrap();
        let mut p = ChunkParser::new();
        let chunk = p.parse_chunk(
            rest.as_bytes(),
            head.len() as u64 + 1,
            header.version,
            kinds,
        );
        Session::finish(header, vec![chunk], 2)
    }

    #[test]
    fn user_and_assistant_text_with_models_and_branches() {
        let s = session(
            concat!(
                r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
                "\n",
                r#"{"type":"model_change","id":"a0","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","provider":"anthropic","modelId":"opus"}"#,
                "\n",
                r#"{"type":"message","id":"a1","parentId":"a0","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"  hello  ","timestamp":1}}"#,
                "\n",
                r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"one"},{"type":"text","text":"two"}],"provider":"anthropic","model":"sonnet"}}"#,
                "\n",
                r#"{"type":"message","id":"a3","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[]}}"#,
                "\n",
                r#"{"type":"message","id":"a4","parentId":"a1","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"again"},{"type":"image","data":"xx"}]}}"#,
                "\n",
            ),
            Kinds::default(),
        );
        let got: Vec<_> = s
            .documents
            .iter()
            .map(|d| {
                (
                    d.line,
                    d.role,
                    d.text.as_str(),
                    d.active,
                    d.model.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (3, Role::User, "hello", true, Some("anthropic/opus")),
                (
                    4,
                    Role::Assistant,
                    "one\ntwo",
                    false,
                    Some("anthropic/sonnet")
                ),
                (6, Role::User, "again", true, Some("anthropic/opus")),
            ]
        );
        assert!(s.damage.is_empty());
    }

    #[test]
    fn damage_is_counted_and_the_rest_kept() {
        let s = session(
            concat!(
                r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
                "\n",
                r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"#,
                "\n",
                "not json\n",
                "[1]\n",
                r#"{"type":"message","id":"a2","parentId":null,"timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"kept"}}"#,
                "\n",
            ),
            Kinds::default(),
        );
        assert_eq!(s.documents.len(), 1);
        assert_eq!(s.documents[0].text, "kept");
        assert_eq!(
            s.damage.iter().map(|d| d.line).collect::<Vec<_>>(),
            vec![2, 3, 4]
        );
    }
}
