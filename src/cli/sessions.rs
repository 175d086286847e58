//! `pi-index sessions [QUERY]`: one line per session, newest first (or,
//! with `--sort cost`, what each spent, most first); with a query, the
//! sessions it finds, best first (by name, first user message and
//! matching messages: see `pi_index::search::sessions`), each with its
//! best hit's snippet.

use pi_index::output::OneLine;
use std::io::Write;
use std::path::Path;

use clap::{Args, ValueEnum};
use serde::Serialize;

use pi_index::output::text::{dollars, plural};
use pi_index::read::usage::{by_cost, SessionCost};
use pi_index::read::{Hit, Matched, Place, SessionList, SessionQuery, SessionRow, Source};
use pi_index::search::query::{normalize_dir, parse_when, Filters};

use pi_index::output::{Paint, Screen};

use super::common::{self, EXIT_NOTHING, EXIT_OK};
use super::output::{self, cut, highlight, short_time, ColorChoice};

/// Arguments of `pi-index sessions`.
#[derive(Args, Debug)]
pub struct SessionsArgs {
    /// Find sessions: the query language of `search` (name:WORDS too),
    /// ranked by the session's name, its first user message and its
    /// matching messages. Without it: the sessions newest first (the
    /// first N of `-n`, or `--all`).
    #[arg(value_name = "QUERY")]
    pub query: Vec<String>,

    /// How many sessions to print (the newest, the costliest with
    /// `--sort cost`, or the best found by a QUERY); at least 1.
    #[arg(short = 'n', long, default_value_t = 20, value_name = "N", value_parser = at_least_one)]
    pub limit: usize,

    /// Print every session (or every one a QUERY finds), not only the
    /// first N.
    #[arg(long, conflicts_with = "limit")]
    pub all: bool,

    /// Only sessions whose directory is DIR or below it.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,

    /// Only sessions active at or after this time: 2026-03-01, 7d, yesterday, …
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Print JSON Lines: one session per line.
    #[arg(long)]
    pub json: bool,

    /// Draw the tree of threads: each session, then the sessions forked
    /// from it, indented (as Pi's own "Threaded" sort in `/resume`).
    #[arg(long, conflicts_with = "query")]
    pub threads: bool,

    /// How to order the sessions: `time`, newest activity first (the
    /// default), or `cost`, what each spent itself, most first (a fork's
    /// copies of its parent's entries are its parent's spending; ties
    /// newest first, sessions without usage last), with the cost as a
    /// column and `cost` (its file's total, as Pi's /session shows it),
    /// `own_cost` and `total_tokens` in --json. `--cwd`, `--since` and
    /// `-n`/`--all` choose as ever (the N that cost most); each
    /// session's cost is the whole session's (`pi-index usage session
    /// --since` totals a period). Not with a QUERY (it ranks by match)
    /// nor --threads (a tree in time order); with --db only where the
    /// database holds usage.
    #[arg(long, value_enum, value_name = "ORDER")]
    pub sort: Option<Sort>,

    /// When to colour the output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// List or find the sessions of the team's PostgreSQL database (see
    /// `push`) instead of the local index; each with its `host`. `--db`
    /// alone (last, or before another flag) reads the URL from
    /// $PI_INDEX_DATABASE_URL.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub db: Option<String>,

    /// With --db and no QUERY: only this host's sessions (a QUERY takes
    /// host:NAME).
    #[arg(long, value_name = "NAME", requires = "db")]
    pub host: Option<String>,
}

/// The orders of `sessions --sort`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Sort {
    /// Newest activity first.
    Time,
    /// What each session spent itself, most first.
    Cost,
}

/// `-n`'s value: a count of at least 1 (0 would print nothing; `--all`
/// prints everything).
fn at_least_one(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(0) => Err("-n takes at least 1 (or use --all to print every session)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("-n takes a whole number of sessions, at least 1 (or use --all)".into()),
    }
}

impl SessionsArgs {
    /// How many sessions to print at most.
    fn shown(&self) -> usize {
        if self.all {
            usize::MAX
        } else {
            self.limit
        }
    }
}

