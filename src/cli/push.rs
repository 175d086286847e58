//! `pi-index push URL`: this machine's sessions into the team's
//! PostgreSQL database, from the local index (see `pi_index::team::push`);
//! with `--watch`, again whenever Pi writes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use pi_index::index::PiIndex;
use pi_index::team::push::{push, PushReport};
use pi_index::team::{default_host_name, Db, TeamError};

use super::{output, EXIT_OK};

/// Arguments of `pi-index push`.
#[derive(Args, Debug)]
pub struct PushArgs {
    /// The database: postgres://USER@HOST:PORT/DB (sslmode=require or
    /// verify-full for TLS; the password from the URL, PGPASSWORD or
    /// ~/.pgpass, never printed) [default: $PI_INDEX_DATABASE_URL]
    #[arg(
        value_name = "URL",
        env = "PI_INDEX_DATABASE_URL",
        hide_env_values = true
    )]
    pub url: Option<String>,

    /// The name this machine's sessions are kept under [default:
    /// user@hostname]. Session files, paths and ids repeat across
    /// machines: every row is keyed by it.
    #[arg(long = "as", value_name = "NAME")]
    pub host: Option<String>,

    /// Keep pushing: bring the local index up to date every --interval
    /// seconds (an incremental build of PATH, or of Pi's session dirs),
    /// push what changed once nothing more changed for --debounce
    /// seconds, and at least every --floor seconds. A server that goes
    /// away is waited for.
    #[arg(long)]
    pub watch: bool,

    /// With --watch: the sessions to index (as `build` takes them).
    #[arg(long = "path", value_name = "PATH", requires = "watch")]
    pub paths: Vec<PathBuf>,

    /// With --watch: seconds between looks at the session files.
    #[arg(long, default_value_t = 2.0, value_name = "SECS")]
    pub interval: f64,

    /// With --watch: seconds without a change before a push.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub debounce: f64,

    /// With --watch: the longest time between two pushes, in seconds.
    #[arg(long, default_value_t = 300.0, value_name = "SECS")]
    pub floor: f64,

    /// Print one JSON object with the push's counts (with --watch, one
    /// per push) instead of the summary.
    #[arg(long)]
    pub json: bool,

    /// No summary, no progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

fn url_of(args: &PushArgs) -> Result<String, TeamError> {
    args.url
        .clone()
        .filter(|u| !u.is_empty())
        .ok_or(TeamError::NoUrl)
}

/// Run `push`.
pub fn run(args: PushArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    let url = url_of(&args)?;
    let host = args.host.clone().unwrap_or_else(default_host_name);
    if host.trim().is_empty() {
        anyhow::bail!("--as needs a name (e.g. --as alice@laptop)");
    }
    if args.watch {
        return watch(&args, &url, &host, index_dir);
    }
    let pi = PiIndex::open(index_dir)?;
    let mut db = Db::connect(&url)?;
    let report = push_once(&args, &mut db, &pi, &host)?;
    print(&args, &report)?;
    Ok(EXIT_OK)
}

fn push_once(
    args: &PushArgs,
    db: &mut Db,
    pi: &PiIndex,
    host: &str,
) -> Result<PushReport, TeamError> {
    let bar = (!args.quiet && !args.json && output::can_draw_progress()).then(|| {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} pushing {pos}/{len} sessions, {elapsed}")
                .expect("a valid template"),
        );
        bar
    });
    let progress = |done: u64, total: u64| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    let r = push(db, pi, host, &progress);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    r
}

