//! `pi-index stats`: what the index (or the team database) holds.

use pi_index::output::text::{noun, plural, thousands};
use pi_index::output::OneLine;
use std::io::Write;
use std::path::Path;

use clap::Args;

use pi_index::read::Place;

use super::common::{self, EXIT_OK};
use super::output;

/// Arguments of `pi-index stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,

    /// What the team's PostgreSQL database (see `push`) holds instead of
    /// the local index: every host's sessions and messages, and each
    /// host's. `--db` alone (last, or before another flag) reads the URL
    /// from $PI_INDEX_DATABASE_URL.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub db: Option<String>,
}

/// Run `stats`.
pub fn run(args: StatsArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    let source = pi_index::read::open(args.db.as_deref(), index_dir)?;
    if let Some(empty) = source.empty() {
        common::said(&empty);
        return Ok(EXIT_OK);
    }
    let stats = source.stats()?;
    if args.json {
        let mut out = output::json_stdout();
        out.line(&stats)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let mut out = output::stdout(false);
    match &stats.place {
        Place::Index(dir) => writeln!(out, "index      {dir}")?,
        Place::Database(db) => writeln!(out, "database   {db}")?,
    }
    if let Some(hosts) = &stats.hosts {
        writeln!(out, "hosts      {}", hosts.len())?;
    }
    writeln!(out, "sessions   {}", stats.sessions)?;
    writeln!(out, "messages   {}", stats.messages)?;
    match stats.copies {
        Some(copies) if copies > 0 || stats.forks > 0 => writeln!(
            out,
            "copies     {copies} (copied into {}; {})",
            plural(stats.forks, "fork", "forks"),
            plural(
                stats.messages - copies,
                "distinct message",
                "distinct messages"
            )
        )?,
        Some(_) => {}
        None => writeln!(out, "forks      {}", stats.forks)?,
    }
    for (role, n) in &stats.messages_by_role {
        writeln!(out, "  {role:<9} {n}")?;
    }
    writeln!(
        out,
        "dates      {} .. {}",
        stats.first.as_deref().unwrap_or("-"),
        stats.last.as_deref().unwrap_or("-")
    )?;
    if let Some(built) = &stats.build {
        writeln!(
            out,
            "size       {:.1} MB in {}",
            built.index_bytes as f64 / 1e6,
            plural(built.segments, "segment", "segments")
        )?;
        writeln!(
            out,
            "built      {} (kinds: {})",
            built.built_at.as_deref().unwrap_or("never"),
            built.kinds.as_deref().unwrap_or("-")
        )?;
        if !built.roots.is_empty() {
            writeln!(out, "read from")?;
            for r in &built.roots {
                let state = if r.read { "read" } else { "not read" };
                let note = r
                    .note
                    .as_deref()
                    .map_or(String::new(), |n| format!(": {n}"));
                writeln!(
                    out,
                    "  {} ({}; {state}{note}){}",
                    OneLine(&r.path),
                    r.why,
                    r.for_agents()
                )?;
            }
        }
    }
    if let Some(projects) = &stats.top_projects {
        writeln!(out, "top projects")?;
        for p in projects {
            writeln!(out, "  {}  {}", counts(p.sessions, p.messages), p.cwd)?;
        }
    }
    if let Some(hosts) = &stats.hosts {
        writeln!(out, "per host")?;
        for h in hosts {
            writeln!(
                out,
                "  {}  {}  last {}  pushed {}",
                counts(h.sessions, h.messages),
                OneLine(&h.host),
                h.last.as_deref().unwrap_or("-"),
                h.pushed_at.as_deref().unwrap_or("-")
            )?;
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// A row's sessions and messages, numbers right-aligned in columns and
/// each noun as its number says: `     47 sessions     162 messages`.
fn counts(sessions: u64, messages: u64) -> String {
    format!(
        "{:>7} {:<8} {:>9} {:<8}",
        thousands(sessions),
        noun(sessions, "session", "sessions"),
        thousands(messages),
        noun(messages, "message", "messages")
    )
}
