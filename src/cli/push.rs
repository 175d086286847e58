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

use super::common::EXIT_OK;
use super::output;

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

    /// Keep pushing: watch the session files (PATH, or Pi's session dirs),
    /// bring the local index up to date as they change, push what changed
    /// once nothing more changed for --debounce seconds, and at least
    /// every --floor seconds (after checking every file). A server that
    /// goes away is waited for.
    #[arg(long)]
    pub watch: bool,

    /// With --watch: the sessions to index (as `build` takes them).
    #[arg(long = "path", value_name = "PATH", requires = "watch")]
    pub paths: Vec<PathBuf>,

    /// With --watch: seconds between looks at every session file when the
    /// watch cannot say what changed (a file system without inotify
    /// events, too many directories to watch), and between retries of a
    /// failed push. Changes the watch sees are taken as they happen.
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
    let pi = PiIndex::open_released(index_dir)?;
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
    let waiting = || {
        if let Some(bar) = &bar {
            bar.suspend(|| ());
        }
        if !args.quiet {
            let _ = writeln!(
                output::stderr(),
                "pi-index: another push of {host} is running: waiting for it to end"
            );
        }
    };
    let r = push(db, pi, host, &progress, &waiting);
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
        if sent
            + r.sessions_moved
            + r.sessions_deleted
            + r.sessions_relinked
            + r.sessions_usage_added
            == 0
        {
            writeln!(
                err,
                "pi-index: up to date: {} sessions of {}, nothing to push ({} ms)",
                r.sessions, r.host, r.elapsed_ms
            )?;
        } else {
            writeln!(
                err,
                "pi-index: pushed {} messages of {} sessions as {} ({} new, {} grown, {} replaced, {} moved, {} deleted, {} unchanged, {} with a new place in their family, {} with their usage added; {:.1} MB in {} transactions, {} ms)",
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
                r.sessions_usage_added,
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

/// `push --watch`: keep the local index up to date from the watched
/// session directories, push when something changed and then nothing for
/// `--debounce`, and at least every `--floor` (a full check of every file
/// first: the safety net under the watch). When the watch cannot say what
/// changed, every file is checked every `--interval`; a failed push (the
/// server gone) is said once and retried every `--interval`.
fn watch(
    args: &PushArgs,
    url: &str,
    host: &str,
    index_dir: &Path,
) -> anyhow::Result<std::process::ExitCode> {
    use pi_index::refresh::{changed, Checked, Config, Outcome, Refresher};
    if args.paths.is_empty() && pi_index::discover::default_locations().roots().is_empty() {
        anyhow::bail!(
            "no Pi session directory found: pass the directory with --path, e.g. `pi-index push --watch --path ~/path/to/sessions`"
        );
    }
    let mut config = Config::new(index_dir.to_owned());
    config.roots = args.paths.clone();
    config.threads = config.threads.min(4);
    let mut refresher = Refresher::new(config);
    let mut db: Option<Db> = None;
    let mut pending = true;
    let mut last_change = Instant::now() - secs(args.debounce);
    let mut last_push: Option<Instant> = None;
    let mut failing = false;
    let mut said_none = false;
    loop {
        let due = last_push.is_none_or(|t| t.elapsed() >= secs(args.floor));
        if due && last_push.is_some() {
            refresher.recheck("the periodic check under the watch (--floor)");
        }
        let mut full = false;
        match refresher.refresh(&|_| {}) {
            Outcome::NoSessions(looked) => {
                if !said_none {
                    let list: Vec<String> =
                        looked.iter().map(|p| p.display().to_string()).collect();
                    let _ = writeln!(
                        output::stderr(),
                        "pi-index: warning: no Pi session directory found (looked in {}): pushing the index as it is",
                        list.join(", ")
                    );
                }
                said_none = true;
            }
            Outcome::Ran { checked, result } => {
                said_none = false;
                if let Checked::Full(why) = &checked {
                    full = true;
                    if !args.quiet && !args.json {
                        let _ = writeln!(
                            output::stderr(),
                            "pi-index: checked every session file ({why})"
                        );
                    }
                }
                match result {
                    Ok(Some(b)) if changed(&b) => {
                        pending = true;
                        last_change = Instant::now();
                    }
                    Ok(_) => {}
                    Err(e) => {
                        let _ = writeln!(output::stderr(), "pi-index: warning: build: {e}");
                    }
                }
            }
        }
        let quiet = last_change.elapsed() >= secs(args.debounce);
        if (pending && quiet) || due {
            let r = (|| -> Result<PushReport, TeamError> {
                if db.as_ref().is_none_or(|d| d.client.is_closed()) {
                    db = Some(Db::connect(url)?);
                }
                let pi = PiIndex::open_released(index_dir)?;
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
        // Until the watch sees a change, or the next thing due: the
        // floor; a retry, or a look when the watch cannot say; the end
        // of the debounce.
        let mut wait =
            secs(args.floor).saturating_sub(last_push.map_or(Duration::ZERO, |t| t.elapsed()));
        if failing || full {
            wait = wait.min(secs(args.interval));
        } else if pending {
            wait = wait.min(secs(args.debounce).saturating_sub(last_change.elapsed()));
        }
        refresher.wait(wait.max(Duration::from_millis(50)));
    }
}
