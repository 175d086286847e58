//! The build pipeline, end to end: discover → fingerprint → map and split
//! → parse in parallel → extract → index.
//!
//! Files run in parallel on a rayon pool, largest first; a file larger than
//! [`CHUNK_BYTES`](crate::source::CHUNK_BYTES) is itself split into
//! newline-aligned chunks parsed in parallel, so one huge session still uses
//! every core. Each worker thread keeps one [`ChunkParser`] (simd-json
//! buffers and a tape) for its whole life. Documents are queued to
//! tantivy's own indexing threads as soon as a file is done, so parsing and
//! indexing overlap, and the build commits once at the end.

use std::cell::RefCell;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;
use serde::Serialize;

use crate::discover::{discover, Candidate, Problem};
use crate::index::writer::{Fresh, IndexBuilder, SessionMeta};
use crate::index::{BuildInfo, IndexError};
use crate::pi::fingerprint::{fingerprint, read_first_line, FirstLine, Header, Rejection};
use crate::pi::{ChunkParser, Kinds, ParsedChunk, Session};
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
    /// Files left as they were (incremental builds; always 0 for a full build).
    pub files_unchanged: u64,
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
    /// Why the index started empty, if it did (`new`, `schema changed`).
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

thread_local! {
    static PARSER: RefCell<ChunkParser> = RefCell::new(ChunkParser::new());
}

/// Parse one accepted session file into a [`Session`]. Public so that
/// benchmarks and tests can run the read-and-extract stages without an
/// index.
pub fn read_session(
    path: &Path,
    kinds: Kinds,
) -> std::io::Result<Result<(Session, u64), Rejection>> {
    let mut file = File::open(path)?;
    let first = match read_first_line(&mut file)? {
        Ok(first) => first,
        Err(r) => return Ok(Err(r)),
    };
    let header = match fingerprint(&first.bytes) {
        Ok(h) => h,
        Err(r) => return Ok(Err(r)),
    };
    let map = MappedFile::from_file(&file)?;
    Ok(Ok(parse_mapped(&map, header, &first, kinds)))
}

/// Parse the entries of a mapped session whose header was already read.
/// Returns the session and the number of bytes of complete lines.
fn parse_mapped(
    map: &MappedFile,
    header: Header,
    first: &FirstLine,
    kinds: Kinds,
) -> (Session, u64) {
    let bytes = map.bytes();
    let complete = complete_len(bytes);
    let start = (first.end as usize).min(complete);
    let body = &bytes[start..complete];
    let pieces = chunks(body, CHUNK_BYTES);
    let version = header.version;
    // Files of several chunks are where memory and page faults add up:
    // map each chunk's pages in one go before reading it, and drop them
    // from our resident set after, so peak memory is a few chunks, not the
    // file. A one-chunk file is unmapped as soon as it is done anyway.
    let manage_pages = pieces.len() > 1;
    let parse = |c: &crate::source::Chunk| -> ParsedChunk {
        if manage_pages {
            map.prefault(start + c.start, start + c.end);
        }
        let parsed = PARSER.with(|p| {
            p.borrow_mut().parse_chunk(
                &body[c.start..c.end],
                (start + c.start) as u64,
                version,
                kinds,
            )
        });
        if manage_pages {
            map.release(start + c.start, start + c.end);
        }
        parsed
    };
    let parsed: Vec<ParsedChunk> = if pieces.len() == 1 {
        vec![parse(&pieces[0])]
    } else {
        pieces.par_iter().map(parse).collect()
    };
    let session = Session::finish(header, parsed, first.number + 1);
    (session, complete as u64)
}

fn process(c: &Candidate, kinds: Kinds, index: &IndexBuilder) -> Result<Outcome, IndexError> {
    let path_str = c.path.to_string_lossy();
    let (session, bytes) = match read_session(&c.path, kinds) {
        Ok(Ok(s)) => s,
        Ok(Err(r)) => return Ok(Outcome::Rejected(r)),
        Err(e) => return Ok(Outcome::Failed(e.to_string())),
    };
    let meta = SessionMeta {
        id: &session.header.id,
        path: &path_str,
        cwd: session.header.cwd.as_deref(),
        name: session.name.as_deref(),
        started_ms: session.header.started_ms,
    };
    index.add_session(&meta, &session.documents)?;
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
        lines: session.lines,
        bytes,
        bytes_parsed: session.bytes_parsed,
        documents: session.documents.len() as u64,
        damage,
        newer: (session.header.version > 3).then_some(session.header.version),
    })
}

/// Run a full build.
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

    let found = discover(&opts.roots);
    let discovered = Instant::now();
    let index = IndexBuilder::create(&opts.index_dir, threads, opts.memory_budget)?;
    let mut report = BuildReport {
        files_scanned: found.files.len() as u64,
        kinds: opts.kinds.to_list(),
        rebuilt: match index.fresh {
            Fresh::New => Some("new index".into()),
            Fresh::SchemaChanged => {
                Some("the index was written by another version of pi-index".into())
            }
            Fresh::Rebuild => None,
        },
        ..BuildReport::default()
    };
    for Problem { path, error } in found.problems {
        report.errors.push(Skipped {
            path: path.to_string_lossy().into_owned(),
            reason: error,
        });
    }

    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::with_capacity(found.files.len()));
    let kinds = opts.kinds;
    let first_error: Mutex<Option<IndexError>> = Mutex::new(None);
    pool.install(|| {
        found.files.par_iter().enumerate().for_each(|(i, c)| {
            match process(c, kinds, &index) {
                Ok(o) => results.lock().expect("results lock").push((i, o)),
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
        let path = found.files[i].path.to_string_lossy().into_owned();
        match outcome {
            Outcome::Indexed {
                lines,
                bytes,
                bytes_parsed,
                documents,
                damage,
                newer,
            } => {
                report.files_indexed += 1;
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

    let committing = Instant::now();
    let info: BuildInfo = index.commit(&opts.kinds.to_list(), now_ms())?;
    report.sessions = info.sessions;
    let elapsed = started.elapsed();
    let ms = |d: std::time::Duration| d.as_millis() as u64;
    report.timings = Timings {
        discover_ms: ms(discovered - started),
        parse_ms: ms(parsed - discovered),
        commit_ms: ms(committing.elapsed()),
    };
    report.elapsed_ms = elapsed.as_millis() as u64;
    report.mb_per_s = report.bytes_read as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9);
    Ok(report)
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
