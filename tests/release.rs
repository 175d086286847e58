//! The packages as users install them (docs/install.md):
//! `scripts/release/package.sh` makes this platform's npm tarballs and
//! wheel from the binary these tests already run (its profile and
//! features: no second build, only a stripped relink by maturin), and
//!
//! - npm: both tarballs are published to a local registry (verdaccio,
//!   pinned, on a loopback port, started and stopped here) and
//!   `npm i -g pi-index` installs them into an empty prefix;
//! - Pi: `pi install npm:pi-index` (Pi 1.6.0, a scratch agent dir) from
//!   that registry, then the extension's `session_search` answers in
//!   `--mode rpc` with the binary that came with the package;
//! - PyPI: the wheel into a fresh venv with pip, and with `uv tool install`;
//!
//! each run with `cargo`, `~/.cargo/bin` and every other `pi-index` off
//! PATH: `pi-index --version` and the README's fixtures commands.
//! maturin, uv and verdaccio come from `scripts/release/setup.sh`, Pi from
//! `scripts/pi/setup.sh`; a tool that cannot be installed makes a test
//! say why and pass, and fail under CI.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::mcp::{faux_model, output_within, pi_cmd, pi_node, tool_result, Rpc};
use crate::util::{cannot_run, npm_platform};

const BIN: &str = env!("CARGO_BIN_EXE_pi-index");
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `cmd`'s output within `secs`, which must be a success.
fn ok(cmd: &mut Command, secs: u64) -> Output {
    let out = output_within(cmd, secs);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// The installed tools (`scripts/release/setup.sh`).
struct Tools {
    maturin: PathBuf,
    uv: PathBuf,
    verdaccio: PathBuf,
}

fn tools(test: &str) -> Option<&'static Tools> {
    static TOOLS: OnceLock<Result<Tools, String>> = OnceLock::new();
    let got = TOOLS.get_or_init(|| {
        let out = Command::new("bash")
            .arg(repo().join("scripts/release/setup.sh"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run scripts/release/setup.sh: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "scripts/release/setup.sh failed ({}): {}",
                out.status,
                text(&out.stderr).trim()
            ));
        }
        let lines: Vec<PathBuf> = text(&out.stdout).lines().map(PathBuf::from).collect();
        match lines.as_slice() {
            [.., maturin, uv, verdaccio] => Ok(Tools {
                maturin: maturin.clone(),
                uv: uv.clone(),
                verdaccio: verdaccio.clone(),
            }),
            _ => Err(format!("setup.sh printed {lines:?}")),
        }
    });
    match got {
        Ok(t) => Some(t),
        Err(why) => {
            cannot_run(&format!("{test}: {why}"));
            None
        }
    }
}

/// What package.sh made: the npm tarballs and the wheel.
struct Dist {
    main: PathBuf,
    platform: PathBuf,
    wheel: PathBuf,
}

/// The packages of this platform, made once per test run from the binary
/// these tests run: the profile it was built with (its directory under
/// target/) and the features of this build.
fn dist(test: &str) -> Option<&'static Dist> {
    let tools = tools(test)?;
    let Some(platform) = npm_platform() else {
        cannot_run(&format!(
            "{test}: no npm package is built for this platform"
        ));
        return None;
    };
    static DIST: OnceLock<Dist> = OnceLock::new();
    Some(DIST.get_or_init(|| {
        let dir = Path::new(BIN).parent().unwrap();
        let profile = match dir.file_name().unwrap().to_str().unwrap() {
            "debug" => "dev",
            other => other,
        };
        let out = repo().join("target/release-test/dist");
        let mut cmd = Command::new("bash");
        cmd.arg(repo().join("scripts/release/package.sh"))
            .args(["--profile", profile, "--out"])
            .arg(&out)
            .env("MATURIN", &tools.maturin);
        if cfg!(feature = "failpoints") {
            cmd.args(["--features", "failpoints"]);
        }
        // The cargo that runs these tests builds (nothing, the binary is
        // up to date) and maturin's relinks it stripped.
        if let Some(cargo) = std::env::var_os("CARGO") {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let dirs = std::iter::once(Path::new(&cargo).parent().unwrap().to_owned())
                .chain(std::env::split_paths(&path));
            cmd.env("PATH", std::env::join_paths(dirs).unwrap());
        }
        let report = ok(&mut cmd, 900);
        eprintln!("{}", text(&report.stderr));
        let wheels: Vec<PathBuf> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "whl"))
            .collect();
        assert_eq!(wheels.len(), 1, "{wheels:?}");
        let dist = Dist {
            main: out.join(format!("pi-index-{VERSION}.tgz")),
            platform: out.join(format!("pi-index-{platform}-{VERSION}.tgz")),
            wheel: wheels[0].clone(),
        };
        for f in [&dist.main, &dist.platform] {
            assert!(f.is_file(), "package.sh made no {}", f.display());
        }
        dist
    }))
}

