//! Link `pi-index` as a position-dependent executable on Linux.
//!
//! Every command is a fresh process, and a position-independent one pays
//! at each start for the dynamic loader's ~34,000 relative relocations
//! and the copy-on-write of the ~600 KB of pointers they patch
//! (`.data.rel.ro`): with the address fixed at link time the linker
//! resolves them once (`pi-index --version`: 320 -> 154 page faults). The
//! code stays position-independent (rustc's default), so only the link
//! changes. The price: the executable's own code is not moved by ASLR
//! (its libraries, heap and stack still are). `PI_INDEX_PIE=1` at build
//! time links it position-independent, as before.

// A build script talks to Cargo on standard output.
#[allow(clippy::disallowed_macros)]
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PI_INDEX_PIE");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let pie = std::env::var_os("PI_INDEX_PIE").is_some_and(|v| v == "1");
    if linux && !pie {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
