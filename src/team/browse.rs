//! What the front ends read from the team database beside searches
//! ([`super::search`]): a session by its id, its messages a page at a
//! time or around a place, and what the database holds. Each statement
//! reads a bounded page, whatever the database holds.

use std::collections::BTreeMap;

use tokio_postgres::types::Type;

use super::search::{doc_of, session_of, DOC_COLUMNS, FROM, SESSION_COLUMNS};
use super::{schema, Db, TeamError};
use crate::pi::time::format_millis;
use crate::read::{
    Activity, HostStats, Place, Preview, SessionRow, Stats, StoredDoc, Target, Window,
};

/// The sessions with the id `id` (of `host` when given): one per host,
/// its newest file when the host pushed several with that id; by host.
/// A prefix is not an id.
pub fn sessions_with_id(
    db: &Db,
    id: &str,
    host: Option<&str>,
) -> Result<Vec<SessionRow>, TeamError> {
    db.run(schema::check(&db.client, &db.target))?;
    let id = super::text::pg_text(id).into_owned();
    let host = host.map(|h| super::text::pg_text(h).into_owned());
    let sql = format!(
        "SELECT DISTINCT ON (s.host) {SESSION_COLUMNS} FROM pi_sessions s \
         WHERE s.session_id = $1 AND ($2::text IS NULL OR s.host = $2) \
         ORDER BY s.host, s.last_ms DESC NULLS LAST, s.path LIMIT 100"
    );
    let rows = db
        .run(
            db.client
                .query_typed(&sql, &[(&id, Type::TEXT), (&host, Type::TEXT)]),
        )
        .map_err(|e| db.error("finding the session", &e))?;
    Ok(rows.iter().map(session_of).collect())
}

/// How many messages of `s` the window's branch holds, and the window's
/// messages in file order.
pub fn messages(db: &Db, s: &SessionRow, w: Window) -> Result<(usize, Vec<StoredDoc>), TeamError> {
    let sid = s.key as i64;
    let host = s.host.as_deref().unwrap_or_default();
    let total: i64 = db
        .run(db.client.query_typed_one(
            "SELECT count(*) FROM pi_messages m WHERE m.host = $1 AND m.sid = $2 \
             AND (NOT $3 OR m.active)",
            &[
                (&host, Type::TEXT),
                (&sid, Type::INT8),
                (&w.active_only, Type::BOOL),
            ],
        ))
        .map_err(|e| db.error("counting the session's messages", &e))?
        .get(0);
    let offset = i64::try_from(w.offset).unwrap_or(i64::MAX);
    let limit = i64::try_from(w.limit).unwrap_or(i64::MAX);
    let sql = format!(
        "SELECT {DOC_COLUMNS} {FROM} WHERE m.host = $1 AND m.sid = $2 AND (NOT $3 OR m.active) \
         ORDER BY m.ord OFFSET $4 LIMIT $5"
    );
    let rows = db
        .run(db.client.query_typed(
            &sql,
            &[
                (&host, Type::TEXT),
                (&sid, Type::INT8),
                (&w.active_only, Type::BOOL),
                (&offset, Type::INT8),
                (&limit, Type::INT8),
            ],
        ))
        .map_err(|e| db.error("reading the session's messages", &e))?;
    Ok((total as usize, rows.iter().map(doc_of).collect()))
}

/// How many messages of `s` (of its active branch with `active_only`)
/// come before line `line` of its file: where a page showing that line
/// starts.
pub fn messages_before(
    db: &Db,
    s: &SessionRow,
    active_only: bool,
    line: u64,
) -> Result<usize, TeamError> {
    let sid = s.key as i64;
    let host = s.host.as_deref().unwrap_or_default();
    let line = i64::try_from(line).unwrap_or(i64::MAX);
    let n: i64 = db
        .run(db.client.query_typed_one(
            "SELECT count(*) FROM pi_messages m WHERE m.host = $1 AND m.sid = $2 \
             AND (NOT $3 OR m.active) AND m.line < $4",
            &[
                (&host, Type::TEXT),
                (&sid, Type::INT8),
                (&active_only, Type::BOOL),
                (&line, Type::INT8),
            ],
        ))
        .map_err(|e| db.error("finding the message's place", &e))?
        .get(0);
    Ok(n as usize)
}

