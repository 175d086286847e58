//! The pages: the frame every page shares, the search page and the stats
//! page (the session page is [`super::session`]). Drawn with maud, which
//! escapes every value; the only unescaped HTML is what
//! [`super::markdown`] makes.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::Extension;
use maud::{html, Markup, DOCTYPE};

use crate::live::{Refresh, RefreshStatus};
use crate::output::text::marked;
use crate::search::family::Families;
use crate::search::{Hit, Matched, SessionRow, Sort, StoredDoc};

use super::api::{self, Failure, Params};
use super::extract::Args;
use super::guard::CrossSite;
use super::{charts, App, Source};

/// A page: its HTTP status and its HTML.
pub type Page = (StatusCode, Markup);

/// Sessions listed per page when there is no query.
pub(super) const RECENT: usize = 200;
/// Sessions per page of results.
pub(super) const FOUND: usize = 50;

/// The frame of every page: the stylesheet and script, the top bar, the
/// notices of the index's freshness, then `body`.
pub fn layout(title: &str, app: &App, body: Markup) -> Markup {
    let (refresh, generation, database) = match &*app.source {
        Source::Local(state) => (Some(state.last_refresh()), state.generation(), None),
        Source::Team(team) => (None, 0, Some(team.target())),
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (title) " · pi-index" }
                link rel="stylesheet" href=(asset("style.css"));
                script type="module" src=(asset("app.js")) {}
            }
            body data-generation=(generation) {
                header.top {
                    a.brand href="/" { "pi-index" }
                    nav {
                        a href="/" { "Search" }
                        a href="/stats" { "Stats" }
                    }
                    @if let Some(db) = database {
                        span #database .dim title="every pushed host's sessions, read from this database" { "team database " (db) }
                    }
                }
                div #live .notice hidden {
                    span #live-text { "Newer results exist." }
                    " "
                    a #live-reload href="" { "Show them" }
                }
                @if let Some(refresh) = &refresh { (index_note(refresh)) }
                main { (body) }
            }
        }
    }
}

/// What the page says about an index it could not bring up to date.
pub fn index_note(refresh: &Refresh) -> Markup {
    let busy = matches!(refresh.status, RefreshStatus::Busy | RefreshStatus::Failed);
    html! {
        div #index-note .notice hidden[!busy] {
            @if busy { (refresh.note.as_deref().unwrap_or("")) }
        }
    }
}

/// An asset's address, with its tag so a new binary's is fetched anew.
fn asset(name: &str) -> String {
    let body = super::assets::ASSETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map_or("", |a| a.2);
    format!(
        "/assets/{name}?v={}",
        super::assets::etag(body).trim_matches('"')
    )
}

/// A page that says what went wrong.
pub fn failure_page(app: &App, f: &Failure) -> Page {
    (
        f.status(),
        layout("error", app, html! { p.error { (f.message()) } }),
    )
}

/// Turn a page into a response.
pub fn respond(page: Result<Page, String>) -> Response {
    match page {
        Ok((status, markup)) => (status, Html(markup.into_string())).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

/// `GET /?q=&sort=`: the search page (with `fragment=1`, only its
/// results).
pub async fn search(
    State(app): State<Arc<App>>,
    cross_site: Option<Extension<CrossSite>>,
    Args(p): Args<Params>,
) -> Response {
    if cross_site.is_some() {
        return respond(Ok(not_searched(&app, &p)));
    }
    respond(app.blocking(move |app| search_page(app, &p)).await)
}

fn search_page(app: &App, p: &Params) -> Page {
    let found = api::snapshot(app).and_then(|snap| results(&snap, p));
    search_frame(app, p, found)
}

/// The search page that another site's link opened: the query in the
/// box, not run (a link must not make the server search, nor show what
/// a search finds to whoever chose its words).
pub fn not_searched(app: &App, p: &Params) -> Page {
    let note = html! {
        p.notice {
            "This page was opened from another site, so nothing was searched. "
            "Press Enter in the box to search."
        }
    };
    let mut p = p.clone();
    p.fragment = None;
    search_frame(app, &p, Ok(note))
}

/// The search page around `found`, the results of the query of `p` (with
/// `fragment=1`, only them).
pub fn search_frame(app: &App, p: &Params, found: Result<Markup, Failure>) -> Page {
    let results = match found {
        Ok(m) => m,
        Err(f) if p.fragment.is_some() => return (f.status(), html! { p.error { (f.message()) } }),
        Err(f) => html! { p.error { (f.message()) } },
    };
    if p.fragment.is_some() {
        return (StatusCode::OK, results);
    }
    let q = p.q.as_deref().unwrap_or("");
    let sort = p.sort.as_deref().unwrap_or("relevance");
    let body = html! {
        form #search action="/" method="get" role="search" {
            input #q type="search" name="q" value=(q) autocomplete="off" spellcheck="false"
                placeholder="Search every session: words, \"phrases\", OR, -not, role:user, cwd:~/src, after:7d …"
                aria-label="query" autofocus;
            select #sort name="sort" aria-label="order" {
                @for (v, label) in [("relevance", "best first"), ("newest", "newest first"), ("oldest", "oldest first")] {
                    option value=(v) selected[sort == v] { (label) }
                }
            }
            noscript { button type="submit" { "Search" } }
        }
        p.keys { "/ search · ↑↓ or j k move · Enter opens" }
        div #results { (results) }
    };
    let title = if q.is_empty() {
        "Search".to_owned()
    } else {
        q.to_owned()
    };
    (StatusCode::OK, layout(&title, app, body))
}

