//! The build pipeline, end to end: discover → fingerprint → map and split
//! → parse in parallel → extract → index.
//!
//! Files run in parallel on a rayon pool, largest first; a file larger than
//! [`crate::source::CHUNK_BYTES`] is itself split into
//! newline-aligned chunks parsed in parallel, so one huge session still uses
//! every core. Each worker thread keeps one [`ChunkParser`] (simd-json
//! buffers and a tape) for its whole life. Documents are queued to
//! tantivy's own indexing threads as soon as a file is done, so parsing and
//! indexing overlap, and the build commits once at the end.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;
use serde::Serialize;

use crate::discover::FileIdentity;
use crate::discover::{discover, Candidate, Problem};
use crate::index::state::FileState;
use crate::index::writer::{title_of, Fresh, IndexBuilder, IndexStore, SessionMeta, SessionRecord};
use crate::index::{BuildInfo, IndexError};
use crate::pi::fingerprint::{read_header, FirstLine, Header, Rejection};
use crate::pi::{ChunkParser, Document, Kinds, ParsedChunk, Role, Session};
use crate::source::{chunks, complete_len, MappedFile, CHUNK_BYTES};

/// How many damaged lines the report lists before only counting them.
pub const DAMAGE_LIST_CAP: usize = 100;

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
    /// Memory budget for tantivy's indexing, in bytes.
    pub memory_budget: usize,
    /// Rebuild everything instead of only what changed.
    pub full: bool,
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

/// A file that was not indexed, and why.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Skipped {
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
    /// Files rejected by the fingerprint.
    pub files_rejected: u64,
    /// Files that could not be read (listed in `errors`).
    pub files_failed: u64,
    /// Sessions in the index after the build.
    pub sessions: u64,
    /// Documents written.
    pub messages_indexed: u64,
    /// Lines read, headers and blank lines included.
    pub lines_read: u64,
    /// Damaged lines (listed in `damaged`, up to a cap).
    pub lines_damaged: u64,
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
    /// Why the whole index was rebuilt, if it was.
    pub rebuilt: Option<String>,
    /// Damaged lines, in path and line order, at most [`DAMAGE_LIST_CAP`].
    pub damaged: Vec<DamageReport>,
    /// Damaged lines not listed in `damaged`.
    pub damaged_more: u64,
    /// Files rejected, with the reason.
    pub rejected: Vec<Skipped>,
    /// Files and directories that could not be read.
    pub errors: Vec<Skipped>,
    /// Session files whose header declares a version newer than 3, read on
    /// a best-effort basis.
    pub newer_versions: Vec<Skipped>,
}

/// Wall time per phase of a build, milliseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timings {
    /// Walking the roots.
    pub discover_ms: u64,
    /// Fingerprinting, parsing and queueing documents for the indexer.
    pub parse_ms: u64,
    /// Committing: indexing what is still queued, writing segments, merging.
    pub commit_ms: u64,
}

/// A failure that stops the build (as opposed to damage, which is reported).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The index could not be opened or written.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The thread pool could not be started.
    #[error("cannot start {threads} threads: {source}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// Why not.
        source: rayon::ThreadPoolBuildError,
    },
}

/// What happened to one file.
enum Outcome {
    Indexed {
        how: How,
        lines: u64,
        bytes: u64,
        bytes_parsed: u64,
        documents: u64,
        damage: Vec<DamageReport>,
        newer: Option<u64>,
    },
    Rejected(Rejection),
    Failed(String),
}

/// How an indexed file was treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    New,
    Grown,
    Replaced,
}

thread_local! {
    static PARSER: RefCell<ChunkParser> = RefCell::new(ChunkParser::new());
}

/// Parse one accepted session file into a [`Session`]. Public so that
/// benchmarks and tests can run the read-and-extract stages without an
/// index. Returns the session and the bytes of complete lines.
pub fn read_session(
    path: &Path,
    kinds: Kinds,
) -> std::io::Result<Result<(Session, u64), Rejection>> {
    let mut file = File::open(path)?;
    let (first, header) = match read_header(&mut file)? {
        Ok(h) => h,
        Err(r) => return Ok(Err(r)),
    };
    let map = MappedFile::from_file(&file)?;
    let (session, complete) = parse_mapped(&map, header, &first, kinds, None);
    Ok(Ok((session, complete)))
}

/// Parse a session file that is already mapped: the parse and extract
/// stages alone, without opening, mapping or unmapping anything. Public so
/// that benchmarks can tell those costs apart; [`read_session`] is the
/// same from a path. Returns the session and the bytes of complete lines.
pub fn parse_session(
    map: &MappedFile,
    kinds: Kinds,
) -> std::io::Result<Result<(Session, u64), Rejection>> {
    let (first, header) = match read_header(&mut map.bytes())? {
        Ok(h) => h,
        Err(r) => return Ok(Err(r)),
    };
    Ok(Ok(parse_mapped(map, header, &first, kinds, None)))
}

