//! `pi-index stats`: what the index holds.

use pi_index::output::OneLine;
use std::io::Write;
use std::path::Path;

use clap::Args;

use pi_index::search::Local;

use super::{output, EXIT_OK};

/// Arguments of `pi-index stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Run `stats`.
pub fn run(args: StatsArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    let local = Local::open(index_dir)?;
    if super::hint_if_empty(&local) {
        return Ok(EXIT_OK);
    }
    let sessions = local.sessions()?;
    let stats = local.stats(&sessions)?;
    if args.json {
        let mut out = output::json_stdout();
        out.line(&stats)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let mut out = output::stdout(false);
    writeln!(out, "index      {}", stats.index)?;
    writeln!(out, "sessions   {}", stats.sessions)?;
    writeln!(out, "messages   {}", stats.messages)?;
    if stats.copies > 0 || stats.forks > 0 {
        writeln!(
            out,
            "copies     {} (copied into {} forks; {} distinct messages)",
            stats.copies,
            stats.forks,
            stats.messages - stats.copies
        )?;
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
    writeln!(out, "size       {:.1} MB", stats.index_bytes as f64 / 1e6)?;
    writeln!(
        out,
        "built      {} (kinds: {})",
        stats.built_at.as_deref().unwrap_or("never"),
        stats.kinds.as_deref().unwrap_or("-")
    )?;
    if !stats.roots.is_empty() {
        writeln!(out, "read from")?;
        for r in &stats.roots {
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
    writeln!(out, "top projects")?;
    for p in &stats.top_projects {
        writeln!(
            out,
            "  {:>5} sessions {:>7} messages  {}",
            p.sessions, p.messages, p.cwd
        )?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
