//! The index: a tantivy index in one directory, plus what pi-index records
//! about how it was built (in tantivy's commit payload, so the record and
//! the documents are committed together and can never disagree).
//!
//! This is the write side and what both sides share: the read side
//! (queries, hits, listings) lives in [`crate::search`].
//!
//! - [`schema`]: the fields.
//! - [`tokenizer`]: the text tokenizer, for prose and code alike.
//! - [`writer`]: documents in, one commit per build.
//! - [`document`]: the documents as tantivy sees them, borrowed.
//! - [`lineage`]: the copy keys and heads that tell forks from parents.
//! - [`family`]: which session was forked from which, resolved from
//!   what each session's record holds.
//! - [`stored`]: a session's record and its messages, read back.
//! - [`state`]: what the index records of each file, to tell the next
//!   build what changed.
//! - [`saved`]: files saved beside the index for one state of it: the
//!   same states, for a build with nothing to do, and the copy groups a
//!   search merges forks' copies by.
//! - `directory`: tantivy's directory on disk, with `meta.json` and
//!   `.managed.json` as readable as the segment files beside them.
//!
//! This module knows nothing of files or the Pi format beyond the
//! [`Document`](crate::pi::Document) it stores.

mod directory;
pub mod document;
pub mod family;
pub mod lineage;
pub mod saved;
pub mod schema;
pub mod spent;
pub mod state;
pub mod stored;
pub mod tokenizer;
pub mod writer;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tantivy::Index;

pub(crate) use directory::{file_backed, Mapped};
pub use schema::{Fields, SCHEMA_VERSION};

/// The name written in every payload, to tell our index from others.
pub const TOOL: &str = "pi-index";

/// What a build records with its commit.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BuildInfo {
    /// Always [`TOOL`].
    pub tool: String,
    /// The [`SCHEMA_VERSION`] the index was written with.
    pub schema_version: u32,
    /// The opt-in kinds included (`Kinds::to_list`).
    pub kinds: String,
    /// When the build committed, epoch milliseconds.
    pub built_at_ms: i64,
    /// Sessions in the index.
    pub sessions: u64,
    /// Documents in the index.
    pub documents: u64,
    /// Where the last build that committed read sessions from, and why.
    #[serde(default)]
    pub roots: Vec<crate::discover::Location>,
}

/// Errors opening an index, each saying what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// No index at that location yet.
    #[error("no index at {0}: run `pi-index build` first")]
    Missing(PathBuf),
    /// The directory holds index files but no `meta.json`.
    #[error("the index at {0} has no meta.json (a build died creating it, or it was removed): run `pi-index build --full` to recreate it")]
    Incomplete(PathBuf),
    /// The index location is a file.
    #[error("{0} is a file, not a directory: choose another --index directory (or PI_INDEX_DIR)")]
    NotADirectory(PathBuf),
    /// The directory holds something that is not a pi-index index.
    #[error("{0} is not a pi-index index (it holds other files): choose another --index directory, or empty it")]
    Foreign(PathBuf),
    /// The directory holds a tantivy index written by something else.
    #[error("{0} holds an index that pi-index did not write: choose another --index directory, or run `pi-index build --full` to replace it")]
    ForeignIndex(PathBuf),
    /// The index was written by another version of pi-index.
    #[error("the index at {0} was written by another version of pi-index: run `pi-index build` to rebuild it")]
    OldSchema(PathBuf),
    /// Another build holds the index's write lock.
    #[error("another `pi-index build` is writing the index at {0}: wait for it to finish")]
    Busy(PathBuf),
    /// A build is creating the index and has committed nothing yet.
    #[error("a `pi-index build` is writing the index at {0}, its first: wait for it to finish (nothing is searchable before it commits)")]
    FirstBuild(PathBuf),
    /// The index directory was removed while it was written or read.
    #[error("the index directory {0} was removed while pi-index used it: run `pi-index build` to create it again")]
    Vanished(PathBuf),
    /// A segment writer of a build panicked: the build was given up.
    #[error("a segment writer of this build failed (an internal error): nothing was committed, the index at {0} is as it was; run the build again, and please report it")]
    WriterFailed(PathBuf),
    /// A build created the index and stopped before its first commit.
    #[error("the index at {0} was never committed (the build that created it stopped): run `pi-index build`")]
    NeverCommitted(PathBuf),
    /// tantivy failed on the index itself: damaged or missing files, which
    /// `build --full` replaces (the message includes tantivy's, so it is
    /// not also chained as a source). A failure of the file system under
    /// tantivy (permissions, a full disk) is [`IndexError::Io`] instead,
    /// which a rebuild would not cure.
    #[error("index at {path}: {error}; `pi-index build --full` rebuilds it from scratch")]
    Tantivy {
        /// The index directory.
        path: PathBuf,
        /// What tantivy said.
        error: tantivy::TantivyError,
    },
    /// The file system failed (also under tantivy).
    #[error("index at {path}: {error}{}", io_advice(error))]
    Io {
        /// The index directory.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
}

