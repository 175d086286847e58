//! The session page: a session file read as Pi's own export reads it.
//!
//! The index names the file (a URL names a session by its id, never by a
//! path). The file is read twice over, both bounded:
//!
//! 1. its **tree** ([`Skeleton`], built by [`crate::pi::tree`]: one pass
//!    over the lines), kept for the file's size and time in a small
//!    cache: ~60 bytes an entry, a few MB for 50,000 messages;
//! 2. a **window** of at most [`WINDOW`] entries of the chosen view (the
//!    active branch, a branch by its last entry, or every entry in file
//!    order), each line read at its offset and parsed alone; the page's
//!    script fetches the next window as the reader scrolls. A line over
//!    [`MAX_DRAWN`] bytes is named, not drawn.
//!
//! Entries are drawn as what they are: messages (Markdown; thinking and
//! tool output folded; a tool call as one row with its main argument,
//! opened to its arguments and its result), bash executions, custom
//! messages, compaction and branch summaries, labels, `context_edit`
//! marks, model changes. Every entry has its anchor (its entry id).

use std::collections::HashMap;
use std::fs::File;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;
use serde_json::Value;

use crate::output::text::{dollars, thousands};
use crate::pi::tree::{Entry, Skeleton, View};
use crate::read::usage::SessionCost;
use crate::read::{ReadError, SessionRow, Source, StoredDoc, Window};

use super::api;
use super::app::{App, Failure};
use super::extract::{Args, Id};
use super::markdown::to_html;
use super::pages::{self, anchor, enc, layout, session_link, short, Page};

/// Entries drawn per window.
pub const WINDOW: usize = 200;
/// A line longer than this is named on the page, not parsed and drawn
/// (download the raw file for it).
pub const MAX_DRAWN: u64 = 8 << 20;
/// An inline image is drawn as a thumbnail up to this many bytes of
/// base64; a bigger one is named.
pub const MAX_IMAGE: usize = 2 << 20;
/// Tool output shown per result, in bytes (the rest is in the raw file).
pub const MAX_OUTPUT: usize = 100 << 10;

/// Query parameters of the session page.
#[derive(Debug, Default, Deserialize)]
pub struct SessionParams {
    /// `all`: every entry in file order.
    pub branch: Option<String>,
    /// Show the branch that ends at this entry id.
    pub leaf: Option<String>,
    /// Start the window near this line (a hit's).
    pub line: Option<u64>,
    /// Start the window at this position of the view.
    pub from: Option<usize>,
    /// Only the window's entries (for the page's script).
    pub fragment: Option<String>,
    /// With `--db`: the host whose session it is.
    pub host: Option<String>,
    /// `/session/?id=`: the session (an id a path cannot carry, see
    /// [`pages::session_href`]).
    pub id: Option<String>,
    /// `/session/?id=&raw=1`: its raw file.
    pub raw: Option<String>,
}

/// `GET /session/ID`.
pub async fn page(
    State(app): State<Arc<App>>,
    Id(id): Id,
    Args(p): Args<SessionParams>,
) -> Response {
    pages::respond(app.blocking(move |app| session_page(app, &id, &p)).await)
}

/// `GET /session/?id=ID` (and `&raw=1`): the session page (or its raw
/// file) of an id given in the query string.
pub async fn by_query(State(app): State<Arc<App>>, Args(p): Args<SessionParams>) -> Response {
    let Some(id) = p.id.clone() else {
        return super::extract::bad_request("/session/", "give the session's id: /session/?id=ID");
    };
    if p.raw.is_some() {
        return raw(State(app), Id(id), Args(p)).await;
    }
    pages::respond(app.blocking(move |app| session_page(app, &id, &p)).await)
}

fn session_page(app: &App, id: &str, p: &SessionParams) -> Page {
    match draw(app, id, p) {
        Ok(page) => page,
        Err(f) => pages::failure_page(app, &f),
    }
}

/// The page of the session `id` (of `p.host`): drawn from its file, tree
/// and all, where the source has it; else its indexed messages, a window
/// at a time.
fn draw(app: &App, id: &str, p: &SessionParams) -> Result<Page, Failure> {
    let reading = app.reading()?;
    let source = reading.source();
    let row = match source.session(id, p.host.as_deref()) {
        Err(ReadError::Ambiguous(_)) if p.host.is_none() => {
            return choose_host(app, source, id);
        }
        found => found?,
    };
    let lineage = lineage_of(source, &row)?;
    // What it cost, for the header (not for a window of entries the
    // page's script fetches): the records of the sessions it is counted
    // with, where the source holds usage.
    let cost = if p.fragment.is_none() && source.capabilities().usage {
        source.session_usage(&row)?
    } else {
        None
    };
    if source.capabilities().files {
        file_page(app, source, row, &lineage, cost.as_ref(), p)
    } else {
        messages_page(app, source, row, &lineage, cost.as_ref(), p)
    }
}

