//! The team database as a source of the read interface
//! ([`crate::read::Source`]): every pushed host's sessions, each with
//! its host, read through a small pool of connections.
//!
//! A read takes a connection of the pool (a new one when none is idle;
//! at most [`MAX_IDLE`] are kept). A connection the server closed (a
//! restart, an idle timeout) is dropped and the read tried once more on
//! a new one: it only reads. A long-running front end's connections
//! ([`Team::serving`]) are read-only and each statement is bounded by
//! the server's own `statement_timeout`.

use std::fs::File;
use std::sync::Mutex;
use std::time::Duration;

use super::{browse, schema, search, Db, TeamError};
use crate::read::{
    Activity, Capabilities, Hit, Lineage, Place, Preview, ReadError, SearchRequest, SearchResult,
    SessionList, SessionPage, SessionQuery, SessionRow, SessionSearch, Source, Stats, StoredDoc,
    Target, Window,
};
use crate::search::query::Key;

/// Idle connections kept, at most.
pub const MAX_IDLE: usize = 16;

/// The team database and its idle connections.
pub struct Team {
    url: String,
    target: String,
    /// What each new connection is told first (a read-only transaction
    /// and the statement timeout of a long-running front end).
    setup: Option<String>,
    idle: Mutex<Vec<Db>>,
}

impl Team {
    /// Connect to the database at `url`, as a command that reads it once
    /// does (each read checks the tables' version).
    pub fn connect(url: &str) -> Result<Team, TeamError> {
        let db = Db::connect(url)?;
        Ok(Team {
            url: url.to_owned(),
            target: db.target.clone(),
            setup: None,
            idle: Mutex::new(vec![db]),
        })
    }

    /// Connect to the database at `url` and check that it holds
    /// pi-index's tables, of this version, as a long-running front end
    /// does before it listens: its connections read only, each statement
    /// within `timeout`.
    pub fn serving(url: &str, timeout: Duration) -> Result<Team, TeamError> {
        let setup = format!(
            "SET statement_timeout = {}; SET default_transaction_read_only = on",
            timeout.as_millis()
        );
        let db = open(url, Some(&setup))?;
        db.run(schema::check(&db.client, &db.target))?;
        Ok(Team {
            url: url.to_owned(),
            target: db.target.clone(),
            setup: Some(setup),
            idle: Mutex::new(vec![db]),
        })
    }

    /// The database, for people: `user@host:port/db`.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Run `work` on a connection of the pool.
    pub fn with<T>(&self, work: impl Fn(&Db) -> Result<T, TeamError>) -> Result<T, TeamError> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let db = match idle {
            Some(db) => db,
            None => open(&self.url, self.setup.as_deref())?,
        };
        let (db, out) = match work(&db) {
            // The server closed it (a restart, an idle timeout): once more
            // on a new connection.
            Err(_) if db.client.is_closed() => {
                drop(db);
                let db = open(&self.url, self.setup.as_deref())?;
                let out = work(&db);
                (db, out)
            }
            out => (db, out),
        };
        if !db.client.is_closed() {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            if idle.len() < MAX_IDLE {
                idle.push(db);
            }
        }
        out
    }
}

/// A new connection to `url`, told `setup` first.
fn open(url: &str, setup: Option<&str>) -> Result<Db, TeamError> {
    let db = Db::connect(url)?;
    if let Some(setup) = setup {
        db.run(db.client.batch_execute(setup))
            .map_err(|e| db.error("setting the statement timeout", &e))?;
    }
    Ok(db)
}

