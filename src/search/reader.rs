//! Documents out: finding a session and reading its documents back.
//!
//! A message document holds its own text, line and entry id (stored) and
//! its role, time, branch, offset and model hash (fast columns); the
//! session's facts (id, file, directory, name, model names) are read once
//! per session from its session document, found by the key every message
//! carries (see [`crate::index::schema`]).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use tantivy::collector::DocSetCollector;
use tantivy::columnar::Column;
use tantivy::query::TermQuery;
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::{DocAddress, DocSet, Searcher, TantivyDocument, Term};

use super::query::shown;
use crate::index::schema::{model_hash, SESSION_DOC};
use crate::index::{
    all_terms, entry_query, messages_only, sess_query, tantivy_err, IndexError, PiIndex,
};
use crate::pi::time::format_millis;
use crate::pi::{Agent, Edited, Role};

/// A message as `show --format json` prints it: the stable, documented
/// output contract (one object per line).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StoredDoc {
    /// Session id from the header.
    pub session_id: String,
    /// Absolute path of the session file.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the line.
    pub offset: u64,
    /// Entry id (null for version 1).
    pub entry_id: Option<String>,
    /// Role of the text.
    pub role: Role,
    /// Entry time, RFC 3339 UTC with milliseconds.
    pub timestamp: Option<String>,
    /// The same time, epoch milliseconds.
    #[serde(skip)]
    pub timestamp_ms: Option<i64>,
    /// The session's working directory.
    pub cwd: Option<String>,
    /// The session's display name.
    pub session_name: Option<String>,
    /// The agent that wrote the session: `pi` or `omp` (Oh My Pi).
    pub agent: Agent,
    /// The model.
    pub model: Option<String>,
    /// On the active branch?
    pub active: bool,
    /// What the latest `context_edit` on the active branch did to this
    /// message for the model: `"omitted"`, `"replaced"` or null.
    pub edited: Edited,
    /// The text the model is sent instead, when replaced (null otherwise).
    pub replacement: Option<String>,
    /// The text, as the user saw it.
    pub text: String,
}

impl StoredDoc {
    /// Back to the document it was made from (for re-adding it).
    pub fn into_document(self) -> crate::pi::Document {
        crate::pi::Document {
            line: self.line,
            offset: self.offset,
            entry_id: self.entry_id,
            role: self.role,
            timestamp_ms: self.timestamp_ms,
            model: self.model,
            active: self.active,
            edited: self.edited,
            replacement: self.replacement,
            text: self.text,
        }
    }
}

/// Which session a `show` argument names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionKey {
    /// A session file, by its stored path.
    Path(String),
    /// A session id.
    Id(String),
}

/// Errors finding a session.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// The index failed.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// No session was named (an empty or blank argument).
    #[error("no session given: name one by its id (as search and sessions give it), a unique prefix of the id, or its file's path")]
    Empty,
    /// Nothing matches.
    #[error("no indexed session matches {}: check `pi-index sessions`, or run `pi-index build` if the session is new", shown(.0))]
    NotFound(String),
    /// A prefix matches several sessions.
    #[error("{} matches {count} sessions ({examples}): give more of the id", shown(.prefix))]
    Ambiguous {
        /// What was asked for.
        prefix: String,
        /// How many matched.
        count: usize,
        /// A few of them.
        examples: String,
    },
}