/// The page of a session whose file the source has: its tree, and a
/// window of its entries drawn from the file.
fn file_page(
    app: &App,
    source: &dyn Source,
    row: SessionRow,
    lineage: &Lineage,
    cost: Option<&SessionCost>,
    p: &SessionParams,
) -> Result<Page, Failure> {
    let (file, _) = source.file(&row)?;
    let sk = app.trees.get(&row.path, &file).map_err(|e| {
        Failure::NotFound(format!(
            "the session's file {} cannot be read ({e}): it may have moved; the next refresh of the index finds it",
            row.path
        ))
    })?;
    let view = match (&p.leaf, p.branch.as_deref()) {
        (Some(leaf), _) => match sk.find(leaf) {
            Some(i) => View::Leaf(i),
            None => View::Active,
        },
        (None, Some("all")) => View::All,
        _ => View::Active,
    };
    let order = sk.view(&view);
    let from = match (p.from, p.line) {
        (Some(f), _) => f.min(order.len()),
        (None, Some(line)) => {
            let at = order.partition_point(|&i| sk.entries[i as usize].line < line);
            at.saturating_sub(WINDOW / 10)
        }
        _ => 0,
    };
    let to = (from + WINDOW).min(order.len());
    let base = view_query(&view, &sk);
    let entries = window(&sk, &file, &view, &order[from..to]);
    let next = (to < order.len()).then(|| {
        let q = join_query(&base, &format!("from={to}"));
        html! {
            a.more href=(pages::session_href(&row.session_id, Some(&q)))
                data-fragment=(pages::session_href(&row.session_id, Some(&join_query(&q, "fragment=1")))) {
                "later entries (" (to) " of " (order.len()) " shown)"
            }
        }
    });
    if p.fragment.is_some() {
        return Ok((
            StatusCode::OK,
            html! { (entries) @if let Some(n) = next { (n) } },
        ));
    }
    let body = html! {
        (head(&row, &sk, lineage, cost, &view))
        @if from > 0 {
            a.earlier href=(pages::session_href(&row.session_id, Some(&join_query(&base, &format!("from={}", from.saturating_sub(WINDOW)))))) {
                "earlier entries (" (from) " before these)"
            }
        }
        div #entries { (entries) @if let Some(n) = next { (n) } }
    };
    Ok((StatusCode::OK, layout(row.label(), app, body)))
}

/// The page of a session whose file the source does not have (the team
/// database: it stays on its host): its indexed messages in file order, a
/// window at a time (its active branch, or every branch).
fn messages_page(
    app: &App,
    source: &dyn Source,
    s: SessionRow,
    lineage: &Lineage,
    cost: Option<&SessionCost>,
    p: &SessionParams,
) -> Result<Page, Failure> {
    let active = api::active_only(p.branch.as_deref())?;
    let from = match (p.from, p.line) {
        (Some(f), _) => f,
        (None, Some(line)) => source
            .position(&s, active, line)?
            .saturating_sub(WINDOW / 10),
        _ => 0,
    };
    let w = Window {
        active_only: active,
        offset: from,
        limit: WINDOW,
    };
    let (total, docs) = source.documents(&s, w)?;
    let branch = if active { "" } else { "&branch=all" };
    let host = s.host.clone().unwrap_or_default();
    let base = format!("host={}{branch}", enc(&host));
    let to = from + docs.len();
    let href = |q: &str| pages::session_href(&s.session_id, Some(q));
    let next = (to < total).then(|| {
        let q = format!("{base}&from={to}");
        html! {
            a.more href=(href(&q)) data-fragment=(href(&format!("{q}&fragment=1"))) {
                "later messages (" (to) " of " (total) " shown)"
            }
        }
    });
    let messages = html! {
        @for d in &docs { (indexed_message(d, !active)) }
    };
    if p.fragment.is_some() {
        return Ok((
            StatusCode::OK,
            html! { (messages) @if let Some(n) = next { (n) } },
        ));
    }
    let body = html! {
        (messages_head(&s, lineage, cost, active))
        @if from > 0 {
            a.earlier href=(href(&format!("{base}&from={}", from.saturating_sub(WINDOW)))) {
                "earlier messages (" (from) " before these)"
            }
        }
        div #entries { (messages) @if let Some(n) = next { (n) } }
    };
    Ok((StatusCode::OK, layout(s.label(), app, body)))
}

