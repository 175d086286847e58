//! What finds sessions by a query, and what it finds: a line of
//! `sessions QUERY --json`.

use serde::Serialize;

use super::hit::Hit;
use super::session::SessionRow;
use crate::search::query::{Filters, Now, Warning};

/// A session-level search.
#[derive(Clone, Debug)]
pub struct SessionQuery {
    /// The query, in the language of `search`.
    pub query: String,
    /// Filters from flags, ANDed with the whole query.
    pub filters: Filters,
    /// Only sessions at or below this directory (normalized: see
    /// [`crate::search::query::normalize_dir`]).
    pub dir: Option<String>,
    /// Only sessions active at or after this time (epoch ms).
    pub since: Option<i64>,
    /// Sessions to return.
    pub limit: usize,
    /// Sessions to skip first, in rank order (at most
    /// [`crate::search::query::MAX_OFFSET`]).
    pub offset: usize,
    /// Snippet length in characters.
    pub snippet_chars: usize,
    /// Now, as for [`super::SearchRequest::now`].
    pub now: Now,
}

/// One session found.
#[derive(Clone, Debug, Serialize)]
pub struct SessionHit {
    /// The session.
    #[serde(flatten)]
    pub session: SessionRow,
    /// What matched: `"name"` (its name), `"title"` (its first user
    /// message) or `"messages"` (only messages), the group it is ranked in.
    pub matched: Matched,
    /// Its score within that group (see [`crate::search::sessions`]).
    pub score: f32,
    /// BM25 of the query on its name (0: no match).
    pub name_score: f32,
    /// BM25 of the query on its title (0: no match).
    pub title_score: f32,
    /// How many of its messages match.
    pub matches: u64,
    /// Its best matching message, with its snippet (none when only the
    /// name or title matched).
    pub hit: Option<Hit>,
    /// The best message's snippet, else the title.
    pub snippet: String,
    /// Byte ranges of matched words within `snippet`.
    #[serde(skip)]
    pub highlights: Vec<std::ops::Range<usize>>,
}

/// Which part of a session matched first: the groups sessions are ranked
/// in, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Matched {
    /// Its name.
    Name,
    /// Its title (first user message), not its name.
    Title,
    /// Only some of its messages.
    Messages,
}

/// The result of a session-level search.
#[derive(Debug)]
pub struct SessionSearch {
    /// The sessions, best first, at most the limit.
    pub hits: Vec<SessionHit>,
    /// How many sessions matched in all.
    pub total: usize,
    /// What was repaired or ignored in the query.
    pub warnings: Vec<Warning>,
}
