//! `search`, `sessions` and `show` against the team database: the same
//! query language and the same objects as locally ([`Hit`],
//! [`SessionRow`], [`StoredDoc`]), each with the `host` that pushed it.
//!
//! Hits are ranked by PostgreSQL's `ts_rank_cd` (cover density: how close
//! together the query's terms lie, with no weight for how rare a term is
//! in the whole collection, unlike the local index's BM25), ties broken
//! by recency then by storage order, so pages cut at any offset are the
//! same order. Snippets are made by pi-index's own highlighter
//! ([`crate::search::snippet`]) from the returned text.
//!
//! **The pool.** Ranking every match reads every match, seconds for a
//! common word
//! ([docs/performance.md](../../docs/performance.md#the-team-database)), so a
//! search ranks a bounded pool: the [`POOL`] newest matches (read in the
//! order of the recency index `pi_messages_recent`, or from the GIN index and
//! sorted, whichever reads fewer rows: see `plan_pool`), best first; matches
//! past the pool follow, newest first. A page past the pool widens it to
//! reach the page, with the same order. The set of matches is unchanged
//! (every match is on some page); only the order beyond the newest [`POOL`]
//! is by recency, not by rank. The total counts the pool: when more match,
//! [`SearchResult::more`] says so ("more than N hits").
//!
//! **Copies.** A message copied into forks is one hit, as locally
//! ([`crate::search::copies`]): the matching messages of sessions with a
//! family ([`super::lineage`]) are grouped by host, family and copy key,
//! each group is one hit at its first session in the family's order
//! (`family_age`) with the others as its `copies`, and the page is cut
//! from the merged list in the usual order, so totals and pages count
//! hits after merging. Grouping needs only columns of the matching rows
//! (the same set the local collector sets aside), so it is exact on the
//! server; a database where no session has a family runs the plain
//! statement.
//!
//! **Sessions.** `sessions QUERY` ranks as locally
//! ([`crate::search::sessions`]): the query runs over messages, over
//! names and over titles; sessions whose name matches come first, then
//! those whose title matches, then those found by messages alone, each
//! group by `name + title + best message + 0.5 ln(1 + matching
//! messages)`, where each term is a `ts_rank_cd` here (a BM25 there).

use std::collections::BTreeMap;

use tokio_postgres::Row;

use super::lineage::RowLineage;
use super::query::{self, Param, Scope, SqlQuery};
use super::text::PairWords;
use super::{schema, Db, TeamError};
use crate::output::text::lead;
use crate::pi::time::format_millis;
use crate::pi::{Agent, Edited, Role};
use crate::read::{
    CopyRef, Hit, Lineage, Matched, SearchRequest, SearchResult, SessionHit, SessionList,
    SessionPage, SessionQuery, SessionRow, SessionSearch, StoredDoc,
};
use crate::search::query::expand::Known;
use crate::search::query::{Filters, Now};
use crate::search::snippet::{head, Snippets};
use crate::search::Sort;

pub(super) const DOC_COLUMNS: &str =
    "m.host, s.session_id, s.path, m.line, m.off, m.entry_id, m.role, m.ts_ms, \
     s.cwd, s.session_name, m.model, m.active, m.edited, m.replacement, m.text, s.agent";

pub(super) const FROM: &str =
    "FROM pi_messages m JOIN pi_sessions s ON s.host = m.host AND s.sid = m.sid";

/// The message, with its host, of a row whose columns from `at` on are
/// [`DOC_COLUMNS`].
fn doc_at(r: &Row, at: usize) -> StoredDoc {
    let ts: Option<i64> = r.get(at + 7);
    let role: String = r.get(at + 6);
    StoredDoc {
        host: r.get(at),
        session_id: r.get(at + 1),
        path: r.get(at + 2),
        line: r.get::<_, i64>(at + 3) as u64,
        offset: r.get::<_, i64>(at + 4) as u64,
        entry_id: r.get(at + 5),
        role: role.parse().unwrap_or(Role::User),
        timestamp: ts.map(format_millis),
        timestamp_ms: ts,
        cwd: r.get(at + 8),
        session_name: r.get(at + 9),
        agent: Agent::from_stored(r.get::<_, Option<&str>>(at + 15)),
        model: r.get(at + 10),
        active: r.get(at + 11),
        edited: Edited::from_rank(r.get::<_, i16>(at + 12) as u64),
        replacement: r.get(at + 13),
        text: r.get(at + 14),
    }
}

pub(super) fn doc_of(r: &Row) -> StoredDoc {
    doc_at(r, 0)
}

/// The copies of a hit from three parallel arrays (ids, paths, lines).
fn copies_of(r: &Row, at: usize) -> Vec<CopyRef> {
    let ids: Option<Vec<String>> = r.get(at);
    let paths: Option<Vec<String>> = r.get(at + 1);
    let lines: Option<Vec<i64>> = r.get(at + 2);
    ids.unwrap_or_default()
        .into_iter()
        .zip(paths.unwrap_or_default())
        .zip(lines.unwrap_or_default())
        .map(|((session_id, path), line)| CopyRef {
            session_id,
            path,
            line: line as u64,
        })
        .collect()
}

/// Snippets of hits for the query's terms, by pi-index's own highlighter.
struct Snipper {
    text: Snippets,
    chars: usize,
}

impl Snipper {
    fn new(q: &SqlQuery, chars: usize) -> Snipper {
        let weights: BTreeMap<String, f32> = q.terms.iter().map(|t| (t.clone(), 1.0)).collect();
        let mut text = Snippets::new(weights, crate::index::tokenizer::analyzer());
        text.set_max_num_chars(chars);
        Snipper { text, chars }
    }

    fn hit(&self, doc: StoredDoc, score: f32) -> Hit {
        let mut s = self.text.snippet(&doc.text);
        if let (true, Some(r)) = (s.fragment().is_empty(), &doc.replacement) {
            s = self.text.snippet(r);
        }
        let (snippet, highlights) = if s.fragment().is_empty() {
            (lead(head(&doc.text), self.chars), Vec::new())
        } else {
            (s.fragment().to_owned(), s.highlighted().to_vec())
        };
        Hit {
            doc,
            score,
            snippet,
            highlights,
            session: None,
            copies: Vec::new(),
        }
    }
}

