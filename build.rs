//! How `pi-index` is linked on Linux, for a fresh process that starts in
//! as few page faults as it can: every command is one.
//!
//! - **Position-dependent** (`-no-pie`). A position-independent executable
//!   pays at each start for the dynamic loader's ~34,000 relative
//!   relocations and the copy-on-write of the ~600 KB of pointers they
//!   patch (`.data.rel.ro`): with the address fixed at link time the
//!   linker resolves them once, halving the page faults of a start
//!   ([docs/performance.md](docs/performance.md#the-binary)). The code stays
//!   position-independent (rustc's default), so only the link changes. The
//!   price: the executable's own code is not moved by ASLR (its libraries,
//!   heap and stack still are). `PI_INDEX_PIE=1` at build time links it
//!   position-independent.
//! - **The functions a command runs, side by side.** The code a search
//!   runs is spread over 14 MB of `.text`, and each page fault maps only
//!   the 64 KB around it. `scripts/link-order.txt` lists the functions the
//!   short commands run (made by `scripts/link-order.py` from the release
//!   build), and LLD places them first, together. A name the build does
//!   not define (another toolchain, another lockfile) is skipped, so a
//!   stale list costs nothing but its gain. Only with LLD, the linker of
//!   rustc 1.90 and later on x86-64 Linux, and not when `RUSTFLAGS` names
//!   a linker; `PI_INDEX_LINK_ORDER=0` turns it off.
//!
//! It also tells `pi-index --version` the commit and the target it was
//! built from: `PI_INDEX_COMMIT` (from git in a checkout; from the
//! `.cargo_vcs_info.json` that `cargo package` writes into a packaged
//! crate, which has no `.git`; else `unknown`; an environment variable of
//! that name at build time wins) and `PI_INDEX_TARGET`.

// A build script talks to Cargo on standard output.
#![allow(clippy::disallowed_macros)]

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=scripts/link-order.txt");
    println!("cargo:rerun-if-env-changed=PI_INDEX_PIE");
    println!("cargo:rerun-if-env-changed=PI_INDEX_LINK_ORDER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let root = Path::new(&var("CARGO_MANIFEST_DIR")).to_owned();
    println!("cargo:rerun-if-env-changed=PI_INDEX_COMMIT");
    let commit = match var("PI_INDEX_COMMIT") {
        c if !c.is_empty() => c,
        _ => packaged_commit(&root)
            .or_else(|| git_commit(&root))
            .unwrap_or_else(|| "unknown".into()),
    };
    println!("cargo:rustc-env=PI_INDEX_COMMIT={commit}");
    println!("cargo:rustc-env=PI_INDEX_TARGET={}", var("TARGET"));
    if var("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    if var("PI_INDEX_PIE") != "1" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("scripts/link-order.txt");
    let lld = var("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && rustc_minor().is_some_and(|minor| minor >= 90)
        && !var("CARGO_ENCODED_RUSTFLAGS").contains("link");
    if lld && var("PI_INDEX_LINK_ORDER") != "0" && order.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// The minor version of the rustc that builds this (`1.95.0` -> 95).
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC")?;
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}

/// How many hex digits of a commit `--version` shows.
const COMMIT_DIGITS: usize = 12;

/// The commit a packaged crate was made from: `cargo package` writes it
/// into `.cargo_vcs_info.json` (`{"git": {"sha1": "…"}, …}`).
fn packaged_commit(root: &Path) -> Option<String> {
    let info = root.join(".cargo_vcs_info.json");
    let text = std::fs::read_to_string(&info).ok()?;
    println!("cargo:rerun-if-changed={}", info.display());
    // The file is Cargo's own, one key of that name: no JSON parser needed.
    let rest = &text[text.find("\"sha1\"")? + "\"sha1\"".len()..];
    let start = rest.find('"')? + 1;
    let sha = &rest[start..start + rest[start..].find('"')?];
    let hex = sha.len() >= COMMIT_DIGITS && sha.bytes().all(|b| b.is_ascii_hexdigit());
    hex.then(|| sha[..COMMIT_DIGITS].to_owned())
}

/// The commit checked out, when `root` is the top of a git work tree
/// (not a packaged crate unpacked inside another repository's tree);
/// Cargo runs this again when HEAD or the branch it names moves.
fn git_commit(root: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
    };
    let top = git(&["rev-parse", "--show-toplevel"])?;
    if std::fs::canonicalize(top).ok()? != std::fs::canonicalize(root).ok()? {
        return None;
    }
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"]).map(|p| root.join(p))];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        // The branch's own file, or (packed, with no file yet) the
        // directory a commit writes it into.
        let loose = git(&["rev-parse", "--git-path", &branch]).map(|p| root.join(p));
        watched.push(loose.map(|p| match p.exists() {
            true => p,
            false => p.parent().map(Path::to_owned).unwrap_or(p),
        }));
        watched.push(git(&["rev-parse", "--git-path", "packed-refs"]).map(|p| root.join(p)));
    }
    for path in watched.into_iter().flatten() {
        // A path that does not exist would make Cargo run this every time.
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    let sha = git(&["rev-parse", "HEAD"])?;
    Some(sha.chars().take(COMMIT_DIGITS).collect())
}