/// Run `sessions`.
pub fn run(args: SessionsArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    let since = args
        .since
        .as_deref()
        .map(|s| parse_when(s, &pi_index::search::query::Now::system()))
        .transpose()?;
    let dir = args.cwd.as_deref().map(normalize_dir);
    if let Some(sort) = args.sort {
        let name = match sort {
            Sort::Time => "time",
            Sort::Cost => "cost",
        };
        if !args.query.is_empty() {
            anyhow::bail!(
                "--sort {name}: a QUERY ranks the sessions it finds by how well they match; --sort orders the sessions without one (choose them with --cwd and --since, or total a query's with `pi-index usage session`)"
            );
        }
        if sort == Sort::Cost && args.threads {
            anyhow::bail!(
                "--sort cost: --threads draws each session above its forks, newest first, and cannot order them by cost: drop one of the two"
            );
        }
    }
    let source = pi_index::read::open(args.db.as_deref(), index_dir)?;
    if args.sort == Some(Sort::Cost) && !source.capabilities().usage {
        let place = match source.place() {
            Place::Index(dir) => format!("the index at {dir}"),
            Place::Database(target) => format!("the team database {target}"),
        };
        anyhow::bail!(
            "--sort cost: {place} holds no usage of its sessions to sort by: sort by cost against a local index (without --db), where each session's usage is indexed"
        );
    }
    if let Some(empty) = source.empty() {
        common::said(&empty);
        return Ok(EXIT_OK);
    }
    if !args.query.is_empty() {
        return found(&args, source.as_ref(), dir, since);
    }
    if args.sort == Some(Sort::Cost) {
        return costly(&args, source.as_ref(), dir, since);
    }
    // The tree of threads needs every session (a fork's parent may be
    // past the first N).
    let limit = if args.threads {
        usize::MAX
    } else {
        args.shown()
    };
    let sessions = source
        .sessions(&SessionList {
            host: args.host.clone(),
            dir,
            since,
            offset: 0,
            limit,
        })?
        .sessions;
    let rows: Vec<(usize, &SessionRow)> = if args.threads {
        threads(&sessions)
    } else {
        sessions.iter().map(|s| (0, s)).collect()
    };
    let mut json = args.json.then(output::json_stdout);
    let mut out = output::stdout(!args.json && args.color.enabled());
    for (depth, s) in rows.into_iter().take(args.shown()) {
        if let Some(json) = &mut json {
            json.line(s)?;
        } else {
            write!(out, "{}  ", short_time(s.last.as_deref()))?;
            let label = if depth == 0 {
                s.label().to_owned()
            } else {
                format!("{}└ {}", "  ".repeat(depth - 1), s.label())
            };
            listed(&mut out, &label, s)?;
        }
    }
    if let Some(json) = &mut json {
        json.flush()?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// The rest of a listed session's line, after its time (and cost):
/// `label` in 60 columns, where it ran, its messages and its id.
fn listed<W: Write>(out: &mut Screen<W>, label: &str, s: &SessionRow) -> std::io::Result<()> {
    out.paint(Paint::Heading, &format!("{:<60}", cut(label, 60)))?;
    write!(out, "  ")?;
    out.paint(Paint::Dim, &place(s))?;
    write!(out, "  {}  ", plural(s.messages, "message", "messages"))?;
    out.paint_line(Paint::Dim, &OneLine(&s.session_id).to_string())
}

/// A line of `sessions --sort cost --json`: the session's object and
/// what it cost (each `null` when it recorded no usage).
#[derive(Serialize)]
struct Costed<'a> {
    #[serde(flatten)]
    session: &'a SessionRow,
    cost: Option<f64>,
    own_cost: Option<f64>,
    total_tokens: Option<u64>,
}

/// `sessions --sort cost`: every session `dir` and `since` choose, read
/// with every session's usage, the N that spent most.
fn costly(
    args: &SessionsArgs,
    source: &dyn Source,
    dir: Option<String>,
    since: Option<i64>,
) -> anyhow::Result<std::process::ExitCode> {
    let sessions = source
        .sessions(&SessionList {
            host: args.host.clone(),
            dir,
            since,
            offset: 0,
            limit: usize::MAX,
        })?
        .sessions;
    // A report by session in UTC, without bounds: sums serve.
    let usage = source.usage(pi_index::read::usage::Need::Sums)?;
    let ranked = by_cost(sessions, &usage);
    let mut json = args.json.then(output::json_stdout);
    let mut out = output::stdout(!args.json && args.color.enabled());
    for (s, cost) in ranked.iter().take(args.shown()) {
        if let Some(json) = &mut json {
            json.line(&Costed {
                session: s,
                cost: cost.map(|c| c.cost),
                own_cost: cost.map(|c| c.own_cost),
                total_tokens: cost.map(|c| c.total_tokens),
            })?;
        } else {
            write!(out, "{}  ", short_time(s.last.as_deref()))?;
            write!(out, "{:>8}  ", spent(cost.as_ref()))?;
            listed(&mut out, s.label(), s)?;
        }
    }
    if let Some(json) = &mut json {
        json.flush()?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// A session's cost column: what it spent itself, `-` when it recorded
/// no usage.
fn spent(cost: Option<&SessionCost>) -> String {
    cost.map_or_else(|| "-".to_owned(), |c| dollars(c.own_cost))
}

/// Where a session ran, for its line: its directory, after its host when
/// it is another host's.
fn place(s: &SessionRow) -> String {
    let cwd = OneLine(s.cwd.as_deref().unwrap_or("?"));
    match &s.host {
        Some(host) => format!("{}  {cwd}", OneLine(host)),
        None => cwd.to_string(),
    }
}

/// `sessions QUERY`: the sessions found, best first.
fn found(
    args: &SessionsArgs,
    source: &dyn Source,
    dir: Option<String>,
    since: Option<i64>,
) -> anyhow::Result<std::process::ExitCode> {
    let req = SessionQuery {
        query: args.query.join(" "),
        filters: Filters::default(),
        dir,
        since,
        limit: args.shown(),
        offset: 0,
        snippet_chars: 160,
        now: pi_index::search::query::Now::system(),
    };
    let result = source.find_sessions(&req)?;
    let mut err = output::stderr();
    for w in result.warnings.iter().take(20) {
        writeln!(
            err,
            "pi-index: warning: query position {}: {}",
            w.position, w.message
        )?;
    }
    drop(err);
    let hits = result.hits;
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
            out.paint(Paint::Dim, &place(s))?;
            // What it was found by: its name, its first message, or
            // messages alone; and how many messages match.
            write!(out, "  [{}] ", matched_by(h.matched))?;
            write_matches(&mut out, h.matches)?;
            out.paint_line(Paint::Dim, &s.session_id)?;
            write!(out, "    ")?;
            write_hit(&mut out, h.hit.as_ref())?;
            highlight(&mut out, &h.snippet, &h.highlights)?;
            writeln!(out)?;
        }
        out.flush()?;
    }
    Ok(if hits.is_empty() {
        EXIT_NOTHING
    } else {
        EXIT_OK
    })
}

/// What a session was found by: its name, its first message, or its
/// messages alone.
fn matched_by(m: Matched) -> &'static str {
    match m {
        Matched::Name => "name",
        Matched::Title => "title",
        Matched::Messages => "messages",
    }
}

