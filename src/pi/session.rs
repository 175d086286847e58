//! A whole file put back together: the chunks of one session in order,
//! with what needs the whole file resolved: line numbers, the active
//! branch, the model in effect and the session's final name.

use std::collections::HashMap;

use super::branch;
use super::document::{Damage, Edited, Truncation};
use super::fingerprint::Header;
use super::parsed::{ParsedChunk, NO_LINK};
use super::Document;

/// A whole session: its header and the parsed chunks of its entries, in
/// file order.
pub struct Session {
    /// The header, as the fingerprint read it.
    pub header: Header,
    /// The session's final display name (see [`Header::name`]: Oh My
    /// Pi's title slot, else the last `session_info`, else the header's
    /// title).
    pub name: Option<String>,
    /// Every document, in file order, with line numbers, branch status and
    /// models resolved.
    pub documents: Vec<Document>,
    /// Damaged lines, in file order.
    pub damage: Vec<Damage>,
    /// Lines that held several entries glued together, split and read,
    /// in file order (a line whose last entry was cut short is also in
    /// `damage`).
    pub recovered: Vec<Damage>,
    /// Lines whose text was indexed only in part (giant lines), in file
    /// order.
    pub truncated: Vec<Truncation>,
    /// What each entry that records usage spent, in file order (of a
    /// grown file: the new lines' only).
    pub usage: Vec<super::usage::UsageEntry>,
    /// Complete lines in the file, the header and any lines before it
    /// included.
    pub lines: u64,
    /// Bytes fully parsed.
    pub bytes_parsed: u64,
    /// Grown files only: entries indexed before whose branch status or
    /// edit mark the new lines changed (byte offset of the entry's line,
    /// its id, and its state now). The offset names the documents of the
    /// entry's line in the index (see `IndexBuilder::delete_entries`), the
    /// id which of them are the entry's (a line of glued entries holds
    /// several).
    pub changed: Vec<(u64, Option<String>, EntryState)>,
}

/// What the rest of a file says about one entry: whether it lies on the
/// active branch, and what the latest `context_edit` on that branch did to
/// it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryState {
    /// On the active branch?
    pub active: bool,
    /// The edit mark.
    pub edited: Edited,
    /// The replacement's text, when replaced.
    pub replacement: Option<String>,
}

impl EntryState {
    /// Give the documents of one entry (in their order: the first gets
    /// the replacement) this state.
    pub fn apply(&self, docs: &mut [Document]) {
        for (i, d) in docs.iter_mut().enumerate() {
            d.active = self.active;
            d.edited = self.edited;
            d.replacement = if i == 0 {
                self.replacement.clone().filter(|r| !r.is_empty())
            } else {
                None
            };
        }
    }
}

/// The latest edit of each target among the edits on the branch `active`
/// (edits in file order, which is the branch's order: a child always
/// follows its parent), by target id.
fn edits_on<'a>(
    edits: &'a [(usize, &'a str, Option<&'a str>)],
    active: &[bool],
) -> HashMap<&'a str, Option<&'a str>> {
    let mut latest = HashMap::new();
    for &(link, target, replacement) in edits {
        if active.get(link).copied().unwrap_or(false) {
            latest.insert(target, replacement);
        }
    }
    latest
}

/// The state of the entry `id` (active or not) under `latest` edits.
fn state_of(id: Option<&str>, active: bool, latest: &HashMap<&str, Option<&str>>) -> EntryState {
    let edit = id.filter(|_| active).and_then(|id| latest.get(id)).copied();
    EntryState {
        active,
        edited: match edit {
            None => Edited::No,
            Some(None) => Edited::Omitted,
            Some(Some(_)) => Edited::Replaced,
        },
        replacement: edit.flatten().map(str::to_owned),
    }
}

impl Session {
    /// Put a file's chunks back together. `first_line` is the number of
    /// the first line of the first chunk (the line after the header).
    pub fn finish(header: Header, chunks: Vec<ParsedChunk>, first_line: u64) -> Session {
        Self::finish_inner(header, chunks, first_line, 0)
    }