/// What to do about an I/O error on the index directory, as the end of
/// its message.
pub fn io_advice(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::PermissionDenied => {
            ": check the directory's permissions, or choose another with --index or PI_INDEX_DIR"
        }
        K::StorageFull | K::QuotaExceeded | K::FileTooLarge => {
            ": free some space on that disk, or choose another with --index (the index as it was is kept)"
        }
        K::ReadOnlyFilesystem => ": the disk is read-only: choose another with --index",
        K::NotADirectory | K::AlreadyExists => {
            ": a file is in the way: choose another --index directory"
        }
        _ => "",
    }
}

/// An opened index with its field handles.
#[derive(Clone)]
pub struct PiIndex {
    /// The tantivy index.
    pub index: Index,
    /// The schema's fields.
    pub fields: Fields,
    /// Where it lives.
    pub dir: PathBuf,
    /// The register of its mapped files, when opened with one
    /// ([`PiIndex::open_released`]).
    mapped: Option<std::sync::Arc<Mapped>>,
}

impl PiIndex {
    /// Open an existing index for reading.
    pub fn open(dir: &Path) -> Result<PiIndex, IndexError> {
        PiIndex::open_mapped(dir, None)
    }

    /// Open an existing index for reading by a command that reads much of
    /// it once (`push`): the pages of its files that were read can be
    /// dropped from the process's memory as it goes
    /// ([`PiIndex::release_mapped`]), so that its memory does not grow
    /// with the index (they stay in the page cache).
    pub fn open_released(dir: &Path) -> Result<PiIndex, IndexError> {
        PiIndex::open_mapped(dir, Some(std::sync::Arc::new(Mapped::default())))
    }

    /// Drop the pages of the index's files read so far from the process's
    /// memory, for an index opened by [`PiIndex::open_released`] (else
    /// nothing).
    pub fn release_mapped(&self) {
        if let Some(m) = &self.mapped {
            m.release();
        }
    }

    /// Open an existing index for reading, its files mapped into
    /// `mapped` when given (a long-running reader that drops the pages it
    /// read from its memory now and then, see [`Mapped`]).
    pub(crate) fn open_mapped(
        dir: &Path,
        mapped: Option<std::sync::Arc<Mapped>>,
    ) -> Result<PiIndex, IndexError> {
        if !dir.join("meta.json").exists() {
            if dir.is_file() {
                return Err(IndexError::NotADirectory(dir.to_owned()));
            }
            if dir.is_dir() && has_entries(dir)? {
                let ours = directory::only_index_files(dir).map_err(|error| IndexError::Io {
                    path: dir.to_owned(),
                    error,
                })?;
                return Err(if ours {
                    IndexError::Incomplete(dir.to_owned())
                } else {
                    IndexError::Foreign(dir.to_owned())
                });
            }
            return Err(IndexError::Missing(dir.to_owned()));
        }
        let index = open_index_mapped(dir, mapped.clone())?;
        let info = committed_build_info(dir)?;
        let ours = info.as_ref().is_some_and(|i| i.tool == TOOL);
        let fields = Fields::of(&index.schema());
        let fields = match (ours, fields, info) {
            (true, Some(fields), Some(info)) if info.schema_version == SCHEMA_VERSION => fields,
            (true, _, _) => return Err(IndexError::OldSchema(dir.to_owned())),
            // Our schema and no commit yet: a first build creates it (or
            // stopped before it committed), not another program.
            (false, Some(_), None) if index.schema() == Fields::build().0 => {
                return Err(if directory::writer_lock_held(dir) {
                    IndexError::FirstBuild(dir.to_owned())
                } else {
                    IndexError::NeverCommitted(dir.to_owned())
                })
            }
            _ => return Err(IndexError::ForeignIndex(dir.to_owned())),
        };
        let pi = PiIndex {
            index,
            fields,
            dir: dir.to_owned(),
            mapped,
        };
        schema::register_tokenizers(&pi.index);
        Ok(pi)
    }

