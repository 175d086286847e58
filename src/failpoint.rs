//! Fault injection for the crash-safety and damaged-input tests
//! (`tests/failpoints.rs`), compiled only with the `failpoints` feature:
//! without it every function here is empty and inlined away, so a release
//! binary never reads these variables (tantivy's `fail_point!` does the
//! same behind its own feature).
//!
//! - `PI_INDEX_CRASH_AT=<point>` makes the process abort (no unwinding, no
//!   destructors, no flush: what `kill -9` or a power cut leaves) when it
//!   reaches that point of a build. The points are named where they are
//!   placed; the tests kill a build at each of them and check that the
//!   index still opens, shows the last committed state, and that the next
//!   build completes it with no duplicate and no missing document.
//! - `PI_INDEX_TEST_PAUSE_AT=<point>:<flag>` makes a build wait at that
//!   point (any point `PI_INDEX_CRASH_AT` can name) until the file
//!   `<flag>` exists (it creates `<flag>.reached` when it gets there): a
//!   test puts two builds in a known order, or fills the disk under a
//!   build at a known phase.
//! - `PI_INDEX_TEST_NO_REPLAN` makes a build that finds another commit
//!   once it holds the lock go on with its old plan, and
//!   `PI_INDEX_TEST_DROP_LAST=<name>` drops the last document of the
//!   file with that name: the damage `pi-index check` must find.
//! - `PI_INDEX_TEST_VANISH=<name>` deletes the file with that name right
//!   after discovery found it, and `PI_INDEX_TEST_SHRINK=<name>` truncates
//!   it to nothing right after it is mapped. Other processes (Pi itself) do
//!   this for real.
//! - `PI_INDEX_TEST_PANIC=<name>` panics while the file with that name is
//!   being indexed, after its documents were queued: a bug in reading one
//!   file must cost only that file.
//! - `PI_INDEX_TEST_PICK_PANIC=<place>:<word>` panics in the picker once
//!   its query holds the word: on the thread that handles keys (`main`)
//!   or in the search worker (`worker`). The terminal must be restored
//!   all the same.
//! - `PI_INDEX_TEST_MAX_DOCUMENT=<bytes>` sets the most text one message
//!   contributes, and so the length from which a line is a giant line
//!   ([`crate::pi::giant`]), to that many bytes instead of 8 MiB, so that
//!   the tests of giant lines run on small files.
//! - `PI_INDEX_TEST_ENOSPC_AFTER=<bytes>` makes writes to the index fail
//!   with ENOSPC ("No space left on device") once the process has written
//!   that many bytes into it, as a full disk does.
//! - `PI_INDEX_TEST_MCP_HOLD=<path>` holds every MCP tool call until that
//!   file exists, so a test can close the server's stdin while calls are
//!   still running.
//! - `PI_INDEX_TEST_SEGMENT_DOCS=<n>` makes a build write a thread's
//!   segment out once it holds that many documents (as well as when it
//!   reaches `--memory`), so that a small
//!   corpus fills several segments.
//! - `PI_INDEX_TEST_PUSH_BATCH=<bytes>` makes `pi-index push` send its
//!   rows in batches of about that many bytes instead of 8 MiB, so that
//!   the fixtures take several transactions.
//! - `PI_INDEX_TEST_PUSH_PAUSE=<file>` makes a push that reaches the
//!   middle of its first `COPY` create that file and wait until it is
//!   removed: a test stops the server there, with no timing involved.
//! - `PI_INDEX_TEST_WATCH_OVERFLOW=<file>` makes the next take of a
//!   session watch ([`crate::watch`]) that finds that file remove it and
//!   lose the events gathered so far, as when the kernel's event queue
//!   overflows: the refresh must fall back to checking every file.

/// Abort the process if `PI_INDEX_CRASH_AT` names this point; wait here
/// if `PI_INDEX_TEST_PAUSE_AT` does (see [`pause`]).
#[inline]
pub(crate) fn point(_name: &str) {
    pause(_name);
    #[cfg(feature = "failpoints")]
    if let Some(at) = std::env::var_os("PI_INDEX_CRASH_AT") {
        if at == _name {
            #[allow(clippy::disallowed_macros)]
            {
                eprintln!("pi-index: crashing at {_name} (PI_INDEX_CRASH_AT)");
            }
            std::process::abort();
        }
    }
}

