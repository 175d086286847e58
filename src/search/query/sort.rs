//! How hits are ordered.

/// How hits are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sort {
    /// BM25, ties broken by recency, then by index order (so pages cut
    /// at any offset are the same order, with nothing twice or missing).
    #[default]
    Relevance,
    /// Newest first.
    Newest,
    /// Oldest first.
    Oldest,
}