/// A PATH without cargo: the directories of PATH less `~/.cargo/bin`,
/// any holding `cargo` or `pi-index`, and this repository's target/,
/// after `first`.
fn path_without_cargo(first: &[&Path]) -> OsString {
    let home_cargo = std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo/bin"));
    let rest = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| {
            Some(d) != home_cargo.as_ref()
                && !d.join("cargo").exists()
                && !d.join("pi-index").exists()
                && !d.starts_with(repo().join("target"))
        })
        .collect::<Vec<_>>();
    let path = std::env::join_paths(first.iter().map(|d| d.to_path_buf()).chain(rest)).unwrap();
    assert_eq!(which("cargo", &path), None, "cargo is still on {path:?}");
    path
}

/// The first `name` on `path`, as a shell would find it.
fn which(name: &str, path: &OsString) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The README's fixtures block: each command's arguments, with the demo
/// index put in `index`.
fn readme_fixture_commands(index: &Path) -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let section = readme
        .split("\n## Try it on the bundled fixtures")
        .nth(1)
        .expect("README.md has its fixtures section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the fixtures section's sh block");
    let commands: Vec<Vec<String>> = block
        .lines()
        .filter_map(|l| {
            l.strip_prefix("cargo run --release -- ")
                .or_else(|| l.strip_prefix("pi-index "))
        })
        .map(|l| {
            l.split_whitespace()
                .map(|w| match w {
                    "/tmp/pi-index-demo" => index.to_string_lossy().into_owned(),
                    w => w.to_owned(),
                })
                .collect()
        })
        .collect();
    assert_eq!(
        commands.iter().map(|c| c[0].as_str()).collect::<Vec<_>>(),
        ["build", "search"],
        "the README's fixtures commands changed: {block}"
    );
    commands
}

/// The README's summary of the fixtures build, up to its time.
fn readme_summary() -> String {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let after = readme
        .split("\n## Try it on the bundled fixtures")
        .nth(1)
        .unwrap();
    let shown = after
        .split("```text\n")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    shown.split(" in ").next().unwrap().to_owned()
}

/// `pi-index` as installed in `bin_dir`, found on a PATH without cargo:
/// `--version` is this build's, and the README's fixtures commands print
/// what this build prints.
fn check_installed(bin_dir: &Path, scratch: &Path, extra_first: &[&Path]) {
    let mut first = vec![bin_dir];
    first.extend_from_slice(extra_first);
    let path = path_without_cargo(&first);
    let exe = if cfg!(windows) {
        "pi-index.exe"
    } else {
        "pi-index"
    };
    let found = which(exe, &path).unwrap_or_else(|| panic!("no {exe} on {path:?}"));
    assert_eq!(found, bin_dir.join(exe));
    let run = |args: &[String]| {
        ok(
            Command::new(&found)
                .args(args)
                .current_dir(repo())
                .env("PATH", &path)
                .env("HOME", scratch)
                .env_remove("PI_INDEX_DIR"),
            120,
        )
    };
    let version = run(&["--version".to_owned()]);
    let want = ok(Command::new(BIN).arg("--version"), 30);
    assert_eq!(text(&version.stdout), text(&want.stdout));
    assert!(
        text(&version.stdout).starts_with(&format!("pi-index {VERSION} (commit ")),
        "{}",
        text(&version.stdout)
    );

    let index = scratch.join("demo-index");
    let commands = readme_fixture_commands(&index);
    let built = run(&commands[0]);
    let summary = text(&built.stdout);
    assert_eq!(summary.split(" in ").next().unwrap(), readme_summary());
    let searched = run(&commands[1]);
    let want = ok(
        Command::new(BIN)
            .args(&commands[1])
            .current_dir(repo())
            .env("HOME", scratch),
        60,
    );
    assert!(text(&searched.stdout).contains("notify"));
    assert_eq!(text(&searched.stdout), text(&want.stdout));
}

