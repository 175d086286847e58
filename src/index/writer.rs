//! Documents in: one writer per build, one commit at the end.
//!
//! A build first opens an [`IndexStore`] and reads the indexed state of
//! every session file ([`FileState`], kept on each session's document, so
//! it is committed together with the documents it describes and can never
//! disagree with them). Only when something changed does it take the
//! writer (and its lock) as an [`IndexBuilder`].
//!
//! # Segments written by the parsing threads
//!
//! The threads that parse the session files also index them: each has its
//! own tantivy `SegmentWriter` (a slot per thread of the build's pool), fed
//! our own document type ([`PiDoc`]: no copy into a `TantivyDocument`, no
//! queue to tantivy's indexing threads). A segment writer that reaches its
//! memory budget (`--memory`, per thread) is written out as a finished
//! segment by the thread that filled it (unless the build is nearly done:
//! then it takes the rest, up to a quarter more, see `LAST_SHARE`), which
//! then starts a new one (after holding its first documents back, so that
//! the end of a build leaves no segment of a few dozen documents: see
//! `Slot`), and handed at once
//! to tantivy's `IndexWriter` (not searchable before the commit, but its
//! merge policy may merge it meanwhile, on one merge thread, beside the
//! parsing); at the commit, the last open segments are written out in
//! parallel and handed over too, and the `IndexWriter` owns the commit, its
//! payload, the lock, merges and garbage collection as usual.
//! It takes less CPU than queueing documents to tantivy's own threads,
//! and peak memory follows the budget
//! ([docs/performance.md](../../docs/performance.md#indexing)).
//!
//! Each delete reaches what it should. A delete queued while the build
//! parses (a rewritten file's old documents, an entry whose branch
//! changed, a grown session's old record) names documents of the last
//! commit only, and is restricted to its segments (tantivy would apply it
//! to the new segments too, because it applies a delete to every segment
//! added after the delete reached its queue, which happens lazily). What must also leave
//! the new segments (a file whose reading failed half-way) is
//! *withdrawn*: those deletes are queued at the commit, after the new
//! segments are handed over, and reach everything. Nothing is visible to searches until the
//! single commit; a build killed before it leaves the previous commit
//! intact.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use tantivy::collector::Count;
use tantivy::index::Segment;
use tantivy::indexer::{AddOperation, SegmentWriter};
use tantivy::query::TermQuery;
use tantivy::schema::{IndexRecordOption, Schema};
use tantivy::{Index, IndexWriter, Term};

use super::directory::{clear_dir, only_index_files, Mapped};
use super::document::{MessageDoc, NoDoc, PiDoc, SessionDoc};
use super::schema::{register_tokenizers, session_key, Fields, SESSION_DOC};
use super::state::{FileState, FileStates};
use super::{
    all_terms, entry_query, sess_query, tantivy_err, BuildInfo, CommittedOnly, IndexError, PiIndex,
    SCHEMA_VERSION, TOOL,
};
use crate::pi::{Document, Session};
use tantivy::columnar::ColumnIndex;

/// Session-level facts: the header's, and the session's final name.
#[derive(Clone, Debug)]
pub struct SessionMeta<'a> {
    /// Session id from the header.
    pub id: &'a str,
    /// Absolute path of the session file.
    pub path: &'a str,
    /// Working directory.
    pub cwd: Option<&'a str>,
    /// Display name.
    pub name: Option<&'a str>,
    /// Session start, epoch milliseconds.
    pub started_ms: Option<i64>,
    /// The root (a session directory, or a file named alone) the file was
    /// found under.
    pub root: Option<&'a str>,
    /// The parent session file the header names (`parentSession`).
    pub parent: Option<&'a str>,
    /// The agent that wrote it (what the file says, until the build
    /// knows the directory it was found in: see [`crate::pi::agent`]).
    pub agent: crate::pi::Agent,
}

impl<'a> SessionMeta<'a> {
    /// The facts of a parsed session stored at `path`.
    pub fn of(session: &'a Session, path: &'a str) -> SessionMeta<'a> {
        SessionMeta {
            id: &session.header.id,
            path,
            cwd: session.header.cwd.as_deref(),
            name: session.name.as_deref(),
            started_ms: session.header.started_ms,
            root: None,
            parent: session.header.parent_session.as_deref(),
            agent: session.header.written_by.unwrap_or_default(),
        }
    }

    /// The key that joins the session's messages to its record.
    pub fn key(&self) -> u64 {
        session_key(self.path)
    }
}

/// A session's record: its facts, summary and file state.
#[derive(Clone, Debug)]
pub struct SessionRecord<'a> {
    /// Header facts and name.
    pub meta: SessionMeta<'a>,
    /// The file's indexed state.
    pub state: FileState,
    /// The first user message's first line.
    pub title: Option<String>,
    /// Documents of the session in the index.
    pub messages: u64,
    /// Time of its last document.
    pub last_ms: Option<i64>,
    /// Every model its documents name.
    pub models: Vec<String>,
    /// Its first message's copy key ([`super::lineage::head_of`]).
    pub head: u64,
    /// What each entry that records usage spent, in file order.
    pub usage: super::spent::Spent,
}

/// How a build found its index: kept (incremental), or why it starts
/// from an empty one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opened {
    /// There was no index.
    New,
    /// The index was written by another schema version.
    SchemaChanged,
    /// The index exists: builds are incremental.
    Existing,
    /// The index could not be read and was recreated (`--full`).
    Recovered,
}

/// An index opened for a build: read its state, then (if there is work)
/// turn it into an [`IndexBuilder`].
pub struct IndexStore {
    /// The index.
    pub pi: PiIndex,
    /// What the last build recorded.
    pub info: Option<BuildInfo>,
    /// How the index was found.
    pub opened: Opened,
    /// The index files this build maps, released from its memory while
    /// it writes (see [`IndexStore::writer`]).
    mapped: Option<std::sync::Arc<Mapped>>,
}

/// The budget a segment writer is created with, which tantivy uses only
/// to size its term hash table (a third of it, at most 2^19 slots of 8
/// bytes; the table doubles whenever it is half full): 2 MB starts it at
/// 2^16 slots (512 KB), which grows with the terms a segment really has,
/// where any larger budget starts every segment at 4 MB, sparse, and
/// each token's lookup misses the caches. The writer's own budget (when
/// a segment is full) is [`IndexBuilder::full`]'s.
const TERM_TABLE_BUDGET: usize = 2_000_000;

/// How much memory tantivy's indexing threads may use before flushing a
/// segment, at least. tantivy refuses less than 15 MB per thread.
pub const MIN_THREAD_BUDGET: usize = 15_000_000;

/// The most memory one of tantivy's indexing threads takes: tantivy
/// refuses 4 GB less a margin or more (its `MEMORY_BUDGET_NUM_BYTES_MAX`,
/// not exported).
pub const MAX_THREAD_BUDGET: usize = 4_000_000_000;

