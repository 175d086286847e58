//! What a build was asked to do and what it reports: the options, the
//! `--json` report (a documented output contract) and the errors that stop
//! a build (as opposed to damage, which is reported).

use std::path::PathBuf;

use serde::Serialize;

use crate::index::IndexError;
use crate::pi::Kinds;

/// How many damaged lines the report lists before only counting them.
pub const DAMAGE_LIST_CAP: usize = 100;

/// The memory of each indexing thread's segment writer a build takes
/// unless told otherwise (`pi-index build --memory`), in MB: what two
/// threads shared before the budget was per thread, so a build on two
/// cores writes the segments it did; a larger one writes fewer segments
/// for more memory, a smaller one more segments for the commit to merge
/// ([docs/performance.md](../../docs/performance.md#threads)).
pub const DEFAULT_THREAD_MEMORY_MB: usize = 48;

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Files and directories to index.
    pub roots: Vec<PathBuf>,
    /// The index directory.
    pub index_dir: PathBuf,
    /// Opt-in kinds of text.
    pub kinds: Kinds,
    /// Worker threads for parsing (and tantivy indexing threads).
    pub threads: usize,
    /// Memory of each indexing thread's segment writer, in bytes (as
    /// many writers as threads can run at once).
    pub thread_memory: usize,
    /// Rebuild everything instead of only what changed.
    pub full: bool,
    /// Remove the documents of files outside `roots` (sessions of a
    /// directory this build does not read are kept otherwise).
    pub prune: bool,
    /// Where `roots` come from and why, as reported and recorded for
    /// `stats` (empty: the roots alone, as named).
    pub locations: Vec<crate::discover::Location>,
}

impl BuildOptions {
    /// A build of `roots` into `index_dir` as `pi-index build` runs one
    /// unless told otherwise: the default kinds, every CPU,
    /// [`DEFAULT_THREAD_MEMORY_MB`], only what changed, nothing pruned. The
    /// methods below change one setting each.
    pub fn new(roots: Vec<PathBuf>, index_dir: PathBuf) -> BuildOptions {
        BuildOptions {
            roots,
            index_dir,
            kinds: Kinds::default(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            thread_memory: DEFAULT_THREAD_MEMORY_MB << 20,
            full: false,
            prune: false,
            locations: Vec::new(),
        }
    }

    /// With these opt-in kinds of text.
    pub fn kinds(mut self, kinds: Kinds) -> BuildOptions {
        self.kinds = kinds;
        self
    }

    /// With this many threads.
    pub fn threads(mut self, threads: usize) -> BuildOptions {
        self.threads = threads;
        self
    }

    /// With this memory per indexing thread, in bytes.
    pub fn thread_memory(mut self, bytes: usize) -> BuildOptions {
        self.thread_memory = bytes;
        self
    }

    /// Rebuilding everything (`true`) or only what changed.
    pub fn full(mut self, full: bool) -> BuildOptions {
        self.full = full;
        self
    }

    /// Removing the documents of files outside the roots (`true`).
    pub fn prune(mut self, prune: bool) -> BuildOptions {
        self.prune = prune;
        self
    }

    /// Recording where the roots come from and why.
    pub fn locations(mut self, locations: Vec<crate::discover::Location>) -> BuildOptions {
        self.locations = locations;
        self
    }
}

/// A damaged line, as reported.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DamageReport {
    /// The session file.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// What was wrong.
    pub error: String,
}

/// A line whose text was indexed only in part: a message larger than
/// [`MAX_DOCUMENT_BYTES`](crate::pi::giant::MAX_DOCUMENT_BYTES).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TruncationReport {
    /// The session file.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// Bytes of the line.
    pub line_bytes: u64,
    /// Bytes of text indexed from it (the rest cannot be found).
    pub indexed_bytes: u64,
}

