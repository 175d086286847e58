//! The tables pi-index keeps in the team database, their version, and the
//! migration to it.
//!
//! | table | holds | key | why |
//! |---|---|---|---|
//! | `pi_index_schema` | the schema version (one row) | | a push migrates an older one, and every command refuses a newer one |
//! | `pi_hosts` | one row per pushing host: the kinds its index includes | `host` | a host whose local index changed kinds is pushed again whole |
//! | `pi_sessions` | one row per session file of a host: the facts a hit is printed with (the agent that wrote it among them), the `tsvector`s of its name and title (what `sessions QUERY` ranks besides messages), its place in its family (see below), its usage (see below), and the file state of the last push (with a digest of its messages' contents) | `(host, sid)`, `(host, path)` unique | the push state lives with the rows, committed in the same transaction, so a push killed anywhere resumes exactly |
//! | `pi_messages` | one row per local message document: every field a local hit carries, the text, its `tsvector`, and its copy key | `(host, sid, ord)` | `ord` is the document's place in its session (file order), so appended messages are new rows |
//! | `pi_windows` | for the few messages a `tsvector` cannot hold exactly (see [`super::text`]): their text's tokens in overlapping windows of positions | `(host, sid, ord, win)` | phrases past PostgreSQL's 16,383rd position |
//! | `pi_terms` | every term of a host's messages and in how many of them it occurs (`docs`); the empty term counts the host's messages | `(term, host)` | the dictionary a search cuts a word typed without its separators into (`isfinished` → `is` `finished`, [`crate::search::query::expand`]), as the local index's term dictionary serves it; kept by each push in the transaction that adds or removes the messages ([`terms_of`]) |
//! | `pi_pair_words` | the team's pair words ([`super::text::PairWords`]): the words whose adjacent pairs every message's `tsvector` also holds, so that a phrase of common words finds its candidates by its pairs | `term` | chosen once (by the migration from `pi_terms`, or by the first push that may, from its local index's commonest terms) and never changed: a row's pairs are those of the words chosen when it was pushed |
//!
//! `sid` comes from a sequence and stays with a session whose file moved
//! (only its `path` changes). Hashes and sizes are stored as `bigint`
//! (the same 64 bits, signed). Times are epoch milliseconds (`ts_ms`,
//! `started_ms`, `last_ms`): what the local index holds, compared exactly
//! (`to_timestamp(ts_ms / 1000.0)` reads one in SQL).
//!
//! Every table has the `host` column the row-level security policies of
//! the pushing role of docs/team.md ("Least privilege") check.
//!
//! # Lineage
//!
//! Forks are resolved where a host's sessions all are, in its local index
//! ([`crate::search::family`]), and pushed as the local index resolves
//! them: each session row holds its parent (`parent_session`, null when
//! the parent is not indexed; `parent_path`; `parent_how`, `stated` or
//! `inferred`), its forks (`fork_ids`, `fork_paths`, oldest first), and,
//! when it has indexed relatives, its `family` (the local family's key)
//! and `family_age` (its place in the family's order: ancestors first,
//! then older first), by which copies of a message (`pi_messages.copy`,
//! [`crate::index::lineage::copy_key`]) are merged into one hit. A fork
//! belongs to the host that pushed it: lineage never crosses hosts. A
//! push compares every row's lineage with the local index's and updates
//! the rows that differ (a fork that appears changes its parent's row),
//! so the database holds what a fresh push would.
//!
//! # Usage
//!
//! What a session spent is pushed as its local record holds it: every
//! entry's usage in one value ([`crate::index::spent`]: the entries'
//! times, keys, buckets, token counts and costs, exactly), in the `usage`
//! column of its row (`bytea`: the value's bytes include NUL). A push
//! writes it with the row and replaces it whole whenever the session is
//! sent again (grown or rewritten), and it goes with the row: no entry is
//! ever held twice. `NULL` is a row pushed before the database held usage
//! (version 7 or older), which the host's next push fills in alone
//! ([`super::push`]). [`super::usage`] reads every row's for the report
//! of [`crate::read::usage`], which counts each entry of a host's family
//! once, as the host's own index does.
//!
//! # Versions
//!
//! - 1: the tables.
//! - 2: lineage, copy keys, titles' `tsvector`s, and positions in names'
//!   (for phrases); `pushed_schema` on each session row says under which
//!   version it was pushed, and a push replaces its host's rows pushed
//!   under an older one (until then they are searched as before, without
//!   lineage).
//! - 3: `pi_messages_recent`, an index on the messages' recency
//!   (`ts_ms DESC NULLS LAST` then the key), from which a search takes
//!   its bounded pool of the newest matches ([`super::search`]) without
//!   reading every match; and `pi_windows_tsv`, a GIN index on the
//!   windows. No row changes: rows pushed under 2 stay ([`ROWS`]).
//! - 4: `pi_terms`, counted from the rows already there. No row changes.
//! - 5: `pi_pair_words`, the team's pair words ([`super::text::PairWords`]:
//!   chosen here from `pi_terms` when it counts some, else by the first
//!   push that may choose them, and never changed), and every message's
//!   `tsvector` holds the pair lexemes of those words. Rows pushed before
//!   (or while no words were chosen) are as version 4 made them
//!   (`pushed_schema` 4) and replaced by their host's next push once the
//!   words are chosen; while any is left, a search asks for no pairs
//!   (the index `pi_sessions_unpaired` finds them). `rank_len` on
//!   messages and windows: the length a score is normalized by, without
//!   the pairs (0 on rows pushed before: their `tsvector`'s own length).
//! - 6: `pi_remove_sessions(host, sids)`, the one way rows are deleted: a
//!   function run with its owner's rights, so that a pushing role
//!   (`scripts/team/roles.sql`) needs no `DELETE` on the tables, and with
//!   `UPDATE` granted column by column no table-level right that would let
//!   it `LOCK` a table against every reader. It removes only the caller's
//!   own host's rows when the caller is a pushing role. No row changes.
//! - 7: `agent` on session rows: which agent wrote the session (`pi`, or
//!   `omp` for Oh My Pi), what a hit says and resumes it with. Rows
//!   pushed before are Pi's (the column's default): no earlier release
//!   indexed another agent's sessions. No row changes.
//! - 8: `usage` on session rows (see [Usage](#usage)). Rows pushed
//!   before hold `NULL` there, and their host's next push sends their
//!   usage alone (their other columns are as this version pushes them).
//! - 9: the second version of the usage value ([`crate::index::spent`]):
//!   every row's `usage` is set to `NULL`, and each host's next push
//!   sends it again, alone, as version 8's did.

