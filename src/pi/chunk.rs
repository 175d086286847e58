//! The chunk loop: every line of a chunk of one file, judged by a prefix
//! scan or parsed (simd-json tape, reused buffers), damage recovered where
//! it can be and counted, and the extracted documents, tree links and
//! session facts gathered into a [`ParsedChunk`].

use super::document::{Damage, Truncation};
use super::entry::{peek, peek_links, LineParser, Peek};
use super::extract::{extract_line, EntryMeta, ModelName};

/// [`extract_line`], then the usage the entry records read from `bytes`,
/// the line (or glued object) it was parsed from.
fn extract(
    v: simd_json::tape::Value<'_, '_>,
    ctx: &LineCtx,
    scratch: &mut String,
    out: &mut ParsedChunk,
    bytes: &[u8],
) {
    extract_skimmed(v, ctx, scratch, out, bytes, None);
}

/// [`extract`] of a line the skim went through: what it met of the
/// message's `usage`, if it met it.
fn extract_skimmed(
    v: simd_json::tape::Value<'_, '_>,
    ctx: &LineCtx,
    scratch: &mut String,
    out: &mut ParsedChunk,
    bytes: &[u8],
    met: Option<usage::Met>,
) {
    extract_line(v, ctx, scratch, out);
    if let Some(want) = out.usage_wanted.take() {
        want.read(&mut out.usage, bytes, met);
    }
}
use super::giant::{self, max_document_bytes, End};
use super::parsed::{LineCtx, Link, ParsedChunk, PendingDoc};
use super::{glued, repair, usage};
use super::{Document, Kinds, Role};
use crate::source::{Lines, Release, KEEP_PAGES};

/// Parses chunks of one file's entries. Holds the per-thread buffers; make
/// one per thread (or per task) and reuse it.
pub struct ChunkParser {
    parser: LineParser,
    scratch: String,
    repaired: Vec<u8>,
    /// The bounded copy of a giant line.
    giant: Vec<u8>,
}

