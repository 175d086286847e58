//! The local index as of one commit: the read side's handle and a
//! searcher over one committed state of it, with everything the front
//! ends ask of it in one place.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use tantivy::{DocAddress, Searcher};

use super::error::SearchError;
use super::hits::{SearchRequest, SearchResult};
use super::lineage::{Lineage, SessionRef};
use super::reader::Reader;
use super::sessions::{SessionQuery, SessionSearch};
use super::stats::{Activity, Stats};
use super::types::{Hit, LookupError, SessionKey, SessionRow, StoredDoc};
use crate::index::family::Families;
use crate::index::state::FileState;
use crate::index::IndexError;

/// See the module documentation.
#[derive(Clone)]
pub struct Local {
    /// The handle.
    pub reader: Reader,
    /// A searcher over one committed state.
    pub searcher: Searcher,
}

impl Local {
    /// The index `reader` as `searcher` shows it.
    pub fn new(reader: Reader, searcher: Searcher) -> Local {
        Local { reader, searcher }
    }

    /// The index at `dir` as of its last commit.
    pub fn open(dir: &Path) -> Result<Local, IndexError> {
        let reader = Reader::open(dir)?;
        let searcher = reader.searcher()?;
        Ok(Local { reader, searcher })
    }

    /// Run a search ([`super::hits::search`]).
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResult, SearchError> {
        super::hits::search(&self.reader, &self.searcher, req)
    }

    /// Whether `req` merges copies by the groups the build saved.
    pub fn merges_by_saved_groups(&self, req: &SearchRequest) -> Result<bool, SearchError> {
        super::hits::merges_by_saved_groups(&self.reader, &self.searcher, req)
    }

    /// Find sessions ([`super::sessions::search_sessions`]).
    pub fn search_sessions(&self, req: &SessionQuery) -> Result<SessionSearch, SearchError> {
        super::sessions::search_sessions(&self.reader, &self.searcher, req)
    }

    /// Fill in each hit's `copies` ([`super::copies::fill_copies`]).
    pub fn fill_copies(&self, hits: &mut [&mut Hit]) -> Result<(), IndexError> {
        super::copies::fill_copies(&self.reader, &self.searcher, hits)
    }

    /// Every session, newest activity first.
    pub fn sessions(&self) -> Result<Vec<SessionRow>, IndexError> {
        super::lookup::sessions(&self.reader, &self.searcher)
    }

    /// Every session's family.
    pub fn families(&self) -> Result<Arc<Families>, IndexError> {
        self.reader.families(&self.searcher)
    }

    /// Fill in `row.family` ([`super::family::annotate`]).
    pub fn annotate(
        &self,
        families: &Families,
        row: &mut SessionRow,
        known: &HashMap<u64, SessionRef>,
    ) -> Result<(), IndexError> {
        super::family::annotate(families, &self.reader, &self.searcher, row, known)
    }

    /// Resolve a `show` argument ([`super::lookup::resolve_session`]).
    pub fn resolve_session(&self, arg: &str) -> Result<SessionKey, LookupError> {
        super::lookup::resolve_session(&self.reader, &self.searcher, arg)
    }

    /// Every message of a session, in file order.
    pub fn session_documents(&self, key: &SessionKey) -> Result<Vec<StoredDoc>, IndexError> {
        super::lookup::session_documents(&self.reader, &self.searcher, key)
    }

    /// A page of a session's messages, and how many there are
    /// ([`super::lookup::session_documents_page`]).
    pub fn session_documents_page(
        &self,
        key: &SessionKey,
        active_only: bool,
        offset: usize,
        limit: usize,
    ) -> Result<(usize, Vec<StoredDoc>), IndexError> {
        super::lookup::session_documents_page(
            &self.reader,
            &self.searcher,
            key,
            active_only,
            offset,
            limit,
        )
    }

    /// The messages at `addrs`, in file order.
    pub fn documents_at(
        &self,
        addrs: impl IntoIterator<Item = DocAddress>,
    ) -> Result<Vec<StoredDoc>, IndexError> {
        super::lookup::documents_at(&self.reader, &self.searcher, addrs)
    }

    /// The sessions whose header id is exactly `id`, newest first.
    pub fn sessions_with_id(&self, id: &str) -> Result<Vec<SessionRow>, IndexError> {
        super::lookup::sessions_with_id(&self.reader, &self.searcher, id)
    }

    /// The session stored at `path`.
    pub fn session_by_path(&self, path: &str) -> Result<Option<SessionRow>, IndexError> {
        super::lookup::session_by_path(&self.reader, &self.searcher, path)
    }

    /// The session with key `sess`.
    pub fn session_by_key(&self, sess: u64) -> Result<Option<SessionRow>, IndexError> {
        super::lookup::session_by_key(&self.reader, &self.searcher, sess)
    }

    /// The parent and forks of the session stored at `path`.
    pub fn lineage(&self, path: &str) -> Result<Option<Lineage>, IndexError> {
        super::family::lineage(&self.reader, &self.searcher, path)
    }

    /// Where the session at `path` left its parent at `parent`.
    pub fn fork_point(&self, path: &str, parent: &str) -> Result<Option<String>, IndexError> {
        super::family::fork_point(&self.reader, &self.searcher, path, parent)
    }

    /// The indexed state of the session file at `path` (what the index
    /// read of it: its identity on disk, its length).
    pub fn file_state(&self, path: &str) -> Result<Option<FileState>, IndexError> {
        self.reader.pi.file_state(&self.searcher, path)
    }

    /// What the index holds ([`super::stats::stats`]).
    pub fn stats(&self, sessions: &[SessionRow]) -> Result<Stats, IndexError> {
        super::stats::stats(&self.reader, &self.searcher, sessions)
    }

    /// The stats page's charts ([`super::stats::activity`]).
    pub fn activity(
        &self,
        sessions: &[SessionRow],
        now_ms: i64,
        days: usize,
        top: usize,
    ) -> Result<Activity, IndexError> {
        super::stats::activity(&self.reader, &self.searcher, sessions, now_ms, days, top)
    }
}
