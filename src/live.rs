//! The index as a long-running front end holds it (the MCP server, the
//! web view): opened once, its reader kept open, brought up to date by a
//! [`crate::refresh::Refresher`].
//!
//! A refresh reads the roots `pi-index build` uses without a PATH
//! ([`crate::discover::default_locations`]), or the server's own PATHs,
//! with the kinds the index was built with (a refresh must never turn
//! into a rebuild with other kinds). The session directories are watched:
//! a refresh after no change runs nothing (no walk, no lock, no write);
//! one after a change builds what changed; the first one, and any the
//! watch cannot vouch for, checks every file (the `checked` field of a
//! [`Refresh`] says which, and why). After a refresh that committed, the reader is
//! reloaded (reopened after a whole rebuild); commits of other processes
//! are picked up at every snapshot. A build already writing (another
//! process holds the lock) is not waited for: the caller is answered from
//! the last committed index and told so.
//!
//! One refresh runs at a time in a process (a second caller waits for the
//! first one's); reading a snapshot ([`State::current`]) never waits for a
//! refresh, so a server can refresh in the background while it answers.
//!
//! A server over the team database (`--db`) reads it at each request
//! instead ([`Served`]): the same read interface, nothing to refresh.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use tantivy::{IndexReader, ReloadPolicy};

use crate::index::{IndexError, PiIndex};
use crate::pi::Kinds;
use crate::pipeline::BuildError;
use crate::read::{Place, Source};
use crate::refresh::{self, Checked, Outcome, Refresher};
use crate::search::{Local, Reader};

/// How the server finds, refreshes and opens its index.
#[derive(Clone, Debug)]
pub struct Options {
    /// The index directory.
    pub index_dir: PathBuf,
    /// Session files or directories to refresh from; empty: Pi's default
    /// session directories, looked up again at every call (they may appear
    /// after the server started).
    pub roots: Vec<PathBuf>,
    /// Bring the index up to date before every call.
    pub refresh: bool,
    /// Kinds of text for an index the server creates; an existing index
    /// keeps the kinds it was built with.
    pub kinds: Kinds,
    /// Threads of a refresh.
    pub threads: usize,
    /// Each indexing thread's memory for a refresh, in bytes.
    pub thread_memory: usize,
    /// Watch the session directories, so that a refresh costs what
    /// changed; off for a single call (`mcp --call`), where every refresh
    /// checks every file.
    pub watch: bool,
}

impl Options {
    /// Options for `index_dir` with the defaults of `pi-index build`:
    /// Pi's session directories, default kinds, every CPU,
    /// [`crate::pipeline::DEFAULT_THREAD_MEMORY_MB`].
    pub fn new(index_dir: PathBuf) -> Options {
        Options {
            index_dir,
            roots: Vec::new(),
            refresh: true,
            kinds: Kinds::default(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            thread_memory: crate::pipeline::DEFAULT_THREAD_MEMORY_MB << 20,
            watch: true,
        }
    }
}

/// What a refresh did: part of every MCP tool's result and of the web
/// view's status.
#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Refresh {
    /// `updated` (new or changed sessions were indexed), `current` (nothing
    /// had changed), `busy` (another build is writing: answered from the
    /// last committed index), `skipped` (refresh turned off, or no session
    /// directory to refresh from) or `failed` (answered from the last
    /// committed index; `note` says why).
    pub status: RefreshStatus,
    /// Messages indexed by this refresh.
    pub new_messages: u64,
    /// How the session files were looked at: `watched` (only those the
    /// watch saw change: no walk), or `full` (every file, as `pi-index
    /// build` does: the first refresh, or one the watch could not vouch
    /// for; `full_because` says why). Absent when no refresh ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<Check>,
    /// Why every file was checked, with `checked: full`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_because: Option<String>,
    /// What the caller should know about the freshness of the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// See [`Refresh::status`].
#[derive(Clone, Copy, Debug, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RefreshStatus {
    /// Something was indexed or removed.
    Updated,
    /// Nothing had changed.
    Current,
    /// Another build holds the write lock.
    Busy,
    /// No refresh was attempted.
    Skipped,
    /// The refresh failed.
    Failed,
}

/// How much a refresh checked: the `checked` field of a [`Refresh`].
#[derive(Clone, Copy, Debug, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// Only the files the watch saw change.
    Watched,
    /// Every file.
    Full,
}

