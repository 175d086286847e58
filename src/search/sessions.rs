//! Session-level search: one row per session, for a picker (`pi-index
//! sessions QUERY`, and the session picker built on it).
//!
//! A query is run three ways, each with the query language of `search`:
//!
//! - over the **messages**, exactly as `search` runs it (filters
//!   included): each session's best message is its hit, and how many of
//!   its messages match is counted;
//! - over the sessions' **names** (`session_info`) and
//!   - over their **titles** (the first line of the first user message),
//!
//!   both on the session documents, with the same words, phrases, prefixes
//!   and operators, and the session filters (`cwd:`, `session:`, `name:`).
//!   Filters on a message's own facts (`role:`, `model:`, `after:`,
//!   `before:`, `branch:`) are about messages: a query holding one lists
//!   only the sessions with a matching message.
//!
//! A session is listed when any of the three matches. What a user
//! remembers a session by comes first: sessions whose **name** matches,
//! then those whose **title** matches, then those found by their messages
//! alone; within each group, by
//!
//! ```text
//! score = name + title + best message + 0.5 * ln(1 + matching messages)
//! ```
//!
//! where each term is tantivy's BM25 score of that part (0 when it does not
//! match), so a session where many messages match comes before one where a
//! single message does. Ties fall to the most recent activity, then the
//! path. (BM25 scores of a short name and of a long message are not on one
//! scale, which is why the groups are kept apart rather than weighted.)

use std::collections::HashMap;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DocAddress, DocId, Score, Searcher, SegmentOrdinal, SegmentReader};

use super::error::SearchError;
use super::hits::HitMaker;
use super::messages::MessageReader;
use super::query::{compile, grammar, FieldMap, Filters};
use super::reader::Reader;
use crate::index::tantivy_err;
use crate::read::{Hit, Matched, SessionHit, SessionQuery, SessionSearch};

/// Weight of `ln(1 + matching messages)`.
pub const MATCHES_WEIGHT: f32 = 0.5;

/// Find sessions: one row per session, ranked as the [module
/// documentation](self) says.
pub fn search_sessions(
    r: &Reader,
    searcher: &Searcher,
    req: &SessionQuery,
) -> Result<SessionSearch, SearchError> {
    super::query::limits::check(&req.query)?;
    let offset = super::query::limits::check_offset(req.offset as u64)?;
    if req.dir.is_some() || req.since.is_some() {
        // The directory and the time select among every session ranked,
        // then the page is cut from those kept.
        let every = SessionQuery {
            dir: None,
            since: None,
            limit: usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX),
            offset: 0,
            ..req.clone()
        };
        let all = search_sessions(r, searcher, &every)?;
        let kept: Vec<SessionHit> = all
            .hits
            .into_iter()
            .filter(|h| h.session.selected(req.dir.as_deref(), req.since))
            .collect();
        return Ok(SessionSearch {
            total: kept.len(),
            hits: kept.into_iter().skip(offset).take(req.limit).collect(),
            warnings: all.warnings,
        });
    }
    // The rows ranked: the page and every one before it.
    let want = offset.saturating_add(req.limit);
    let f = &r.pi.fields;
    let err = |e| SearchError::Index(tantivy_err(&r.pi.dir, e));
    let mut map = FieldMap::new(r, searcher)?;
    let compiled = compile(&req.query, &req.filters, &req.now, &mut map)?;
    let messages = searcher
        .search(&compiled.query, &BestPerSession)
        .map_err(err)?;

    // Names and titles, unless the query is about messages' own facts.
    let mut names = HashMap::new();
    let mut titles = HashMap::new();
    if !about_messages(&req.query, &req.filters) {
        for (field, out) in [(f.session_name, &mut names), (f.title, &mut titles)] {
            let mut map = FieldMap::for_sessions(r, searcher, field)?;
            let q = compile(&req.query, &req.filters, &req.now, &mut map)?;
            let found = searcher.search(&q.query, &BestPerSession).map_err(err)?;
            *out = found.into_iter().map(|(k, b)| (k, b.score)).collect();
        }
    }

    let mut keys: Vec<u64> = messages.keys().copied().collect();
    keys.extend(names.keys().filter(|k| !messages.contains_key(k)));
    keys.extend(
        titles
            .keys()
            .filter(|k| !messages.contains_key(k) && !names.contains_key(k)),
    );
    let mut scored = Vec::with_capacity(keys.len());
    for key in keys {
        let best = messages.get(&key).copied();
        let name = names.get(&key).copied().unwrap_or(0.0);
        let title = titles.get(&key).copied().unwrap_or(0.0);
        let (message, count) = best.map_or((0.0, 0), |b| (b.score, b.count));
        let matched = if names.contains_key(&key) {
            Matched::Name
        } else if titles.contains_key(&key) {
            Matched::Title
        } else {
            Matched::Messages
        };
        let score = name + title + message + MATCHES_WEIGHT * (count as f32).ln_1p();
        scored.push((matched, score, name, title, best, key));
    }
    let total = scored.len();
    // Group and score decide the order; the summary (read from the
    // doc store) only breaks ties. So summaries are read
    // for the rows that can be listed: the first `limit` in that
    // order and any tied with the last of them. A common word matches
    // nearly every session, and reading all their summaries was most of
    // such a search
    // ([docs/performance.md](../../docs/performance.md#local-search)).
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.total_cmp(&a.1)));
    let mut rows = Vec::with_capacity(want.min(total));
    let mut at = 0;
    while at < scored.len() && rows.len() < want {
        let (group, score) = (scored[at].0, scored[at].1);
        let tied = scored[at..]
            .iter()
            .take_while(|r| r.0 == group && r.1.total_cmp(&score).is_eq())
            .count();
        let from = rows.len();
        for &(matched, score, name, title, best, key) in &scored[at..at + tied] {
            if let Some(session) = super::lookup::session_by_key(r, searcher, key)? {
                rows.push((matched, score, name, title, best, session));
            }
        }
        rows[from..].sort_by(|a, b| {
            b.5.last_ms
                .cmp(&a.5.last_ms)
                .then_with(|| a.5.path.cmp(&b.5.path))
        });
        at += tied;
    }
    rows.truncate(want);
    rows.drain(..offset.min(rows.len()));

    let mut snippets = HitMaker::new(r, searcher, &*compiled.query, req.snippet_chars)?;
    let mut reader = MessageReader::new(r, searcher);
    let mut hits = Vec::with_capacity(rows.len());
    for (matched, score, name_score, title_score, best, session) in rows {
        let hit = match best {
            Some(b) => Some(snippets.hit(r, &mut reader, b.addr, b.score)?),
            None => None,
        };
        let (snippet, highlights) = match &hit {
            Some(h) => (h.snippet.clone(), h.highlights.clone()),
            None => (
                session
                    .title
                    .clone()
                    .or_else(|| session.session_name.clone())
                    .unwrap_or_default(),
                Vec::new(),
            ),
        };
        hits.push(SessionHit {
            matched,
            score,
            name_score,
            title_score,
            matches: best.map_or(0, |b| b.count),
            hit,
            snippet,
            highlights,
            session,
        });
    }
    // A fork's row and its parent's may show one message: each says
    // where else it is.
    let mut shown: Vec<&mut Hit> = hits.iter_mut().filter_map(|h| h.hit.as_mut()).collect();
    super::copies::fill_copies(r, searcher, &mut shown)?;
    Ok(SessionSearch {
        hits,
        total,
        warnings: compiled.warnings,
    })
}

