//! `pi-index pick [QUERY]`: the picker on a real terminal, and what
//! happens to the choice (the agent that wrote it resumes it, or its path
//! or hit is printed).
//!
//! The state machine, the drawing and the index work are the library's
//! ([`pi_index::pick`]); this file owns the terminal: raw mode and the
//! alternate screen on `/dev/tty` (so that `$(pi-index pick --print)`
//! works: standard output stays free for the answer), restored by a drop
//! guard, a panic hook and a signal thread alike; the event loop; and the
//! `exec` of `pi --session FILE` (`omp --resume FILE` for Oh My Pi's).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use clap::Args;
use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste, Event};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pi_index::pick::app::{App, Choice, HitsDone, IndexState, Outcome, PreviewDone, SearchDone};
use pi_index::pick::refresh::{current, follow, refresh, refresher, Index, Refreshed, SharedView};
use pi_index::pick::worker::Worker;
use pi_index::pick::{run_hits, run_preview, run_search, View};

use super::common::{exit_error, EXIT_NOTHING, EXIT_OK};
use super::output::{self, shell_quote, ColorChoice};

/// Arguments of `pi-index pick`.
#[derive(Args, Debug)]
pub struct PickArgs {
    /// The query to start with, in the language of `pi-index search`
    /// (filters included); the picker searches as you type.
    #[arg(value_name = "QUERY")]
    pub query: Vec<String>,

    /// Print the chosen session file's path instead of resuming it in
    /// Pi: `pi --session "$(pi-index pick --print)"`.
    #[arg(long)]
    pub print: bool,

    /// Print the chosen hit as one JSON line (the keys of `search
    /// --json`; a session chosen without a query: the keys of `sessions
    /// --json`) instead of resuming it.
    #[arg(long, conflicts_with = "print")]
    pub json: bool,

    /// Start with only the active branch of each session (Ctrl-A
    /// toggles).
    #[arg(long)]
    pub active_only: bool,

    /// Open the index as it is: no refresh from Pi's session directories,
    /// first or while the picker is open.
    #[arg(long)]
    pub no_refresh: bool,

    /// When to colour the picker (auto: unless `NO_COLOR` is set).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Pick from the team's PostgreSQL database (see `push`) instead of
    /// the local index: every pushed host's sessions. A session of the
    /// team is on its host: choosing it prints the command that resumes
    /// it there. `--db` alone (last, or before another flag) reads the
    /// URL from $PI_INDEX_DATABASE_URL.
    #[arg(
        long,
        value_name = "URL",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with = "no_refresh"
    )]
    pub db: Option<String>,
}

/// How long the picker waits for its first refresh before its first
/// frame. With nothing to do it takes the start of the watch and a check
/// of every file, each about a walk of the session directories
/// ([docs/performance.md](../../docs/performance.md#the-picker)); one that
/// takes longer (a big append, a rebuild, a huge corpus) goes on in the
/// background while the index as it was is shown.
const QUICK_REFRESH: Duration = Duration::from_millis(200);

/// How long the first frame waits for the first search: it usually takes
/// a few milliseconds, and a frame with results beats one saying
/// "searching…".
const FIRST_SEARCH: Duration = Duration::from_millis(100);

/// What reaches the event loop.
enum Message {
    Input(Event),
    InputFailed(std::io::Error),
    Searched(SearchDone),
    Hits(HitsDone),
    Previewed(PreviewDone),
    Progress(u64),
    Refreshed(Refreshed),
}

/// Run `pick`.
pub fn run(args: PickArgs, index_dir: &Path) -> anyhow::Result<ExitCode> {
    if output::dumb_terminal() {
        bail!("pi-index pick draws a full-screen interface, which TERM=dumb cannot show: use `pi-index sessions QUERY` or `pi-index search QUERY`");
    }
    let tty = open_tty().map_err(|e| {
        anyhow!("pi-index pick needs a terminal (/dev/tty: {e}): use `pi-index sessions QUERY --json` in scripts")
    })?;
    let colour = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    if let Some(url) = &args.db {
        // The database as it is: nothing to refresh, nothing here to resume.
        let team = pi_index::read::open(Some(url), index_dir)?;
        let shared: SharedView = std::sync::Arc::new(std::sync::RwLock::new(Some(View::new(
            std::sync::Arc::from(team),
        ))));
        return pick(&args, tty, colour, None, shared);
    }
    let mut source = Index::open(index_dir)?;
    let mut refresher = refresher(index_dir);
    if !source.is_open() {
        if args.no_refresh {
            bail!(
                "no index at {}: run `pi-index build` (or `pi-index pick` without --no-refresh, which builds it)",
                index_dir.display()
            );
        }
        first_build(index_dir, &mut refresher, &mut source)?;
    }
    let shared = source.shared();
    pick(&args, tty, colour, Some((source, refresher)), shared)
}