/// What the database holds: every host's sessions and messages, and
/// each host's.
pub fn stats(db: &Db) -> Result<Stats, TeamError> {
    db.run(schema::check(&db.client, &db.target))?;
    let failed = |e: tokio_postgres::Error| db.error("counting what the database holds", &e);
    let hosts = db
        .run(db.client.query(
            "SELECT s.host, count(*), sum(s.messages)::bigint, max(s.last_ms), \
             min(s.started_ms), count(*) FILTER (WHERE s.parent_path IS NOT NULL), \
             (SELECT (extract(epoch FROM h.pushed_at) * 1000)::bigint FROM pi_hosts h \
             WHERE h.host = s.host) \
             FROM pi_sessions s GROUP BY s.host ORDER BY count(*) DESC, s.host COLLATE \"C\"",
            &[],
        ))
        .map_err(failed)?;
    let mut out = Stats {
        place: Place::Database(db.target.clone()),
        sessions: 0,
        messages: 0,
        copies: None,
        forks: 0,
        messages_by_role: BTreeMap::new(),
        top_projects: None,
        hosts: None,
        first: None,
        last: None,
        build: None,
    };
    let mut each = Vec::with_capacity(hosts.len());
    let (mut first, mut last) = (None::<i64>, None::<i64>);
    for r in &hosts {
        let sessions = r.get::<_, i64>(1) as u64;
        let messages = r.get::<_, Option<i64>>(2).unwrap_or(0) as u64;
        let host_last: Option<i64> = r.get(3);
        let host_first: Option<i64> = r.get(4);
        out.sessions += sessions;
        out.messages += messages;
        out.forks += r.get::<_, i64>(5) as u64;
        last = last.max(host_last);
        first = match (first, host_first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        each.push(HostStats {
            host: r.get(0),
            sessions,
            messages,
            last: host_last.map(format_millis),
            pushed_at: r.get::<_, Option<i64>>(6).map(format_millis),
        });
    }
    out.hosts = Some(each);
    out.first = first.map(format_millis);
    out.last = last.map(format_millis);
    for r in db
        .run(db.client.query(
            "SELECT m.role, count(*) FROM pi_messages m GROUP BY m.role",
            &[],
        ))
        .map_err(failed)?
    {
        out.messages_by_role
            .insert(r.get(0), r.get::<_, i64>(1) as u64);
    }
    Ok(out)
}

/// The charts over the `days` days ending with the day of `now_ms` (at
/// most `top` directories and models), as [`Activity`] draws them
/// locally.
pub fn activity(db: &Db, now_ms: i64, days: usize, top: usize) -> Result<Activity, TeamError> {
    db.run(schema::check(&db.client, &db.target))?;
    let failed = |e: tokio_postgres::Error| db.error("counting what the database holds", &e);
    let (from_day, to_day) = Activity::window(now_ms, days);
    let per_day = db
        .run(db.client.query_typed(
            "SELECT (m.ts_ms / 86400000)::bigint, count(*) FROM pi_messages m \
             WHERE m.ts_ms >= $1 AND m.ts_ms < $2 GROUP BY 1",
            &[
                (&(from_day * Activity::DAY), Type::INT8),
                (&((to_day + 1) * Activity::DAY), Type::INT8),
            ],
        ))
        .map_err(failed)?;
    let top_n = i64::try_from(top).unwrap_or(i64::MAX);
    let counted = |sql: &str| -> Result<Vec<(String, u64)>, TeamError> {
        Ok(db
            .run(db.client.query_typed(sql, &[(&top_n, Type::INT8)]))
            .map_err(failed)?
            .iter()
            .map(|r| (r.get(0), r.get::<_, i64>(1) as u64))
            .collect())
    };
    let dirs = counted(
        "SELECT coalesce(s.cwd, '(unknown)'), count(*) FROM pi_sessions s GROUP BY 1 \
         ORDER BY count(*) DESC, coalesce(s.cwd, '(unknown)') COLLATE \"C\" LIMIT $1",
    )?;
    let models = counted(
        "SELECT m.model, count(*) FROM pi_messages m WHERE m.model IS NOT NULL \
         GROUP BY 1 ORDER BY count(*) DESC, m.model COLLATE \"C\" LIMIT $1",
    )?;
    Ok(Activity::new(
        now_ms,
        days,
        top,
        per_day
            .iter()
            .map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1) as u64)),
        dirs,
        models,
    ))
}

/// The `context` messages either side of `target` in `s`, every branch,
/// in file order (the order of `ord`, as a push keeps it): a count finds
/// the target's place, and only the window is read.
pub fn preview(
    db: &Db,
    s: &SessionRow,
    target: &Target,
    context: usize,
) -> Result<Preview, TeamError> {
    let sid = s.key as i64;
    let host = s.host.as_deref().unwrap_or_default();
    let total: i64 = db
        .run(db.client.query_typed_one(
            "SELECT count(*) FROM pi_messages m WHERE m.host = $1 AND m.sid = $2",
            &[(&host, Type::TEXT), (&sid, Type::INT8)],
        ))
        .map_err(|e| db.error("counting the session's messages", &e))?
        .get(0);
    let total = total as usize;
    if total == 0 {
        return Ok(Preview::default());
    }
    let at = match *target {
        Target::Start => 0,
        Target::End => total - 1,
        Target::Message { offset, role } => {
            // Messages of the lines before the target's, then those of its
            // line before its role (an entry may hold several).
            let offset = i64::try_from(offset).unwrap_or(i64::MAX);
            let before: Vec<String> = crate::pi::Role::ALL
                .iter()
                .filter(|r| r.rank() < role)
                .map(|r| r.as_str().to_owned())
                .collect();
            let n: i64 = db
                .run(db.client.query_typed_one(
                    "SELECT count(*) FROM pi_messages m WHERE m.host = $1 AND m.sid = $2 \
                     AND (m.off < $3 OR (m.off = $3 AND m.role = ANY($4)))",
                    &[
                        (&host, Type::TEXT),
                        (&sid, Type::INT8),
                        (&offset, Type::INT8),
                        (&before, Type::TEXT_ARRAY),
                    ],
                ))
                .map_err(|e| db.error("finding the message's place", &e))?
                .get(0);
            (n as usize).min(total - 1)
        }
    };
    let from = at.saturating_sub(context);
    let to = at.saturating_add(context).saturating_add(1).min(total);
    let (_, docs) = messages(
        db,
        s,
        Window {
            active_only: false,
            offset: from,
            limit: to - from,
        },
    )?;
    Ok(Preview {
        docs,
        at: at - from,
        before: from,
        after: total - to,
    })
}