impl IndexStore {
    /// Open the index at `dir` for a build, creating it if needed and
    /// recreating it if it was written by another schema. A directory that
    /// holds anything else is refused.
    ///
    /// With `recover`, an index of ours that cannot be read (tantivy's
    /// own files are there, but `meta.json` or a segment is damaged) is
    /// cleared and recreated instead of being an error.
    pub fn open_or_create(dir: &Path, recover: bool) -> Result<IndexStore, IndexError> {
        let io = |error| IndexError::Io {
            path: dir.to_owned(),
            error,
        };
        if dir.exists() && !dir.is_dir() {
            return Err(IndexError::NotADirectory(dir.to_owned()));
        }
        std::fs::create_dir_all(dir).map_err(io)?;
        // Two builds that both find no index (or an old one) must not
        // both clear the directory and create one: the second waits, then
        // finds the first one's index.
        let _creating = lock_directory(dir).map_err(io)?;
        let (schema, fields) = Fields::build();
        let mapped = std::sync::Arc::new(Mapped::default());
        let opened;
        let index = if dir.join("meta.json").exists() {
            // With `recover`, an index is only kept if every segment opens
            // too: `--full` must work whatever state the files are in.
            let found = open_ours(dir, &schema, &mapped).and_then(|found| match found {
                Some(index) if recover => readable(dir, &index).map(|()| Some(index)),
                found => Ok(found),
            });
            match found {
                Ok(Some(index)) => {
                    opened = Opened::Existing;
                    index
                }
                Ok(None) => {
                    clear_dir(dir).map_err(io)?;
                    opened = Opened::SchemaChanged;
                    create(dir, schema, &mapped)?
                }
                // Unreadable (damaged or missing files: not a failure of
                // the file system, which is an `Io` error), or another
                // program's index: `--full` replaces it, but only when the
                // directory holds index files alone.
                Err(IndexError::Tantivy { .. } | IndexError::ForeignIndex(_))
                    if recover && only_index_files(dir).map_err(io)? =>
                {
                    clear_dir(dir).map_err(io)?;
                    opened = Opened::Recovered;
                    create(dir, schema, &mapped)?
                }
                Err(e) => return Err(e),
            }
        } else {
            // Empty, or left by a build killed while creating the index
            // (only tantivy's own files, no meta.json yet): start afresh.
            // Anything else is someone's directory: refuse.
            if !only_index_files(dir).map_err(io)? {
                return Err(IndexError::Foreign(dir.to_owned()));
            }
            clear_dir(dir).map_err(io)?;
            opened = Opened::New;
            create(dir, schema, &mapped)?
        };
        register_tokenizers(&index);
        let pi = PiIndex {
            index,
            fields,
            dir: dir.to_owned(),
            mapped: None,
        };
        let info = pi.build_info()?;
        Ok(IndexStore {
            pi,
            info,
            opened,
            mapped: Some(mapped),
        })
    }

    /// An index already opened (by a reader: `check`), to read its state.
    pub fn of(pi: PiIndex) -> IndexStore {
        let info = pi.build_info().ok().flatten();
        IndexStore {
            pi,
            info,
            opened: Opened::Existing,
            mapped: None,
        }
    }

    /// The indexed state of every session file, by path, read from fast
    /// columns (no stored document is read).
    pub fn file_states(&self) -> Result<FileStates, IndexError> {
        self.pi.file_states()
    }

    /// The root each session file was found under, by path, for the files
    /// of `paths` (read from fast columns; a file recorded without one is
    /// left out).
    pub fn file_roots(
        &self,
        paths: &std::collections::HashSet<&str>,
    ) -> Result<HashMap<String, String>, IndexError> {
        let pi = &self.pi;
        let err = |e| tantivy_err(&pi.dir, e);
        let searcher = pi.searcher()?;
        let mut out = HashMap::new();
        if paths.is_empty() {
            return Ok(out);
        }
        for seg in searcher.segment_readers() {
            let ff = seg.fast_fields();
            let (Some(file), Some(root)) =
                (ff.str("file").map_err(err)?, ff.str("root").map_err(err)?)
            else {
                continue;
            };
            let (mut p, mut r) = (String::new(), String::new());
            for doc in 0..seg.max_doc() {
                if seg.is_deleted(doc) {
                    continue;
                }
                let (Some(po), Some(ro)) = (file.term_ords(doc).next(), root.term_ords(doc).next())
                else {
                    continue;
                };
                p.clear();
                r.clear();
                file.ord_to_str(po, &mut p).map_err(|e| err(e.into()))?;
                if !paths.contains(p.as_str()) {
                    continue;
                }
                root.ord_to_str(ro, &mut r).map_err(|e| err(e.into()))?;
                out.insert(p.clone(), r.clone());
            }
        }
        Ok(out)
    }

    /// The opstamp of the last commit: what a plan made from this index
    /// was decided against (a build that finds another one once it holds
    /// the lock plans again).
    pub fn committed_opstamp(&self) -> Result<u64, IndexError> {
        Ok(self
            .pi
            .index
            .load_metas()
            .map_err(|e| tantivy_err(&self.pi.dir, e))?
            .opstamp)
    }

    /// Start writing: `threads` parsing threads fill segment writers of
    /// `thread_memory` bytes each. Fails with [`IndexError::Busy`] while
    /// another build writes; once this returns, no other build commits
    /// until the builder is committed or dropped.
    pub fn writer(&self, threads: usize, thread_memory: usize) -> Result<IndexBuilder, IndexError> {
        // A budget per segment writer, so that a segment is as large at
        // any thread count, and as many writers as threads can run at
        // once: threads past the cores share them (slot = thread modulo
        // writers), since more writers than cores would only cut smaller
        // segments for the commit to merge again
        // ([docs/performance.md](../../docs/performance.md#threads)).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let writers = threads.clamp(1, cores);
        let per_thread = thread_memory.clamp(MIN_THREAD_BUDGET, MAX_THREAD_BUDGET);
        let threads = writers;
        // tantivy's own indexing thread never receives a document (the
        // builder writes segments itself); it only needs its minimum.
        //
        // As many merges at once as writers, up to the commit's last merges
        // ([`FewSegments`]): a merge maps and reads every file of the
        // segments it merges, but their pages are released as they add
        // up ([`Growth`],
        // [docs/performance.md](../../docs/performance.md#the-builds-memory)).
        let options = tantivy::indexer::IndexWriterOptions::builder()
            .num_worker_threads(1)
            .memory_budget_per_thread(MIN_THREAD_BUDGET)
            .num_merge_threads(threads.clamp(1, FEW_SEGMENTS))
            .build();
        // A reader asking whether a build writes ([`super::directory::writer_lock_held`])
        // holds the lock for an instant: the lock is tried again for a
        // moment before another build is said to hold it.
        let mut tries = 0;
        let writer: IndexWriter<NoDoc> = loop {
            match self.pi.index.writer_with_options(options.clone()) {
                Ok(w) => break w,
                Err(e) => match tantivy_err(&self.pi.dir, e) {
                    IndexError::Busy(_) if tries < 20 => {
                        tries += 1;
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    e => return Err(e),
                },
            }
        };
        // Read under the lock: the segments of the commit this build's
        // will replace.
        let committed = self
            .pi
            .index
            .searchable_segment_ids()
            .map_err(|e| tantivy_err(&self.pi.dir, e))?
            .into_iter()
            .collect();
        // Nothing is merged while a build writes: a full build's documents
        // are merged once, at the commit ([`FewSegments`]), and an
        // incremental build's merges ([`Tiers`]) start only once the commit
        // has applied its deletes. A merge of committed segments running
        // across the commit would take the merged segment out of the
        // segments the build's deletes may reach ([`CommittedOnly`]).
        writer.set_merge_policy(Box::new(tantivy::merge_policy::NoMergePolicy));
        Ok(IndexBuilder {
            _releasing: self.mapped.clone().map(Releasing::start),
            committed: std::sync::Arc::new(committed),
            fields: self.pi.fields,
            pi: self.pi.clone(),
            writer,
            budget: per_thread,
            max_docs: crate::failpoint::segment_docs(u32::MAX),
            slots: (0..threads).map(|_| Mutex::new(Slot::default())).collect(),
            withdrawn: Mutex::new(Vec::new()),
            in_tiers: std::sync::atomic::AtomicBool::new(false),
            planned: AtomicU64::new(0),
            read: AtomicU64::new(0),
        })
    }
}

/// The merge policy of a full build's commit: when more than
/// [`FEW_SEGMENTS`] segments are left, they are merged into
/// [`FEW_SEGMENTS`] of about the same number of documents, by merges that
/// run at once (as many as the build has writers). A search visits every
/// segment, so fewer are faster searches. The commit waits for these
/// merges. As many groups at any thread count, so that a segment or two
/// past the limit costs the merge of the smallest, not of every document
/// ([docs/performance.md](../../docs/performance.md#threads)).
///
/// Nothing is merged before (tantivy's log policy merged eight segments
/// of a size as they came, so most documents were merged two or three
/// times): one merge per document, both threads merging at the end,
/// is cheaper in CPU and in time
/// ([docs/performance.md](../../docs/performance.md#indexing)).
#[derive(Debug)]
struct FewSegments;

/// At most this many segments are left by a full build.
const FEW_SEGMENTS: usize = 3;

impl FewSegments {
    /// The groups `sizes` (documents per segment) are merged in: each
    /// segment, largest first, joins the group with the fewest documents
    /// yet. Indexes into `sizes`; groups of one segment are left out.
    fn partition(sizes: &[u32], groups: usize) -> Vec<Vec<usize>> {
        if sizes.len() <= FEW_SEGMENTS {
            return Vec::new();
        }
        let mut order: Vec<usize> = (0..sizes.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(sizes[i]), i));
        let mut out: Vec<(u64, Vec<usize>)> = vec![(0, Vec::new()); groups.max(1)];
        for i in order {
            let least = (0..out.len()).min_by_key(|&g| out[g].0).unwrap_or(0);
            out[least].0 += u64::from(sizes[i]);
            out[least].1.push(i);
        }
        out.into_iter()
            .map(|(_, members)| members)
            .filter(|members| members.len() > 1)
            .collect()
    }
}

