//! What the chunk loop ([`super::chunk`]) gathers and the extraction rules
//! ([`super::extract`]) fill: one chunk's documents, tree links and session
//! facts, before the whole file is put together ([`super::session`]).
//! Below both, so that the loop calls the rules and neither knows the
//! other's insides.

use super::document::{Damage, Truncation};
use super::{Document, Kinds};

/// Tree links of one entry, as byte ranges into the chunk's id arena.
#[derive(Clone, Copy, Debug)]
pub(super) struct Link {
    pub(super) id: Option<(u32, u32)>,
    pub(super) parent: Option<(u32, u32)>,
    /// Byte offset of the entry's line in its file.
    pub(super) offset: u64,
}

/// A `context_edit` entry: its link, its target's id (a range of the id
/// arena) and the replacement's text (`None`: the target is omitted).
#[derive(Debug)]
pub(super) struct EditEntry {
    pub(super) link: u32,
    pub(super) target: (u32, u32),
    pub(super) replacement: Option<String>,
}

/// A document before the whole file is known: its line number is relative
/// to its chunk, its entry is an index into the chunk's links, and its
/// model may still have to be inherited.
#[derive(Debug)]
pub(super) struct PendingDoc {
    pub(super) doc: Document,
    pub(super) link: u32,
    pub(super) inherit_model: bool,
}

/// What one chunk of a file yielded. Line numbers inside are relative to
/// the chunk (its first line is 0) until [`Session::finish`](super::Session::finish).
#[derive(Debug, Default)]
pub struct ParsedChunk {
    pub(super) docs: Vec<PendingDoc>,
    pub(super) links: Vec<Link>,
    pub(super) arena: String,
    pub(super) model_changes: Vec<(u64, String)>,
    pub(super) names: Vec<(u64, Option<String>)>,
    pub(super) edits: Vec<EditEntry>,
    pub(super) damage: Vec<Damage>,
    /// Lines that held several entries glued together, split and read.
    pub(super) recovered: Vec<Damage>,
    /// Lines whose text was indexed only in part.
    pub(super) truncated: Vec<Truncation>,
    /// What each entry that records usage spent ([`super::usage`]).
    pub(super) usage: Vec<super::usage::UsageEntry>,
    /// What to read of the usage of the entry the line just extracted
    /// recorded (the last of `usage`), from its bytes, by the loop (which
    /// has them).
    pub(super) usage_wanted: Option<super::usage::Wanted>,
    /// The bucket the last entry's usage went to ([`super::usage::model_bucket`]).
    pub(super) usage_bucket: Option<std::sync::Arc<str>>,
    /// A document of the line being read was cut to
    /// [`max_document_bytes`].
    pub(super) capped: bool,
    /// Lines in the chunk, blank ones included.
    pub lines: u64,
    /// Bytes of the lines that were fully parsed (the rest were skipped by
    /// the prefix scan or blank).
    pub bytes_parsed: u64,
}

/// The link of a document whose line was repaired: it has no place in the
/// tree, so it is never on the active branch.
pub(super) const NO_LINK: u32 = u32::MAX;

/// Context for extracting one line's documents.
#[derive(Clone, Copy)]
pub(super) struct LineCtx {
    pub(super) kinds: Kinds,
    pub(super) line: u64,
    pub(super) offset: u64,
    /// Only links and session facts are wanted: no documents.
    pub(super) links_only: bool,
    /// A repaired line: documents, but no place in the tree.
    pub(super) recovered: bool,
}
