//! The index as the picker holds it, and bringing it up to date.
//!
//! A refresh is [`crate::pipeline::build`] from Pi's default session
//! directories ([`crate::discover::default_locations`], as `pi-index build`
//! without a PATH), with the kinds the index was built with, so that a
//! refresh never turns into a rebuild with other kinds. When nothing
//! changed it takes no lock and writes nothing (~15 ms). It runs on its
//! own thread: the command line waits a moment for it before the first
//! frame, and otherwise shows the index as it was until it commits.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use tantivy::{IndexReader, ReloadPolicy};

use crate::discover::default_locations;
use crate::index::{tantivy_err, IndexError, PiIndex};
use crate::pi::Kinds;
use crate::pipeline::{build, BuildError, BuildOptions};

use super::View;

/// The view every worker reads: `None` until an index exists, replaced
/// whole when a refresh commits.
pub type SharedView = Arc<RwLock<Option<View>>>;

/// The current view of `shared`, if there is one.
pub fn current(shared: &SharedView) -> Option<View> {
    shared
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// What a refresh did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refreshed {
    /// It committed new or changed sessions (`rebuilt`: the index was
    /// created or rebuilt whole).
    Updated {
        /// Messages it indexed.
        messages: u64,
        /// Whether the index was new or rebuilt.
        rebuilt: bool,
    },
    /// Nothing had changed.
    Current,
    /// Another build holds the write lock.
    Busy,
    /// No Pi session directory exists (the places looked in).
    NoSessions(Vec<PathBuf>),
    /// The build failed (its message).
    Failed(String),
}

/// Bring the index at `index_dir` up to date from Pi's session
/// directories; `progress` is told the bytes of each file read.
pub fn refresh(index_dir: &Path, progress: &(dyn Fn(u64) + Sync)) -> Refreshed {
    let defaults = default_locations();
    let roots = defaults.roots();
    if roots.is_empty() {
        let looked = defaults
            .locations
            .iter()
            .map(|l| PathBuf::from(&l.path))
            .collect();
        return Refreshed::NoSessions(looked);
    }
    let kinds = PiIndex::open(index_dir)
        .ok()
        .and_then(|pi| pi.build_info().ok().flatten())
        .and_then(|info| Kinds::parse(&info.kinds).ok())
        .unwrap_or_default();
    let opts = BuildOptions {
        roots,
        index_dir: index_dir.to_owned(),
        kinds,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_budget: 64 << 20,
        full: false,
        prune: false,
        // Recorded for `stats`, as `pi-index build` records them.
        locations: defaults.locations,
    };
    match build(&opts, progress) {
        Ok(r)
            if r.rebuilt.is_some()
                || r.files_indexed > 0
                || r.files_deleted > 0
                || r.files_moved > 0 =>
        {
            Refreshed::Updated {
                messages: r.messages_indexed,
                rebuilt: r.rebuilt.is_some(),
            }
        }
        Ok(_) => Refreshed::Current,
        Err(BuildError::Index(IndexError::Busy(_))) => Refreshed::Busy,
        Err(e) => Refreshed::Failed(e.to_string()),
    }
}

/// The index directory and its reader, once it can be opened.
pub struct Source {
    dir: PathBuf,
    opened: Option<(PiIndex, IndexReader)>,
    shared: SharedView,
}

impl Source {
    /// Open the index at `dir` if there is one; a missing index is not an
    /// error (a refresh may build it), any other failure is.
    pub fn open(dir: &Path) -> Result<Source, IndexError> {
        let mut source = Source {
            dir: dir.to_owned(),
            opened: None,
            shared: Arc::new(RwLock::new(None)),
        };
        match source.reopen() {
            Ok(()) | Err(IndexError::Missing(_)) => Ok(source),
            Err(e) => Err(e),
        }
    }

    /// The view the workers read.
    pub fn shared(&self) -> SharedView {
        self.shared.clone()
    }

    /// Whether an index is open.
    pub fn is_open(&self) -> bool {
        self.opened.is_some()
    }

    /// Take in what a refresh committed: the reader reloaded, or the
    /// index opened afresh after a rebuild (or the first build).
    pub fn refreshed(&mut self, rebuilt: bool) -> Result<(), IndexError> {
        match &self.opened {
            Some((pi, reader)) if !rebuilt => {
                reader.reload().map_err(|e| tantivy_err(&self.dir, e))?;
                let view = View::new(pi.clone(), reader.searcher());
                *self.shared.write().unwrap_or_else(PoisonError::into_inner) = Some(view);
                Ok(())
            }
            _ => self.reopen(),
        }
    }

    fn reopen(&mut self) -> Result<(), IndexError> {
        let pi = PiIndex::open(&self.dir)?;
        let reader: IndexReader = pi
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| tantivy_err(&self.dir, e))?;
        let view = View::new(pi.clone(), reader.searcher());
        *self.shared.write().unwrap_or_else(PoisonError::into_inner) = Some(view);
        self.opened = Some((pi, reader));
        Ok(())
    }
}