/// The page of an id that several hosts pushed: which host's?
fn choose_host(app: &App, source: &dyn Source, id: &str) -> Result<Page, Failure> {
    let found = source.sessions_with_id(id, None)?;
    let body = html! {
        h1 { "Which host's session?" }
        p { (found.len()) " hosts pushed a session with the id " code { (id) } ":" }
        ul.hosts {
            @for s in &found {
                li {
                    a.session href=(session_link(&s.session_id, s.host.as_deref())) { span.host { (s.host.as_deref().unwrap_or("")) } " " (s.label()) }
                    span.dim { " · " (s.cwd.as_deref().unwrap_or("")) " · " (short(s.last.as_deref())) " · " (s.messages) " messages" }
                }
            }
        }
    };
    Ok((StatusCode::MULTIPLE_CHOICES, layout(id, app, body)))
}

/// What the messages page says of a session: its host, its place, its
/// family (its relatives on the same host), and how to resume it on its
/// host.
fn messages_head(
    row: &SessionRow,
    lineage: &Lineage,
    cost: Option<&SessionCost>,
    active: bool,
) -> Markup {
    let host = row.host.as_deref().unwrap_or_default();
    let (parent, forks) = (&lineage.parent, &lineage.forks);
    let cwd = row.cwd.as_deref().unwrap_or(".");
    let resume = format!(
        "cd {} && {} {} {}",
        crate::output::shell_quote(cwd),
        row.agent.command(),
        row.agent.resume_flag(),
        crate::output::shell_quote(&row.path)
    );
    let base = format!("host={}", enc(host));
    html! {
        section.session-head {
            h1 { (row.label()) }
            dl.meta {
                dt { "host" } dd #host .host { (host) }
                dt { "directory" } dd.cwd { (cwd) }
                dt { "agent" } dd.agent { (row.agent.name()) }
                @if !row.models.is_empty() { dt { "models" } dd { (row.models.join(", ")) } }
                dt { "dates" } dd { (short(row.started.as_deref())) " to " (short(row.last.as_deref())) }
                dt { "messages" } dd #n-messages { (row.messages) }
                (cost_meta(cost))
                dt { "file" } dd.file { (row.path) }
                @if let Some((found, path)) = &parent {
                    dt { "forked from" }
                    dd #forked-from {
                        @match found {
                            Some(p) => a href=(session_link(&p.session_id, p.host.as_deref())) { (p.label()) },
                            None => span { (path) " (not in the database)" },
                        }
                    }
                }
                @if !forks.is_empty() {
                    dt { "forks" }
                    dd #forks {
                        @for (i, f) in forks.iter().enumerate() {
                            @if i > 0 { ", " }
                            a href=(session_link(&f.session_id, f.host.as_deref())) { (f.label()) }
                        }
                    }
                }
            }
            div.actions {
                button.copy type="button" data-copy=(resume) title="copy the command" { "Resume on " (host) }
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
            p.note { "The team database holds the text pi-index indexed of each message: tool calls, their output and the session's tree are in its file on " (host) "." }
        }
    }
}

/// A message, drawn as the local session page draws one (its text as
/// Markdown).
fn indexed_message(doc: &StoredDoc, show_branch: bool) -> Markup {
    let a = anchor(doc.entry_id.as_deref(), doc.line);
    let role = doc.role.as_str();
    html! {
        article.entry.(role) id=(a) data-line=(doc.line) {
            (entry_head(role, doc.timestamp.as_deref(), doc.active, &a, show_branch))
            @if let Some(model) = &doc.model { span.model { (model) } }
            div.md { (PreEscaped(to_html(&doc.text))) }
        }
    }
}

fn view_query(view: &View, sk: &Skeleton) -> String {
    match view {
        View::Active => String::new(),
        View::All => "branch=all".into(),
        View::Leaf(i) => format!(
            "leaf={}",
            enc(sk.entries[*i as usize].id.as_deref().unwrap_or(""))
        ),
    }
}

fn join_query(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_owned()
    } else {
        format!("{a}&{b}")
    }
}

