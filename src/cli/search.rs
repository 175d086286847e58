//! `pi-index search QUERY`: ranked hits, grouped by session like ripgrep
//! groups by file, or JSON Lines for scripts.

use pi_index::output::OneLine;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use clap::{Args, ValueEnum};

use pi_index::output::{Paint, Screen};
use pi_index::pi::Agent;
use pi_index::read::{SearchRequest, SearchResult};
use pi_index::search::query::{Filters, Key, Warning};
use pi_index::search::Sort;

use super::common::{self, EXIT_NOTHING, EXIT_OK};
use super::output::{self, cut, highlight, shell_quote, short_time, show_command, ColorChoice};

/// Orders of hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    /// Best match first (BM25), ties broken by recency.
    Relevance,
    /// Newest first.
    Newest,
    /// Oldest first.
    Oldest,
}

/// Arguments of `pi-index search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// The query: words (ANDed), "phrases", OR (AND binds tighter),
    /// -word or NOT word, parentheses, prefix*, * for everything, and
    /// filters role:, cwd:, session:, family:, name:, model:, after:, before:,
    /// branch:active, which the operators apply to like words. A query that
    /// starts with `-` goes after `--`: `pi-index search -- -flaky`.
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,

    /// Only these roles: user, assistant, thinking, tool, summary, custom,
    /// system (comma separated).
    #[arg(long, value_name = "ROLES")]
    pub role: Option<String>,

    /// Only sessions whose directory is DIR or below it.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,

    /// Only the session with this id (or id prefix).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    /// Only messages from models whose name contains NAME.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,

    /// Only messages at or after this time: 2026-03-01, 7d, yesterday, …
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Only messages before this time.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,

    /// Only messages on the active branch of their session.
    #[arg(long)]
    pub active_only: bool,

    /// Order of hits.
    #[arg(long, value_enum, default_value_t = SortArg::Relevance)]
    pub sort: SortArg,

    /// How many hits to print, at least 1 (at most every hit: a larger N
    /// is the number of documents in the index).
    #[arg(short = 'n', long, default_value_t = 20, value_name = "N", value_parser = at_least_one)]
    pub limit: usize,

    /// Skip this many hits first, at most 1000 (past the last hit:
    /// nothing, exit 1).
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = within_reach)]
    pub offset: usize,

    /// Print JSON Lines: one hit per line, nothing else on stdout.
    #[arg(long)]
    pub json: bool,

    /// Show every copy of a message copied into forks as its own hit (by
    /// default it is one hit, at the oldest session holding it, with its
    /// copies listed).
    #[arg(long)]
    pub copies: bool,

    /// When to colour the output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Search the team's PostgreSQL database (postgres://…, see `push`)
    /// instead of the local index: every pushed host's sessions, each hit
    /// with its `host`, and the `host:NAME` filter. `--db` alone (last, or
    /// before another flag) reads the URL from $PI_INDEX_DATABASE_URL.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub db: Option<String>,
}

/// A count of 1 or more: `-n 0` would ask for nothing, and is an error
/// (exit 2) rather than a search that prints nothing and exits 1.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("expected at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// An offset a search pages to: at most the limit every front end
/// shares ([`pi_index::search::query::MAX_OFFSET`]).
fn within_reach(s: &str) -> Result<usize, String> {
    let n: u64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number of hits to skip"))?;
    pi_index::search::query::limits::check_offset(n).map_err(|e| e.to_string())
}

/// Run `search`.
pub fn run(args: SearchArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    // The system's time zone (`TZ` honoured) reads civil dates.
    let now = pi_index::search::query::Now::system();
    let mut filters = Filters::default();
    let flags = [
        (Key::Role, &args.role),
        (Key::Cwd, &args.cwd),
        (Key::Session, &args.session),
        (Key::Model, &args.model),
        (Key::After, &args.since),
        (Key::Before, &args.until),
    ];
    for (key, value) in flags {
        if let Some(v) = value {
            filters.add(key, v, &now)?;
        }
    }
    if args.active_only {
        filters.add(Key::Branch, "active", &now)?;
    }
    let sort = match args.sort {
        SortArg::Relevance => Sort::Relevance,
        SortArg::Newest => Sort::Newest,
        SortArg::Oldest => Sort::Oldest,
    };
    let source = pi_index::read::open(args.db.as_deref(), index_dir)?;
    let req = SearchRequest {
        query: args.query.join(" "),
        filters,
        sort,
        // No search returns more hits than the source has: counts past
        // that are clamped by the source, so none is allocated for
        // ([docs/performance.md](../../docs/performance.md#hostile-input)).
        limit: args.limit,
        offset: args.offset,
        snippet_chars: 160,
        now,
        copies: args.copies,
    };
    if let Some(empty) = source.empty() {
        common::said(&empty);
        return Ok(EXIT_NOTHING);
    }
    let result = source.search(&req)?;
    warn(
        &result.warnings,
        args.offset,
        result.hits.len(),
        result.total,
    )?;
    if args.json {
        let mut out = output::json_stdout();
        for h in &result.hits {
            out.line(h)?;
        }
        out.flush()?;
    } else {
        let mut out = output::stdout(args.color.enabled());
        // The suggested commands (for a session whose file is here) name
        // the index unless it is where `pi-index` looks without being
        // told.
        let named = common::index_dir(None)
            .ok()
            .is_none_or(|default| default != *index_dir)
            .then_some(index_dir);
        let here = source.capabilities().files;
        print_grouped(&mut out, here.then_some(named), &result)?;
        if result.more {
            // The database counted its pool, not every match.
            writeln!(out)?;
            out.paint_line(
                Paint::Dim,
                &format!(
                    "{} of more than {} hits shown: use -n or --offset for more",
                    result.hits.len(),
                    result.total
                ),
            )?;
        } else {
            more_hits(&mut out, result.hits.len(), result.total, args.offset)?;
        }
        out.flush()?;
    }
    // The process ends now: the index's files are left mapped for the exit
    // to unmap all at once, instead of one munmap per segment file.
    std::mem::forget(source);
    Ok(if result.hits.is_empty() {
        EXIT_NOTHING
    } else {
        EXIT_OK
    })
}

