//! How `pi-index` is linked on Linux, for a fresh process that starts in
//! as few page faults as it can: every command is one.
//!
//! - **Position-dependent** (`-no-pie`). A position-independent executable
//!   pays at each start for the dynamic loader's ~34,000 relative
//!   relocations and the copy-on-write of the ~600 KB of pointers they
//!   patch (`.data.rel.ro`): with the address fixed at link time the
//!   linker resolves them once (`pi-index --version`: 320 -> 154 page
//!   faults). The code stays position-independent (rustc's default), so
//!   only the link changes. The price: the executable's own code is not
//!   moved by ASLR (its libraries, heap and stack still are).
//!   `PI_INDEX_PIE=1` at build time links it position-independent.
//! - **The functions a command runs, side by side.** The code a search
//!   runs is spread over 14 MB of `.text`, and each page fault maps only
//!   the 64 KB around it. `scripts/link-order.txt` lists the functions the
//!   short commands run (made by `scripts/link-order.py` from the release
//!   build), and LLD places them first, together. A name the build does
//!   not define (another toolchain, another lockfile) is skipped, so a
//!   stale list costs nothing but its gain. Only with LLD, the linker of
//!   rustc 1.90 and later on x86-64 Linux, and not when `RUSTFLAGS` names
//!   a linker; `PI_INDEX_LINK_ORDER=0` turns it off.

use std::path::Path;
use std::process::Command;

// A build script talks to Cargo on standard output.
#[allow(clippy::disallowed_macros)]
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=scripts/link-order.txt");
    println!("cargo:rerun-if-env-changed=PI_INDEX_PIE");
    println!("cargo:rerun-if-env-changed=PI_INDEX_LINK_ORDER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
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