/// Parse the entries of a mapped session whose header was already read.
/// With `indexed_to`, the lines before that offset were indexed by an
/// earlier build: only their links are read, and only the lines after it
/// yield documents. Returns the session and the bytes of complete lines.
fn parse_mapped(
    map: &MappedFile,
    header: Header,
    first: &FirstLine,
    kinds: Kinds,
    indexed_to: Option<u64>,
) -> (Session, u64) {
    let bytes = map.bytes();
    let complete = complete_len(bytes);
    let start = (first.end as usize).min(complete);
    let split = indexed_to.map_or(start, |to| (to as usize).clamp(start, complete));
    let version = header.version;
    let old = parse_range(map, start, split, version, kinds, true);
    let new = parse_range(map, split, complete, version, kinds, false);
    let session = if indexed_to.is_some() {
        Session::finish_grown(header, old, new, first.number + 1)
    } else {
        let mut all = old;
        all.extend(new);
        Session::finish(header, all, first.number + 1)
    };
    (session, complete as u64)
}

/// Parse `from..to` of a mapped file (complete lines) in chunks, in
/// parallel when there are several.
fn parse_range(
    map: &MappedFile,
    from: usize,
    to: usize,
    version: u64,
    kinds: Kinds,
    links_only: bool,
) -> Vec<ParsedChunk> {
    if from >= to {
        return Vec::new();
    }
    let body = &map.bytes()[from..to];
    let pieces = chunks(body, CHUNK_BYTES);
    // Files of several chunks are where memory and page faults add up:
    // map each chunk's pages in one go before reading it, and drop them
    // from our resident set after, so peak memory is a few chunks, not the
    // file. A one-chunk file is unmapped as soon as it is done anyway.
    let manage_pages = pieces.len() > 1;
    let parse = |c: &crate::source::Chunk| -> ParsedChunk {
        if manage_pages {
            map.prefault(from + c.start, from + c.end);
        }
        let bytes = &body[c.start..c.end];
        let offset = (from + c.start) as u64;
        let parsed = PARSER.with(|p| {
            let mut p = p.borrow_mut();
            if links_only {
                p.parse_links(bytes, offset, version)
            } else {
                p.parse_chunk(bytes, offset, version, kinds)
            }
        });
        if manage_pages {
            map.release(from + c.start, from + c.end);
        }
        parsed
    };
    if pieces.len() == 1 {
        vec![parse(&pieces[0])]
    } else {
        pieces.par_iter().map(parse).collect()
    }
}

/// Everything a worker needs to process files.
struct Work<'a> {
    kinds: Kinds,
    index: &'a IndexBuilder,
    /// The last committed index, for what grown files already have.
    searcher: &'a tantivy::Searcher,
    pi: &'a crate::index::PiIndex,
    states: &'a HashMap<String, FileState>,
}