/// The results for a query: sessions (best first), or hits in time order
/// with `sort=newest|oldest`; without a query every session, newest
/// first, grouped by directory.
fn results(snap: &crate::live::Snapshot, p: &Params) -> Result<Markup, Failure> {
    let q = p.query()?;
    let offset = p.offset.unwrap_or(0);
    if q.is_empty() {
        return recent(snap, offset);
    }
    let sort = p.sort()?;
    if sort != Sort::Relevance {
        let mut p = p.clone();
        p.limit = Some(FOUND);
        let r = api::search_hits(snap, &p)?;
        return Ok(html! {
            (chips(q, r.hits.iter().filter_map(|h| h.session.as_deref())))
            (warnings(&r.warnings))
            p.count { (r.total) " messages" }
            ol.hits {
                @for h in &r.hits {
                    li {
                        div.session-label {
                            a href=(session_href(&h.doc.session_id, None)) { (h.session.as_deref().map_or(h.doc.session_id.as_str(), SessionRow::label)) }
                            (agent_mark(h.doc.agent))
                            " " span.dim { (h.doc.cwd.as_deref().unwrap_or("")) }
                        }
                        (hit_link(h, None))
                    }
                }
            }
            (more(p.q.as_deref().unwrap_or(""), p.sort.as_deref(), offset, r.hits.len(), r.total))
        });
    }
    let found = api::search_sessions(snap, q, offset, FOUND)?;
    let rows: Vec<&SessionRow> = found.hits.iter().map(|h| &h.session).collect();
    Ok(html! {
        (chips(q, rows.iter().copied()))
        (warnings(&found.warnings))
        p.count { (found.total) " sessions" }
        ol.sessions {
            @for h in &found.hits {
                li.result {
                    div.session-label {
                        a.session href=(session_href(&h.session.session_id, None)) { (h.session.label()) }
                        (agent_mark(h.session.agent))
                        span.dim { " " (h.session.cwd.as_deref().unwrap_or("")) " · " (short(h.session.last.as_deref())) }
                        span.matched {
                            " " (match h.matched { Matched::Name => "[name]", Matched::Title => "[title]", Matched::Messages => "[messages]" })
                            " " (h.matches) (if h.matches == 1 { " message" } else { " messages" })
                        }
                    }
                    @if let Some(hit) = &h.hit {
                        (hit_link(hit, None))
                    } @else {
                        div.snippet { (highlighted(&h.snippet, &h.highlights)) }
                    }
                }
            }
        }
        (more(p.q.as_deref().unwrap_or(""), None, offset, found.hits.len(), found.total))
    })
}

/// Every session, newest first, grouped by directory (in the order of
/// each directory's newest session), forks nested under their parent
/// when both are listed in the same directory. Parents and forks are the
/// index's families, as `sessions --json` gives them.
fn recent(snap: &crate::live::Snapshot, offset: usize) -> Result<Markup, Failure> {
    let all = snap.local.sessions()?;
    let families = snap.local.families()?;
    let total = all.len();
    let page: Vec<&SessionRow> = all.iter().skip(offset).take(RECENT).collect();
    let mut groups: Vec<(&str, Vec<&SessionRow>)> = Vec::new();
    for s in &page {
        let dir = s.cwd.as_deref().unwrap_or("(unknown directory)");
        match groups.iter_mut().find(|g| g.0 == dir) {
            Some(g) => g.1.push(s),
            None => groups.push((dir, vec![s])),
        }
    }
    let shown = total.saturating_sub(offset).min(RECENT);
    Ok(html! {
        p.count { (total) " sessions, newest first" }
        @for (dir, sessions) in &groups {
            section.directory {
                h2 { (dir) }
                @let listed = |k: u64| sessions.iter().any(|s| s.key == k);
                ul.sessions {
                    @for s in sessions.iter().filter(|s| parent_key(&families, s).is_none_or(|p| !listed(p))) {
                        (session_item(s, sessions, &families, 0))
                    }
                }
            }
        }
        (more("", None, offset, shown, total))
    })
}

