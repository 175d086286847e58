//! Why a search failed.

use super::query::filters::FilterError;
use super::query::limits::{TooDeep, TooLong};
use super::query::QueryError;
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
