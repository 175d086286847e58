//! The JSON API under `/api/`, which the pages' scripts use and scripts
//! may too. Its objects are the command line's `--json` ones, from the
//! same library types: a hit is a line of `search --json`, a session a
//! line of `sessions --json` (`sessions QUERY --json` with a query), a
//! document a line of `show --format json`, `stats` the object of
//! `stats --json`. Each answer wraps them with what a page needs: the
//! total, the query's warnings, and `index`, what the last refresh did.
//!
//! Errors are JSON too, `{"error": "..."}`, with 400 (a query that cannot
//! be run, a limit over [`MAX_PAGE`]), 404 (no such session) or 503 (no
//! index yet).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::live::Snapshot;
use crate::search::query::{Filters, Now};
use crate::search::{
    SearchError, SearchRequest, SearchResult, SessionQuery, SessionRow, SessionSearch, Sort,
};

use super::extract::{Args, Id};
use super::{App, MAX_PAGE};

/// Query-string parameters of the API and the pages.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Params {
    /// The query, in the language of `pi-index search`.
    pub q: Option<String>,
    /// `relevance` (default), `newest` or `oldest`.
    pub sort: Option<String>,
    /// Results per page (at most [`MAX_PAGE`]).
    pub limit: Option<usize>,
    /// Results to skip.
    pub offset: Option<usize>,
    /// `/api/session`: `active` (default) or `all`.
    pub branch: Option<String>,
    /// Pages: only the results, for the page's script to put in place.
    pub fragment: Option<String>,
    /// With `--db`: the host whose session it is, or whose sessions to
    /// list.
    pub host: Option<String>,
}

/// Why a request cannot be answered.
#[derive(Debug)]
pub enum Failure {
    /// The request is wrong (400).
    Bad(String),
    /// No such session (404).
    NotFound(String),
    /// No index to answer from (503).
    Unavailable(String),
}

impl Failure {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            Failure::Bad(_) => StatusCode::BAD_REQUEST,
            Failure::NotFound(_) => StatusCode::NOT_FOUND,
            Failure::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// What to tell the person.
    pub fn message(&self) -> &str {
        match self {
            Failure::Bad(m) | Failure::NotFound(m) | Failure::Unavailable(m) => m,
        }
    }
}

impl From<SearchError> for Failure {
    fn from(e: SearchError) -> Failure {
        match e {
            SearchError::Query(q) => Failure::Bad(q.to_string()),
            SearchError::Index(i) => Failure::Unavailable(i.to_string()),
            SearchError::TooLong(t) => Failure::Bad(t.to_string()),
            SearchError::TooDeep(t) => Failure::Bad(t.to_string()),
        }
    }
}

impl From<crate::index::IndexError> for Failure {
    fn from(e: crate::index::IndexError) -> Failure {
        Failure::Unavailable(e.to_string())
    }
}

impl Params {
    /// The query, trimmed (empty: none), refused past the limits every
    /// front end shares ([`crate::search::query::limits`]).
    pub fn query(&self) -> Result<&str, Failure> {
        let q = self.q.as_deref().unwrap_or("").trim();
        crate::search::query::limits::check(q).map_err(|e| Failure::Bad(e.to_string()))?;
        Ok(q)
    }

    /// The order.
    pub fn sort(&self) -> Result<Sort, Failure> {
        match self.sort.as_deref().unwrap_or("relevance") {
            "" | "relevance" => Ok(Sort::Relevance),
            "newest" => Ok(Sort::Newest),
            "oldest" => Ok(Sort::Oldest),
            other => Err(Failure::Bad(format!(
                "sort={other:?} is not an order: use relevance, newest or oldest"
            ))),
        }
    }

    /// The page size, `default` when not given.
    pub fn limit(&self, default: usize) -> Result<usize, Failure> {
        match self.limit {
            None => Ok(default),
            Some(n) if (1..=MAX_PAGE).contains(&n) => Ok(n),
            Some(n) => Err(Failure::Bad(format!(
                "limit={n}: give 1 to {MAX_PAGE}, and offset= for the next page"
            ))),
        }
    }
}

/// Whether `branch=` asks for the active branch alone (the default)
/// rather than `all`.
pub fn active_only(branch: Option<&str>) -> Result<bool, Failure> {
    match branch.unwrap_or("active") {
        "active" => Ok(true),
        "all" => Ok(false),
        other => Err(Failure::Bad(format!("branch={other:?}: use active or all"))),
    }
}