/// Whether the query or the flags filter on messages' own facts (then
/// `sessions QUERY` ranks no name or title: a session is found by its
/// messages alone).
pub fn about_messages(query: &str, flags: &Filters) -> bool {
    fn walk(ast: &grammar::Ast) -> bool {
        match ast {
            grammar::Ast::Leaf {
                leaf: grammar::Leaf::Filter { key, .. },
                ..
            } => key.is_about_messages(),
            grammar::Ast::Leaf { .. } => false,
            grammar::Ast::And(v) | grammar::Ast::Or(v) => v.iter().any(walk),
            grammar::Ast::Not(a) => walk(a),
        }
    }
    flags.constraints.iter().any(|c| c.is_about_messages())
        || grammar::parse(query)
            .ok()
            .and_then(|p| p.ast)
            .is_some_and(|a| walk(&a))
}

/// A session's best document among those a query matches, and how many
/// match.
#[derive(Clone, Copy, Debug)]
struct Best {
    score: Score,
    addr: DocAddress,
    count: u64,
}

impl Best {
    fn merge(&mut self, other: Best) {
        self.count += other.count;
        if other.score > self.score || (other.score == self.score && other.addr < self.addr) {
            self.score = other.score;
            self.addr = other.addr;
        }
    }
}

/// Collects, per session key (the `sess` column), the best-scored match.
struct BestPerSession;

struct BestInSegment {
    segment: SegmentOrdinal,
    sess: Option<Column<u64>>,
    best: HashMap<u64, Best>,
}

impl Collector for BestPerSession {
    type Fruit = HashMap<u64, Best>;
    type Child = BestInSegment;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<BestInSegment> {
        Ok(BestInSegment {
            segment,
            sess: reader.fast_fields().column_opt("sess")?,
            best: HashMap::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<HashMap<u64, Best>>) -> tantivy::Result<Self::Fruit> {
        let mut out: HashMap<u64, Best> = HashMap::new();
        for fruit in fruits {
            for (k, b) in fruit {
                out.entry(k).and_modify(|m| m.merge(b)).or_insert(b);
            }
        }
        Ok(out)
    }
}

impl SegmentCollector for BestInSegment {
    type Fruit = HashMap<u64, Best>;

    fn collect(&mut self, doc: DocId, score: Score) {
        let Some(key) = self.sess.as_ref().and_then(|c| c.first(doc)) else {
            return;
        };
        let b = Best {
            score,
            addr: DocAddress::new(self.segment, doc),
            count: 1,
        };
        self.best.entry(key).and_modify(|m| m.merge(b)).or_insert(b);
    }

    fn harvest(self) -> Self::Fruit {
        self.best
    }
}
