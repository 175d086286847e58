//! `pi-index pick` through a real terminal: the binary runs in a tmux
//! pane, keys are sent with `send-keys`, the screen is read with
//! `capture-pane`, and a fake `pi`, first on PATH, records the arguments
//! and directory it was started with.
//!
//! Nothing here waits a fixed time: every step polls the screen (or a
//! file the pane's script writes) for what it expects, up to a generous
//! deadline that only a hung picker reaches. Without tmux the tests say
//! why and pass, except under CI (`CI` set), where they fail (`.ci/run`
//! installs tmux).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::{cannot_run, Scratch};

/// How long any one expected screen or file may take to appear. A picker
/// shows its first frame in well under a second; this is for a machine
/// loaded by parallel tests.
const DEADLINE: Duration = Duration::from_secs(60);

fn tmux_available() -> bool {
    match Command::new("tmux").arg("-V").output() {
        Ok(out) if out.status.success() => true,
        Ok(out) => {
            cannot_run(&format!(
                "`tmux -V` failed ({}): the picker's terminal tests need tmux (.ci/run installs it)",
                out.status
            ));
            false
        }
        Err(e) => {
            cannot_run(&format!(
                "tmux is not installed ({e}): the picker's terminal tests need it (`apt-get install tmux`; .ci/run installs it)"
            ));
            false
        }
    }
}

