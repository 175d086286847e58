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

use std::collections::BTreeMap;

use serde::Serialize;
use tokio_postgres::Row;

use super::query::{self, SqlQuery};
use super::{schema, Db, TeamError};
use crate::pi::time::format_millis;
use crate::pi::{Edited, Role};
use crate::search::query::{Filters, Now, Warning};
use crate::search::snippet::{head, Snippets};
use crate::search::{Hit, SessionRow, Sort, StoredDoc};

/// A hit from the team database.
#[derive(Clone, Debug, Serialize)]
pub struct TeamHit {
    /// The host that pushed it.
    pub host: String,
    /// The hit, as a local search gives it.
    #[serde(flatten)]
    pub hit: Hit,
}

/// A session from the team database.
#[derive(Clone, Debug, Serialize)]
pub struct TeamSession {
    /// The host that pushed it.
    pub host: String,
    /// The session, as `pi-index sessions` lists it.
    #[serde(flatten)]
    pub session: SessionRow,
}

/// A message from the team database, as `show --format json` prints it.
#[derive(Clone, Debug, Serialize)]
pub struct TeamDoc {
    /// The host that pushed it.
    pub host: String,
    /// The message.
    #[serde(flatten)]
    pub doc: StoredDoc,
}

/// The result of a search.
#[derive(Debug)]
pub struct TeamResult {
    /// The hits, in order.
    pub hits: Vec<TeamHit>,
    /// How many messages matched in all.
    pub total: usize,
    /// What was repaired or ignored in the query.
    pub warnings: Vec<Warning>,
}

const DOC_COLUMNS: &str =
    "m.host, s.session_id, s.path, m.line, m.off, m.entry_id, m.role, m.ts_ms, \
     s.cwd, s.session_name, m.model, m.active, m.edited, m.replacement, m.text";

const FROM: &str = "FROM pi_messages m JOIN pi_sessions s ON s.host = m.host AND s.sid = m.sid";

fn doc_of(r: &Row) -> (String, StoredDoc) {
    let ts: Option<i64> = r.get(7);
    let role: String = r.get(6);
    let doc = StoredDoc {
        session_id: r.get(1),
        path: r.get(2),
        line: r.get::<_, i64>(3) as u64,
        offset: r.get::<_, i64>(4) as u64,
        entry_id: r.get(5),
        role: role.parse().unwrap_or(Role::User),
        timestamp: ts.map(format_millis),
        timestamp_ms: ts,
        cwd: r.get(8),
        session_name: r.get(9),
        model: r.get(10),
        active: r.get(11),
        edited: Edited::from_rank(r.get::<_, i16>(12) as u64),
        replacement: r.get(13),
        text: r.get(14),
    };
    (r.get(0), doc)
}