use tokio_postgres::{Client, GenericClient};

use super::TeamError;

/// The schema version this pi-index writes and reads.
pub const VERSION: i32 = 9;

/// The last version that changed what a row holds: rows pushed under it
/// or later are as this pi-index pushes them (`pushed_schema`); rows
/// pushed under an older one are replaced by their host's next push.
pub const ROWS: i32 = 5;

/// The version since which message rows hold pair lexemes: a search asks
/// for pairs only when no session row was pushed under an older one.
pub const PAIRS: i32 = 5;

/// How many of its commonest words a team's pair words are.
pub const PAIR_WORDS: usize = 128;

/// The version of the rows a push makes: [`ROWS`] once the team's pair
/// words are chosen; before, rows without pairs, as version 4 made them.
pub fn rows(paired: bool) -> i32 {
    if paired {
        ROWS
    } else {
        PAIRS - 1
    }
}

/// What a pushing role (`pi_pusher`) may do with the tables, given by
/// version 6 to roles made before it and by `scripts/team/roles.sql`
/// (which holds the same block): read them, add rows, and change any
/// column but `host`, each column granted alone (a table-level `UPDATE`
/// or `DELETE` would let the role `LOCK` the table in any mode); rows
/// go only through `pi_remove_sessions`. A migration that adds a column
/// a push updates grants it the same way.
pub const PUSHER_GRANTS: &str = r#"
DO $$
DECLARE t text;
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pi_pusher') THEN
        FOREACH t IN ARRAY ARRAY['pi_hosts', 'pi_sessions', 'pi_messages', 'pi_windows', 'pi_terms'] LOOP
            EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I FROM pi_pusher', t);
            EXECUTE format('GRANT SELECT, INSERT ON %I TO pi_pusher', t);
            EXECUTE (SELECT format('GRANT UPDATE (%s) ON %I TO pi_pusher',
                        string_agg(quote_ident(attname::text), ', '), t)
                     FROM pg_attribute
                     WHERE attrelid = t::regclass AND attnum > 0 AND NOT attisdropped
                       AND attname <> 'host');
        END LOOP;
        GRANT EXECUTE ON FUNCTION pi_remove_sessions(text, bigint[]) TO pi_pusher;
    END IF;
