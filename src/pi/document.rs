//! What the format stage produces: documents, and the damage it met.

use super::Role;

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

/// A line whose text was indexed only in part (see
/// [`giant`](super::giant)): where, how long it was, and how much of its
/// text was indexed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    /// 1-based line number.
    pub line: u64,
    /// Bytes of the line.
    pub line_bytes: u64,
    /// Bytes of text indexed from it, all its documents together.
    pub indexed_bytes: u64,
}