/// Say what the query's repairs were, and when `--offset` is past the
/// last hit.
fn warn(warnings: &[Warning], offset: usize, shown: usize, total: usize) -> anyhow::Result<()> {
    // A few are enough to fix a query; a pasted blob can have thousands.
    const SHOWN: usize = 20;
    let mut err = output::stderr();
    for w in warnings.iter().take(SHOWN) {
        writeln!(
            err,
            "pi-index: warning: query position {}: {}",
            w.position, w.message
        )?;
    }
    if warnings.len() > SHOWN {
        writeln!(
            err,
            "pi-index: warning: and {} more",
            warnings.len() - SHOWN
        )?;
    }
    if shown == 0 && total > 0 && offset >= total {
        writeln!(
            err,
            "pi-index: --offset {offset} is past the last hit ({total} hits)"
        )?;
    }
    Ok(())
}

/// Hits grouped by session (of its host), in the order each session
/// first appears; with `files` (the session files are here: the local
/// index), each session's resume command and each hit's `show` command,
/// naming the index when it is given.
fn print_grouped<W: Write>(
    out: &mut Screen<W>,
    files: Option<Option<&Path>>,
    result: &SearchResult,
) -> anyhow::Result<()> {
    let mut order: Vec<(Option<&str>, &str)> = Vec::new();
    let mut groups: HashMap<(Option<&str>, &str), Vec<usize>> = HashMap::new();
    for (i, h) in result.hits.iter().enumerate() {
        let key = (h.doc.host.as_deref(), h.doc.path.as_str());
        groups
            .entry(key)
            .or_insert_with(|| {
                order.push(key);
                Vec::new()
            })
            .push(i);
    }
    for (n, key) in order.iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        let (host, path) = *key;
        let first = &result.hits[groups[key][0]].doc;
        let summary = result.hits[groups[key][0]].session.as_deref();
        let label = summary
            .map(|s| s.label().to_owned())
            .or_else(|| first.session_name.clone())
            .unwrap_or_else(|| first.session_id.clone());
        out.paint_line(Paint::Heading, &cut(&label, 80))?;
        // A session of another host is named by its host; one here by
        // when it started.
        let place = match host {
            Some(host) => format!(
                "{}  {}",
                OneLine(host),
                OneLine(first.cwd.as_deref().unwrap_or("?"))
            ),
            None => {
                let date = summary
                    .and_then(|s| s.started.clone())
                    .or_else(|| first.timestamp.clone());
                format!(
                    "{}  {}",
                    OneLine(first.cwd.as_deref().unwrap_or("?")),
                    short_time(date.as_deref())
                )
            }
        };
        out.paint_line(
            Paint::Dim,
            &format!("{}{place}  {}", agent_prefix(first.agent), OneLine(path)),
        )?;
        if files.is_some() {
            out.paint_line(
                Paint::Dim,
                &format!(
                    "resume: {} {} {}",
                    first.agent.command(),
                    first.agent.resume_flag(),
                    shell_quote(path)
                ),
            )?;
        }
        let mut idx = groups[key].clone();
        idx.sort_by_key(|&i| result.hits[i].doc.line);
        for i in idx {
            let h = &result.hits[i];
            write!(out, "  ")?;
            out.paint(Paint::Role, &format!("[{}]", h.doc.role))?;
            write!(
                out,
                " {} line {}",
                short_time(h.doc.timestamp.as_deref()),
                h.doc.line
            )?;
            if !h.doc.active {
                write!(out, " ")?;
                out.paint(Paint::Warn, "[abandoned branch]")?;
            }
            if let Some(mark) = super::show::edited_mark(h.doc.edited) {
                write!(out, " ")?;
                out.paint(Paint::Warn, mark)?;
            }
            if let Some(also) = also_in(h.copies.len()) {
                write!(out, " ")?;
                out.paint(Paint::Dim, &also)?;
            }
            write!(out, ": ")?;
            highlight(out, &h.snippet, &h.highlights)?;
            writeln!(out)?;
            if let Some(index) = files {
                write!(out, "    ")?;
                out.paint_line(
                    Paint::Dim,
                    &show_command(&h.doc.session_id, h.doc.line, index),
                )?;
            }
        }
    }
    Ok(())
}

pub use pi_index::output::text::also_in;

/// What a session's line under its heading starts with: the agent that
/// wrote it and two spaces, unless it is Pi (what most sessions are).
fn agent_prefix(agent: Agent) -> String {
    match agent {
        Agent::Pi => String::new(),
        other => format!("{}  ", other.name()),
    }
}

/// The last line of a page of hits that is not the last page: how many
/// of how many, and how to see more.
fn more_hits(
    out: &mut Screen<impl Write>,
    shown: usize,
    total: usize,
    offset: usize,
) -> std::io::Result<()> {
    if shown > 0 && total > offset + shown {
        writeln!(out)?;
        out.paint_line(
            Paint::Dim,
            &format!("{shown} of {total} hits shown: use -n or --offset for more"),
        )?;
    }
    Ok(())
}
