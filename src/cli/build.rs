//! `pi-index build`: index session files, with a progress bar on a
//! terminal and a one-line summary (or one JSON object) at the end.

use pi_index::output::text::{plural, thousands};
use pi_index::output::OneLine;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use pi_index::discover::{default_locations, named_locations};
use pi_index::index::IndexError;
use pi_index::pi::giant::max_document_bytes;
use pi_index::pi::Kinds;
use pi_index::pipeline::{build, BuildError, BuildOptions, BuildReport};

use super::common::EXIT_OK;
use super::output;

/// Arguments of `pi-index build`.
#[derive(Args, Debug)]
pub struct BuildArgs {
    /// Session files or directories to index (searched recursively for
    /// *.jsonl). Default: every session dir Pi 1.6 may have written to
    /// that exists: $PI_CODING_AGENT_SESSION_DIR, the sessionDir of
    /// <agent dir>/settings.json, <agent dir>/sessions ($PI_CODING_AGENT_DIR,
    /// else ~/.pi/agent), ~/.pi/agent/sessions and
    /// ~/.config/pi/agent/sessions; then Oh My Pi's: its profile's or agent
    /// dir's sessions ($OMP_PROFILE, $PI_CODING_AGENT_DIR,
    /// $XDG_DATA_HOME/omp, $PI_CONFIG_DIR) and ~/.omp/agent/sessions.
    /// Sessions indexed from other places are kept (see --prune).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Opt-in kinds of text to index besides user and assistant messages:
    /// thinking, tools, summary, custom, system (comma separated), or all.
    #[arg(long, value_name = "KINDS", default_value = "", hide_default_value = true, value_parser = parse_kinds)]
    pub include: Kinds,

    /// Worker threads, 1 to 64 [default: the number of CPUs, at most 64].
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=MAX_THREADS as i64))]
    pub threads: Option<u16>,

    /// Memory of each indexing thread, in MB (16 to 3800): a thread's
    /// segment is written out when it holds this much (near the end of a
    /// build, up to a quarter more, rather than leave a small last
    /// segment). As many threads index at once as the machine has cores
    /// (more threads share them), so peak memory is about cores x MB plus
    /// the largest session's (docs/performance.md#threads). A larger
    /// budget writes fewer, larger segments (searches open each one).
    #[arg(long, value_name = "MB", default_value_t = pi_index::pipeline::DEFAULT_THREAD_MEMORY_MB as u64, value_parser = clap::value_parser!(u64).range(16..=3800))]
    pub memory: u64,

    /// Rebuild the whole index instead of only what changed (also recovers
    /// an index that cannot be read).
    #[arg(long)]
    pub full: bool,

    /// Remove the sessions indexed from places this build does not read
    /// (a session dir no longer configured, or directories left out of
    /// PATH), which are otherwise kept and reported.
    #[arg(long)]
    pub prune: bool,

    /// Print one JSON object with the build's numbers on stdout instead of
    /// the summary.
    #[arg(long)]
    pub json: bool,

    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,

    /// Also list the directories read (and why), rejected files, damaged
    /// and recovered lines, and moved files.
    #[arg(long, short)]
    pub verbose: bool,
}

/// The most worker threads a build starts. More gain nothing on the
/// machines this runs on, and the SIGBUS guard covers 256 mapped files at
/// once (see docs/limitations.md): 64 threads stay well inside it.
/// 65,535 threads once hung a build.
pub const MAX_THREADS: usize = 64;

fn parse_kinds(s: &str) -> Result<Kinds, String> {
    Kinds::parse(s)
}

/// Where a build reads sessions from, and what to say about it.
pub(super) struct Sources {
    /// The files and directories to read.
    pub(super) roots: Vec<PathBuf>,
    /// Where they come from and why.
    pub(super) locations: Vec<pi_index::discover::Location>,
    /// Said on stderr unless quiet.
    pub(super) warnings: Vec<String>,
    /// Said on stderr unless quiet.
    pub(super) notes: Vec<String>,
}

