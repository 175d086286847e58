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
        String::from_utf8(out.stdout)
            .expect("show printed UTF-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("show printed a JSON line"))
            .collect()
    }
}

/// The keys of every document `show --format json` prints (the issue's
/// list); search's `--json` adds `score` and `snippet`.
pub const DOC_KEYS: [&str; 12] = [
    "session_id",
    "path",
    "line",
    "offset",
    "entry_id",
    "role",
    "timestamp",
    "cwd",
    "session_name",
    "model",
    "active",
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

pub mod crash;
pub mod incremental;