END
$$;
"#;

/// The statements that bring a database from version `n` (the index) to
/// `n + 1`. Version 0 is a database without our tables.
const MIGRATIONS: [&str; 9] = [
    r#"
CREATE TABLE pi_index_schema (version integer NOT NULL);
INSERT INTO pi_index_schema VALUES (0);
CREATE TABLE pi_hosts (
    host text PRIMARY KEY,
    kinds text NOT NULL,
    pushed_at timestamptz NOT NULL DEFAULT now()
);
CREATE SEQUENCE pi_sessions_sid_seq;
CREATE TABLE pi_sessions (
    host text NOT NULL,
    sid bigint NOT NULL,
    path text NOT NULL,
    session_id text NOT NULL,
    cwd text,
    session_name text,
    name_tsv tsvector NOT NULL,
    title text,
    models text[] NOT NULL,
    started_ms bigint,
    last_ms bigint,
    messages bigint NOT NULL,
    file_size bigint NOT NULL,
    file_mtime_ns bigint NOT NULL,
    indexed_to bigint NOT NULL,
    head_hash bigint NOT NULL,
    tail_hash bigint NOT NULL,
    digest bigint NOT NULL,
    PRIMARY KEY (host, sid)
);
CREATE UNIQUE INDEX pi_sessions_path ON pi_sessions (host, path);
CREATE INDEX pi_sessions_session_id ON pi_sessions (session_id text_pattern_ops);
CREATE TABLE pi_messages (
    host text NOT NULL,
    sid bigint NOT NULL,
    ord integer NOT NULL,
    line bigint NOT NULL,
    off bigint NOT NULL,
    entry_id text,
    role text NOT NULL,
    ts_ms bigint,
    model text,
    active boolean NOT NULL,
    edited smallint NOT NULL,
    replacement text,
    text text NOT NULL,
    windowed boolean NOT NULL,
    tsv tsvector NOT NULL,
    PRIMARY KEY (host, sid, ord)
);
CREATE INDEX pi_messages_tsv ON pi_messages USING gin (tsv);
CREATE INDEX pi_messages_windowed ON pi_messages (host, sid, ord) WHERE windowed;
CREATE TABLE pi_windows (
    host text NOT NULL,
    sid bigint NOT NULL,
    ord integer NOT NULL,
    win integer NOT NULL,
    tsv tsvector NOT NULL,
    PRIMARY KEY (host, sid, ord, win)
);
"#,
    // Version 2: lineage and copies. Every new column has a constant
    // default: adding it rewrites no table.
    r#"
ALTER TABLE pi_sessions
    ADD COLUMN pushed_schema integer NOT NULL DEFAULT 1,
    ADD COLUMN title_tsv tsvector NOT NULL DEFAULT '',
    ADD COLUMN parent_session text,
    ADD COLUMN parent_path text,
    ADD COLUMN parent_how text,
    ADD COLUMN fork_ids text[] NOT NULL DEFAULT '{}',
    ADD COLUMN fork_paths text[] NOT NULL DEFAULT '{}',
    ADD COLUMN family bigint,
    ADD COLUMN family_age integer;
ALTER TABLE pi_messages ADD COLUMN copy bigint;
CREATE INDEX pi_sessions_family ON pi_sessions (host, family) WHERE family IS NOT NULL;
"#,
    // Version 3: the recency index a search's pool of newest matches is
    // read from (in the order of its `ORDER BY`), and a GIN index on the
    // windows (a windowed message's windows were each read to match).
    r#"
CREATE INDEX pi_messages_recent ON pi_messages (ts_ms DESC NULLS LAST, host, sid, ord);
CREATE INDEX pi_windows_tsv ON pi_windows USING gin (tsv);
"#,
    // Version 4: the team's terms, counted from the rows there (the
    // statement of `terms_of("TRUE")`, which a test holds to it). Every
    // batch of a push updates the counts of most of its terms: pages a
    // third empty keep nearly all those updates on their page (HOT: no
    // index entry;
    // [docs/performance.md](../../docs/performance.md#the-team-database)).
    r#"
CREATE TABLE pi_terms (
    term text NOT NULL,
    host text NOT NULL,
    docs bigint NOT NULL,
    PRIMARY KEY (term, host)
) WITH (fillfactor = 70);
INSERT INTO pi_terms (term, host, docs)
SELECT term, host, docs FROM (SELECT host, term, count(*) AS docs FROM (SELECT m.host, u.lexeme AS term FROM pi_messages m CROSS JOIN LATERAL unnest(m.tsv) u WHERE TRUE AND NOT m.windowed UNION ALL SELECT host, term FROM (SELECT DISTINCT w.host, w.sid, w.ord, u.lexeme AS term FROM pi_windows w CROSS JOIN LATERAL unnest(w.tsv) u WHERE TRUE) d UNION ALL SELECT host, '' FROM pi_messages WHERE TRUE) t GROUP BY host, term) c;
-- A database whose roles were made before this table (scripts/team/roles.sql)
-- gives them what that script gives them on it.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname IN ('pi_reader', 'pi_pusher')) THEN
        ALTER TABLE pi_terms ENABLE ROW LEVEL SECURITY;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pi_reader') THEN
        GRANT SELECT ON pi_terms TO pi_reader;
        CREATE POLICY pi_read_all ON pi_terms TO pi_reader USING (true);
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pi_pusher') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON pi_terms TO pi_pusher;
        CREATE POLICY pi_own_host ON pi_terms TO pi_pusher
            USING (host = current_user) WITH CHECK (host = current_user);
    END IF;
