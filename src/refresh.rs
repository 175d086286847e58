//! The index brought up to date from Pi's session directories, as the
//! long-running front ends do it: `mcp` and `serve` (through
//! [`crate::live`]), the picker, and `push --watch`.
//!
//! A [`Refresher`] keeps a [`SessionWatch`] on the session directories
//! (Pi's own, looked up again at each refresh since they may appear or
//! change, or the paths it was given) and refreshes from what the watch
//! took ([`SessionWatch::take`]):
//!
//! - nothing changed: nothing runs (no walk, no `statx` of the files, no
//!   lock): the refresh costs the barrier and a `stat` of each root;
//! - some files or directories changed: an incremental build of those
//!   alone ([`build_changed`]), planned, locked and committed as any
//!   build is, so that what another process indexed meanwhile is not
//!   indexed twice;
//! - the watch cannot say (the first refresh, an overflowed queue, a root
//!   that appeared or was replaced, a watch that failed or did not
//!   answer): a full check, the incremental build `pi-index build` runs
//!   ([`build`]); [`Checked::Full`] says why.
//!
//! A refresh that took changes and could not finish (another build holds
//! the lock, or it failed) gives them back to the watch: the next refresh
//! looks at them again. Kinds come from the index (a refresh never turns
//! into a rebuild with other kinds); an index that is missing is built
//! whole.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::discover::{default_locations, named_locations};
use crate::index::PiIndex;
use crate::pi::Kinds;
use crate::pipeline::{build, build_changed, BuildError, BuildOptions, BuildReport};
use crate::watch::{Changes, SessionWatch};

/// How a refresh looked at the session files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    /// Only at what the watch saw change (maybe nothing).
    Watched,
    /// At every file, as `pi-index build` does; why.
    Full(String),
}

/// What a refresh did.
#[derive(Debug)]
pub enum Outcome {
    /// No session directory to refresh from: the places looked at.
    NoSessions(Vec<PathBuf>),
    /// A refresh, and how it looked.
    Ran {
        /// How it looked at the files.
        checked: Checked,
        /// The build's report, or `None` when the watch saw no change
        /// (no build ran).
        result: Result<Option<Box<BuildReport>>, BuildError>,
    },
}

impl Outcome {
    /// Whether the refresh committed something (the index changed).
    pub fn changed(&self) -> bool {
        matches!(self, Outcome::Ran { result: Ok(Some(r)), .. } if changed(r))
    }
}

/// Whether a build changed the index: a rebuild, or files indexed,
/// removed or moved.
pub fn changed(r: &BuildReport) -> bool {
    r.rebuilt.is_some()
        || r.files_indexed > 0
        || r.files_deleted > 0
        || r.files_moved > 0
        || r.files_pruned > 0
}

/// Where a refresher reads from and writes to.
#[derive(Clone, Debug)]
pub struct Config {
    /// The index directory.
    pub index_dir: PathBuf,
    /// Session files or directories; empty: Pi's default session
    /// directories, looked up again at every refresh.
    pub roots: Vec<PathBuf>,
    /// Kinds of text for an index the refresh creates; an existing index
    /// keeps its own.
    pub kinds: Kinds,
    /// Threads of a build.
    pub threads: usize,
    /// Each indexing thread's memory for a build, in bytes.
    pub thread_memory: usize,
    /// Watch the session directories (a long-running front end); without
    /// it every refresh is a full check (a single refresh: starting a
    /// watch would cost more than it saves).
    pub watch: bool,
}

