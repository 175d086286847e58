//! Crash injection for the crash-safety tests.
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