impl Source for Team {
    fn place(&self) -> Place {
        Place::Database(self.target.clone())
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            files: false,
            hosts: true,
            quick_session_search: false,
            exact_totals: false,
            usage: true,
        }
    }

    fn empty(&self) -> Option<String> {
        None
    }

    fn search(&self, req: &SearchRequest) -> Result<SearchResult, ReadError> {
        Ok(self.with(|db| search::search(db, req))?)
    }

    fn find_sessions(&self, req: &SessionQuery) -> Result<SessionSearch, ReadError> {
        Ok(self.with(|db| search::find_sessions(db, req))?)
    }

    fn sessions(&self, req: &SessionList) -> Result<SessionPage, ReadError> {
        Ok(self.with(|db| search::sessions(db, req))?)
    }

    fn show(&self, arg: &str, host: Option<&str>) -> Result<Vec<StoredDoc>, ReadError> {
        Ok(self.with(|db| search::show(db, arg, host))?)
    }

    fn family(
        &self,
        host: Option<&str>,
        path: &str,
    ) -> Result<Option<(Lineage, Option<String>)>, ReadError> {
        let host = host.unwrap_or_default();
        Ok(self.with(|db| search::lineage(db, host, path))?)
    }

    fn session(&self, id: &str, host: Option<&str>) -> Result<SessionRow, ReadError> {
        let mut found = Source::sessions_with_id(self, id, host)?;
        match found.len() {
            0 => Err(ReadError::NotFound(format!(
                "no pushed session has the id {id:?}{}: search for it from the search page",
                host.map_or(String::new(), |h| format!(" on the host {h:?}"))
            ))),
            1 => Ok(found.remove(0)),
            n => Err(ReadError::Ambiguous(format!(
                "{n} hosts pushed a session with the id {id:?} ({}): choose one with host=NAME",
                found
                    .iter()
                    .filter_map(|s| s.host.as_deref())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    fn sessions_with_id(&self, id: &str, host: Option<&str>) -> Result<Vec<SessionRow>, ReadError> {
        Ok(self.with(|db| browse::sessions_with_id(db, id, host))?)
    }

    fn session_at(&self, host: Option<&str>, path: &str) -> Result<Option<SessionRow>, ReadError> {
        let host = host.unwrap_or_default();
        Ok(self.with(|db| search::session_by_path(db, host, path))?)
    }

    fn documents(
        &self,
        session: &SessionRow,
        window: Window,
    ) -> Result<(usize, Vec<StoredDoc>), ReadError> {
        Ok(self.with(|db| browse::messages(db, session, window))?)
    }

    fn position(
        &self,
        session: &SessionRow,
        active_only: bool,
        line: u64,
    ) -> Result<usize, ReadError> {
        Ok(self.with(|db| browse::messages_before(db, session, active_only, line))?)
    }

    fn hits_in(&self, session: &SessionRow, req: &SearchRequest) -> Result<Vec<Hit>, ReadError> {
        if session.session_id.trim().is_empty() {
            return Ok(Vec::new());
        }
        let mut req = req.clone();
        req.filters
            .add(Key::Session, &session.session_id, &req.now)
            .map_err(|e| TeamError::Query(e.into()))?;
        // This session's own hits, each of them (ids repeat across hosts,
        // and a copy of a file keeps its id).
        req.copies = true;
        let mut hits = Source::search(self, &req)?.hits;
        hits.retain(|h| h.doc.host == session.host && h.doc.path == session.path);
        Ok(hits)
    }

    fn preview(
        &self,
        session: &SessionRow,
        target: &Target,
        context: usize,
    ) -> Result<Preview, ReadError> {
        Ok(self.with(|db| browse::preview(db, session, target, context))?)
    }

    fn stats(&self) -> Result<Stats, ReadError> {
        Ok(self.with(browse::stats)?)
    }

    fn activity(&self, now_ms: i64, days: usize, top: usize) -> Result<Activity, ReadError> {
        Ok(self.with(|db| browse::activity(db, now_ms, days, top))?)
    }

    /// Rows, whatever the need: the database holds no sums.
    fn usage(
        &self,
        _need: crate::read::usage::Need,
    ) -> Result<crate::read::usage::UsageData, ReadError> {
        Ok(self.with(super::usage::usage)?)
    }

    fn file(&self, _session: &SessionRow) -> Result<(File, u64), ReadError> {
        Err(ReadError::Unsupported(
            "the team database holds the sessions' indexed text, not their files: the raw file is on the host that pushed it (the session page names it)".into(),
        ))
    }
}