impl tantivy::merge_policy::MergePolicy for FewSegments {
    fn compute_merge_candidates(
        &self,
        segments: &[tantivy::index::SegmentMeta],
    ) -> Vec<tantivy::merge_policy::MergeCandidate> {
        candidates(segments, |sizes| {
            FewSegments::partition(sizes, FEW_SEGMENTS)
        })
    }
}

/// The merges `partition` groups `segments` in, by their documents (the
/// indexes of each group), as tantivy's merge candidates.
fn candidates(
    segments: &[tantivy::index::SegmentMeta],
    partition: impl FnOnce(&[u32]) -> Vec<Vec<usize>>,
) -> Vec<tantivy::merge_policy::MergeCandidate> {
    let sizes: Vec<u32> = segments.iter().map(|s| s.num_docs()).collect();
    partition(&sizes)
        .into_iter()
        .map(|g| {
            tantivy::merge_policy::MergeCandidate(g.into_iter().map(|i| segments[i].id()).collect())
        })
        .collect()
}

/// The merge policy of an incremental build's commit: segments in tiers
/// of size, each tier [`TIER_FACTOR`] times the one below, and as many
/// segments of one tier merged into one, the smallest first. A merge
/// makes no segment larger than the largest one or than a full build of
/// the index would ([`FEW_SEGMENTS`] of the documents each), whichever is
/// larger, and segments that large are left alone: appending a message
/// never merges a full build's segments into one larger still. A segment is merged about once
/// per tier, and an index built up by appends keeps a few segments a
/// tier, where merging only segments under a fixed size left every later
/// one unmerged and searches slower build after build
/// ([docs/performance.md](../../docs/performance.md#months-of-incremental-builds)).
#[derive(Debug)]
struct Tiers;

/// Segments of fewer documents are the lowest tier, all of one size.
const TIER_FLOOR: u32 = 2_000;

/// Each tier holds segments this many times as large as the one below,
/// and this many segments of a tier are merged.
const TIER_FACTOR: u32 = 4;

impl Tiers {
    /// The tier of a segment of `docs` documents.
    fn tier(docs: u32) -> u32 {
        if docs < TIER_FLOOR {
            0
        } else {
            1 + (docs / TIER_FLOOR).ilog(TIER_FACTOR)
        }
    }

    /// The groups `sizes` (documents per segment) are merged in: of each
    /// tier holding [`TIER_FACTOR`] segments or more, its smallest, as
    /// many as add up to at most the largest segment, a [`FEW_SEGMENTS`]th
    /// of all the documents, or [`TIER_FACTOR`] times [`TIER_FLOOR`]
    /// (whichever is most), when that is two or more. Indexes into
    /// `sizes`, each group smallest first.
    fn partition(sizes: &[u32]) -> Vec<Vec<usize>> {
        let Some(&largest) = sizes.iter().max() else {
            return Vec::new();
        };
        let all: u64 = sizes.iter().map(|&d| u64::from(d)).sum();
        let most = u64::from(largest.max(TIER_FACTOR * TIER_FLOOR)).max(all / FEW_SEGMENTS as u64);
        let mut order: Vec<usize> = (0..sizes.len())
            .filter(|&i| u64::from(sizes[i]) < most)
            .collect();
        order.sort_by_key(|&i| (Self::tier(sizes[i]), sizes[i], i));
        let mut groups = Vec::new();
        for tier in order.chunk_by(|&a, &b| Self::tier(sizes[a]) == Self::tier(sizes[b])) {
            if tier.len() < TIER_FACTOR as usize {
                continue;
            }
            let mut docs = 0;
            let group: Vec<usize> = tier
                .iter()
                .copied()
                .take_while(|&i| {
                    docs += u64::from(sizes[i]);
                    docs <= most
                })
                .collect();
            if group.len() > 1 {
                groups.push(group);
            }
        }
        groups
    }
}

impl tantivy::merge_policy::MergePolicy for Tiers {
    fn compute_merge_candidates(
        &self,
        segments: &[tantivy::index::SegmentMeta],
    ) -> Vec<tantivy::merge_policy::MergeCandidate> {
        candidates(segments, Tiers::partition)
    }
}

/// A segment being filled by one thread.
struct Open {
    segment: Segment,
    writer: SegmentWriter,
    /// The build's bytes read when it was opened.
    read_at_open: u64,
}

/// One thread's documents not yet written out.
enum Slot {
    /// Held back, too few yet to be worth a segment of their own: a thread
    /// that wrote its segment out near the end of a build would otherwise
    /// leave a segment of a few dozen documents, which every search then
    /// opens and looks words up in
    /// ([docs/performance.md](../../docs/performance.md#against-the-goals)).
    /// Held documents that never fill a segment join another thread's at
    /// the commit.
    Held { docs: Vec<PiDoc>, bytes: usize },
    /// Given to a segment writer.
    Open(Box<Open>),
}

impl Default for Slot {
    fn default() -> Slot {
        Slot::Held {
            docs: Vec::new(),
            bytes: 0,
        }
    }
}

/// Documents a thread holds back before it opens a segment writer (see
/// [`Slot::Held`]), at most; and at most a sixteenth of its memory
/// budget of text.
const HELD_DOCS: usize = 1024;

/// What a segment writer may use beyond its budget before it is written
/// out (tantivy's own writer keeps the same margin).
const MARGIN: usize = 1 << 20;

/// A full segment writer is kept open, up to this share of its budget
/// more (its documents too), when what is left of the build to read is at
/// most that share of what the build read while it filled: written out
/// there, it would leave a small last segment for the commit to merge
/// ([docs/performance.md](../../docs/performance.md#the-last-segment)).
const LAST_SHARE: usize = 4;

/// How far a writer near the end of a build may go past `limit` (its
/// budget, or its documents): a [`LAST_SHARE`] more, but never past what
/// tantivy's arena can address ([`MAX_THREAD_BUDGET`]) when `limit` is
/// within it.
fn last_limit(limit: usize) -> usize {
    let more = limit.saturating_add(limit / LAST_SHARE);
    if limit <= MAX_THREAD_BUDGET {
        more.min(MAX_THREAD_BUDGET)
    } else {
        more
    }
}

