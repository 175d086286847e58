//! `serve --db URL`: the web view over the team's PostgreSQL database
//! ([`crate::team`]): every pushed host's sessions, searched with the same
//! query language and drawn by the same pages, each session and hit with
//! its host.
//!
//! The API's objects are those of the command line with `--db`: a hit is
//! a line of `search --db URL --json`, a session a line of `sessions --db
//! URL --json` (`sessions --db URL QUERY --json` with a query), a
//! document a line of `show --db URL --format json`. Where the local
//! answers carry `index` (what the last refresh did), these carry
//! `database` (`user@host:port/db`, never the password).
//!
//! What differs from the local view, because the database holds what was
//! indexed of each message (its text), not the session files:
//!
//! - a session page shows the session's messages in file order (its
//!   active branch, or every branch), not its tree, tool calls and their
//!   output; the raw file stays on the host that pushed it;
//! - a session is named by its id and its host (`?host=`): ids repeat
//!   across machines, so an id that several hosts hold asks which;
//! - the total of a search counts the database's pool when more match
//!   (`more: true`, "more than N"), as `search --db` says.
//!
//! Every request takes a connection of a small pool (a new one when none
//! is idle; at most [`super::MAX_IN_FLIGHT`] are kept), each statement
//! bounded by the server's own `statement_timeout`, set to the request
//! timeout. A connection the server closed (a restart) is dropped and the
//! request tried once more on a new one: it only reads.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{html, Markup, PreEscaped};
use serde::Serialize;
use serde_json::{json, Value};

use crate::search::query::{Filters, Now};
use crate::team::browse::{self, HostStats, Window};
use crate::team::search::{TeamDoc, TeamHit, TeamSession};
use crate::team::{schema, Db, TeamError};

use super::api::{self, answer, Failure, Params};
use super::extract::{Args, Id};
use super::markdown::to_html;
use super::pages::{self, anchor, enc, layout, short, Page, FOUND, RECENT};
use super::{charts, session, App, MAX_IN_FLIGHT, MAX_PAGE, REQUEST_TIMEOUT};

/// The team database the server reads, and its idle connections.
pub struct Team {
    url: String,
    target: String,
    idle: Mutex<Vec<Db>>,
}

impl From<TeamError> for Failure {
    fn from(e: TeamError) -> Failure {
        match e {
            TeamError::Query(_) | TeamError::TooLong(_) | TeamError::TooDeep(_) => {
                Failure::Bad(e.to_string())
            }
            TeamError::Lookup(_) => Failure::NotFound(e.to_string()),
            _ => Failure::Unavailable(e.to_string()),
        }
    }
}

impl Team {
    /// Connect to the database at `url` and check that it holds pi-index's
    /// tables, of this version: what `serve --db` does before it listens.
    pub fn connect(url: &str) -> Result<Team, TeamError> {
        let db = open(url)?;
        db.run(schema::check(&db.client, &db.target))?;
        Ok(Team {
            url: url.to_owned(),
            target: db.target.clone(),
            idle: Mutex::new(vec![db]),
        })
    }

    /// The database, for people: `user@host:port/db`.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Run `work` on a connection of the pool.
    pub fn with<T>(&self, work: impl Fn(&Db) -> Result<T, TeamError>) -> Result<T, Failure> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let db = match idle {
            Some(db) => db,
            None => open(&self.url)?,
        };
        let (db, out) = match work(&db) {
            // The server closed it (a restart, an idle timeout): once more
            // on a new connection.
            Err(_) if db.client.is_closed() => {
                drop(db);
                let db = open(&self.url)?;
                let out = work(&db);
                (db, out)
            }
            out => (db, out),
        };
        if !db.client.is_closed() {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            if idle.len() < MAX_IN_FLIGHT {
                idle.push(db);
            }
        }
        Ok(out?)
    }
}

/// A new connection to `url`, read-only, its statements bounded as a
/// request is.
fn open(url: &str) -> Result<Db, TeamError> {
    let db = Db::connect(url)?;
    let limit = format!(
        "SET statement_timeout = {}; SET default_transaction_read_only = on",
        REQUEST_TIMEOUT.as_millis()
    );
    db.run(db.client.batch_execute(&limit))
        .map_err(|e| db.error("setting the statement timeout", &e))?;
    Ok(db)
}

