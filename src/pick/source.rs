//! The index as the picker reads it: one committed state, and what is
//! read once of it.

use std::sync::{Arc, OnceLock};

use tantivy::Searcher;

use crate::index::{IndexError, PiIndex};
use crate::search::SessionRow;

/// The index as of one commit: what a search or a preview reads.
#[derive(Clone)]
pub struct View {
    /// The index.
    pub pi: PiIndex,
    /// A searcher over one committed state of it.
    pub searcher: Searcher,
    /// Every session, newest first, once read (the listing of an empty
    /// query: 2,118 sessions take ~8 ms to read, and they only change
    /// with the commit).
    listing: Arc<OnceLock<Vec<Arc<SessionRow>>>>,
}

impl View {
    /// A view of `pi` through `searcher`.
    pub fn new(pi: PiIndex, searcher: Searcher) -> View {
        View {
            pi,
            searcher,
            listing: Arc::default(),
        }
    }

    /// The index at `dir`, as of its last commit.
    pub fn open(dir: &std::path::Path) -> Result<View, IndexError> {
        let pi = PiIndex::open(dir)?;
        let searcher = pi.searcher()?;
        Ok(View::new(pi, searcher))
    }

    /// Every session, newest first ([`PiIndex::sessions`]), read once.
    pub fn listing(&self) -> Result<&[Arc<SessionRow>], IndexError> {
        if let Some(l) = self.listing.get() {
            return Ok(l);
        }
        let read: Vec<Arc<SessionRow>> = self
            .pi
            .sessions(&self.searcher)?
            .into_iter()
            .map(Arc::new)
            .collect();
        Ok(self.listing.get_or_init(|| read))
    }
}
