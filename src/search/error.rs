//! Why a search failed.

use super::query::filters::FilterError;
use super::query::limits::{TooDeep, TooLong};
use super::query::{shown, QueryError};
use crate::index::IndexError;

/// Errors of a search.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The index failed.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The query cannot be run (a bad filter value, nesting too deep,
    /// nothing left to search).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// The query is longer than a search may be
    /// ([`super::query::limits`]).
    #[error(transparent)]
    TooLong(#[from] TooLong),
    /// The page starts deeper than a search pages
    /// ([`super::query::MAX_OFFSET`]).
    #[error(transparent)]
    TooDeep(#[from] TooDeep),
}

impl From<FilterError> for SearchError {
    fn from(e: FilterError) -> SearchError {
        SearchError::Query(e.into())
    }
}

/// Errors finding a session.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// The index failed.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// No session was named (an empty or blank argument).
    #[error("no session given: name one by its id (as search and sessions give it), a unique prefix of the id, or its file's path")]
    Empty,
    /// Nothing matches.
    #[error("no indexed session matches {}: check `pi-index sessions`, or run `pi-index build` if the session is new", shown(.0))]
    NotFound(String),
    /// A prefix matches several sessions.
    #[error("{} matches {count} sessions ({examples}): give more of the id", shown(.prefix))]
    Ambiguous {
        /// What was asked for.
        prefix: String,
        /// How many matched.
        count: usize,
        /// A few of them.
        examples: String,
    },
}
