//! A session file's tree, as Pi's own export reads it: every entry's
//! place (its line, its offset, its parent, whether it lies on the active
//! branch) and none of its text, in one pass over the lines. The
//! format's prefix scan ([`super::entry::peek_links`]) gives most lines'
//! `id` and `parentId` without parsing them; pages the pass has read are
//! released behind it. A view of the tree (the active branch, a branch
//! by its last entry, every entry) is a list of entries in reading order.

use std::collections::HashMap;
use std::fs::File;

use serde::Deserialize;

use super::branch::{active, Link};
use super::entry::{peek_links, Peek};
use super::Header;
use crate::source::{complete_len, Lines, MappedFile};

/// One entry (a line after the header) of a session file.
#[derive(Debug)]
pub struct Entry {
    /// Byte offset of its line.
    pub offset: u64,
    /// Length of its line, in bytes.
    pub len: u64,
    /// 1-based line number.
    pub line: u64,
    /// Its `id` (none in version 1).
    pub id: Option<Box<str>>,
    /// The entry its `parentId` names, by index.
    pub parent: Option<u32>,
    /// On the active branch.
    pub active: bool,
}

/// A session file's tree: every entry's place, none of its text.
#[derive(Debug)]
pub struct Skeleton {
    /// The header, when the first line is one.
    pub header: Option<Header>,
    /// The entries in file order.
    pub entries: Vec<Entry>,
    /// Entries no other entry names as parent (the ends of branches), in
    /// file order; the last is the active branch's.
    pub tips: Vec<u32>,
    /// `toolResult` messages: one per tool call that finished.
    pub tool_results: usize,
}

impl Skeleton {
    /// Read the tree of the file at `path`.
    pub fn read(file: &File) -> std::io::Result<Skeleton> {
        let map = MappedFile::from_file(file)?;
        let bytes = map.bytes();
        let complete = &bytes[..complete_len(bytes)];
        let release = |s: usize, e: usize| map.release(s, e);
        let mut header = None;
        let mut entries: Vec<Entry> = Vec::new();
        let mut parents: Vec<Option<Box<str>>> = Vec::new();
        let mut tool_results = 0;
        let finder = memchr::memmem::Finder::new(b"\"role\":\"toolResult\"");
        // The entries begin after the header's line (and Oh My Pi's title
        // slot before it), as the build reads them.
        let mut body_from = 1;
        if let Ok(Ok((first, h))) = super::fingerprint::read_header(&mut &complete[..]) {
            header = Some(h);
            body_from = first.number;
        }
        for line in Lines::releasing(complete, 0, 1, &release) {
            let b = line
                .bytes
                .strip_prefix(b"\xef\xbb\xbf")
                .unwrap_or(line.bytes);
            if line.number <= body_from {
                continue;
            }
            if b.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let (id, parent) = match peek_links(b, true) {
                Peek::Skip { id, parent, .. } => (id.map(Box::from), parent.map(Box::from)),
                _ => match serde_json::from_slice::<Links>(b) {
                    Ok(l) => (l.id.map(Box::from), l.parent_id.map(Box::from)),
                    Err(_) => (None, None),
                },
            };
            if finder.find(&b[..b.len().min(256)]).is_some() {
                tool_results += 1;
            }
            entries.push(Entry {
                offset: line.offset,
                len: line.bytes.len() as u64,
                line: line.number,
                id,
                parent: None,
                active: false,
            });
            parents.push(parent);
        }
        let links: Vec<Link<'_>> = entries
            .iter()
            .zip(&parents)
            .map(|(e, p)| Link {
                id: e.id.as_deref(),
                parent: p.as_deref(),
            })
            .collect();
        let flags = active(&links);
        let mut by_id: HashMap<&str, u32> = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            if let Some(id) = e.id.as_deref() {
                by_id.insert(id, i as u32);
            }
        }
        let resolved: Vec<Option<u32>> = parents
            .iter()
            .map(|p| p.as_deref().and_then(|p| by_id.get(p).copied()))
            .collect();
        drop(by_id);
        drop(links);
        let mut has_child = vec![false; entries.len()];
        for (i, e) in entries.iter_mut().enumerate() {
            e.active = flags[i];
            e.parent = resolved[i];
            if let Some(p) = e.parent {
                has_child[p as usize] = true;
            }
        }
        let linear = entries.iter().all(|e| e.id.is_none());
        let tips = if linear {
            entries
                .len()
                .checked_sub(1)
                .map(|l| l as u32)
                .into_iter()
                .collect()
        } else {
            (0..entries.len() as u32)
                .filter(|&i| !has_child[i as usize] && entries[i as usize].id.is_some())
                .collect()
        };
        Ok(Skeleton {
            header,
            entries,
            tips,
            tool_results,
        })
    }

    /// The entries of `view`, in reading order.
    pub fn view(&self, view: &View) -> Vec<u32> {
        match view {
            View::Active => (0..self.entries.len() as u32)
                .filter(|&i| self.entries[i as usize].active)
                .collect(),
            View::All => (0..self.entries.len() as u32).collect(),
            View::Leaf(leaf) => {
                let mut path = Vec::new();
                let mut at = Some(*leaf);
                while let Some(i) = at {
                    if path.len() > self.entries.len() {
                        break; // a cycle
                    }
                    path.push(i);
                    at = self.entries[i as usize].parent;
                }
                path.reverse();
                path
            }
        }
    }

    /// The last entry with this id.
    pub fn find(&self, id: &str) -> Option<u32> {
        self.entries
            .iter()
            .rposition(|e| e.id.as_deref() == Some(id))
            .map(|i| i as u32)
    }
}

#[derive(Deserialize)]
struct Links<'a> {
    #[serde(borrow)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(rename = "parentId", borrow)]
    parent_id: Option<std::borrow::Cow<'a, str>>,
}

/// Which entries a session page shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum View {
    /// The active branch (Pi's reading order).
    Active,
    /// Every entry in file order, abandoned branches marked.
    All,
    /// The branch that ends at this entry.
    Leaf(u32),
}