/// A tmux server of the test's own (its socket in the scratch dir), with
/// one pane running a script.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// A `w`x`h` pane running `sh script`.
    fn start(dir: &Path, w: u16, h: u16, script: &Path) -> Tmux {
        let t = Tmux {
            socket: dir.join("tmux.sock"),
        };
        let out = t
            .cmd()
            .args(["new-session", "-d", "-s", "pick", "-x"])
            .arg(w.to_string())
            .arg("-y")
            .arg(h.to_string())
            .arg("sh")
            .arg(script)
            .output()
            .expect("start tmux");
        assert!(
            out.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        t
    }

    fn cmd(&self) -> Command {
        let mut cmd = Command::new("tmux");
        // No user configuration, a socket nobody else uses.
        cmd.arg("-f").arg("/dev/null").arg("-S").arg(&self.socket);
        cmd
    }

    /// The screen as text (empty once the pane is gone).
    fn capture(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "pick"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen, once `ok` holds for it.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if ok(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "the screen never showed {what}; it shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Type `text` as it is.
    fn type_text(&self, text: &str) {
        self.send(&["-l", text]);
    }

    /// Press keys by tmux's names (`Enter`, `Escape`, `C-c`, `Down`).
    fn press(&self, keys: &[&str]) {
        self.send(keys);
    }

    fn send(&self, args: &[&str]) {
        let out = self
            .cmd()
            .args(["send-keys", "-t", "pick"])
            .args(args)
            .output()
            .expect("tmux send-keys");
        assert!(
            out.status.success(),
            "tmux send-keys {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
    }
}

/// A scratch with three sessions in three directories (two that exist,
/// one gone), a fake `pi` and a script to run the picker with.
struct Setup {
    s: Scratch,
    sessions: PathBuf,
    /// The sessions' files: alpha (oldest), beta, gone (newest).
    alpha: PathBuf,
    beta: PathBuf,
    gone: PathBuf,
    /// The directories alpha and beta were started in.
    alpha_dir: PathBuf,
    beta_dir: PathBuf,
    /// Where the pane's script starts (the "current directory").
    here: PathBuf,
    bin: PathBuf,
}

fn session(id: &str, day: &str, cwd: &str, user: &str, reply: &str) -> String {
    let cwd = serde_json::to_string(cwd).unwrap();
    [
        format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{day}T09:00:00.000Z","cwd":{cwd}}}"#),
        format!(r#"{{"type":"message","id":"m1","parentId":null,"timestamp":"{day}T09:00:01.000Z","message":{{"role":"user","content":"{user}","timestamp":0}}}}"#),
        format!(r#"{{"type":"message","id":"m2","parentId":"m1","timestamp":"{day}T09:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{reply}"}}],"timestamp":0}}}}"#),
    ]
    .join("\n")
        + "\n"
}

impl Setup {
    fn new() -> Setup {
        let s = Scratch::new();
        let root = s.dir.path().canonicalize().unwrap();
        let alpha_dir = root.join("projects/alpha");
        let beta_dir = root.join("projects/beta");
        let here = root.join("here");
        let bin = root.join("bin");
        for d in [&alpha_dir, &beta_dir, &here, &bin, &s.home()] {
            std::fs::create_dir_all(d).unwrap();
        }
        let sessions = root.join("sessions");
        let folder = sessions.join("--projects--");
        std::fs::create_dir_all(&folder).unwrap();
        let alpha = folder.join("2026-01-05T09-00-00-000Z_aaaa0001.jsonl");
        let beta = folder.join("2026-02-05T09-00-00-000Z_bbbb0002.jsonl");
        let gone = folder.join("2026-03-05T09-00-00-000Z_cccc0003.jsonl");
        let write = |path: &Path, text: String| std::fs::write(path, text).unwrap();
        write(
            &alpha,
            session(
                "aaaa0001",
                "2026-01-05",
                alpha_dir.to_str().unwrap(),
                "zqalpha why does the watcher miss renames",
                "Because inotify drops events under load.",
            ),
        );
        write(
            &beta,
            session(
                "bbbb0002",
                "2026-02-05",
                beta_dir.to_str().unwrap(),
                "zqbeta plan the release",
                "First the changelog, then the tag.",
            ),
        );
        write(
            &gone,
            session(
                "cccc0003",
                "2026-03-05",
                "/nonexistent/zqgone-project",
                "zqgone where did the project go",
                "It was deleted.",
            ),
        );
        // The fake pi: its arguments, one a line, then its directory.
        let record = root.join("pi-record");
        let pi = bin.join("pi");
        std::fs::write(
            &pi,
            format!(
                "#!/bin/sh\n{{ for a in \"$@\"; do printf 'arg=%s\\n' \"$a\"; done; printf 'cwd=%s\\n' \"$(pwd -P)\"; }} > '{}'\n",
                record.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pi, std::fs::Permissions::from_mode(0o755)).unwrap();
        Setup {
            s,
            sessions,
            alpha,
            beta,
            gone,
            alpha_dir,
            beta_dir,
            here,
            bin,
        }
    }

    fn root(&self) -> PathBuf {
        self.here.parent().unwrap().to_owned()
    }

    fn build(&self) {
        self.s.build(&[&self.sessions], &[]);
    }

    /// A script that runs `pi-index pick ARGS` in `here` (stdout and
    /// stderr to files, the exit status and `stty -a` after it), with
    /// the fake pi first on PATH unless `with_pi` is false.
    fn script(&self, args: &str, with_pi: bool) -> PathBuf {
        let root = self.root();
        let path = if with_pi {
            format!("{}:/usr/bin:/bin", self.bin.display())
        } else {
            "/usr/bin:/bin".to_owned()
        };
        let text = format!(
            "cd '{here}'\n\
             unset PI_INDEX_DIR PI_CODING_AGENT_DIR XDG_DATA_HOME\n\
             export HOME='{home}' PATH='{path}' NO_COLOR=1 PI_CODING_AGENT_SESSION_DIR='{sessions}'\n\
             sh -c 'echo $$ > \"$0/pid\"; exec \"$@\"' '{root}' '{bin}' pick --index '{index}' {args} > '{root}/stdout' 2> '{root}/stderr'\n\
             echo $? > '{root}/status.tmp'\n\
             stty -a > '{root}/stty' 2>&1\n\
             mv '{root}/status.tmp' '{root}/status'\n",
            here = self.here.display(),
            home = self.s.home().display(),
            sessions = self.sessions.display(),
            root = root.display(),
            bin = env!("CARGO_BIN_EXE_pi-index"),
            index = self.s.index().display(),
        );
        let script = root.join("run.sh");
        std::fs::write(&script, text).unwrap();
        script
    }

    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.root().join(name)).unwrap_or_default()
    }

    /// The picker's exit status, once the pane's script has it.
    fn status(&self) -> i32 {
        let start = Instant::now();
        let status = self.root().join("status");
        while !status.exists() {
            assert!(
                start.elapsed() < DEADLINE,
                "pi-index pick did not end; stderr: {}",
                self.file("stderr")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.file("status").trim().parse().unwrap()
    }

    /// What the fake pi recorded: its arguments and its directory.
    fn pi_record(&self) -> (Vec<String>, PathBuf) {
        let text = self.file("pi-record");
        let args = text
            .lines()
            .filter_map(|l| l.strip_prefix("arg="))
            .map(str::to_owned)
            .collect();
        let cwd = text
            .lines()
            .find_map(|l| l.strip_prefix("cwd="))
            .unwrap_or_else(|| panic!("pi was not started; stderr: {}", self.file("stderr")));
        (args, PathBuf::from(cwd))
    }

    /// The terminal was left as a shell wants it: not raw, echoing.
    fn assert_terminal_restored(&self) {
        let stty = self.file("stty");
        let words: Vec<&str> = stty
            .split_whitespace()
            .map(|w| w.trim_end_matches(';'))
            .collect();
        for mode in ["icanon", "echo", "isig", "icrnl", "opost"] {
            assert!(
                words.contains(&mode),
                "{mode} is off after the picker:\n{stty}"
            );
        }
    }
}

/// The first line of the picker's frame: its prompt.
fn prompt(screen: &str) -> &str {
    screen.lines().next().unwrap_or("")
}

#[test]
fn pick_builds_a_missing_index_then_enter_starts_pi_in_the_sessions_directory() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    assert!(!t.s.index().exists());
    let tmux = Tmux::start(&t.root(), 120, 30, &t.script("", true));
    let screen = tmux.wait_for("the listing of 3 sessions", |s| {
        prompt(s).ends_with("3 sessions") && s.contains("zqgone where did the project go")
    });
    assert!(
        screen.contains("zqgone where did the project go"),
        "{screen}"
    );
    assert!(
        t.file("stderr").contains("indexed 6 messages into"),
        "{}",
        t.file("stderr")
    );
    tmux.type_text("zqalpha renames");
    // One session found, and its preview read (the preview answers
    // after the rows; a capture may also catch a frame half drawn, so
    // everything checked below is waited for).
    let screen = tmux.wait_for("one session found, previewed", |s| {
        prompt(s).starts_with("> zqalpha renames")
            && prompt(s).ends_with(" 1 session")
            && s.contains("▶ user")
            && s.contains("Because inotify drops events")
    });
    let row = screen
        .lines()
        .find(|l| l.starts_with("> zqalpha why does the watcher"))
        .unwrap_or_else(|| panic!("no selected row for alpha:\n{screen}"));
    assert!(row.contains("alpha"), "its directory: {row}");
    assert!(row.contains("2026-01-05"), "its date: {row}");
    // The preview beside the list, at the hit, with the answer after it.
    assert!(screen.contains('│'), "{screen}");
    assert!(screen.contains("Because inotify drops events"), "{screen}");
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "pi's own exit: {}", t.file("stderr"));
    let (args, cwd) = t.pi_record();
    assert_eq!(args, ["--session", t.alpha.to_str().unwrap()]);
    assert_eq!(cwd, t.alpha_dir);
    t.assert_terminal_restored();
}

#[test]
fn pick_print_prints_the_chosen_file_and_starts_nothing() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = Tmux::start(&t.root(), 100, 30, &t.script("--print zqbeta", true));
    tmux.wait_for("beta found", |s| {
        s.lines()
            .any(|l| l.starts_with("> zqbeta plan the release"))
    });
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "{}", t.file("stderr"));
    assert_eq!(t.file("stdout"), format!("{}\n", t.beta.display()));
    assert!(!t.root().join("pi-record").exists(), "pi was started");
    t.assert_terminal_restored();
}

#[test]
fn pick_json_prints_the_chosen_hit() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = Tmux::start(&t.root(), 100, 30, &t.script("--json inotify", true));
    tmux.wait_for("alpha's answer found", |s| {
        s.lines().any(|l| l.contains("[assistant] Because inotify"))
    });
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "{}", t.file("stderr"));
    let hit: serde_json::Value = serde_json::from_str(t.file("stdout").trim()).unwrap();
    assert_eq!(hit["path"], t.alpha.to_str().unwrap());
    assert_eq!(hit["role"], "assistant");
    assert_eq!(hit["line"], 3);
    assert_eq!(hit["text"], "Because inotify drops events under load.");
}