/// A file that was not indexed, and why.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct NotIndexed {
    /// The file.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// What a build did: the `--json` output contract.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BuildReport {
    /// Candidate files found.
    pub files_scanned: u64,
    /// Session files indexed.
    pub files_indexed: u64,
    /// Files unchanged since the last build: not opened.
    pub files_unchanged: u64,
    /// Files that grew since the last build: only their new lines were read.
    pub files_grown: u64,
    /// Files indexed before that were rewritten or shrunk: replaced.
    pub files_replaced: u64,
    /// Files indexed before that no longer exist: their documents removed.
    pub files_deleted: u64,
    /// Files indexed before that moved: gone from where they were, the
    /// same session (header id and indexed bytes) found elsewhere (listed
    /// in `moved`), indexed at their new place.
    pub files_moved: u64,
    /// Files indexed before that lie outside every root of this build:
    /// kept as they were (listed by root in `stale_roots`), unless
    /// `--prune`.
    pub files_stale: u64,
    /// Of those, removed by `--prune`.
    pub files_pruned: u64,
    /// Files rejected by the fingerprint.
    pub files_rejected: u64,
    /// Files that could not be read (listed in `errors`).
    pub files_failed: u64,
    /// Sessions in the index after the build.
    pub sessions: u64,
    /// Segments of the index after the build's commit and merges (a
    /// search opens each); absent when nothing was committed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segments: Option<u64>,
    /// Documents written.
    pub messages_indexed: u64,
    /// Lines read, headers and blank lines included.
    pub lines_read: u64,
    /// Damaged lines (listed in `damaged`, up to a cap).
    pub lines_damaged: u64,
    /// Lines that held several entries glued together (a lost newline),
    /// split and read as their entries (listed in `recovered`); one whose
    /// last entry was cut short is also damaged.
    pub lines_recovered: u64,
    /// Bytes of session files read (complete lines only).
    pub bytes_read: u64,
    /// Bytes that needed a full JSON parse (the rest were skipped by the
    /// prefix scan).
    pub bytes_parsed: u64,
    /// Wall time, milliseconds.
    pub elapsed_ms: u64,
    /// Where the time went, milliseconds: discovery, parsing while
    /// queueing documents, and the final commit (flushing the last segments
    /// and merging).
    pub timings: Timings,
    /// Read throughput, MB/s (10^6 bytes).
    pub mb_per_s: f64,
    /// Opt-in kinds included.
    pub kinds: String,
    /// Why the whole index was rebuilt, if it was (printed as its
    /// sentence in `--json`).
    pub rebuilt: Option<Rebuild>,
    /// Damaged lines, in path and line order, at most [`DAMAGE_LIST_CAP`].
    pub damaged: Vec<DamageReport>,
    /// Damaged lines not listed in `damaged`.
    pub damaged_more: u64,
    /// Recovered lines, in path and line order, at most
    /// [`DAMAGE_LIST_CAP`]: `{path, line, error}` (what was found).
    pub recovered: Vec<DamageReport>,
    /// Recovered lines not listed in `recovered`.
    pub recovered_more: u64,
    /// Lines whose text was indexed only in part (messages larger than
    /// `MAX_DOCUMENT_BYTES`), in path and line order, at most
    /// [`DAMAGE_LIST_CAP`].
    pub messages_truncated: Vec<TruncationReport>,
    /// Truncated lines not listed in `messages_truncated`.
    pub messages_truncated_more: u64,
    /// Files rejected, with the reason.
    pub rejected: Vec<NotIndexed>,
    /// Files and directories that could not be read.
    pub errors: Vec<NotIndexed>,
    /// Paths left alone, and why: special files (FIFOs, devices, sockets)
    /// named or found as `*.jsonl`, and named directories with no
    /// `*.jsonl` file below them.
    pub skipped: Vec<NotIndexed>,
    /// Session files whose header declares a version newer than 3, read on
    /// a best-effort basis.
    pub newer_versions: Vec<NotIndexed>,
    /// Where this build read sessions from, and why.
    pub roots: Vec<crate::discover::Location>,
    /// Session files that moved: `{from, to}`.
    pub moved: Vec<Moved>,
    /// Indexed sessions outside this build's roots, by the root they were
    /// found under: `{root, sessions, pruned}`.
    pub stale_roots: Vec<StaleRoot>,
}