/// The picker over `shared`, on `tty`; with the local index (`local`:
/// it, and what brings it up to date), the index followed as Pi writes
/// unless `--no-refresh`.
fn pick(
    args: &PickArgs,
    tty: File,
    colour: bool,
    local: Option<(Index, pi_index::refresh::Refresher)>,
    shared: SharedView,
) -> anyhow::Result<ExitCode> {
    let (tx, rx) = mpsc::channel::<Message>();
    let mut app = App::new(&args.query.join(" "), args.active_only, colour);
    let mut read = 0u64;
    let (mut source, refresher) = match local {
        Some((index, refresher)) => (Some(index), Some(refresher)),
        None => (None, None),
    };
    if let (false, Some(refresher)) = (args.no_refresh, refresher) {
        // Brought up to date now, then as Pi writes while the picker is
        // open (the session directories watched).
        let tx = tx.clone();
        std::thread::Builder::new()
            .name("pi-index-refresh".into())
            .spawn(move || {
                let progress = |bytes| {
                    let _ = tx.send(Message::Progress(bytes));
                };
                follow(refresher, &progress, |done| {
                    tx.send(Message::Refreshed(done)).is_ok()
                });
            })?;
        // A refresh that is quick is waited for, so that the first frame
        // is the index up to date; a long one goes on behind the picker.
        let deadline = Instant::now() + QUICK_REFRESH;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Message::Progress(bytes)) => read += bytes,
                Ok(Message::Refreshed(done)) => {
                    if let Some(source) = &mut source {
                        took_in(&mut app, source, done, false)?;
                    }
                    break;
                }
                Ok(_) => {}
                Err(_) => {
                    app.set_index_state(IndexState::Refreshing { bytes: read });
                    break;
                }
            }
        }
    }

    let searches = {
        let (tx, shared) = (tx.clone(), shared.clone());
        Worker::spawn("pi-index-search", move |job| {
            let done = run_search(current(&shared).as_ref(), &job);
            let _ = tx.send(Message::Searched(done));
        })
    };
    let hits = {
        let (tx, shared) = (tx.clone(), shared.clone());
        Worker::spawn("pi-index-hits", move |job| {
            let done = run_hits(current(&shared).as_ref(), &job);
            let _ = tx.send(Message::Hits(done));
        })
    };
    let previews = {
        let (tx, shared) = (tx.clone(), shared.clone());
        Worker::spawn("pi-index-preview", move |job| {
            let done = run_preview(current(&shared).as_ref(), &job);
            let _ = tx.send(Message::Previewed(done));
        })
    };
    let dispatch = |app: &mut App| {
        if let Some(job) = app.take_search() {
            searches.submit(job);
        }
        if let Some(job) = app.take_hits() {
            hits.submit(job);
        }
        if let Some(job) = app.take_preview() {
            previews.submit(job);
        }
    };
    dispatch(&mut app);
    let deadline = Instant::now() + FIRST_SEARCH;
    while app.searching() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(message) => handle(&mut app, source.as_mut(), &mut read, message)?,
            Err(_) => break,
        }
        dispatch(&mut app);
    }

    let mut guard = TerminalGuard::enter()?;
    let mut terminal = Terminal::new(CrosstermBackend::new(tty))?;
    {
        let tx = tx.clone();
        std::thread::Builder::new()
            .name("pi-index-input".into())
            .spawn(move || loop {
                let message = match crossterm::event::read() {
                    Ok(event) => Message::Input(event),
                    Err(e) => Message::InputFailed(e),
                };
                let failed = matches!(message, Message::InputFailed(_));
                if tx.send(message).is_err() || failed {
                    return;
                }
            })?;
    }
    drop(tx);

    loop {
        terminal.draw(|frame| app.draw(frame))?;
        if app.outcome().is_some() {
            break;
        }
        // Everything that arrived while the frame was drawn is handled
        // before the next one: a burst of keys costs one frame.
        let mut next = rx.recv().ok();
        while let Some(message) = next {
            handle(&mut app, source.as_mut(), &mut read, message)?;
            next = rx.try_recv().ok();
        }
        dispatch(&mut app);
    }
    drop(terminal);
    guard.restore();
    match app.take_outcome() {
        Some(Outcome::Chosen(choice)) if args.json => print_json(&choice),
        Some(Outcome::Chosen(choice)) if args.print => {
            let mut out = output::stdout(false);
            writeln!(out, "{}", choice.session.path)?;
            out.flush()?;
            Ok(EXIT_OK)
        }
        Some(Outcome::Chosen(choice)) => match &choice.session.host {
            Some(host) => elsewhere(&choice, host),
            None => resume(&choice),
        },
        Some(Outcome::Interrupted) => Ok(ExitCode::from(130)),
        Some(Outcome::Cancelled) | None => Ok(EXIT_NOTHING),
    }
}