/// Blocks of each segment's document store a [`PiIndex::searcher`] keeps
/// once read (tantivy keeps 100).
///
/// The index stores documents uncompressed, so reading a block is a copy
/// of its 16 KB out of the mapped file into a new buffer. A cache that
/// keeps every block read keeps every such buffer: a fresh-process search
/// touches new heap pages for each (135 of its 495 page faults for
/// `error` on the text-heavy 1 GB index), where one kept block lets the
/// next reuse the memory of the one it evicts. One, not none: `show`
/// reads a session's messages in order, several from each block.
const DOC_STORE_BLOCKS: usize = 1;

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

    /// Resolve a `show` argument: a session file path, a session id, or a
    /// unique prefix of an id.
    pub fn resolve_session(
        &self,
        searcher: &Searcher,
        arg: &str,
    ) -> Result<SessionKey, LookupError> {
        let f = &self.fields;
        if arg.trim().is_empty() {
            // Every id starts with "": never a prefix of them all.
            return Err(LookupError::Empty);
        }
        let as_path = Path::new(arg);
        if as_path.exists() {
            let canon = std::fs::canonicalize(as_path)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| arg.to_owned());
            if self.count_term(searcher, f.path, &canon)? > 0 {
                return Ok(SessionKey::Path(canon));
            }
        }
        if self.count_term(searcher, f.path, arg)? > 0 {
            return Ok(SessionKey::Path(arg.to_owned()));
        }
        if self.count_term(searcher, f.session_id, arg)? > 0 {
            return Ok(SessionKey::Id(arg.to_owned()));
        }
        let ids = self.terms_with_prefix(searcher, f.session_id, arg, 6)?;
        match ids.len() {
            0 => Err(LookupError::NotFound(arg.to_owned())),
            1 => Ok(SessionKey::Id(ids.into_iter().next().unwrap_or_default())),
            n => Err(LookupError::Ambiguous {
                prefix: arg.to_owned(),
                count: n,
                examples: ids.into_iter().take(5).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    fn count_term(
        &self,
        searcher: &Searcher,
        field: Field,
        value: &str,
    ) -> Result<u64, IndexError> {
        let term = Term::from_field_text(field, value);
        let mut n = 0;
        for seg in searcher.segment_readers() {
            let inv = seg
                .inverted_index(field)
                .map_err(|e| tantivy_err(&self.dir, e))?;
            n += u64::from(
                inv.doc_freq(&term)
                    .map_err(|e| tantivy_err(&self.dir, e.into()))?,
            );
        }
        Ok(n)
    }

    /// Distinct terms of a raw field that start with `prefix`, up to `limit`
    /// (plus one, so callers can tell "more").
    pub fn terms_with_prefix(
        &self,
        searcher: &Searcher,
        field: Field,
        prefix: &str,
        limit: usize,
    ) -> Result<BTreeSet<String>, IndexError> {
        let mut out = BTreeSet::new();
        for seg in searcher.segment_readers() {
            let inv = seg
                .inverted_index(field)
                .map_err(|e| tantivy_err(&self.dir, e))?;
            let mut stream = inv
                .terms()
                .range()
                .ge(prefix.as_bytes())
                .into_stream()
                .map_err(|e| tantivy_err(&self.dir, e.into()))?;
            while stream.advance() {
                let key = stream.key();
                if !key.starts_with(prefix.as_bytes()) {
                    break;
                }
                out.insert(String::from_utf8_lossy(key).into_owned());
                if out.len() > limit {
                    return Ok(out);
                }
            }
        }
        Ok(out)
    }

    /// Every document matching `query`, read from the doc store and
    /// turned into `T` by `read`.
    fn matching<T>(
        &self,
        searcher: &Searcher,
        query: &dyn tantivy::query::Query,
        mut read: impl FnMut(DocAddress, &TantivyDocument) -> Result<T, IndexError>,
    ) -> Result<Vec<T>, IndexError> {
        let err = |e| tantivy_err(&self.dir, e);
        let mut addrs: Vec<DocAddress> = searcher
            .search(query, &DocSetCollector)
            .map_err(err)?
            .into_iter()
            .collect();
        addrs.sort_unstable();
        addrs
            .into_iter()
            .map(|a| read(a, &searcher.doc::<TantivyDocument>(a).map_err(err)?))
            .collect()
    }

    /// The messages of some entries of one file, each named by the byte
    /// offset of its line.
    pub fn entry_documents(
        &self,
        searcher: &Searcher,
        path: &str,
        offsets: &[u64],
    ) -> Result<Vec<StoredDoc>, IndexError> {
        let mut reader = MessageReader::new(self, searcher);
        let key = crate::index::schema::session_key(path);
        let mut out = Vec::new();
        for &offset in offsets {
            let query = entry_query(&self.fields, key, offset);
            out.extend(self.matching(searcher, &query, |a, d| reader.read(a, d))?);
        }
        Ok(out)
    }

    /// The session records `key` names (a session id may name several
    /// files: a copy, a fork kept under its id).
    fn sessions_named(
        &self,
        searcher: &Searcher,
        key: &SessionKey,
    ) -> Result<Vec<SessionRow>, IndexError> {
        let f = &self.fields;
        let records = all_terms(&[
            (f.doc_type, SESSION_DOC),
            match key {
                SessionKey::Path(p) => (f.path, p.as_str()),
                SessionKey::Id(id) => (f.session_id, id.as_str()),
            },
        ]);
        self.matching(searcher, &records, |_, d| Ok(self.summary(d)))
    }

    /// Every message of a session, in file order (then role order within
    /// a line). A session id may name several files (a copy, a fork kept
    /// under its id): all of them, by path.
    pub fn session_documents(
        &self,
        searcher: &Searcher,
        key: &SessionKey,
    ) -> Result<Vec<StoredDoc>, IndexError> {
        let sessions = self.sessions_named(searcher, key)?;
        let keys: Vec<u64> = sessions.iter().map(|s| s.key).collect();
        let addrs = self.message_addresses(searcher, &keys)?;
        self.documents_at(searcher, addrs.into_iter().flatten())
    }

    /// The addresses of the messages of each session of `keys` (session
    /// keys), in index order, found in one pass over the sessions' column:
    /// a query for one session's key scans that whole column, so a push of
    /// every session asked it once per session (a tenth of the push's CPU
    /// at 2,118 sessions).
    pub fn message_addresses(
        &self,
        searcher: &Searcher,
        keys: &[u64],
    ) -> Result<Vec<Vec<DocAddress>>, IndexError> {
        let err = |e| tantivy_err(&self.dir, e);
        let at: HashMap<u64, usize> = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        let mut addrs: Vec<Vec<DocAddress>> = vec![Vec::new(); keys.len()];
        let query = messages_only(&self.fields, Box::new(tantivy::query::AllQuery));
        let weight = tantivy::query::Query::weight(
            &query,
            tantivy::query::EnableScoring::disabled_from_searcher(searcher),
        )
        .map_err(err)?;
        for (ord, seg) in searcher.segment_readers().iter().enumerate() {
            let sess = seg.fast_fields().u64("sess").map_err(err)?;
            // A weight's own walk includes deleted documents (a collector
            // leaves them out).
            let alive = seg.alive_bitset();
            weight
                .for_each_no_score(seg, &mut |docs| {
                    for &doc in docs {
                        if alive.is_some_and(|a| !a.is_alive(doc)) {
                            continue;
                        }
                        if let Some(&i) = sess.first(doc).and_then(|k| at.get(&k)) {
                            addrs[i].push(DocAddress::new(ord as u32, doc));
                        }
                    }
                })
                .map_err(err)?;
        }
        Ok(addrs)
    }

    /// The messages at `addrs` (in index order), in file order (then role
    /// order within a line): [`session_documents`](PiIndex::session_documents)'
    /// list of the sessions they belong to.
    pub fn documents_at(
        &self,
        searcher: &Searcher,
        addrs: impl IntoIterator<Item = DocAddress>,
    ) -> Result<Vec<StoredDoc>, IndexError> {
        let err = |e| tantivy_err(&self.dir, e);
        let mut reader = MessageReader::new(self, searcher);
        let mut docs = addrs
            .into_iter()
            .map(|a| reader.read(a, &searcher.doc::<TantivyDocument>(a).map_err(err)?))
            .collect::<Result<Vec<StoredDoc>, IndexError>>()?;
        docs.sort_by(|a, b| (&a.path, a.line, a.role).cmp(&(&b.path, b.line, b.role)));
        Ok(docs)
    }

    /// `limit` messages after `offset` of [`session_documents`]'s list
    /// (only those on the active branch with `active_only`), and how many
    /// the whole list holds. The order is found from the columns (a line's
    /// offset orders it as its number does), and only the page's
    /// documents are read from the store: a session of 50,000 messages
    /// costs its columns and one page, not 50,000 stored texts.
    ///
    /// [`session_documents`]: PiIndex::session_documents
    pub fn session_documents_page(
        &self,
        searcher: &Searcher,
        key: &SessionKey,
        active_only: bool,
        offset: usize,
        limit: usize,
    ) -> Result<(usize, Vec<StoredDoc>), IndexError> {
        let f = &self.fields;
        let sessions = self.sessions_named(searcher, key)?;
        let err = |e| tantivy_err(&self.dir, e);
        let mut reader = MessageReader::new(self, searcher);
        // (the session's path, the line's offset, the role, the address):
        // in address order within a session, so that the stable sort keeps
        // the order `session_documents` gives messages that tie.
        let mut order: Vec<(usize, u64, Role, DocAddress)> = Vec::new();
        for (i, s) in sessions.iter().enumerate() {
            let query = messages_only(f, Box::new(sess_query(f, s.key)));
            let mut addrs: Vec<DocAddress> = searcher
                .search(&query, &DocSetCollector)
                .map_err(err)?
                .into_iter()
                .collect();
            addrs.sort_unstable();
            for a in addrs {
                let c = reader.columns(a.segment_ord)?;
                let doc = a.doc_id;
                if active_only && c.active.first(doc).is_some_and(|x| x == 0) {
                    continue;
                }
                let role = c
                    .role
                    .first(doc)
                    .and_then(Role::from_rank)
                    .unwrap_or(Role::User);
                order.push((i, c.offset.first(doc).unwrap_or(0), role, a));
            }
        }
        order.sort_by(|a, b| (&sessions[a.0].path, a.1, a.2).cmp(&(&sessions[b.0].path, b.1, b.2)));
        let total = order.len();
        let page = order
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|(_, _, _, a)| reader.read(a, &searcher.doc::<TantivyDocument>(a).map_err(err)?))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((total, page))
    }

    /// The session with key `sess`, if the index holds it: read straight
    /// from the key's postings (no scoring; a hit's session is looked up
    /// for every session a search shows).
    pub fn session_by_key(
        &self,
        searcher: &Searcher,
        sess: u64,
    ) -> Result<Option<SessionRow>, IndexError> {
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
                    return Ok(Some(self.summary(&d)));
                }
                doc = postings.advance();
            }
        }
        Ok(None)
    }

    fn first_session(
        &self,
        searcher: &Searcher,
        query: &dyn tantivy::query::Query,
    ) -> Result<Option<SessionRow>, IndexError> {
        let top = searcher
            .search(
                query,
                &tantivy::collector::TopDocs::with_limit(1).order_by_score(),
            )
            .map_err(|e| tantivy_err(&self.dir, e))?;
        match top.first() {
            Some((_, a)) => {
                let d: TantivyDocument = searcher.doc(*a).map_err(|e| tantivy_err(&self.dir, e))?;
                Ok(Some(self.summary(&d)))
            }
            None => Ok(None),
        }
    }
}

