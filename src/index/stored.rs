//! What a build stored, read back: a session file's record and the
//! documents of its messages.
//!
//! A message document holds its own text, line and entry id (stored) and
//! its role, time, branch, offset and model hash (fast columns); the
//! session's facts (id, file, directory, name, model names) are read once
//! per session from its session document, found by the key every message
//! carries (see [`super::schema`]). The build reads here what it indexed
//! before (a grown file's record, the documents of entries whose branch
//! moved, what `check` compares); the read side
//! ([`crate::search`]) prints the same, with what it keeps between
//! searches.

use tantivy::collector::DocSetCollector;
use tantivy::columnar::Column;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, DocId, DocSet, Searcher, SegmentReader, TantivyDocument, Term};

use super::schema::{model_hash, session_key, Fields, SESSION_DOC};
use super::{all_terms, entry_query, messages_only, sess_query, tantivy_err, IndexError, PiIndex};
use crate::pi::{Agent, Document, Edited, Role};

/// Blocks of each segment's document store a [`PiIndex::searcher`] keeps
/// once read (tantivy keeps 100).
///
/// The index stores documents uncompressed, so reading a block is a copy
/// of the block out of the mapped file into a new buffer. A cache that
/// keeps every block read keeps every such buffer: a fresh-process search
/// touches new heap pages for each
/// ([docs/performance.md](../../docs/performance.md#local-search)), where one
/// kept block lets the next reuse the memory of the one it evicts. One, not
/// none: `show` reads a session's messages in order, several from each block.
const DOC_STORE_BLOCKS: usize = 1;

/// A session's record as the build stored it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredSession {
    /// Session id.
    pub session_id: String,
    /// Session file.
    pub path: String,
    /// Working directory.
    pub cwd: Option<String>,
    /// Display name.
    pub session_name: Option<String>,
    /// The agent that wrote it.
    pub agent: Agent,
    /// The first user message's first line.
    pub title: Option<String>,
    /// Session start, epoch ms.
    pub started_ms: Option<i64>,
    /// Time of the last indexed document, epoch ms.
    pub last_ms: Option<i64>,
    /// Indexed documents.
    pub messages: u64,
    /// Every model the session's documents name.
    pub models: Vec<String>,
    /// The key that joins the session's messages to it.
    pub key: u64,
    /// The parent session file its header names (`parentSession`).
    pub parent_path: Option<String>,
    /// The copy key of its first message ([`super::lineage`]).
    pub head: u64,
}

impl StoredSession {
    /// The record stored as the session document `d`.
    pub fn of(fields: &Fields, d: &TantivyDocument) -> StoredSession {
        let f = fields;
        let s = |field| {
            d.get_first(field)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        let t = |field| {
            d.get_first(field)
                .and_then(|v| v.as_datetime())
                .map(|t| t.into_timestamp_millis())
        };
        let path = s(f.path).unwrap_or_default();
        StoredSession {
            session_id: s(f.session_id).unwrap_or_default(),
            key: session_key(&path),
            path,
            cwd: s(f.cwd),
            session_name: s(f.session_name),
            agent: Agent::from_stored(s(f.agent).as_deref()),
            title: s(f.title),
            started_ms: t(f.started),
            last_ms: t(f.last),
            messages: d
                .get_first(f.messages)
                .and_then(|v| v.as_u64())
                .unwrap_or(0),
            models: d
                .get_all(f.models)
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            parent_path: s(f.parent),
            head: d.get_first(f.head).and_then(|v| v.as_u64()).unwrap_or(0),
        }
    }

    /// The model whose name hashes to `hash`.
    pub fn model_named(&self, hash: u64) -> Option<String> {
        model_named(&self.models, hash)
    }
}

/// The model of `models` whose name hashes to `hash`.
pub fn model_named(models: &[String], hash: u64) -> Option<String> {
    models.iter().find(|m| model_hash(Some(m)) == hash).cloned()
}

/// The columns of one segment that a message is read with.
pub struct Columns {
    /// The session key.
    pub sess: Column<u64>,
    /// The role's rank.
    pub role: Column<u64>,
    /// The entry's time.
    pub timestamp: Column<tantivy::DateTime>,
    /// On the active branch (0: no).
    pub active: Column<u64>,
    /// Byte offset of the line.
    pub offset: Column<u64>,
    /// The model's hash (0: none).
    pub model: Column<u64>,
    /// Sparse: a segment with no edited message has no column.
    pub edited: Option<Column<u64>>,
}

impl Columns {
    /// The columns of `segment`.
    pub fn open(segment: &SegmentReader) -> tantivy::Result<Columns> {
        let ff = segment.fast_fields();
        Ok(Columns {
            sess: ff.u64("sess")?,
            role: ff.u64("role")?,
            timestamp: ff.date("timestamp")?,
            active: ff.u64("active")?,
            offset: ff.u64("offset")?,
            model: ff.u64("model")?,
            edited: ff.column_opt("edited")?,
        })
    }

    /// The role of document `doc`.
    pub fn role(&self, doc: DocId) -> Role {
        self.role
            .first(doc)
            .and_then(Role::from_rank)
            .unwrap_or(Role::User)
    }

