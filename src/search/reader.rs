//! The read side's handle on an index, as tantivy's `Index` is to its
//! `Searcher`: the index as the build wrote it ([`PiIndex`]), and what
//! its searches keep between them ([`Cache`], shared by the clones of the
//! handle). A search, a listing or a session read takes the handle and a
//! searcher over one committed state of the index (together: a
//! [`Local`](super::local::Local)).
//!
//! What the handle works out once per state of the index and keeps is
//! here too: the sessions' families, each segment's time order (for a
//! long-running front end) and the copy groups the build saved.

use std::path::Path;
use std::sync::Arc;

use tantivy::Searcher;

use super::cache::{drop_gone, lock, stamp, Cache};
use super::top::{ranks, Ranks};
use crate::index::family::Families;
use crate::index::saved::groups::{self, Groups};
use crate::index::{tantivy_err, IndexError, PiIndex};

/// See the module documentation.
#[derive(Clone)]
pub struct Reader {
    /// The index.
    pub pi: PiIndex,
    cache: Arc<Cache>,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reader({})", self.pi.dir.display())
    }
}

impl Reader {
    /// A handle on the index at `dir`, which exists.
    pub fn open(dir: &Path) -> Result<Reader, IndexError> {
        Ok(Reader::new(PiIndex::open(dir)?))
    }

    /// A handle on `pi`, keeping nothing yet.
    pub fn new(pi: PiIndex) -> Reader {
        Reader {
            pi,
            cache: Arc::default(),
        }
    }

    /// A searcher over the last committed state.
    pub fn searcher(&self) -> Result<Searcher, IndexError> {
        self.pi.searcher()
    }

    /// What searches keep between them.
    pub(crate) fn cache(&self) -> &Cache {
        &self.cache
    }

    /// Say that this index (and its clones) is held open for many
    /// searches: searches then keep each segment's time order
    /// (`Reader::time_ranks`), column handles and the sessions they
    /// read. A one-shot command does not: ranking a whole segment costs
    /// more than one search saves.
    pub fn keep_between_searches(&self) {
        self.cache.keep();
    }

    /// Every session's family (see [`crate::index::family`]), kept for
    /// the state of the index `searcher` shows: the next search of it
    /// shares them.
    pub fn families(&self, searcher: &Searcher) -> Result<Arc<Families>, IndexError> {
        self.cache
            .families(stamp(searcher), || Families::resolve(&self.pi, searcher))
    }

    /// The time order (`oldest` first, or newest) of each of `searcher`'s
    /// segments, by segment ordinal, for [`super::top::ByTime`]: `None`
    /// unless [`Reader::keep_between_searches`] was called.
    pub(crate) fn time_ranks(
        &self,
        searcher: &Searcher,
        oldest: bool,
    ) -> Result<Option<Vec<Ranks>>, IndexError> {
        let cache = &self.cache;
        if !cache.long_lived() {
            return Ok(None);
        }
        let readers = searcher.segment_readers();
        let mut out = Vec::with_capacity(readers.len());
        for reader in readers {
            let key = (reader.segment_id(), oldest);
            let held = lock(&cache.ranks).get(&key).cloned();
            let r = match held {
                Some(r) => r,
                // Outside the lock: another search may rank it too.
                None => {
                    let r = ranks(reader, oldest).map_err(|e| tantivy_err(&self.pi.dir, e))?;
                    lock(&cache.ranks).insert(key, r.clone());
                    r
                }
            };
            out.push(r);
        }
        drop_gone(&mut lock(&cache.ranks), searcher, |(id, _)| *id);
        Ok(Some(out))
    }

    /// The copy groups the build saved for the state `searcher` shows
    /// (see [`crate::index::saved::groups`]), or `None` when it saved none
    /// for that state (a search then merges copies itself).
    pub fn copy_groups(&self, searcher: &Searcher) -> Option<Arc<Groups>> {
        self.cache
            .groups(stamp(searcher), || groups::read(&self.pi.dir, searcher))
    }
}
