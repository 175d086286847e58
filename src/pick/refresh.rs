//! The index as the picker holds it, and bringing it up to date.
//!
//! A refresh brings the index up to date from Pi's default session
//! directories ([`crate::discover::default_locations`], as `pi-index build`
//! without a PATH), with the kinds the index was built with, so that a
//! refresh never turns into a rebuild with other kinds. The first one
//! checks every file (when nothing changed it takes no lock and writes
//! nothing: [docs/performance.md](../../docs/performance.md#the-picker)); it
//! runs on its own thread, and the command line waits a moment for it before
//! the first frame, otherwise showing the index as it was until it commits.
//! The picker then follows Pi as it writes ([`follow`]): the session
//! directories are watched, and what changes while it is open is indexed, and
//! searched again, at once.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use tantivy::{IndexReader, ReloadPolicy};

use crate::index::{tantivy_err, IndexError};
use crate::pipeline::BuildError;
use crate::refresh::{self, Config, Outcome, Refresher};
use crate::search::{Local, Reader};

use super::source::View;

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

/// The longest the picker's refresh waits for a change before it looks
/// again (a full check when the watch cannot say what changed).
pub const FOLLOW_FLOOR: Duration = Duration::from_secs(5);

/// The refresher of the index at `index_dir`: Pi's session directories,
/// watched.
pub fn refresher(index_dir: &Path) -> Refresher {
    Refresher::new(Config::new(index_dir.to_owned()))
}

/// Bring the index up to date from Pi's session directories; `progress`
/// is told the bytes of each file read.
pub fn refresh(r: &mut Refresher, progress: &(dyn Fn(u64) + Sync)) -> Refreshed {
    match r.refresh(progress) {
        Outcome::NoSessions(looked) => Refreshed::NoSessions(looked),
        Outcome::Ran { result, .. } => match result {
            Ok(Some(r)) if refresh::changed(&r) => Refreshed::Updated {
                messages: r.messages_indexed,
                rebuilt: r.rebuilt.is_some(),
            },
            Ok(_) => Refreshed::Current,
            Err(BuildError::Index(IndexError::Busy(_))) => Refreshed::Busy,
            Err(e) => Refreshed::Failed(e.to_string()),
        },
    }
}

/// Follow Pi as it writes, for as long as the picker is open: refresh
/// now (`progress` told the bytes read), then again as soon as the watch
/// sees a change, and at least every [`FOLLOW_FLOOR`]. `done` is told
/// what each refresh did, except one that only repeats the last (nothing
/// new again, still busy); it returns false when the picker is gone,
/// and this returns. A refresh another build kept out (or that failed)
/// is tried again after the floor.
pub fn follow(
    mut r: Refresher,
    progress: &(dyn Fn(u64) + Sync),
    mut done: impl FnMut(Refreshed) -> bool,
) {
    let first = refresh(&mut r, progress);
    let mut last = first.clone();
    if !done(first) {
        return;
    }
    loop {
        if matches!(last, Refreshed::Busy | Refreshed::Failed(_)) {
            std::thread::sleep(FOLLOW_FLOOR);
        }
        r.wait(FOLLOW_FLOOR);
        let now = refresh(&mut r, &|_| {});
        let quiet = now == last && !matches!(now, Refreshed::Updated { .. });
        last = now.clone();
        if !quiet && !done(now) {
            return;
        }
    }
}

/// The index directory and its reader, once it can be opened.
pub struct Index {
    dir: PathBuf,
    opened: Option<(Reader, IndexReader)>,
    shared: SharedView,
}

impl Index {
    /// Open the index at `dir` if there is one; a missing index is not an
    /// error (a refresh may build it), any other failure is.
    pub fn open(dir: &Path) -> Result<Index, IndexError> {
        let mut source = Index {
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
            Some((reader, index_reader)) if !rebuilt => {
                index_reader
                    .reload()
                    .map_err(|e| tantivy_err(&self.dir, e))?;
                let view = View::local(Local::new(reader.clone(), index_reader.searcher()));
                *self.shared.write().unwrap_or_else(PoisonError::into_inner) = Some(view);
                Ok(())
            }
            _ => self.reopen(),
        }
    }

    fn reopen(&mut self) -> Result<(), IndexError> {
        let reader = Reader::open(&self.dir)?;
        let index_reader: IndexReader = reader
            .pi
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| tantivy_err(&self.dir, e))?;
        let view = View::local(Local::new(reader.clone(), index_reader.searcher()));
        *self.shared.write().unwrap_or_else(PoisonError::into_inner) = Some(view);
        self.opened = Some((reader, index_reader));
        Ok(())
    }
}
