//! What the picker lists: one row per session, with its hits.
//!
//! [`rows`] is the one place that turns a query into rows. Until the
//! library has a session-level search, it groups the hits of
//! [`PiIndex::search`] by session: the [`HIT_DEPTH`] best messages, each
//! session ranked by its best one (so a session is found by any message
//! in it, not by its name). Everything else in the picker reads [`Rows`].

use std::collections::HashMap;
use std::sync::Arc;

use tantivy::Searcher;

use crate::index::PiIndex;
use crate::search::query::{Filters, Key, Now, Warning};
use crate::search::{Hit, SearchError, SearchRequest, SessionSummary, Sort};

/// Messages a query ranks sessions by. Each costs a snippet and a stored
/// document read, ~5-10 µs, so 200 keep a search of the 1 GB index at a
/// few milliseconds; a word common to many messages of a few sessions
/// still lists dozens of sessions.
pub const HIT_DEPTH: usize = 200;

/// Characters of a snippet: a row shows one line of it.
pub const SNIPPET_CHARS: usize = 150;

/// What the user asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    /// The text typed, in the language of `pi-index search`.
    pub text: String,
    /// Only messages on their session's active branch (Ctrl-A).
    pub active_only: bool,
}

impl Query {
    /// Whether nothing is asked but the list of sessions.
    pub fn is_listing(&self) -> bool {
        self.text.trim().is_empty()
    }
}

/// One session and its hits.
#[derive(Clone, Debug)]
pub struct Row {
    /// The session, as `pi-index sessions` lists it.
    pub session: Arc<SessionSummary>,
    /// Its hits, best first; empty for a listing without a query.
    pub hits: Vec<Hit>,
}

impl Row {
    /// The best hit, if the row came from a query.
    pub fn best(&self) -> Option<&Hit> {
        self.hits.first()
    }
}

/// The answer to a [`Query`].
#[derive(Clone, Debug, Default)]
pub struct Rows {
    /// Sessions, best first (newest first without a query).
    pub rows: Vec<Row>,
    /// Messages that matched in all (sessions without a query).
    pub total: usize,
    /// Whether the query matched more messages than the rows were made
    /// of (sessions past the depth may be missing).
    pub truncated: bool,
    /// What was repaired or ignored in the query.
    pub warnings: Vec<Warning>,
}

/// The rows for `query`: sessions newest first when it is empty, else
/// sessions ranked by their best hit. The swap point for a session-level
/// search in the library.
pub fn rows(
    pi: &PiIndex,
    searcher: &Searcher,
    query: &Query,
    now: Now,
) -> Result<Rows, SearchError> {
    if query.is_listing() {
        let sessions = pi.sessions(searcher)?;
        return Ok(Rows {
            total: sessions.len(),
            rows: sessions
                .into_iter()
                .map(|s| Row {
                    session: Arc::new(s),
                    hits: Vec::new(),
                })
                .collect(),
            truncated: false,
            warnings: Vec::new(),
        });
    }
    let mut filters = Filters::default();
    if query.active_only {
        filters.add(Key::Branch, "active", &now)?;
    }
    let req = SearchRequest {
        query: query.text.clone(),
        filters,
        sort: Sort::Relevance,
        limit: HIT_DEPTH,
        offset: 0,
        snippet_chars: SNIPPET_CHARS,
        now,
    };
    let result = pi.search(searcher, &req)?;
    let mut rows: Vec<Row> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    let shown = result.hits.len();
    for hit in result.hits {
        match at.get(&hit.doc.path) {
            Some(&i) => rows[i].hits.push(hit),
            None => {
                at.insert(hit.doc.path.clone(), rows.len());
                let session = hit.session.clone().unwrap_or_else(|| orphan(&hit));
                rows.push(Row {
                    session,
                    hits: vec![hit],
                });
            }
        }
    }
    Ok(Rows {
        rows,
        total: result.total,
        truncated: result.total > shown,
        warnings: result.warnings,
    })
}

/// A session summary made from a hit whose session document could not
/// be read (never expected: the index writes them together).
fn orphan(hit: &Hit) -> Arc<SessionSummary> {
    Arc::new(SessionSummary {
        session_id: hit.doc.session_id.clone(),
        path: hit.doc.path.clone(),
        cwd: hit.doc.cwd.clone(),
        session_name: hit.doc.session_name.clone(),
        title: None,
        started: None,
        last: hit.doc.timestamp.clone(),
        messages: 0,
        last_ms: hit.doc.timestamp_ms,
        models: Vec::new(),
        key: crate::index::schema::session_key(&hit.doc.path),
    })
}