/// Wait at this point if `PI_INDEX_TEST_PAUSE_AT` is `<point>:<flag>`:
/// create `<flag>.reached`, then wait until `<flag>` exists (at most two
/// minutes). Two processes are put in a known order this way, without
/// any test depending on timing.
#[inline]
pub(crate) fn pause(_name: &str) {
    #[cfg(feature = "failpoints")]
    if let Ok(set) = std::env::var("PI_INDEX_TEST_PAUSE_AT") {
        if let Some((point, flag)) = set.split_once(':') {
            if point == _name {
                let flag = std::path::Path::new(flag);
                let mut reached = flag.as_os_str().to_owned();
                reached.push(".reached");
                let _ = std::fs::write(&reached, b"");
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
                while !flag.exists() && std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
        }
    }
}

/// Whether `PI_INDEX_TEST_NO_REPLAN` is set: a build that finds another
/// commit once it holds the lock goes on with its old plan, as builds did
/// before they planned again (the doubles `check` must find).
#[inline]
pub(crate) fn no_replan() -> bool {
    #[cfg(feature = "failpoints")]
    if std::env::var_os("PI_INDEX_TEST_NO_REPLAN").is_some() {
        return true;
    }
    false
}

/// Drop the last of `docs` if `PI_INDEX_TEST_DROP_LAST` names the file at
/// `path` (documents `check` must find missing).
#[inline]
pub(crate) fn drop_last<T>(_path: &std::path::Path, _docs: &mut Vec<T>) {
    #[cfg(feature = "failpoints")]
    if let Some(name) = std::env::var_os("PI_INDEX_TEST_DROP_LAST") {
        if _path.file_name() == Some(name.as_os_str()) {
            _docs.pop();
        }
    }
}

/// Panic if `PI_INDEX_TEST_PANIC` names the file at `path`.
#[inline]
pub(crate) fn panic_on(_path: &std::path::Path) {
    #[cfg(feature = "failpoints")]
    if let Some(name) = std::env::var_os("PI_INDEX_TEST_PANIC") {
        if _path.file_name() == Some(name.as_os_str()) {
            panic!("PI_INDEX_TEST_PANIC at {}", _path.display());
        }
    }
}

/// Panic if `PI_INDEX_TEST_PICK_PANIC` is `<place>:<word>` and `query`
/// holds the word.
#[inline]
pub(crate) fn pick_panic(_place: &str, _query: &str) {
    #[cfg(feature = "failpoints")]
    if let Ok(set) = std::env::var("PI_INDEX_TEST_PICK_PANIC") {
        if let Some((place, word)) = set.split_once(':') {
            if place == _place && !word.is_empty() && _query.contains(word) {
                panic!("PI_INDEX_TEST_PICK_PANIC in the picker's {place}: {_query}");
            }
        }
    }
}

/// The most text one message contributes: `default`, unless
/// `PI_INDEX_TEST_MAX_DOCUMENT` says otherwise.
#[inline]
pub(crate) fn max_document_bytes(default: usize) -> usize {
    #[cfg(feature = "failpoints")]
    {
        use std::sync::OnceLock;
        static SET: OnceLock<Option<usize>> = OnceLock::new();
        let set = SET.get_or_init(|| {
            std::env::var("PI_INDEX_TEST_MAX_DOCUMENT")
                .ok()
                .and_then(|v| v.parse().ok())
        });
        if let Some(set) = *set {
            return set;
        }
    }
    default
}

/// How many of the next `len` bytes written to the index fit on the disk:
/// all of them, unless `PI_INDEX_TEST_ENOSPC_AFTER` says the disk is full
/// past that many bytes in all.
#[inline]
pub(crate) fn write_allowance(len: usize) -> usize {
    #[cfg(feature = "failpoints")]
    {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::sync::OnceLock;
        static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
        static WRITTEN: AtomicU64 = AtomicU64::new(0);
        let limit = LIMIT.get_or_init(|| {
            std::env::var("PI_INDEX_TEST_ENOSPC_AFTER")
                .ok()
                .and_then(|v| v.parse().ok())
        });
        if let Some(limit) = *limit {
            let before = WRITTEN.fetch_add(len as u64, Ordering::Relaxed);
            return limit.saturating_sub(before).min(len as u64) as usize;
        }
    }
    len
}

/// Whether writes on this thread fail as on a full disk: on tantivy's
/// merge threads, when `PI_INDEX_TEST_MERGE_ENOSPC` is set (the disk
/// filling up while a commit's merges run).
#[cfg(feature = "failpoints")]
pub(crate) fn merge_out_of_space() -> bool {
    use std::sync::OnceLock;
    static SET: OnceLock<bool> = OnceLock::new();
    *SET.get_or_init(|| std::env::var_os("PI_INDEX_TEST_MERGE_ENOSPC").is_some())
        && std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("merge_thread"))
}

