//! Fault injection for the crash-safety and damaged-input tests.
//!
//! `PI_INDEX_CRASH_AT=<point>` makes the process abort (no unwinding, no
//! destructors, no flush: what `kill -9` or a power cut leaves) when it
//! reaches that point of a build. The points are named where they are
//! placed; `tests/crash.rs` kills a build at each of them and checks that
//! the index still opens, shows the last committed state, and that the next
//! build completes it with no duplicate and no missing document.

/// Abort the process if `PI_INDEX_CRASH_AT` names this point.
#[inline]
pub fn point(name: &str) {
    if let Some(at) = std::env::var_os("PI_INDEX_CRASH_AT") {
        if at == name {
            eprintln!("pi-index: crashing at {name} (PI_INDEX_CRASH_AT)");
            std::process::abort();
        }
    }
}

/// Files changed under the build's feet, for the tests of files that
/// vanish or shrink while a build runs: `PI_INDEX_TEST_VANISH=<name>`
/// deletes the file with that name right after discovery found it, and
/// `PI_INDEX_TEST_SHRINK=<name>` truncates it to nothing right after it is
/// mapped. Other processes (Pi itself) do this for real.
pub fn disturb(var: &str, path: &std::path::Path) {
    if let Some(name) = std::env::var_os(var) {
        if path.file_name() == Some(name.as_os_str()) {
            match var {
                "PI_INDEX_TEST_VANISH" => {
                    let _ = std::fs::remove_file(path);
                }
                "PI_INDEX_TEST_SHRINK" => {
                    if let Ok(f) = std::fs::OpenOptions::new().write(true).open(path) {
                        let _ = f.set_len(0);
                    }
                }
                _ => {}
            }
        }
    }
}