#[test]
fn pick_esc_exits_1_and_ctrl_c_exits_130_with_the_terminal_restored() {
    if !tmux_available() {
        return;
    }
    for (key, code) in [("Escape", 1), ("C-c", 130)] {
        let t = Setup::new();
        t.build();
        let tmux = Tmux::start(&t.root(), 100, 30, &t.script("", true));
        tmux.wait_for("the listing", |s| prompt(s).ends_with("3 sessions"));
        tmux.type_text("zq");
        tmux.wait_for("the query typed", |s| prompt(s).starts_with("> zq"));
        tmux.press(&[key]);
        assert_eq!(t.status(), code, "{key}: {}", t.file("stderr"));
        assert_eq!(t.file("stdout"), "", "{key}");
        assert!(
            !t.root().join("pi-record").exists(),
            "{key}: pi was started"
        );
        t.assert_terminal_restored();
    }
}

#[test]
fn pick_on_a_60x15_terminal_folds_the_preview_away() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = Tmux::start(&t.root(), 60, 15, &t.script("--print", true));
    let screen = tmux.wait_for("the listing, three rows", |s| {
        prompt(s).ends_with("3 sessions") && s.lines().filter(|l| l.contains("zq")).count() == 3
    });
    assert!(!screen.contains('│'), "no preview at 60x15:\n{screen}");
    for line in screen.lines() {
        assert!(line.chars().count() <= 60, "{line}");
    }
    // Newest first: gone, beta, alpha. The second is beta.
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains("zq")).collect();
    assert!(rows[0].starts_with("> zqgone"), "{screen}");
    assert!(rows[1].starts_with("  zqbeta"), "{screen}");
    tmux.press(&["Down"]);
    tmux.wait_for("beta selected", |s| {
        s.lines().any(|l| l.starts_with("> zqbeta"))
    });
    tmux.press(&["?"]);
    tmux.wait_for("the keys", |s| s.contains("Ctrl-A"));
    tmux.press(&["Escape"]);
    tmux.wait_for("the keys closed", |s| !s.contains("Ctrl-A"));
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "{}", t.file("stderr"));
    assert_eq!(t.file("stdout"), format!("{}\n", t.beta.display()));
}