impl Default for ChunkParser {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkParser {
    /// A parser with empty buffers.
    pub fn new() -> Self {
        ChunkParser {
            parser: LineParser::new(),
            scratch: String::new(),
            repaired: Vec::new(),
            giant: Vec::new(),
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
        self.parse_with(bytes, offset, version, kinds, false, KEEP_PAGES)
    }

    /// [`ChunkParser::parse_chunk`], telling `release(start, end)` which
    /// byte ranges of `bytes` it is done with while it looks for the end
    /// of a giant line and reads it (see [`giant`]), so that
    /// a caller reading from a mapping can drop those pages from memory
    /// as it goes.
    pub fn parse_chunk_paged(
        &mut self,
        bytes: &[u8],
        offset: u64,
        version: u64,
        kinds: Kinds,
        release: Release<'_>,
    ) -> ParsedChunk {
        self.parse_with(bytes, offset, version, kinds, false, release)
    }

    /// Read only what an incremental build needs from lines it indexed
    /// before: every entry's tree links, model changes and names. Messages
    /// are not parsed (their links come from the prefix scan), no document
    /// is produced and damage is not reported again.
    pub fn parse_links(&mut self, bytes: &[u8], offset: u64, version: u64) -> ParsedChunk {
        self.parse_links_paged(bytes, offset, version, KEEP_PAGES)
    }

    /// [`ChunkParser::parse_links`], releasing pages as
    /// [`ChunkParser::parse_chunk_paged`] does.
    pub fn parse_links_paged(
        &mut self,
        bytes: &[u8],
        offset: u64,
        version: u64,
        release: Release<'_>,
    ) -> ParsedChunk {
        let mut out = self.parse_with(bytes, offset, version, Kinds::default(), true, release);
        out.damage.clear();
        out.recovered.clear();
        out.truncated.clear();
        out
    }

    fn parse_with(
        &mut self,
        bytes: &[u8],
        offset: u64,
        version: u64,
        kinds: Kinds,
        links_only: bool,
        release: Release<'_>,
    ) -> ParsedChunk {
        let needs_ids = version >= 2;
        let giant = max_document_bytes();
        let mut out = ParsedChunk::default();
        for line in Lines::releasing(bytes, offset, 0, release) {
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
            if let Peek::Skip { id, parent, role } = peeked {
                // The prefix only shows the first of glued entries.
                if !glued::may_be_glued(b) {
                    out.push_link(id, parent, line.offset);
                    // A tool result not indexed may still record usage.
                    if let Some(role @ "toolResult") = role.filter(|_| !links_only) {
                        tool_result_usage(b, id, role, line.number, line.offset, &mut out);
                    }
                    continue;
                }
            }
            out.bytes_parsed += b.len() as u64;
            let ctx = LineCtx {
                kinds,
                line: line.number,
                offset: line.offset,
                links_only,
                recovered: false,
            };
            let docs_before = out.docs.len();
            out.capped = false;
            if b.len() > giant {
                // Read in bounded memory, its pages released behind.
                let start = (line.offset - offset) as usize;
                self.parse_giant(b, &ctx, &mut out, &|s, e| release(start + s, start + e));
                release(start, start + b.len());
                continue;
            }
            let scratch = &mut self.scratch;
            // Oh My Pi's `task` results keep their subagent's usage in
            // their details, which the skim leaves out: read whole.
            let whole = kinds.tools && usage::is_task_result(b);
            let result = if whole {
                self.parser
                    .parse(b, |v| extract(v, &ctx, scratch, &mut out, b))
            } else {
                self.parser.parse_skimmed(b, kinds, |v, met| {
                    extract_skimmed(v, &ctx, scratch, &mut out, b, met)
                })
            };
            if let Err(err) = result {
                if let Some(g) = glued::split(b) {
                    self.read_glued(b, &g, &ctx, &mut out);
                    if out.capped {
                        out.record_truncation(&ctx, b.len(), docs_before);
                    }
                    continue;
                }
                let not_utf8 = std::str::from_utf8(b).is_err();
                let recovered = not_utf8
                    && self
                        .parser
                        .parse_lossy(b, |v| extract(v, &ctx, scratch, &mut out, b))
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
                if let Some(want) = out.usage_wanted.take() {
                    want.read(&mut out.usage, &self.repaired, None);
                }
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
            // A line under the giant size can still give a document over
            // the cap: invalid bytes replaced by U+FFFD take three each.
            if out.capped {
                out.record_truncation(&ctx, b.len(), docs_before);
            }
        }
        out
    }
}

impl ChunkParser {
    /// A line of glued entries: each complete object is an entry at this
    /// line, in the tree like any other; what follows the last one is read
    /// as a line cut short is (closed, indexed off the tree, damaged).
    fn read_glued(&mut self, b: &[u8], g: &glued::Glued, ctx: &LineCtx, out: &mut ParsedChunk) {
        let scratch = &mut self.scratch;
        let mut bad = 0;
        for r in &g.objects {
            let object = &b[r.clone()];
            let ok = self
                .parser
                .parse(object, |v| extract(v, ctx, scratch, out, object))
                .is_ok()
                || (std::str::from_utf8(object).is_err()
                    && self
                        .parser
                        .parse_lossy(object, |v| extract(v, ctx, scratch, out, object))
                        .is_ok());
            bad += usize::from(!ok);
        }
        let n = g.objects.len();
        let tail = if g.tail.is_empty() {
            ""
        } else {
            " and the start of another, cut short"
        };
        out.recovered.push(Damage {
            line: ctx.line,
            error: format!(
                "{n} complete JSON object{}{tail} on one line (a newline was lost): read as {} entr{}",
                if n == 1 { "" } else { "s" },
                n - bad,
                if n - bad == 1 { "y" } else { "ies" },
            ),
        });
        if bad > 0 {
            out.damage.push(Damage {
                line: ctx.line,
                error: format!("{bad} of the {n} JSON objects glued on this line are not valid"),
            });
        }
        if g.tail.is_empty() {
            return;
        }
        let tail = &b[g.tail.clone()];
        let repaired = repair::close(tail, &mut self.repaired)
            && self
                .parser
                .parse(&self.repaired, |v| {
                    let ctx = LineCtx {
                        recovered: true,
                        ..*ctx
                    };
                    extract_line(v, &ctx, scratch, out)
                })
                .is_ok();
        if let Some(want) = out.usage_wanted.take() {
            want.read(&mut out.usage, &self.repaired, None);
        }
        out.damage.push(Damage {
            line: ctx.line,
            error: if repaired {
                "the last JSON object on the line is cut short: the text written so far is indexed"
                    .into()
            } else {
                "the last JSON object on the line is not valid JSON".into()
            },
        });
    }

    /// Read a giant line in bounded memory (see [`giant`]):
    /// its bounded copy is parsed and extracted like any line, a copy cut
    /// short is closed first, and what was left out is recorded.
    fn parse_giant(
        &mut self,
        b: &[u8],
        ctx: &LineCtx,
        out: &mut ParsedChunk,
        release: Release<'_>,
    ) {
        let mb = b.len() as f64 / 1e6;
        let docs_before = out.docs.len();
        let reduced = giant::reduce(
            b,
            ctx.kinds,
            max_document_bytes(),
            &mut self.giant,
            &mut |at| release(0, at),
        );
        let error = |out: &mut ParsedChunk, what: String| {
            out.damage.push(Damage {
                line: ctx.line,
                error: format!("{what} (a line of {mb:.1} MB): not indexed"),
            });
        };
        let Some(reduced) = reduced else {
            error(
                out,
                "not a JSON object whose structure can be followed".into(),
            );
            return self.shrink();
        };
        let src: &[u8] = match reduced.end {
            End::Complete => &self.giant,
            End::CutShort | End::Stopped => {
                if !repair::close(&self.giant, &mut self.repaired) {
                    error(out, "cut short where it cannot be closed".into());
                    return self.shrink();
                }
                &self.repaired
            }
        };
        let cut_short = reduced.end == End::CutShort;
        let ctx = LineCtx {
            recovered: cut_short,
            ..*ctx
        };
        let scratch = &mut self.scratch;
        let mut result = self
            .parser
            .parse(src, |v| extract(v, &ctx, scratch, out, b));
        let not_utf8 = result.is_err() && std::str::from_utf8(src).is_err();
        if not_utf8 {
            result = self
                .parser
                .parse_lossy(src, |v| extract(v, &ctx, scratch, out, b));
        }
        match result {
            Err(e) => error(out, e.to_string()),
            Ok(()) if cut_short || not_utf8 => out.damage.push(Damage {
                line: ctx.line,
                error: match (cut_short, not_utf8) {
                    (true, _) => format!(
                        "cut short (a line of {mb:.1} MB): the text written so far is indexed"
                    ),
                    _ => "invalid UTF-8, replaced with U+FFFD".into(),
                },
            }),
            Ok(()) => {}
        }
        if reduced.truncated || out.capped {
            out.record_truncation(&ctx, b.len(), docs_before);
        }
        self.shrink();
    }

    /// Let go of the buffers a giant line grew: giant lines are rare, and
    /// a thread's parser lives as long as the build.
    fn shrink(&mut self) {
        self.parser = LineParser::new();
        self.giant = Vec::new();
        self.repaired = Vec::new();
        self.scratch = String::new();
    }
}

impl ParsedChunk {
    /// Record that the line of `ctx` (`line_bytes` long), whose documents
    /// begin at `docs[first_doc]`, was indexed only in part.
    fn record_truncation(&mut self, ctx: &LineCtx, line_bytes: usize, first_doc: usize) {
        if ctx.links_only {
            return;
        }
        let indexed_bytes = self.docs[first_doc..]
            .iter()
            .map(|d| d.doc.text.len() as u64)
            .sum();
        self.truncated.push(Truncation {
            line: ctx.line,
            line_bytes: line_bytes as u64,
            indexed_bytes,
        });
    }

    pub(super) fn span(&mut self, s: &str) -> (u32, u32) {
        let start = self.arena.len() as u32;
        self.arena.push_str(s);
        (start, s.len() as u32)
    }

    pub(super) fn push_link(&mut self, id: Option<&str>, parent: Option<&str>, offset: u64) -> u32 {
        let id = id.map(|s| self.span(s));
        let parent = parent.map(|s| self.span(s));
        self.links.push(Link { id, parent, offset });
        (self.links.len() - 1) as u32
    }

    pub(super) fn push_doc(
        &mut self,
        ctx: &LineCtx,
        link: u32,
        role: Role,
        meta: &EntryMeta,
        text: &str,
    ) {
        if ctx.links_only {
            return;
        }
        let mut text = text.trim();
        if text.is_empty() || !ctx.kinds.includes(role) {
            return;
        }
        let cap = max_document_bytes();
        if text.len() > cap {
            let mut cut = cap;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text = text[..cut].trim_end();
            self.capped = true;
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
                edited: super::Edited::No,
                replacement: None,
                text: text.to_owned(),
            },
            link,
            inherit_model: meta.model.is_none(),
        });
    }
}

/// The raw value of `key` (with its quotes, for a string) among the
/// first keys of an entry line, as the prefix scan reads them: a string
/// without escapes or `null`.
fn prefix_value<'a>(head: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = memchr::memmem::find(head, key)? + key.len();
    let rest = &head[at..];
    if rest.starts_with(b"null") {
        return Some(&rest[..4]);
    }
    if rest.first() != Some(&b'"') {
        return None;
    }
    let end = rest[1..].iter().position(|&c| c == b'"' || c == b'\\')?;
    (rest[1 + end] == b'"').then(|| &rest[..end + 2])
}