END
$$;
"#,
    // Version 5: the team's pair words, from the terms counted so far
    // (none on a new database: the first push chooses them), and an index
    // on the session rows pushed without pairs (while one is left, a
    // search asks for no pairs). Rows pushed before are replaced by their
    // host's next push (`ROWS`).
    r#"
CREATE TABLE pi_pair_words (term text PRIMARY KEY);
INSERT INTO pi_pair_words (term)
SELECT term FROM pi_terms WHERE term <> '' GROUP BY term ORDER BY sum(docs) DESC, term COLLATE "C" LIMIT 128;
CREATE INDEX pi_sessions_unpaired ON pi_sessions (host) WHERE pushed_schema < 5;
ALTER TABLE pi_messages ADD COLUMN rank_len integer NOT NULL DEFAULT 0;
ALTER TABLE pi_windows ADD COLUMN rank_len integer NOT NULL DEFAULT 0;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pi_reader') THEN
        GRANT SELECT ON pi_pair_words TO pi_reader;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pi_pusher') THEN
        GRANT SELECT ON pi_pair_words TO pi_pusher;
    END IF;
END
$$;
"#,
    // Version 6: the sessions' rows removed by a function of the owner's
    // (`terms_of` of the removed sessions taken off `pi_terms`, which a
    // test holds to it), and the pushing role's rights narrowed to what
    // its statements take (`PUSHER_GRANTS`, run after this by `migrate`).
    r#"