/// A snapshot to answer from.
pub fn snapshot(app: &App) -> Result<Snapshot, Failure> {
    local(app)?.current().map_err(Failure::Unavailable)
}

/// The local index (the routes that read it are the local source's).
fn local(app: &App) -> Result<&crate::live::State, Failure> {
    match &*app.source {
        super::Source::Local(state) => Ok(state),
        super::Source::Team(_) => Err(Failure::Unavailable(
            "this server reads the team database (--db), not a local index".into(),
        )),
    }
}

/// `search`'s hits for `params` (the query, its order and page).
pub fn search_hits(snap: &Snapshot, params: &Params) -> Result<SearchResult, Failure> {
    let query = params.query()?;
    let req = SearchRequest {
        query: if query.is_empty() {
            "*".into()
        } else {
            query.to_owned()
        },
        filters: Filters::default(),
        sort: params.sort()?,
        limit: params.limit(20)?,
        offset: params.offset.unwrap_or(0),
        snippet_chars: 160,
        now: Now::system(),
        copies: false,
    };
    Ok(snap.local.search(&req)?)
}

/// The sessions `sessions QUERY` finds for a non-empty query, best first;
/// `limit` of them after `offset`.
pub fn search_sessions(
    snap: &Snapshot,
    query: &str,
    offset: usize,
    limit: usize,
) -> Result<SessionSearch, Failure> {
    let req = SessionQuery {
        query: query.to_owned(),
        filters: Filters::default(),
        limit,
        offset,
        snippet_chars: 160,
        now: Now::system(),
    };
    Ok(snap.local.search_sessions(&req)?)
}

/// The indexed session with this id (the newest file, when copies share
/// it); nothing of `id` is read as a path.
pub fn session_row(snap: &Snapshot, id: &str) -> Result<SessionRow, Failure> {
    let mut row = snap.local.sessions_with_id(id)?
        .into_iter()
        .next()
        .ok_or_else(|| {
            Failure::NotFound(format!(
                "no indexed session has the id {id:?}: search for it from the search page (a new session appears after the next refresh)"
            ))
        })?;
    // The object of `sessions --json`: with its parent and forks.
    let families = snap.local.families()?;
    snap.local
        .annotate(&families, &mut row, &Default::default())?;
    Ok(row)
}

/// Query warnings as JSON.
pub fn warnings(w: &[crate::search::query::Warning]) -> Value {
    w.iter()
        .map(|w| json!({"position": w.position, "message": w.message}))
        .collect()
}

/// An answer: the library's objects serialized as they are (through
/// `serde_json::Value` an `f32` score would print with other digits than
/// the command line's), with what the page needs around them.
#[derive(Serialize)]
pub(super) struct Answer<'a, T: Serialize> {
    /// How many there are in all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    /// Whether more match than `total` counts (the team database's pool).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub more: Option<bool>,
    /// The objects.
    #[serde(flatten)]
    pub body: T,
    /// The query's warnings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Value>,
    /// Where the answer comes from.
    #[serde(flatten)]
    pub from: Origin<'a>,
}

/// Where an answer comes from: `index` (what the last refresh did) or
/// `database` (`user@host:port/db`).
#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Origin<'a> {
    /// The local index.
    Index(&'a crate::live::Refresh),
    /// The team database.
    Database(&'a str),
}

impl<T: Serialize> IntoResponse for Answer<'_, T> {
    fn into_response(self) -> Response {
        axum::Json(self).into_response()
    }
}

fn json_of<T: Serialize>(
    total: Option<usize>,
    body: T,
    warnings: Option<Value>,
    snap: &Snapshot,
) -> Response {
    Answer {
        total,
        more: None,
        body,
        warnings,
        from: Origin::Index(&snap.refresh),
    }
    .into_response()
}

pub(super) fn answer(result: Result<Result<Response, Failure>, String>) -> Response {
    match result {
        Ok(Ok(r)) => r,
        Ok(Err(f)) => (f.status(), axum::Json(json!({"error": f.message()}))).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(json!({"error": e})),
        )
            .into_response(),
    }
}

/// `GET /api/search?q=&sort=&limit=&offset=`: `{total, hits, warnings,
/// index}`, each hit a line of `search --json`.
pub async fn search(State(app): State<Arc<App>>, Args(p): Args<Params>) -> Response {
    answer(
        app.blocking(move |app| {
            let snap = snapshot(app)?;
            let r = search_hits(&snap, &p)?;
            Ok(json_of(
                Some(r.total),
                Hits { hits: &r.hits },
                Some(warnings(&r.warnings)),
                &snap,
            ))
        })
        .await,
    )
}