    /// Put a grown file back together: `old` are the chunks of the lines
    /// indexed before (read with [`ChunkParser::parse_links`](super::ChunkParser::parse_links)), `new` those
    /// appended since. The documents are the new lines' only; entries of
    /// the old part whose branch status or edit mark the new entries
    /// changed are listed in [`Session::changed`].
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
            for d in c.damage.iter_mut().chain(c.recovered.iter_mut()) {
                d.line += base;
            }
            for t in &mut c.truncated {
                t.line += base;
            }
            for u in &mut c.usage {
                u.line += base;
            }
            base += c.lines;
        }

        // The active branch, and the edits on it.
        let mut ids: Vec<Option<&str>> = Vec::new();
        let mut edits: Vec<(usize, &str, Option<&str>)> = Vec::new();
        let links: Vec<branch::Link<'_>> = {
            let mut links = Vec::new();
            for c in &chunks {
                let arena = c.arena.as_str();
                let get = |s: Option<(u32, u32)>| {
                    s.map(|(start, len)| &arena[start as usize..(start + len) as usize])
                };
                let base = links.len();
                for e in &c.edits {
                    edits.push((
                        base + e.link as usize,
                        get(Some(e.target)).unwrap_or(""),
                        e.replacement.as_deref(),
                    ));
                }
                for l in &c.links {
                    ids.push(get(l.id));
                    links.push(branch::Link {
                        id: get(l.id),
                        parent: get(l.parent),
                    });
                }
            }
            links
        };
        let active = if header.version >= 2 {
            branch::active(&links)
        } else {
            vec![true; links.len()]
        };
        let latest = edits_on(&edits, &active);
        let mut changed = Vec::new();
        if header.version >= 2 && old_links > 0 {
            let before = branch::active(&links[..old_links]);
            let old_edits: Vec<_> = edits
                .iter()
                .copied()
                .filter(|&(link, _, _)| link < old_links)
                .collect();
            let latest_before = edits_on(&old_edits, &before);
            let offsets = chunks.iter().flat_map(|c| c.links.iter().map(|l| l.offset));
            for (i, offset) in offsets.take(old_links).enumerate() {
                let was = state_of(ids[i], before[i], &latest_before);
                let now = state_of(ids[i], active[i], &latest);
                if was != now {
                    changed.push((offset, ids[i].map(str::to_owned), now));
                }
            }
        }
        // Each document's state, by its link (repaired lines have none:
        // off the tree, never edited).
        let states: Vec<EntryState> = ids
            .iter()
            .zip(&active)
            .map(|(id, &a)| state_of(*id, a, &latest))
            .collect();
        drop(links);
        drop(latest);
        drop(edits);
        drop(ids);

        // The model in effect: the last model change before each document.
        let mut changes: Vec<(u64, String)> = Vec::new();
        // The last `session_info` (Pi's renames), if any: `Some(None)` when
        // it cleared the name.
        let mut renamed: Option<Option<String>> = None;
        let mut damage = Vec::new();
        let mut recovered = Vec::new();
        let mut truncated = Vec::new();
        let mut usage = Vec::new();
        let mut lines = first_line.saturating_sub(1);
        let mut bytes_parsed = 0;
        let mut documents = Vec::with_capacity(chunks.iter().map(|c| c.docs.len()).sum());
        let mut link_base = 0usize;
        let mut pending = Vec::new();
        let mut last_link = usize::MAX;
        for c in chunks {
            changes.extend(c.model_changes);
            if let Some((_, n)) = c.names.into_iter().last() {
                renamed = Some(n);
            }
            damage.extend(c.damage);
            recovered.extend(c.recovered);
            truncated.extend(c.truncated);
            if usage.is_empty() {
                usage = c.usage;
            } else {
                usage.extend(c.usage);
            }
            lines += c.lines;
            bytes_parsed += c.bytes_parsed;
            for mut p in c.docs {
                if p.link == NO_LINK {
                    p.doc.active = false;
                } else {
                    // The replacement goes on the entry's first document.
                    let link = link_base + p.link as usize;
                    let st = &states[link];
                    p.doc.active = st.active;
                    p.doc.edited = st.edited;
                    if link != last_link {
                        p.doc.replacement = st.replacement.clone().filter(|r| !r.is_empty());
                    }
                    last_link = link;
                }
                pending.push(p);
            }
            link_base += c.links.len();
        }
        // Oh My Pi's title slot is its name, whatever else the file says
        // (its loader reads no `session_info`, and its `title_change`
        // entries only record renames the slot already holds); else Pi's
        // last `session_info`, else the header's own title.
        let name = match (&header.slot, renamed) {
            (None, Some(renamed)) => renamed,
            _ => header.name().map(str::to_owned),
        };
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
            recovered,
            truncated,
            usage,
            lines,
            bytes_parsed,
            changed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pi::fingerprint::fingerprint;
    use crate::pi::{ChunkParser, Kinds, Role};

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