CREATE OR REPLACE FUNCTION pi_remove_sessions(p_host text, p_sids bigint[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER AS $f$
BEGIN
    -- A pushing role (a superuser counts as a member of every role: not
    -- one) removes its own host's rows alone.
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'pi_pusher')
       AND NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user) THEN
        IF pg_catalog.pg_has_role(session_user, 'pi_pusher', 'MEMBER') AND p_host <> session_user THEN
            RAISE EXCEPTION 'permission denied: a pushing role removes only the sessions of its own host (%), not those of %', session_user, p_host
                USING ERRCODE = '42501';
        END IF;
    END IF;
    WITH g AS (SELECT host, term, count(*) AS docs FROM (SELECT m.host, u.lexeme AS term FROM pi_messages m CROSS JOIN LATERAL unnest(m.tsv) u WHERE host = p_host AND sid = ANY(p_sids) AND NOT m.windowed AND strpos(u.lexeme, ' ') = 0 UNION ALL SELECT host, term FROM (SELECT DISTINCT w.host, w.sid, w.ord, u.lexeme AS term FROM pi_windows w CROSS JOIN LATERAL unnest(w.tsv) u WHERE host = p_host AND sid = ANY(p_sids) AND strpos(u.lexeme, ' ') = 0) d UNION ALL SELECT host, '' FROM pi_messages WHERE host = p_host AND sid = ANY(p_sids)) t GROUP BY host, term),
         gone AS (DELETE FROM pi_terms t USING g WHERE t.term = g.term AND t.host = g.host AND t.docs <= g.docs)
    UPDATE pi_terms t SET docs = t.docs - g.docs FROM g
        WHERE t.term = g.term AND t.host = g.host AND t.docs > g.docs;
    DELETE FROM pi_windows WHERE host = p_host AND sid = ANY(p_sids);
    DELETE FROM pi_messages WHERE host = p_host AND sid = ANY(p_sids);
    DELETE FROM pi_sessions WHERE host = p_host AND sid = ANY(p_sids);
END
$f$;
-- The tables where the migration found them, never a caller's own
-- (a temporary table of the same name is not read).
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION pi_remove_sessions(text, bigint[]) SET search_path = %I, pg_temp',
                   current_schema());
END
$$;
REVOKE ALL ON FUNCTION pi_remove_sessions(text, bigint[]) FROM PUBLIC;
"#,
    // Version 7: the agent that wrote each session. A constant default:
    // adding it rewrites no table.
    r#"
ALTER TABLE pi_sessions ADD COLUMN agent text NOT NULL DEFAULT 'pi';
"#,
    // Version 8: each session's usage (`NULL`: pushed before; the next
    // push of its host sends it). No default: adding it rewrites no table.
    r#"
ALTER TABLE pi_sessions ADD COLUMN usage bytea;
"#,
    // Version 9: the usage value's second version; the old one does not
    // decode, so each row's is sent again by its host's next push.
    r#"
UPDATE pi_sessions SET usage = NULL;
"#,
];

/// The condition of [`terms_of`] that leaves pair lexemes out (they
/// hold a space, which no term does: [`super::text::is_pair`]).
const NOT_A_PAIR: &str = " AND strpos(u.lexeme, ' ') = 0";

/// The statement that counts, for each host and term, the messages of
/// the rows `filter` keeps (a condition on `host` and `sid`) that hold
/// the term, and the messages themselves as the empty term's count:
/// columns `host`, `term`, `docs`. A windowed message's terms are those
/// of its windows.
pub fn terms_of(filter: &str) -> String {
    format!(
        "SELECT host, term, count(*) AS docs FROM (\
         SELECT m.host, u.lexeme AS term FROM pi_messages m CROSS JOIN LATERAL unnest(m.tsv) u \
         WHERE {filter} AND NOT m.windowed{NOT_A_PAIR} \
         UNION ALL SELECT host, term FROM (SELECT DISTINCT w.host, w.sid, w.ord, u.lexeme AS term \
         FROM pi_windows w CROSS JOIN LATERAL unnest(w.tsv) u WHERE {filter}{NOT_A_PAIR}) d \
         UNION ALL SELECT host, '' FROM pi_messages WHERE {filter}) t GROUP BY host, term"
    )
}

/// Whether `e` says a table does not exist (`42P01`).
pub fn is_missing_table(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE)
}

/// Whether `e` says a column does not exist (`42703`): tables of another
/// version.
pub fn is_missing_column(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_COLUMN)
}