/// `GET /api/sessions?q=&limit=&offset=`: without a query every session,
/// newest first (lines of `sessions --json`); with one, the sessions it
/// finds, best first (lines of `sessions QUERY --json`).
pub async fn sessions(State(app): State<Arc<App>>, Args(p): Args<Params>) -> Response {
    answer(
        app.blocking(move |app| {
            let snap = snapshot(app)?;
            let limit = p.limit(50)?;
            let offset = p.offset.unwrap_or(0);
            let q = p.query()?;
            if q.is_empty() {
                let all = snap.local.sessions()?;
                let total = all.len();
                let refs = crate::search::family::refs_of(&all);
                let mut page: Vec<_> = all.into_iter().skip(offset).take(limit).collect();
                // The objects of `sessions --json`: with parent and forks.
                let families = snap.local.families()?;
                for row in &mut page {
                    snap.local.annotate(&families, row, &refs)?;
                }
                return Ok(json_of(
                    Some(total),
                    Sessions { sessions: &page },
                    Some(json!([])),
                    &snap,
                ));
            }
            let mut found = search_sessions(&snap, q, offset, limit)?;
            let families = snap.local.families()?;
            for h in &mut found.hits {
                snap.local
                    .annotate(&families, &mut h.session, &Default::default())?;
            }
            Ok(json_of(
                Some(found.total),
                Sessions {
                    sessions: &found.hits,
                },
                Some(warnings(&found.warnings)),
                &snap,
            ))
        })
        .await,
    )
}

/// `GET /api/session/ID?branch=active|all&limit=&offset=`: the session
/// (a line of `sessions --json`) and its indexed documents in file order
/// (lines of `show --format json`), `limit` (at most [`MAX_PAGE`]) after
/// `offset`.
pub async fn session(State(app): State<Arc<App>>, Id(id): Id, Args(p): Args<Params>) -> Response {
    answer(
        app.blocking(move |app| {
            let snap = snapshot(app)?;
            let row = session_row(&snap, &id)?;
            let active = active_only(p.branch.as_deref())?;
            let key = crate::search::SessionKey::Path(row.path.clone());
            // Only the page is read from the store: bounded memory for a
            // session of any size.
            let (total, page) = snap.local.session_documents_page(
                &key,
                active,
                p.offset.unwrap_or(0),
                p.limit(MAX_PAGE)?,
            )?;
            Ok(json_of(
                Some(total),
                Documents {
                    session: &row,
                    documents: &page,
                },
                None,
                &snap,
            ))
        })
        .await,
    )
}

/// `GET /api/stats`: `stats --json`'s object and the stats page's
/// numbers (`activity`: messages per UTC day over 90 days, sessions per
/// directory, messages per model).
pub async fn stats(State(app): State<Arc<App>>) -> Response {
    answer(
        app.blocking(move |app| {
            let snap = snapshot(app)?;
            let sessions = snap.local.sessions()?;
            let stats = snap.local.stats(&sessions)?;
            let activity = snap.local.activity(&sessions, now_ms(), 90, 10)?;
            Ok(json_of(
                None,
                StatsBody {
                    stats: &stats,
                    activity: &activity,
                },
                None,
                &snap,
            ))
        })
        .await,
    )
}

/// `GET /api/status`: `{generation, index}`: the generation changes when
/// the index has a new commit (a page loaded before it shows older
/// results), `index` says what the last refresh did.
pub async fn status(State(app): State<Arc<App>>) -> Response {
    answer(
        app.blocking(move |app| {
            let state = local(app)?;
            // Reloading picks up other processes' commits.
            let _ = state.current();
            Ok(axum::Json(json!({
                "generation": state.generation(),
                "index": state.last_refresh(),
            }))
            .into_response())
        })
        .await,
    )
}

#[derive(Serialize)]
struct Hits<'a> {
    hits: &'a [crate::search::Hit],
}

#[derive(Serialize)]
struct Sessions<'a, T: Serialize> {
    sessions: &'a [T],
}

#[derive(Serialize)]
struct Documents<'a> {
    session: &'a SessionRow,
    documents: &'a [crate::search::StoredDoc],
}

#[derive(Serialize)]
struct StatsBody<'a> {
    stats: &'a crate::search::stats::Stats,
    activity: &'a crate::search::stats::Activity,
}

/// Now, in epoch milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