/// The session this one was forked from (the session, or the path its
/// header names when the source does not hold it), and its forks (at
/// most 50): the families, as `sessions --json` and `show` give them
/// (`row` is that row, its family filled in).
fn lineage_of(source: &dyn Source, row: &SessionRow) -> Result<Lineage, Failure> {
    let Some(family) = &row.family else {
        return Ok(Lineage {
            parent: None,
            forks: Vec::new(),
        });
    };
    let host = row.host.as_deref();
    let parent = match &family.parent {
        Some(p) if p.session.is_some() => Some((source.session_at(host, &p.path)?, p.path.clone())),
        Some(p) => Some((None, p.path.clone())),
        None => None,
    };
    let mut forks = Vec::with_capacity(family.forks.len().min(50));
    for f in family.forks.iter().take(50) {
        forks.extend(source.session_at(host, &f.path)?);
    }
    Ok(Lineage { parent, forks })
}

/// What the session page says of a session's forks.
struct Lineage {
    parent: Option<(Option<SessionRow>, String)>,
    forks: Vec<SessionRow>,
}

/// What a session cost, for its header, as `pi-index usage session`
/// counts it: its file's total and tokens (what Pi's `/session` shows)
/// and, when some of its entries were copied from another session (a
/// fork's from its parent), what it spent beyond them. Nothing when the
/// source holds no usage or the session recorded none: no zeros stand
/// for what is not known.
fn cost_meta(cost: Option<&SessionCost>) -> Markup {
    let Some(c) = cost else {
        return html! {};
    };
    html! {
        dt { "cost" }
        dd #cost data-cost=(c.cost) data-own-cost=(c.own_cost) data-tokens=(c.total_tokens) {
            (dollars(c.cost)) " · " (thousands(c.total_tokens)) " tokens"
            @if c.own_cost != c.cost {
                " · " span #own-cost { (dollars(c.own_cost)) } " spent beyond the entries copied into it"
            }
        }
    }
}

fn head(
    row: &SessionRow,
    sk: &Skeleton,
    lineage: &Lineage,
    cost: Option<&SessionCost>,
    view: &View,
) -> Markup {
    let cwd = row.cwd.as_deref().unwrap_or(".");
    let resume = format!(
        "cd {} && {} {} {}",
        crate::output::shell_quote(cwd),
        row.agent.command(),
        row.agent.resume_flag(),
        crate::output::shell_quote(&row.path)
    );
    let file_name = std::path::Path::new(&row.path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let branches = sk.tips.len();
    html! {
        section.session-head {
            h1 { (row.label()) }
            dl.meta {
                dt { "directory" } dd.cwd { (cwd) }
                dt { "agent" } dd.agent { (row.agent.name()) }
                @if !row.models.is_empty() { dt { "models" } dd { (row.models.join(", ")) } }
                dt { "dates" } dd { (short(row.started.as_deref())) " to " (short(row.last.as_deref())) }
                dt { "messages" } dd #n-messages { (row.messages) }
                dt { "tool calls" } dd #n-tools { (sk.tool_results) }
                dt { "entries" } dd { (sk.entries.len()) }
                (cost_meta(cost))
                dt { "file" } dd.file { (file_name) }
                @if let Some((found, path)) = &lineage.parent {
                    dt { "forked from" }
                    dd #forked-from {
                        @match found {
                            Some(p) => a href=(pages::session_href(&p.session_id, None)) { (p.label()) },
                            None => span { (path) " (not in the index)" },
                        }
                    }
                }
                @if !lineage.forks.is_empty() {
                    dt { "forks" }
                    dd #forks {
                        @for (i, f) in lineage.forks.iter().enumerate() {
                            @if i > 0 { ", " }
                            a href=(pages::session_href(&f.session_id, None)) { (f.label()) }
                        }
                    }
                }
            }
            div.actions {
                button.copy type="button" data-copy=(resume) title="copy the command" { "Resume in " (row.agent.name()) }
                code.resume { (resume) }
                a.raw href=(pages::raw_href(&row.session_id)) download=(file_name) { "Raw JSONL" }
            }
            div.actions {
                @if *view == View::Active {
                    span.on { "active branch" }
                } @else {
                    a #view-active href=(pages::session_href(&row.session_id, None)) { "active branch" }
                }
                @if *view == View::All {
                    span.on { "all branches (" (branches) ")" }
                } @else {
                    a #view-all href=(pages::session_href(&row.session_id, Some("branch=all"))) { "all branches (" (branches) ")" }
                }
                button #toggle-thinking type="button" { "show all thinking" }
                button #toggle-tools type="button" { "show all tool output" }
            }
            @if *view != View::Active && branches > 1 {
                ol.branches {
                    @for &t in &sk.tips {
                        @let e = &sk.entries[t as usize];
                        li {
                            a.branch href=(pages::session_href(&row.session_id, Some(&format!("leaf={}", enc(e.id.as_deref().unwrap_or("")))))) data-leaf=(e.id.as_deref().unwrap_or("")) {
                                "branch ending at line " (e.line)
                            }
                            @if e.active { " " span.mark { "active" } } @else { " " span.mark.abandoned { "abandoned" } }
                            @if *view == View::Leaf(t) { " " span.mark { "shown" } }
                        }
                    }
                }
            }
        }
    }
}