/// The key of the indexed session `s` was forked from.
fn parent_key(families: &Families, s: &SessionRow) -> Option<u64> {
    families.parent_of(s.key).and_then(|(p, _)| p)
}

/// A session of the listing, its forks (listed beside it) below it.
fn session_item(
    s: &SessionRow,
    listed: &[&SessionRow],
    families: &Families,
    depth: usize,
) -> Markup {
    // In the listing's order (newest first), as the sessions around them.
    let of = families.forks_of(s.key);
    let forks: Vec<&SessionRow> = listed
        .iter()
        .filter(|l| of.contains(&l.key))
        .copied()
        .collect();
    html! {
        li {
            a.session href=(session_href(&s.session_id, None)) { (s.label()) }
            span.dim { " · " (short(s.last.as_deref())) " · " (s.messages) " messages" }
            @if parent_key(families, s).is_some() && depth == 0 { " " span.mark { "fork" } }
            @if !forks.is_empty() && depth < 16 {
                ul.forks {
                    @for f in &forks { (session_item(f, listed, families, depth + 1)) }
                }
            }
        }
    }
}

pub(super) fn more(
    q: &str,
    sort: Option<&str>,
    offset: usize,
    shown: usize,
    total: usize,
) -> Markup {
    let next = offset + shown;
    // A query's results page no deeper than every front end does.
    let reach = q.is_empty() || next <= crate::search::query::MAX_OFFSET;
    html! {
        @if shown > 0 && next < total && reach {
            a.next href={"/?q=" (enc(q)) (sort.map_or(String::new(), |s| format!("&sort={}", enc(s)))) "&offset=" (next)} { "more" }
        } @else if shown > 0 && next < total {
            p.dim { "More match: narrow the query to reach them (more words, cwd:, after:, role:)." }
        }
    }
}

pub(super) fn warnings(w: &[crate::search::query::Warning]) -> Markup {
    html! {
        @if !w.is_empty() {
            ul.warnings {
                @for w in w.iter().take(20) {
                    li { "query position " (w.position) ": " (w.message) }
                }
            }
        }
    }
}

/// The filters as chips: each adds its filter to the query, or takes it
/// away when the query holds it.
pub(super) fn chips<'a>(q: &str, sessions: impl Iterator<Item = &'a SessionRow>) -> Markup {
    let mut filters: Vec<(String, String)> = Vec::new();
    let mut dirs = Vec::new();
    let mut models = Vec::new();
    for s in sessions {
        if let Some(d) = s.cwd.as_deref() {
            if !dirs.contains(&d) && dirs.len() < 4 && !d.contains('"') {
                dirs.push(d);
            }
        }
        for m in &s.models {
            if !models.contains(&m.as_str()) && models.len() < 4 && !m.contains('"') {
                models.push(m.as_str());
            }
        }
    }
    for d in dirs {
        filters.push((format!("cwd:\"{d}\""), d.to_owned()));
    }
    for m in models {
        filters.push((format!("model:\"{m}\""), m.to_owned()));
    }
    for r in ["user", "assistant"] {
        filters.push((format!("role:{r}"), r.to_owned()));
    }
    for (f, label) in [
        ("after:1d", "last day"),
        ("after:7d", "last week"),
        ("after:30d", "last month"),
    ] {
        filters.push((f.to_owned(), label.to_owned()));
    }
    html! {
        div.chips {
            @for (filter, label) in &filters {
                @let on = q.split_whitespace().any(|w| w == filter) || q.contains(filter.as_str());
                @let next = if on { q.replace(filter.as_str(), "").split_whitespace().collect::<Vec<_>>().join(" ") } else { format!("{q} {filter}") };
                a.chip.on[on] href={"/?q=" (enc(&next))} title=(filter) data-filter=(filter) { (label) }
            }
        }
    }
}

/// Which agent wrote a session, after its label: nothing for Pi (what
/// most sessions are), else the agent's name (`Oh My Pi`).
pub fn agent_mark(agent: crate::pi::Agent) -> Markup {
    html! {
        @if agent != crate::pi::Agent::Pi {
            " " span.mark.agent title="the agent that wrote the session" { (agent.name()) }
        }
    }
}