impl Config {
    /// The defaults of `pi-index build`: Pi's session directories,
    /// default kinds, every CPU, [`crate::pipeline::DEFAULT_THREAD_MEMORY_MB`]; watched.
    pub fn new(index_dir: PathBuf) -> Config {
        Config {
            index_dir,
            roots: Vec::new(),
            kinds: Kinds::default(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            thread_memory: crate::pipeline::DEFAULT_THREAD_MEMORY_MB << 20,
            watch: true,
        }
    }
}

/// Refreshes an index from watched session directories (see the
/// [module docs](self)). One refresh at a time: the caller holds it
/// mutably.
pub struct Refresher {
    config: Config,
    watch: Option<Arc<SessionWatch>>,
}

impl Refresher {
    /// A refresher; the watch starts with the first refresh.
    pub fn new(config: Config) -> Refresher {
        Refresher {
            config,
            watch: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The watch, once a refresh started it: a loop that follows Pi
    /// waits on it ([`SessionWatch::wait`]) without holding the
    /// refresher.
    pub fn watch(&self) -> Option<Arc<SessionWatch>> {
        self.watch.clone()
    }

    /// Bring the index up to date; `progress` is told the bytes of each
    /// file read.
    pub fn refresh(&mut self, progress: &(dyn Fn(u64) + Sync)) -> Outcome {
        let (roots, locations) = if self.config.roots.is_empty() {
            let defaults = default_locations();
            let roots = defaults.roots();
            if roots.is_empty() {
                return Outcome::NoSessions(
                    defaults
                        .locations
                        .iter()
                        .map(|l| PathBuf::from(&l.path))
                        .collect(),
                );
            }
            (roots, defaults.locations)
        } else {
            let roots = self.config.roots.clone();
            let locations = named_locations(&roots);
            (roots, locations)
        };
        let changes = self.changes(&roots);
        let checked = match &changes {
            Changes::Everything(why) => Checked::Full(why.clone()),
            _ => Checked::Watched,
        };
        if changes == Changes::None {
            return Outcome::Ran {
                checked,
                result: Ok(None),
            };
        }
        // The kinds the index was built with: a refresh must never turn
        // into a rebuild with other kinds.
        let kinds = PiIndex::open(&self.config.index_dir)
            .ok()
            .and_then(|pi| pi.build_info().ok().flatten())
            .and_then(|info| Kinds::parse(&info.kinds).ok())
            .unwrap_or(self.config.kinds);
        // Where the roots come from is recorded for `stats`, as `pi-index
        // build` records it.
        let opts = BuildOptions::new(roots, self.config.index_dir.clone())
            .kinds(kinds)
            .threads(self.config.threads)
            .thread_memory(self.config.thread_memory)
            .locations(locations);
        let result = match &changes {
            Changes::Paths(paths) => build_changed(&opts, paths, progress),
            _ => build(&opts, progress),
        };
        if result.is_err() {
            if let Some(w) = &self.watch {
                w.give_back(changes);
            }
        }
        Outcome::Ran {
            checked,
            result: result.map(|r| Some(Box::new(r))),
        }
    }

    /// What changed below `roots` since the last refresh.
    fn changes(&mut self, roots: &[PathBuf]) -> Changes {
        if !self.config.watch {
            return Changes::Everything("a single refresh, without a watch".into());
        }
        let w = match &self.watch {
            Some(w) if w.roots() == roots => w.clone(),
            _ => {
                // New session directories (or the first refresh): a new
                // watch, whose first take is a full check.
                let w = Arc::new(SessionWatch::start(roots));
                self.watch = Some(w.clone());
                w
            }
        };
        let changes = w.take();
        if !matches!(changes, Changes::Everything(_))
            && !self.config.index_dir.join("meta.json").exists()
        {
            // The index was removed since: built again, whole.
            return Changes::Everything("there is no index".into());
        }
        changes
    }

    /// Make the next refresh a full check, for `why` (a periodic check
    /// under the watch). The first refresh is one anyway.
    pub fn recheck(&self, why: &str) {
        if let Some(w) = &self.watch {
            w.give_back(Changes::Everything(why.to_owned()));
        }
    }

    /// Wait until the watch saw something, or `timeout` passes (a loop
    /// that follows Pi as it writes); without a watch, wait `timeout`.
    /// Returns whether something was seen.
    pub fn wait(&self, timeout: Duration) -> bool {
        wait_on(self.watch.as_deref(), timeout)
    }
}

/// Wait on `watch` (see [`Refresher::wait`]): `timeout` when there is
/// none.
pub fn wait_on(watch: Option<&SessionWatch>, timeout: Duration) -> bool {
    match watch {
        Some(w) => w.wait(timeout),
        None => {
            std::thread::sleep(timeout);
            false
        }
    }
}