/// What a search asks of the database before its statement.
struct Facts {
    /// Whether any session has a family (then a search merges copies;
    /// else it runs the plain statement).
    families: bool,
    /// PostgreSQL's count of message rows (`reltuples`: from the last
    /// `ANALYZE`, negative before the first).
    rows: f64,
    /// The bounds of PostgreSQL's histogram of the messages' times
    /// (`pg_stats`, from the last `ANALYZE`): as many rows between each
    /// two. Empty before the first.
    times: Vec<i64>,
    /// The share of rows holding the least common of the lexemes
    /// PostgreSQL's statistics track (`most_common_elems` of `tsv`, from
    /// the last `ANALYZE`; for a `tsvector` the frequencies end with their
    /// minimum and maximum; 0 before the first). A word it does not track
    /// is estimated at half of it, whatever its true count.
    least_tracked: f64,
}

fn facts(db: &Db) -> Result<Facts, TeamError> {
    // Two statements sent at once (one round trip): `pg_stats` is a view
    // that PostgreSQL expands and plans at each use, and read once, by a
    // statement of its own, it costs far less to plan than two scalar
    // subqueries over it
    // ([docs/performance.md](../../docs/performance.md#the-team-database)).
    let (counts, stats) = db.run(futures_util::future::join(
        db.client.query_typed_one(
            "SELECT EXISTS (SELECT 1 FROM pi_sessions WHERE family IS NOT NULL), \
             (SELECT reltuples::float8 FROM pg_class WHERE oid = 'pi_messages'::regclass)",
            &[],
        ),
        db.client.query_typed(
            "SELECT attname::text, histogram_bounds::text, \
             most_common_elem_freqs[array_length(most_common_elem_freqs, 1) - 1]::float8 \
             FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'pi_messages' \
             AND attname IN ('ts_ms', 'tsv')",
            &[],
        ),
    ));
    let failed = |e| db.error("looking for families and statistics", &e);
    let counts = counts.map_err(failed)?;
    let mut facts = Facts {
        families: counts.get(0),
        rows: counts.get::<_, Option<f64>>(1).unwrap_or(-1.0),
        times: Vec::new(),
        least_tracked: 0.0,
    };
    for r in stats.map_err(failed)? {
        match r.get::<_, &str>(0) {
            "ts_ms" => {
                facts.times = r
                    .get::<_, Option<String>>(1)
                    .map(|b| {
                        b.trim_matches(['{', '}'])
                            .split(',')
                            .filter_map(|v| v.parse().ok())
                            .collect()
                    })
                    .unwrap_or_default()
            }
            _ => facts.least_tracked = r.get::<_, Option<f64>>(2).unwrap_or(0.0),
        }
    }
    Ok(facts)
}

/// The team's terms that the segmentation of `query`'s words may look up
/// ([`query::wanted`]), with their document frequencies summed over the
/// hosts, and the count of messages (the empty term's, see
/// [`schema`]); and which of them are pair words
/// ([`text::PairWords`]), when every message row holds its pairs (none
/// pushed under a schema before [`schema::PAIRS`]): one round trip, none
/// for a query without words.
fn known(db: &Db, query: &str) -> Result<(Known, PairWords), TeamError> {
    let mut wanted = query::wanted(query);
    if wanted.is_empty() {
        return Ok((Known::default(), PairWords::default()));
    }
    wanted.push(String::new());
    let sql = format!(
        "SELECT term, sum(docs)::bigint, false FROM pi_terms WHERE term = ANY($1) \
         GROUP BY term HAVING sum(docs) > 0 \
         UNION ALL SELECT term, 0, true FROM pi_pair_words WHERE term = ANY($1) \
         AND NOT EXISTS (SELECT 1 FROM pi_sessions WHERE pushed_schema < {})",
        schema::PAIRS
    );
    let rows = db
        .run(
            db.client
                .query_typed(&sql, &[(&wanted, tokio_postgres::types::Type::TEXT_ARRAY)]),
        )
        .map_err(|e| db.error("looking up the query's words", &e))?;
    let mut known = Known::default();
    let mut pairs = Vec::new();
    for r in rows {
        let term: String = r.get(0);
        if r.get::<_, bool>(2) {
            pairs.push(term);
            continue;
        }
        let docs = r.get::<_, i64>(1).max(0) as u64;
        if term.is_empty() {
            known.docs = docs;
        } else {
            known.freq.insert(term, docs);
        }
    }
    Ok((known, PairWords::new(pairs)))
}

/// The tables a branch of a query's condition reads: the sessions are
/// joined only for a filter on them.
fn from_for(cond: &str) -> &'static str {
    if cond.starts_with("s.") || cond.contains(" s.") || cond.contains("(s.") {
        FROM
    } else {
        "FROM pi_messages m"
    }
}

/// How a search takes its pool of the `fetch` newest (or oldest)
/// matches.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct PoolPlan {
    /// From the GIN index's matches, sorted, rather than by walking the
    /// recency index until `fetch` of them are found.
    gin: bool,
    /// Only the matches at this time or newer (older, for the oldest):
    /// a window that should hold `fetch` of them, so that only those are
    /// read and sorted. When it holds fewer, [`search`] runs the
    /// statement again without it.
    window: Option<i64>,
}

/// Matches a window is made to hold, for each of the `fetch` the pool
/// needs: PostgreSQL's estimate of a query's matches assumes its words
/// independent (`error handling`: 7,076 estimated, 4,449 found).
const WINDOW_MARGIN: f64 = 3.0;

