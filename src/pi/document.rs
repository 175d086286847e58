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
    /// Whether a `context_edit` on the active branch changed what the
    /// model is sent of this entry (the latest such edit decides).
    pub edited: Edited,
    /// The text the model is sent instead, when the latest edit replaced
    /// the entry (trimmed; on the entry's first document only).
    pub replacement: Option<String>,
    /// The text, trimmed and non-empty: what the user saw.
    pub text: String,
}

/// What Pi 1.6's `context_edit` entries did to a message, as the model
/// sees it (the user's text is indexed as it was, whatever this says).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Edited {
    /// Sent as written (no edit on the active branch targets it).
    #[default]
    No,
    /// Left out of the model's context (`replacement: null`).
    Omitted,
    /// Its content replaced for the model (`replacement: {content}`).
    Replaced,
}

impl Edited {
    /// The mark as printed in JSON (`null`, `"omitted"`, `"replaced"`).
    pub fn as_str(self) -> Option<&'static str> {
        match self {
            Edited::No => None,
            Edited::Omitted => Some("omitted"),
            Edited::Replaced => Some("replaced"),
        }
    }

    /// How the index stores it: 0, 1, 2.
    pub fn rank(self) -> u64 {
        self as u64
    }

    /// The mark of a stored [`Edited::rank`] (unknown values: none).
    pub fn from_rank(rank: u64) -> Edited {
        match rank {
            1 => Edited::Omitted,
            2 => Edited::Replaced,
            _ => Edited::No,
        }
    }
}

impl serde::Serialize for Edited {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_str().serialize(s)
    }
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
