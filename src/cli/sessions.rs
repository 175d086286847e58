//! `pi-index sessions [QUERY]`: one line per session, newest first; with a
//! query, the sessions it finds, best first (by name, first user message
//! and matching messages: see `pi_index::search::sessions`), each with its
//! best hit's snippet.

use std::io::Write;
use std::path::Path;

use clap::Args;

use pi_index::index::PiIndex;
use pi_index::search::query::{normalize_dir, parse_when, Filters};
use pi_index::search::{Matched, SessionQuery, SessionRow};

use pi_index::output::Paint;

use super::output::{self, cut, highlight, short_time, ColorChoice};
use super::EXIT_OK;

/// Arguments of `pi-index sessions`.
#[derive(Args, Debug)]
pub struct SessionsArgs {
    /// Find sessions: the query language of `search` (name:WORDS too),
    /// ranked by the session's name, its first user message and its
    /// matching messages. Without it: every session, newest first.
    #[arg(value_name = "QUERY")]
    pub query: Vec<String>,

    /// With a QUERY: how many sessions to print.
    #[arg(short = 'n', long, default_value_t = 20, value_name = "N")]
    pub limit: usize,

    /// Only sessions whose directory is DIR or below it.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,

    /// Only sessions active at or after this time: 2026-03-01, 7d, yesterday, …
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Print JSON Lines: one session per line.
    #[arg(long)]
    pub json: bool,

    /// When to colour the output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// List or find the sessions of the team's PostgreSQL database (see
    /// `push`) instead of the local index; each with its `host`.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,

    /// With --db and no QUERY: only this host's sessions (a QUERY takes
    /// host:NAME).
    #[arg(long, value_name = "NAME", requires = "db")]
    pub host: Option<String>,
}