/// A private npm registry: verdaccio on a loopback port, storing in its
/// directory, with no uplink (nothing leaves the machine); stopped when
/// dropped.
struct Registry {
    child: Child,
    url: String,
    npmrc: PathBuf,
    cache: PathBuf,
    log: PathBuf,
}

impl Registry {
    fn start(node: &Path, verdaccio: &Path, dir: &Path) -> Registry {
        std::fs::create_dir_all(dir).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.join("config.yaml");
        std::fs::write(
            &config,
            format!(
                "storage: {storage}\n\
                 auth:\n  htpasswd:\n    file: {htpasswd}\n    max_users: -1\n\
                 uplinks: {{}}\n\
                 packages:\n  '**':\n    access: $all\n    publish: $all\n\
                 max_body_size: 1gb\n\
                 log: {{ type: stdout, format: pretty, level: warn }}\n",
                storage = dir.join("storage").display(),
                htpasswd = dir.join("htpasswd").display(),
            ),
        )
        .unwrap();
        let log = dir.join("verdaccio.log");
        let child = Command::new(node)
            .arg(verdaccio)
            .arg("--config")
            .arg(&config)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(dir.join("verdaccio.err")).unwrap())
            .spawn()
            .expect("start verdaccio");
        let url = format!("http://127.0.0.1:{port}/");
        // Publishing needs a token; this registry takes anyone's.
        let npmrc = dir.join("npmrc");
        std::fs::write(
            &npmrc,
            format!("//127.0.0.1:{port}/:_authToken=pi-index-test\n"),
        )
        .unwrap();
        let mut r = Registry {
            child,
            url,
            npmrc,
            cache: dir.join("npm-cache"),
            log,
        };
        r.wait_ready(port);
        r
    }

    /// Until `/-/ping` answers 200, within 60 s.
    fn wait_ready(&mut self, port: u16) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "verdaccio exited ({status}):\n{}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                let _ = s.write_all(b"GET /-/ping HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
                let mut answer = String::new();
                let _ = s.read_to_string(&mut answer);
                if answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200") {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "verdaccio did not answer on port {port} within 60 s:\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// npm's settings for this registry, on `cmd`.
    fn npm_env<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.env("npm_config_registry", &self.url)
            .env("npm_config_userconfig", &self.npmrc)
            .env("npm_config_cache", &self.cache)
            .env("npm_config_update_notifier", "false")
            .env("npm_config_fund", "false")
            .env("npm_config_audit", "false")
    }

    /// Publish both tarballs, the platform's first (the main package
    /// names it).
    fn publish(&self, dist: &Dist) {
        for tarball in [&dist.platform, &dist.main] {
            ok(
                self.npm_env(Command::new("npm").arg("publish").arg(tarball)),
                300,
            );
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Node 22's directory (Pi's), for the launcher's `env node` and for npm.
fn node_dir(node: &Path) -> &Path {
    node.parent().unwrap()
}

#[test]
fn npm_install_from_a_registry_runs_the_binary_of_this_platform() {
    let test = "npm_install_from_a_registry_runs_the_binary_of_this_platform";
    let (Some(node), Some(tools), Some(dist)) = (pi_node(test), tools(test), dist(test)) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let registry = Registry::start(node, &tools.verdaccio, &scratch.path().join("registry"));
    registry.publish(dist);
    let prefix = scratch.path().join("prefix");
    std::fs::create_dir(&prefix).unwrap();
    ok(
        registry.npm_env(
            Command::new("npm")
                .args(["install", "--global", "--prefix"])
                .arg(&prefix)
                .arg("pi-index"),
        ),
        300,
    );
    let platform = npm_platform().unwrap();
    let modules = prefix.join("lib/node_modules/pi-index");
    let shipped = modules.join(format!("node_modules/@pi-index/{platform}/bin/pi-index"));
    assert!(shipped.is_file(), "npm installed no {}", shipped.display());
    check_installed(&prefix.join("bin"), scratch.path(), &[node_dir(node)]);

    // Without its platform package, the launcher says which one is
    // missing (exit 2).
    std::fs::remove_dir_all(modules.join("node_modules")).unwrap();
    let path = path_without_cargo(&[&prefix.join("bin"), node_dir(node)]);
    let out = output_within(
        Command::new(prefix.join("bin/pi-index"))
            .arg("--version")
            .env("PATH", &path),
        60,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "pi-index: error: @pi-index/{platform}, the package of pi-index's binary for {platform}, \
             is not installed beside pi-index: install pi-index from npm with its optional \
             dependencies, not with --omit=optional\n"
        )
    );
}

