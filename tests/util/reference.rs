//! The reference implementations the tests compare with, installed on
//! first use by the project's own scripts (pinned versions, into their
//! default places, `target/pi-node` and `target/mempalace-venv`, shared
//! with `tests/mcp.rs`; `.ci/run` installs them there beforehand):
//!
//! - Pi 1.6.0 with a Node 22 (`scripts/pi/setup.sh`), whose own
//!   `SessionManager` writes sessions and reads them back
//!   (`scripts/pi/write-sessions.mjs`, `scripts/pi/pi-view.mjs`);
//! - Oh My Pi 18.2.3 with the Bun that runs it (`scripts/omp/setup.sh`,
//!   into `target/omp-bun`), whose own `SessionManager` writes sessions,
//!   renames them in place and reads them back
//!   (`scripts/omp/write-sessions.mjs`, `rename-append.mjs`,
//!   `omp-view.mjs`);
//! - MemPalace 3.11.0 in a venv (`scripts/alternatives/setup-mempalace.sh`),
//!   whose transcripts `show --format transcript` must reproduce
//!   (`scripts/alternatives/mempalace_transcript.py`);
//! - ccusage 20.0.24 (`scripts/alternatives/setup-ccusage.sh`, npm, into
//!   `target/ccusage`), whose `pi daily` `usage daily` must equal on
//!   sessions it reads as Pi does.
//!
//! When one cannot be installed (no registry, no npm or python3), the
//! tests that need it say why and pass, except under CI, where they fail
//! ([`super::cannot_run`]).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Run an install script (it installs into its default place, takes a
/// lock while it does, and skips what is there); its last stdout line is
/// the interpreter to use.
fn install(script: &str) -> Result<PathBuf, String> {
    let out = Command::new("bash")
        .arg(repo().join(script))
        .output()
        .map_err(|e| format!("cannot run {script}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{script} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("").trim();
    if last.is_empty() {
        return Err(format!("{script} printed no interpreter"));
    }
    Ok(PathBuf::from(last))
}

/// Pi 1.6.0 and the Node 22 that runs it.
pub struct Pi {
    /// The node binary.
    pub node: PathBuf,
    /// Where setup.sh installed (PI_NODE_DIR for the scripts).
    pub dir: PathBuf,
}

/// Pi, installed once per test run; `None` (said, or a failure under CI)
/// when it cannot be.
pub fn pi() -> Option<&'static Pi> {
    static PI: OnceLock<Result<Pi, String>> = OnceLock::new();
    let got = PI.get_or_init(|| {
        let dir = repo().join("target/pi-node");
        install("scripts/pi/setup.sh").map(|node| Pi { node, dir })
    });
    match got {
        Ok(pi) => Some(pi),
        Err(why) => {
            super::cannot_run(&format!("Pi 1.6 is not available: {why}"));
            None
        }
    }
}

impl Pi {
    /// `node scripts/pi/<script> args...` with a throwaway HOME and agent
    /// dir (Pi writes into its agent dir even to print its version),
    /// offline; returns stdout parsed as JSON.
    fn script(&self, script: &str, args: &[&std::ffi::OsStr], home: &Path) -> serde_json::Value {
        std::fs::create_dir_all(home).unwrap();
        let out = Command::new(&self.node)
            .arg(repo().join("scripts/pi").join(script))
            .args(args)
            .env("HOME", home)
            .env("PI_CODING_AGENT_DIR", home.join(".pi/agent"))
            .env("PI_NODE_DIR", &self.dir)
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("PI_TELEMETRY", "0")
            .output()
            .expect("run node");
        assert!(
            out.status.success(),
            "{script} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{script} printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    /// Write the reference sessions into `out` (which must not exist or be
    /// empty) with Pi's own SessionManager; returns the manifest.
    pub fn write_sessions(&self, out: &Path, home: &Path) -> serde_json::Value {
        self.script("write-sessions.mjs", &[out.as_os_str()], home)
    }

    /// Write a session and its forks into `out` with Pi's own
    /// `createBranchedSession` and `forkFrom`; returns the manifest.
    pub fn write_forks(&self, out: &Path, home: &Path) -> serde_json::Value {
        self.script("write-forks.mjs", &[out.as_os_str()], home)
    }

    /// Write sessions recording usage everywhere Pi 1.6 writes it, and
    /// their forks, into `out`; returns the manifest with Pi's own totals
    /// (`scripts/pi/write-usage.mjs`).
    pub fn write_usage(&self, out: &Path, home: &Path) -> serde_json::Value {
        self.script("write-usage.mjs", &[out.as_os_str()], home)
    }

    /// Pi's own view of each file (entries, active branch, context).
    pub fn view(&self, files: &[PathBuf], home: &Path) -> Vec<serde_json::Value> {
        let args: Vec<&std::ffi::OsStr> = files.iter().map(|f| f.as_os_str()).collect();
        match self.script("pi-view.mjs", &args, home) {
            serde_json::Value::Array(v) => v,
            other => panic!("pi-view printed {other}"),
        }
    }
}

/// Oh My Pi 18.2.3 and the Bun that runs it.
pub struct Omp {
    /// The bun binary.
    pub bun: PathBuf,
    /// Where setup.sh installed (OMP_BUN_DIR for the scripts).
    pub dir: PathBuf,
}

/// Oh My Pi, installed once per test run; `None` (said, or a failure
/// under CI) when it cannot be.
pub fn omp() -> Option<&'static Omp> {
    static OMP: OnceLock<Result<Omp, String>> = OnceLock::new();
    let got = OMP.get_or_init(|| {
        let dir = repo().join("target/omp-bun");
        install("scripts/omp/setup.sh").map(|bun| Omp { bun, dir })
    });
    match got {
        Ok(omp) => Some(omp),
        Err(why) => {
            super::cannot_run(&format!("Oh My Pi 18.2.3 is not available: {why}"));
            None
        }
    }
}

impl Omp {
    /// `bun scripts/omp/<script> args...` with `home` as HOME (where Oh
    /// My Pi keeps its sessions, `~/.omp/agent/sessions`) and none of its
    /// directory overrides; returns stdout parsed as JSON.
    fn script(&self, script: &str, args: &[&std::ffi::OsStr], home: &Path) -> serde_json::Value {
        std::fs::create_dir_all(home).unwrap();
        let out = Command::new(&self.bun)
            .arg("--no-install")
            .arg(repo().join("scripts/omp").join(script))
            .args(args)
            .env("HOME", home)
            .env("OMP_BUN_DIR", &self.dir)
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env_remove("PI_CONFIG_DIR")
            .env_remove("OMP_PROFILE")
            .env_remove("PI_PROFILE")
            .env_remove("XDG_DATA_HOME")
            .output()
            .expect("run bun");
        assert!(
            out.status.success(),
            "{script} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{script} printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    /// Write the reference sessions with Oh My Pi's own SessionManager
    /// into `home`'s `~/.omp/agent/sessions`, for working directories
    /// below `cwds`; returns the manifest.
    pub fn write_sessions(&self, cwds: &Path, home: &Path) -> serde_json::Value {
        self.script("write-sessions.mjs", &[cwds.as_os_str()], home)
    }

    /// Rename the session `file` to `name` and append a user message
    /// `text`, as Oh My Pi does (the title slot rewritten in place).
    pub fn rename_append(
        &self,
        file: &Path,
        name: &str,
        text: &str,
        home: &Path,
    ) -> serde_json::Value {
        self.script(
            "rename-append.mjs",
            &[file.as_os_str(), name.as_ref(), text.as_ref()],
            home,
        )
    }

    /// Oh My Pi's own view of each file (name, entries, active branch).
    pub fn view(&self, files: &[PathBuf], home: &Path) -> Vec<serde_json::Value> {
        let args: Vec<&std::ffi::OsStr> = files.iter().map(|f| f.as_os_str()).collect();
        match self.script("omp-view.mjs", &args, home) {
            serde_json::Value::Array(v) => v,
            other => panic!("omp-view printed {other}"),
        }
    }
}

/// MemPalace's venv python, installed once per test run.
pub fn mempalace() -> Option<&'static Path> {
    static MP: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let got = MP.get_or_init(|| install("scripts/alternatives/setup-mempalace.sh"));
    match got {
        Ok(py) => Some(py),
        Err(why) => {
            super::cannot_run(&format!("MemPalace 3.11.0 is not available: {why}"));
            None
        }
    }
}

/// MemPalace's transcript of each file: `{path, pi, conversations,
/// transcript}` (`pi`: whether its Pi importer read the file as a Pi
/// session), or `{path, error}`.
pub fn mempalace_transcripts(python: &Path, files: &[PathBuf]) -> Vec<serde_json::Value> {
    let out = Command::new(python)
        .arg(repo().join("scripts/alternatives/mempalace_transcript.py"))
        .args(files)
        .env_remove("PYTHONPATH")
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "mempalace_transcript.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    match serde_json::from_slice(&out.stdout).expect("mempalace_transcript.py printed JSON") {
        serde_json::Value::Array(v) => v,
        other => panic!("mempalace_transcript.py printed {other}"),
    }
}

/// ccusage, installed once per test run; `None` (said, or a failure
/// under CI) when it cannot be.
pub fn ccusage() -> Option<&'static Path> {
    static CC: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match CC.get_or_init(|| install("scripts/alternatives/setup-ccusage.sh")) {
        Ok(bin) => Some(bin),
        Err(why) => {
            super::cannot_run(&format!("ccusage is not available: {why}"));
            None
        }
    }
}