/// A session file found at a new place.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Moved {
    /// Where it was indexed.
    pub from: String,
    /// Where it is now.
    pub to: String,
}

/// Indexed sessions of a root this build did not read.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct StaleRoot {
    /// The directory (or file) they were found under, by an earlier build.
    pub root: String,
    /// How many session files.
    pub sessions: u64,
    /// Whether their documents were removed (`--prune`); else kept.
    pub pruned: bool,
}

/// Why a build starts from an empty index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rebuild {
    /// There was no index yet.
    NewIndex,
    /// `--full` was asked for.
    Full,
    /// The index was written by another version of pi-index.
    SchemaChanged,
    /// The index could not be read and was recreated (`--full`).
    Recovered,
    /// The last build was killed before its first commit.
    Unfinished,
    /// The included kinds differ from the last build's.
    KindsChanged {
        /// The kinds of the last build.
        from: String,
        /// The kinds asked for now.
        to: String,
    },
}

impl Rebuild {
    /// Whether a user asked for it or expects it (a new index, `--full`),
    /// as opposed to a rebuild that must be explained.
    pub fn expected(&self) -> bool {
        matches!(self, Rebuild::NewIndex | Rebuild::Full)
    }
}

impl std::fmt::Display for Rebuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rebuild::NewIndex => f.write_str("new index"),
            Rebuild::Full => f.write_str("--full"),
            Rebuild::SchemaChanged => {
                f.write_str("the index was written by another version of pi-index")
            }
            Rebuild::Recovered => f.write_str("the index could not be read: recreated"),
            Rebuild::Unfinished => f.write_str("the last build did not finish"),
            Rebuild::KindsChanged { from, to } => {
                write!(f, "the included kinds changed from {from} to {to}")
            }
        }
    }
}

impl Serialize for Rebuild {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Wall time per phase of a build, and the CPU each used, milliseconds:
/// a phase whose CPU is about its wall time ran on one thread. CPU times
/// are left out where the system does not tell them ([`crate::cpu`]).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timings {
    /// Walking the roots, and reading what the index holds of each file
    /// (side by side).
    pub discover_ms: u64,
    /// Planning, then fingerprinting, parsing and indexing the files on
    /// the build's threads.
    pub parse_ms: u64,
    /// Committing: writing the last segments, the commit, its merges and
    /// the copy groups.
    pub commit_ms: u64,
    /// CPU of the discover phase, every thread together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discover_cpu_ms: Option<u64>,
    /// CPU of the parse phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parse_cpu_ms: Option<u64>,
    /// CPU of the commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_cpu_ms: Option<u64>,
    /// Of the commit: writing out the segments still open (one thread
    /// each).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush_ms: Option<u64>,
    /// Of the commit: its merges, wall time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_ms: Option<u64>,
    /// Of the commit: the CPU of its merges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_cpu_ms: Option<u64>,
    /// Of the commit: saving the copy groups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups_ms: Option<u64>,
    /// The segment writers the build filled, each with `--memory`: as
    /// many as threads could run at once (the threads, at most the
    /// cores); peak memory follows them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writers: Option<usize>,
    /// CPU each of the build's threads used in the parse phase, in the
    /// pool's order: how evenly the work was shared.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workers_cpu_ms: Vec<u64>,
}

/// A failure that stops the build (as opposed to damage, which is reported).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The index could not be opened or written.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The thread pool could not be started.
    #[error("cannot start {threads} threads: {source}: try fewer with --threads")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// Why not.
        source: rayon::ThreadPoolBuildError,
    },
}
