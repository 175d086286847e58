//! What the picker reads: the local index as of one commit, or the team
//! database (`pick --db`), through the read interface.

use std::sync::Arc;

use crate::read::Source;
use crate::search::Local;

/// Where the picker's jobs read: one committed state of the local index,
/// or the team database.
#[derive(Clone)]
pub struct View {
    /// Where to read.
    pub source: Arc<dyn Source>,
}

impl View {
    /// A view of `source`.
    pub fn new(source: Arc<dyn Source>) -> View {
        View { source }
    }

    /// A view of the local index as of `local`'s commit.
    pub fn local(local: Local) -> View {
        View::new(Arc::new(local))
    }

    /// The index at `dir`, as of its last commit.
    pub fn open(dir: &std::path::Path) -> Result<View, crate::index::IndexError> {
        Ok(View::local(Local::open(dir)?))
    }
}
