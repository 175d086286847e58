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
//! - [`state`]: what the index records of each file, to tell the next
//!   build what changed.
//!
//! This module knows nothing of files or the Pi format beyond the
//! [`Document`](crate::pi::Document) it stores.

pub mod document;
pub mod schema;
pub mod state;
pub mod tokenizer;
pub mod writer;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tantivy::Index;

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
}

/// Errors opening an index, each saying what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// No index at that location yet.
    #[error("no index at {0}: run `pi-index build` first")]
    Missing(PathBuf),
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
    /// tantivy failed (the message includes tantivy's, so it is not also
    /// chained as a source).
    #[error("index at {path}: {error}; `pi-index build --full` rebuilds it from scratch")]
    Tantivy {
        /// The index directory.
        path: PathBuf,
        /// What tantivy said.
        error: tantivy::TantivyError,
    },
    /// The file system failed.
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
        K::StorageFull => ": free some space on that disk, or choose another with --index",
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
}

impl PiIndex {
    /// Open an existing index for reading.
    pub fn open(dir: &Path) -> Result<PiIndex, IndexError> {
        if !dir.join("meta.json").exists() {
            if dir.is_dir() && has_entries(dir)? {
                return Err(IndexError::Foreign(dir.to_owned()));
            }
            return Err(IndexError::Missing(dir.to_owned()));
        }
        let index = Index::open_in_dir(dir).map_err(|e| tantivy_err(dir, e))?;
        let info: Option<BuildInfo> = index
            .load_metas()
            .map_err(|e| tantivy_err(dir, e))?
            .payload
            .and_then(|p| serde_json::from_str(&p).ok());
        let ours = info.as_ref().is_some_and(|i| i.tool == TOOL);
        let fields = Fields::of(&index.schema());
        let fields = match (ours, fields, info) {
            (true, Some(fields), Some(info)) if info.schema_version == SCHEMA_VERSION => fields,
            (true, _, _) => return Err(IndexError::OldSchema(dir.to_owned())),
            _ => return Err(IndexError::ForeignIndex(dir.to_owned())),
        };
        let pi = PiIndex {
            index,
            fields,
            dir: dir.to_owned(),
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

/// `query`, but never a session's summary document.
pub(crate) fn messages_only(
    fields: &Fields,
    query: Box<dyn tantivy::query::Query>,
) -> tantivy::query::BooleanQuery {
    tantivy::query::BooleanQuery::new(vec![
        (tantivy::query::Occur::Must, query),
        (
            tantivy::query::Occur::MustNot,
            term_query(fields.kind, schema::SESSION_KIND),
        ),
    ])
}

pub(crate) fn tantivy_err(dir: &Path, e: tantivy::TantivyError) -> IndexError {
    if let tantivy::TantivyError::LockFailure(..) = e {
        return IndexError::Busy(dir.to_owned());
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