/// No index yet: build one from Pi's session directories, with the
/// progress `pi-index build` shows, before the picker opens.
fn first_build(
    index_dir: &Path,
    refresher: &mut pi_index::refresh::Refresher,
    source: &mut Index,
) -> anyhow::Result<()> {
    let bar = if output::can_draw_progress() {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} {msg} {binary_bytes} read, {binary_bytes_per_sec}, {elapsed}",
            )
            .expect("valid progress template"),
        );
        bar.set_message("no index yet: indexing Pi's sessions,");
        bar
    } else {
        ProgressBar::hidden()
    };
    let done = refresh(refresher, &|bytes| bar.inc(bytes));
    bar.finish_and_clear();
    match done {
        Refreshed::Updated { messages, .. } => {
            source.refreshed(true)?;
            let _ = writeln!(
                output::stderr(),
                "pi-index: indexed {messages} messages into {}",
                index_dir.display()
            );
            Ok(())
        }
        Refreshed::Current => {
            source.refreshed(true)?;
            Ok(())
        }
        Refreshed::Busy => bail!(
            "another `pi-index build` is writing the index at {} for the first time: run `pi-index pick` again when it is done",
            index_dir.display()
        ),
        Refreshed::NoSessions(looked) => {
            let list: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
            bail!(
                "no index at {}, and no Pi session directory to build one from (looked in {}): run `pi-index build DIR` with the directory of your sessions",
                index_dir.display(),
                list.join(", ")
            )
        }
        Refreshed::Failed(e) => bail!("building the index at {}: {e}", index_dir.display()),
    }
}

/// Handle one message of the event loop.
fn handle(
    app: &mut App,
    source: Option<&mut Index>,
    read: &mut u64,
    message: Message,
) -> anyhow::Result<()> {
    match message {
        Message::Input(event) => app.event(&event),
        Message::InputFailed(e) => return Err(anyhow!("reading the terminal: {e}")),
        Message::Searched(done) => app.searched(done),
        Message::Hits(done) => app.hits_found(done),
        Message::Previewed(done) => app.previewed(done),
        Message::Progress(bytes) => {
            *read += bytes;
            app.set_index_state(IndexState::Refreshing { bytes: *read });
        }
        Message::Refreshed(done) => {
            if let Some(source) = source {
                took_in(app, source, done, true)?
            }
        }
    }
    Ok(())
}

/// Take in a refresh's outcome: reload the index and search again when
/// it committed, and say what the user should know.
fn took_in(app: &mut App, source: &mut Index, done: Refreshed, shown: bool) -> anyhow::Result<()> {
    let state = match done {
        Refreshed::Updated { messages, rebuilt } => {
            let had_index = source.is_open();
            source.refreshed(rebuilt)?;
            app.reindexed();
            if shown && had_index {
                IndexState::Refreshed { messages }
            } else {
                IndexState::Ready
            }
        }
        Refreshed::Current => IndexState::Ready,
        Refreshed::Busy => IndexState::Note(
            "another `pi-index build` is writing the index: showing it as it was".into(),
        ),
        // The index was built from a directory named to `build`: it is
        // shown as it is.
        Refreshed::NoSessions(_) => IndexState::Ready,
        Refreshed::Failed(e) => IndexState::Note(format!(
            "the index could not be brought up to date ({e}): showing it as it was"
        )),
    };
    app.set_index_state(state);
    Ok(())
}