impl Refresh {
    fn new(status: RefreshStatus, note: Option<String>) -> Refresh {
        Refresh {
            status,
            new_messages: 0,
            checked: None,
            full_because: None,
            note,
        }
    }

    fn checked(mut self, how: Checked) -> Refresh {
        match how {
            Checked::Watched => self.checked = Some(Check::Watched),
            Checked::Full(why) => {
                self.checked = Some(Check::Full);
                self.full_because = Some(why);
            }
        }
        self
    }
}

/// What a long-running front end reads: the local index, kept fresh, or
/// the team database (`--db`), read as it is at each request.
pub enum Served {
    /// The local index.
    Index(Box<State>),
    /// The team database.
    Database(Box<dyn Source>),
}

/// What one call reads, and where its answer comes from.
pub enum Reading<'a> {
    /// The local index as of one commit, and what its refresh did.
    Index(Box<Snapshot>),
    /// The team database.
    Database(&'a dyn Source),
}

impl Served {
    /// Something to answer one call from: the local index refreshed
    /// first (unless refreshes are off), or the database. The error is
    /// the message for the caller: no usable index.
    pub fn snapshot(&self) -> Result<Reading<'_>, String> {
        match self {
            Served::Index(state) => state.snapshot().map(|s| Reading::Index(Box::new(s))),
            Served::Database(db) => Ok(Reading::Database(db.as_ref())),
        }
    }

    /// Something to answer one call from, without a refresh (other
    /// processes' commits are picked up).
    pub fn current(&self) -> Result<Reading<'_>, String> {
        match self {
            Served::Index(state) => state.current().map(|s| Reading::Index(Box::new(s))),
            Served::Database(db) => Ok(Reading::Database(db.as_ref())),
        }
    }

    /// The local index's state, when that is what is served.
    pub fn index(&self) -> Option<&State> {
        match self {
            Served::Index(state) => Some(state),
            Served::Database(_) => None,
        }
    }

    /// The database, for people (`user@host:port/db`), when that is what
    /// is served.
    pub fn database(&self) -> Option<String> {
        match self {
            Served::Database(db) => match db.place() {
                Place::Database(target) => Some(target),
                Place::Index(_) => None,
            },
            Served::Index(_) => None,
        }
    }
}

impl Reading<'_> {
    /// Where to read.
    pub fn source(&self) -> &dyn Source {
        match self {
            Reading::Index(snap) => &snap.local,
            Reading::Database(db) => *db,
        }
    }

    /// What the refresh before this call did (the local index).
    pub fn refresh(&self) -> Option<&Refresh> {
        match self {
            Reading::Index(snap) => Some(&snap.refresh),
            Reading::Database(_) => None,
        }
    }
}

/// A consistent view of the index for one call.
pub struct Snapshot {
    /// The index as of its last committed state (as of this call).
    pub local: Local,
    /// What the refresh did.
    pub refresh: Refresh,
}

struct Opened {
    reader: Reader,
    index_reader: IndexReader,
    /// The index files the reader has mapped.
    mapped: std::sync::Arc<crate::index::Mapped>,
    /// `meta.json` as the reader last loaded it.
    meta: Option<MetaStamp>,
}

/// What identifies one version of an index's `meta.json`: every commit
/// writes it anew (a temporary file renamed over it), so a new commit
/// changes its inode or its times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MetaStamp {
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl MetaStamp {
    #[cfg(unix)]
    fn of(index_dir: &std::path::Path) -> Option<MetaStamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(index_dir.join("meta.json")).ok()?;
        Some(MetaStamp {
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }

    /// Without inodes and change times (Windows): the length and the
    /// modification time, which each commit's new file has anew.
    #[cfg(not(unix))]
    fn of(index_dir: &std::path::Path) -> Option<MetaStamp> {
        let m = std::fs::metadata(index_dir.join("meta.json")).ok()?;
        let since = |t: std::io::Result<std::time::SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or((0, 0), |d| {
                    (d.as_secs() as i64, i64::from(d.subsec_nanos()))
                })
        };
        Some(MetaStamp {
            ino: 0,
            len: m.len(),
            mtime: since(m.modified()),
            ctime: since(m.created()),
        })
    }
}