fn process(c: &Candidate, w: &Work<'_>) -> Result<Outcome, IndexError> {
    let path_str = c.path.to_string_lossy();
    // Unchanged files were left out by `build` before reaching here.
    let old = w.states.get(path_str.as_ref());
    let mut file = match File::open(&c.path) {
        Ok(f) => f,
        Err(e) => return Ok(Outcome::Failed(e.to_string())),
    };
    let (first, header) = match read_header(&mut file) {
        Ok(Ok(h)) => h,
        Ok(Err(r)) => {
            if old.is_some() {
                w.index.delete_path(&path_str);
            }
            return Ok(Outcome::Rejected(r));
        }
        Err(e) => return Ok(Outcome::Failed(e.to_string())),
    };
    let identity = match file.metadata() {
        Ok(m) => FileIdentity::of(&m),
        Err(e) => return Ok(Outcome::Failed(e.to_string())),
    };
    let map = match MappedFile::from_file(&file) {
        Ok(m) => m,
        Err(e) => return Ok(Outcome::Failed(e.to_string())),
    };
    crate::failpoint::disturb("PI_INDEX_TEST_SHRINK", &c.path);
    let bytes = map.bytes();
    // Grown: the same file, with the bytes indexed before intact.
    let grown = old.filter(|st| st.grown(&identity, bytes));
    let (session, complete) =
        parse_mapped(&map, header, &first, w.kinds, grown.map(|st| st.indexed_to));
    let state = FileState::of(bytes, identity, complete);
    if map.truncated() {
        // Another process cut the file while we read it (Pi rewrites whole
        // files): what we parsed is not trustworthy. Keep what the index
        // has; the next build reads the file as it is then.
        return Ok(Outcome::Failed(
            "the file shrank while it was being read: skipped this time".into(),
        ));
    }
    drop(map);

    let meta = SessionMeta::of(&session, &path_str);
    let how;
    let mut title = session
        .documents
        .iter()
        .find(|d| d.role == Role::User)
        .map(|d| title_of(&d.text));
    let mut messages = session.documents.len() as u64;
    let mut last_ms = session
        .documents
        .iter()
        .filter_map(|d| d.timestamp_ms)
        .max();
    if grown.is_some() {
        how = How::Grown;
        let before = w.pi.session_by_path(w.searcher, &path_str)?;
        if let Some(b) = before {
            if b.title.is_some() {
                title = b.title;
            }
            messages += b.messages;
            last_ms = last_ms.max(b.last_ms);
        }
        w.index.delete_session_record(&path_str)?;
        // Entries whose branch status the new entries changed: re-add
        // their documents with the new status.
        if !session.flipped.is_empty() {
            let offsets: Vec<u64> = session.flipped.iter().map(|&(o, _)| o).collect();
            let stored = w.pi.entry_documents(w.searcher, &path_str, &offsets)?;
            w.index.delete_entries(&path_str, &offsets)?;
            let now: HashMap<u64, bool> = session.flipped.iter().copied().collect();
            let docs: Vec<Document> = stored
                .into_iter()
                .map(|d| {
                    let mut doc = d.into_document();
                    doc.active = now.get(&doc.offset).copied().unwrap_or(doc.active);
                    doc
                })
                .collect();
            w.index.add_documents(&meta, &docs)?;
        }
    } else if old.is_some() {
        how = How::Replaced;
        w.index.delete_path(&path_str);
    } else {
        how = How::New;
    }
    w.index.add_documents(&meta, &session.documents)?;
    w.index.add_session_record(&SessionRecord {
        meta: meta.clone(),
        state,
        title,
        messages,
        last_ms,
    })?;
    let damage = session
        .damage
        .iter()
        .map(|d| DamageReport {
            path: path_str.clone().into_owned(),
            line: d.line,
            error: d.error.clone(),
        })
        .collect();
    Ok(Outcome::Indexed {
        how,
        lines: session.lines,
        bytes: complete - grown.map_or(0, |st| st.indexed_to),
        bytes_parsed: session.bytes_parsed,
        documents: session.documents.len() as u64,
        damage,
        newer: (session.header.version > 3).then_some(session.header.version),
    })
}

