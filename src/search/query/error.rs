//! Why a query cannot be run.

use super::filters::FilterError;
use super::grammar::{TooDeep, Warning};

/// Why a query cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// A filter's value is unusable.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// Nested too deep.
    #[error(transparent)]
    TooDeep(#[from] TooDeep),
    /// Every part of the query was ignored (the warnings say why).
    #[error("nothing left to search for: {}; search '*' to list every message", explain(.0))]
    NothingToSearch(Vec<Warning>),
}

fn explain(warnings: &[Warning]) -> String {
    const SHOWN: usize = 3;
    let mut s: Vec<String> = warnings
        .iter()
        .take(SHOWN)
        .map(|w| format!("position {}: {}", w.position, w.message))
        .collect();
    if warnings.len() > SHOWN {
        s.push(format!("and {} more", warnings.len() - SHOWN));
    }
    if s.is_empty() {
        "every part of the query was ignored".into()
    } else {
        s.join("; ")
    }
}