/// The version the database holds (0: none of our tables). Safe inside a
/// transaction (a missing table is looked up, not queried).
pub async fn version<C: GenericClient>(client: &C) -> Result<i32, tokio_postgres::Error> {
    let row = client
        .query_typed_one("SELECT to_regclass('pi_index_schema') IS NOT NULL", &[])
        .await?;
    if !row.get::<_, bool>(0) {
        return Ok(0);
    }
    let row = client
        .query_typed_one("SELECT max(version) FROM pi_index_schema", &[])
        .await?;
    Ok(row.get::<_, Option<i32>>(0).unwrap_or(0))
}

/// Create or migrate the tables to [`VERSION`], under a lock so that two
/// first pushes cannot both create them; refuse a newer version.
pub async fn migrate(client: &mut Client, target: &str) -> Result<(), TeamError> {
    let err = |doing: &str, e: tokio_postgres::Error| TeamError::Db {
        target: target.to_owned(),
        doing: doing.to_owned(),
        why: super::advice(&e),
    };
    let tx = client
        .transaction()
        .await
        .map_err(|e| err("creating pi-index's tables", e))?;
    tx.batch_execute("SELECT pg_advisory_xact_lock(7314159265358979)")
        .await
        .map_err(|e| err("creating pi-index's tables", e))?;
    let found = version(&tx)
        .await
        .map_err(|e| err("reading the schema version", e))?;
    if found > VERSION {
        return Err(TeamError::NewerSchema {
            target: target.to_owned(),
            found,
            ours: VERSION,
        });
    }
    for (n, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.batch_execute(sql)
            .await
            .map_err(|e| err("creating pi-index's tables", e))?;

        tx.execute(
            "UPDATE pi_index_schema SET version = $1",
            &[&(n as i32 + 1)],
        )
        .await
        .map_err(|e| err("creating pi-index's tables", e))?;
    }
    // The pushing role's rights, as version 6 narrowed them, over every
    // column the migrations added.
    if found < VERSION {
        tx.batch_execute(PUSHER_GRANTS)
            .await
            .map_err(|e| err("narrowing the pushing role's rights", e))?;
    }
    tx.commit()
        .await
        .map_err(|e| err("creating pi-index's tables", e))?;
    Ok(())
}

/// Check that the database holds our tables at [`VERSION`] (for the read
/// commands, which never migrate).
pub async fn check(client: &Client, target: &str) -> Result<(), TeamError> {
    let found = version(client).await.map_err(|e| TeamError::Db {
        target: target.to_owned(),
        doing: "reading the schema version".into(),
        why: super::advice(&e),
    })?;
    match found {
        0 => Err(TeamError::NoTables(target.to_owned())),
        v if v > VERSION => Err(TeamError::NewerSchema {
            target: target.to_owned(),
            found: v,
            ours: VERSION,
        }),
        v if v < VERSION => Err(TeamError::Db {
            target: target.to_owned(),
            doing: "reading the schema version".into(),
            why: format!(
                "its tables are of an older schema ({v}): run `pi-index push` once to migrate them"
            ),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_sessions_takes_their_terms_down_as_a_push_counts_them() {
        let filter = "host = p_host AND sid = ANY(p_sids)";
        assert!(
            MIGRATIONS[5].contains(&terms_of(filter)),
            "{}",
            terms_of(filter)
        );
    }

    #[test]
    fn the_usage_rows_hold_is_the_value_this_version_reads() {
        // A new version of the stored value needs a schema version whose
        // migration sets every row's usage to NULL (its host's next push
        // sends it again): rows of the old value would not decode.
        assert_eq!(crate::index::spent::VERSION, 2);
    }

    #[test]
    fn the_migration_counts_the_terms_as_a_push_takes_them_down() {
        // Version 4's rows held no pair lexemes: its count is this one
        // without the condition that leaves them out.
        let v4 = terms_of("TRUE").replace(NOT_A_PAIR, "");
        assert!(MIGRATIONS[3].contains(&v4), "{v4}");
        assert!(terms_of("TRUE").contains(NOT_A_PAIR));
    }
}