/// Run a build: incremental unless `opts.full`, the index is new, or it
/// was built with other kinds or another schema.
pub fn build(
    opts: &BuildOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BuildReport, BuildError> {
    let started = Instant::now();
    let threads = opts.threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("pi-index-parse-{i}"))
        .build()
        .map_err(|source| BuildError::Threads { threads, source })?;

    let store = IndexStore::open_or_create(&opts.index_dir, opts.full)?;
    let kinds_list = opts.kinds.to_list();
    let rebuild = match (&store.fresh, &store.info) {
        (Fresh::New, _) => Some("new index".to_owned()),
        (Fresh::SchemaChanged, _) => {
            Some("the index was written by another version of pi-index".to_owned())
        }
        (Fresh::Recovered, _) => Some("the index could not be read: recreated".to_owned()),
        _ if opts.full => Some("--full".to_owned()),
        (_, None) => Some("the last build did not finish".to_owned()),
        (_, Some(info)) if info.kinds != kinds_list => Some(format!(
            "the included kinds changed from {} to {}",
            info.kinds, kinds_list
        )),
        _ => None,
    };
    let states = if rebuild.is_none() {
        store.file_states()?
    } else {
        HashMap::new()
    };

    let found = discover(&opts.roots);
    for c in &found.files {
        crate::failpoint::disturb("PI_INDEX_TEST_VANISH", &c.path);
    }
    let discovered = Instant::now();
    let mut report = BuildReport {
        files_scanned: found.files.len() as u64,
        kinds: kinds_list.clone(),
        rebuilt: rebuild.clone(),
        ..BuildReport::default()
    };
    for Problem { path, error } in found.problems {
        report.errors.push(Skipped {
            path: path.to_string_lossy().into_owned(),
            reason: error,
        });
    }

    // Files indexed before that no longer exist.
    let seen: std::collections::HashSet<String> = found
        .files
        .iter()
        .map(|c| c.path.to_string_lossy().into_owned())
        .collect();
    let deleted: Vec<&String> = states
        .keys()
        .filter(|p| !seen.contains(*p) && !Path::new(p).exists())
        .collect();
    let unchanged = |c: &Candidate| {
        states
            .get(c.path.to_string_lossy().as_ref())
            .is_some_and(|st| st.unchanged(&c.identity))
    };
    let work_files: Vec<&Candidate> = found.files.iter().filter(|c| !unchanged(c)).collect();
    report.files_unchanged = (found.files.len() - work_files.len()) as u64;
    report.files_deleted = deleted.len() as u64;

    if rebuild.is_none() && work_files.is_empty() && deleted.is_empty() {
        // Nothing changed: no writer, no lock, no commit.
        report.sessions = states.len() as u64;
        finish_report(&mut report, started, discovered, discovered, None);
        return Ok(report);
    }

    crate::failpoint::point("before-writer");
    let searcher = store.pi.searcher()?;
    let pi = store.pi.clone();
    let index = store.writer(threads, opts.memory_budget, rebuild.is_none())?;
    if rebuild.is_some() {
        index.delete_all()?;
    }
    for p in &deleted {
        index.delete_path(p);
    }
    let work = Work {
        kinds: opts.kinds,
        index: &index,
        searcher: &searcher,
        pi: &pi,
        states: &states,
    };
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::with_capacity(work_files.len()));
    let first_error: Mutex<Option<IndexError>> = Mutex::new(None);
    pool.install(|| {
        work_files.par_iter().enumerate().for_each(|(i, c)| {
            // A bug in reading one file must not take the build down: the
            // file's queued documents are withdrawn and it is reported.
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| process(c, &work)))
                    .unwrap_or_else(|_| {
                        work.index.delete_path(&c.path.to_string_lossy());
                        Ok(Outcome::Failed(
                            "internal error while reading this file (please report it): skipped"
                                .into(),
                        ))
                    });
            match outcome {
                Ok(o) => {
                    let mut r = results.lock().expect("results lock");
                    r.push((i, o));
                    if r.len() == 1 {
                        crate::failpoint::point("after-first-file");
                    }
                }
                Err(e) => {
                    first_error.lock().expect("error lock").get_or_insert(e);
                }
            }
            progress(c.len);
        });
    });
    let parsed = Instant::now();
    if let Some(e) = first_error.into_inner().expect("error lock") {
        return Err(e.into());
    }
    let mut results = results.into_inner().expect("results lock");
    results.sort_by_key(|(i, _)| *i);

    let mut damaged = Vec::new();
    for (i, outcome) in results {
        let path = work_files[i].path.to_string_lossy().into_owned();
        match outcome {
            Outcome::Indexed {
                how,
                lines,
                bytes,
                bytes_parsed,
                documents,
                damage,
                newer,
            } => {
                report.files_indexed += 1;
                match how {
                    How::Grown => report.files_grown += 1,
                    How::Replaced => report.files_replaced += 1,
                    How::New => {}
                }
                report.lines_read += lines;
                report.bytes_read += bytes;
                report.bytes_parsed += bytes_parsed;
                report.messages_indexed += documents;
                report.lines_damaged += damage.len() as u64;
                damaged.extend(damage);
                if let Some(v) = newer {
                    report.newer_versions.push(Skipped {
                        path,
                        reason: format!("version {v} is newer than 3: read on a best-effort basis"),
                    });
                }
            }
            Outcome::Rejected(r) => {
                report.files_rejected += 1;
                report.rejected.push(Skipped {
                    path,
                    reason: r.to_string(),
                });
            }
            Outcome::Failed(e) => {
                report.files_failed += 1;
                report.errors.push(Skipped { path, reason: e });
            }
        }
    }
    damaged.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    report.damaged_more = damaged.len().saturating_sub(DAMAGE_LIST_CAP) as u64;
    damaged.truncate(DAMAGE_LIST_CAP);
    report.damaged = damaged;
    report.rejected.sort_by(|a, b| a.path.cmp(&b.path));

    crate::failpoint::point("before-commit");
    let committing = Instant::now();
    let info: BuildInfo = index.commit(&kinds_list, now_ms())?;
    report.sessions = info.sessions;
    finish_report(&mut report, started, discovered, parsed, Some(committing));
    Ok(report)
}

fn finish_report(
    report: &mut BuildReport,
    started: Instant,
    discovered: Instant,
    parsed: Instant,
    committing: Option<Instant>,
) {
    let elapsed = started.elapsed();
    let ms = |d: std::time::Duration| d.as_millis() as u64;
    report.elapsed_ms = ms(elapsed);
    report.mb_per_s = report.bytes_read as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9);
    report.timings = Timings {
        discover_ms: ms(discovered - started),
        parse_ms: ms(parsed - discovered),
        commit_ms: committing.map_or(0, |c| ms(c.elapsed())),
    };
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
