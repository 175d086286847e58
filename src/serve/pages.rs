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

use crate::live::{Reading, Refresh, RefreshStatus};
use crate::output::text::marked;
use crate::read::{Hit, Matched, SessionList, SessionRow, Stats, StoredDoc};
use crate::search::Sort;

use super::api::{self, Params};
use super::app::{App, Failure};
use super::charts;
use super::extract::Args;
use crate::http::guard::CrossSite;

/// A page: its HTTP status and its HTML.
pub type Page = (StatusCode, Markup);

/// Sessions listed per page when there is no query.
pub(super) const RECENT: usize = 200;
/// Sessions per page of results.
pub(super) const FOUND: usize = 50;

/// The frame of every page: the stylesheet and script, the top bar, the
/// notices of the index's freshness, then `body`.
pub fn layout(title: &str, app: &App, body: Markup) -> Markup {
    let (refresh, generation, database) = match app.served.index() {
        Some(state) => (Some(state.last_refresh()), state.generation(), None),
        None => (None, 0, app.served.database()),
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
    let found = app.reading().and_then(|reading| results(&reading, p));
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
///
/// A source whose session ranking is slow (the team database ranks every
/// matching message, not the pool of the newest: far slower than its
/// hits, [docs/performance.md](../../docs/performance.md#the-servers)) shows
/// the hits in their order instead, best first.
fn results(reading: &Reading, p: &Params) -> Result<Markup, Failure> {
    let q = p.query()?;
    let offset = p.offset.unwrap_or(0);
    if q.is_empty() {
        return recent(reading, offset);
    }
    let sort = p.sort()?;
    let caps = reading.source().capabilities();
    if sort != Sort::Relevance || !caps.quick_session_search {
        let mut p = p.clone();
        p.limit = Some(FOUND);
        let r = api::search_hits(reading, &p)?;
        // A session's consecutive hits under one label.
        let mut groups: Vec<(&Hit, Vec<&Hit>)> = Vec::new();
        for h in &r.hits {
            match groups.last_mut() {
                Some((first, g))
                    if first.doc.host == h.doc.host && first.doc.path == h.doc.path =>
                {
                    g.push(h)
                }
                _ => groups.push((h, vec![h])),
            }
        }
        let beyond = r.more && !caps.exact_totals;
        return Ok(html! {
            (chips(q, r.hits.iter().filter_map(|h| h.session.as_deref())))
            (warnings(&r.warnings))
            p.count { (if beyond { "more than " } else { "" }) (r.total) " messages" }
            ol.hits {
                @for (first, group) in &groups {
                    li {
                        div.session-label {
                            @let d = &first.doc;
                            a href=(session_link(&d.session_id, d.host.as_deref())) { (first.session.as_deref().map_or(d.session_name.as_deref().unwrap_or(&d.session_id), SessionRow::label)) }
                            (agent_mark(d.agent))
                            @if let Some(host) = &d.host { " " span.host { (host) } }
                            " " span.dim { (d.cwd.as_deref().unwrap_or("")) }
                        }
                        @for h in group { (hit_link(h)) }
                    }
                }
            }
            (more(p.q.as_deref().unwrap_or(""), p.sort.as_deref(), offset, r.hits.len(), if beyond { usize::MAX } else { r.total }))
        });
    }
    let found = api::search_sessions(reading, q, offset, FOUND)?;
    let rows: Vec<&SessionRow> = found.hits.iter().map(|h| &h.session).collect();
    Ok(html! {
        (chips(q, rows.iter().copied()))
        (warnings(&found.warnings))
        p.count { (found.total) " sessions" }
        ol.sessions {
            @for h in &found.hits {
                li.result {
                    div.session-label {
                        a.session href=(session_link(&h.session.session_id, h.session.host.as_deref())) { (h.session.label()) }
                        (agent_mark(h.session.agent))
                        span.dim { " " (h.session.cwd.as_deref().unwrap_or("")) " · " (short(h.session.last.as_deref())) }
                        span.matched {
                            " " (match h.matched { Matched::Name => "[name]", Matched::Title => "[title]", Matched::Messages => "[messages]" })
                            " " (h.matches) (if h.matches == 1 { " message" } else { " messages" })
                        }
                    }
                    @if let Some(hit) = &h.hit {
                        (hit_link(hit))
                    } @else {
                        div.snippet { (highlighted(&h.snippet, &h.highlights)) }
                    }
                }
            }
        }
        (more(p.q.as_deref().unwrap_or(""), None, offset, found.hits.len(), found.total))
    })
}

/// Every session, newest first, grouped by host and directory (in the
/// order of each group's newest session), forks nested under their
/// parent when both are listed in the same group. Parents and forks are
/// the sessions' families, as `sessions --json` gives them.
fn recent(reading: &Reading, offset: usize) -> Result<Markup, Failure> {
    let page = reading.source().sessions(&SessionList {
        offset,
        limit: RECENT,
        ..SessionList::default()
    })?;
    let total = page.total;
    // By (host, directory).
    type Group<'a> = ((Option<&'a str>, &'a str), Vec<&'a SessionRow>);
    let mut groups: Vec<Group> = Vec::new();
    for s in &page.sessions {
        let key = (
            s.host.as_deref(),
            s.cwd.as_deref().unwrap_or("(unknown directory)"),
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
                h2 { @if let Some(host) = host { span.host { (host) } " " } (dir) }
                @let listed = |path: &str| sessions.iter().any(|s| s.path == path);
                ul.sessions {
                    @for s in sessions.iter().filter(|s| parent_path(s).is_none_or(|p| !listed(p))) {
                        (session_item(s, sessions, 0))
                    }
                }
            }
        }
        (more("", None, offset, page.sessions.len(), total))
    })
}

