//! The index as a long-running front end holds it (the MCP server, the
//! web view): opened once, its reader kept open, brought up to date by an
//! incremental build.
//!
//! A refresh is [`crate::pipeline::build`] with the roots `pi-index build`
//! uses without a PATH ([`crate::discover::default_locations`]), or the server's
//! own PATHs, and the kinds the index was built with (a refresh must never
//! turn into a rebuild with other kinds). When nothing changed the build
//! takes no lock and writes nothing; after one that committed, the reader
//! is reloaded (reopened after a whole rebuild). A build already writing
//! (another process holds the lock) is not waited for: the caller is
//! answered from the last committed index and told so.
//!
//! One refresh runs at a time in a process (a second caller waits for the
//! first one's); reading a snapshot ([`State::current`]) never waits for a
//! refresh, so a server can refresh on a timer while it answers.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use schemars::JsonSchema;
use serde::Serialize;
use tantivy::{IndexReader, ReloadPolicy, Searcher};

use crate::discover::{default_locations, named_locations};
use crate::index::{IndexError, PiIndex};
use crate::pi::Kinds;
use crate::pipeline::{build, BuildError, BuildOptions};

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
    /// tantivy's indexing memory for a refresh, in bytes.
    pub memory_budget: usize,
}

impl Options {
    /// Options for `index_dir` with the defaults of `pi-index build`:
    /// Pi's session directories, default kinds, every CPU, 64 MB.
    pub fn new(index_dir: PathBuf) -> Options {
        Options {
            index_dir,
            roots: Vec::new(),
            refresh: true,
            kinds: Kinds::default(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_budget: 64 << 20,
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

impl Refresh {
    fn new(status: RefreshStatus, note: Option<String>) -> Refresh {
        Refresh {
            status,
            new_messages: 0,
            note,
        }
    }
}

/// A consistent view of the index for one call.
pub struct Snapshot {
    /// The index.
    pub pi: PiIndex,
    /// A searcher over its last committed state (as of this call).
    pub searcher: Searcher,
    /// What the refresh did.
    pub refresh: Refresh,
}

struct Opened {
    pi: PiIndex,
    reader: IndexReader,
}

/// The server's index: options, and the index once it could be opened.
pub struct State {
    opts: Options,
    // One refresh at a time in this process (held for a whole build).
    building: Mutex<()>,
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
        State {
            opts,
            building: Mutex::new(()),
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
        let _one = lock(&self.building);
        let mut looked = Vec::new();
        let refresh = self.refresh(&mut looked);
        *lock(&self.last) = refresh.clone();
        let _ = self.current();
        refresh
    }

    /// A snapshot of the last committed index as it is, without a
    /// refresh (other processes' commits are picked up). The error is the
    /// message for the caller: no usable index.
    pub fn current(&self) -> Result<Snapshot, String> {
        let refresh = self.last_refresh();
        self.open_snapshot(refresh, &[])
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
            let _one = lock(&self.building);
            let refresh = self.refresh(&mut looked);
            *lock(&self.last) = refresh.clone();
            refresh
        } else {
            Refresh::new(RefreshStatus::Skipped, None)
        };
        self.open_snapshot(refresh, &looked)
    }

    fn open_snapshot(&self, refresh: Refresh, looked: &[PathBuf]) -> Result<Snapshot, String> {
        let mut opened = lock(&self.opened);
        // Pick up commits of other processes too (a user's `pi-index
        // build`): cheap when nothing changed.
        if let Some(o) = opened.as_ref() {
            if o.reader.reload().is_err() {
                *opened = None;
            }
        }
        if opened.is_none() {
            match open(&self.opts.index_dir) {
                Ok(o) => *opened = Some(o),
                Err(e) => return Err(self.no_index(e, &refresh, looked)),
            }
        }
        let o = opened.as_ref().expect("opened above");
        let searcher = o.reader.searcher();
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
            pi: o.pi.clone(),
            searcher,
            refresh,
        })
    }

    // Runs with `building` held.
    fn refresh(&self, looked: &mut Vec<PathBuf>) -> Refresh {
        let (roots, locations) = if self.opts.roots.is_empty() {
            let defaults = default_locations();
            *looked = defaults
                .locations
                .iter()
                .map(|l| PathBuf::from(&l.path))
                .collect();
            (defaults.roots(), defaults.locations)
        } else {
            (self.opts.roots.clone(), named_locations(&self.opts.roots))
        };
        if roots.is_empty() {
            let list: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
            return Refresh::new(
                RefreshStatus::Skipped,
                Some(format!(
                    "no Pi session directory found (looked in {}): answered from the index as it is; start the server with the sessions' directory (`pi-index mcp DIR` or `pi-index serve DIR`) to keep it up to date",
                    list.join(", ")
                )),
            );
        }
        let kinds = {
            let mut opened = lock(&self.opened);
            if opened.is_none() {
                *opened = open(&self.opts.index_dir).ok();
            }
            opened
                .as_ref()
                .and_then(|o| o.pi.build_info().ok().flatten())
                .and_then(|info| Kinds::parse(&info.kinds).ok())
                .unwrap_or(self.opts.kinds)
        };
        let opts = BuildOptions {
            roots,
            index_dir: self.opts.index_dir.clone(),
            kinds,
            threads: self.opts.threads,
            memory_budget: self.opts.memory_budget,
            full: false,
            prune: false,
            locations,
        };
        match build(&opts, &|_| {}) {
            Ok(report) => {
                if report.rebuilt.is_some() {
                    // A new or recreated index: open it afresh.
                    *lock(&self.opened) = None;
                }
                let changed = report.rebuilt.is_some()
                    || report.files_indexed > 0
                    || report.files_deleted > 0;
                Refresh {
                    status: if changed {
                        RefreshStatus::Updated
                    } else {
                        RefreshStatus::Current
                    },
                    new_messages: report.messages_indexed,
                    note: None,
                }
            }
            Err(BuildError::Index(IndexError::Busy(_))) => Refresh::new(
                RefreshStatus::Busy,
                Some(
                    "another `pi-index build` is writing the index: answered from the last committed index, which may miss the newest messages".into(),
                ),
            ),
            Err(e) => Refresh::new(
                RefreshStatus::Failed,
                Some(format!(
                    "the index could not be brought up to date ({e}): answered from the last committed index"
                )),
            ),
        }
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
    let pi = PiIndex::open(dir)?;
    let reader = pi
        .index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map_err(|error| IndexError::Tantivy {
            path: dir.to_owned(),
            error,
        })?;
    Ok(Opened { pi, reader })
}
