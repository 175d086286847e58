//! The command line: arguments (clap), one file per command, and the only
//! place that knows about terminals, colours and exit codes.

mod build;
mod check;
mod common;
mod mcp;
mod output;
mod pick;
mod push;
mod search;
mod serve;
mod sessions;
mod show;
mod stats;
mod usage;

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use std::process::ExitCode;

use common::{exit_error, index_dir, EXIT_OK};

/// What `--version` prints after the name: the version, the commit and
/// the target it was built for (set by build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("PI_INDEX_COMMIT"),
    ", ",
    env!("PI_INDEX_TARGET"),
    ")"
);

/// Index and search every session the Pi coding agent has saved.
#[derive(Parser, Debug)]
#[command(
    name = "pi-index",
    version = VERSION,
    about,
    propagate_version = true,
    args_override_self = true
)]
pub struct Cli {
    /// The index directory [default: $PI_INDEX_DIR, else the platform data
    /// directory, e.g. ~/.local/share/pi-index]
    #[arg(long, global = true, value_name = "DIR")]
    pub index: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Index Pi session files (default: Pi's session directories).
    Build(build::BuildArgs),
    /// Search every indexed session.
    Search(search::SearchArgs),
    /// Print the indexed documents of one session.
    Show(show::ShowArgs),
    /// List indexed sessions, newest first or by what they cost, or find
    /// them by a query.
    Sessions(sessions::SessionsArgs),
    /// Show what the index holds.
    Stats(stats::StatsArgs),
    /// What Pi cost: tokens and money by day, week, month, session, model
    /// or project, each entry of a family of forks once.
    Usage(usage::UsageArgs),
    /// Compare the index with the session files (exit 1 when they
    /// differ); --repair mends it incrementally.
    Check(check::CheckArgs),
    /// Search as you type in a full-screen picker; Enter resumes the
    /// session in Pi.
    Pick(pick::PickArgs),
    /// Serve search, show and sessions to coding agents over MCP (stdio).
    Mcp(mcp::McpArgs),
    /// Push this machine's indexed sessions to the team's PostgreSQL
    /// database (only what changed since the last push).
    Push(push::PushArgs),
    /// Serve the web view: search and read every session in a browser
    /// (127.0.0.1 only).
    Serve(serve::ServeArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// Run the command line; returns the process exit code.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            if !e.use_stderr() {
                // Help and version: ours alone, coloured as clap likes.
                let _ = e.print();
                return EXIT_OK;
            }
            // An error quotes the arguments, which nobody checked.
            let _ = write!(output::stderr(), "{}", e.render());
            return exit_error();
        }
    };
    let index = cli.index;
    let dir = || index_dir(index.as_deref());
    let result = match cli.command {
        Command::Build(args) => dir().and_then(|d| build::run(args, &d)),
        Command::Search(args) => dir().and_then(|d| search::run(args, &d)),
        Command::Show(args) => dir().and_then(|d| show::run(args, &d)),
        Command::Sessions(args) => dir().and_then(|d| sessions::run(args, &d)),
        Command::Stats(args) => dir().and_then(|d| stats::run(args, &d)),
        Command::Usage(args) => dir().and_then(|d| usage::run(args, &d)),
        Command::Check(args) => dir().and_then(|d| check::run(args, &d)),
        Command::Pick(args) => dir().and_then(|d| pick::run(args, &d)),
        Command::Mcp(args) => dir().and_then(|d| mcp::run(args, &d)),
        Command::Push(args) => dir().and_then(|d| push::run(args, &d)),
        Command::Serve(args) => dir().and_then(|d| serve::run_serve(args, &d)),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "pi-index", &mut script);
            let mut out = output::own_stdout();
            out.write_all(&script)
                .and_then(|()| out.flush())
                .map(|()| EXIT_OK)
                .map_err(anyhow::Error::from)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => fail(&e),
    }
}

/// Print a one-line error and return the error exit code.
fn fail(e: &anyhow::Error) -> ExitCode {
    // A closed pipe (`pi-index search … --json | head -1`) is not an
    // error worth a word, wherever in the chain it is (JSON output wraps
    // it, like ripgrep's printer does).
    if is_broken_pipe(e) {
        return EXIT_OK;
    }
    let _ = writeln!(output::stderr(), "pi-index: error: {e:#}");
    exit_error()
}

/// Whether a closed pipe is the cause of `e`, or any error in its chain.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == Some(BrokenPipe)
    })
}