/// Reads message documents back whole: their stored fields, their columns
/// (one handle per segment, opened once), and their session's facts (one
/// session document per session, read once).
pub struct MessageReader<'a> {
    pi: &'a PiIndex,
    searcher: &'a Searcher,
    columns: HashMap<u32, Arc<Columns>>,
    sessions: HashMap<u64, Option<Arc<SessionRow>>>,
    /// A long-running front end's cache and the state of the index this
    /// reader reads: columns and sessions are looked up there first, and
    /// kept there for the next search (see [`super::cache`]).
    kept: Option<(&'a super::cache::Cache, u64)>,
}

/// The columns of one segment that a message is printed with.
pub(crate) struct Columns {
    sess: Column<u64>,
    role: Column<u64>,
    timestamp: Column<tantivy::DateTime>,
    active: Column<u64>,
    offset: Column<u64>,
    model: Column<u64>,
    /// Sparse: a segment with no edited message has no column.
    edited: Option<Column<u64>>,
}

impl<'a> MessageReader<'a> {
    /// A reader over `searcher`'s segments.
    pub fn new(pi: &'a PiIndex, searcher: &'a Searcher) -> MessageReader<'a> {
        let cache = super::cache::of(pi);
        MessageReader {
            pi,
            searcher,
            columns: HashMap::new(),
            sessions: HashMap::new(),
            kept: cache
                .long_lived()
                .then(|| (cache, super::cache::stamp(searcher))),
        }
    }

    fn columns(&mut self, segment: u32) -> Result<&Columns, IndexError> {
        if !self.columns.contains_key(&segment) {
            let reader = self.searcher.segment_reader(segment);
            let kept = self.kept.map(|(cache, _)| cache);
            let held = kept.and_then(|k| k.columns::<Columns>(reader.segment_id()));
            let c = match held {
                Some(c) => c,
                None => {
                    let ff = reader.fast_fields();
                    let err = |e| tantivy_err(&self.pi.dir, e);
                    let c = Arc::new(Columns {
                        sess: ff.u64("sess").map_err(err)?,
                        role: ff.u64("role").map_err(err)?,
                        timestamp: ff.date("timestamp").map_err(err)?,
                        active: ff.u64("active").map_err(err)?,
                        offset: ff.u64("offset").map_err(err)?,
                        model: ff.u64("model").map_err(err)?,
                        edited: ff.column_opt("edited").map_err(err)?,
                    });
                    if let Some(k) = kept {
                        k.keep_columns(self.searcher, reader.segment_id(), c.clone());
                    }
                    c
                }
            };
            self.columns.insert(segment, c);
        }
        Ok(&self.columns[&segment])
    }

    /// The session with key `sess`, read once.
    pub fn session(&mut self, sess: u64) -> Result<Option<Arc<SessionRow>>, IndexError> {
        if let Some(s) = self.sessions.get(&sess) {
            return Ok(s.clone());
        }
        let kept = self.kept;
        if let Some(s) = kept.and_then(|(cache, stamp)| cache.session::<SessionRow>(stamp, sess)) {
            self.sessions.insert(sess, s.clone());
            return Ok(s);
        }
        let s = self.pi.session_by_key(self.searcher, sess)?.map(Arc::new);
        if let Some((cache, stamp)) = kept {
            let row = s.clone().map(|r| r as super::cache::Shared);
            cache.keep_session(stamp, sess, row);
        }
        self.sessions.insert(sess, s.clone());
        Ok(s)
    }

    /// The session of the message at `addr`.
    pub fn session_of(&mut self, addr: DocAddress) -> Result<Option<Arc<SessionRow>>, IndexError> {
        let sess = self.columns(addr.segment_ord)?.sess.first(addr.doc_id);
        match sess {
            Some(k) => self.session(k),
            None => Ok(None),
        }
    }

    /// Read the message at `addr` (whose stored document is `d`).
    pub fn read(&mut self, addr: DocAddress, d: &TantivyDocument) -> Result<StoredDoc, IndexError> {
        let f = self.pi.fields;
        let doc = addr.doc_id;
        let c = self.columns(addr.segment_ord)?;
        let sess = c.sess.first(doc).unwrap_or(0);
        let role = c
            .role
            .first(doc)
            .and_then(Role::from_rank)
            .unwrap_or(Role::User);
        let timestamp_ms = c.timestamp.first(doc).map(|t| t.into_timestamp_millis());
        let active = c.active.first(doc).is_none_or(|a| a != 0);
        let offset = c.offset.first(doc).unwrap_or(0);
        let model = c.model.first(doc).unwrap_or(0);
        let edited = Edited::from_rank(
            c.edited
                .as_ref()
                .and_then(|col| col.first(doc))
                .unwrap_or(0),
        );
        let session = self.session(sess)?;
        let s = |field| {
            d.get_first(field)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        Ok(StoredDoc {
            session_id: session
                .as_ref()
                .map(|s| s.session_id.clone())
                .unwrap_or_default(),
            path: session.as_ref().map(|s| s.path.clone()).unwrap_or_default(),
            line: d.get_first(f.line).and_then(|v| v.as_u64()).unwrap_or(0),
            offset,
            entry_id: s(f.entry_id),
            role,
            timestamp: timestamp_ms.map(format_millis),
            timestamp_ms,
            cwd: session.as_ref().and_then(|s| s.cwd.clone()),
            session_name: session.as_ref().and_then(|s| s.session_name.clone()),
            agent: session.as_ref().map(|s| s.agent).unwrap_or_default(),
            model: (model != 0)
                .then(|| session.as_ref().and_then(|s| s.model_named(model)))
                .flatten(),
            active,
            edited,
            replacement: s(f.replacement),
            text: s(f.text).unwrap_or_default(),
        })
    }
}

