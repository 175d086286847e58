//! `pi-index mcp`: serve the search tools over MCP (stdio or streamable
//! HTTP on 127.0.0.1), or run one
//! tool call and print its result (`--call`, for scripts and the Pi
//! extension).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{Args, ValueEnum};

use std::time::Duration;

use pi_index::mcp::http::Limits;
use pi_index::mcp::{call, run_http, run_stdio, Options, Served, State};
use pi_index::pi::Kinds;

use super::common::EXIT_OK;

/// Transports of `pi-index mcp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// JSON-RPC over stdin and stdout (what MCP clients launch).
    Stdio,
    /// Streamable HTTP on 127.0.0.1 (--port), for clients that connect to
    /// a URL.
    Http,
}

/// Arguments of `pi-index mcp`.
#[derive(Args, Debug)]
pub struct McpArgs {
    /// Session files or directories to keep the index up to date from.
    /// Default: the directories `pi-index build` reads without a PATH
    /// ($PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions, and
    /// ~/.config/pi/agent/sessions).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Answer from the index as it is: no incremental build before each
    /// call.
    #[arg(long)]
    pub no_refresh: bool,

    /// Kinds of text for an index the server has to create (as `build
    /// --include`); an existing index keeps its kinds.
    #[arg(long, value_name = "KINDS", default_value = "", hide_default_value = true, value_parser = Kinds::parse)]
    pub include: Kinds,

    /// The transport.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    pub transport: Transport,

    /// With --transport http: the port on 127.0.0.1 (0: any free one; the
    /// URL is printed on stderr).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub port: u16,

    /// With --transport http: close a session after this many seconds
    /// without a request.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub idle_timeout: u64,

    /// With --transport http: the most sessions alive at once (a new one
    /// closes the least recently used).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_sessions: u64,

    /// With --transport http: seconds for a request's headers, and again
    /// for its body, to arrive; else the connection is closed.
    #[arg(long, value_name = "SECS", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout: u64,

    /// Run one tool call (search, show or sessions) with --args and print
    /// its result as one JSON object, instead of serving. A tool error is
    /// printed on stderr, exit 2.
    #[arg(long, value_name = "TOOL")]
    pub call: Option<String>,

    /// With --call: the tool's arguments, a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}", requires = "call")]
    pub args: String,

    /// Serve the team's PostgreSQL database (postgres://…, see `push`)
    /// instead of the local index: every pushed host's sessions, each
    /// with its `host`, and the `host:NAME` filter. `--db` alone (last, or
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

/// How long one statement of a call may run in the team database: far
/// more than a search there takes, so that only a server gone wrong is
/// cut.
const DATABASE_TIMEOUT: Duration = Duration::from_secs(30);

/// Run `mcp`.
pub fn run(args: McpArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    for p in &args.paths {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    let mut opts = Options::new(index_dir.to_owned());
    opts.roots = args.paths;
    opts.refresh = !args.no_refresh;
    opts.kinds = args.include;
    // One call: one full check, no watch to start.
    opts.watch = args.call.is_none();
    let served = match &args.db {
        Some(url) => Served::Database(pi_index::read::serving(url, DATABASE_TIMEOUT)?),
        None => Served::Index(Box::new(State::new(opts))),
    };
    if let Some(tool) = args.call {
        let json: serde_json::Value = serde_json::from_str(&args.args)
            .map_err(|e| anyhow::anyhow!("--args is not JSON ({e}): give a JSON object"))?;
        let value = call(&served, &tool, json).map_err(anyhow::Error::msg)?;
        let mut out = super::output::json_stdout();
        out.line(&value)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let limits = Limits {
        idle: Duration::from_secs(args.idle_timeout),
        max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
        request_timeout: Duration::from_secs(args.request_timeout),
    };
    match args.transport {
        Transport::Stdio => run_stdio(served)?,
        Transport::Http => run_http(served, args.port, limits, |addr| {
            let _ = writeln!(
                super::output::stderr(),
                "pi-index: MCP (streamable HTTP) at http://{addr}/mcp"
            );
        })?,
    }
    Ok(EXIT_OK)
}
