//! The picker in a real terminal, for `tests/pick.rs` and the panics of
//! `tests/failpoints.rs`: a tmux server of the test's own, a scratch with
//! three sessions, a fake `pi` that records how it was started, and a
//! script that runs `pi-index pick` in a pane and leaves its exit status
//! and `stty -a` behind.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::{cannot_run, Scratch};

/// How long any one expected screen or file may take to appear. A picker
/// shows its first frame in well under a second; this is for a machine
/// loaded by parallel tests.
pub const DEADLINE: Duration = Duration::from_secs(60);

pub fn tmux_available() -> bool {
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
pub struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// A `w`x`h` pane running `sh script`.
    pub fn start(dir: &Path, w: u16, h: u16, script: &Path) -> Tmux {
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
    pub fn capture(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "pick"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with its colours and attributes as escape sequences.
    pub fn capture_styled(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-e", "-t", "pick"])
            .output()
            .expect("tmux capture-pane -e");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Resize the pane's window.
    pub fn resize(&self, w: u16, h: u16) {
        let out = self
            .cmd()
            .args(["resize-window", "-t", "pick", "-x"])
            .arg(w.to_string())
            .arg("-y")
            .arg(h.to_string())
            .output()
            .expect("tmux resize-window");
        assert!(
            out.status.success(),
            "tmux resize-window: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The screen, once `ok` holds for it.
    pub fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
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
    pub fn type_text(&self, text: &str) {
        self.send(&["-l", text]);
    }

    /// Press keys by tmux's names (`Enter`, `Escape`, `C-c`, `Down`).
    pub fn press(&self, keys: &[&str]) {
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
/// one gone), a fake `pi` (and `omp`) and a script to run the picker with.
pub struct Setup {
    pub s: Scratch,
    pub sessions: PathBuf,
    /// The sessions' files: alpha (oldest), beta, gone (newest).
    pub alpha: PathBuf,
    pub beta: PathBuf,
    pub gone: PathBuf,
    /// The directories alpha and beta were started in.
    pub alpha_dir: PathBuf,
    pub beta_dir: PathBuf,
    /// Where the pane's script starts (the "current directory").
    pub here: PathBuf,
    pub bin: PathBuf,
}

pub fn session(id: &str, day: &str, cwd: &str, user: &str, reply: &str) -> String {
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
    pub fn new() -> Setup {
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
        // The fake pi: its arguments, one a line, then its directory; and
        // a fake omp, the same into its own record.
        for program in ["pi", "omp"] {
            let record = root.join(format!("{program}-record"));
            let fake = bin.join(program);
            std::fs::write(
                &fake,
                format!(
                    "#!/bin/sh\n{{ for a in \"$@\"; do printf 'arg=%s\\n' \"$a\"; done; printf 'cwd=%s\\n' \"$(pwd -P)\"; }} > '{}'\n",
                    record.display()
                ),
            )
            .unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
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

    pub fn root(&self) -> PathBuf {
        self.here.parent().unwrap().to_owned()
    }

    pub fn build(&self) {
        self.s.build(&[&self.sessions], &[]);
    }

    /// `pi-index pick ARGS` started in a `w` x `h` tmux terminal, as
    /// [`Run::default`] says.
    pub fn pick(&self, args: &str, w: u16, h: u16) -> Tmux {
        Tmux::start(&self.root(), w, h, &self.script(args, Run::default()))
    }

    /// A script that runs `pi-index pick ARGS` in `here` (stdout and
    /// stderr to files, the exit status and `stty -a` after it), as `run`
    /// says.
    pub fn script(&self, args: &str, run: Run) -> PathBuf {
        let root = self.root();
        let path = if run.pi {
            format!("{}:/usr/bin:/bin", self.bin.display())
        } else {
            "/usr/bin:/bin".to_owned()
        };
        let colour = if run.colour {
            "unset NO_COLOR"
        } else {
            "export NO_COLOR=1"
        };
        let env: String = run
            .env
            .iter()
            .map(|(k, v)| format!("export {k}='{v}'\n"))
            .collect();
        let text = format!(
            "cd '{here}'\n\
             unset PI_INDEX_DIR PI_CODING_AGENT_DIR XDG_DATA_HOME\n\
             export HOME='{home}' PATH='{path}' PI_CODING_AGENT_SESSION_DIR='{sessions}'\n\
             {colour}\n\
             {env}\
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

    pub fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.root().join(name)).unwrap_or_default()
    }

    /// The picker's exit status, once the pane's script has it.
    pub fn status(&self) -> i32 {
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
    pub fn pi_record(&self) -> (Vec<String>, PathBuf) {
        self.record("pi")
    }

    /// What the fake `program` (`pi` or `omp`) recorded.
    pub fn record(&self, program: &str) -> (Vec<String>, PathBuf) {
        let text = self.file(&format!("{program}-record"));
        let args = text
            .lines()
            .filter_map(|l| l.strip_prefix("arg="))
            .map(str::to_owned)
            .collect();
        let cwd = text
            .lines()
            .find_map(|l| l.strip_prefix("cwd="))
            .unwrap_or_else(|| {
                panic!("{program} was not started; stderr: {}", self.file("stderr"))
            });
        (args, PathBuf::from(cwd))
    }

    /// The terminal was left as a shell wants it: not raw, echoing.
    pub fn assert_terminal_restored(&self) {
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

/// How the pane's script runs the picker.
pub struct Run {
    /// The fake pi first on PATH (else no pi at all).
    pub pi: bool,
    /// Colour allowed (else `NO_COLOR=1`).
    pub colour: bool,
    /// More environment.
    pub env: Vec<(&'static str, String)>,
}

impl Default for Run {
    fn default() -> Run {
        Run {
            pi: true,
            colour: false,
            env: Vec::new(),
        }
    }
}

/// The first line of the picker's frame: its prompt.
pub fn prompt(screen: &str) -> &str {
    screen.lines().next().unwrap_or("")
}
