//! Shared helpers for the integration tests: every test runs the real
//! `pi-index` binary (built by Cargo for the test run) on real files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The directory holding the bundled fixture sessions.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions")
}

/// One fixture file by name, e.g. `fixture("v1-no-version.jsonl")`.
pub fn fixture(name: &str) -> PathBuf {
    let p = fixtures().join(name);
    assert!(p.exists(), "missing fixture {}", p.display());
    p
}

/// A `pi-index` command with a clean environment: no colour, no
/// inherited index location, a private HOME so defaults never touch the
/// user's real data.
pub fn pi_index(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi-index"));
    cmd.env_remove("PI_INDEX_DIR")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("XDG_DATA_HOME")
        .env_remove("OMP_PROFILE")
        .env_remove("PI_PROFILE")
        .env_remove("PI_CONFIG_DIR")
        .env("HOME", home)
        .env("NO_COLOR", "1");
    cmd
}

/// A fresh temporary directory for an index (and a fake HOME).
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Self {
        Scratch {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }
    pub fn index(&self) -> PathBuf {
        self.dir.path().join("index")
    }
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    /// `pi-index <args>` with this scratch's HOME.
    pub fn cmd(&self) -> Command {
        std::fs::create_dir_all(self.home()).unwrap();
        pi_index(&self.home())
    }
    /// `pi-index build <paths> --index <index>`, to add flags or
    /// environment to.
    pub fn build_cmd(&self, paths: &[&Path]) -> Command {
        let mut cmd = self.cmd();
        cmd.arg("build")
            .args(paths)
            .arg("--index")
            .arg(self.index());
        cmd
    }
    /// Run `pi-index build <paths> --index <index> --json [extra]` and
    /// return the parsed JSON report. Panics (with stderr) on a non-zero exit.
    pub fn build(&self, paths: &[&Path], extra: &[&str]) -> serde_json::Value {
        self.report(self.build_cmd(paths).args(extra))
    }
    /// Run a build command with `--json` added and return the parsed
    /// report. Panics (with stderr) on a non-zero exit.
    pub fn report(&self, cmd: &mut Command) -> serde_json::Value {
        let out = run(cmd.arg("--json"));
        assert!(
            out.status.success(),
            "build failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "build --json printed non-JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }
    /// Run `pi-index show <session> --index <index> --format json --branch all`
    /// (every document, abandoned branches included, unless `extra` says
    /// otherwise: a later flag wins) and return one parsed object per
    /// printed line. Panics on a non-zero exit.
    pub fn show_json(&self, session: &str, extra: &[&str]) -> Vec<serde_json::Value> {
        let mut cmd = self.cmd();
        cmd.args([
            "show", session, "--format", "json", "--branch", "all", "--index",
        ])
        .arg(self.index())
        .args(extra);
        let out = run(&mut cmd);
        assert!(
            out.status.success(),
            "show failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        json_lines(&out)
    }

    /// Run `pi-index search --json -n 1000 --index <index> <extra> -- QUERY`
    /// and return its hits. Panics unless it exits 0 (hits) or 1 (none).
    pub fn search_json(&self, query: &str, extra: &[&str]) -> Vec<serde_json::Value> {
        let out = run(self
            .cmd()
            .args(["search", "--json", "-n", "1000", "--index"])
            .arg(self.index())
            .args(extra)
            .arg("--")
            .arg(query));
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "search {query}: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        json_lines(&out)
    }
}

/// One parsed object per line a command printed.
pub fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    std::str::from_utf8(&out.stdout)
        .expect("printed UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("printed a JSON line"))
        .collect()
}

/// The keys of every document `show --format json` prints (the issue's
/// list); search's `--json` adds `score` and `snippet`.
pub const DOC_KEYS: [&str; 15] = [
    "session_id",
    "path",
    "line",
    "offset",
    "entry_id",
    "role",
    "timestamp",
    "cwd",
    "session_name",
    "agent",
    "model",
    "active",
    "edited",
    "replacement",
    "text",
];

/// Run a command to completion, capturing its output.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("failed to start pi-index")
}

/// Byte offset at which 1-based line `line` of `path` starts.
pub fn line_offset(path: &Path, line: usize) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    let mut current = 1;
    if line == 1 {
        return 0;
    }
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            current += 1;
            if current == line {
                return (i + 1) as u64;
            }
        }
    }
    panic!("{} has no line {line}", path.display());
}

pub mod concurrent;
pub mod crash;
pub mod incremental;
pub mod pg;
pub mod raw;
pub mod reference;
pub mod tmux;
pub mod web;

/// Run a command, killing it if it has not ended after `secs` seconds (a
/// hang is a failure, not a stuck test run).
pub fn run_timeout(cmd: &mut Command, secs: u64) -> Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("failed to start pi-index");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let read_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).ok();
        v
    });
    let read_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).ok();
        v
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not end within {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: read_out.join().unwrap(),
        stderr: read_err.join().unwrap(),
    }
}

/// A standard output whose reading end is already closed: every write to
/// it fails with EPIPE, like `pi-index … | head -1` once `head` has left.
pub fn closed_pipe() -> std::process::Stdio {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: `pipe` fills both descriptors on success; each is then owned
    // by exactly one `OwnedFd`.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    write.into()
}

