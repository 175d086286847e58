//! The index as the picker reads it: one committed state, and what is
//! read once of it.

use std::sync::{Arc, OnceLock};

use crate::index::IndexError;
use crate::search::{Local, SessionRow};

/// The index as of one commit: what a search or a preview reads.
#[derive(Clone)]
pub struct View {
    /// The index as of one committed state.
    pub local: Local,
    /// Every session, newest first, once read (the listing of an empty
    /// query: 2,118 sessions take ~8 ms to read, and they only change
    /// with the commit).
    listing: Arc<OnceLock<Vec<Arc<SessionRow>>>>,
}

impl View {
    /// A view of `local`.
    pub fn new(local: Local) -> View {
        View {
            local,
            listing: Arc::default(),
        }
    }

    /// The index at `dir`, as of its last commit.
    pub fn open(dir: &std::path::Path) -> Result<View, IndexError> {
        Ok(View::new(Local::open(dir)?))
    }

    /// Every session, newest first ([`Local::sessions`]), read once.
    pub fn listing(&self) -> Result<&[Arc<SessionRow>], IndexError> {
        if let Some(l) = self.listing.get() {
            return Ok(l);
        }
        let read: Vec<Arc<SessionRow>> = self.local.sessions()?.into_iter().map(Arc::new).collect();
        Ok(self.listing.get_or_init(|| read))
    }
}