/// Whether the tool result `b` is Oh My Pi's `task` tool's: its
/// `toolName` read where Pi and Oh My Pi write it, after the `role` the
/// prefix scan read (in `b`) and the `toolCallId`, when that is among
/// the bytes [`usage::is_task_result`] looks at; else as it looks.
fn is_task(b: &[u8], role: &str) -> bool {
    let after = (role.as_ptr() as usize)
        .wrapping_sub(b.as_ptr() as usize)
        .wrapping_add(role.len() + 1);
    let named = b.get(after..).and_then(|rest| {
        let rest = rest.strip_prefix(b",\"toolCallId\":\"")?;
        let close = memchr::memchr2(b'"', b'\\', rest)?;
        let rest = rest[close..].strip_prefix(b"\",\"toolName\":\"")?;
        Some((rest.starts_with(b"task\""), b.len() - rest.len()))
    });
    match named {
        Some((task, at)) if at + b"task\"".len() <= usage::TASK_HEAD => task,
        _ => usage::is_task_result(b),
    }
}

/// The usage a tool result line the prefix scan skipped records: Pi's
/// own, at the line's end (it writes it after the content, and nowhere
/// else); for Oh My Pi's `task` tool, the subagent's in its details.
/// Its documents and tree link are the prefix scan's: only the usage is
/// read here. `role`: the role the prefix scan read, in `b`.
fn tool_result_usage(
    b: &[u8],
    id: Option<&str>,
    role: &str,
    line: u64,
    offset: u64,
    out: &mut ParsedChunk,
) {
    use usage::{Source, UsageEntry};
    let (source, (usage, fault)) = if let Some(read) = usage::read_tail(b) {
        (Source::ToolResult, read)
    } else if is_task(b, role) {
        match usage::locate(b, usage::SUBAGENT_USAGE) {
            Some(r) => (Source::Subagent, usage::parse(&b[r])),
            None => return,
        }
    } else {
        return;
    };
    let head = &b[..b.len().min(512)];
    let ts = prefix_value(head, b"\"timestamp\":")
        .filter(|v| v.len() >= 2 && v[0] == b'"')
        .and_then(|v| std::str::from_utf8(&v[1..v.len() - 1]).ok());
    out.usage.push(UsageEntry {
        line,
        key: usage::entry_key(id, ts, offset),
        timestamp_ms: ts.and_then(super::time::parse_iso_millis),
        source,
        model: usage::tools_bucket(),
        usage,
        fault,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_result_is_told_by_its_tool_name_where_pi_writes_it() {
        let task = |call: &str, tool: &str, pad: usize| {
            let line = format!(
                r#"{{"type":"message","id":"ab12cd34","parentId":"00ff00ff","timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"toolResult","toolCallId":"{call}{}","toolName":"{tool}","content":[]}}}}"#,
                "x".repeat(pad)
            );
            let b = line.as_bytes();
            let Peek::Skip {
                role: Some(role), ..
            } = peek(b, Kinds::default(), true)
            else {
                panic!("{line}");
            };
            let told = is_task(b, role);
            assert_eq!(told, usage::is_task_result(b), "{line}");
            told
        };
        assert!(task("toolu_01", "task", 0));
        assert!(!task("toolu_01", "bash", 0));
        assert!(!task("toolu_01", "tasks", 0));
        // An id with an escaped quote: looked for as before.
        assert!(task(r#"a\"b"#, "task", 0));
        // Past the bytes looked at before: not a task, as before.
        assert!(!task("toolu_01", "task", 400));
    }
}