/// The server's index: options, and the index once it could be opened.
pub struct State {
    opts: Options,
    // One refresh at a time in this process (held for a whole build).
    refresher: Mutex<Refresher>,
    // The open index; held only to open, reload or clone it, never for a
    // build, so answers never wait behind one.
    opened: Mutex<Option<Opened>>,
    // What the last refresh did.
    last: Mutex<Refresh>,
    // Bumped whenever a reload shows a new commit (ours or another
    // process's): what a page compares to know that newer results exist.
    generation: AtomicU64,
    // A hash of the segments the reader last showed.
    seen: AtomicU64,
}

impl State {
    /// A state that opens the index on first use.
    pub fn new(opts: Options) -> State {
        let refresher = Refresher::new(refresh::Config {
            index_dir: opts.index_dir.clone(),
            roots: opts.roots.clone(),
            kinds: opts.kinds,
            threads: opts.threads,
            thread_memory: opts.thread_memory,
            watch: opts.watch,
        });
        State {
            opts,
            refresher: Mutex::new(refresher),
            opened: Mutex::new(None),
            last: Mutex::new(Refresh::new(RefreshStatus::Skipped, None)),
            generation: AtomicU64::new(0),
            seen: AtomicU64::new(u64::MAX),
        }
    }

    /// A counter that changes whenever the index this state answers from
    /// has a new commit (after [`State::current`] or [`State::refresh_now`]
    /// saw it).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    /// What the last refresh did.
    pub fn last_refresh(&self) -> Refresh {
        lock(&self.last).clone()
    }

    /// Bring the index up to date now (waiting for a refresh already
    /// running in this process), then reload the reader.
    pub fn refresh_now(&self) -> Refresh {
        let mut looked = Vec::new();
        let refresh = self.refresh(&mut looked);
        let _ = self.current();
        refresh
    }

    /// Wait until the watch of the session directories saw a change, or
    /// `timeout` passes (a loop that refreshes as Pi writes); returns
    /// whether it saw one. Before the first refresh, or when nothing is
    /// watched, this waits `timeout`.
    pub fn wait_for_change(&self, timeout: Duration) -> bool {
        let watch = lock(&self.refresher).watch();
        refresh::wait_on(watch.as_deref(), timeout)
    }

    /// A snapshot of the last committed index as it is, without a
    /// refresh (other processes' commits are picked up). The error is the
    /// message for the caller: no usable index.
    pub fn current(&self) -> Result<Snapshot, String> {
        let refresh = self.last_refresh();
        self.open_snapshot(refresh, &[])
    }

    /// When the pages of mapped files this process holds (the index's,
    /// mostly: every query reads more of it) come to more than `bytes`,
    /// drop the index's from its memory (they stay in the page cache, and
    /// are mapped again from it when read: a minor fault each). Keeps a
    /// long-running server's memory bounded whatever the size of the
    /// index and however many different queries it answers. Returns
    /// whether it released.
    pub fn release_if_over(&self, bytes: u64) -> bool {
        if crate::index::file_backed().unwrap_or(0) <= bytes {
            return false;
        }
        let mapped = match lock(&self.opened).as_ref() {
            Some(o) => o.mapped.clone(),
            None => return false,
        };
        mapped.release();
        true
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Refresh (unless turned off) and return a snapshot to answer from.
    /// The error is the message for the caller: no usable index.
    pub fn snapshot(&self) -> Result<Snapshot, String> {
        let mut looked = Vec::new();
        let refresh = if self.opts.refresh {
            self.refresh(&mut looked)
        } else {
            Refresh::new(RefreshStatus::Skipped, None)
        };
        self.open_snapshot(refresh, &looked)
    }

    fn open_snapshot(&self, refresh: Refresh, looked: &[PathBuf]) -> Result<Snapshot, String> {
        let mut opened = lock(&self.opened);
        // Pick up commits of other processes too (a user's `pi-index
        // build`). A reload opens every segment's readers again (a
        // quarter of a small search's time), so it is done only when
        // `meta.json` is another file than the one the reader loaded.
        let meta = MetaStamp::of(&self.opts.index_dir);
        if let Some(o) = opened.as_mut() {
            if meta.is_none() || meta != o.meta {
                if o.index_reader.reload().is_err() {
                    *opened = None;
                } else {
                    o.meta = meta;
                }
            }
        }
        if opened.is_none() {
            match open(&self.opts.index_dir) {
                Ok(mut o) => {
                    o.meta = meta;
                    *opened = Some(o)
                }
                Err(e) => return Err(self.no_index(e, &refresh, looked)),
            }
        }
        let o = opened.as_ref().expect("opened above");
        let searcher = o.index_reader.searcher();
        // What the searcher shows: its segments and their deletes (in
        // memory; a new commit changes one or the other).
        let stamp = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            for seg in searcher.segment_readers() {
                seg.segment_id().hash(&mut h);
                seg.num_deleted_docs().hash(&mut h);
            }
            h.finish()
        };
        if self.seen.swap(stamp, Ordering::Relaxed) != stamp {
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Snapshot {
            local: Local::new(o.reader.clone(), searcher),
            refresh,
        })
    }