/// The roots of `paths`, or Pi's session directories when there are none
/// (an error when no such directory exists, or a named path does not).
pub(super) fn sources(paths: &[PathBuf]) -> anyhow::Result<Sources> {
    if paths.is_empty() {
        let defaults = default_locations();
        let roots = defaults.roots();
        if roots.is_empty() {
            let list: Vec<&str> = defaults.locations.iter().map(|l| l.path.as_str()).collect();
            bail!(
                "no Pi or Oh My Pi session directory found (looked in {}): pass the directory to index, e.g. `pi-index build ~/path/to/sessions`",
                list.join(", ")
            );
        }
        return Ok(Sources {
            roots,
            locations: defaults.locations,
            warnings: defaults.warnings,
            notes: defaults.notes,
        });
    }
    for p in paths {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    Ok(Sources {
        roots: paths.to_vec(),
        locations: named_locations(paths),
        warnings: Vec::new(),
        notes: Vec::new(),
    })
}

/// Run `build`.
pub fn run(args: BuildArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    let Sources {
        roots,
        locations,
        warnings,
        notes,
    } = sources(&args.paths)?;
    let threads = args
        .threads
        .map(usize::from)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(MAX_THREADS);
    let opts = BuildOptions::new(roots, index_dir.to_owned())
        .kinds(args.include)
        .threads(threads)
        .thread_memory((args.memory as usize) << 20)
        .full(args.full)
        .prune(args.prune)
        .locations(locations);

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
    // Another build writing (the MCP server's refresh, the picker's, a
    // second shell) is waited for, as cargo waits for its lock; this one
    // then plans again from what that one committed.
    let mut said = false;
    let report = loop {
        match build(&opts, &|bytes| bar.inc(bytes)) {
            Err(BuildError::Index(IndexError::Busy(_))) => {
                if !said && !args.quiet {
                    bar.suspend(|| {
                        let _ = writeln!(
                            output::stderr(),
                            "pi-index: waiting for another build to finish writing {}",
                            index_dir.display()
                        );
                    });
                    said = true;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other,
        }
    };
    bar.finish_and_clear();
    let report = report?;

    let mut err = output::stderr();
    if !args.quiet {
        for w in &warnings {
            writeln!(err, "pi-index: warning: {w}")?;
        }
        for n in &notes {
            writeln!(err, "pi-index: note: {n}")?;
        }
    }
    for e in &report.errors {
        writeln!(err, "pi-index: warning: {}: {}", OneLine(&e.path), e.reason)?;
    }
    if !args.quiet {
        for s in &report.skipped {
            writeln!(err, "pi-index: warning: {}: {}", OneLine(&s.path), s.reason)?;
        }
        if let Some(why) = report.rebuilt.as_ref().filter(|r| !r.expected()) {
            writeln!(err, "pi-index: rebuilding the whole index: {why}")?;
        }
        for n in &report.newer_versions {
            writeln!(err, "pi-index: note: {}: {}", OneLine(&n.path), n.reason)?;
        }
        for m in &report.moved {
            writeln!(
                err,
                "pi-index: note: moved: {} is now {} (indexed there)",
                OneLine(&m.from),
                OneLine(&m.to)
            )?;
        }
        for st in &report.stale_roots {
            let n = plural(st.sessions, "session", "sessions");
            if st.pruned {
                writeln!(
                    err,
                    "pi-index: note: {n} indexed from {}, which this build does not read: removed (--prune)",
                    OneLine(&st.root)
                )?;
            } else {
                writeln!(
                    err,
                    "pi-index: note: {n} indexed from {}, which this build does not read: kept, still searchable (`pi-index build --prune` removes them)",
                    OneLine(&st.root)
                )?;
            }
        }
    }
    if args.verbose {
        for l in &report.roots {
            let agents = l.for_agents();
            match &l.note {
                None => writeln!(err, "read {} ({}){agents}", OneLine(&l.path), l.why)?,
                Some(n) => writeln!(
                    err,
                    "not read {} ({}){agents}: {n}",
                    OneLine(&l.path),
                    l.why
                )?,
            }
        }
        for r in &report.rejected {
            writeln!(err, "rejected {}: {}", OneLine(&r.path), r.reason)?;
        }
        for d in &report.damaged {
            writeln!(err, "damaged {}:{}: {}", OneLine(&d.path), d.line, d.error)?;
        }
        if report.damaged_more > 0 {
            writeln!(err, "… and {} more damaged lines", report.damaged_more)?;
        }
        for d in &report.recovered {
            writeln!(
                err,
                "recovered {}:{}: {}",
                OneLine(&d.path),
                d.line,
                d.error
            )?;
        }
        if report.recovered_more > 0 {
            writeln!(err, "… and {} more recovered lines", report.recovered_more)?;
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
    let changed =
        r.files_indexed + r.files_deleted + r.files_moved + r.files_pruned + r.files_failed > 0
            || r.rebuilt.is_some();
    let mut counts = vec![plural(r.files_scanned, "file seen", "files seen")];
    counts.push(format!("{} rejected", thousands(r.files_rejected)));
    for (n, what) in [
        (r.files_unchanged, "unchanged"),
        (r.files_grown, "grown"),
        (r.files_replaced, "replaced"),
        (r.files_moved, "moved"),
        (r.files_deleted, "deleted"),
        (r.files_stale, "kept from dirs not read"),
        (r.files_pruned, "pruned"),
        (r.files_failed, "unreadable"),
    ] {
        if n > 0 {
            counts.push(format!("{} {what}", thousands(n)));
        }
    }
    if !changed {
        return format!(
            "index up to date: {}, nothing changed ({}) in {:.2} s: {}",
            plural(r.sessions, "session", "sessions"),
            counts.join(", "),
            r.elapsed_ms as f64 / 1e3,
            index_dir.display()
        );
    }
    let mut s = format!(
        "indexed {} ({}): {}, {}",
        plural(r.files_indexed, "session", "sessions"),
        counts.join(", "),
        plural(r.messages_indexed, "message", "messages"),
        plural(r.lines_damaged, "damaged line", "damaged lines"),
    );
    if r.lines_recovered > 0 {
        s += &format!(
            ", {}",
            plural(
                r.lines_recovered,
                "line of glued entries split",
                "lines of glued entries split"
            )
        );
    }
    s += &format!(
        ", {:.1} MB in {:.2} s ({:.0} MB/s) into {}",
        r.bytes_read as f64 / 1e6,
        r.elapsed_ms as f64 / 1e3,
        r.mb_per_s,
        index_dir.display()
    );
    if r.sessions != r.files_indexed {
        s += &format!("; it holds {}", plural(r.sessions, "session", "sessions"));
    }
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