/// `--json`: the chosen hit as `search --json` prints hits, or the
/// session as `sessions --json` does when it was chosen without one.
fn print_json(choice: &Choice) -> anyhow::Result<ExitCode> {
    let mut out = output::json_stdout();
    match &choice.hit {
        Some(hit) => out.line(hit)?,
        None => out.line(choice.session.as_ref())?,
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// A session of another host (the team database's) is not resumed here:
/// the command that resumes it there is printed.
fn elsewhere(choice: &Choice, host: &str) -> anyhow::Result<ExitCode> {
    let _ = writeln!(
        output::stderr(),
        "pi-index: the session is on {host}: resume it there with"
    );
    let agent = choice.session.agent;
    let mut out = output::stdout(false);
    writeln!(
        out,
        "cd {} && {} {} {}",
        shell_quote(choice.session.cwd.as_deref().unwrap_or(".")),
        agent.command(),
        agent.resume_flag(),
        shell_quote(&choice.session.path)
    )?;
    out.flush()?;
    Ok(EXIT_OK)
}

/// Resume the chosen session in the agent that wrote it: `pi --session
/// FILE`, or `omp --resume FILE` for Oh My Pi's, in the session's
/// directory when it exists (the agent works there in any case, and asks
/// what to do when it is gone), replacing this process on Unix.
fn resume(choice: &Choice) -> anyhow::Result<ExitCode> {
    let path = &choice.session.path;
    let agent = choice.session.agent;
    let program = agent.command();
    let flag = agent.resume_flag();
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let cwd = choice.session.cwd.as_deref().map(Path::new);
    let dir = match cwd {
        Some(d) if d.is_dir() => d.to_owned(),
        _ => {
            let _ = writeln!(
                output::stderr(),
                "pi-index: the session's directory {} does not exist: starting {} in {}",
                cwd.map_or_else(|| "(none recorded)".into(), |d| d.display().to_string()),
                agent.name(),
                here.display()
            );
            here
        }
    };
    let mut cmd = std::process::Command::new(program);
    cmd.arg(flag).arg(path).current_dir(&dir);
    #[cfg(unix)]
    let error = {
        use std::os::unix::process::CommandExt;
        cmd.exec()
    };
    #[cfg(not(unix))]
    let error = match cmd.status() {
        Ok(status) => {
            return Ok(status
                .code()
                .and_then(|c| u8::try_from(c).ok())
                .map_or_else(exit_error, ExitCode::from))
        }
        Err(e) => e,
    };
    let command = format!(
        "cd {} && {program} {flag} {}",
        shell_quote(&dir.to_string_lossy()),
        shell_quote(path)
    );
    if error.kind() == std::io::ErrorKind::NotFound {
        let _ = writeln!(
            output::stderr(),
            "pi-index: `{program}` is not on PATH: install {}, or resume the session yourself:",
            agent.name()
        );
    } else {
        let _ = writeln!(
            output::stderr(),
            "pi-index: could not start {program} ({error}): resume the session yourself:"
        );
    }
    let mut out = output::stdout(false);
    writeln!(out, "{command}")?;
    out.flush()?;
    Ok(exit_error())
}

fn open_tty() -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
}

/// Whether the terminal is in the picker's modes (raw, alternate screen,
/// bracketed paste), for whichever of the guard, the panic hook and the
/// signal thread restores it first.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The terminal in the picker's modes until dropped (or restored).
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> anyhow::Result<TerminalGuard> {
        install_restorers();
        enable_raw_mode().map_err(|e| anyhow!("cannot put the terminal in raw mode: {e}"))?;
        ACTIVE.store(true, Ordering::SeqCst);
        let guard = TerminalGuard;
        let mut tty = open_tty()?;
        crossterm::execute!(tty, EnterAlternateScreen, EnableBracketedPaste)?;
        Ok(guard)
    }

    fn restore(&mut self) {
        restore_terminal();
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Leave the picker's modes, once.
fn restore_terminal() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    // Raw mode first: it has more side effects than the screen.
    let _ = disable_raw_mode();
    if let Ok(mut tty) = open_tty() {
        let _ = crossterm::execute!(
            tty,
            DisableBracketedPaste,
            LeaveAlternateScreen,
            crossterm::cursor::Show
        );
    }
}

/// A panic hook and a signal thread that restore the terminal before a
/// panic's message is printed, or before SIGINT, SIGTERM, SIGHUP or
/// SIGQUIT take their default action.
fn install_restorers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let was_active = ACTIVE.load(Ordering::SeqCst);
            restore_terminal();
            previous(info);
            // A worker that panicked leaves a picker that cannot go on
            // (and its terminal is restored already): end it, as a panic
            // on the main thread would.
            if was_active && std::thread::current().name() != Some("main") {
                std::process::exit(101);
            }
        }));
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
            if let Ok(mut signals) =
                signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])
            {
                let _ = std::thread::Builder::new()
                    .name("pi-index-signals".into())
                    .spawn(move || {
                        if let Some(signal) = signals.forever().next() {
                            restore_terminal();
                            let _ = signal_hook::low_level::emulate_default_handler(signal);
                        }
                    });
            }
        }
    });
}