/// One session, as `pi-index sessions` lists it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SessionRow {
    /// Session id.
    pub session_id: String,
    /// Session file.
    pub path: String,
    /// Working directory.
    pub cwd: Option<String>,
    /// Display name.
    pub session_name: Option<String>,
    /// The agent that wrote it: `pi` or `omp` (Oh My Pi).
    pub agent: Agent,
    /// The first user message's first line.
    pub title: Option<String>,
    /// Session start, RFC 3339.
    pub started: Option<String>,
    /// Time of the last indexed document, RFC 3339.
    pub last: Option<String>,
    /// Indexed documents.
    pub messages: u64,
    /// `last` as epoch ms, for sorting.
    #[serde(skip)]
    pub last_ms: Option<i64>,
    /// Every model the session's documents name.
    #[serde(skip)]
    pub models: Vec<String>,
    /// The key that joins the session's messages to it.
    #[serde(skip)]
    pub key: u64,
    /// The parent session file its header names (`parentSession`).
    #[serde(skip)]
    pub parent_path: Option<String>,
    /// The copy key of its first message ([`crate::index::lineage`]).
    #[serde(skip)]
    pub head: u64,
    /// Its place in its family, when it has relatives (filled by
    /// [`crate::search::family::Families::annotate`]; absent otherwise).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub family: Option<crate::search::lineage::Lineage>,
}

