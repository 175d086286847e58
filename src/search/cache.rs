//! What an open index keeps between searches of one state of it.
//!
//! A long-running front end (the web view, the MCP server) answers many
//! queries from the same commit. Some of a query's work depends only on
//! the index, not on the query: the sessions' families (read from every
//! session document's columns: a quarter of a one-word search's time on
//! a 1 GB corpus) and the term dictionaries' answers to the segmentation
//! of a word ([`super::query::expand`]). Those are kept here for the state
//! of the index they were computed from, named by its segments and their
//! deletes; a searcher over another state starts afresh. A one-shot
//! command pays nothing for it.
//!
//! Bounded: one state at a time, and at most [`MAX_WORDS`] words' lookups
//! per field (then they are dropped and looked up again).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use tantivy::schema::Field;
use tantivy::Searcher;

use super::family::Families;
use crate::index::{IndexError, PiIndex};

/// Words whose dictionary lookups are kept per field, at most.
pub const MAX_WORDS: usize = 4096;

/// The dictionary lookups of one field: document frequencies of terms,
/// and words' segmentations.
#[derive(Clone, Debug, Default)]
pub struct Lookups {
    /// Document frequency (summed over segments) of terms seen.
    pub freq: HashMap<String, u64>,
    /// Words already segmented.
    pub done: HashMap<String, Vec<Vec<String>>>,
}

#[derive(Default)]
struct Held {
    stamp: u64,
    families: Option<Arc<Families>>,
    replaced: Option<bool>,
    lookups: HashMap<Field, Lookups>,
}

/// See the module documentation.
#[derive(Default)]
pub struct Cache {
    held: Mutex<Held>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cache")
    }
}

/// The cache of `pi` (and of its clones).
pub fn of(pi: &PiIndex) -> &Cache {
    pi.kept.get::<Cache>()
}

impl PiIndex {
    /// Every session's family (see [`super::family`]), kept for the
    /// state of the index `searcher` shows: the next search of it shares
    /// them.
    pub fn families(&self, searcher: &Searcher) -> Result<Arc<Families>, IndexError> {
        of(self).families(stamp(searcher), || self.resolve_families(searcher))
    }
}

/// The state of the index `searcher` shows: its segments and their
/// deletes (a new commit changes one or the other).
pub fn stamp(searcher: &Searcher) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for seg in searcher.segment_readers() {
        seg.segment_id().hash(&mut h);
        seg.num_deleted_docs().hash(&mut h);
    }
    h.finish()
}

impl Cache {
    /// What is held, emptied first when it was for another state.
    fn at(&self, stamp: u64) -> MutexGuard<'_, Held> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if held.stamp != stamp {
            *held = Held {
                stamp,
                ..Held::default()
            };
        }
        held
    }

    /// The families of the state `stamp`, computed by `compute` when not
    /// held (outside the lock: another search may compute them too).
    pub fn families<E>(
        &self,
        stamp: u64,
        compute: impl FnOnce() -> Result<Families, E>,
    ) -> Result<Arc<Families>, E> {
        if let Some(f) = &self.at(stamp).families {
            return Ok(f.clone());
        }
        let f = Arc::new(compute()?);
        self.at(stamp).families = Some(f.clone());
        Ok(f)
    }

    /// Whether any message of the state `stamp` has a replacement text
    /// (see [`super::query::FieldMap::new`]), found by `compute` when not
    /// held.
    pub fn replaced<E>(
        &self,
        stamp: u64,
        compute: impl FnOnce() -> Result<bool, E>,
    ) -> Result<bool, E> {
        if let Some(r) = self.at(stamp).replaced {
            return Ok(r);
        }
        let r = compute()?;
        self.at(stamp).replaced = Some(r);
        Ok(r)
    }

    /// The lookups of `field` in the state `stamp`, taken out (a search
    /// gives them back with [`Cache::give_back`]; two at once each take
    /// what is there).
    pub fn take_lookups(&self, stamp: u64, field: Field) -> Lookups {
        self.at(stamp).lookups.remove(&field).unwrap_or_default()
    }

    /// Keep `lookups` of `field` for the state `stamp` (dropped when
    /// they hold more than [`MAX_WORDS`] words).
    pub fn give_back(&self, stamp: u64, field: Field, lookups: Lookups) {
        if lookups.done.len() > MAX_WORDS || lookups.freq.len() > 8 * MAX_WORDS {
            return;
        }
        let mut held = self.at(stamp);
        let kept = held.lookups.entry(field).or_default();
        if lookups.done.len() + lookups.freq.len() >= kept.done.len() + kept.freq.len() {
            *kept = lookups;
        }
    }
}