/// How a search takes its pool (see [`PoolPlan`]).
///
/// The walk reads a row for each it passes (its `tsvector` checked), the
/// GIN index about as much for each match: so the walk when it passes
/// fewer rows than there are matches, `fetch` × rows / matches < matches.
/// PostgreSQL's planner costs the walk's rows far too cheap
/// ([docs/performance.md](../../docs/performance.md#the-team-database)), so
/// the choice is made here, from the planner's own estimate of the matches
/// (`EXPLAIN` of the ordinary rows' condition). With the GIN index, the
/// matches read are cut to a window of the newest rows that should hold
/// [`WINDOW_MARGIN`] × `fetch` matches (by the histogram of times), when that
/// is less than half of them: the GIN index gives the matches, the recency
/// index the window's rows, and only the rows in both are read.
///
/// A phrase always takes the GIN index, without a window: PostgreSQL
/// estimates its matches as its words' (it keeps no statistics of
/// positions), often ten times too many. Not a phrase of two pair words,
/// which is its pair lexeme ([`SqlQuery::phrase`]), estimated as any
/// word: reading all its matches costs far more than its window. Left to
/// the planner when the
/// table was never analyzed or the query has no words.
fn plan_pool(
    db: &Db,
    q: &SqlQuery,
    facts: &Facts,
    fetch: usize,
    sort: Sort,
) -> Result<PoolPlan, TeamError> {
    if q.phrase {
        return Ok(PoolPlan {
            gin: true,
            window: None,
        });
    }
    let ([ordinary, _], true) = (q.branches.as_slice(), facts.rows > 0.0) else {
        return Ok(PoolPlan::default());
    };
    let params: Vec<_> = q.params.iter().map(|p| p.typed()).collect();
    let sql = format!("EXPLAIN SELECT 1 {} WHERE {ordinary}", from_for(ordinary));
    let rows = db
        .run(db.client.query_typed(&sql, &params))
        .map_err(|e| db.error("estimating a search's matches", &e))?;
    let first: String = rows.first().map(|r| r.get(0)).unwrap_or_default();
    let Some(matches) = first
        .split(" rows=")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|r| r.parse::<f64>().ok())
    else {
        return Ok(PoolPlan::default());
    };
    let fetch = fetch as f64;
    if fetch * facts.rows < matches * matches {
        return Ok(PoolPlan::default());
    }
    // Words the statistics do not track (a word estimated at half the
    // least tracked share, however rare: `zqplant0001`, 3 rows, at 2,095),
    // or words whose estimate is below that: every match from the GIN
    // index, which are few, and no window, whose recency index scan would
    // cost far more than they do. A tracked word is estimated at its share,
    // at least the least tracked one: 0.75 lies between the two.
    if matches < 0.75 * facts.rows * facts.least_tracked {
        return Ok(PoolPlan {
            gin: true,
            window: None,
        });
    }
    // The window: the share of rows that should hold WINDOW_MARGIN ×
    // fetch matches, in whole buckets of the histogram.
    let buckets = facts.times.len().saturating_sub(1);
    let share = WINDOW_MARGIN * fetch / matches.max(1.0);
    let window = (buckets >= 10 && share < 0.5).then(|| {
        let take = ((share * buckets as f64).ceil() as usize).max(1);
        match sort {
            Sort::Oldest => facts.times[take],
            _ => facts.times[buckets - take],
        }
    });
    Ok(PoolPlan { gin: true, window })
}

/// Turn off PostgreSQL's JIT compilation for this connection: a search's
/// statement is costed high (a text search over many rows) but reads a
/// bounded pool, and JIT compiled it for far longer than it runs
/// ([docs/performance.md](../../docs/performance.md#the-team-database)). A
/// server without the setting (before 11) keeps going.
fn no_jit(db: &Db) {
    let _ = db.run(db.client.batch_execute("SET jit = off"));
}

/// Run `req` against the database: hits `offset..offset + limit` in
/// `sort` order, each with its host; a message copied into forks is one
/// hit with its `copies` unless `copies` asks for every copy.
pub fn search(db: &Db, req: &SearchRequest) -> Result<SearchResult, TeamError> {
    let SearchRequest {
        query,
        filters,
        now,
        sort,
        offset,
        snippet_chars,
        copies,
        ..
    } = req;
    let (query, sort, offset, snippet_chars, copies) =
        (query.as_str(), *sort, *offset, *snippet_chars, *copies);
    // Counts past what a database can page through are clamped.
    let limit = req.limit.min(i64::MAX as usize / 2);
    // The local limits, before the database is asked anything.
    crate::search::query::limits::check(query)?;
    crate::search::query::limits::check_offset(offset as u64)?;
    db.run(schema::check(&db.client, &db.target))?;
    let facts = facts(db)?;
    let (known, pairs) = known(db, query)?;
    let mut q = query::compile(query, filters, now, &known, &pairs)?;
    let merge = !copies && facts.families;
    no_jit(db);
    let plan = plan_pool(db, &q, &facts, pool_size(limit, offset) + 1, sort)?;
    let width = DOC_COLUMNS.split(',').count();
    let Ran {
        rows,
        count_sql,
        cap,
        mut statements,
    } = run_search(db, &q, sort, limit, offset, merge, plan)?;
    let Some((_, last)) = statements.pop() else {
        unreachable!("a search runs a statement")
    };
    q = last;
    let params: Vec<_> = q.params.iter().map(|p| p.typed()).collect();
    let mut total = rows
        .first()
        .map_or(0, |r| r.get::<_, i64>(width + 1) as usize);
    let more = rows
        .first()
        .is_some_and(|r| r.get::<_, i64>(width + 5) as usize > cap);
    if rows.is_empty() && offset > 0 {
        // Past the last hit: how many there are, for the message.
        let n = q.params.len() - 2;
        let row = db
            .run(db.client.query_typed_one(&count_sql, &params[..n]))
            .map_err(|e| db.error("counting hits", &e))?;
        total = row.get::<_, i64>(0) as usize;
    }
    let snipper = Snipper::new(&q, snippet_chars);
    let hits = rows
        .iter()
        .map(|r| {
            let score: f32 = r.get(width);
            let mut hit = snipper.hit(doc_of(r), score);
            hit.copies = copies_of(r, width + 2);
            hit
        })
        .collect();
    Ok(SearchResult {
        hits,
        total,
        more,
        warnings: q.warnings,
    })
}

/// What [`run_search`] ran and what its last statement returned.
struct Ran {
    rows: Vec<Row>,
    /// The statement that counts the last statement's pool.
    count_sql: String,
    /// The pool's size.
    cap: usize,
    /// Each statement run, with its query (its parameters).
    statements: Vec<(String, SqlQuery)>,
}