/// Run `cmd` with its standard output and error on a new pseudo-terminal
/// (as a person at a terminal would); returns its exit status and what it
/// printed (the terminal turns `\n` into `\r\n`).
pub fn on_terminal(mut cmd: Command) -> (std::process::ExitStatus, Vec<u8>) {
    use std::ffi::CStr;
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: plain libc calls on a descriptor this function owns; the
    // slave's name is copied out before anything else touches the buffer.
    let (master, slave) = unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(m >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(m), 0, "grantpt");
        assert_eq!(libc::unlockpt(m), 0, "unlockpt");
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0);
        let name = CStr::from_ptr(name.as_ptr()).to_owned();
        let s = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        assert!(s >= 0, "open the terminal's slave side");
        (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s))
    };
    cmd.stdin(std::process::Stdio::null())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    let mut child = cmd.spawn().expect("failed to start pi-index");
    // The command holds the parent's copies of the slave: drop them so the
    // master reads EOF (EIO) once the child is gone.
    drop(cmd);
    let mut master = std::fs::File::from(master);
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            v.extend_from_slice(&buf[..n]);
        }
        v
    });
    let status = child.wait().unwrap();
    (status, reader.join().unwrap())
}

/// A command that runs `bin` as the unprivileged user `nobody` when the
/// tests run as root (root reads everything), with `setpriv`; as is when
/// they do not run as root. `None` when that cannot be done here.
pub fn as_nobody(bin: &str) -> Option<Command> {
    // Who are we? `id -u` rather than a libc call keeps the test plain.
    let uid = Command::new("id").arg("-u").output().ok()?;
    let root = String::from_utf8_lossy(&uid.stdout).trim() == "0";
    if !root {
        return Some(Command::new(bin));
    }
    // The unprivileged user must be able to run the binary where it was
    // built (a checkout under a private directory would not let it).
    let probe = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            bin,
            "--version",
        ])
        .output()
        .ok()?;
    if !probe.status.success() {
        return None;
    }
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin]);
    Some(cmd)
}

/// A test that cannot run its case here says why and passes, except under
/// CI (`CI` set, as `.ci/run` does), where it fails: it must never pass
/// there without having run.
pub fn cannot_run(why: &str) {
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("skipped: {why}");
}

/// Runs a command as the child of a small Python process, which writes
/// the child's peak resident memory to the file named first.
const MEASURE: &str = r#"
import resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code if code >= 0 else 128 - code)
"#;

/// The output of a command run to completion, and its peak resident
/// memory in bytes.
///
/// Not the `ru_maxrss` of a child of the test process: the kernel carries
/// the high-water mark of the memory a process is spawned from across
/// `exec`, so a child of a test holding the hundreds of megabytes it wrote
/// would report those. The command runs instead as the child of a small
/// `python3` (which the corpus tests need anyway), which reports its
/// child's peak: that is the command's own, give or take Python's ~10 MB.
pub fn run_measured(cmd: &mut Command) -> (Output, u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("maxrss");
    let mut py = Command::new("python3");
    py.arg("-c")
        .arg(MEASURE)
        .arg(&report)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => py.env(key, v),
            None => py.env_remove(key),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        py.current_dir(d);
    }
    let output = py.output().expect("failed to start python3");
    let kib: u64 = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("no peak memory reported ({e}): {output:?}"))
        .trim()
        .parse()
        .expect("a number of KiB");
    (output, kib * 1024)
}

/// Copy a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Holds the index's write lock (tantivy's `.tantivy-writer.lock`, an
/// advisory file lock), as a running `pi-index build` does.
pub struct WriterLock(#[allow(dead_code)] std::fs::File);

impl WriterLock {
    pub fn take(index: &Path) -> WriterLock {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(index.join(".tantivy-writer.lock"))
            .unwrap();
        // SAFETY: flock on a descriptor this struct owns; no memory involved.
        let rc = unsafe {
            libc::flock(
                std::os::unix::io::AsRawFd::as_raw_fd(&f),
                libc::LOCK_EX | libc::LOCK_NB,
            )
        };
        assert_eq!(rc, 0, "cannot take the writer lock");
        WriterLock(f)
    }
}

/// A version-3 session file with one message per `(role, text)`, each
/// the child of the one before, at seconds 1, 2, … of 2026-05-01T10:00.
pub fn session_file(id: &str, cwd: &str, texts: &[(&str, &str)]) -> String {
    let mut out = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-05-01T10:00:00.000Z\",\"cwd\":\"{cwd}\"}}\n"
    );
    let mut parent = "null".to_owned();
    for (i, (role, text)) in texts.iter().enumerate() {
        out += &message(&format!("m{i}"), &parent, i as u32 + 1, role, text);
        parent = format!("\"m{i}\"");
    }
    out
}

/// One message entry of [`session_file`]'s shape.
pub fn message(id: &str, parent: &str, second: u32, role: &str, text: &str) -> String {
    let content = if *role == *"user" {
        serde_json::json!(text)
    } else {
        serde_json::json!([{"type": "text", "text": text}])
    };
    format!(
        "{}\n",
        serde_json::json!({"type": "message", "id": id, "parentId": serde_json::from_str::<serde_json::Value>(parent).unwrap(),
               "timestamp": format!("2026-05-01T10:00:{second:02}.000Z"),
               "message": {"role": role, "content": content, "timestamp": 0}})
    )
}

/// This machine's platform as pi-index's npm packages name it
/// (`${process.platform}-${process.arch}`), if one is built for it.
pub fn npm_platform() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("linux-x64"),
        ("linux", "aarch64") => Some("linux-arm64"),
        ("macos", "x86_64") => Some("darwin-x64"),
        ("macos", "aarch64") => Some("darwin-arm64"),
        ("windows", "x86_64") => Some("win32-x64"),
        _ => None,
    }
}