/// The most documents a build's segment writer takes before it is
/// written out: `default`, unless `PI_INDEX_TEST_SEGMENT_DOCS` says
/// otherwise.
#[inline]
pub(crate) fn segment_docs(default: u32) -> u32 {
    #[cfg(feature = "failpoints")]
    if let Some(v) = std::env::var("PI_INDEX_TEST_SEGMENT_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return v;
    }
    default
}

/// How many bytes of rows one push transaction carries: `default`,
/// unless `PI_INDEX_TEST_PUSH_BATCH` says otherwise.
#[inline]
pub(crate) fn push_batch_bytes(default: usize) -> usize {
    #[cfg(feature = "failpoints")]
    if let Some(v) = std::env::var("PI_INDEX_TEST_PUSH_BATCH")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return v;
    }
    default
}

/// If `PI_INDEX_TEST_PUSH_PAUSE` names a file: create it, then wait until
/// it is gone (once per process).
#[inline]
pub(crate) fn push_pause() {
    #[cfg(feature = "failpoints")]
    if let Some(file) = std::env::var_os("PI_INDEX_TEST_PUSH_PAUSE") {
        use std::sync::atomic::{AtomicBool, Ordering};
        static DONE: AtomicBool = AtomicBool::new(false);
        if DONE.swap(true, Ordering::Relaxed) {
            return;
        }
        let file = std::path::PathBuf::from(file);
        let _ = std::fs::write(&file, b"paused\n");
        while file.exists() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Whether `PI_INDEX_TEST_WATCH_OVERFLOW` names a file that exists (it is
/// removed): the watch then acts as if its queue overflowed, once.
#[inline]
pub(crate) fn watch_overflow() -> bool {
    #[cfg(feature = "failpoints")]
    if let Some(file) = std::env::var_os("PI_INDEX_TEST_WATCH_OVERFLOW") {
        return std::fs::remove_file(file).is_ok();
    }
    false
}

/// The file disturbances a test asked for (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Disturb {
    /// Delete the file (`PI_INDEX_TEST_VANISH`).
    Vanish,
    /// Truncate it to nothing (`PI_INDEX_TEST_SHRINK`).
    Shrink,
}

/// Change the file at `path` under the build's feet if the test asked for
/// `what` on a file of that name.
#[inline]
pub(crate) fn disturb(_what: Disturb, _path: &std::path::Path) {
    #[cfg(feature = "failpoints")]
    {
        let var = match _what {
            Disturb::Vanish => "PI_INDEX_TEST_VANISH",
            Disturb::Shrink => "PI_INDEX_TEST_SHRINK",
        };
        if let Some(name) = std::env::var_os(var) {
            if _path.file_name() == Some(name.as_os_str()) {
                match _what {
                    Disturb::Vanish => {
                        let _ = std::fs::remove_file(_path);
                    }
                    Disturb::Shrink => {
                        if let Ok(f) = std::fs::OpenOptions::new().write(true).open(_path) {
                            let _ = f.set_len(0);
                        }
                    }
                }
            }
        }
    }
}

/// Wait until the file `PI_INDEX_TEST_MCP_HOLD` names exists, if it is set.
#[inline]
pub(crate) fn mcp_hold() {
    #[cfg(feature = "failpoints")]
    if let Some(path) = std::env::var_os("PI_INDEX_TEST_MCP_HOLD") {
        while !std::path::Path::new(&path).exists() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

#[cfg(all(test, not(feature = "failpoints")))]
mod tests {
    /// Without the feature, the variables do nothing: a release binary
    /// never deletes a user's file because a variable says so.
    #[test]
    fn without_the_feature_nothing_is_disturbed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keep.jsonl");
        std::fs::write(&path, b"{}\n").unwrap();
        std::env::set_var("PI_INDEX_TEST_VANISH", "keep.jsonl");
        std::env::set_var("PI_INDEX_TEST_SHRINK", "keep.jsonl");
        super::disturb(super::Disturb::Vanish, &path);
        super::disturb(super::Disturb::Shrink, &path);
        assert_eq!(std::fs::read(&path).unwrap(), b"{}\n");
    }
}