impl SessionRow {
    /// Whether the session ran at or below `dir` (normalized, see
    /// [`crate::search::query::normalize_dir`]) and was active at or after
    /// `since` (ms): what `sessions --cwd --since` and the MCP `sessions`
    /// tool select. `None` selects everything.
    pub fn selected(&self, dir: Option<&str>, since: Option<i64>) -> bool {
        let below = dir.is_none_or(|d| {
            self.cwd
                .as_deref()
                .unwrap_or("")
                .strip_prefix(d)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || d == "/")
        });
        below && since.is_none_or(|t| self.last_ms.is_some_and(|l| l >= t))
    }

    /// The name, else the title, else the id.
    pub fn label(&self) -> &str {
        self.session_name
            .as_deref()
            .or(self.title.as_deref())
            .unwrap_or(&self.session_id)
    }

    /// The model whose name hashes to `hash`.
    fn model_named(&self, hash: u64) -> Option<String> {
        self.models
            .iter()
            .find(|m| model_hash(Some(m)) == hash)
            .cloned()
    }
}

impl PiIndex {
    /// Every session, newest activity first.
    pub fn sessions(&self, searcher: &Searcher) -> Result<Vec<SessionRow>, IndexError> {
        let f = &self.fields;
        let query = TermQuery::new(
            Term::from_field_text(f.doc_type, SESSION_DOC),
            IndexRecordOption::Basic,
        );
        let mut out = self.matching(searcher, &query, |_, d| Ok(self.summary(d)))?;
        out.sort_by(|a, b| b.last_ms.cmp(&a.last_ms).then_with(|| a.path.cmp(&b.path)));
        Ok(out)
    }

