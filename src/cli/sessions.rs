//! `pi-index sessions`: one line per session, newest first.

use std::io::Write;
use std::path::Path;

use clap::Args;

use pi_index::index::PiIndex;
use pi_index::search::query::{normalize_dir, parse_when};

use pi_index::output::Paint;

use super::output::{self, cut, short_time, ColorChoice};
use super::EXIT_OK;

/// Arguments of `pi-index sessions`.
#[derive(Args, Debug)]
pub struct SessionsArgs {
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
}

/// Run `sessions`.
pub fn run(args: SessionsArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    let since = args
        .since
        .as_deref()
        .map(|s| parse_when(s, &pi_index::search::query::Now::system()))
        .transpose()?;
    let dir = args.cwd.as_deref().map(normalize_dir);
    let pi = PiIndex::open(index_dir)?;
    let searcher = pi.searcher()?;
    if super::hint_if_empty(&pi, &searcher) {
        return Ok(EXIT_OK);
    }
    let sessions = pi.sessions(&searcher)?;
    let mut json = args.json.then(output::json_stdout);
    let mut out = output::stdout(!args.json && args.color.enabled());
    for s in &sessions {
        if let Some(d) = &dir {
            let cwd = s.cwd.as_deref().unwrap_or("");
            let below = cwd
                .strip_prefix(d.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || d == "/");
            if !below {
                continue;
            }
        }
        if let Some(t) = since {
            if s.last_ms.is_none_or(|l| l < t) {
                continue;
            }
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