/// Writes one build's changes; everything becomes visible at once, at
/// [`IndexBuilder::commit`]. All methods may be called from many threads;
/// documents go to the segment writer of the calling thread of the build's
/// rayon pool (see the [module documentation](self)).
pub struct IndexBuilder {
    pi: PiIndex,
    fields: Fields,
    writer: IndexWriter<NoDoc>,
    /// Memory of one segment writer before it is written out.
    budget: usize,
    /// Documents of one segment writer before it is written out (all of
    /// them, but for tests).
    max_docs: u32,
    /// The documents of each thread not yet written out.
    slots: Vec<Mutex<Slot>>,
    /// Session keys whose documents must leave the new segments too.
    withdrawn: Mutex<Vec<u64>>,
    /// The segments of the last commit: what deletes queued during the
    /// build may reach.
    committed: std::sync::Arc<std::collections::HashSet<tantivy::index::SegmentId>>,
    /// Releases the pages of the index files mapped meanwhile (merges
    /// read whole segments) as they add up, until dropped.
    _releasing: Option<Releasing>,
    /// Whether the commit merges in tiers (an incremental build,
    /// [`Tiers`]): else it leaves few segments ([`FewSegments`]).
    in_tiers: std::sync::atomic::AtomicBool,
    /// Bytes of the files this build reads ([`IndexBuilder::plan_bytes`]),
    /// and of those read so far ([`IndexBuilder::file_read`]): how near
    /// its end the build is ([`IndexBuilder::full`]).
    planned: AtomicU64,
    read: AtomicU64,
}

/// How often a build looks at how much of the files it mapped it holds
/// in memory (see [`super::directory`]). A merge of large segments reads
/// their doc stores fast: looked at ten times less often, they made half
/// of a large build's peak
/// ([docs/performance.md](../../docs/performance.md#the-builds-memory)).
const RELEASE_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// How much the mapped pages held may grow between two looks before the
/// index files' are released.
const RELEASE_OVER: u64 = 4 << 20;

/// Where what the process holds mapped cannot be read, how many looks
/// pass between two releases (every 100 ms).
const RELEASE_BLIND: u32 = 10;

/// Whether the mapped pages a process holds grew enough since the last
/// release to release again.
#[derive(Debug)]
struct Growth {
    /// The least held since the last release: the session files being
    /// read are in it too, and the index files' pages are what grows
    /// past it. `None` where it cannot be read.
    floor: Option<u64>,
    /// Looks taken blind, where what is held cannot be read.
    blind: u32,
}

impl Growth {
    fn new(held: Option<u64>) -> Growth {
        Growth {
            floor: held,
            blind: 0,
        }
    }

    /// Whether, holding `held` now, the index files' pages are to be
    /// released: more than [`RELEASE_OVER`] above the floor, or every
    /// [`RELEASE_BLIND`] looks when it cannot be told.
    fn grew(&mut self, held: Option<u64>) -> bool {
        match (held, self.floor) {
            (Some(held), Some(floor)) => {
                self.floor = Some(floor.min(held));
                held > floor + RELEASE_OVER
            }
            _ => {
                self.floor = None;
                self.blind += 1;
                self.blind.is_multiple_of(RELEASE_BLIND)
            }
        }
    }
}

/// A thread releasing the build's mapped index files until dropped.
struct Releasing {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Releasing {
    fn start(mapped: std::sync::Arc<Mapped>) -> Releasing {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("pi-index-release".into())
            .spawn(move || {
                let mut watch = Growth::new(super::file_backed());
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(RELEASE_POLL)
                {
                    if watch.grew(super::file_backed()) {
                        mapped.release();
                        watch = Growth::new(super::file_backed());
                    }
                }
            })
            .ok();
        Releasing {
            stop: Some(stop),
            thread,
        }
    }
}

impl Drop for Releasing {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl IndexBuilder {
    fn err(&self, e: tantivy::TantivyError) -> IndexError {
        tantivy_err(&self.pi.dir, e)
    }

    /// The error of a build one of whose segment writers panicked.
    fn broken(&self) -> IndexError {
        IndexError::WriterFailed(self.pi.dir.clone())
    }