    /// Message document `doc` of this segment, stored as `d`, its model
    /// named from `models` (its session's).
    pub fn document(
        &self,
        fields: &Fields,
        doc: DocId,
        d: &TantivyDocument,
        models: &[String],
    ) -> Document {
        let s = |field| {
            d.get_first(field)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        let model = self.model.first(doc).unwrap_or(0);
        Document {
            line: d
                .get_first(fields.line)
                .and_then(|v| v.as_u64())
                .unwrap_or(0),
            offset: self.offset.first(doc).unwrap_or(0),
            entry_id: s(fields.entry_id),
            role: self.role(doc),
            timestamp_ms: self.timestamp.first(doc).map(|t| t.into_timestamp_millis()),
            model: (model != 0).then(|| model_named(models, model)).flatten(),
            active: self.active.first(doc).is_none_or(|a| a != 0),
            edited: Edited::from_rank(
                self.edited
                    .as_ref()
                    .and_then(|col| col.first(doc))
                    .unwrap_or(0),
            ),
            replacement: s(fields.replacement),
            text: s(fields.text).unwrap_or_default(),
        }
    }
}

impl PiIndex {
    /// A searcher over the last committed state.
    pub fn searcher(&self) -> Result<Searcher, IndexError> {
        let reader = self
            .index
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
            .doc_store_cache_num_blocks(DOC_STORE_BLOCKS)
            .try_into()
            .map_err(|e| tantivy_err(&self.dir, e))?;
        Ok(reader.searcher())
    }

    /// The record of the session with key `sess`, if the index holds it:
    /// read straight from the key's postings (no scoring; a hit's
    /// session is looked up for every session a search shows).
    pub fn stored_session(
        &self,
        searcher: &Searcher,
        sess: u64,
    ) -> Result<Option<StoredSession>, IndexError> {
        let term = Term::from_field_u64(self.fields.session_key, sess);
        let err = |e| tantivy_err(&self.dir, e);
        for (ord, seg) in searcher.segment_readers().iter().enumerate() {
            let inv = seg.inverted_index(self.fields.session_key).map_err(err)?;
            let Some(mut postings) = inv
                .read_postings(&term, IndexRecordOption::Basic)
                .map_err(|e| err(e.into()))?
            else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != tantivy::TERMINATED {
                if seg.alive_bitset().is_none_or(|a| a.is_alive(doc)) {
                    let d: TantivyDocument = searcher
                        .doc(DocAddress::new(ord as u32, doc))
                        .map_err(err)?;
                    return Ok(Some(StoredSession::of(&self.fields, &d)));
                }
                doc = postings.advance();
            }
        }
        Ok(None)
    }

    /// The record of the session stored at `path`.
    pub fn stored_session_at(
        &self,
        searcher: &Searcher,
        path: &str,
    ) -> Result<Option<StoredSession>, IndexError> {
        let f = &self.fields;
        let query = all_terms(&[(f.doc_type, SESSION_DOC), (f.path, path)]);
        let top = searcher
            .search(
                &query,
                &tantivy::collector::TopDocs::with_limit(1).order_by_score(),
            )
            .map_err(|e| tantivy_err(&self.dir, e))?;
        match top.first() {
            Some((_, a)) => {
                let d: TantivyDocument = searcher.doc(*a).map_err(|e| tantivy_err(&self.dir, e))?;
                Ok(Some(StoredSession::of(&self.fields, &d)))
            }
            None => Ok(None),
        }
    }

    /// The documents matching `query`, in index order, each read with its
    /// segment's columns and `models` (the session's model names).
    fn stored_documents(
        &self,
        searcher: &Searcher,
        query: &dyn tantivy::query::Query,
        models: &[String],
    ) -> Result<Vec<Document>, IndexError> {
        let err = |e| tantivy_err(&self.dir, e);
        let mut addrs: Vec<DocAddress> = searcher
            .search(query, &DocSetCollector)
            .map_err(err)?
            .into_iter()
            .collect();
        addrs.sort_unstable();
        let mut columns: Option<(u32, Columns)> = None;
        let mut out = Vec::with_capacity(addrs.len());
        for a in addrs {
            if columns.as_ref().is_none_or(|c| c.0 != a.segment_ord) {
                let c = Columns::open(searcher.segment_reader(a.segment_ord)).map_err(err)?;
                columns = Some((a.segment_ord, c));
            }
            let (_, c) = columns.as_ref().expect("opened above");
            let d: TantivyDocument = searcher.doc(a).map_err(err)?;
            out.push(c.document(&self.fields, a.doc_id, &d, models));
        }
        Ok(out)
    }

    /// Every message of the session file at `path`, in file order (then
    /// role order within a line).
    pub fn stored_documents_of(
        &self,
        searcher: &Searcher,
        path: &str,
    ) -> Result<Vec<Document>, IndexError> {
        let models = self
            .stored_session_at(searcher, path)?
            .map(|s| s.models)
            .unwrap_or_default();
        let query = messages_only(
            &self.fields,
            Box::new(sess_query(&self.fields, session_key(path))),
        );
        let mut docs = self.stored_documents(searcher, &query, &models)?;
        docs.sort_by_key(|a| (a.line, a.role));
        Ok(docs)
    }

    /// The messages of some entries of the file at `path`, each named by
    /// the byte offset of its line.
    pub fn stored_entries(
        &self,
        searcher: &Searcher,
        path: &str,
        offsets: &[u64],
    ) -> Result<Vec<Document>, IndexError> {
        let models = self
            .stored_session_at(searcher, path)?
            .map(|s| s.models)
            .unwrap_or_default();
        let key = session_key(path);
        let mut out = Vec::new();
        for &offset in offsets {
            let query = entry_query(&self.fields, key, offset);
            out.extend(self.stored_documents(searcher, &query, &models)?);
        }
        Ok(out)
    }
}
