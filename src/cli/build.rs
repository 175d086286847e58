//! `pi-index build`: index session files, with a progress bar on a
//! terminal and a one-line summary (or one JSON object) at the end.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use pi_index::discover::default_roots;
use pi_index::pi::giant::max_document_bytes;
use pi_index::pi::Kinds;
use pi_index::pipeline::{build, BuildOptions, BuildReport};

use super::{output, EXIT_OK};

/// Arguments of `pi-index build`.
#[derive(Args, Debug)]
pub struct BuildArgs {
    /// Session files or directories to index (searched recursively for
    /// *.jsonl). Default: $PI_CODING_AGENT_DIR/sessions (else
    /// ~/.pi/agent/sessions) and ~/.config/pi/agent/sessions.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Opt-in kinds of text to index besides user and assistant messages:
    /// thinking, tools, summary, custom (comma separated), or all.
    #[arg(long, value_name = "KINDS", default_value = "", hide_default_value = true, value_parser = parse_kinds)]
    pub include: Kinds,

    /// Worker threads, 1 to 64 [default: the number of CPUs, at most 64].
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=MAX_THREADS as i64))]
    pub threads: Option<u16>,

    /// Memory budget for tantivy's indexing threads, in MB (32 to 65536).
    /// Peak memory follows this budget, not the corpus: at 64, a 5 GB
    /// corpus peaked at 437 MB and a single 2 GB session at 305 MB.
    #[arg(long, value_name = "MB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(32..=65536))]
    pub memory: u64,

    /// Rebuild the whole index instead of only what changed (also recovers
    /// an index that cannot be read).
    #[arg(long)]
    pub full: bool,

    /// Print one JSON object with the build's numbers on stdout instead of
    /// the summary.
    #[arg(long)]
    pub json: bool,

    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,

    /// Also list rejected files and damaged lines.
    #[arg(long, short)]
    pub verbose: bool,
}

/// The most worker threads a build starts. More gain nothing on the
/// machines this runs on, and the SIGBUS guard covers 256 mapped files at
/// once (see the README's limitations): 64 threads stay well inside it.
/// 65,535 threads once hung a build.
pub const MAX_THREADS: usize = 64;

fn parse_kinds(s: &str) -> Result<Kinds, String> {
    Kinds::parse(s)
}

/// Run `build`.
pub fn run(args: BuildArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    let roots = if args.paths.is_empty() {
        let (found, looked) = default_roots();
        if found.is_empty() {
            let list: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
            bail!(
                "no Pi session directory found (looked in {}): pass the directory to index, e.g. `pi-index build ~/path/to/sessions`",
                list.join(", ")
            );
        }
        found
    } else {
        for p in &args.paths {
            if !p.exists() {
                bail!("{}: no such file or directory", p.display());
            }
        }
        args.paths.clone()
    };
    let threads = args
        .threads
        .map(usize::from)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(MAX_THREADS);
    let opts = BuildOptions {
        roots,
        index_dir: index_dir.to_owned(),
        kinds: args.include,
        threads,
        memory_budget: (args.memory as usize) << 20,
        full: args.full,
    };

    let show_bar = !args.quiet && !args.json && output::can_draw_progress();
    let bar = if show_bar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} {msg} {binary_bytes} read, {binary_bytes_per_sec}, {elapsed}",
            )
            .expect("valid progress template"),
        );
        bar.set_message("indexing");
        bar
    } else {
        ProgressBar::hidden()
    };
    let report = build(&opts, &|bytes| bar.inc(bytes));
    bar.finish_and_clear();
    let report = report?;

    let mut err = output::stderr();
    for e in &report.errors {
        writeln!(err, "pi-index: warning: {}: {}", e.path, e.reason)?;
    }
    if !args.quiet {
        for s in &report.skipped {
            writeln!(err, "pi-index: warning: {}: {}", s.path, s.reason)?;
        }
        if let Some(why) = report.rebuilt.as_ref().filter(|r| !r.expected()) {
            writeln!(err, "pi-index: rebuilding the whole index: {why}")?;
        }
        for n in &report.newer_versions {
            writeln!(err, "pi-index: note: {}: {}", n.path, n.reason)?;
        }
    }
    if args.verbose {
        for r in &report.rejected {
            writeln!(err, "rejected {}: {}", r.path, r.reason)?;
        }
        for d in &report.damaged {
            writeln!(err, "damaged {}:{}: {}", d.path, d.line, d.error)?;
        }
        if report.damaged_more > 0 {
            writeln!(err, "… and {} more damaged lines", report.damaged_more)?;
        }
        for t in &report.messages_truncated {
            writeln!(
                err,
                "truncated {}:{}: a line of {}, {} of its text indexed: the rest cannot be found",
                t.path,
                t.line,
                size(t.line_bytes),
                size(t.indexed_bytes)
            )?;
        }
        if report.messages_truncated_more > 0 {
            writeln!(
                err,
                "… and {} more truncated lines",
                report.messages_truncated_more
            )?;
        }
    } else if !args.quiet && !report.messages_truncated.is_empty() {
        let n = report.messages_truncated.len() as u64 + report.messages_truncated_more;
        let cap = size(max_document_bytes() as u64);
        let what = if n == 1 {
            format!("1 line holds more text than one message indexes: only its first {cap} is indexed (-v lists it)")
        } else {
            format!("{n} lines hold more text than one message indexes: only the first {cap} of each is indexed (-v lists them)")
        };
        writeln!(err, "pi-index: note: {what}")?;
    }
    drop(err);

    if args.json {
        let mut out = output::json_stdout();
        out.line(&report)?;
        out.flush()?;
    } else if !args.quiet {
        let mut out = output::stdout(false);
        writeln!(out, "{}", summary(&report, index_dir))?;
        out.flush()?;
    }
    Ok(EXIT_OK)
}

/// The one-line summary.
fn summary(r: &BuildReport, index_dir: &Path) -> String {
    let mut s = format!(
        "indexed {} sessions ({} files seen, {} rejected",
        r.sessions, r.files_scanned, r.files_rejected
    );
    if r.files_unchanged > 0 {
        s += &format!(", {} unchanged", r.files_unchanged);
    }
    if r.files_grown > 0 {
        s += &format!(", {} grown", r.files_grown);
    }
    if r.files_replaced > 0 {
        s += &format!(", {} replaced", r.files_replaced);
    }
    if r.files_deleted > 0 {
        s += &format!(", {} deleted", r.files_deleted);
    }
    if r.files_failed > 0 {
        s += &format!(", {} unreadable", r.files_failed);
    }
    s += &format!(
        "): {} messages, {} damaged lines, {:.1} MB in {:.2} s ({:.0} MB/s) into {}",
        r.messages_indexed,
        r.lines_damaged,
        r.bytes_read as f64 / 1e6,
        r.elapsed_ms as f64 / 1e3,
        r.mb_per_s,
        index_dir.display()
    );
    s
}

/// A size in decimal units, as the summary prints them.
fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}