    /// The sessions whose header id is exactly `id` (a copy of a file
    /// keeps its id: possibly several, by path), newest activity first.
    /// Unlike [`PiIndex::resolve_session`], nothing of `id` is read as a
    /// path or a prefix: what a web address may name.
    pub fn sessions_with_id(
        &self,
        searcher: &Searcher,
        id: &str,
    ) -> Result<Vec<SessionRow>, IndexError> {
        let mut out = self.sessions_named(searcher, &SessionKey::Id(id.to_owned()))?;
        out.sort_by(|a, b| b.last_ms.cmp(&a.last_ms).then_with(|| a.path.cmp(&b.path)));
        Ok(out)
    }

    /// The summary of the session stored at `path`.
    pub fn session_by_path(
        &self,
        searcher: &Searcher,
        path: &str,
    ) -> Result<Option<SessionRow>, IndexError> {
        let f = &self.fields;
        let query = all_terms(&[(f.doc_type, SESSION_DOC), (f.path, path)]);
        self.first_session(searcher, &query)
    }

    fn summary(&self, d: &TantivyDocument) -> SessionRow {
        let f = &self.fields;
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
        let last_ms = t(f.last);
        let path = s(f.path).unwrap_or_default();
        SessionRow {
            session_id: s(f.session_id).unwrap_or_default(),
            key: crate::index::schema::session_key(&path),
            path,
            cwd: s(f.cwd),
            session_name: s(f.session_name),
            agent: Agent::from_stored(s(f.agent).as_deref()),
            title: s(f.title),
            started: t(f.started).map(format_millis),
            last: last_ms.map(format_millis),
            messages: d
                .get_first(f.messages)
                .and_then(|v| v.as_u64())
                .unwrap_or(0),
            last_ms,
            models: d
                .get_all(f.models)
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            parent_path: s(f.parent),
            head: d.get_first(f.head).and_then(|v| v.as_u64()).unwrap_or(0),
            family: None,
        }
    }
}