    /// What the last build recorded, if the index has been committed by
    /// pi-index at least once.
    pub fn build_info(&self) -> Result<Option<BuildInfo>, IndexError> {
        let metas = self
            .index
            .load_metas()
            .map_err(|e| tantivy_err(&self.dir, e))?;
        Ok(metas
            .payload
            .as_deref()
            .and_then(|p| serde_json::from_str(p).ok()))
    }
}

/// What the last commit in `dir` recorded (its `meta.json` payload), read
/// without parsing the rest: `Index::open` has just parsed the schema and
/// segments, and a second full parse was a measurable share of a fresh
/// search ([docs/performance.md](../../docs/performance.md#local-search)).
fn committed_build_info(dir: &Path) -> Result<Option<BuildInfo>, IndexError> {
    #[derive(Deserialize)]
    struct Meta {
        payload: Option<String>,
    }
    let path = dir.join("meta.json");
    let bytes = std::fs::read(&path).map_err(|error| IndexError::Io { path, error })?;
    Ok(serde_json::from_slice::<Meta>(&bytes)
        .ok()
        .and_then(|m| m.payload)
        .and_then(|p| serde_json::from_str(&p).ok()))
}

fn has_entries(dir: &Path) -> Result<bool, IndexError> {
    let mut it = std::fs::read_dir(dir).map_err(|error| IndexError::Io {
        path: dir.to_owned(),
        error,
    })?;
    Ok(it.next().is_some())
}

/// A query for one exact term of a raw (untokenized) field.
pub(crate) fn term_query(
    field: tantivy::schema::Field,
    value: &str,
) -> Box<dyn tantivy::query::Query> {
    Box::new(tantivy::query::TermQuery::new(
        tantivy::Term::from_field_text(field, value),
        tantivy::schema::IndexRecordOption::Basic,
    ))
}

/// Documents with all of these exact terms.
pub(crate) fn all_terms(terms: &[(tantivy::schema::Field, &str)]) -> tantivy::query::BooleanQuery {
    tantivy::query::BooleanQuery::new(
        terms
            .iter()
            .map(|&(f, v)| (tantivy::query::Occur::Must, term_query(f, v)))
            .collect(),
    )
}

/// Every document whose u64 fast column `field` holds `value` (tantivy
/// runs a range on a column that is not indexed as a scan of the column).
pub(crate) fn u64_is(field: tantivy::schema::Field, value: u64) -> tantivy::query::RangeQuery {
    let at = || std::ops::Bound::Included(tantivy::Term::from_field_u64(field, value));
    tantivy::query::RangeQuery::new(at(), at())
}

/// Every document of the session with key `sess`: its record and its
/// messages.
pub(crate) fn sess_query(fields: &Fields, sess: u64) -> tantivy::query::RangeQuery {
    u64_is(fields.sess, sess)
}

/// The message documents of the entry on the line at byte `offset` of the
/// session file with key `sess` (an entry may have several: text and
/// thinking).
pub(crate) fn entry_query(fields: &Fields, sess: u64, offset: u64) -> tantivy::query::BooleanQuery {
    tantivy::query::BooleanQuery::new(vec![
        (
            tantivy::query::Occur::Must,
            Box::new(sess_query(fields, sess)) as Box<dyn tantivy::query::Query>,
        ),
        (
            tantivy::query::Occur::Must,
            Box::new(u64_is(fields.offset, offset)),
        ),
    ])
}

/// A query matching every message document (what the write side counts
/// after a commit, and the read side's "everything").
pub fn all_messages(f: &Fields) -> Box<dyn tantivy::query::Query> {
    Box::new(messages_only(f, Box::new(tantivy::query::AllQuery)))
}