/// The team source of `app` (its routes are only the team's).
fn team(app: &App) -> &Team {
    match &*app.source {
        super::Source::Team(t) => t,
        super::Source::Local(_) => unreachable!("the team routes serve a team database"),
    }
}

/// An answer with the database named.
fn json_of<T: Serialize>(
    team: &Team,
    total: Option<usize>,
    more: Option<bool>,
    body: T,
    warnings: Option<Value>,
) -> Response {
    api::Answer {
        total,
        more,
        body,
        warnings,
        from: api::Origin::Database(team.target()),
    }
    .into_response()
}

/// The hits of `search --db` for the page's query, order and page.
fn hits(team: &Team, p: &Params, limit: usize) -> Result<crate::team::search::TeamResult, Failure> {
    let query = match p.query()? {
        "" => "*",
        q => q,
    };
    let sort = p.sort()?;
    let offset = p.offset.unwrap_or(0);
    let now = Now::system();
    team.with(|db| {
        crate::team::search::search(
            db,
            query,
            &Filters::default(),
            &now,
            sort,
            limit,
            offset,
            160,
            false,
        )
    })
}

/// The sessions `sessions --db QUERY` finds, `limit` after `offset`, and
/// whether more were found.
fn found_sessions(
    team: &Team,
    query: &str,
    offset: usize,
    limit: usize,
) -> Result<crate::team::search::FoundSessions, Failure> {
    let now = Now::system();
    team.with(|db| {
        crate::team::search::find_sessions(
            db,
            query,
            &Filters::default(),
            &now,
            None,
            None,
            offset,
            limit,
        )
    })
}