    /// One refresh (waiting for one already running in this process),
    /// remembered as the last.
    fn refresh(&self, looked: &mut Vec<PathBuf>) -> Refresh {
        let mut refresher = lock(&self.refresher);
        let refresh = match refresher.refresh(&|_| {}) {
            Outcome::NoSessions(places) => {
                *looked = places;
                let list: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
                Refresh::new(
                    RefreshStatus::Skipped,
                    Some(format!(
                        "no Pi session directory found (looked in {}): answered from the index as it is; start the server with the sessions' directory (`pi-index mcp DIR` or `pi-index serve DIR`) to keep it up to date",
                        list.join(", ")
                    )),
                )
            }
            Outcome::Ran { checked, result } => match result {
                Ok(None) => Refresh::new(RefreshStatus::Current, None).checked(checked),
                Ok(Some(report)) => {
                    if report.rebuilt.is_some() {
                        // A new or recreated index: open it afresh.
                        *lock(&self.opened) = None;
                    }
                    Refresh {
                        status: if refresh::changed(&report) {
                            RefreshStatus::Updated
                        } else {
                            RefreshStatus::Current
                        },
                        new_messages: report.messages_indexed,
                        ..Refresh::new(RefreshStatus::Current, None)
                    }
                    .checked(checked)
                }
                Err(BuildError::Index(IndexError::Busy(_))) => Refresh::new(
                    RefreshStatus::Busy,
                    Some(
                        "another `pi-index build` is writing the index: answered from the last committed index, which may miss the newest messages".into(),
                    ),
                )
                .checked(checked),
                Err(e) => Refresh::new(
                    RefreshStatus::Failed,
                    Some(format!(
                        "the index could not be brought up to date ({e}): answered from the last committed index"
                    )),
                )
                .checked(checked),
            },
        };
        *lock(&self.last) = refresh.clone();
        refresh
    }

    /// The message for a call that has no index to answer from.
    fn no_index(&self, e: IndexError, refresh: &Refresh, looked: &[PathBuf]) -> String {
        match (&e, refresh.status) {
            (IndexError::Missing(dir), RefreshStatus::Skipped) if !looked.is_empty() => {
                let list: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
                format!(
                    "no index at {} and no Pi session directory to build it from (looked in {}): run `pi-index build DIR` with the directory of your sessions, or start the server as `pi-index mcp DIR`",
                    dir.display(),
                    list.join(", ")
                )
            }
            (IndexError::Missing(dir), RefreshStatus::Skipped) => format!(
                "no index at {}: run `pi-index build` first (the server was started with --no-refresh, so it does not build one)",
                dir.display()
            ),
            _ => match &refresh.note {
                Some(note) if refresh.status == RefreshStatus::Failed => format!("{e} ({note})"),
                _ => e.to_string(),
            },
        }
    }
}

/// A lock whose holder panicked is still usable: the guarded values are
/// caches and reports, rebuilt when in doubt (a panic in an earlier call
/// must not wedge a server).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn open(dir: &std::path::Path) -> Result<Opened, IndexError> {
    let mapped = std::sync::Arc::new(crate::index::Mapped::default());
    let pi = PiIndex::open_mapped(dir, Some(mapped.clone()))?;
    let index_reader = pi
        .index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map_err(|error| IndexError::Tantivy {
            path: dir.to_owned(),
            error,
        })?;
    let reader = Reader::new(pi);
    // Many searches of one reader: worth keeping what each one reads
    // whatever the query.
    reader.keep_between_searches();
    Ok(Opened {
        reader,
        index_reader,
        mapped,
        meta: None,
    })
}
