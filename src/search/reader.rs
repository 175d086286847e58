//! Documents out: finding a session and reading its stored documents.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;
use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::{Searcher, TantivyDocument, Term};

use crate::index::schema::SESSION_KIND;
use crate::index::{
    all_terms, entry_query, messages_only, tantivy_err, term_query, IndexError, PiIndex,
};
use crate::pi::time::format_millis;
use crate::pi::Role;

/// A stored document as `show --format json` prints it: the stable,
/// documented output contract (one object per line).
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
    pub role: String,
    /// Entry time, RFC 3339 UTC with milliseconds.
    pub timestamp: Option<String>,
    /// The session's working directory.
    pub cwd: Option<String>,
    /// The session's display name.
    pub session_name: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// On the active branch?
    pub active: bool,
    /// The text.
    pub text: String,
}

impl StoredDoc {
    /// Back to the document it was made from (for re-adding it).
    pub fn into_document(self) -> crate::pi::Document {
        crate::pi::Document {
            line: self.line,
            offset: self.offset,
            entry_id: self.entry_id,
            role: self.role.parse().unwrap_or(Role::User),
            timestamp_ms: self
                .timestamp
                .as_deref()
                .and_then(crate::pi::time::parse_iso_millis),
            model: self.model,
            active: self.active,
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
    /// Nothing matches.
    #[error("no indexed session matches {0:?}: check `pi-index sessions`, or run `pi-index build` if the session is new")]
    NotFound(String),
    /// A prefix matches several sessions.
    #[error("{prefix:?} matches {count} sessions ({examples}): give more of the id")]
    Ambiguous {
        /// What was asked for.
        prefix: String,
        /// How many matched.
        count: usize,
        /// A few of them.
        examples: String,
    },
}

impl PiIndex {
    /// A searcher over the last committed state.
    pub fn searcher(&self) -> Result<Searcher, IndexError> {
        let reader = self
            .index
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
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
        read: impl Fn(&TantivyDocument) -> T,
    ) -> Result<Vec<T>, IndexError> {
        let err = |e| tantivy_err(&self.dir, e);
        let addrs = searcher.search(query, &DocSetCollector).map_err(err)?;
        addrs
            .into_iter()
            .map(|a| Ok(read(&searcher.doc::<TantivyDocument>(a).map_err(err)?)))
            .collect()
    }

    /// The stored message documents of some entries of one file, each
    /// named by the byte offset of its line.
    pub fn entry_documents(
        &self,
        searcher: &Searcher,
        path: &str,
        offsets: &[u64],
    ) -> Result<Vec<StoredDoc>, IndexError> {
        let mut out = Vec::new();
        for &offset in offsets {
            let query = entry_query(&self.fields, path, offset);
            out.extend(self.matching(searcher, &query, |d| self.stored(d))?);
        }
        Ok(out)
    }

    /// Fill in each document's session name from its session's summary
    /// document (the name is kept there only, so a rename rewrites one
    /// document).
    pub fn fill_session_names<'a>(
        &self,
        searcher: &Searcher,
        docs: impl IntoIterator<Item = &'a mut StoredDoc>,
    ) -> Result<(), IndexError> {
        let mut names: std::collections::HashMap<String, Option<String>> = Default::default();
        for d in docs {
            if !names.contains_key(&d.path) {
                let name = self
                    .session_by_path(searcher, &d.path)?
                    .and_then(|s| s.session_name);
                names.insert(d.path.clone(), name);
            }
            d.session_name = names[&d.path].clone();
        }
        Ok(())
    }

    /// Every stored document of a session, in file order (then role order
    /// within a line).
    pub fn session_documents(
        &self,
        searcher: &Searcher,
        key: &SessionKey,
    ) -> Result<Vec<StoredDoc>, IndexError> {
        let f = &self.fields;
        let query = messages_only(
            f,
            match key {
                SessionKey::Path(p) => term_query(f.path, p),
                SessionKey::Id(id) => term_query(f.session_id, id),
            },
        );
        let mut docs = self.matching(searcher, &query, |d| self.stored(d))?;
        self.fill_session_names(searcher, &mut docs)?;
        docs.sort_by(|a, b| {
            (&a.path, a.line, role_rank(&a.role)).cmp(&(&b.path, b.line, role_rank(&b.role)))
        });
        Ok(docs)
    }

    /// Read a stored document's fields.
    pub fn stored(&self, d: &TantivyDocument) -> StoredDoc {
        let f = &self.fields;
        let s = |field| {
            d.get_first(field)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        let u = |field| d.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
        StoredDoc {
            session_id: s(f.session_id).unwrap_or_default(),
            path: s(f.path).unwrap_or_default(),
            line: u(f.line),
            offset: u(f.offset),
            entry_id: s(f.entry_id),
            role: s(f.role).unwrap_or_default(),
            timestamp: d
                .get_first(f.timestamp)
                .and_then(|v| v.as_datetime())
                .map(|t| format_millis(t.into_timestamp_millis())),
            cwd: s(f.cwd),
            session_name: s(f.session_name),
            model: s(f.model),
            active: d
                .get_first(f.active)
                .and_then(|v| v.as_bool())
                .unwrap_or(true),
            text: s(f.text).unwrap_or_default(),
        }
    }
}

/// One session, as `pi-index sessions` lists it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SessionSummary {
    /// Session id.
    pub session_id: String,
    /// Session file.
    pub path: String,
    /// Working directory.
    pub cwd: Option<String>,
    /// Display name.
    pub session_name: Option<String>,
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
}

impl SessionSummary {
    /// The name, else the title, else the id.
    pub fn label(&self) -> &str {
        self.session_name
            .as_deref()
            .or(self.title.as_deref())
            .unwrap_or(&self.session_id)
    }
}

impl PiIndex {
    /// Every session, newest activity first.
    pub fn sessions(&self, searcher: &Searcher) -> Result<Vec<SessionSummary>, IndexError> {
        let f = &self.fields;
        let query = TermQuery::new(
            Term::from_field_text(f.kind, SESSION_KIND),
            IndexRecordOption::Basic,
        );
        let mut out = self.matching(searcher, &query, |d| self.summary(d))?;
        out.sort_by(|a, b| b.last_ms.cmp(&a.last_ms).then_with(|| a.path.cmp(&b.path)));
        Ok(out)
    }

    /// The summary of the session stored at `path`.
    pub fn session_by_path(
        &self,
        searcher: &Searcher,
        path: &str,
    ) -> Result<Option<SessionSummary>, IndexError> {
        let f = &self.fields;
        let query = all_terms(&[(f.kind, SESSION_KIND), (f.path, path)]);
        let top = searcher
            .search(
                &query,
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

    fn summary(&self, d: &TantivyDocument) -> SessionSummary {
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
        SessionSummary {
            session_id: s(f.session_id).unwrap_or_default(),
            path: s(f.path).unwrap_or_default(),
            cwd: s(f.cwd),
            session_name: s(f.session_name),
            title: s(f.title),
            started: t(f.started).map(format_millis),
            last: last_ms.map(format_millis),
            messages: d
                .get_first(f.messages)
                .and_then(|v| v.as_u64())
                .unwrap_or(0),
            last_ms,
        }
    }
}

fn role_rank(role: &str) -> u64 {
    role.parse::<Role>().map_or(u64::MAX, Role::rank)
}