fn print(args: &PushArgs, r: &PushReport) -> anyhow::Result<()> {
    if args.json {
        let mut out = output::json_stdout();
        out.line(r)?;
        out.flush()?;
    } else if !args.quiet {
        let mut err = output::stderr();
        let sent = r.sessions_new + r.sessions_grown + r.sessions_replaced;
        if sent + r.sessions_moved + r.sessions_deleted + r.sessions_relinked == 0 {
            writeln!(
                err,
                "pi-index: up to date: {} sessions of {}, nothing to push ({} ms)",
                r.sessions, r.host, r.elapsed_ms
            )?;
        } else {
            writeln!(
                err,
                "pi-index: pushed {} messages of {} sessions as {} ({} new, {} grown, {} replaced, {} moved, {} deleted, {} unchanged, {} with a new place in their family; {:.1} MB in {} transactions, {} ms)",
                r.messages_sent,
                sent,
                r.host,
                r.sessions_new,
                r.sessions_grown,
                r.sessions_replaced,
                r.sessions_moved,
                r.sessions_deleted,
                r.sessions_unchanged,
                r.sessions_relinked,
                r.bytes_sent as f64 / 1e6,
                r.transactions,
                r.elapsed_ms
            )?;
        }
    }
    Ok(())
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.clamp(0.05, 86_400.0))
}

/// `push --watch`: build, push when something changed and then nothing
/// for a while, and at least every `--floor`; a failed push (the server
/// gone) is said once and retried at the next look.
fn watch(
    args: &PushArgs,
    url: &str,
    host: &str,
    index_dir: &Path,
) -> anyhow::Result<std::process::ExitCode> {
    use pi_index::discover::{default_locations, named_locations};
    use pi_index::pipeline::{build, BuildOptions};
    let (roots, locations) = if args.paths.is_empty() {
        let d = default_locations();
        let roots = d.roots();
        if roots.is_empty() {
            anyhow::bail!(
                "no Pi session directory found: pass the directory with --path, e.g. `pi-index push --watch --path ~/path/to/sessions`"
            );
        }
        (roots, d.locations)
    } else {
        (args.paths.clone(), named_locations(&args.paths))
    };
    let kinds = PiIndex::open(index_dir)
        .ok()
        .and_then(|pi| pi.build_info().ok().flatten())
        .and_then(|i| pi_index::pi::Kinds::parse(&i.kinds).ok())
        .unwrap_or_default();
    let opts = BuildOptions {
        roots,
        index_dir: index_dir.to_owned(),
        kinds,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
        memory_budget: 64 << 20,
        full: false,
        prune: false,
        locations,
    };
    let mut db: Option<Db> = None;
    let mut pending = true;
    let mut last_change = Instant::now() - secs(args.debounce);
    let mut last_push: Option<Instant> = None;
    let mut failing = false;
    loop {
        match build(&opts, &|_| {}) {
            Ok(b) => {
                if b.files_indexed + b.files_deleted + b.files_moved + b.files_pruned > 0 {
                    pending = true;
                    last_change = Instant::now();
                }
            }
            Err(e) => {
                let _ = writeln!(output::stderr(), "pi-index: warning: build: {e}");
            }
        }
        let quiet = last_change.elapsed() >= secs(args.debounce);
        let due = last_push.is_none_or(|t| t.elapsed() >= secs(args.floor));
        if (pending && quiet) || due {
            let r = (|| -> Result<PushReport, TeamError> {
                if db.as_ref().is_none_or(|d| d.client.is_closed()) {
                    db = Some(Db::connect(url)?);
                }
                let pi = PiIndex::open(index_dir)?;
                push_once(args, db.as_mut().expect("connected above"), &pi, host)
            })();
            match r {
                Ok(report) => {
                    if failing && !args.quiet {
                        let _ = writeln!(output::stderr(), "pi-index: the database is back");
                    }
                    failing = false;
                    pending = false;
                    last_push = Some(Instant::now());
                    print(args, &report)?;
                }
                Err(e) => {
                    db = None;
                    if !failing {
                        let _ = writeln!(
                            output::stderr(),
                            "pi-index: warning: push failed, retrying every {} s: {e}",
                            args.interval
                        );
                    }
                    failing = true;
                }
            }
        }
        std::thread::sleep(secs(args.interval));
    }
}
