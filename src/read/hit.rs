//! A search as the read side takes it and the hits it gives (a line of
//! `search --json`).

use serde::Serialize;

use super::doc::StoredDoc;
use super::session::SessionRow;
use crate::search::query::{Filters, Now, Sort, Warning};

/// A search request.
#[derive(Clone, Debug)]
pub struct SearchRequest {
    /// The query string.
    pub query: String,
    /// Filters from flags, ANDed with the whole query.
    pub filters: Filters,
    /// Order.
    pub sort: Sort,
    /// Hits to return.
    pub limit: usize,
    /// Hits to skip.
    pub offset: usize,
    /// Snippet length in characters.
    pub snippet_chars: usize,
    /// Now, in the time zone that civil dates (`after:2026-03-01`,
    /// `today`) are read in; relative dates count back from it.
    pub now: Now,
    /// Every copy of a message copied into forks as its own hit (by
    /// default a message is one hit, with its copies listed: see
    /// [`crate::search::copies`]).
    pub copies: bool,
}

/// One hit.
#[derive(Clone, Debug, Serialize)]
pub struct Hit {
    /// The stored document (every key `show --format json` prints).
    #[serde(flatten)]
    pub doc: StoredDoc,
    /// The BM25 score (0 when sorted by date or with no text query).
    pub score: f32,
    /// A short plain-text excerpt around the matched words.
    pub snippet: String,
    /// Byte ranges of matched words within `snippet`.
    #[serde(skip)]
    pub highlights: Vec<std::ops::Range<usize>>,
    /// The hit's session, as listed (read once per session of a search).
    #[serde(skip)]
    pub session: Option<std::sync::Arc<SessionRow>>,
    /// The other sessions of its family holding the same message (the
    /// same entry id and text) that matched too, oldest first.
    pub copies: Vec<CopyRef>,
}

/// Another session's copy of a hit's message (it matched the query too).
#[derive(Clone, Debug, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct CopyRef {
    /// The copy's session id.
    pub session_id: String,
    /// The copy's session file.
    pub path: String,
    /// Its 1-based line in that file.
    pub line: u64,
}
/// The result of a search.
#[derive(Debug)]
pub struct SearchResult {
    /// The hits, in order.
    pub hits: Vec<Hit>,
    /// How many documents matched in all (merged copies counted once),
    /// or, when `more`, how many the team database's pool holds.
    pub total: usize,
    /// Whether more match than the team database's pool holds (the
    /// newest [`crate::team::search::POOL`], or as many as the page
    /// reaches): `total` is then a lower bound ("more than `total`").
    /// Counting every match of a common word would read every one of
    /// them. Never for the local index, which counts every match.
    pub more: bool,
    /// What was repaired or ignored in the query.
    pub warnings: Vec<Warning>,
}
