//! `pi-index serve`: the web view on loopback, kept fresh from Pi's
//! session directories, or over the team database with `--db` (see
//! `pi_index::serve`).

use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;

use pi_index::pi::Kinds;
use pi_index::serve::{run, Options};

use super::common::EXIT_OK;

/// The port `serve` listens on unless told.
pub const DEFAULT_PORT: u16 = 7717;

/// Arguments of `pi-index serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Session files or directories to keep the index up to date from.
    /// Default: the directories `pi-index build` reads without a PATH.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// The port (0: any free one; the URL is printed).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PORT)]
    pub port: u16,

    /// Open the URL in the desktop's browser.
    #[arg(long)]
    pub open: bool,

    /// Serve the index as it is: no incremental builds in the background.
    #[arg(long)]
    pub no_refresh: bool,

    /// Kinds of text for an index the server has to create (as `build
    /// --include`); an existing index keeps its kinds.
    #[arg(long, value_name = "KINDS", default_value = "", hide_default_value = true, value_parser = Kinds::parse)]
    pub include: Kinds,

    /// Listen on this address instead of 127.0.0.1 and ::1. Any address
    /// but loopback needs --token: it serves your sessions to whoever can
    /// reach it.
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<IpAddr>,

    /// Every request must carry this token (the printed URL holds it).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "PI_INDEX_SERVE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// Serve the team's PostgreSQL database (postgres://…, see `push`)
    /// instead of the local index: every pushed host's sessions, each
    /// with its host, and the `host:NAME` filter. `--db` alone (last, or
    /// before another flag) reads the URL from $PI_INDEX_DATABASE_URL.
    #[arg(
        long,
        value_name = "URL",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with_all = ["paths", "no_refresh", "include"]
    )]
    pub db: Option<String>,
}

/// Run `serve`.
pub fn run_serve(args: ServeArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    for p in &args.paths {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    let mut opts = Options::new(index_dir.to_owned(), args.port);
    opts.live.roots = args.paths;
    opts.live.refresh = !args.no_refresh;
    opts.live.kinds = args.include;
    opts.bind = args.bind;
    opts.token = args.token.filter(|t| !t.is_empty());
    opts.db = args.db;
    let database = opts.db.is_some();
    // Refused here, before anything listens.
    pi_index::serve::addresses(&opts)?;
    if let Some(ip) = opts.bind.filter(|ip| !ip.is_loopback()) {
        let _ = writeln!(
            super::output::stderr(),
            "pi-index: warning: serving on {ip}, beyond this machine: anyone who can reach it and has the token reads your sessions"
        );
    }
    let token = opts.token.clone();
    let open = args.open;
    run(opts, |addrs| {
        let url = |a: &std::net::SocketAddr| {
            let t = token
                .as_deref()
                .map_or(String::new(), |t| format!("?token={t}"));
            format!("http://{a}/{t}")
        };
        let mut err = super::output::stderr();
        // Listening on every address: the URLs name this machine's own.
        let addrs: Vec<std::net::SocketAddr> = addrs
            .iter()
            .flat_map(|a| pi_index::serve::reachable(*a))
            .collect();
        if let Some(first) = addrs.first() {
            let others: Vec<String> = addrs[1..].iter().map(url).collect();
            let _ = writeln!(
                err,
                "pi-index: serving {}{} ({}Ctrl-C stops)",
                url(first),
                if others.is_empty() {
                    String::new()
                } else {
                    format!(" and {}", others.join(" "))
                },
                if database { "the team database; " } else { "" }
            );
            if open {
                open_browser(&url(first), &mut err);
            }
        }
    })?;
    Ok(EXIT_OK)
}

/// Start the desktop's browser on `url`; say so when there is none.
fn open_browser(url: &str, err: &mut impl Write) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        let _ = writeln!(
            err,
            "pi-index: cannot start a browser ({opener}: {e}): open the URL above yourself"
        );
    }
}