    /// Have the commit merge in tiers of size (an incremental build)
    /// rather than into a few segments of about the same size: merging a
    /// few thousand documents into a large one made appending one message
    /// slow and unpredictable
    /// ([docs/performance.md](../../docs/performance.md#indexing)).
    pub fn merge_in_tiers(&self) {
        self.in_tiers
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Queue a delete of documents of the last commit.
    fn delete_committed(&self, q: impl tantivy::query::Query) -> Result<(), IndexError> {
        let q = CommittedOnly {
            inner: std::sync::Arc::new(q),
            segments: self.committed.clone(),
        };
        self.writer
            .delete_query(Box::new(q))
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Remove every document (a full rebuild).
    pub fn delete_all(&self) -> Result<(), IndexError> {
        self.writer
            .delete_all_documents()
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Remove every document the last commit holds of the session file at
    /// `path` (its record and messages).
    pub fn delete_path(&self, path: &str) -> Result<(), IndexError> {
        self.delete_committed(sess_query(&self.fields, session_key(path)))
    }

    /// Remove, from the last commit and from what this build queued, every
    /// document of the file at `path` (a file whose reading failed after
    /// some of its documents were queued).
    pub fn withdraw_path(&self, path: &str) {
        self.withdrawn
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(session_key(path));
    }

    /// Remove the documents of some entries of the file at `path`, each
    /// named by the byte offset of its line.
    pub fn delete_entries(&self, path: &str, offsets: &[u64]) -> Result<(), IndexError> {
        let key = session_key(path);
        for &offset in offsets {
            self.delete_committed(entry_query(&self.fields, key, offset))?;
        }
        Ok(())
    }

    /// Remove every document of the session with key `sess` (documents
    /// left without a record: `check --repair`).
    pub fn delete_session_key(&self, sess: u64) -> Result<(), IndexError> {
        self.delete_committed(sess_query(&self.fields, sess))
    }

    /// Remove the record of the file at `path`.
    pub fn delete_session_record(&self, path: &str) -> Result<(), IndexError> {
        let f = &self.fields;
        self.delete_committed(all_terms(&[(f.doc_type, SESSION_DOC), (f.path, path)]))
    }

    /// Add one document to the calling thread's documents: held back
    /// while they are few, then in its segment writer, written out when it
    /// is full.
    fn add(&self, doc: PiDoc) -> Result<(), IndexError> {
        let slot = rayon::current_thread_index().unwrap_or(0) % self.slots.len();
        // A panic while a slot was held (inside the indexer) left its
        // writer half-written: the build cannot commit it.
        let mut slot = self.slots[slot].lock().map_err(|_| self.broken())?;
        let held = match &mut *slot {
            Slot::Open(open) => {
                let full = match self.put(open, doc) {
                    Ok(full) => full,
                    Err(e) => {
                        // A document half-added (a write failed midway)
                        // leaves the writer unusable: drop it; the build
                        // is abandoned with this error.
                        *slot = Slot::default();
                        return Err(e);
                    }
                };
                if !full {
                    return Ok(());
                }
                let Slot::Open(full) = std::mem::take(&mut *slot) else {
                    unreachable!("the slot was open")
                };
                drop(slot);
                return self.finish(*full);
            }
            Slot::Held { docs, bytes } => {
                *bytes += doc.text_len();
                docs.push(doc);
                if docs.len() < HELD_DOCS && *bytes < self.budget / 16 {
                    return Ok(());
                }
                std::mem::take(docs)
            }
        };
        let mut open = self.open()?;
        let mut held = held.into_iter();
        for doc in held.by_ref() {
            if self.put(&mut open, doc)? {
                break;
            }
        }
        // (On an error the new writer is dropped here, the slot left
        // empty, and the build abandoned.)
        // Held documents never fill a writer (they are a sixteenth of its
        // budget) unless their index outgrows their text sixteenfold; what
        // is left then is held again.
        let rest: Vec<PiDoc> = held.collect();
        if rest.is_empty() && !self.full(&open) {
            *slot = Slot::Open(Box::new(open));
            return Ok(());
        }
        let bytes = rest.iter().map(PiDoc::text_len).sum();
        *slot = Slot::Held { docs: rest, bytes };
        drop(slot);
        self.finish(open)
    }

    /// A new segment writer with this build's budget.
    fn open(&self) -> Result<Open, IndexError> {
        let segment = self.pi.index.new_segment();
        let writer = SegmentWriter::for_segment(TERM_TABLE_BUDGET, segment.clone())
            .map_err(|e| self.err(e))?;
        Ok(Open {
            segment,
            writer,
            read_at_open: self.read.load(Ordering::Relaxed),
        })
    }

    /// Index `doc` in `open`; whether `open` is now full.
    fn put(&self, open: &mut Open, doc: PiDoc) -> Result<bool, IndexError> {
        open.writer
            .add_document(AddOperation {
                opstamp: 0,
                document: doc,
            })
            .map_err(|e| self.err(e))?;
        Ok(self.full(open))
    }

    /// Whether `open` is to be written out: at its budget, unless the
    /// build is nearly done, then at a [`LAST_SHARE`] more.
    fn full(&self, open: &Open) -> bool {
        let mem = open.writer.mem_usage() + MARGIN;
        let docs = open.writer.max_doc();
        if mem < self.budget && docs < self.max_docs {
            return false;
        }
        if mem >= last_limit(self.budget) || docs as usize >= last_limit(self.max_docs as usize) {
            return true;
        }
        let planned = self.planned.load(Ordering::Relaxed);
        let read = self.read.load(Ordering::Relaxed);
        let filled_by = read.saturating_sub(open.read_at_open);
        let left = planned.saturating_sub(read);
        !(planned > 0 && filled_by > 0 && left.saturating_mul(LAST_SHARE as u64) <= filled_by)
    }

    /// How many bytes of files the build is to read (before it reads
    /// them); see [`IndexBuilder::file_read`].
    pub fn plan_bytes(&self, bytes: u64) {
        self.planned.store(bytes, Ordering::Relaxed);
    }

    /// That the build has read a file of `bytes` bytes: with
    /// [`IndexBuilder::plan_bytes`], what tells a full segment writer
    /// that the build is nearly done.
    pub fn file_read(&self, bytes: u64) {
        self.read.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Write out a segment and hand it to tantivy's writer at once: not
    /// searchable before the commit, but the merge policy may merge it
    /// with the others while the build goes on, so the merges of a large
    /// build run beside its parsing instead of all after it.
    fn finish(&self, open: Open) -> Result<(), IndexError> {
        let max_doc = open.writer.max_doc();
        open.writer.finalize().map_err(|e| self.err(e))?;
        let meta = open.segment.with_max_doc(max_doc).meta().clone();
        meta.untrack_temp_docstore();
        self.writer.add_segment(meta).map_err(|e| self.err(e))
    }

    /// Queue the documents of one session. A session with many documents
    /// (one large file) is spread over every thread.
    pub fn add_documents(
        &self,
        meta: &SessionMeta<'_>,
        docs: Vec<Document>,
    ) -> Result<(), IndexError> {
        use rayon::prelude::*;
        let sess = meta.key();
        let one = |d: Document| self.add(PiDoc::Message(MessageDoc::new(sess, d)));
        if docs.len() >= SPREAD_DOCS && self.slots.len() > 1 {
            docs.into_par_iter()
                .with_min_len(SPREAD_DOCS / 4)
                .try_for_each(one)
        } else {
            docs.into_iter().try_for_each(one)
        }
    }

    /// Queue a session's record (remove the old one first with
    /// [`IndexBuilder::delete_session_record`] or
    /// [`IndexBuilder::delete_path`]).
    pub fn add_session_record(&self, rec: &SessionRecord<'_>) -> Result<(), IndexError> {
        let meta = &rec.meta;
        self.add(PiDoc::Session(Box::new(SessionDoc {
            sess: meta.key(),
            id: meta.id.to_owned(),
            path: meta.path.to_owned(),
            cwd: meta.cwd.map(str::to_owned),
            name: meta.name.map(str::to_owned),
            models: rec.models.clone(),
            title: rec.title.clone(),
            messages: rec.messages,
            started_ms: meta.started_ms,
            last_ms: rec.last_ms,
            state: rec.state,
            root: meta.root.map(str::to_owned),
            parent: meta.parent.map(str::to_owned),
            head: rec.head,
            agent: meta.agent,
            usage: super::spent::chunks(&rec.usage.encode()),
            usage_sums: super::spent::chunks(&rec.usage.encode_sums()),
        })))
    }

    /// Give up the build: nothing it queued is committed, the searches go
    /// on answering from the last commit, and the files it wrote so far
    /// are removed now (not by the next build that commits). Returns the
    /// error to report: `e`, or when `e` only says that tantivy's indexing
    /// thread died ("An index writer was killed"), what killed it (a full
    /// disk, say).
    pub fn abandon(mut self, e: IndexError) -> IndexError {
        let died = matches!(
            &e,
            IndexError::Tantivy {
                error: tantivy::TantivyError::ErrorInThread(_),
                ..
            }
        );
        let e = if died {
            // Joining the indexing threads hands over their own error.
            match self.writer.prepare_commit() {
                Err(cause) => tantivy_err(&self.pi.dir, cause),
                Ok(_) => e,
            }
        } else {
            e
        };
        // The segments this build wrote are no one's once their metas go;
        // a fresh writer (the same lock) on the last commit, whose garbage
        // collection removes every file no commit names.
        for slot in &mut self.slots {
            drop(std::mem::take(
                slot.get_mut().unwrap_or_else(|p| p.into_inner()),
            ));
        }
        if self.writer.rollback().is_ok() {
            let _ = self.writer.garbage_collect_files().wait();
        }
        e
    }

    /// Write out the last open segments (in parallel), hand every new
    /// segment to tantivy, apply the withdrawals, commit with the build's
    /// record, wait for merges, run `after` on the committed state (the
    /// write lock still held), and count what the index now holds.
    /// `roots` records where the build read sessions from, for `stats`.
    pub fn commit(
        mut self,
        kinds: &str,
        now_ms: i64,
        roots: &[crate::discover::Location],
        after: &dyn Fn(&PiIndex, &tantivy::Searcher),
    ) -> Result<(BuildInfo, CommitPhases), IndexError> {
        let started = std::time::Instant::now();
        let mut phases = CommitPhases {
            writers: self.slots.len(),
            ..CommitPhases::default()
        };
        let mut open: Vec<Open> = Vec::new();
        let mut held: Vec<PiDoc> = Vec::new();
        let mut poisoned = false;
        for slot in &mut self.slots {
            let slot = match slot.get_mut() {
                Ok(slot) => slot,
                Err(p) => {
                    poisoned = true;
                    p.into_inner()
                }
            };
            match std::mem::take(slot) {
                Slot::Open(o) => open.push(*o),
                Slot::Held { docs, .. } => held.extend(docs),
            }
        }
        if poisoned {
            drop(open);
            let e = self.broken();
            return Err(self.abandon(e));
        }
        // Held documents join the open writer with the fewest documents
        // (past its budget by at most what they are), or one of their own.
        if !held.is_empty() {
            let at = match (0..open.len()).min_by_key(|&i| open[i].writer.max_doc()) {
                Some(at) => at,
                None => match self.open() {
                    Ok(o) => {
                        open.push(o);
                        0
                    }
                    Err(e) => return Err(self.abandon(e)),
                },
            };
            for doc in held {
                if let Err(e) = self.put(&mut open[at], doc) {
                    drop(open);
                    return Err(self.abandon(e));
                }
            }
        }
        let written = std::thread::scope(|scope| {
            let running: Vec<_> = open
                .into_iter()
                .map(|o| scope.spawn(|| self.finish(o)))
                .collect();
            running
                .into_iter()
                .map(|r| r.join().unwrap_or_else(|_| Err(self.broken())))
                .fold(Ok(()), Result::and)
        });
        if let Err(e) = written {
            return Err(self.abandon(e));
        }
        phases.flush_ms = started.elapsed().as_millis() as u64;
        let dir = self.pi.dir.clone();
        let err = |e| tantivy_err(&dir, e);
        let withdrawn = self.withdrawn.get_mut().unwrap_or_else(|p| p.into_inner());
        for key in std::mem::take(withdrawn) {
            if let Err(e) = self
                .writer
                .delete_query(Box::new(sess_query(&self.fields, key)))
            {
                return Err(self.abandon(err(e)));
            }
        }
        // The counts are only known after the commit; the payload records
        // the build, and `stats` counts the index itself.
        let mut info = BuildInfo {
            tool: TOOL.into(),
            schema_version: SCHEMA_VERSION,
            kinds: kinds.into(),
            built_at_ms: now_ms,
            sessions: 0,
            documents: 0,
            roots: roots.to_vec(),
        };
        let payload = serde_json::to_string(&info).expect("build info serializes");
        if self.in_tiers.load(std::sync::atomic::Ordering::Relaxed) {
            self.writer.set_merge_policy(Box::new(Tiers));
        } else {
            self.writer.set_merge_policy(Box::new(FewSegments));
        }
        let mut prepared = match self.writer.prepare_commit() {
            Ok(prepared) => prepared,
            Err(e) => return Err(self.abandon(err(e))),
        };
        prepared.set_payload(&payload);
        crate::failpoint::point("after-prepare-commit");
        if let Err(e) = prepared.commit() {
            return Err(self.abandon(err(e)));
        }
        crate::failpoint::point("after-commit");
        // The commit holds every document; a merge that fails after it
        // (a disk that filled up) only leaves its segments unmerged, for
        // the next build's merges.
        let merging = std::time::Instant::now();
        let merging_cpu = crate::cpu::process();
        let _ = self.writer.wait_merging_threads();
        phases.merge_ms = merging.elapsed().as_millis() as u64;
        phases.merge_cpu_ms = crate::cpu::ms_between(merging_cpu, crate::cpu::process());
        let searcher = self.pi.searcher()?;
        phases.segments = searcher.segment_readers().len();
        // What the caller derives from the commit (the copy groups),
        // while the write lock is still held.
        let deriving = std::time::Instant::now();
        after(&self.pi, &searcher);
        phases.after_ms = deriving.elapsed().as_millis() as u64;
        let sessions = TermQuery::new(
            Term::from_field_text(self.fields.doc_type, SESSION_DOC),
            IndexRecordOption::Basic,
        );
        info.sessions = searcher.search(&sessions, &Count).map_err(err)? as u64;
        info.documents = searcher
            .search(&*super::all_messages(&self.fields), &Count)
            .map_err(err)? as u64;
        Ok((info, phases))
    }
}

/// Where a commit's time went ([`IndexBuilder::commit`]), for the build's
/// report: the serial share of a build is read from these on any machine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommitPhases {
    /// Writing out the segments still open, one thread each.
    pub flush_ms: u64,
    /// Waiting for the commit's merges (into a few segments), wall time.
    pub merge_ms: u64,
    /// CPU the process used while the merges ran (only they were
    /// running), where the system tells it.
    pub merge_cpu_ms: Option<u64>,
    /// What the caller derived from the committed state (the copy
    /// groups), with the write lock held.
    pub after_ms: u64,
    /// The index's segments once the commit's merges are done.
    pub segments: usize,
    /// The segment writers the build filled: one per thread that could
    /// run at once (see [`IndexStore::writer`]).
    pub writers: usize,
}

/// A session with at least this many documents is spread over every
/// thread's segment writer, so one huge file does not end a build on one
/// thread.
const SPREAD_DOCS: usize = 4096;

/// The first line of a message, at most 200 characters: a session's title.
pub fn title_of(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    match line.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}

/// Create a new index. The doc store is not compressed: stored text is a
/// small share of the session bytes, and skipping lz4 saves build CPU for
/// larger store files on disk; reading stored documents gets faster too.
/// With nothing to compress, tantivy's dedicated store thread per segment
/// writer only hands blocks over, so the blocks are written by the thread
/// that fills them, with far fewer context switches
/// ([docs/performance.md](../../docs/performance.md#indexing)). Its blocks
/// are [`DOC_STORE_BLOCK_BYTES`].
fn create(
    dir: &Path,
    schema: Schema,
    mapped: &std::sync::Arc<Mapped>,
) -> Result<Index, IndexError> {
    let settings = tantivy::IndexSettings {
        docstore_compression: tantivy::store::Compressor::None,
        docstore_compress_dedicated_thread: false,
        docstore_blocksize: DOC_STORE_BLOCK_BYTES,
        ..Default::default()
    };
    super::create_index(dir, schema, settings, Some(mapped.clone()))
}

/// The doc store's block size. A stored document is read by copying its
/// whole block out of the map (tantivy does so even uncompressed), and the
/// documents a search or a listing reads are mostly each in a block of its
/// own: smaller blocks copy less for the same reads, at no measured cost
/// to the build, to reading a session in order or to the store's size
/// ([docs/performance.md](../../docs/performance.md#what-a-page-costs-to-print)).
/// An index keeps the size it was created with.
const DOC_STORE_BLOCK_BYTES: usize = 4096;

/// Open the index at `dir` if it is ours and current. `Ok(None)` means it
/// is ours but of another schema version; an index that is not ours is an
/// error, so a user's directory is never wiped by mistake.
fn open_ours(
    dir: &Path,
    schema: &Schema,
    mapped: &std::sync::Arc<Mapped>,
) -> Result<Option<Index>, IndexError> {
    let index = super::open_index_mapped(dir, Some(mapped.clone()))?;
    let payload: Option<BuildInfo> = index
        .load_metas()
        .ok()
        .and_then(|m| m.payload)
        .and_then(|p| serde_json::from_str(&p).ok());
    let same_schema = index.schema() == *schema;
    match payload {
        Some(info) if info.tool == TOOL => {
            if same_schema && info.schema_version == SCHEMA_VERSION {
                Ok(Some(index))
            } else {
                Ok(None)
            }
        }
        // Created by us but never committed (a build that died early).
        None if same_schema => Ok(Some(index)),
        _ => Err(IndexError::ForeignIndex(dir.to_owned())),
    }
}

/// Whether every segment of `index` opens: a searcher opens each
/// segment's files and checks their footers.
fn readable(dir: &Path, index: &Index) -> Result<(), IndexError> {
    let reader: tantivy::IndexReader = index
        .reader_builder()
        .reload_policy(tantivy::ReloadPolicy::Manual)
        .try_into()
        .map_err(|e| tantivy_err(dir, e))?;
    drop(reader.searcher());
    Ok(())
}

/// An exclusive `flock` of the directory `dir` itself, held until the
/// returned file is dropped: while a build opens or creates an index.
#[cfg(unix)]
fn lock_directory(dir: &Path) -> std::io::Result<Option<std::fs::File>> {
    let file = std::fs::File::open(dir)?;
    loop {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(Some(file))
}

/// No lock where a directory cannot be opened as a file (Windows): two
/// builds that create one index at the same moment are not kept apart
/// there (tantivy's own writer lock still keeps their writers apart).
#[cfg(not(unix))]
fn lock_directory(_dir: &Path) -> std::io::Result<Option<std::fs::File>> {
    Ok(None)
}

impl PiIndex {
    /// The indexed state of every session file, by path, read from fast
    /// columns (no stored document is read): what the next build, and
    /// `pi-index push`, compare with. Where two live records name one
    /// file, the later one (by segment, then document) is kept.
    pub fn file_states(&self) -> Result<FileStates, IndexError> {
        self.file_states_in(&self.searcher()?)
    }

    /// [`PiIndex::file_states`] of the state `searcher` shows, from the
    /// file a build with nothing to do saved beside the index for that
    /// state ([`super::saved::states`]) when there is one, else from the
    /// columns; then also the mark to save them under.
    pub(crate) fn file_states_saved_or_read(
        &self,
        searcher: &tantivy::Searcher,
    ) -> Result<(FileStates, Option<Vec<u8>>), IndexError> {
        let mark = super::saved::states::mark(searcher.segment_readers());
        Ok(match super::saved::states::read(&self.dir, &mark) {
            Some(states) => (states, None),
            None => (self.file_states_in(searcher)?, Some(mark)),
        })
    }

    /// Where the record of the session file at `path` is in the state
    /// `searcher` shows: the later one when there are two, as in
    /// `file_states_in`.
    fn record_at(
        &self,
        searcher: &tantivy::Searcher,
        path: &str,
    ) -> Result<Option<tantivy::DocAddress>, IndexError> {
        let f = &self.fields;
        let query = super::all_terms(&[(f.doc_type, SESSION_DOC), (f.path, path)]);
        let found = searcher
            .search(&query, &tantivy::collector::DocSetCollector)
            .map_err(|e| tantivy_err(&self.dir, e))?;
        Ok(found.into_iter().max())
    }

    /// The indexed state of the session file at `path` in the state
    /// `searcher` shows, if the index holds it: its record found by its
    /// path, its columns read for that one document.
    pub fn file_state(
        &self,
        searcher: &tantivy::Searcher,
        path: &str,
    ) -> Result<Option<FileState>, IndexError> {
        let err = |e| tantivy_err(&self.dir, e);
        let Some(addr) = self.record_at(searcher, path)? else {
            return Ok(None);
        };
        let ff = searcher.segment_reader(addr.segment_ord).fast_fields();
        let mut v = [0u64; 7];
        for (slot, name) in v.iter_mut().zip([
            "file_dev",
            "file_ino",
            "file_size",
            "file_mtime_ns",
            "indexed_to",
            "head_hash",
            "tail_hash",
        ]) {
            *slot = ff.u64(name).map_err(err)?.first(addr.doc_id).unwrap_or(0);
        }
        Ok(Some(FileState {
            dev: v[0],
            ino: v[1],
            size: v[2],
            mtime_ns: v[3],
            indexed_to: v[4],
            head_hash: v[5],
            tail_hash: v[6],
        }))
    }

    /// The usage rows the record of the session file at `path` holds in
    /// the state `searcher` shows, to be added to (what a grown file's new
    /// record carries over).
    pub fn recorded_usage(
        &self,
        searcher: &tantivy::Searcher,
        path: &str,
    ) -> Result<super::spent::Spent, IndexError> {
        let err = |e| tantivy_err(&self.dir, e);
        let Some(addr) = self.record_at(searcher, path)? else {
            return Ok(super::spent::Spent::default());
        };
        let column = searcher
            .segment_reader(addr.segment_ord)
            .fast_fields()
            .str("usage")
            .map_err(err)?;
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        if let Some(column) = column {
            for ord in column.term_ords(addr.doc_id) {
                let mut chunk = Vec::new();
                column
                    .ord_to_bytes(ord, &mut chunk)
                    .map_err(|e| err(e.into()))?;
                chunks.push(chunk);
            }
        }
        Ok(super::spent::Spent::resume(
            super::spent::join(&chunks).unwrap_or_default(),
        ))
    }

    /// [`PiIndex::file_states`] of the state `searcher` shows.
    pub fn file_states_in(&self, searcher: &tantivy::Searcher) -> Result<FileStates, IndexError> {
        let pi = self;
        let err = |e| tantivy_err(&pi.dir, e);
        let mut per_segment = Vec::with_capacity(searcher.segment_readers().len());
        let mut total = 0;
        for seg in searcher.segment_readers() {
            let ff = seg.fast_fields();
            let Some(file) = ff.str("file").map_err(err)? else {
                continue;
            };
            let col = |name: &str| ff.u64(name).map_err(err);
            let cols = [
                col("file_dev")?,
                col("file_ino")?,
                col("file_size")?,
                col("file_mtime_ns")?,
                col("indexed_to")?,
                col("head_hash")?,
                col("tail_hash")?,
            ];
            // The session records are the documents with a file size (a
            // message has none); each column is then read for all of them
            // in one batch, not looked up document by document.
            let size = &cols[2];
            let docs: Vec<u32> = match &size.index {
                ColumnIndex::Optional(rows) => rows
                    .iter_non_null_docs()
                    .filter(|&d| !seg.is_deleted(d))
                    .collect(),
                _ => (0..seg.max_doc())
                    .filter(|&d| !seg.is_deleted(d) && size.first(d).is_some())
                    .collect(),
            };
            let mut values = vec![[0u64; 7]; docs.len()];
            let mut column = vec![None; docs.len()];
            for (c, values_of) in cols.iter().enumerate() {
                values_of.first_vals(&docs, &mut column);
                for (row, v) in values.iter_mut().zip(&column) {
                    row[c] = v.unwrap_or(0);
                }
            }
            let mut ords = vec![None; docs.len()];
            file.ords().first_vals(&docs, &mut ords);
            // Each path's state, by its ordinal (the later record wins).
            let mut by_ord: Vec<Option<FileState>> = vec![None; file.num_terms()];
            for (ord, v) in ords.into_iter().zip(values) {
                if let Some(slot) = ord.and_then(|ord| by_ord.get_mut(ord as usize)) {
                    *slot = Some(FileState {
                        dev: v[0],
                        ino: v[1],
                        size: v[2],
                        mtime_ns: v[3],
                        indexed_to: v[4],
                        head_hash: v[5],
                        tail_hash: v[6],
                    });
                }
            }
            total += docs.len();
            per_segment.push((file, by_ord));
        }
        // The paths in term order, each dictionary read once (looking each
        // one up by ordinal would decompress its block every time), and
        // taken as the keys of their states; later segments win.
        let mut out = FileStates::with_capacity_and_hasher(total, Default::default());
        for (file, by_ord) in per_segment {
            let mut terms = file.dictionary().stream().map_err(|e| err(e.into()))?;
            let mut states = by_ord.into_iter();
            while terms.advance() {
                let Some(Some(state)) = states.next() else {
                    continue;
                };
                let path = match std::str::from_utf8(terms.key()) {
                    Ok(path) => path.to_owned(),
                    Err(_) => String::from_utf8_lossy(terms.key()).into_owned(),
                };
                out.insert(path, state);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::{FewSegments, Growth, FEW_SEGMENTS, RELEASE_BLIND, RELEASE_OVER};

    #[test]
    fn a_new_index_keeps_its_documents_in_small_blocks() {
        use super::{IndexStore, DOC_STORE_BLOCK_BYTES};
        let t = tempfile::tempdir().unwrap();
        let created = IndexStore::open_or_create(t.path(), false).unwrap();
        let settings = created.pi.index.settings();
        assert_eq!(settings.docstore_blocksize, DOC_STORE_BLOCK_BYTES);
        assert!(DOC_STORE_BLOCK_BYTES < tantivy::IndexSettings::default().docstore_blocksize);
        drop(created);
        // Written in the index's settings, so its later builds keep it.
        let opened = IndexStore::open_or_create(t.path(), false).unwrap();
        assert_eq!(
            opened.pi.index.settings().docstore_blocksize,
            DOC_STORE_BLOCK_BYTES
        );
    }

    #[test]
    fn a_writer_near_the_end_goes_a_quarter_past_its_budget_within_the_arena() {
        use super::{last_limit, MAX_THREAD_BUDGET};
        assert_eq!(last_limit(48 << 20), 60 << 20);
        assert_eq!(last_limit(1000), 1250);
        // The largest budget `--memory` takes stays within what tantivy's
        // arena addresses.
        assert_eq!(last_limit(3800 << 20), MAX_THREAD_BUDGET);
        assert_eq!(last_limit(MAX_THREAD_BUDGET), MAX_THREAD_BUDGET);
        // The test's document limit, unlimited by default, stays so.
        assert_eq!(last_limit(u32::MAX as usize), u32::MAX as usize * 5 / 4);
    }

    #[test]
    fn a_full_build_leaves_few_segments_of_about_the_same_size() {
        // Few enough already: nothing to merge.
        assert!(FewSegments::partition(&[10, 20, 30], 2).is_empty());
        // Largest first, each to the group with the fewest documents yet.
        let sizes = [500, 100, 400, 300, 200, 100];
        assert_eq!(
            FewSegments::partition(&sizes, 2),
            [vec![0, 4, 1], vec![2, 3, 5]]
        );
        assert_eq!(
            FewSegments::partition(&sizes, 3),
            [vec![0, 5], vec![2, 1], vec![3, 4]]
        );
        // One thread: one segment. A group of one is not merged.
        assert_eq!(FewSegments::partition(&sizes, 1), [vec![0, 2, 3, 4, 1, 5]]);
        assert_eq!(
            FewSegments::partition(&[900, 10, 10, 10], 2),
            [vec![1, 2, 3]]
        );
        // What a build leaves: the two smallest of four segments merged.
        assert_eq!(
            FewSegments::partition(&[500, 480, 120, 100], FEW_SEGMENTS),
            [vec![2, 3]]
        );
    }

    #[test]
    fn an_incremental_build_merges_a_tier_s_segments_up_to_the_largest() {
        use super::{Tiers, TIER_FACTOR, TIER_FLOOR};
        assert_eq!(Tiers::tier(0), 0);
        assert_eq!(Tiers::tier(TIER_FLOOR - 1), 0);
        assert_eq!(Tiers::tier(TIER_FLOOR), 1);
        assert_eq!(Tiers::tier(TIER_FACTOR * TIER_FLOOR - 1), 1);
        assert_eq!(Tiers::tier(TIER_FACTOR * TIER_FLOOR), 2);
        assert!(Tiers::partition(&[]).is_empty());
        // Three small segments beside a large one: not yet a tier's worth.
        assert!(Tiers::partition(&[70_000, 10, 500, 20]).is_empty());
        // The fourth: the four merged, the large one left alone.
        assert_eq!(
            Tiers::partition(&[70_000, 10, 500, 20, 1_999]),
            [vec![1, 3, 2, 4]]
        );
        // Each tier on its own; a tier of three waits.
        assert_eq!(
            Tiers::partition(&[70_000, 3_000, 5, 2_500, 7, 4_000, 6, 5_000, 8]),
            [vec![2, 6, 4, 8], vec![3, 1, 5, 7]]
        );
        assert!(Tiers::partition(&[70_000, 3_000, 2_500, 4_000]).is_empty());
        // A merge holds no more than the largest segment: of four segments
        // of 30,000 beside one of 70,000, two are merged.
        assert_eq!(
            Tiers::partition(&[70_000, 30_000, 30_000, 30_000, 30_000]),
            [vec![1, 2]]
        );
        // Nor into one larger than a third of the index: of four
        // segments as large as the largest, none.
        assert!(Tiers::partition(&[70_000, 70_000, 70_000, 70_000, 10]).is_empty());
        // The index grown by appends to three times a full build's
        // segment: two of those merged into one of 70,000.
        assert_eq!(
            Tiers::partition(&[35_000, 35_000, 35_000, 35_000, 70_000, 10]),
            [vec![0, 1]]
        );
        // A small index merges its segments up to TIER_FACTOR x TIER_FLOOR
        // documents, the largest among them.
        assert_eq!(
            Tiers::partition(&[2_100, 2_000, 1_500, 1_000, 900, 800]),
            [vec![5, 4, 3, 2]]
        );
    }

    #[test]
    fn appends_leave_a_few_segments_a_tier_and_merge_each_document_a_few_times() {
        use super::Tiers;
        // Two full-build segments and 2,000 builds that each append a
        // segment of 1 to 1,500 documents (a fixed pseudo-random walk),
        // the policy applied after each commit until it asks for nothing.
        let mut sizes = vec![73_000_u32, 74_000];
        let (mut merged, mut most, mut added) = (0_u64, 0_usize, 0_u64);
        let mut x = 12345_u64;
        for _ in 0..2_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let docs = 1 + (x >> 33) as u32 % 1_500;
            added += u64::from(docs);
            sizes.push(docs);
            loop {
                let groups = Tiers::partition(&sizes);
                if groups.is_empty() {
                    break;
                }
                let mut gone: Vec<usize> = groups.iter().flatten().copied().collect();
                let new: Vec<u32> = groups
                    .iter()
                    .map(|g| g.iter().map(|&i| sizes[i]).sum())
                    .collect();
                merged += new.iter().map(|&d| u64::from(d)).sum::<u64>();
                gone.sort_unstable();
                for i in gone.into_iter().rev() {
                    sizes.remove(i);
                }
                sizes.extend(new);
            }
            most = most.max(sizes.len());
        }
        // 1.5 M documents appended to 147,000: no segment larger than a
        // third of them, every document merged a few times, not once per
        // build, and a few segments a tier (merging only segments of up
        // to 2,000 documents left hundreds, docs/performance.md).
        let all = 147_000 + added;
        assert_eq!(sizes.iter().map(|&d| u64::from(d)).sum::<u64>(), all);
        assert!(sizes.iter().all(|&d| u64::from(d) <= all / 3), "{sizes:?}");
        assert!(merged < 8 * added, "{merged} merged of {added}");
        assert!(most <= 20, "{most} segments: {sizes:?}");
    }

    #[test]
    fn index_pages_are_released_when_what_is_held_grows_past_its_least() {
        let mb = 1 << 20;
        let mut g = Growth::new(Some(40 * mb));
        // Session files read and let go move what is held around the floor.
        assert!(!g.grew(Some(40 * mb + RELEASE_OVER)));
        assert!(!g.grew(Some(30 * mb)));
        // The floor is now 30 MB: a merge reading past it is released.
        assert!(!g.grew(Some(30 * mb + RELEASE_OVER)));
        assert!(g.grew(Some(30 * mb + RELEASE_OVER + 1)));
        // Where it cannot be read, every RELEASE_BLIND looks.
        let mut g = Growth::new(None);
        let looks: Vec<bool> = (0..2 * RELEASE_BLIND).map(|_| g.grew(None)).collect();
        let released: Vec<usize> = (0..looks.len()).filter(|&i| looks[i]).collect();
        let every = RELEASE_BLIND as usize;
        assert_eq!(released, [every - 1, 2 * every - 1]);
    }
}