/// Run `sessions`.
pub fn run(args: SessionsArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    let since = args
        .since
        .as_deref()
        .map(|s| parse_when(s, &pi_index::search::query::Now::system()))
        .transpose()?;
    let dir = args.cwd.as_deref().map(normalize_dir);
    if let Some(url) = &args.db {
        return team(&args, url, dir.as_deref(), since);
    }
    let pi = PiIndex::open(index_dir)?;
    let searcher = pi.searcher()?;
    if super::hint_if_empty(&pi, &searcher) {
        return Ok(EXIT_OK);
    }
    let keep = |s: &SessionRow| s.selected(dir.as_deref(), since);
    if !args.query.is_empty() {
        return found(&args, &pi, &searcher, keep);
    }
    let sessions = pi.sessions(&searcher)?;
    let mut json = args.json.then(output::json_stdout);
    let mut out = output::stdout(!args.json && args.color.enabled());
    for s in &sessions {
        if !keep(s) {
            continue;
        }
        if let Some(json) = &mut json {
            json.line(s)?;
        } else {
            write!(out, "{}  ", short_time(s.last.as_deref()))?;
            out.paint(Paint::Heading, &format!("{:<60}", cut(s.label(), 60)))?;
            write!(out, "  ")?;
            out.paint(Paint::Dim, s.cwd.as_deref().unwrap_or("?"))?;
            write!(out, "  {} messages  ", s.messages)?;
            out.paint_line(Paint::Dim, &s.session_id)?;
        }
    }
    if let Some(json) = &mut json {
        json.flush()?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// `sessions QUERY`: the sessions found, best first.
fn found(
    args: &SessionsArgs,
    pi: &PiIndex,
    searcher: &tantivy::Searcher,
    keep: impl Fn(&SessionRow) -> bool,
) -> anyhow::Result<std::process::ExitCode> {
    let now = pi_index::search::query::Now::system();
    let sessions = usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX);
    let req = SessionQuery {
        query: args.query.join(" "),
        filters: Filters::default(),
        // --cwd and --since are applied to the rows: ask for them all.
        limit: sessions,
        snippet_chars: 160,
        now,
    };
    let result = pi.search_sessions(searcher, &req)?;
    let mut err = output::stderr();
    for w in result.warnings.iter().take(20) {
        writeln!(
            err,
            "pi-index: warning: query position {}: {}",
            w.position, w.message
        )?;
    }
    drop(err);
    let hits: Vec<_> = result
        .hits
        .iter()
        .filter(|h| keep(&h.session))
        .take(args.limit)
        .collect();
    if args.json {
        let mut out = output::json_stdout();
        for h in &hits {
            out.line(h)?;
        }
        out.flush()?;
    } else {
        let mut out = output::stdout(args.color.enabled());
        for h in &hits {
            let s = &h.session;
            write!(out, "{}  ", short_time(s.last.as_deref()))?;
            out.paint(Paint::Heading, &format!("{:<60}", cut(s.label(), 60)))?;
            write!(out, "  ")?;
            out.paint(Paint::Dim, s.cwd.as_deref().unwrap_or("?"))?;
            // What it was found by: its name, its first message, or
            // messages alone; and how many messages match.
            let by = match h.matched {
                Matched::Name => "name",
                Matched::Title => "title",
                Matched::Messages => "messages",
            };
            let m = if h.matches == 1 {
                "message"
            } else {
                "messages"
            };
            write!(out, "  [{by}] {} {m}  ", h.matches)?;
            out.paint_line(Paint::Dim, &s.session_id)?;
            write!(out, "    ")?;
            if let Some(hit) = &h.hit {
                out.paint(Paint::Role, &format!("[{}]", hit.doc.role))?;
                write!(out, " line {}: ", hit.doc.line)?;
            }
            highlight(&mut out, &h.snippet, &h.highlights)?;
            writeln!(out)?;
        }
        out.flush()?;
    }
    Ok(if hits.is_empty() {
        super::EXIT_NOTHING
    } else {
        EXIT_OK
    })
}

/// `sessions --db URL`: the team database's sessions, or those a query
/// finds there.
fn team(
    args: &SessionsArgs,
    url: &str,
    dir: Option<&str>,
    since: Option<i64>,
) -> anyhow::Result<std::process::ExitCode> {
    let db = pi_index::team::Db::connect(url)?;
    let mut json = args.json.then(output::json_stdout);
    let mut out = output::stdout(!args.json && args.color.enabled());
    if args.query.is_empty() {
        for t in pi_index::team::search::sessions(&db, args.host.as_deref(), dir, since)? {
            let s = &t.session;
            if let Some(json) = &mut json {
                json.line(&t)?;
            } else {
                write!(out, "{}  ", short_time(s.last.as_deref()))?;
                out.paint(Paint::Heading, &format!("{:<60}", cut(s.label(), 60)))?;
                write!(out, "  ")?;
                out.paint(
                    Paint::Dim,
                    &format!("{}  {}", t.host, s.cwd.as_deref().unwrap_or("?")),
                )?;
                write!(out, "  {} messages  ", s.messages)?;
                out.paint_line(Paint::Dim, &s.session_id)?;
            }
        }
        if let Some(json) = &mut json {
            json.flush()?;
        }
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let now = pi_index::search::query::Now::system();
    let (hits, warnings) = pi_index::team::search::find_sessions(
        &db,
        &args.query.join(" "),
        &Filters::default(),
        &now,
        i64::MAX as usize,
    )?;
    let mut err = output::stderr();
    for w in warnings.iter().take(20) {
        writeln!(
            err,
            "pi-index: warning: query position {}: {}",
            w.position, w.message
        )?;
    }
    drop(err);
    let hits: Vec<_> = hits
        .into_iter()
        .filter(|h| h.session.selected(dir, since))
        .take(args.limit)
        .collect();
    for h in &hits {
        let s = &h.session;
        if let Some(json) = &mut json {
            json.line(h)?;
            continue;
        }
        write!(out, "{}  ", short_time(s.last.as_deref()))?;
        out.paint(Paint::Heading, &format!("{:<60}", cut(s.label(), 60)))?;
        write!(out, "  ")?;
        out.paint(
            Paint::Dim,
            &format!("{}  {}", h.host, s.cwd.as_deref().unwrap_or("?")),
        )?;
        let m = if h.matches == 1 {
            "message"
        } else {
            "messages"
        };
        write!(out, "  {} {m}  ", h.matches)?;
        out.paint_line(Paint::Dim, &s.session_id)?;
        write!(out, "    ")?;
        out.paint(Paint::Role, &format!("[{}]", h.hit.doc.role))?;
        write!(out, " line {}: ", h.hit.doc.line)?;
        highlight(&mut out, &h.hit.snippet, &h.hit.highlights)?;
        writeln!(out)?;
    }
    if let Some(json) = &mut json {
        json.flush()?;
    }
    out.flush()?;
    Ok(if hits.is_empty() {
        super::EXIT_NOTHING
    } else {
        EXIT_OK
    })
}
