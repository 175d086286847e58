//! What an open index keeps between searches of one state of it.
//!
//! A long-running front end (the web view, the MCP server) answers many
//! queries from the same commit. Some of a query's work depends only on
//! the index, not on the query: the sessions' families (read from every
//! session document's columns: a large share of a one-word search,
//! [docs/performance.md](../../docs/performance.md#local-search)) and the
//! term dictionaries' answers to the segmentation of a word
//! ([`super::query::expand`]). Those are kept here for the state of the index
//! they were computed from, named by its segments and their deletes; a
//! searcher over another state starts afresh. A one-shot command pays nothing
//! for it.
//!
//! A front end that holds the index open also keeps each segment's time
//! order (`Reader::time_ranks`), so
//! that a search sorted by time does not read every match's timestamp; a
//! one-shot command never ranks.
//!
//! It keeps, too, what printing a hit reads whatever the query: each
//! segment's column handles, and the facts of the sessions hits were in.
//!
//! Bounded: one state at a time, at most [`MAX_WORDS`] words' lookups
//! per field (then they are dropped and looked up again) and
//! [`MAX_SESSIONS`] sessions, and time orders and column handles of the
//! segments searched last (4 bytes per document and order).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use tantivy::index::SegmentId;
use tantivy::schema::Field;
use tantivy::Searcher;

use super::top::Ranks;
use crate::index::family::Families;
use crate::index::saved::groups::Groups;
use crate::index::stored::Columns;
use crate::read::SessionRow;

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

/// Sessions' facts kept per state, at most.
pub const MAX_SESSIONS: usize = 4096;

#[derive(Default)]
struct Held {
    stamp: u64,
    families: Option<Arc<Families>>,
    /// The copy groups the build saved for this state, once found.
    groups: Option<Arc<Groups>>,
    replaced: Option<bool>,
    lookups: HashMap<Field, Lookups>,
    /// Sessions read by key (a hit's session), at most [`MAX_SESSIONS`].
    sessions: HashMap<u64, Option<Arc<SessionRow>>>,
}

/// See the module documentation.
#[derive(Default)]
pub struct Cache {
    held: Mutex<Held>,
    /// Whether the index is held open for many searches (a front end that
    /// keeps its reader): only then are time orders kept.
    long_lived: std::sync::atomic::AtomicBool,
    /// Segments' time orders (`top::ranks`), by segment and order
    /// (`true`: oldest first). A segment's documents never
    /// change (deletes only hide them), so these outlive a state: after a
    /// commit only new segments are ranked, and those no longer searched
    /// are dropped.
    pub(crate) ranks: Mutex<HashMap<(SegmentId, bool), Ranks>>,
    /// Segments' columns a hit is read with, opened once (a column's
    /// handle is its header read from the segment's columnar file).
    columns: Mutex<HashMap<SegmentId, Arc<Columns>>>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cache")
    }
}

impl Cache {
    /// Whether [`Reader::keep_between_searches`](super::reader::Reader::keep_between_searches)
    /// was called: the index is held open for many searches, and readers
    /// keep what they open here.
    pub fn long_lived(&self) -> bool {
        self.long_lived.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Say that the index is held open for many searches.
    pub(crate) fn keep(&self) {
        self.long_lived
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The columns of segment `id`, when opened before.
    pub(crate) fn columns(&self, id: SegmentId) -> Option<Arc<Columns>> {
        lock(&self.columns).get(&id).cloned()
    }

    /// Keep the columns of segment `id` of `searcher`, dropping those of
    /// segments it no longer has.
    pub(crate) fn keep_columns(&self, searcher: &Searcher, id: SegmentId, columns: Arc<Columns>) {
        let mut held = lock(&self.columns);
        held.insert(id, columns);
        drop_gone(&mut held, searcher, |id| *id);
    }

    /// The session with key `sess` in the state `stamp`, when read
    /// before (`Some(None)`: it has none).
    pub(crate) fn session(&self, stamp: u64, sess: u64) -> Option<Option<Arc<SessionRow>>> {
        self.at(stamp).sessions.get(&sess).cloned()
    }

    /// Keep the session with key `sess` read in the state `stamp` (none
    /// kept past [`MAX_SESSIONS`] until the next state).
    pub(crate) fn keep_session(&self, stamp: u64, sess: u64, row: Option<Arc<SessionRow>>) {
        let mut held = self.at(stamp);
        if held.sessions.len() < MAX_SESSIONS {
            held.sessions.insert(sess, row);
        }
    }
}

/// Bounded: what is kept per segment, once it holds more than twice the
/// segments `searcher` has, keeps only theirs (a commit's merges leave
/// the others behind).
pub(crate) fn drop_gone<K, V>(
    held: &mut HashMap<K, V>,
    searcher: &Searcher,
    id: impl Fn(&K) -> SegmentId,
) {
    let readers = searcher.segment_readers();
    if held.len() > 2 * readers.len() {
        let live: std::collections::HashSet<SegmentId> =
            readers.iter().map(|r| r.segment_id()).collect();
        held.retain(|k, _| live.contains(&id(k)));
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
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
        let mut held = lock(&self.held);
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

    /// The copy groups the build saved for the state `stamp`, read by
    /// `read` when not held (outside the lock). Not finding them is not
    /// kept: a build in another process saves the groups just after its
    /// commit.
    pub fn groups(&self, stamp: u64, read: impl FnOnce() -> Option<Groups>) -> Option<Arc<Groups>> {
        if let Some(held) = self.at(stamp).groups.clone() {
            return Some(held);
        }
        let t = Arc::new(read()?);
        self.at(stamp).groups = Some(t.clone());
        Some(t)
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
