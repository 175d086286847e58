//! The local index as of one commit: the read side's handle and a
//! searcher over one committed state of it, with everything the front
//! ends ask of it in one place.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use tantivy::{DocAddress, Searcher};

use super::error::{LookupError, SearchError};
use super::query::Key;
use super::reader::Reader;
use crate::index::family::Families;
use crate::index::state::FileState;
use crate::index::IndexError;
use crate::read::{
    Activity, Capabilities, Hit, Lineage, Place, Preview, ReadError, SearchRequest, SearchResult,
    SessionKey, SessionList, SessionPage, SessionQuery, SessionRef, SessionRow, SessionSearch,
    Source, Stats, StoredDoc, Target, Window,
};

/// See the module documentation.
#[derive(Clone)]
pub struct Local {
    /// The handle.
    pub reader: Reader,
    /// A searcher over one committed state.
    pub searcher: Searcher,
    /// Every session, newest first, once read (they change only with
    /// the commit: a picker lists them at every empty query).
    listing: Arc<OnceLock<Vec<SessionRow>>>,
}

impl Local {
    /// The index `reader` as `searcher` shows it.
    pub fn new(reader: Reader, searcher: Searcher) -> Local {
        Local {
            reader,
            searcher,
            listing: Arc::default(),
        }
    }

    /// The index at `dir` as of its last commit.
    pub fn open(dir: &Path) -> Result<Local, IndexError> {
        let reader = Reader::open(dir)?;
        let searcher = reader.searcher()?;
        Ok(Local::new(reader, searcher))
    }