#[test]
fn pi_install_from_a_registry_gives_find_and_session_search_with_the_shipped_binary() {
    let test = "pi_install_from_a_registry_gives_find_and_session_search_with_the_shipped_binary";
    let (Some(node), Some(tools), Some(dist)) = (pi_node(test), tools(test), dist(test)) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let registry = Registry::start(node, &tools.verdaccio, &scratch.path().join("registry"));
    registry.publish(dist);
    let home = scratch.path().join("home");
    let agent = scratch.path().join("agent");
    let proj = scratch.path().join("proj");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    // Pi, and the npm it runs, with no pi-index and no cargo on PATH.
    let path = path_without_cargo(&[node_dir(node)]);
    let pi = |args: &[&str]| {
        let mut cmd = pi_cmd(node, &home, &proj);
        registry
            .npm_env(&mut cmd)
            .env("PATH", &path)
            .env("PI_CODING_AGENT_DIR", &agent)
            .args(args);
        cmd
    };
    let out = ok(&mut pi(&["install", "npm:pi-index"]), 300);
    assert!(
        text(&out.stdout).contains("Installed npm:pi-index"),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let platform = npm_platform().unwrap();
    let shipped = agent.join(format!(
        "npm/node_modules/@pi-index/{platform}/bin/pi-index"
    ));
    assert!(shipped.is_file(), "pi installed no {}", shipped.display());

    // The fixtures indexed; the extension searches them.
    let index = scratch.path().join("index");
    ok(
        Command::new(BIN)
            .arg("build")
            .arg(repo().join("fixtures/sessions"))
            .arg("--index")
            .arg(&index)
            .arg("-q")
            .env("HOME", &home),
        120,
    );
    let mut rpc = Rpc::start(
        pi(&[
            "--mode",
            "rpc",
            "--no-mcp",
            "--no-session",
            "-e",
            &faux_model(),
            "--model",
            "faux/faux-1",
        ])
        .env("PI_INDEX_DIR", &index),
    );
    let cmds = rpc.command("c", json!({"id": "c", "type": "get_commands"}));
    let find = cmds["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "find")
        .cloned()
        .unwrap_or_else(|| panic!("no /find among {cmds}"));
    assert_eq!(find["sourceInfo"]["source"], "npm:pi-index", "{find}");

    let args = json!({"query": "notify", "limit": 2});
    let (answer, is_error) = tool_result(&mut rpc, &format!("use tool session_search {args}"));
    assert!(!is_error, "{answer}");
    let got: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer}"));
    // What pi-index's own MCP search answers on the same index.
    let want = ok(
        Command::new(BIN)
            .args(["mcp", "--call", "search", "--args", &args.to_string()])
            .env("PI_INDEX_DIR", &index)
            .env("PI_CODING_AGENT_DIR", &agent)
            .env("HOME", &home),
        60,
    );
    let want: Value = serde_json::from_slice(&want.stdout).unwrap();
    assert!(got["total"].as_u64().unwrap() >= 2, "{got}");
    assert_eq!(
        (&got["hits"], &got["total"]),
        (&want["hits"], &want["total"])
    );
}

#[test]
fn pip_and_uv_install_the_wheel_with_the_binary() {
    let test = "pip_and_uv_install_the_wheel_with_the_binary";
    let (Some(tools), Some(dist)) = (tools(test), dist(test)) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let venv = scratch.path().join("venv");
    ok(
        Command::new("python3").arg("-m").arg("venv").arg(&venv),
        120,
    );
    ok(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--no-index", "--disable-pip-version-check"])
            .arg(&dist.wheel),
        300,
    );
    check_installed(&venv.join("bin"), scratch.path(), &[]);

    let tool_bin = scratch.path().join("uv-bin");
    ok(
        Command::new(&tools.uv)
            .args(["tool", "install", "--offline"])
            .arg(&dist.wheel)
            .env("UV_TOOL_DIR", scratch.path().join("uv-tools"))
            .env("UV_TOOL_BIN_DIR", &tool_bin)
            .env("UV_CACHE_DIR", scratch.path().join("uv-cache"))
            .env("UV_PYTHON_DOWNLOADS", "never")
            .env("UV_NO_CONFIG", "1"),
        300,
    );
    let uv_scratch = scratch.path().join("uv-home");
    std::fs::create_dir(&uv_scratch).unwrap();
    check_installed(&tool_bin, &uv_scratch, &[]);
}

#[test]
fn the_launcher_names_a_platform_without_a_binary() {
    let Some(node) = pi_node("the_launcher_names_a_platform_without_a_binary") else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    // Node on another machine: what process.platform and arch say there.
    let preload = scratch.path().join("elsewhere.cjs");
    std::fs::write(
        &preload,
        "Object.defineProperty(process, 'platform', { value: 'freebsd' });\n\
         Object.defineProperty(process, 'arch', { value: 'riscv64' });\n",
    )
    .unwrap();
    let out = output_within(
        Command::new(node)
            .arg("--require")
            .arg(&preload)
            .arg(repo().join("integrations/pi/bin/pi-index.js"))
            .arg("--version"),
        60,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "pi-index: error: pi-index has no prebuilt binary for freebsd-riscv64 (only linux-x64, \
         linux-arm64, darwin-x64, darwin-arm64, win32-x64): build it from source with \
         `cargo install pi-index`, and set PI_INDEX_BIN to its path for Pi's extension\n"
    );
}

#[test]
fn version_says_the_commit_and_the_target() {
    let out = ok(Command::new(BIN).arg("--version"), 30);
    let git = Command::new("git")
        .arg("-C")
        .arg(repo())
        .args(["rev-parse", "HEAD"])
        .output();
    let commit = match git {
        Ok(g) if g.status.success() => text(&g.stdout).trim()[..12].to_owned(),
        _ => "unknown".to_owned(),
    };
    assert_eq!(
        text(&out.stdout),
        format!(
            "pi-index {VERSION} (commit {commit}, {})\n",
            env!("PI_INDEX_TARGET")
        )
    );
    let triple = env!("PI_INDEX_TARGET");
    assert!(
        triple.starts_with(std::env::consts::ARCH),
        "{triple} is not this machine's"
    );
}

/// Every platform has its npm package in the launcher's list, the main
/// package's optionalDependencies (at Cargo's version) and the release
/// workflow's matrix.
#[test]
fn every_platform_is_named_alike_in_the_packages_and_the_workflow() {
    let platforms = [
        "linux-x64",
        "linux-arm64",
        "darwin-x64",
        "darwin-arm64",
        "win32-x64",
    ];
    let pkg: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("integrations/pi/package.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(pkg["name"], "pi-index");
    assert_eq!(pkg["version"], VERSION, "integrations/pi/package.json");
    let deps: std::collections::BTreeMap<String, Value> = pkg["optionalDependencies"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let want: std::collections::BTreeMap<String, Value> = platforms
        .iter()
        .map(|p| (format!("@pi-index/{p}"), json!(VERSION)))
        .collect();
    assert_eq!(deps, want);
    let launcher = std::fs::read_to_string(repo().join("integrations/pi/lib/binary.js")).unwrap();
    let listed = format!(
        "const PLATFORMS = [{}];",
        platforms
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert!(launcher.contains(&listed), "lib/binary.js lacks {listed}");
    let workflow = std::fs::read_to_string(repo().join(".github/workflows/release.yml")).unwrap();
    for p in platforms {
        assert!(
            workflow.contains(&format!("npm: {p}\n")),
            "release.yml builds no {p}"
        );
    }
}

/// `cargo package` ships the code and what build.rs reads, and nothing
/// the build does not need (the published crate builds alone: the
/// release workflow runs `cargo publish --dry-run`).
#[test]
fn the_crate_package_holds_what_the_build_reads() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = ok(
        Command::new(cargo)
            .args(["package", "--list", "--allow-dirty", "--offline"])
            .current_dir(repo()),
        120,
    );
    let listed: std::collections::BTreeSet<String> =
        text(&out.stdout).lines().map(str::to_owned).collect();
    let mut want: std::collections::BTreeSet<String> = [
        ".cargo_vcs_info.json",
        "Cargo.lock",
        "Cargo.toml",
        "Cargo.toml.orig",
        "LICENSE",
        "README.md",
        "build.rs",
        "scripts/link-order.txt",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    for entry in walkdir::WalkDir::new(repo().join("src")) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(repo()).unwrap();
            want.insert(rel.to_string_lossy().into_owned());
        }
    }
    assert!(want.contains("src/serve/assets/app.js"));
    // A file git does not track (an editor's leftovers) is not packaged
    // anyway: compare what both know.
    let extra: Vec<&String> = listed.difference(&want).collect();
    assert!(extra.is_empty(), "packaged but not needed: {extra:?}");
    let missing: Vec<&String> = want
        .difference(&listed)
        .filter(|f| !f.starts_with("src/") || repo().join(f).is_file())
        .collect();
    let untracked = |f: &str| {
        Command::new("git")
            .arg("-C")
            .arg(repo())
            .args(["ls-files", "--error-unmatch", f])
            .output()
            .is_ok_and(|o| !o.status.success())
    };
    let missing: Vec<&&String> = missing.iter().filter(|f| !untracked(f)).collect();
    assert!(missing.is_empty(), "needed but not packaged: {missing:?}");
}

/// The executable is position-independent (an ELF of type `ET_DYN`), so
/// ASLR moves its code: `-no-pie` is an opt-in of `build.rs`
/// (`PI_INDEX_NO_PIE=1`), never the default.
#[cfg(target_os = "linux")]
#[test]
fn the_executable_is_position_independent_by_default() {
    if std::env::var("PI_INDEX_NO_PIE").as_deref() == Ok("1") {
        eprintln!("PI_INDEX_NO_PIE=1 asked for a position-dependent link; not checked");
        return;
    }
    let mut head = [0u8; 18];
    std::fs::File::open(BIN)
        .and_then(|mut f| f.read_exact(&mut head))
        .unwrap();
    assert_eq!(&head[..4], b"\x7fELF", "{BIN} is not an ELF file");
    let e_type = u16::from_le_bytes([head[16], head[17]]);
    assert_eq!(e_type, 3, "{BIN}: ELF type {e_type}, not ET_DYN (3)");
}