#[test]
fn pick_starts_pi_here_when_the_sessions_directory_is_gone_and_says_so() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = Tmux::start(&t.root(), 100, 30, &t.script("--no-refresh zqgone", true));
    tmux.wait_for("gone found", |s| {
        s.lines().any(|l| l.starts_with("> zqgone where"))
    });
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "{}", t.file("stderr"));
    let (args, cwd) = t.pi_record();
    assert_eq!(args, ["--session", t.gone.to_str().unwrap()]);
    assert_eq!(cwd, t.here);
    let err = t.file("stderr");
    assert!(
        err.contains("/nonexistent/zqgone-project does not exist: starting Pi in"),
        "{err}"
    );
}

#[test]
fn pick_without_pi_on_path_says_so_and_prints_the_command() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = Tmux::start(&t.root(), 100, 30, &t.script("zqbeta", false));
    tmux.wait_for("beta found", |s| {
        s.lines().any(|l| l.starts_with("> zqbeta"))
    });
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 2, "{}", t.file("stderr"));
    assert!(
        t.file("stderr").contains("`pi` is not on PATH"),
        "{}",
        t.file("stderr")
    );
    assert_eq!(
        t.file("stdout"),
        format!(
            "cd {} && pi --session {}\n",
            t.beta_dir.display(),
            t.beta.display()
        )
    );
    t.assert_terminal_restored();
}

#[test]
fn pick_restores_the_terminal_when_killed_by_a_signal() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = Tmux::start(&t.root(), 100, 30, &t.script("", true));
    tmux.wait_for("the listing", |s| prompt(s).ends_with("3 sessions"));
    // The script wrote the picker's pid (a shell that became it by exec).
    let pid = t.file("pid").trim().to_owned();
    assert!(!pid.is_empty(), "no pid written");
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    assert_eq!(t.status(), 128 + 15, "{}", t.file("stderr"));
    t.assert_terminal_restored();
    drop(tmux);
}