/// The file of the session `s` was forked from, when that session is
/// indexed (or pushed) too.
fn parent_path(s: &SessionRow) -> Option<&str> {
    let parent = s.family.as_ref()?.parent.as_ref()?;
    parent.session.as_ref().map(|_| parent.path.as_str())
}

/// A session of the listing, its forks (listed beside it) below it.
fn session_item(s: &SessionRow, listed: &[&SessionRow], depth: usize) -> Markup {
    // In the listing's order (newest first), as the sessions around them.
    let of: Vec<&str> = s
        .family
        .as_ref()
        .map(|f| f.forks.iter().map(|f| f.path.as_str()).collect())
        .unwrap_or_default();
    let forks: Vec<&SessionRow> = listed
        .iter()
        .filter(|l| of.contains(&l.path.as_str()))
        .copied()
        .collect();
    html! {
        li {
            a.session href=(session_link(&s.session_id, s.host.as_deref())) { (s.label()) }
            span.dim { " · " (short(s.last.as_deref())) " · " (s.messages) " messages" }
            @if parent_path(s).is_some() && depth == 0 { " " span.mark { "fork" } }
            @if !forks.is_empty() && depth < 16 {
                ul.forks {
                    @for f in &forks { (session_item(f, listed, depth + 1)) }
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

/// A hit: a real link to its session at its entry.
pub fn hit_link(h: &Hit) -> Markup {
    html! {
        a.hit href=(doc_href(&h.doc)) {
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

/// The session page at a document (of its host, from the team
/// database): its line in view, its branch shown, its entry the target.
pub fn doc_href(d: &StoredDoc) -> String {
    format!(
        "/session/{}?{}line={}{}#{}",
        enc(&d.session_id),
        d.host
            .as_deref()
            .map_or(String::new(), |h| format!("host={}&", enc(h))),
        d.line,
        if d.active { "" } else { "&branch=all" },
        enc(&anchor(d.entry_id.as_deref(), d.line))
    )
}

/// A session's page (of `host`, from the team database).
pub fn session_link(id: &str, host: Option<&str>) -> String {
    session_href(id, host.map(|h| format!("host={}", enc(h))).as_deref())
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
pub fn activity_charts(activity: &crate::read::Activity) -> Markup {
    html! {
        div #chart-days { (charts::columns("Messages per day, last 90 days (UTC)", &activity.per_day)) }
        div #chart-dirs { (charts::rows("Sessions per directory", &activity.per_directory)) }
        div #chart-models { (charts::rows("Messages per model", &activity.per_model)) }
    }
}

/// `GET /stats`: the statistics and the three charts (with `--db`, each
/// host's numbers, and their sessions charted).
pub async fn stats(State(app): State<Arc<App>>) -> Response {
    respond(app.blocking(stats_page).await)
}

fn stats_page(app: &App) -> Page {
    let reading = match app.reading() {
        Ok(r) => r,
        Err(f) => return failure_page(app, &f),
    };
    let (stats, activity) = match api::numbers(&reading) {
        Ok(n) => n,
        Err(f) => return failure_page(app, &f),
    };
    let spent = cost_charts(&reading);
    let Stats {
        place,
        hosts,
        build,
        ..
    } = &stats;
    let per_host: Vec<(String, u64)> = hosts
        .iter()
        .flatten()
        .map(|h| (h.host.clone(), h.sessions))
        .collect();
    let body = html! {
        @match place {
            crate::read::Place::Index(_) => h1 { "What the index holds" },
            crate::read::Place::Database(_) => h1 { "What the team database holds" },
        }
        dl.numbers {
            @if let crate::read::Place::Database(db) = place {
                dt { "database" } dd #database-name { (db) }
            }
            @if let Some(hosts) = hosts { dt { "hosts" } dd #n-hosts { (hosts.len()) } }
            dt { "sessions" } dd #n-sessions { (stats.sessions) }
            dt { "messages" } dd #n-messages { (stats.messages) }
            @for (role, n) in &stats.messages_by_role {
                dt { (role) } dd { (n) }
            }
            @if hosts.is_some() { dt { "forks" } dd { (stats.forks) } }
            dt { "from" } dd { (short(stats.first.as_deref())) " to " (short(stats.last.as_deref())) }
            @if let (crate::read::Place::Index(dir), Some(built)) = (place, build) {
                dt { "index" } dd { (format!("{:.1} MB", built.index_bytes as f64 / 1e6)) " at " (dir) }
                dt { "built" } dd { (short(built.built_at.as_deref())) }
            }
        }
        @if let Some(hosts) = hosts {
            table.hosts {
                thead { tr { th { "host" } th { "sessions" } th { "messages" } th { "latest message" } th { "last push" } } }
                tbody {
                    @for h in hosts {
                        tr {
                            td.host { (h.host) }
                            td { (h.sessions) }
                            td { (h.messages) }
                            td { (short(h.last.as_deref())) }
                            td { (short(h.pushed_at.as_deref())) }
                        }
                    }
                }
            }
        }
        (activity_charts(&activity))
        @if hosts.is_some() {
            div #chart-hosts { (charts::rows("Sessions per host", &per_host)) }
        }
        (spent)
    };
    (StatusCode::OK, layout("Stats", app, body))
}

/// Days the cost charts show: the last this many days that recorded
/// usage, whenever that was (an index of old sessions is charted too).
const COST_DAYS: i32 = 90;

/// The stats page's charts of what Pi cost (`pi-index usage`'s numbers,
/// each entry of a family once, days in UTC): cost and tokens per day
/// over the [`COST_DAYS`] days up to the last that spent, cost per model,
/// per project and (the team database's) per host; or why there are
/// none.
fn cost_charts(reading: &crate::live::Reading) -> Markup {
    use crate::read::usage::{report, Grouping, UsageQuery};
    let source = reading.source();
    if !source.capabilities().usage {
        return html! {
            h2 { "What Pi cost" }
            p.note #cost-none { "This source holds no usage." }
        };
    }
    let query = UsageQuery::all;
    let data = match source.usage(query(Grouping::Daily).need()) {
        Ok(d) => d,
        Err(e) => return html! { h2 { "What Pi cost" } p.note #cost-none { (e.to_string()) } },
    };
    // Hosts whose sessions' usage is not pushed yet, said under the
    // charts (their next push sends it).
    let without = html! {
        @for (host, n) in &data.without_usage {
            p.note.without-usage {
                (n) " sessions of " (host) " were pushed before the team database held usage and are not counted: the next "
                code { "pi-index push" } " on " (host) " sends it."
            }
        }
    };
    let daily = report(&data, &query(Grouping::Daily));
    let by_day: std::collections::HashMap<jiff::civil::Date, (f64, f64)> = daily
        .rows
        .iter()
        .filter_map(|r| {
            let d: jiff::civil::Date = r.period.as_deref()?.parse().ok()?;
            Some((d, (r.spent.cost, r.spent.total_tokens as f64)))
        })
        .collect();
    let Some(last) = by_day.keys().max().copied() else {
        return html! { h2 { "What Pi cost" } p.note #cost-none { "No session recorded usage." } (without) };
    };
    let mut day = last
        .checked_sub(jiff::Span::new().days(COST_DAYS - 1))
        .unwrap_or(last);
    let (mut cost, mut tokens) = (Vec::new(), Vec::new());
    while day <= last {
        let (c, t) = by_day.get(&day).copied().unwrap_or((0.0, 0.0));
        cost.push((day.to_string(), c));
        tokens.push((day.to_string(), t));
        match day.tomorrow() {
            Ok(next) => day = next,
            Err(_) => break,
        }
    }
    let top = |grouping, label: fn(&crate::read::usage::UsageRow) -> Option<String>| {
        report(&data, &query(grouping))
            .rows
            .iter()
            .take(10)
            .map(|r| (label(r).unwrap_or_default(), r.spent.cost))
            .collect::<Vec<_>>()
    };
    let models = top(Grouping::Model, |r| r.model.clone());
    let projects = top(Grouping::Project, |r| r.project.clone());
    let hosts = source
        .capabilities()
        .hosts
        .then(|| top(Grouping::Host, |r| r.host.clone()));
    let dollars = |n: f64| format!("${n:.2}");
    let count = |n: f64| format!("{n}");
    html! {
        h2 { "What Pi cost" }
        p { "As " code { "pi-index usage" } " counts it: each entry of a family of forks once, days in UTC." }
        div #chart-cost-days { (charts::columns_of("Cost per day, the 90 days to the last that spent (UTC)", &cost, &dollars)) }
        div #chart-tokens-days { (charts::columns_of("Tokens per day", &tokens, &count)) }
        div #chart-cost-models { (charts::rows_of("Cost per model", &models, &dollars)) }
        div #chart-cost-projects { (charts::rows_of("Cost per project", &projects, &dollars)) }
        @if let Some(hosts) = hosts {
            div #chart-cost-hosts { (charts::rows_of("Cost per host", &hosts, &dollars)) }
        }
        (without)
    }
}