    /// Every session, newest first, read once.
    pub fn listing(&self) -> Result<&[SessionRow], IndexError> {
        if let Some(l) = self.listing.get() {
            return Ok(l);
        }
        let read = self.sessions()?;
        Ok(self.listing.get_or_init(|| read))
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

    /// Every session's usage, as much as `need` asks
    /// ([`super::usage::usage_data`]).
    pub fn usage_data(
        &self,
        need: crate::read::usage::Need,
    ) -> Result<crate::read::usage::UsageData, IndexError> {
        super::usage::usage_data(&self.reader, &self.searcher, need)
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

/// How [`Local`] reads what its searches did not find.
fn missing(what: String) -> ReadError {
    ReadError::NotFound(what)
}

impl Source for Local {
    fn place(&self) -> Place {
        Place::Index(self.reader.pi.dir.display().to_string())
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            files: true,
            hosts: false,
            quick_session_search: true,
            exact_totals: true,
            usage: true,
        }
    }

    fn empty(&self) -> Option<String> {
        (self.searcher.num_docs() == 0).then(|| {
            format!(
                "the index at {} is empty: run `pi-index build` (with the directory of your sessions if Pi keeps them elsewhere)",
                self.reader.pi.dir.display()
            )
        })
    }

    fn search(&self, req: &SearchRequest) -> Result<SearchResult, ReadError> {
        Ok(Local::search(self, req)?)
    }

    fn find_sessions(&self, req: &SessionQuery) -> Result<SessionSearch, ReadError> {
        let mut found = self.search_sessions(req)?;
        let families = self.families()?;
        for h in &mut found.hits {
            self.annotate(&families, &mut h.session, &HashMap::new())?;
        }
        Ok(found)
    }

    fn sessions(&self, req: &SessionList) -> Result<SessionPage, ReadError> {
        let all = self.listing()?;
        let kept: Vec<&SessionRow> = all
            .iter()
            .filter(|s| s.selected(req.dir.as_deref(), req.since))
            .collect();
        let total = kept.len();
        let mut page: Vec<SessionRow> = kept
            .into_iter()
            .skip(req.offset)
            .take(req.limit)
            .cloned()
            .collect();
        // The objects of `sessions --json`: with parent and forks, the
        // relatives named from the listing.
        let families = self.families()?;
        let known = super::family::refs_of(all);
        for row in &mut page {
            self.annotate(&families, row, &known)?;
        }
        Ok(SessionPage {
            sessions: page,
            total,
        })
    }

    fn show(&self, arg: &str, _host: Option<&str>) -> Result<Vec<StoredDoc>, ReadError> {
        let key = self.resolve_session(arg)?;
        Ok(self.session_documents(&key)?)
    }

    fn family(
        &self,
        _host: Option<&str>,
        path: &str,
    ) -> Result<Option<(Lineage, Option<String>)>, ReadError> {
        let Some(lineage) = self.lineage(path)? else {
            return Ok(None);
        };
        let at = match lineage.parent.as_ref().filter(|p| p.session.is_some()) {
            Some(p) => self.fork_point(path, &p.path)?,
            None => None,
        };
        Ok(Some((lineage, at)))
    }

    fn session(&self, id: &str, _host: Option<&str>) -> Result<SessionRow, ReadError> {
        let mut row = self.sessions_with_id(id)?.into_iter().next().ok_or_else(|| {
            missing(format!(
                "no indexed session has the id {id:?}: search for it from the search page (a new session appears after the next refresh)"
            ))
        })?;
        // The object of `sessions --json`: with its parent and forks.
        let families = self.families()?;
        self.annotate(&families, &mut row, &HashMap::new())?;
        Ok(row)
    }

    fn sessions_with_id(
        &self,
        id: &str,
        _host: Option<&str>,
    ) -> Result<Vec<SessionRow>, ReadError> {
        Ok(Local::sessions_with_id(self, id)?)
    }

    fn session_at(&self, _host: Option<&str>, path: &str) -> Result<Option<SessionRow>, ReadError> {
        Ok(self.session_by_path(path)?)
    }

    fn documents(
        &self,
        session: &SessionRow,
        window: Window,
    ) -> Result<(usize, Vec<StoredDoc>), ReadError> {
        // Only the page is read from the store: bounded memory for a
        // session of any size.
        Ok(self.session_documents_page(
            &SessionKey::Path(session.path.clone()),
            window.active_only,
            window.offset,
            window.limit,
        )?)
    }

    fn position(
        &self,
        session: &SessionRow,
        active_only: bool,
        line: u64,
    ) -> Result<usize, ReadError> {
        Ok(self
            .session_documents(&SessionKey::Path(session.path.clone()))?
            .iter()
            .filter(|d| (d.active || !active_only) && d.line < line)
            .count())
    }

    fn hits_in(&self, session: &SessionRow, req: &SearchRequest) -> Result<Vec<Hit>, ReadError> {
        if session.session_id.trim().is_empty() {
            return Ok(Vec::new());
        }
        let mut req = req.clone();
        req.filters
            .add(Key::Session, &session.session_id, &req.now)
            .map_err(SearchError::from)?;
        // This session's own hits, each of them (a copy of a session file
        // has the same id).
        req.copies = true;
        let mut hits = Local::search(self, &req)?.hits;
        hits.retain(|h| h.doc.path == session.path);
        self.fill_copies(&mut hits.iter_mut().collect::<Vec<_>>())?;
        Ok(hits)
    }

    fn preview(
        &self,
        session: &SessionRow,
        target: &Target,
        context: usize,
    ) -> Result<Preview, ReadError> {
        Ok(super::preview::preview(
            &self.reader,
            &self.searcher,
            session.key,
            target,
            context,
        )?)
    }

    fn stats(&self) -> Result<Stats, ReadError> {
        Ok(Local::stats(self, self.listing()?)?)
    }

    fn activity(&self, now_ms: i64, days: usize, top: usize) -> Result<Activity, ReadError> {
        Ok(Local::activity(self, self.listing()?, now_ms, days, top)?)
    }

    fn usage(
        &self,
        need: crate::read::usage::Need,
    ) -> Result<crate::read::usage::UsageData, ReadError> {
        Ok(self.usage_data(need)?)
    }

    fn session_usage(
        &self,
        session: &SessionRow,
    ) -> Result<Option<crate::read::usage::SessionCost>, ReadError> {
        // The records of its family and of its id's files alone: what
        // its row of a report counts with.
        let data = super::usage::session_usage_data(
            &self.reader,
            &self.searcher,
            session.key,
            &session.session_id,
        )?;
        Ok(crate::read::usage::session_cost(&data, session))
    }

    fn file(&self, session: &SessionRow) -> Result<(File, u64), ReadError> {
        open_indexed(self, &session.path)
    }
}

/// The session file the index read at `path`, opened for reading, and
/// its length when indexed: never through a link (the last part of the
/// path), and only while it is the regular file the index read (the same
/// device and inode). A file swapped for a link to another file, a
/// device or a pipe since is refused: what the server reads is what the
/// index was given.
fn open_indexed(local: &Local, path: &str) -> Result<(File, u64), ReadError> {
    let gone = |why: String| {
        ReadError::NotFound(format!(
            "the session's file {path} cannot be read ({why}): it may have moved; the next refresh of the index finds it"
        ))
    };
    let state = local
        .file_state(path)?
        .ok_or_else(|| gone("the index holds no record of it".into()))?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // No link followed; a pipe is opened without waiting for a writer.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| gone(e.to_string()))?;
    let meta = file.metadata().map_err(|e| gone(e.to_string()))?;
    if !meta.is_file() {
        return Err(gone("it is no longer a regular file".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if (meta.dev(), meta.ino()) != (state.dev, state.ino) {
            return Err(gone(
                "it is another file than the one indexed (it was replaced)".into(),
            ));
        }
    }
    Ok((file, state.size))
}