/// `query`, but never a session's summary document.
pub(crate) fn messages_only(
    fields: &Fields,
    query: Box<dyn tantivy::query::Query>,
) -> tantivy::query::BooleanQuery {
    tantivy::query::BooleanQuery::new(vec![
        (tantivy::query::Occur::Must, query),
        (
            tantivy::query::Occur::MustNot,
            term_query(fields.doc_type, schema::SESSION_DOC),
        ),
    ])
}

/// Open the tantivy index in `dir` through our [`directory::IndexDir`],
/// its files mapped into `mapped` when given (see [`directory::Mapped`]).
pub(crate) fn open_index_mapped(
    dir: &Path,
    mapped: Option<std::sync::Arc<directory::Mapped>>,
) -> Result<Index, IndexError> {
    let directory = directory::IndexDir::open(dir, mapped)
        .map_err(|e| tantivy_err(dir, tantivy::TantivyError::OpenDirectoryError(e)))?;
    Index::open(directory).map_err(|e| tantivy_err(dir, e))
}

/// Create a tantivy index in `dir` (which exists) through our
/// [`directory::IndexDir`].
pub(crate) fn create_index(
    dir: &Path,
    schema: tantivy::schema::Schema,
    settings: tantivy::IndexSettings,
    mapped: Option<std::sync::Arc<directory::Mapped>>,
) -> Result<Index, IndexError> {
    let directory = directory::IndexDir::open(dir, mapped)
        .map_err(|e| tantivy_err(dir, tantivy::TantivyError::OpenDirectoryError(e)))?;
    Index::create(directory, schema, settings).map_err(|e| tantivy_err(dir, e))
}

/// The I/O error under a tantivy error, if the file system failed.
fn io_cause(e: &tantivy::TantivyError) -> Option<&std::io::Error> {
    use tantivy::directory::error::{LockError, OpenDirectoryError, OpenReadError, OpenWriteError};
    use tantivy::TantivyError as T;
    match e {
        T::IoError(io)
        | T::OpenReadError(OpenReadError::IoError { io_error: io, .. })
        | T::OpenWriteError(OpenWriteError::IoError { io_error: io, .. })
        | T::OpenDirectoryError(OpenDirectoryError::IoError { io_error: io, .. })
        | T::LockFailure(LockError::IoError(io), _) => Some(io),
        _ => None,
    }
}

/// The error number of the first `(os error N)` in `text`: how Rust
/// prints an operating system's error.
fn os_error_in(text: &str) -> Option<i32> {
    let at = text.find("(os error ")? + "(os error ".len();
    let digits = &text[at..];
    let end = digits.find(')')?;
    digits[..end].parse().ok()
}

/// Whether an I/O error is the file system's state (permissions, space,
/// a read-only disk), which rebuilding the index would not cure.
fn is_environment(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(
        e.kind(),
        K::PermissionDenied
            | K::StorageFull
            | K::QuotaExceeded
            | K::FileTooLarge
            | K::ReadOnlyFilesystem
            | K::NotADirectory
            | K::ResourceBusy
            | K::OutOfMemory
    )
}

/// The error to report for what tantivy said about the index at `dir`:
/// another build's lock, the file system's failure (said plainly, with
/// what to do about it), or damage that `build --full` repairs.
pub(crate) fn tantivy_err(dir: &Path, e: tantivy::TantivyError) -> IndexError {
    use tantivy::directory::error::{LockError, OpenDirectoryError};
    match &e {
        tantivy::TantivyError::LockFailure(LockError::LockBusy, _) => {
            return IndexError::Busy(dir.to_owned())
        }
        tantivy::TantivyError::OpenDirectoryError(OpenDirectoryError::NotADirectory(_)) => {
            return IndexError::NotADirectory(dir.to_owned())
        }
        _ => {}
    }
    // The system's own words ("No space left on device (os error 28)"),
    // not tantivy's wrapping of them. Some of tantivy's paths keep only
    // the text of an I/O error (`Internal error: 'No space left on device
    // (os error 28)'`): its error number is read back from that.
    let error = match io_cause(&e) {
        Some(io) => match io.raw_os_error().or_else(|| os_error_in(&io.to_string())) {
            Some(code) => Some(std::io::Error::from_raw_os_error(code)),
            None => Some(std::io::Error::new(io.kind(), io.kind().to_string())),
        },
        None => os_error_in(&e.to_string()).map(std::io::Error::from_raw_os_error),
    };
    if let Some(error) = error.filter(is_environment) {
        return IndexError::Io {
            path: dir.to_owned(),
            error,
        };
    }
    // Whatever failed, the directory went (removed under the build): not
    // damage, and nothing of it is left to rebuild.
    if !dir.exists() {
        return IndexError::Vanished(dir.to_owned());
    }
    IndexError::Tantivy {
        path: dir.to_owned(),
        error: e,
    }
}