/// The start of `text`, at most `chars` characters, on one line (what a
/// local hit with no highlighted word shows).
fn lead(text: &str, chars: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(chars) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// Snippets of hits for the query's terms, by pi-index's own highlighter.
struct Snipper {
    text: Snippets,
    chars: usize,
}

impl Snipper {
    fn new(q: &SqlQuery, chars: usize) -> Snipper {
        let weights: BTreeMap<String, f32> = q.terms.iter().map(|t| (t.clone(), 1.0)).collect();
        let mut text = Snippets::new(
            weights,
            crate::index::tokenizer::analyzer(),
            crate::index::Fields::get().text,
        );
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

/// Run `query` (with the flags' `filters`) against the database: hits
/// `offset..offset + limit` in `sort` order.
#[allow(clippy::too_many_arguments)]
pub fn search(
    db: &Db,
    query: &str,
    filters: &Filters,
    now: &Now,
    sort: Sort,
    limit: usize,
    offset: usize,
    snippet_chars: usize,
) -> Result<TeamResult, TeamError> {
    db.run(schema::check(&db.client, &db.target))?;
    let mut q = query::compile(query, filters, now)?;
    let sql = search_sql(&mut q, sort, limit, offset);
    let params: Vec<_> = q.params.iter().map(|p| p.typed()).collect();
    let rows = db
        .run(db.client.query_typed(&sql, &params))
        .map_err(|e| db.error("searching", &e))?;
    let mut total = rows
        .first()
        .map_or(0, |r| r.get::<_, i64>("total") as usize);
    if rows.is_empty() && offset > 0 {
        // Past the last hit: how many there are, for the message.
        let sql = format!("SELECT count(*) {FROM} WHERE {}", q.condition);
        let n = q.params.len() - 2;
        let row = db
            .run(db.client.query_typed_one(&sql, &params[..n]))
            .map_err(|e| db.error("counting hits", &e))?;
        total = row.get::<_, i64>(0) as usize;
    }
    let snipper = Snipper::new(&q, snippet_chars);
    let hits = rows
        .iter()
        .map(|r| {
            let (host, doc) = doc_of(r);
            let score: f32 = r.get("score");
            TeamHit {
                host,
                hit: snipper.hit(doc, score),
            }
        })
        .collect();
    Ok(TeamResult {
        hits,
        total,
        warnings: q.warnings,
    })
}

/// The statement of a search (its last two parameters, pushed here, are
/// the limit and the offset).
fn search_sql(q: &mut SqlQuery, sort: Sort, limit: usize, offset: usize) -> String {
    let score = match (sort, q.rank) {
        (Sort::Relevance, Some(n)) => query::score(n),
        _ => "0::real".to_owned(),
    };
    let order = match sort {
        Sort::Relevance => "score DESC, m.ts_ms DESC NULLS LAST, m.host, m.sid, m.ord",
        Sort::Newest => "m.ts_ms DESC NULLS LAST, m.host, m.sid, m.ord",
        Sort::Oldest => "m.ts_ms ASC NULLS LAST, m.host, m.sid, m.ord",
    };
    let lim = q.params.len() + 1;
    q.params.push(query::Param::Int(limit as i64));
    q.params.push(query::Param::Int(offset as i64));
    format!(
        "SELECT {DOC_COLUMNS}, {score} AS score, count(*) OVER () AS total {FROM} \
         WHERE {} ORDER BY {order} LIMIT ${lim} OFFSET ${}",
        q.condition,
        lim + 1
    )
}

/// PostgreSQL's plan for the search of `query` (first page, by
/// relevance): `EXPLAIN` of the very statement [`search`] runs.
pub fn explain(db: &Db, query: &str, filters: &Filters, now: &Now) -> Result<String, TeamError> {
    db.run(schema::check(&db.client, &db.target))?;
    let mut q = query::compile(query, filters, now)?;
    let sql = format!("EXPLAIN {}", search_sql(&mut q, Sort::Relevance, 20, 0));
    let params: Vec<_> = q.params.iter().map(|p| p.typed()).collect();
    let rows = db
        .run(db.client.query_typed(&sql, &params))
        .map_err(|e| db.error("explaining a search", &e))?;
    Ok(rows
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect::<Vec<_>>()
        .join("\n"))
}

fn session_of(r: &Row) -> TeamSession {
    let started: Option<i64> = r.get(6);
    let last: Option<i64> = r.get(7);
    TeamSession {
        host: r.get(0),
        session: SessionRow {
            session_id: r.get(1),
            path: r.get(2),
            cwd: r.get(3),
            session_name: r.get(4),
            title: r.get(5),
            started: started.map(format_millis),
            last: last.map(format_millis),
            messages: r.get::<_, i64>(8) as u64,
            last_ms: last,
            models: r.get(9),
            key: r.get::<_, i64>(10) as u64,
            parent_path: None,
            head: 0,
            family: None,
        },
    }
}

const SESSION_COLUMNS: &str = "s.host, s.session_id, s.path, s.cwd, s.session_name, s.title, \
     s.started_ms, s.last_ms, s.messages, s.models, s.sid";

/// Every session of the database (or of `host`), newest activity first,
/// at or below `dir` and active at or after `since`.
pub fn sessions(
    db: &Db,
    host: Option<&str>,
    dir: Option<&str>,
    since: Option<i64>,
) -> Result<Vec<TeamSession>, TeamError> {
    use tokio_postgres::types::Type;
    db.run(schema::check(&db.client, &db.target))?;
    let host = host.map(|h| super::push::pg_text(h).into_owned());
    let dir = dir.map(|d| super::push::pg_text(d).into_owned());
    let below = dir.as_ref().map(|d| {
        if d.ends_with('/') {
            d.clone()
        } else {
            format!("{d}/")
        }
    });
    let sql = format!(
        "SELECT {SESSION_COLUMNS} FROM pi_sessions s \
         WHERE ($1::text IS NULL OR s.host = $1) \
         AND ($2::text IS NULL OR s.cwd = $2 OR starts_with(s.cwd, $3)) \
         AND ($4::bigint IS NULL OR s.last_ms >= $4) \
         ORDER BY s.last_ms DESC NULLS LAST, s.path, s.host"
    );
    let rows = db
        .run(db.client.query_typed(
            &sql,
            &[
                (&host, Type::TEXT),
                (&dir, Type::TEXT),
                (&below, Type::TEXT),
                (&since, Type::INT8),
            ],
        ))
        .map_err(|e| db.error("listing sessions", &e))?;
    Ok(rows.iter().map(session_of).collect())
}

/// A session found by a query: the session, how many of its messages
/// match, and its best hit.
#[derive(Clone, Debug, Serialize)]
pub struct TeamSessionHit {
    /// The host that pushed it.
    pub host: String,
    /// The session.
    #[serde(flatten)]
    pub session: SessionRow,
    /// What matched: always `"messages"` on the server (names and titles
    /// are not ranked there).
    pub matched: &'static str,
    /// Its best message's score.
    pub score: f32,
    /// Always 0: names are not ranked on the server (the field is there
    /// so the object has the local one's keys).
    pub name_score: f32,
    /// Always 0: titles are not ranked on the server.
    pub title_score: f32,
    /// How many of its messages match.
    pub matches: u64,
    /// Its best matching message, with its snippet.
    pub hit: Hit,
    /// The best message's snippet.
    pub snippet: String,
}

/// The sessions whose messages match `query`, best first (by their best
/// message's `ts_rank_cd`), at most `limit`.
pub fn find_sessions(
    db: &Db,
    query: &str,
    filters: &Filters,
    now: &Now,
    limit: usize,
) -> Result<(Vec<TeamSessionHit>, Vec<Warning>), TeamError> {
    db.run(schema::check(&db.client, &db.target))?;
    let mut q = query::compile(query, filters, now)?;
    let score = q.rank.map_or("0::real".to_owned(), query::score);
    let lim = q.params.len() + 1;
    q.params.push(query::Param::Int(limit as i64));
    let sql = format!(
        "WITH hits AS (SELECT m.host, m.sid, m.ord, m.ts_ms, {score} AS score {FROM} WHERE {}), \
         best AS (SELECT DISTINCT ON (host, sid) host, sid, ord, score, ts_ms, \
         count(*) OVER (PARTITION BY host, sid) AS matches FROM hits \
         ORDER BY host, sid, score DESC, ts_ms DESC NULLS LAST, ord) \
         SELECT {SESSION_COLUMNS}, b.matches, b.score, {DOC_COLUMNS} \
         FROM best b JOIN pi_sessions s ON s.host = b.host AND s.sid = b.sid \
         JOIN pi_messages m ON m.host = b.host AND m.sid = b.sid AND m.ord = b.ord \
         ORDER BY b.score DESC, s.last_ms DESC NULLS LAST, s.path, s.host LIMIT ${lim}",
        q.condition
    );
    let params: Vec<_> = q.params.iter().map(|p| p.typed()).collect();
    let rows = db
        .run(db.client.query_typed(&sql, &params))
        .map_err(|e| db.error("finding sessions", &e))?;
    let snipper = Snipper::new(&q, 160);
    let width = SESSION_COLUMNS.split(',').count();
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let s = session_of(r);
        let matches: i64 = r.get(width);
        let score: f32 = r.get(width + 1);
        // The message's columns follow: read them by shifting.
        let ts: Option<i64> = r.get(width + 2 + 7);
        let role: String = r.get(width + 2 + 6);
        let doc = StoredDoc {
            session_id: r.get(width + 2 + 1),
            path: r.get(width + 2 + 2),
            line: r.get::<_, i64>(width + 2 + 3) as u64,
            offset: r.get::<_, i64>(width + 2 + 4) as u64,
            entry_id: r.get(width + 2 + 5),
            role: role.parse().unwrap_or(Role::User),
            timestamp: ts.map(format_millis),
            timestamp_ms: ts,
            cwd: r.get(width + 2 + 8),
            session_name: r.get(width + 2 + 9),
            model: r.get(width + 2 + 10),
            active: r.get(width + 2 + 11),
            edited: Edited::from_rank(r.get::<_, i16>(width + 2 + 12) as u64),
            replacement: r.get(width + 2 + 13),
            text: r.get(width + 2 + 14),
        };
        let hit = snipper.hit(doc, score);
        out.push(TeamSessionHit {
            host: s.host,
            session: s.session,
            matched: "messages",
            score,
            name_score: 0.0,
            title_score: 0.0,
            matches: matches as u64,
            snippet: hit.snippet.clone(),
            hit,
        });
    }
    Ok((out, q.warnings))
}

/// The messages of the session `arg` names (a path, a session id, or a
/// unique prefix of one), of `host` when given, in file order.
pub fn show(db: &Db, arg: &str, host: Option<&str>) -> Result<Vec<TeamDoc>, TeamError> {
    use tokio_postgres::types::Type;
    db.run(schema::check(&db.client, &db.target))?;
    let arg = super::push::pg_text(arg).into_owned();
    let host = host.map(|h| super::push::pg_text(h).into_owned());
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
    Ok(rows
        .iter()
        .map(|r| {
            let (host, doc) = doc_of(r);
            TeamDoc { host, doc }
        })
        .collect())
}