/// Run a search's statement: with a window ([`PoolPlan::window`]) the
/// window's, then, when the window held fewer than the pool's `cap + 1`
/// matches (its last column counts them) and so the newest matches may
/// lie outside it, the statement again over every match. Two statements
/// in that case, rather than one that plans both ways every time: that
/// one's plan took longer than the window's statement alone
/// (docs/performance.md, as above).
fn run_search(
    db: &Db,
    q: &SqlQuery,
    sort: Sort,
    limit: usize,
    offset: usize,
    merge: bool,
    plan: PoolPlan,
) -> Result<Ran, TeamError> {
    let width = DOC_COLUMNS.split(',').count();
    let mut statements = Vec::new();
    let mut window = plan.window;
    loop {
        let mut q = q.clone();
        let (sql, count_sql, cap) = search_sql(
            &mut q,
            sort,
            limit,
            offset,
            merge,
            PoolPlan { window, ..plan },
        );
        let params: Vec<_> = q.params.iter().map(|p| p.typed()).collect();
        let rows = db
            .run(db.client.query_typed(&sql, &params))
            .map_err(|e| db.error("searching", &e))?;
        statements.push((sql, q));
        let too_few = rows
            .first()
            .is_none_or(|r| r.get::<_, i64>(width + 5) as usize <= cap);
        if window.is_none() || !too_few {
            return Ok(Ran {
                rows,
                count_sql,
                cap,
                statements,
            });
        }
        window = None;
    }
}

/// A pool's match read again by the row version the condition matched
/// (a TID scan: no walk down the primary key). The statement's snapshot
/// keeps that version, and `sid` keeps the join on the distribution
/// column of a Citus cluster.
const BY_TID: &str = "m.sid = p.sid AND m.ctid = p.tid";

/// How many of a query's newest matches a search by relevance ranks
/// (see the [module documentation](self)): the matches past them follow
/// by recency, and a total past the pool is "more than" it.
pub const POOL: usize = 200;

/// The matches a search's pool holds for the page `offset..offset +
/// limit`: at least [`POOL`], and as many as the page reaches.
fn pool_size(limit: usize, offset: usize) -> usize {
    POOL.max(offset.saturating_add(limit))
}

/// The statement of a search (its last four parameters, pushed here, are
/// the pool's size plus one, the pool's size, the limit and the offset)
/// and the statement that counts the pool (every parameter but the last
/// two). `merge`: copies of a message in one family are one hit (see the
/// [module documentation](self)). Returns with them the pool's size: a
/// last column (`pooled`) greater than it says the matches go on past
/// the pool.
fn search_sql(
    q: &mut SqlQuery,
    sort: Sort,
    limit: usize,
    offset: usize,
    merge: bool,
    plan: PoolPlan,
) -> (String, String, usize) {
    let score = match (sort, q.rank) {
        (Sort::Relevance, Some(n)) => query::score(n, q.others),
        _ => "0::real".to_owned(),
    };
    // The pool: the newest matches (the oldest for `Sort::Oldest`), at
    // least POOL and as many as the page reaches, plus one that says
    // whether there are more. Each branch of the condition is read in
    // the order of the recency index (or by the GIN index and sorted,
    // as the planner finds cheaper) and cut, then the branches merged.
    let dir = if sort == Sort::Oldest { "ASC" } else { "DESC" };
    let key = |t: &str| format!("{t}ts_ms {dir} NULLS LAST, {t}host, {t}sid, {t}ord");
    let cap = pool_size(limit, offset);
    let window = plan.window.map(|t| {
        q.params.push(Param::Int(t));
        let op = if sort == Sort::Oldest { "<=" } else { ">=" };
        format!(" AND m.ts_ms {op} ${}", q.params.len())
    });
    let fetch = q.params.len() + 1;
    q.params.push(Param::Int(cap as i64 + 1));
    q.params.push(Param::Int(cap as i64));
    let lim = q.params.len() + 1;
    q.params.push(Param::Int(limit as i64));
    q.params.push(Param::Int(offset as i64));
    // With `gin` ([`plan_pool`]) the pool is sorted from the GIN index's
    // matches (`ts_ms + 0` is no indexed order to walk).
    let walk = if plan.gin { "+ 0" } else { "" };
    let branch = |cond: &String, window: &str| {
        let from = from_for(cond);
        format!(
            "SELECT m.host, m.sid, m.ord, m.ts_ms, m.ctid AS tid {from} WHERE ({cond}){window} \
             ORDER BY m.ts_ms {walk} {dir} NULLS LAST, m.host, m.sid, m.ord LIMIT ${fetch}"
        )
    };
    let union = |window: &str| match q.branches.as_slice() {
        [one] => branch(one, window),
        many => format!(
            "SELECT * FROM ({}) AS u ORDER BY {} LIMIT ${fetch}",
            many.iter()
                .map(|b| format!("({})", branch(b, window)))
                .collect::<Vec<_>>()
                .join(" UNION ALL "),
            key("")
        ),
    };
    // The window's matches (when they are fewer than `fetch`, [`search`]
    // runs the statement again without it), else every match.
    let matches = union(window.as_deref().unwrap_or(""));
    // `rn`: a match's place in the pool; those past POOL get no score.
    let pool = format!(
        "pool AS MATERIALIZED (SELECT *, row_number() OVER (ORDER BY {}) AS rn \
         FROM ({matches}) AS u), pooled AS (SELECT count(*) AS n FROM pool)",
        key("")
    );
    let ranked = |t: &str| format!("CASE WHEN {t}rn <= {POOL} THEN {score} ELSE 0 END");
    let order = |t: &str| match sort {
        Sort::Relevance => {
            format!(
                "{t}rn > {POOL}, {t}score DESC, {t}ts_ms DESC NULLS LAST, {t}host, {t}sid, {t}ord"
            )
        }
        Sort::Newest | Sort::Oldest => format!("{t}rn"),
    };
    if !merge {
        let sql = format!(
            "WITH {pool}, \
             page AS (SELECT p.host, p.sid, p.ord, p.ts_ms, p.rn, p.tid, {} AS score, count(*) OVER () AS total \
             FROM pool p JOIN pi_messages m ON {BY_TID} \
             WHERE p.rn <= ${} ORDER BY {} LIMIT ${lim} OFFSET ${}) \
             SELECT {DOC_COLUMNS}, p.score, p.total, NULL::text[], NULL::text[], NULL::bigint[], \
             (SELECT n FROM pooled) \
             FROM page p JOIN pi_messages m ON {BY_TID} \
             JOIN pi_sessions s ON s.host = p.host AND s.sid = p.sid ORDER BY {}",
            ranked("p."),
            fetch + 1,
            order(""),
            lim + 1,
            order("p."),
        );
        return (
            sql,
            format!("WITH {pool} SELECT least(n, ${}) FROM pooled", fetch + 1),
            cap,
        );
    }
    // The pool's matches (score included); those of sessions with a
    // family grouped by copy, the first in the family's order standing
    // for the others; the page cut from both in the usual order.
    let by_age = "ORDER BY family_age, sid, ord";
    let merged = format!(
        "{pool}, hits AS MATERIALIZED (SELECT p.host, p.sid, p.ord, p.ts_ms, p.rn, {} AS score, \
         s.family, m.copy, s.family_age FROM pool p \
         JOIN pi_messages m ON {BY_TID} \
         JOIN pi_sessions s ON s.host = p.host AND s.sid = p.sid WHERE p.rn <= ${}), \
         merged AS (SELECT host, sid, ord, ts_ms, rn, score, NULL::bigint[] AS c_sids, \
         NULL::integer[] AS c_ords FROM hits WHERE family IS NULL OR copy IS NULL \
         UNION ALL SELECT host, sids[1], ords[1], tss[1], rns[1], scores[1], sids[2:], ords[2:] \
         FROM (SELECT host, array_agg(sid {by_age}) AS sids, array_agg(ord {by_age}) AS ords, \
         array_agg(ts_ms {by_age}) AS tss, array_agg(rn {by_age}) AS rns, \
         array_agg(score {by_age}) AS scores \
         FROM hits WHERE family IS NOT NULL AND copy IS NOT NULL \
         GROUP BY host, family, copy) AS g)",
        ranked("p."),
        fetch + 1,
    );
    let sql = format!(
        "WITH {merged}, page AS (SELECT *, count(*) OVER () AS total FROM merged \
         ORDER BY {} LIMIT ${lim} OFFSET ${}) \
         SELECT {DOC_COLUMNS}, p.score, p.total, c.ids, c.paths, c.lines, (SELECT n FROM pooled) \
         FROM page p JOIN pi_messages m ON m.host = p.host AND m.sid = p.sid AND m.ord = p.ord \
         JOIN pi_sessions s ON s.host = p.host AND s.sid = p.sid \
         LEFT JOIN LATERAL (SELECT array_agg(cs.session_id ORDER BY x.i) AS ids, \
         array_agg(cs.path ORDER BY x.i) AS paths, array_agg(cm.line ORDER BY x.i) AS lines \
         FROM unnest(p.c_sids, p.c_ords) WITH ORDINALITY AS x(sid, ord, i) \
         JOIN pi_sessions cs ON cs.host = p.host AND cs.sid = x.sid \
         JOIN pi_messages cm ON cm.host = p.host AND cm.sid = x.sid AND cm.ord = x.ord) AS c ON TRUE \
         ORDER BY {}",
        order(""),
        lim + 1,
        order("p.")
    );
    (
        sql,
        format!("WITH {merged} SELECT count(*) FROM merged"),
        cap,
    )
}

