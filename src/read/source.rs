//! The one read interface: what every front end asks of where sessions
//! are read from, the local index ([`crate::search::Local`]) or the team
//! database ([`crate::team::Team`]), and what each can give.

use std::fs::File;

use super::doc::{Preview, StoredDoc, Target, Window};
use super::found::{SessionQuery, SessionSearch};
use super::hit::{Hit, SearchRequest, SearchResult};
use super::lineage::Lineage;
use super::session::{SessionList, SessionPage, SessionRow};
use super::stats::{Activity, Place, Stats};
use crate::index::IndexError;
use crate::search::error::{LookupError, SearchError};
use crate::team::TeamError;

/// What a source can give beyond what every source gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// The session files are on this machine: a session's tool calls,
    /// its entry tree and its raw file are read from its file
    /// ([`Source::file`]), and it resumes here. The team database holds
    /// the text indexed of each message; the files stay on the hosts that
    /// pushed them.
    pub files: bool,
    /// Sessions come from several hosts, each with its `host`, and a
    /// session is named by its id and its host.
    pub hosts: bool,
    /// Ranking sessions by a query ([`Source::find_sessions`]) is quick
    /// enough for a page typed into: the local index ranks from its
    /// columns, the team database ranks every matching message (a page
    /// of the web view shows its hits instead).
    pub quick_session_search: bool,
    /// A search's total counts every match. The team database counts a
    /// pool of the newest matches, and says whether more match
    /// ([`SearchResult::more`]).
    pub exact_totals: bool,
    /// Every session's usage is held ([`Source::usage`]): the local
    /// index's, and the team database's as each host pushed it.
    pub usage: bool,
}

/// Where sessions are read from: every read a front end makes.
///
pub trait Source: Send + Sync {
    /// Where the sessions are.
    fn place(&self) -> Place;

    /// What this source can give.
    fn capabilities(&self) -> Capabilities;

    /// Why this source holds nothing to search yet, when it holds
    /// nothing (what to do about it).
    fn empty(&self) -> Option<String>;

    /// Hits for a query, in its order, a page at a time.
    fn search(&self, req: &SearchRequest) -> Result<SearchResult, ReadError>;

    /// Sessions a query finds, best first, each with its family.
    fn find_sessions(&self, req: &SessionQuery) -> Result<SessionSearch, ReadError>;

    /// Sessions newest first, a page at a time, each with its family.
    fn sessions(&self, req: &SessionList) -> Result<SessionPage, ReadError>;

    /// Every message of the session `arg` names (a path, a session id, or
    /// a unique prefix of one; of `host` when given), in file order.
    fn show(&self, arg: &str, host: Option<&str>) -> Result<Vec<StoredDoc>, ReadError>;

    /// The parent and forks of the session stored at `path` (of `host`),
    /// and, when its parent is there too, the entry where it left it.
    fn family(
        &self,
        host: Option<&str>,
        path: &str,
    ) -> Result<Option<(Lineage, Option<String>)>, ReadError>;

    /// The session with the id `id` (of `host`), with its family: the
    /// newest file when several share it. Nothing of `id` is read as a
    /// path or a prefix (what a web address may name).
    fn session(&self, id: &str, host: Option<&str>) -> Result<SessionRow, ReadError>;

    /// Every session with the id `id` (of `host`), each host's newest.
    fn sessions_with_id(&self, id: &str, host: Option<&str>) -> Result<Vec<SessionRow>, ReadError>;

    /// The session stored at `path` (of `host`).
    fn session_at(&self, host: Option<&str>, path: &str) -> Result<Option<SessionRow>, ReadError>;

    /// How many messages `session` holds in `window`'s branch, and the
    /// window's messages in file order.
    fn documents(
        &self,
        session: &SessionRow,
        window: Window,
    ) -> Result<(usize, Vec<StoredDoc>), ReadError>;