/// "3 messages  ": how many of a found session's messages match.
fn write_matches(out: &mut impl Write, n: u64) -> std::io::Result<()> {
    write!(out, "{}  ", plural(n, "message", "messages"))
}

/// The start of a found session's second line: its best message's role,
/// line and copies, when a message matched.
fn write_hit<W: Write>(
    out: &mut pi_index::output::Screen<W>,
    hit: Option<&Hit>,
) -> anyhow::Result<()> {
    if let Some(hit) = hit {
        out.paint(Paint::Role, &format!("[{}]", hit.doc.role))?;
        write!(out, " line {}", hit.doc.line)?;
        if let Some(also) = super::search::also_in(hit.copies.len()) {
            write!(out, " ")?;
            out.paint(Paint::Dim, &also)?;
        }
        write!(out, ": ")?;
    }
    Ok(())
}

/// The sessions as a tree of threads: each session with no parent among
/// `rows` (in their order, newest first), then its forks below it, deeper
/// by one, in the same order. A session's parent is the one its family
/// names, when that is indexed (or pushed, of the same host). Returns
/// each row with its depth.
fn threads(rows: &[SessionRow]) -> Vec<(usize, &SessionRow)> {
    let at: std::collections::HashMap<(Option<&str>, &str), usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.host.as_deref(), r.path.as_str()), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); rows.len()];
    let mut roots = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let parent = r
            .family
            .as_ref()
            .and_then(|f| f.parent.as_ref())
            .filter(|p| p.session.is_some())
            .and_then(|p| at.get(&(r.host.as_deref(), p.path.as_str())));
        match parent {
            Some(&p) if p != i => children[p].push(i),
            _ => roots.push(i),
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    let mut seen = vec![false; rows.len()];
    let mut stack: Vec<(usize, usize)> = roots.into_iter().rev().map(|i| (0, i)).collect();
    while let Some((depth, i)) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        out.push((depth, &rows[i]));
        stack.extend(children[i].iter().rev().map(|&c| (depth + 1, c)));
    }
    // Parents that name each other (edited by hand) have no root: shown
    // at the top level all the same.
    for (i, r) in rows.iter().enumerate() {
        if !seen[i] {
            out.push((0, r));
        }
    }
    out
}