/// A hit (of `host`, from the team database): a real link to the
/// session at its entry.
pub fn hit_link(h: &Hit, host: Option<&str>) -> Markup {
    html! {
        a.hit href=(doc_href(&h.doc, host)) {
            span.role { (h.doc.role.as_str()) }
            " " span.time { (short(h.doc.timestamp.as_deref())) }
            @if !h.doc.active { " " span.mark.abandoned { "abandoned branch" } }
            " " span.snippet { (highlighted(&h.snippet, &h.highlights)) }
        }
    }
}

/// A snippet with its matched words marked.
pub fn highlighted(s: &str, ranges: &[std::ops::Range<usize>]) -> Markup {
    html! {
        @for (m, t) in marked(s, ranges) {
            @if m { mark { (t) } } @else { (t) }
        }
    }
}

/// The anchor of an entry on the session page: its id, else its line.
pub fn anchor(entry_id: Option<&str>, line: u64) -> String {
    match entry_id {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => format!("line-{line}"),
    }
}

/// The session page at a document (of `host`, from the team database):
/// its line in view, its branch shown, its entry the target.
pub fn doc_href(d: &StoredDoc, host: Option<&str>) -> String {
    format!(
        "/session/{}?{}line={}{}#{}",
        enc(&d.session_id),
        host.map_or(String::new(), |h| format!("host={}&", enc(h))),
        d.line,
        if d.active { "" } else { "&branch=all" },
        enc(&anchor(d.entry_id.as_deref(), d.line))
    )
}

/// A session's page.
pub fn session_href(id: &str, query: Option<&str>) -> String {
    if dot_segment(id) {
        return format!(
            "/session/?id={}{}",
            enc(id),
            query.map_or(String::new(), |q| format!("&{q}"))
        );
    }
    format!(
        "/session/{}{}",
        enc(id),
        query.map_or(String::new(), |q| format!("?{q}"))
    )
}

/// The address of a session's raw file.
pub fn raw_href(id: &str) -> String {
    if dot_segment(id) {
        return format!("/session/?id={}&raw=1", enc(id));
    }
    format!("/session/{}/raw", enc(id))
}

/// Whether an id in a path would be read by a browser as `.` or `..`
/// (which it removes, even percent-encoded): such an id goes in the
/// query string instead.
fn dot_segment(id: &str) -> bool {
    matches!(id, "." | "..")
}

/// Percent-encoding of everything but unreserved characters: safe in a
/// path segment, a query value and a fragment.
pub fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub use crate::output::text::short_time as short;

/// The stats page's three charts of `activity`.
pub fn activity_charts(activity: &crate::search::stats::Activity) -> Markup {
    html! {
        div #chart-days { (charts::columns("Messages per day, last 90 days (UTC)", &activity.per_day)) }
        div #chart-dirs { (charts::rows("Sessions per directory", &activity.per_directory)) }
        div #chart-models { (charts::rows("Messages per model", &activity.per_model)) }
    }
}

/// `GET /stats`: the statistics and the three charts.
pub async fn stats(State(app): State<Arc<App>>) -> Response {
    respond(app.blocking(stats_page).await)
}

fn stats_page(app: &App) -> Page {
    let snap = match api::snapshot(app) {
        Ok(s) => s,
        Err(f) => return failure_page(app, &f),
    };
    let numbers = (|| -> Result<_, Failure> {
        let sessions = snap.local.sessions()?;
        let stats = snap.local.stats(&sessions)?;
        let activity = snap.local.activity(&sessions, api::now_ms(), 90, 10)?;
        Ok((stats, activity))
    })();
    let (stats, activity) = match numbers {
        Ok(n) => n,
        Err(f) => return failure_page(app, &f),
    };
    let body = html! {
        h1 { "What the index holds" }
        dl.numbers {
            dt { "sessions" } dd #n-sessions { (stats.sessions) }
            dt { "messages" } dd #n-messages { (stats.messages) }
            @for (role, n) in &stats.messages_by_role {
                dt { (role) } dd { (n) }
            }
            dt { "from" } dd { (short(stats.first.as_deref())) " to " (short(stats.last.as_deref())) }
            dt { "index" } dd { (format!("{:.1} MB", stats.index_bytes as f64 / 1e6)) " at " (stats.index) }
            dt { "built" } dd { (short(stats.built_at.as_deref())) }
        }
        (activity_charts(&activity))
    };
    (StatusCode::OK, layout("Stats", app, body))
}