/// PostgreSQL's plans for the search of `query` (first page, by
/// relevance): `EXPLAIN` of the very statements [`search`] runs (the
/// search is run first, to know which), with `analyze` run and timed
/// (`EXPLAIN ANALYZE`); two plans are parted by [`STATEMENTS_APART`].
pub fn explain(
    db: &Db,
    query: &str,
    filters: &Filters,
    now: &Now,
    analyze: bool,
) -> Result<String, TeamError> {
    // The local limits, before the database is asked anything.
    crate::search::query::limits::check(query)?;
    db.run(schema::check(&db.client, &db.target))?;
    let facts = facts(db)?;
    let (known, pairs) = known(db, query)?;
    let q = query::compile(query, filters, now, &known, &pairs)?;
    let merge = facts.families;
    no_jit(db);
    let plan = plan_pool(db, &q, &facts, pool_size(20, 0) + 1, Sort::Relevance)?;
    let ran = run_search(db, &q, Sort::Relevance, 20, 0, merge, plan)?;
    let mut plans = Vec::new();
    for (sql, q) in &ran.statements {
        let sql = format!("EXPLAIN {}{sql}", if analyze { "ANALYZE " } else { "" });
        let params: Vec<_> = q.params.iter().map(|p| p.typed()).collect();
        let rows = db
            .run(db.client.query_typed(&sql, &params))
            .map_err(|e| db.error("explaining a search", &e))?;
        plans.push(
            rows.iter()
                .map(|r| r.get::<_, String>(0))
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    Ok(plans.join(STATEMENTS_APART))
}

/// What parts the plans of [`explain`] when a search ran two statements
/// (the window's, then every match's).
pub const STATEMENTS_APART: &str = "\n-- the window held too few matches: again over every match\n";

/// The session of a row whose columns from `at` on are
/// [`SESSION_COLUMNS`], with its place in its family.
fn session_at(r: &Row, at: usize) -> SessionRow {
    let started: Option<i64> = r.get(at + 6);
    let last: Option<i64> = r.get(at + 7);
    let lineage = RowLineage {
        parent_session: r.get(at + 11),
        parent_path: r.get(at + 12),
        parent_how: r.get(at + 13),
        fork_ids: r.get(at + 14),
        fork_paths: r.get(at + 15),
        family: None,
        family_age: None,
    };
    SessionRow {
        host: r.get(at),
        session_id: r.get(at + 1),
        path: r.get(at + 2),
        cwd: r.get(at + 3),
        session_name: r.get(at + 4),
        agent: Agent::from_stored(r.get::<_, Option<&str>>(at + 16)),
        title: r.get(at + 5),
        started: started.map(format_millis),
        last: last.map(format_millis),
        messages: r.get::<_, i64>(at + 8) as u64,
        last_ms: last,
        models: r.get(at + 9),
        key: r.get::<_, i64>(at + 10) as u64,
        parent_path: lineage.parent_path.clone(),
        head: 0,
        family: Some(lineage.to_lineage()),
    }
}

pub(super) fn session_of(r: &Row) -> SessionRow {
    session_at(r, 0)
}

/// Where `s.sid` is in [`SESSION_COLUMNS`].
const SID: usize = 10;

pub(super) const SESSION_COLUMNS: &str =
    "s.host, s.session_id, s.path, s.cwd, s.session_name, s.title, \
     s.started_ms, s.last_ms, s.messages, s.models, s.sid, s.parent_session, s.parent_path, \
     s.parent_how, s.fork_ids, s.fork_paths, s.agent";

/// The condition that keeps sessions at or below `$d` (with `$b`, the
/// same ending in `/`) and active at or after `$t`, each when not null.
fn selected(d: usize, b: usize, t: usize) -> String {
    format!(
        "(${d}::text IS NULL OR s.cwd = ${d} OR starts_with(s.cwd, ${b})) \
         AND (${t}::bigint IS NULL OR s.last_ms >= ${t})"
    )
}

/// `dir` (normalized) and the same ending in `/`, as the database keeps
/// text.
fn dir_params(dir: Option<&str>) -> (Option<String>, Option<String>) {
    let dir = dir.map(|d| super::text::pg_text(d).into_owned());
    let below = dir.as_ref().map(|d| {
        if d.ends_with('/') {
            d.clone()
        } else {
            format!("{d}/")
        }
    });
    (dir, below)
}

/// The sessions of the database (or of `host`), newest activity first,
/// at or below `dir` and active at or after `since`: `limit` of them
/// after `offset`, and how many there are.
pub fn sessions(db: &Db, list: &SessionList) -> Result<SessionPage, TeamError> {
    use tokio_postgres::types::Type;
    db.run(schema::check(&db.client, &db.target))?;
    let host = list
        .host
        .as_deref()
        .map(|h| super::text::pg_text(h).into_owned());
    let (dir, below) = dir_params(list.dir.as_deref());
    let since = list.since;
    let condition = format!(
        "($1::text IS NULL OR s.host = $1) AND {}",
        selected(2, 3, 4)
    );
    let sql = format!(
        "SELECT {SESSION_COLUMNS}, count(*) OVER () FROM pi_sessions s WHERE {condition} \
         ORDER BY s.last_ms DESC NULLS LAST, s.path, s.host OFFSET $5 LIMIT $6"
    );
    let offset = i64::try_from(list.offset).unwrap_or(i64::MAX);
    let limit = i64::try_from(list.limit).unwrap_or(i64::MAX);
    let rows = db
        .run(db.client.query_typed(
            &sql,
            &[
                (&host, Type::TEXT),
                (&dir, Type::TEXT),
                (&below, Type::TEXT),
                (&since, Type::INT8),
                (&offset, Type::INT8),
                (&limit, Type::INT8),
            ],
        ))
        .map_err(|e| db.error("listing sessions", &e))?;
    // Every row carries the count of all; a page past the last has none,
    // and the count is asked for alone.
    let total = match rows.first() {
        Some(r) => r.get::<_, i64>(r.len() - 1) as usize,
        None if offset > 0 => db
            .run(db.client.query_typed_one(
                &format!("SELECT count(*) FROM pi_sessions s WHERE {condition}"),
                &[
                    (&host, Type::TEXT),
                    (&dir, Type::TEXT),
                    (&below, Type::TEXT),
                    (&since, Type::INT8),
                ],
            ))
            .map_err(|e| db.error("counting sessions", &e))?
            .get::<_, i64>(0) as usize,
        None => 0,
    };
    Ok(SessionPage {
        sessions: rows.iter().map(session_of).collect(),
        total,
    })
}

/// The sessions `req` finds, best first (see the [module
/// documentation](self)), at or below its `dir` and active at or after
/// its `since`: `limit` of them after `offset`, and how many in all.
pub fn find_sessions(db: &Db, req: &SessionQuery) -> Result<SessionSearch, TeamError> {
    let SessionQuery {
        query,
        filters,
        now,
        offset,
        limit,
        ..
    } = req;
    let (query, dir, since, offset, limit) = (
        query.as_str(),
        req.dir.as_deref(),
        req.since,
        *offset,
        *limit,
    );
    // The local limits, before the database is asked anything.
    crate::search::query::limits::check(query)?;
    let offset = crate::search::query::limits::check_offset(offset as u64)?;
    db.run(schema::check(&db.client, &db.target))?;
    let (known, pairs) = known(db, query)?;
    let q = query::compile(query, filters, now, &known, &pairs)?;
    let score = q
        .rank
        .map_or("0::real".to_owned(), |n| query::score(n, q.others));
    let mut params = q.params.clone();
    // Names and titles, unless the query is about messages' own facts.
    let mut parts = Vec::new();
    for scope in [Scope::Names, Scope::Titles] {
        if crate::search::sessions::about_messages(query, filters) {
            parts.push(
                "SELECT NULL::text AS host, NULL::bigint AS sid, NULL::real AS score WHERE FALSE"
                    .to_owned(),
            );
            continue;
        }
        let sq = query::compile_sessions(query, filters, now, scope, params, &known, &pairs)?;
        let score = sq.rank.map_or("0::real".to_owned(), |n| {
            query::session_score(scope, n, sq.others)
        });
        parts.push(format!(
            "SELECT s.host, s.sid, {score} AS score FROM pi_sessions s WHERE {}",
            sq.condition
        ));
        params = sq.params;
    }
    let (dir, below) = dir_params(dir);
    let n = params.len();
    params.push(dir.map_or(Param::NullText, Param::Text));
    params.push(below.map_or(Param::NullText, Param::Text));
    params.push(since.map_or(Param::NullInt, Param::Int));
    params.push(Param::Int(i64::try_from(limit).unwrap_or(i64::MAX)));
    params.push(Param::Int(offset as i64));
    let weight = crate::search::sessions::MATCHES_WEIGHT;
    let sql = format!(
        "WITH hits AS (SELECT m.host, m.sid, m.ord, m.ts_ms, {score} AS score {FROM} WHERE {cond}), \
         best AS (SELECT DISTINCT ON (host, sid) host, sid, ord, score, \
         count(*) OVER (PARTITION BY host, sid) AS matches FROM hits \
         ORDER BY host, sid, score DESC, ord), \
         names AS ({names}), titles AS ({titles}), \
         found AS (SELECT host, sid FROM best UNION SELECT host, sid FROM names \
         UNION SELECT host, sid FROM titles), \
         ranked AS (SELECT f.host, f.sid, b.ord, b.score AS m_score, coalesce(b.matches, 0) AS matches, \
         n.score AS n_score, t.score AS t_score, \
         CASE WHEN n.sid IS NOT NULL THEN 0 WHEN t.sid IS NOT NULL THEN 1 ELSE 2 END AS grp, \
         (coalesce(n.score, 0) + coalesce(t.score, 0) + coalesce(b.score, 0) \
         + {weight} * ln(1 + coalesce(b.matches, 0)::float8))::real AS score \
         FROM found f LEFT JOIN best b ON b.host = f.host AND b.sid = f.sid \
         LEFT JOIN names n ON n.host = f.host AND n.sid = f.sid \
         LEFT JOIN titles t ON t.host = f.host AND t.sid = f.sid) \
         SELECT {SESSION_COLUMNS}, r.grp, r.score, coalesce(r.n_score, 0)::real, \
         coalesce(r.t_score, 0)::real, r.matches, s.family, m.copy, r.m_score, {DOC_COLUMNS}, \
         count(*) OVER () \
         FROM ranked r JOIN pi_sessions s ON s.host = r.host AND s.sid = r.sid \
         LEFT JOIN pi_messages m ON m.host = r.host AND m.sid = r.sid AND m.ord = r.ord \
         WHERE {selected} \
         ORDER BY r.grp, r.score DESC, s.last_ms DESC NULLS LAST, s.path, s.host \
         LIMIT ${lim} OFFSET ${off}",
        cond = q.condition,
        names = parts[0],
        titles = parts[1],
        selected = selected(n + 1, n + 2, n + 3),
        lim = n + 4,
        off = n + 5,
    );
    let typed: Vec<_> = params.iter().map(|p| p.typed()).collect();
    let rows = db
        .run(db.client.query_typed(&sql, &typed))
        .map_err(|e| db.error("finding sessions", &e))?;
    // Every row carries the count of all; a page past the last has none,
    // and the count is asked for alone.
    let total = match rows.first() {
        Some(r) => r.get::<_, i64>(r.len() - 1) as usize,
        None if offset > 0 => {
            let mut params = params.clone();
            let at = params.len();
            params[at - 2] = Param::Int(1);
            params[at - 1] = Param::Int(0);
            let typed: Vec<_> = params.iter().map(|p| p.typed()).collect();
            db.run(db.client.query_typed(&sql, &typed))
                .map_err(|e| db.error("finding sessions", &e))?
                .first()
                .map_or(0, |r| r.get::<_, i64>(r.len() - 1) as usize)
        }
        None => 0,
    };
    let snipper = Snipper::new(&q, req.snippet_chars);
    let width = SESSION_COLUMNS.split(',').count();
    let mut out = Vec::with_capacity(rows.len());
    // The shown messages that may have copies: (row, host, sid, family,
    // copy key).
    let mut copied = Vec::new();
    for r in &rows {
        let s = session_at(r, 0);
        let matched = match r.get::<_, i32>(width) {
            0 => Matched::Name,
            1 => Matched::Title,
            _ => Matched::Messages,
        };
        let score: f32 = r.get(width + 1);
        let name_score: f32 = r.get(width + 2);
        let title_score: f32 = r.get(width + 3);
        let matches: i64 = r.get(width + 4);
        let family: Option<i64> = r.get(width + 5);
        let copy: Option<i64> = r.get(width + 6);
        let best: Option<f32> = r.get(width + 7);
        let at = width + 8;
        // The best message, when a message matched (its host is null
        // otherwise: the join found none).
        let hit = match (best, r.get::<_, Option<String>>(at)) {
            (Some(best), Some(_)) => {
                // The session says whose it is; the hit inside it as a
                // local session's.
                let doc = StoredDoc {
                    host: None,
                    ..doc_at(r, at)
                };
                if let (Some(f), Some(c)) = (family, copy) {
                    let host = s.host.clone().unwrap_or_default();
                    copied.push((out.len(), host, r.get::<_, i64>(SID), f, c));
                }
                Some(snipper.hit(doc, best))
            }
            _ => None,
        };
        let (snippet, highlights) = match &hit {
            Some(h) => (h.snippet.clone(), h.highlights.clone()),
            None => (
                s.title
                    .clone()
                    .or_else(|| s.session_name.clone())
                    .unwrap_or_default(),
                Vec::new(),
            ),
        };
        out.push(SessionHit {
            session: s,
            matched,
            score,
            name_score,
            title_score,
            matches: matches as u64,
            hit,
            snippet,
            highlights,
        });
    }
    fill_copies(db, &mut out, &copied)?;
    Ok(SessionSearch {
        hits: out,
        total,
        warnings: q.warnings,
    })
}

/// Fill in the copies of the shown messages `copied` (each: the row of
/// `hits`, its host, session, family and copy key): the other sessions of
/// the family holding the same message, whatever they matched, in the
/// family's order (as locally, where a list of one hit per session fills
/// them the same way).
fn fill_copies(
    db: &Db,
    hits: &mut [SessionHit],
    copied: &[(usize, String, i64, i64, i64)],
) -> Result<(), TeamError> {
    use tokio_postgres::types::Type;
    if copied.is_empty() {
        return Ok(());
    }
    let hosts: Vec<&str> = copied.iter().map(|c| c.1.as_str()).collect();
    let sids: Vec<i64> = copied.iter().map(|c| c.2).collect();
    let families: Vec<i64> = copied.iter().map(|c| c.3).collect();
    let keys: Vec<i64> = copied.iter().map(|c| c.4).collect();
    let rows = db
        .run(db.client.query_typed(
            "SELECT x.i, cs.session_id, cs.path, cm.line \
             FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) WITH ORDINALITY \
             AS x(host, sid, family, copy, i) \
             JOIN pi_sessions cs ON cs.host = x.host AND cs.family = x.family AND cs.sid <> x.sid \
             JOIN pi_messages cm ON cm.host = cs.host AND cm.sid = cs.sid AND cm.copy = x.copy \
             ORDER BY x.i, cs.family_age, cm.ord",
            &[
                (&hosts, Type::TEXT_ARRAY),
                (&sids, Type::INT8_ARRAY),
                (&families, Type::INT8_ARRAY),
                (&keys, Type::INT8_ARRAY),
            ],
        ))
        .map_err(|e| db.error("finding the copies of messages", &e))?;
    for r in &rows {
        let i = r.get::<_, i64>(0) as usize - 1;
        if let Some(hit) = hits[copied[i].0].hit.as_mut() {
            hit.copies.push(CopyRef {
                session_id: r.get(1),
                path: r.get(2),
                line: r.get::<_, i64>(3) as u64,
            });
        }
    }
    Ok(())
}

/// The session of `host` whose file is `path`.
pub fn session_by_path(db: &Db, host: &str, path: &str) -> Result<Option<SessionRow>, TeamError> {
    use tokio_postgres::types::Type;
    let host = super::text::pg_text(host);
    let path = super::text::pg_text(path);
    let sql =
        format!("SELECT {SESSION_COLUMNS} FROM pi_sessions s WHERE s.host = $1 AND s.path = $2");
    let row = db
        .run(db.client.query_typed_opt(
            &sql,
            &[(&host.as_ref(), Type::TEXT), (&path.as_ref(), Type::TEXT)],
        ))
        .map_err(|e| db.error("reading a session of the family", &e))?;
    Ok(row.as_ref().map(session_of))
}

/// What `show` says of a session's family: its lineage and, when its
/// parent is in the database, the entry where it left the parent (its
/// last message the parent holds too: the same entry id and text).
pub fn lineage(
    db: &Db,
    host: &str,
    path: &str,
) -> Result<Option<(Lineage, Option<String>)>, TeamError> {
    use tokio_postgres::types::Type;
    let Some(session) = session_by_path(db, host, path)? else {
        return Ok(None);
    };
    let host = super::text::pg_text(host).into_owned();
    let path = super::text::pg_text(path).into_owned();
    let lineage = session.family.unwrap_or_default();
    let Some(parent) = lineage.parent.as_ref().filter(|p| p.session.is_some()) else {
        return Ok(Some((lineage, None)));
    };
    let at = db
        .run(db.client.query_typed_opt(
            "SELECT m.entry_id FROM pi_messages m JOIN pi_sessions s ON s.host = m.host AND s.sid = m.sid \
             WHERE s.host = $1 AND s.path = $2 AND m.entry_id IS NOT NULL \
             AND m.copy IN (SELECT pm.copy FROM pi_messages pm JOIN pi_sessions ps \
             ON ps.host = pm.host AND ps.sid = pm.sid WHERE ps.host = $1 AND ps.path = $3 \
             AND pm.copy IS NOT NULL) ORDER BY m.ord DESC LIMIT 1",
            &[
                (&host, Type::TEXT),
                (&path, Type::TEXT),
                (&parent.path, Type::TEXT),
            ],
        ))
        .map_err(|e| db.error("reading where the session was forked", &e))?
        .map(|r| r.get::<_, String>(0));
    Ok(Some((lineage, at)))
}
/// The messages of the session `arg` names (a path, a session id, or a
/// unique prefix of one), of `host` when given, in file order.
pub fn show(db: &Db, arg: &str, host: Option<&str>) -> Result<Vec<StoredDoc>, TeamError> {
    use tokio_postgres::types::Type;
    db.run(schema::check(&db.client, &db.target))?;
    let arg = super::text::pg_text(arg).into_owned();
    let host = host.map(|h| super::text::pg_text(h).into_owned());
    let rows = db
        .run(db.client.query_typed(
            "SELECT s.host, s.sid, s.session_id, s.path, \
             CASE WHEN s.path = $1 THEN 0 WHEN s.session_id = $1 THEN 1 ELSE 2 END AS how \
             FROM pi_sessions s WHERE ($2::text IS NULL OR s.host = $2) \
             AND (s.path = $1 OR starts_with(s.session_id, $1)) ORDER BY how, s.host, s.path LIMIT 50",
            &[(&arg, Type::TEXT), (&host, Type::TEXT)],
        ))
        .map_err(|e| db.error("finding the session", &e))?;
    let best = rows.first().map(|r| r.get::<_, i32>(4));
    let found: Vec<&Row> = rows
        .iter()
        .filter(|r| Some(r.get::<_, i32>(4)) == best)
        .collect();
    if found.is_empty() {
        return Err(TeamError::Lookup(format!(
            "no session in the database matches {arg:?}: check `pi-index sessions --db URL`"
        )));
    }
    let hosts: std::collections::BTreeSet<String> = found.iter().map(|r| r.get(0)).collect();
    let ids: std::collections::BTreeSet<String> = found.iter().map(|r| r.get(2)).collect();
    if hosts.len() > 1 {
        return Err(TeamError::Lookup(format!(
            "{arg:?} names sessions of {} hosts ({}): choose one with --host",
            hosts.len(),
            hosts.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    if ids.len() > 1 {
        return Err(TeamError::Lookup(format!(
            "{arg:?} matches {} sessions ({}): give more of the id",
            ids.len(),
            ids.into_iter().take(5).collect::<Vec<_>>().join(", ")
        )));
    }
    let host: String = found[0].get(0);
    let sids: Vec<i64> = found.iter().map(|r| r.get(1)).collect();
    let sql = format!(
        "SELECT {DOC_COLUMNS} {FROM} WHERE m.host = $1 AND m.sid = ANY($2) ORDER BY s.path, m.ord"
    );
    let rows = db
        .run(
            db.client
                .query_typed(&sql, &[(&host, Type::TEXT), (&sids, Type::INT8_ARRAY)]),
        )
        .map_err(|e| db.error("reading the session", &e))?;
    Ok(rows.iter().map(doc_of).collect())
}
