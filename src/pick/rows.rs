//! What the picker lists: one row per session, and the hits inside one.
//!
//! [`rows`] is the one place that turns a query into rows, and it does
//! not rank anything itself: an empty query lists every session newest
//! first ([`Source::sessions`]), any other is the library's
//! session-level search ([`Source::find_sessions`], as `pi-index
//! sessions QUERY`): sessions whose name matches, then those whose first
//! user message does, then those found by their messages alone, each
//! with its best message as the hit. [`session_hits`] lists the hits
//! inside one session (Tab), with `search`'s own ranking.

use std::ops::Range;
use std::sync::Arc;

use super::source::View;
use crate::read::{
    Hit, Matched, ReadError, SearchRequest, SessionList, SessionQuery, SessionRow, Source,
};
use crate::search::query::{FilterError, Filters, Key, Now, Warning};
use crate::search::Sort;

/// Sessions a query lists at first. The session-level search scores every
/// matching session whatever the limit, but each row listed costs its
/// summary and a snippet of its best hit
/// ([docs/performance.md](../../docs/performance.md#the-picker)), and a
/// screen shows a dozen; the picker asks for more as the selection nears the
/// end ([`MORE_ROWS`] times as many each time).
pub const FIRST_ROWS: usize = 50;

/// How many times more rows are asked for when the selection nears the
/// end of those listed.
pub const MORE_ROWS: usize = 4;

/// Hits listed inside one session (Tab).
pub const SESSION_HITS: usize = 100;

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

    fn filters(&self, now: &Now) -> Result<Filters, FilterError> {
        let mut filters = Filters::default();
        if self.active_only {
            filters.add(Key::Branch, "active", now)?;
        }
        Ok(filters)
    }
}

/// One session, and what found it.
#[derive(Clone, Debug)]
pub struct Row {
    /// The session, as `pi-index sessions` lists it.
    pub session: Arc<SessionRow>,
    /// What matched: its name, its title or its messages (none in the
    /// listing without a query).
    pub matched: Option<Matched>,
    /// How many of its messages match.
    pub matches: u64,
    /// Its best matching message (none in the listing, or when only its
    /// name or title matched).
    pub hit: Option<Hit>,
    /// The best message's snippet, else the title (empty in the listing).
    pub snippet: String,
    /// Byte ranges of matched words within `snippet`.
    pub highlights: Vec<Range<usize>>,
}

/// The answer to a [`Query`].
#[derive(Clone, Debug, Default)]
pub struct Rows {
    /// Sessions, best first (newest first without a query).
    pub rows: Vec<Row>,
    /// Sessions that matched in all (the rows are the first of them).
    pub total: usize,
    /// What was repaired or ignored in the query.
    pub warnings: Vec<Warning>,
}

/// The rows for `query`: the `limit` newest sessions when it is empty
/// (`total` says how many there are), else the session-level search's
/// best `limit`.
pub fn rows(view: &View, query: &Query, limit: usize, now: Now) -> Result<Rows, ReadError> {
    if query.is_listing() {
        let page = view.source.sessions(&SessionList {
            limit,
            ..SessionList::default()
        })?;
        return Ok(Rows {
            total: page.total,
            rows: page
                .sessions
                .into_iter()
                .map(|s| Row {
                    session: Arc::new(s),
                    matched: None,
                    matches: 0,
                    hit: None,
                    snippet: String::new(),
                    highlights: Vec::new(),
                })
                .collect(),
            warnings: Vec::new(),
        });
    }
    let req = SessionQuery {
        query: query.text.clone(),
        filters: query
            .filters(&now)
            .map_err(|e| ReadError::Search(e.into()))?,
        dir: None,
        since: None,
        limit,
        offset: 0,
        snippet_chars: SNIPPET_CHARS,
        now,
    };
    let found = view.source.find_sessions(&req)?;
    Ok(Rows {
        rows: found
            .hits
            .into_iter()
            .map(|h| Row {
                session: Arc::new(h.session),
                matched: Some(h.matched),
                matches: h.matches,
                hit: h.hit,
                snippet: h.snippet,
                highlights: h.highlights,
            })
            .collect(),
        total: found.total,
        warnings: found.warnings,
    })
}

/// The hits of `query` inside `session`, best first, at most
/// [`SESSION_HITS`]: `pi-index search QUERY session:ID`, kept to the
/// session's own file (a copy of a session file has the same id).
pub fn session_hits(
    source: &dyn Source,
    query: &Query,
    session: &SessionRow,
    now: Now,
) -> Result<Vec<Hit>, ReadError> {
    if query.is_listing() {
        return Ok(Vec::new());
    }
    let req = SearchRequest {
        query: query.text.clone(),
        filters: query
            .filters(&now)
            .map_err(|e| ReadError::Search(e.into()))?,
        sort: Sort::Relevance,
        limit: SESSION_HITS,
        offset: 0,
        snippet_chars: SNIPPET_CHARS,
        now,
        copies: true,
    };
    source.hits_in(session, &req)
}