/// The session `id` of `host` (its newest file), or why not: none has
/// that id (404), or several hosts do and none was chosen (400, naming
/// them).
fn session_of(team: &Team, id: &str, host: Option<&str>) -> Result<TeamSession, Failure> {
    let mut found = team.with(|db| browse::sessions_with_id(db, id, host))?;
    match found.len() {
        0 => Err(Failure::NotFound(format!(
            "no pushed session has the id {id:?}{}: search for it from the search page",
            host.map_or(String::new(), |h| format!(" on the host {h:?}"))
        ))),
        1 => Ok(found.remove(0)),
        n => Err(Failure::Bad(format!(
            "{n} hosts pushed a session with the id {id:?} ({}): choose one with host=NAME",
            found
                .iter()
                .map(|s| s.host.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

// ---- the API ----------------------------------------------------------

/// `GET /api/search?q=&sort=&limit=&offset=`: `{total, more, hits,
/// warnings, database}`, each hit a line of `search --db URL --json`.
pub async fn search(State(app): State<Arc<App>>, Args(p): Args<Params>) -> Response {
    answer(
        app.blocking(move |app| {
            let team = team(app);
            let r = hits(team, &p, p.limit(20)?)?;
            Ok(json_of(
                team,
                Some(r.total),
                Some(r.more),
                HitsBody { hits: &r.hits },
                Some(api::warnings(&r.warnings)),
            ))
        })
        .await,
    )
}

/// `GET /api/sessions?q=&host=&limit=&offset=`: without a query the
/// sessions (of `host`), newest first (lines of `sessions --db URL
/// --json`); with one, those it finds, best first (lines of `sessions
/// --db URL QUERY --json`; `more` says whether more were found).
pub async fn sessions(State(app): State<Arc<App>>, Args(p): Args<Params>) -> Response {
    answer(
        app.blocking(move |app| {
            let team = team(app);
            let limit = p.limit(50)?;
            let offset = p.offset.unwrap_or(0);
            let q = p.query()?;
            if q.is_empty() {
                let host = p.host.as_deref();
                let (total, page) = team.with(|db| {
                    Ok((
                        browse::count_sessions(db, host)?,
                        crate::team::search::sessions(db, host, None, None, offset, limit)?,
                    ))
                })?;
                return Ok(json_of(
                    team,
                    Some(total),
                    None,
                    SessionsBody { sessions: &page },
                    Some(json!([])),
                ));
            }
            let found = found_sessions(team, q, offset, limit)?;
            Ok(json_of(
                team,
                Some(found.total),
                Some(offset + found.hits.len() < found.total),
                SessionsBody {
                    sessions: &found.hits,
                },
                Some(api::warnings(&found.warnings)),
            ))
        })
        .await,
    )
}

/// `GET /api/session/ID?host=&branch=active|all&limit=&offset=`: the
/// session (a line of `sessions --db URL --json`) and its messages in
/// file order (lines of `show --db URL --format json`), `limit` (at most
/// [`MAX_PAGE`]) after `offset`.
pub async fn session(State(app): State<Arc<App>>, Id(id): Id, Args(p): Args<Params>) -> Response {
    answer(
        app.blocking(move |app| {
            let team = team(app);
            let active = api::active_only(p.branch.as_deref())?;
            let limit = p.limit(MAX_PAGE)?;
            let s = session_of(team, &id, p.host.as_deref())?;
            let w = Window {
                active_only: active,
                offset: p.offset.unwrap_or(0),
                limit,
            };
            let (total, docs) = team.with(|db| browse::messages(db, &s, w))?;
            Ok(json_of(
                team,
                Some(total),
                None,
                DocumentsBody {
                    session: &s,
                    documents: &docs,
                },
                None,
            ))
        })
        .await,
    )
}

/// `GET /api/stats`: `{stats, activity, database}`: what the database
/// holds (each host's sessions and messages) and the stats page's charts.
pub async fn stats(State(app): State<Arc<App>>) -> Response {
    answer(
        app.blocking(move |app| {
            let team = team(app);
            let (stats, activity) = team.with(|db| browse::stats(db, api::now_ms(), 90, 10))?;
            Ok(json_of(
                team,
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

/// `GET /api/status`: `{generation, database}`. The database is read
/// at each request, so a page never holds older results than a reload
/// would show: the generation does not change.
pub async fn status(State(app): State<Arc<App>>) -> Response {
    axum::Json(json!({"generation": 0, "database": team(&app).target()})).into_response()
}

/// `GET /session/ID/raw`: the file is not in the database.
pub async fn raw(Id(_): Id) -> Response {
    (
        StatusCode::NOT_FOUND,
        "the team database holds the sessions' indexed text, not their files: the raw file is on the host that pushed it (the session page names it)",
    )
        .into_response()
}

#[derive(Serialize)]
struct HitsBody<'a> {
    hits: &'a [TeamHit],
}

#[derive(Serialize)]
struct SessionsBody<'a, T: Serialize> {
    sessions: &'a [T],
}

#[derive(Serialize)]
struct DocumentsBody<'a> {
    session: &'a TeamSession,
    documents: &'a [TeamDoc],
}

#[derive(Serialize)]
struct StatsBody<'a> {
    stats: &'a browse::TeamStats,
    activity: &'a crate::search::stats::Activity,
}

// ---- the pages --------------------------------------------------------

/// `GET /?q=&sort=`: the search page (with `fragment=1`, only its
/// results).
pub async fn search_page(
    State(app): State<Arc<App>>,
    cross_site: Option<axum::Extension<super::guard::CrossSite>>,
    Args(p): Args<Params>,
) -> Response {
    if cross_site.is_some() {
        return pages::respond(Ok(pages::not_searched(&app, &p)));
    }
    pages::respond(
        app.blocking(move |app| pages::search_frame(app, &p, results(team(app), &p)))
            .await,
    )
}

/// The search page's results: the hits of `search --db` in its order
/// (best first, or by time with `sort=newest|oldest`), a session's
/// consecutive hits under one label with its host; without a query every
/// session, newest first, grouped by host and directory.
///
/// The local page ranks sessions; here the hits are what is ranked,
/// because ranking sessions (`sessions --db QUERY`, `/api/sessions?q=`)
/// ranks every matching message, not the pool of the newest: on the
/// 3-host benchmark database, 0.3 s for `tokio` and 1.7 s for `"the
/// file"`, against 20-30 ms for the hits.
fn results(team: &Team, p: &Params) -> Result<Markup, Failure> {
    let q = p.query()?;
    let offset = p.offset.unwrap_or(0);
    if q.is_empty() {
        return recent(team, offset);
    }
    let r = hits(team, p, FOUND)?;
    let mut groups: Vec<(&TeamHit, Vec<&TeamHit>)> = Vec::new();
    for h in &r.hits {
        match groups.last_mut() {
            Some((first, g)) if first.host == h.host && first.hit.doc.path == h.hit.doc.path => {
                g.push(h)
            }
            _ => groups.push((h, vec![h])),
        }
    }
    Ok(html! {
        (pages::chips(q, r.hits.iter().filter_map(|h| h.hit.session.as_deref())))
        (pages::warnings(&r.warnings))
        p.count { (if r.more { "more than " } else { "" }) (r.total) " messages" }
        ol.hits {
            @for (first, group) in &groups {
                li {
                    div.session-label {
                        @let d = &first.hit.doc;
                        a href=(session_href(&d.session_id, &first.host)) { (first.hit.session.as_deref().map_or(d.session_name.as_deref().unwrap_or(&d.session_id), crate::search::SessionRow::label)) }
                        (pages::agent_mark(d.agent))
                        " " span.host { (first.host) }
                        " " span.dim { (d.cwd.as_deref().unwrap_or("")) }
                    }
                    @for h in group { (pages::hit_link(&h.hit, Some(&h.host))) }
                }
            }
        }
        (pages::more(p.q.as_deref().unwrap_or(""), p.sort.as_deref(), offset, r.hits.len(), if r.more { usize::MAX } else { r.total }))
    })
}

/// A session's page: its id and its host.
fn session_href(id: &str, host: &str) -> String {
    pages::session_href(id, Some(&format!("host={}", enc(host))))
}

/// Every session, newest first, grouped by host and directory (in the
/// order of each group's newest session).
fn recent(team: &Team, offset: usize) -> Result<Markup, Failure> {
    let (total, page) = team.with(|db| {
        Ok((
            browse::count_sessions(db, None)?,
            crate::team::search::sessions(db, None, None, None, offset, RECENT)?,
        ))
    })?;
    let mut groups: Vec<((&str, &str), Vec<&TeamSession>)> = Vec::new();
    for s in &page {
        let key = (
            s.host.as_str(),
            s.session.cwd.as_deref().unwrap_or("(unknown directory)"),
        );
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(s),
            None => groups.push((key, vec![s])),
        }
    }
    Ok(html! {
        p.count { (total) " sessions, newest first" }
        @for ((host, dir), sessions) in &groups {
            section.directory {
                h2 { span.host { (host) } " " (dir) }
                ul.sessions {
                    @for s in sessions {
                        li {
                            a.session href=(session_href(&s.session.session_id, &s.host)) { (s.session.label()) }
                            span.dim { " · " (short(s.session.last.as_deref())) " · " (s.session.messages) " messages" }
                            @if s.session.family.as_ref().is_some_and(|f| f.parent.is_some()) { " " span.mark { "fork" } }
                        }
                    }
                }
            }
        }
        (pages::more("", None, offset, page.len(), total))
    })
}

/// `GET /session/ID?host=&branch=all&line=&from=`: the session's messages
/// in file order, a window at a time.
pub async fn page(
    State(app): State<Arc<App>>,
    Id(id): Id,
    Args(p): Args<session::SessionParams>,
) -> Response {
    pages::respond(app.blocking(move |app| session_page(app, &id, &p)).await)
}

/// `GET /session/?id=ID&host=` (and `&raw=1`): the session page of an id
/// given in the query string (see [`pages::session_href`]).
pub async fn page_by_query(
    State(app): State<Arc<App>>,
    Args(p): Args<session::SessionParams>,
) -> Response {
    let Some(id) = p.id.clone() else {
        return super::extract::bad_request("/session/", "give the session's id: /session/?id=ID");
    };
    if p.raw.is_some() {
        return raw(Id(id)).await;
    }
    pages::respond(app.blocking(move |app| session_page(app, &id, &p)).await)
}

fn session_page(app: &App, id: &str, p: &session::SessionParams) -> Page {
    let team = team(app);
    match draw_session(team, app, id, p) {
        Ok(page) => page,
        Err(f) => pages::failure_page(app, &f),
    }
}

fn draw_session(
    team: &Team,
    app: &App,
    id: &str,
    p: &session::SessionParams,
) -> Result<Page, Failure> {
    let active = api::active_only(p.branch.as_deref())?;
    let s = match session_of(team, id, p.host.as_deref()) {
        Err(Failure::Bad(_)) if p.host.is_none() => return choose_host(team, app, id),
        found => found?,
    };
    let from = match (p.from, p.line) {
        (Some(f), _) => f,
        (None, Some(line)) => team
            .with(|db| browse::messages_before(db, &s, active, line))?
            .saturating_sub(session::WINDOW / 10),
        _ => 0,
    };
    let w = Window {
        active_only: active,
        offset: from,
        limit: session::WINDOW,
    };
    let (total, docs) = team.with(|db| browse::messages(db, &s, w))?;
    let branch = if active { "" } else { "&branch=all" };
    let base = format!("host={}{branch}", enc(&s.host));
    let to = from + docs.len();
    let href = |q: &str| pages::session_href(&s.session.session_id, Some(q));
    let next = (to < total).then(|| {
        let q = format!("{base}&from={to}");
        html! {
            a.more href=(href(&q)) data-fragment=(href(&format!("{q}&fragment=1"))) {
                "later messages (" (to) " of " (total) " shown)"
            }
        }
    });
    let messages = html! {
        @for d in &docs { (message(d, !active)) }
    };
    if p.fragment.is_some() {
        return Ok((
            StatusCode::OK,
            html! { (messages) @if let Some(n) = next { (n) } },
        ));
    }
    let body = html! {
        (head(team, &s, active)?)
        @if from > 0 {
            a.earlier href=(href(&format!("{base}&from={}", from.saturating_sub(session::WINDOW)))) {
                "earlier messages (" (from) " before these)"
            }
        }
        div #entries { (messages) @if let Some(n) = next { (n) } }
    };
    Ok((StatusCode::OK, layout(s.session.label(), app, body)))
}

/// The page of an id that several hosts pushed: which host's?
fn choose_host(team: &Team, app: &App, id: &str) -> Result<Page, Failure> {
    let found = team.with(|db| browse::sessions_with_id(db, id, None))?;
    let body = html! {
        h1 { "Which host's session?" }
        p { (found.len()) " hosts pushed a session with the id " code { (id) } ":" }
        ul.hosts {
            @for s in &found {
                li {
                    a.session href=(session_href(&s.session.session_id, &s.host)) { span.host { (s.host) } " " (s.session.label()) }
                    span.dim { " · " (s.session.cwd.as_deref().unwrap_or("")) " · " (short(s.session.last.as_deref())) " · " (s.session.messages) " messages" }
                }
            }
        }
    };
    Ok((StatusCode::MULTIPLE_CHOICES, layout(id, app, body)))
}

/// What the page says of a session: its host, its place, its family, and
/// how to resume it on its host.
fn head(team: &Team, s: &TeamSession, active: bool) -> Result<Markup, Failure> {
    let row = &s.session;
    let family = row.family.clone().unwrap_or_default();
    // The family's sessions on the same host, by their files.
    let parent = match &family.parent {
        Some(p) if p.session.is_some() => {
            let found =
                team.with(|db| crate::team::search::session_by_path(db, &s.host, &p.path))?;
            Some((found, p.path.clone()))
        }
        Some(p) => Some((None, p.path.clone())),
        None => None,
    };
    let mut forks = Vec::new();
    for f in family.forks.iter().take(50) {
        forks.extend(team.with(|db| crate::team::search::session_by_path(db, &s.host, &f.path))?);
    }
    let cwd = row.cwd.as_deref().unwrap_or(".");
    let resume = format!(
        "cd {} && {} {} {}",
        crate::output::shell_quote(cwd),
        row.agent.command(),
        row.agent.resume_flag(),
        crate::output::shell_quote(&row.path)
    );
    let base = format!("host={}", enc(&s.host));
    Ok(html! {
        section.session-head {
            h1 { (row.label()) }
            dl.meta {
                dt { "host" } dd #host .host { (s.host) }
                dt { "directory" } dd.cwd { (cwd) }
                dt { "agent" } dd.agent { (row.agent.name()) }
                @if !row.models.is_empty() { dt { "models" } dd { (row.models.join(", ")) } }
                dt { "dates" } dd { (short(row.started.as_deref())) " to " (short(row.last.as_deref())) }
                dt { "messages" } dd #n-messages { (row.messages) }
                dt { "file" } dd.file { (row.path) }
                @if let Some((found, path)) = &parent {
                    dt { "forked from" }
                    dd #forked-from {
                        @match found {
                            Some(p) => a href=(session_href(&p.session.session_id, &p.host)) { (p.session.label()) },
                            None => span { (path) " (not in the database)" },
                        }
                    }
                }
                @if !forks.is_empty() {
                    dt { "forks" }
                    dd #forks {
                        @for (i, f) in forks.iter().enumerate() {
                            @if i > 0 { ", " }
                            a href=(session_href(&f.session.session_id, &f.host)) { (f.session.label()) }
                        }
                    }
                }
            }
            div.actions {
                button.copy type="button" data-copy=(resume) title="copy the command" { "Resume on " (s.host) }
                code.resume { (resume) }
            }
            div.actions {
                @if active {
                    span.on { "active branch" }
                    a #view-all href=(pages::session_href(&row.session_id, Some(&format!("{base}&branch=all")))) { "all branches" }
                } @else {
                    a #view-active href=(pages::session_href(&row.session_id, Some(&base))) { "active branch" }
                    span.on { "all branches" }
                }
            }
            p.note { "The team database holds the text pi-index indexed of each message: tool calls, their output and the session's tree are in its file on " (s.host) "." }
        }
    })
}

/// A message, drawn as the local session page draws one (its text as
/// Markdown).
fn message(d: &TeamDoc, show_branch: bool) -> Markup {
    let doc = &d.doc;
    let a = anchor(doc.entry_id.as_deref(), doc.line);
    let role = doc.role.as_str();
    html! {
        article.entry.(role) id=(a) data-line=(doc.line) {
            (session::entry_head(role, doc.timestamp.as_deref(), doc.active, &a, show_branch))
            @if let Some(model) = &doc.model { span.model { (model) } }
            div.md { (PreEscaped(to_html(&doc.text))) }
        }
    }
}

/// `GET /stats`: the stats page of the team database: its numbers, each
/// host's, and the charts.
pub async fn stats_page(State(app): State<Arc<App>>) -> Response {
    pages::respond(app.blocking(|app| draw_stats(app, team(app))).await)
}

fn draw_stats(app: &App, team: &Team) -> Page {
    let (stats, activity) = match team.with(|db| browse::stats(db, api::now_ms(), 90, 10)) {
        Ok(n) => n,
        Err(f) => return pages::failure_page(app, &f),
    };
    let per_host: Vec<(String, u64)> = stats
        .hosts
        .iter()
        .map(|h| (h.host.clone(), h.sessions))
        .collect();
    let body = html! {
        h1 { "What the team database holds" }
        dl.numbers {
            dt { "database" } dd #database-name { (stats.database) }
            dt { "hosts" } dd #n-hosts { (stats.hosts.len()) }
            dt { "sessions" } dd #n-sessions { (stats.sessions) }
            dt { "messages" } dd #n-messages { (stats.messages) }
            @for (role, n) in &stats.messages_by_role {
                dt { (role) } dd { (n) }
            }
            dt { "forks" } dd { (stats.forks) }
            dt { "from" } dd { (short(stats.first.as_deref())) " to " (short(stats.last.as_deref())) }
        }
        table.hosts {
            thead { tr { th { "host" } th { "sessions" } th { "messages" } th { "latest message" } th { "last push" } } }
            tbody {
                @for HostStats { host, sessions, messages, last, pushed_at } in &stats.hosts {
                    tr {
                        td.host { (host) }
                        td { (sessions) }
                        td { (messages) }
                        td { (short(last.as_deref())) }
                        td { (short(pushed_at.as_deref())) }
                    }
                }
            }
        }
        (pages::activity_charts(&activity))
        div #chart-hosts { (charts::rows("Sessions per host", &per_host)) }
    };
    (StatusCode::OK, layout("Stats", app, body))
}