/// One window of entries, drawn.
fn window(sk: &Skeleton, file: &File, view: &View, ids: &[u32]) -> Markup {
    let parsed: Vec<(&Entry, Option<Value>)> = ids
        .iter()
        .map(|&i| {
            let e = &sk.entries[i as usize];
            let v = read_entry(file, e);
            (e, v)
        })
        .collect();
    // Results drawn inside their tool call when both are in this window.
    let mut results: HashMap<&str, &Value> = HashMap::new();
    for (_, v) in &parsed {
        if let Some(m) = v.as_ref().and_then(|v| v.get("message")) {
            if m.get("role").and_then(Value::as_str) == Some("toolResult") {
                if let Some(id) = m.get("toolCallId").and_then(Value::as_str) {
                    results.insert(id, m);
                }
            }
        }
    }
    let mut called: Vec<&str> = Vec::new();
    for (_, v) in &parsed {
        for b in blocks(v.as_ref().and_then(|v| v.get("message"))) {
            if let Some(id) = call_id(b) {
                if results.contains_key(id) {
                    called.push(id);
                }
            }
        }
    }
    let show_branch = *view == View::All;
    html! {
        @for (e, v) in &parsed {
            (entry(e, v.as_ref(), &results, &called, show_branch))
        }
    }
}

fn read_entry(f: &File, e: &Entry) -> Option<Value> {
    if e.len > MAX_DRAWN {
        return None;
    }
    let mut buf = vec![0u8; e.len as usize];
    read_exact_at(f, &mut buf, e.offset).ok()?;
    serde_json::from_slice(&buf).ok()
}

/// Fill `buf` from `f` at `offset`, without a shared cursor: the page's
/// entries are read from one open file.
#[cfg(unix)]
fn read_exact_at(f: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
}