/// A delete that may only reach the segments of the last commit: `inner`
/// restricted to `segments`.
///
/// tantivy applies a delete to every segment added to the writer after the
/// delete was *flushed* into its queue, which happens lazily; the segments
/// a build writes itself are added at its end, so a delete queued while
/// the build parses would otherwise also reach them. What a build deletes
/// while it parses is always a document of the last commit (a rewritten
/// file's old messages, an entry whose branch moved, an old session
/// record), so each such delete names those segments.
#[derive(Clone)]
pub(crate) struct CommittedOnly {
    pub(crate) inner: std::sync::Arc<dyn tantivy::query::Query>,
    pub(crate) segments: std::sync::Arc<std::collections::HashSet<tantivy::index::SegmentId>>,
}

impl std::fmt::Debug for CommittedOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CommittedOnly({:?})", self.inner)
    }
}

impl tantivy::query::Query for CommittedOnly {
    fn weight(
        &self,
        scoring: tantivy::query::EnableScoring<'_>,
    ) -> tantivy::Result<Box<dyn tantivy::query::Weight>> {
        Ok(Box::new(CommittedOnlyWeight {
            inner: self.inner.weight(scoring)?,
            segments: self.segments.clone(),
        }))
    }
}

struct CommittedOnlyWeight {
    inner: Box<dyn tantivy::query::Weight>,
    segments: std::sync::Arc<std::collections::HashSet<tantivy::index::SegmentId>>,
}

impl tantivy::query::Weight for CommittedOnlyWeight {
    fn scorer(
        &self,
        reader: &tantivy::SegmentReader,
        boost: tantivy::Score,
    ) -> tantivy::Result<Box<dyn tantivy::query::Scorer>> {
        if self.segments.contains(&reader.segment_id()) {
            self.inner.scorer(reader, boost)
        } else {
            Ok(Box::new(tantivy::query::EmptyScorer))
        }
    }

    fn explain(
        &self,
        reader: &tantivy::SegmentReader,
        doc: tantivy::DocId,
    ) -> tantivy::Result<tantivy::query::Explanation> {
        self.inner.explain(reader, doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_system_s_failures_are_told_apart_from_damage() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        let enospc = || std::io::Error::from_raw_os_error(libc::ENOSPC);
        let says = |e: tantivy::TantivyError| tantivy_err(dir, e).to_string();
        for e in [
            tantivy::TantivyError::IoError(std::sync::Arc::new(enospc())),
            tantivy::TantivyError::InternalError(format!("'{}'", enospc())),
            tantivy::TantivyError::IoError(std::sync::Arc::new(std::io::Error::other(
                enospc().to_string(),
            ))),
        ] {
            let text = says(e);
            assert!(text.contains("No space left on device"), "{text}");
            assert!(
                text.contains("free some space") && !text.contains("--full"),
                "{text}"
            );
        }
        let damaged = says(tantivy::TantivyError::InternalError("Footer magic".into()));
        assert!(damaged.contains("--full"), "{damaged}");
        // Whatever failed, a directory that is gone is said as such.
        let gone = tantivy_err(
            &dir.join("gone"),
            tantivy::TantivyError::InternalError("Footer magic".into()),
        )
        .to_string();
        assert!(
            gone.ends_with(
                "gone was removed while pi-index used it: run `pi-index build` to create it again"
            ),
            "{gone}"
        );
        let busy = tantivy::TantivyError::LockFailure(
            tantivy::directory::error::LockError::LockBusy,
            None,
        );
        assert!(says(busy).contains("another `pi-index build`"));
        let denied = tantivy::TantivyError::LockFailure(
            tantivy::directory::error::LockError::IoError(std::sync::Arc::new(
                std::io::ErrorKind::PermissionDenied.into(),
            )),
            None,
        );
        let denied = says(denied);
        assert!(
            denied.contains("permissions") && !denied.contains("another `pi-index build`"),
            "{denied}"
        );
    }
}
