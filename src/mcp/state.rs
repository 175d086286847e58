//! The index as the server holds it: opened once, its reader kept open,
//! brought up to date before each tool call by an incremental build.
//!
//! A refresh is [`crate::pipeline::build`] with the roots `pi-index build`
//! uses without a PATH ([`crate::discover::default_locations`]), or the server's
//! own PATHs, and the kinds the index was built with (a refresh must never
//! turn into a rebuild with other kinds). When nothing changed the build
//! takes no lock and writes nothing; after one that committed, the reader
//! is reloaded (reopened after a whole rebuild). A build already writing
//! (another process holds the lock) is not waited for: the call is answered
//! from the last committed index and says so.

use std::path::PathBuf;
use std::sync::Mutex;

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

/// What the refresh before a call did: part of every tool's result.
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
    // One refresh at a time in this process; searches run on their own
    // snapshot outside the lock.
    opened: Mutex<Option<Opened>>,
}

impl State {
    /// A state that opens the index on first use.
    pub fn new(opts: Options) -> State {
        State {
            opts,
            opened: Mutex::new(None),
        }
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Refresh (unless turned off) and return a snapshot to answer from.
    /// The error is the message for the caller: no usable index.
    pub fn snapshot(&self) -> Result<Snapshot, String> {
        // A panic in an earlier call must not wedge the server: the guarded
        // value is only a cache and is rebuilt when in doubt.
        let mut opened = self.opened.lock().unwrap_or_else(|poisoned| {
            let mut g = poisoned.into_inner();
            *g = None;
            g
        });
        let mut looked = Vec::new();
        let refresh = if self.opts.refresh {
            self.refresh(&mut opened, &mut looked)
        } else {
            Refresh::new(RefreshStatus::Skipped, None)
        };
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
                Err(e) => return Err(self.no_index(e, &refresh, &looked)),
            }
        }
        let o = opened.as_ref().expect("opened above");
        Ok(Snapshot {
            pi: o.pi.clone(),
            searcher: o.reader.searcher(),
            refresh,
        })
    }

    fn refresh(&self, opened: &mut Option<Opened>, looked: &mut Vec<PathBuf>) -> Refresh {
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
                    "no Pi session directory found (looked in {}): answered from the index as it is; start the server with the sessions' directory (`pi-index mcp DIR`) to keep it up to date",
                    list.join(", ")
                )),
            );
        }
        if opened.is_none() {
            *opened = open(&self.opts.index_dir).ok();
        }
        let kinds = opened
            .as_ref()
            .and_then(|o| o.pi.build_info().ok().flatten())
            .and_then(|info| Kinds::parse(&info.kinds).ok())
            .unwrap_or(self.opts.kinds);
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
                    *opened = None;
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