/// Windows reads at an offset with `seek_read`, which may read less than
/// asked: read until full.
#[cfg(windows)]
fn read_exact_at(f: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match f.seek_read(buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

fn blocks(message: Option<&Value>) -> impl Iterator<Item = &Value> {
    message
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn call_id(b: &Value) -> Option<&str> {
    if b.get("type").and_then(Value::as_str) != Some("toolCall") {
        return None;
    }
    b.get("id")
        .or_else(|| b.get("toolCallId"))
        .and_then(Value::as_str)
}

fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

fn entry(
    e: &Entry,
    v: Option<&Value>,
    results: &HashMap<&str, &Value>,
    called: &[&str],
    show_branch: bool,
) -> Markup {
    let a = anchor(e.id.as_deref(), e.line);
    let Some(v) = v else {
        let why = if e.len > MAX_DRAWN {
            format!(
                "a line of {:.1} MB: too long to draw here (the raw JSONL holds it)",
                e.len as f64 / 1e6
            )
        } else {
            "a damaged line (not one JSON object): the raw JSONL holds it".into()
        };
        return html! {
            article.entry.damaged id=(a) data-line=(e.line) {
                (entry_head("line", None, e.active, &a, show_branch))
                p.note { (why) }
            }
        };
    };
    let ty = str_of(v, "type").unwrap_or("");
    let time = str_of(v, "timestamp");
    match ty {
        "message" => {
            let Some(m) = v.get("message") else {
                return html! {};
            };
            message(e, &a, m, time, results, called, show_branch)
        }
        "compaction" | "branch_summary" => {
            let label = if ty == "compaction" {
                "compaction"
            } else {
                "branch summary"
            };
            html! {
                article.entry.summary id=(a) data-line=(e.line) {
                    (entry_head(label, time, e.active, &a, show_branch))
                    details.summary-text {
                        summary { (label) ": what was summarized" }
                        div.md { (PreEscaped(to_html(str_of(v, "summary").unwrap_or("")))) }
                    }
                }
            }
        }
        "custom_message" => html! {
            article.entry.custom id=(a) data-line=(e.line) {
                (entry_head(&format!("custom: {}", str_of(v, "customType").unwrap_or("?")), time, e.active, &a, show_branch))
                div.md { (PreEscaped(to_html(&content_text(v.get("content"))))) }
            }
        },
        "label" => html! {
            article.entry.mark id=(a) data-line=(e.line) {
                (entry_head("label", time, e.active, &a, show_branch))
                p {
                    @match str_of(v, "label") {
                        Some(l) => { "label " q { (l) } " on " },
                        None => "label cleared on ",
                    }
                    @let t = str_of(v, "targetId").unwrap_or("");
                    a href={"#" (enc(t))} { (t) }
                }
            }
        },
        "context_edit" => html! {
            article.entry.mark id=(a) data-line=(e.line) {
                (entry_head("context edit", time, e.active, &a, show_branch))
                p {
                    @let t = str_of(v, "targetId").unwrap_or("");
                    @if v.get("replacement").is_none_or(Value::is_null) { "omitted from the model's context: " } @else { "replaced in the model's context: " }
                    a href={"#" (enc(t))} { (t) }
                }
            }
        },
        "model_change" => html! {
            article.entry.mark id=(a) data-line=(e.line) {
                (entry_head("model", time, e.active, &a, show_branch))
                p { (str_of(v, "provider").unwrap_or("")) " " (str_of(v, "modelId").or_else(|| str_of(v, "model")).unwrap_or("")) }
            }
        },
        "thinking_level_change" => html! {
            article.entry.mark id=(a) data-line=(e.line) {
                (entry_head("thinking level", time, e.active, &a, show_branch))
                p { (str_of(v, "thinkingLevel").unwrap_or("")) }
            }
        },
        // Oh My Pi's record of a rename (its title slot holds the name).
        "title_change" => html! {
            article.entry.mark id=(a) data-line=(e.line) {
                (entry_head("name", time, e.active, &a, show_branch))
                p { "named " q { (str_of(v, "title").unwrap_or("")) } }
            }
        },
        // Oh My Pi: a subagent's system prompt and task.
        "session_init" => html! {
            article.entry.system id=(a) data-line=(e.line) {
                (entry_head("subagent", time, e.active, &a, show_branch))
                details.tool {
                    summary { span.tool-name { "system prompt" } " " span.preview { (one_line(str_of(v, "task").unwrap_or(""), 160)) } }
                    pre.result { (capped(str_of(v, "systemPrompt").unwrap_or(""))) }
                }
            }
        },
        "session_info" => html! {
            article.entry.mark id=(a) data-line=(e.line) {
                (entry_head("name", time, e.active, &a, show_branch))
                p { @match str_of(v, "name").filter(|n| !n.is_empty()) { Some(n) => { "named " q { (n) } }, None => "name cleared" } }
            }
        },
        // Extension state, usage records, types newer than this code:
        // nothing a person reads, but the anchor stays.
        _ => html! { div.entry.hidden id=(a) data-line=(e.line) {} },
    }
}

/// The head of an entry: its role, its time, whether its branch was
/// abandoned (when `show_branch`), its anchor `a`.
pub fn entry_head(
    role: &str,
    time: Option<&str>,
    active: bool,
    a: &str,
    show_branch: bool,
) -> Markup {
    html! {
        header.entry-head {
            span.role { (role) }
            @if let Some(t) = time { " " time.time datetime=(t) { (short(Some(t))) } }
            @if show_branch && !active { " " span.mark.abandoned { "abandoned branch" } }
            " " a.anchor href={"#" (enc(a))} title="link to this entry" { "#" }
            " " button.copy-link type="button" data-anchor=(a) { "copy link" }
        }
    }
}

/// A command the user ran itself (Pi's `!` bash, Oh My Pi's `$` Python),
/// under `head`: the text of its `source` field, its output, and its
/// exit code, drawn as failed when not 0 or cancelled.
fn execution(e: &Entry, a: &str, m: &Value, head: Markup, source: &str) -> Markup {
    let code = m.get("exitCode").and_then(Value::as_i64);
    let failed =
        code.is_some_and(|c| c != 0) || m.get("cancelled").and_then(Value::as_bool) == Some(true);
    let text = str_of(m, source).unwrap_or("");
    html! {
        article.entry.bash id=(a) data-line=(e.line) {
            (head)
            details.tool.error[failed] {
                summary { span.tool-name { "$" } " " span.preview { (one_line(text, 160)) } }
                pre.args { (text) }
                pre.result { (capped(str_of(m, "output").unwrap_or(""))) }
                @if let Some(c) = code { p.note { "exit code " (c) } }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn message(
    e: &Entry,
    a: &str,
    m: &Value,
    time: Option<&str>,
    results: &HashMap<&str, &Value>,
    called: &[&str],
    show_branch: bool,
) -> Markup {
    let role = str_of(m, "role").unwrap_or("");
    match role {
        "user" | "assistant" => {
            let model = (role == "assistant").then(|| str_of(m, "model")).flatten();
            let error = str_of(m, "errorMessage").or_else(|| {
                (str_of(m, "stopReason") == Some("error")).then_some("the model's reply failed")
            });
            html! {
                article.entry.(role) id=(a) data-line=(e.line) {
                    (entry_head(role, time, e.active, a, show_branch))
                    @if let Some(model) = model { span.model { (model) } }
                    @match m.get("content") {
                        Some(Value::String(s)) => div.md { (PreEscaped(to_html(s))) },
                        Some(Value::Array(blocks)) => {
                            @for b in blocks { (block(b, results)) }
                        },
                        _ => {},
                    }
                    @if let Some(err) = error { p.error { (err) } }
                }
            }
        }
        "toolResult" => {
            if str_of(m, "toolCallId").is_some_and(|id| called.contains(&id)) {
                // Drawn inside its call; the anchor stays here.
                return html! { div.entry.paired id=(a) data-line=(e.line) {} };
            }
            html! {
                article.entry.tool-result id=(a) data-line=(e.line) {
                    (entry_head("tool result", time, e.active, a, show_branch))
                    (tool_row(str_of(m, "toolName").unwrap_or("tool"), None, Some(m)))
                }
            }
        }
        "bashExecution" => execution(
            e,
            a,
            m,
            entry_head("bash", time, e.active, a, show_branch),
            "command",
        ),
        "custom" | "hookMessage" => html! {
            article.entry.custom id=(a) data-line=(e.line) {
                (entry_head(&format!("custom: {}", str_of(m, "customType").unwrap_or("?")), time, e.active, a, show_branch))
                div.md { (PreEscaped(to_html(&content_text(m.get("content"))))) }
            }
        },
        // Oh My Pi: what it injects into the conversation itself.
        "developer" => html! {
            article.entry.custom id=(a) data-line=(e.line) {
                (entry_head("developer", time, e.active, a, show_branch))
                div.md { (PreEscaped(to_html(&content_text(m.get("content"))))) }
            }
        },
        // Oh My Pi: `$ code` run by the user, drawn as `!` bash is.
        "pythonExecution" => execution(
            e,
            a,
            m,
            entry_head("python", time, e.active, a, show_branch),
            "code",
        ),
        // Oh My Pi: files an `@path` mention read into the conversation.
        "fileMention" => html! {
            article.entry.tool-result id=(a) data-line=(e.line) {
                (entry_head("file mention", time, e.active, a, show_branch))
                @for f in m.get("files").and_then(Value::as_array).into_iter().flatten() {
                    details.tool {
                        summary { span.tool-name { "@" } " " span.preview { (str_of(f, "path").unwrap_or("")) } }
                        pre.result { (capped(str_of(f, "content").unwrap_or(""))) }
                    }
                }
            }
        },
        "branchSummary" | "compactionSummary" => html! {
            article.entry.summary id=(a) data-line=(e.line) {
                (entry_head("summary", time, e.active, a, show_branch))
                div.md { (PreEscaped(to_html(str_of(m, "summary").unwrap_or("")))) }
            }
        },
        "system" => html! {
            article.entry.system id=(a) data-line=(e.line) {
                (entry_head("system", time, e.active, a, show_branch))
                details.tool {
                    summary { span.tool-name { "system prompt" } }
                    pre.result { (capped(&serde_json::to_string_pretty(m.get("sections").unwrap_or(&Value::Null)).unwrap_or_default())) }
                }
            }
        },
        _ => html! { div.entry.hidden id=(a) data-line=(e.line) {} },
    }
}

fn block(b: &Value, results: &HashMap<&str, &Value>) -> Markup {
    match str_of(b, "type").unwrap_or("") {
        "text" => html! { div.md { (PreEscaped(to_html(str_of(b, "text").unwrap_or("")))) } },
        "thinking" => {
            let redacted = b.get("redacted").and_then(Value::as_bool) == Some(true);
            html! {
                details.thinking {
                    summary { "thinking" @if redacted { " (redacted)" } }
                    div.md { (PreEscaped(to_html(str_of(b, "thinking").unwrap_or("")))) }
                }
            }
        }
        "toolCall" => {
            let name = str_of(b, "name")
                .or_else(|| str_of(b, "toolName"))
                .unwrap_or("tool");
            let args = b.get("arguments").or_else(|| b.get("input"));
            let result = call_id(b).and_then(|id| results.get(id).copied());
            tool_row(name, args, result)
        }
        "image" => image(b),
        _ => html! {},
    }
}

/// A tool call as one row: its name and main argument; opened, its
/// arguments and its result (errors styled, an edit's diff drawn).
fn tool_row(name: &str, args: Option<&Value>, result: Option<&Value>) -> Markup {
    let failed = result
        .and_then(|r| r.get("isError"))
        .and_then(Value::as_bool)
        == Some(true);
    let diff = result
        .and_then(|r| r.get("details"))
        .and_then(|d| d.get("diff"))
        .and_then(Value::as_str);
    html! {
        details.tool.error[failed] data-tool=(name) {
            summary {
                span.tool-name { (name) }
                " " span.preview { (args.map_or(String::new(), preview)) }
                @if failed { " " span.mark.error { "error" } }
            }
            @if let Some(a) = args {
                pre.args { (serde_json::to_string_pretty(a).unwrap_or_default()) }
            }
            @if let Some(d) = diff {
                pre.diff {
                    @for l in d.lines() {
                        @let class = if l.starts_with('+') { "add" } else if l.starts_with('-') { "del" } else { "ctx" };
                        span class=(class) { (l) "\n" }
                    }
                }
            }
            @if let Some(r) = result {
                pre.result { (capped(&content_text(r.get("content").or_else(|| r.get("output"))))) }
                @for b in blocks(Some(r)) {
                    @if str_of(b, "type") == Some("image") { (image(b)) }
                }
            }
        }
    }
}

/// The one-line preview of a tool call: its main argument, as Pi Web
/// shows it.
pub fn preview(args: &Value) -> String {
    for k in ["command", "path", "file_path", "pattern", "query", "url"] {
        if let Some(s) = args.get(k).and_then(Value::as_str) {
            return one_line(s, 160);
        }
    }
    match args {
        Value::Object(o) => o
            .values()
            .find_map(Value::as_str)
            .map_or_else(|| one_line(&args.to_string(), 160), |s| one_line(s, 160)),
        other => one_line(&other.to_string(), 160),
    }
}

fn one_line(s: &str, n: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(n + 1)
        .collect();
    crate::output::text::ellipsized(&flat, n)
}

fn capped(s: &str) -> String {
    if s.len() <= MAX_OUTPUT {
        return s.to_owned();
    }
    let mut end = MAX_OUTPUT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… ({} more bytes: the raw JSONL holds them)",
        &s[..end],
        s.len() - end
    )
}

/// A message's or a result's text: a string, or its text blocks joined.
fn content_text(c: Option<&Value>) -> String {
    match c {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter(|b| str_of(b, "type") == Some("text"))
            .filter_map(|b| str_of(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// An inline image as a thumbnail (raster types, up to [`MAX_IMAGE`]);
/// anything else is named.
fn image(b: &Value) -> Markup {
    let mime = str_of(b, "mimeType").unwrap_or("");
    let data = str_of(b, "data").unwrap_or("");
    let raster = matches!(
        mime,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    );
    let base64 = data
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='));
    if raster && base64 && !data.is_empty() && data.len() <= MAX_IMAGE {
        html! {
            a.thumb href={"data:" (mime) ";base64," (data)} target="_blank" rel="noopener noreferrer" {
                img.thumb alt={"image (" (mime) ")"} src={"data:" (mime) ";base64," (data)};
            }
        }
    } else {
        html! {
            span.image-note {
                "image " (if mime.is_empty() { "of no type" } else { mime }) ", "
                (format!("{:.0} KB", data.len() as f64 * 0.75 / 1024.0)) ": not drawn"
            }
        }
    }
}

/// `GET /session/ID/raw`: the session's file as the index read it, to
/// download: at most the length it had then. The team database does not
/// have it (404, saying where it is).
pub async fn raw(
    State(app): State<Arc<App>>,
    Id(id): Id,
    Args(p): Args<SessionParams>,
) -> Response {
    let opened = app
        .blocking(move |app| {
            let reading = app.reading()?;
            let source = reading.source();
            let row = source.session(&id, p.host.as_deref())?;
            let (file, len) = source.file(&row)?;
            Ok::<_, Failure>((row, file, len))
        })
        .await;
    let (row, file, len) = match opened {
        Ok(Ok(r)) => r,
        Ok(Err(f)) => return (f.status(), format!("pi-index: {}\n", f.message())).into_response(),
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    };
    let name: String = std::path::Path::new(&row.path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session.jsonl".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    use tokio::io::AsyncReadExt;
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(
        tokio::fs::File::from_std(file).take(len),
    ));
    (
        [
            (header::CONTENT_TYPE, "application/x-ndjson".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        body,
    )
        .into_response()
}