    /// How many messages of `session` (of its active branch with
    /// `active_only`) come before line `line` of its file.
    fn position(
        &self,
        session: &SessionRow,
        active_only: bool,
        line: u64,
    ) -> Result<usize, ReadError>;

    /// The hits of `req` inside `session` alone, each with its copies.
    fn hits_in(&self, session: &SessionRow, req: &SearchRequest) -> Result<Vec<Hit>, ReadError>;

    /// The `context` messages either side of `target` in `session`.
    fn preview(
        &self,
        session: &SessionRow,
        target: &Target,
        context: usize,
    ) -> Result<Preview, ReadError>;

    /// What the source holds.
    fn stats(&self) -> Result<Stats, ReadError>;

    /// Every session's usage, for [`super::usage::report`] (each entry
    /// of a family once), as much of it as a query needs
    /// ([`super::usage::UsageQuery::need`]: a source may give sums where
    /// they serve); [`ReadError::Unsupported`] where
    /// [`Capabilities::usage`] is false.
    fn usage(&self, need: super::usage::Need) -> Result<super::usage::UsageData, ReadError>;

    /// What `session` cost ([`super::usage::session_cost`]: each entry
    /// of its family once); `None` when it recorded no usage.
    /// [`ReadError::Unsupported`] where [`Capabilities::usage`] is false.
    /// By default from every session's usage ([`Source::usage`]); a
    /// source that can read the usage of the sessions it is counted with
    /// alone (the local index) reads only those, as a page of one session
    /// should.
    fn session_usage(
        &self,
        session: &SessionRow,
    ) -> Result<Option<super::usage::SessionCost>, ReadError> {
        Ok(super::usage::session_cost(
            &self.usage(super::usage::Need::Sums)?,
            session,
        ))
    }

    /// Messages per UTC day over the `days` days ending with the day of
    /// `now_ms`, sessions per directory and messages per model (at most
    /// `top` of each).
    fn activity(&self, now_ms: i64, days: usize, top: usize) -> Result<Activity, ReadError>;

    /// The file of `session` as the source read it, and its length then
    /// ([`Capabilities::files`]; else [`ReadError::Unsupported`]).
    fn file(&self, session: &SessionRow) -> Result<(File, u64), ReadError>;
}

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The local index's search.
    #[error(transparent)]
    Search(#[from] SearchError),
    /// The local index could not resolve a session.
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// The local index.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The team database.
    #[error(transparent)]
    Team(#[from] TeamError),
    /// No session is what was asked for (what to do).
    #[error("{0}")]
    NotFound(String),
    /// What was asked names several sessions: say which (how).
    #[error("{0}")]
    Ambiguous(String),
    /// The source cannot give this ([`Capabilities`]), and why.
    #[error("{0}")]
    Unsupported(String),
}

/// What kind of failure a [`ReadError`] is, for a front end's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The request is wrong (the query, a value, a session it must name).
    Bad,
    /// Nothing matches what was named.
    NotFound,
    /// The source cannot answer now (no index, no database).
    Unavailable,
}

impl ReadError {
    /// What kind of failure this is.
    pub fn kind(&self) -> Kind {
        match self {
            ReadError::Search(SearchError::Index(_)) | ReadError::Index(_) => Kind::Unavailable,
            ReadError::Search(_) => Kind::Bad,
            ReadError::Lookup(LookupError::Index(_)) => Kind::Unavailable,
            ReadError::Lookup(LookupError::NotFound(_)) => Kind::NotFound,
            ReadError::Lookup(_) => Kind::Bad,
            ReadError::Team(
                TeamError::Query(_) | TeamError::TooLong(_) | TeamError::TooDeep(_),
            ) => Kind::Bad,
            ReadError::Team(TeamError::Lookup(_)) => Kind::NotFound,
            ReadError::Team(_) => Kind::Unavailable,
            ReadError::NotFound(_) | ReadError::Unsupported(_) => Kind::NotFound,
            ReadError::Ambiguous(_) => Kind::Bad,
        }
    }
}
