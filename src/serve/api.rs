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
//!
//! With `--db` the objects are those of the command line's `--db`: each
//! with its `host`; answers carry `database` (`user@host:port/db`, never
//! the password) where the local ones carry `index`, and a search's
//! `more` says whether more match than the database's pool holds (`more
//! than N`). A session is named by its id and its host (`?host=`): ids
//! repeat across machines, so an id several hosts hold asks which.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::live::Reading;
use crate::read::{
    Activity, SearchRequest, SearchResult, SessionList, SessionQuery, SessionSearch, Stats, Window,
};
use crate::search::query::{Filters, Now};
use crate::search::Sort;

use super::app::{App, Failure, MAX_PAGE};
use super::extract::{Args, Id};

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

/// `search`'s hits for `params` (the query, its order and page).
pub fn search_hits(reading: &Reading, params: &Params) -> Result<SearchResult, Failure> {
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
    Ok(reading.source().search(&req)?)
}

/// The sessions `sessions QUERY` finds for a non-empty query, best first;
/// `limit` of them after `offset`.
pub fn search_sessions(
    reading: &Reading,
    query: &str,
    offset: usize,
    limit: usize,
) -> Result<SessionSearch, Failure> {
    let req = SessionQuery {
        query: query.to_owned(),
        filters: Filters::default(),
        dir: None,
        since: None,
        limit,
        offset,
        snippet_chars: 160,
        now: Now::system(),
    };
    Ok(reading.source().find_sessions(&req)?)
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
    Database(String),
}

impl<T: Serialize> IntoResponse for Answer<'_, T> {
    fn into_response(self) -> Response {
        axum::Json(self).into_response()
    }
}

/// An answer from `reading`, with where it comes from.
fn json_of<T: Serialize>(
    reading: &Reading,
    total: Option<usize>,
    more: Option<bool>,
    body: T,
    warnings: Option<Value>,
) -> Response {
    let from = match reading {
        Reading::Index(snap) => Origin::Index(&snap.refresh),
        Reading::Database(db) => Origin::Database(match db.place() {
            crate::read::Place::Database(target) | crate::read::Place::Index(target) => target,
        }),
    };
    Answer {
        total,
        more,
        body,
        warnings,
        from,
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
/// index}` (with `--db`: `{total, more, hits, warnings, database}`), each
/// hit a line of `search --json`.
pub async fn search(State(app): State<Arc<App>>, Args(p): Args<Params>) -> Response {
    answer(
        app.blocking(move |app| {
            let reading = app.reading()?;
            let r = search_hits(&reading, &p)?;
            let exact = reading.source().capabilities().exact_totals;
            Ok(json_of(
                &reading,
                Some(r.total),
                (!exact).then_some(r.more),
                Hits { hits: &r.hits },
                Some(warnings(&r.warnings)),
            ))
        })
        .await,
    )
}

/// `GET /api/sessions?q=&host=&limit=&offset=`: without a query every
/// session (of `host`, with `--db`), newest first (lines of `sessions
/// --json`); with one, the sessions it finds, best first (lines of
/// `sessions QUERY --json`; with `--db`, `more` says whether more were
/// found).
pub async fn sessions(State(app): State<Arc<App>>, Args(p): Args<Params>) -> Response {
    answer(
        app.blocking(move |app| {
            let reading = app.reading()?;
            let source = reading.source();
            let limit = p.limit(50)?;
            let offset = p.offset.unwrap_or(0);
            let q = p.query()?;
            if q.is_empty() {
                let page = source.sessions(&SessionList {
                    host: p.host.clone(),
                    dir: None,
                    since: None,
                    offset,
                    limit,
                })?;
                return Ok(json_of(
                    &reading,
                    Some(page.total),
                    None,
                    Sessions {
                        sessions: &page.sessions,
                    },
                    Some(json!([])),
                ));
            }
            let found = search_sessions(&reading, q, offset, limit)?;
            let exact = source.capabilities().exact_totals;
            Ok(json_of(
                &reading,
                Some(found.total),
                (!exact).then_some(offset + found.hits.len() < found.total),
                Sessions {
                    sessions: &found.hits,
                },
                Some(warnings(&found.warnings)),
            ))
        })
        .await,
    )
}

/// `GET /api/session/ID?host=&branch=active|all&limit=&offset=`: the
/// session (a line of `sessions --json`) and its indexed documents in
/// file order (lines of `show --format json`), `limit` (at most
/// [`MAX_PAGE`]) after `offset`.
pub async fn session(State(app): State<Arc<App>>, Id(id): Id, Args(p): Args<Params>) -> Response {
    answer(
        app.blocking(move |app| {
            let reading = app.reading()?;
            let source = reading.source();
            let row = source.session(&id, p.host.as_deref())?;
            let window = Window {
                active_only: active_only(p.branch.as_deref())?,
                offset: p.offset.unwrap_or(0),
                limit: p.limit(MAX_PAGE)?,
            };
            let (total, page) = source.documents(&row, window)?;
            Ok(json_of(
                &reading,
                Some(total),
                None,
                Documents {
                    session: &row,
                    documents: &page,
                },
                None,
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
            let reading = app.reading()?;
            let (stats, activity) = numbers(&reading)?;
            Ok(json_of(
                &reading,
                None,
                None,
                StatsBody {
                    stats: &stats,
                    activity: &activity,
                },
                None,
            ))
        })
        .await,
    )
}

/// What the stats page and `/api/stats` show.
pub fn numbers(reading: &Reading) -> Result<(Stats, Activity), Failure> {
    let source = reading.source();
    let stats = source.stats()?;
    let activity = source.activity(now_ms(), 90, 10)?;
    Ok((stats, activity))
}

/// `GET /api/status`: `{generation, index}`: the generation changes when
/// the index has a new commit (a page loaded before it shows older
/// results), `index` says what the last refresh did. With `--db`,
/// `{generation, database}`: the database is read at each request, so a
/// page never holds older results than a reload would show, and the
/// generation does not change.
pub async fn status(State(app): State<Arc<App>>) -> Response {
    answer(
        app.blocking(move |app| {
            Ok(match (app.served.index(), app.served.database()) {
                (Some(state), _) => {
                    // Reloading picks up other processes' commits.
                    let _ = state.current();
                    axum::Json(json!({
                        "generation": state.generation(),
                        "index": state.last_refresh(),
                    }))
                    .into_response()
                }
                (None, db) => {
                    axum::Json(json!({"generation": 0, "database": db.unwrap_or_default()}))
                        .into_response()
                }
            })
        })
        .await,
    )
}

#[derive(Serialize)]
struct Hits<'a> {
    hits: &'a [crate::read::Hit],
}

#[derive(Serialize)]
struct Sessions<'a, T: Serialize> {
    sessions: &'a [T],
}

#[derive(Serialize)]
struct Documents<'a> {
    session: &'a crate::read::SessionRow,
    documents: &'a [crate::read::StoredDoc],
}

#[derive(Serialize)]
struct StatsBody<'a> {
    stats: &'a Stats,
    activity: &'a Activity,
}

/// Now, in epoch milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
