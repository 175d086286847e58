//! `pi-index push`: what changed in the local index since this host's
//! last push, into the team database.
//!
//! The local index already knows each session file's state (size, time,
//! how far it was indexed, hashes of the indexed bytes: see
//! [`crate::index::state`]), and the database keeps, on each session's
//! row, the state it was pushed at. A push reads both (the database's in
//! **one round trip**, which is all a push with nothing to send costs) and
//! sends only the difference:
//!
//! - a session the database does not hold: its row and every message;
//! - a session that grew (same session, the messages pushed before still
//!   its first ones, as they were, edit marks included): only the new
//!   messages, as new rows, with the branch marks of the old ones brought
//!   up to date;
//! - a session rewritten any other way: its rows replaced;
//! - a session whose file moved (the same state found at a new path): its
//!   path changed, nothing else sent;
//! - a session gone from the local index: its rows deleted;
//! - a session whose file did not change but whose place in its family
//!   did (a fork of it appeared or went, its parent moved): its row's
//!   lineage updated ([`super::lineage`]: every row's is compared with
//!   the local index's at every push, so a push killed before it wrote
//!   them leaves them to the next);
//! - a session pushed under an older schema version: its rows replaced;
//!   one pushed before the database held usage: its usage sent alone.
//!
//! A session's usage ([`super::schema`]'s Usage) goes with its row, whole:
//! a session sent again (grown or rewritten) has it replaced by its
//! record's, a removed one's goes with it.
//!
//! Rows go by `COPY ... FROM STDIN` (text format) in batches of about
//! [`BATCH_BYTES`], each batch one transaction that also writes the
//! batch's sessions' states. A push killed anywhere (kill -9, the server
//! restarted, the connection cut) leaves every session either as pushed
//! before or as pushed now, and the next push sends exactly what is
//! still missing. A batch is made on another thread while the one
//! before commits (our reading and tokenizing overlap the server's COPY
//! and index updates). Memory is two batches (one being made, one
//! waiting or committing) plus the documents of the session being
//! read; the pages of the local index a batch read are dropped from the
//! push's memory once it is handed over ([`PiIndex::release_mapped`]).

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use futures_util::SinkExt;
use serde::Serialize;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Transaction};

use super::lineage::RowLineage;
use super::text::{self, PairWords};
use super::{schema, Db, TeamError};
use crate::index::state::FileState;
use crate::index::PiIndex;
use crate::read::{SessionRow, StoredDoc};
use crate::search::lookup;
use crate::search::Reader;
use tantivy::Searcher;

/// Bytes of rows one transaction carries, about (a session larger than
/// this is one transaction of its own).
pub const BATCH_BYTES: usize = 8 << 20;

/// Sessions whose messages are looked up in one pass over the local
/// index ([`lookup::message_addresses`]).
const SESSIONS_AT_ONCE: usize = 512;

/// Bytes handed to the connection at a time while a `COPY` runs.
const CHUNK: usize = 1 << 20;

/// What a push did.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct PushReport {
    /// The host the rows are keyed by (`--as`).
    pub host: String,
    /// Sessions in the local index.
    pub sessions: u64,
    /// Sessions the database already held as they are.
    pub sessions_unchanged: u64,
    /// Sessions sent whole for the first time.
    pub sessions_new: u64,
    /// Sessions that grew: only their new messages sent.
    pub sessions_grown: u64,
    /// Sessions rewritten: their rows replaced.
    pub sessions_replaced: u64,
    /// Sessions whose file moved: their path changed.
    pub sessions_moved: u64,
    /// Sessions no longer in the local index: their rows deleted.
    pub sessions_deleted: u64,
    /// Sessions sent for nothing but their place in their family (a
    /// fork of theirs appeared or went, a parent moved): their rows'
    /// lineage updated.
    pub sessions_relinked: u64,
    /// Sessions pushed before the database held usage (schema version 7
    /// or older), sent for nothing but their usage.
    pub sessions_usage_added: u64,
    /// Message rows sent.
    pub messages_sent: u64,
    /// Bytes of rows sent by `COPY`.
    pub bytes_sent: u64,
    /// Transactions committed.
    pub transactions: u64,
    /// Wall time, milliseconds.
    pub elapsed_ms: u64,
}

/// What the database holds of one session of this host.
#[derive(Clone, Debug)]
struct Pushed {
    sid: i64,
    session_id: String,
    state: FileState,
    messages: i64,
    /// [`digest`] of the messages pushed.
    digest: i64,
    /// The schema version it was pushed under (rows of an older one are
    /// pushed again).
    schema: i32,
    /// Its lineage, as pushed.
    lineage: RowLineage,
    /// Whether its row was pushed before the database held usage (its
    /// usage is `NULL`).
    without_usage: bool,
}

/// A hash of what a session's messages say, their `context_edit` marks
/// included (not their branch marks, which a push updates in place): the
/// database keeps it with the session, and an append is told from a
/// rewrite, or from an append that changed an old message's edit, by the
/// messages before the append hashing the same.
fn digest(docs: &[StoredDoc]) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    for d in docs {
        eat(&d.offset.to_le_bytes());
        eat(&d.line.to_le_bytes());
        eat(d.role.as_str().as_bytes());
        eat(d.entry_id.as_deref().unwrap_or("").as_bytes());
        eat(&d.timestamp_ms.unwrap_or(i64::MIN).to_le_bytes());
        eat(d.model.as_deref().unwrap_or("").as_bytes());
        eat(&d.edited.rank().to_le_bytes());
        eat(d.replacement.as_deref().unwrap_or("\u{0}").as_bytes());
        eat(d.text.as_bytes());
    }
    h as i64
}

/// What the database holds of this host.
struct Remote {
    /// The kinds of the index it was pushed from.
    kinds: Option<String>,
    /// Whether row-level security applies to this role (then rows go
    /// through a temporary table: PostgreSQL refuses `COPY` into a table
    /// whose policies apply).
    rls: bool,
    /// Whether the team's pair words are chosen (`pi_pair_words` holds
    /// some: see [`text::PairWords`]).
    paired: bool,
    /// Whether this role may choose them.
    may_pair: bool,
    sessions: HashMap<String, Pushed>,
}

const STATE_SQL: &str = "SELECT pg_is_in_recovery(), (SELECT max(version) FROM pi_index_schema), \
     (SELECT kinds FROM pi_hosts WHERE host = $1), \
     s.path, s.sid, s.session_id, s.file_size, s.file_mtime_ns, s.indexed_to, s.head_hash, \
     s.tail_hash, s.messages, s.digest, row_security_active('pi_messages'), s.pushed_schema, \
     s.parent_session, s.parent_path, s.parent_how, s.fork_ids, s.fork_paths, s.family, \
     s.family_age, one.paired, one.may_pair, s.usage IS NULL \
     FROM (SELECT EXISTS (SELECT 1 FROM pi_pair_words) AS paired, \
     has_table_privilege('pi_pair_words', 'INSERT') AS may_pair) AS one \
     LEFT JOIN pi_sessions s ON s.host = $1";

/// Why a state query could not give the state.
enum StateError {
    /// Our tables are missing, older, or the server is a standby: look
    /// closer.
    NotReady,
    Db(tokio_postgres::Error),
}

async fn remote_state(client: &Client, host: &str) -> Result<Remote, StateError> {
    let rows = match client.query_typed(STATE_SQL, &[(&host, Type::TEXT)]).await {
        Ok(rows) => rows,
        // Tables of another version may lack a column this one reads.
        Err(e) if schema::is_missing_table(&e) || schema::is_missing_column(&e) => {
            return Err(StateError::NotReady)
        }
        Err(e) => return Err(StateError::Db(e)),
    };
    let first = rows.first().ok_or(StateError::NotReady)?;
    let standby: bool = first.get(0);
    let version: Option<i32> = first.get(1);
    if standby || version != Some(schema::VERSION) {
        return Err(StateError::NotReady);
    }
    let mut sessions = HashMap::with_capacity(rows.len());
    for r in &rows {
        let Some(path) = r.get::<_, Option<String>>(3) else {
            continue;
        };
        let u = |i: usize| r.get::<_, i64>(i) as u64;
        sessions.insert(
            path,
            Pushed {
                sid: r.get(4),
                session_id: r.get(5),
                state: FileState {
                    size: u(6),
                    mtime_ns: u(7),
                    indexed_to: u(8),
                    head_hash: u(9),
                    tail_hash: u(10),
                    ..FileState::default()
                },
                messages: r.get(11),
                digest: r.get(12),
                schema: r.get(14),
                lineage: RowLineage {
                    parent_session: r.get(15),
                    parent_path: r.get(16),
                    parent_how: r.get(17),
                    fork_ids: r.get(18),
                    fork_paths: r.get(19),
                    family: r.get(20),
                    family_age: r.get(21),
                },
                without_usage: r.get(24),
            },
        );
    }
    Ok(Remote {
        kinds: first.get(2),
        rls: first.get(13),
        paired: first.get(22),
        may_pair: first.get(23),
        sessions,
    })
}

/// Whether two states name the same indexed bytes (the device and inode
/// are the local machine's business: a copy restored elsewhere is the
/// same session).
fn same(a: &FileState, b: &FileState) -> bool {
    (a.size, a.mtime_ns, a.indexed_to, a.head_hash, a.tail_hash)
        == (b.size, b.mtime_ns, b.indexed_to, b.head_hash, b.tail_hash)
}

/// Whether a file at a new path holds the bytes a pushed one held.
fn moved(a: &FileState, b: &FileState) -> bool {
    (a.size, a.indexed_to, a.head_hash, a.tail_hash)
        == (b.size, b.indexed_to, b.head_hash, b.tail_hash)
}

/// The primary a standby follows, as much of `primary_conninfo` as is
/// safe to print (its host and port; never a password).
async fn primary_of(client: &Client) -> String {
    let Ok(Some(row)) = client
        .query_typed_opt("SELECT current_setting('primary_conninfo', true)", &[])
        .await
    else {
        return String::new();
    };
    let Some(info) = row.get::<_, Option<String>>(0) else {
        return String::new();
    };
    let mut host = None;
    let mut port = None;
    for pair in info.split_whitespace() {
        match pair.split_once('=') {
            Some(("host", v)) => host = Some(v.trim_matches('\'').to_owned()),
            Some(("port", v)) => port = Some(v.trim_matches('\'').to_owned()),
            _ => {}
        }
    }
    match (host, port) {
        (Some(h), Some(p)) => format!(" (this standby follows the primary at host={h} port={p})"),
        (Some(h), None) => format!(" (this standby follows the primary at host={h})"),
        _ => String::new(),
    }
}

/// Read the database's state for `host`, creating or migrating the
/// tables first when needed; refuse a standby and a newer schema.
fn state(db: &mut Db, host: &str) -> Result<Remote, TeamError> {
    let target = db.target.clone();
    let first = db.run(remote_state(&db.client, host));
    match first {
        Ok(r) => return Ok(r),
        Err(StateError::Db(e)) => return Err(db.error("reading what this host pushed before", &e)),
        Err(StateError::NotReady) => {}
    }
    let standby = db
        .run(db.client.query_typed_one("SELECT pg_is_in_recovery()", &[]))
        .map_err(|e| db.error("asking whether it is a primary", &e))?
        .get::<_, bool>(0);
    if standby {
        let primary = db.run(primary_of(&db.client));
        return Err(TeamError::Replica { target, primary });
    }
    let rt_client = &mut db.client;
    db.rt.block_on(schema::migrate(rt_client, &target))?;
    match db.run(remote_state(&db.client, host)) {
        Ok(r) => Ok(r),
        Err(StateError::Db(e)) => Err(db.error("reading what this host pushed before", &e)),
        Err(StateError::NotReady) => Err(TeamError::Db {
            target,
            doing: "reading what this host pushed before".into(),
            why: "its pi-index tables are not as this version made them".into(),
        }),
    }
}

/// The `n` commonest terms of the local index's messages, by the number
/// of messages holding each, counted in the segments where the term is
/// in at least 1 of 200 documents (so one pass over each term dictionary
/// keeps only the common ones; any list finds the same messages, this
/// one makes the most phrases cheap).
fn common_terms(pi: &PiIndex, searcher: &Searcher, n: usize) -> Result<Vec<String>, TeamError> {
    let err = |e: tantivy::TantivyError| TeamError::from(crate::index::tantivy_err(&pi.dir, e));
    let mut docs: HashMap<Vec<u8>, u64> = HashMap::new();
    for seg in searcher.segment_readers() {
        let inv = seg.inverted_index(pi.fields.text).map_err(err)?;
        let floor = (seg.max_doc() / 200).max(1);
        let mut stream = inv
            .terms()
            .stream()
            .map_err(|e| err(tantivy::TantivyError::from(e)))?;
        while stream.advance() {
            let df = stream.value().doc_freq;
            if df >= floor {
                *docs.entry(stream.key().to_vec()).or_default() += u64::from(df);
            }
        }
    }
    let mut counted: Vec<(u64, String)> = docs
        .into_iter()
        .filter_map(|(t, d)| Some((d, String::from_utf8(t).ok()?)))
        .collect();
    counted.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    counted.truncate(n);
    Ok(counted.into_iter().map(|(_, t)| t).collect())
}

/// Make `words` the team's pair words, unless some are already chosen
/// (by a push that got there first): under a lock, so that no push reads
/// a list that is not final.
async fn choose_pair_words(
    client: &mut Client,
    words: &[String],
) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.batch_execute("LOCK TABLE pi_pair_words IN EXCLUSIVE MODE")
        .await?;
    tx.query_typed(
        "INSERT INTO pi_pair_words (term) SELECT DISTINCT unnest($1::text[]) \
         WHERE NOT EXISTS (SELECT 1 FROM pi_pair_words)",
        &[(&words, Type::TEXT_ARRAY)],
    )
    .await?;
    tx.commit().await
}

/// The team's pair words.
async fn read_pair_words(client: &Client) -> Result<PairWords, tokio_postgres::Error> {
    let rows = client
        .query_typed("SELECT term FROM pi_pair_words", &[])
        .await?;
    Ok(PairWords::new(rows.iter().map(|r| r.get(0)).collect()))
}

/// One session on its way into a batch.
enum Job {
    /// Rows to create (`replace`: the old rows of `sid` deleted first).
    Whole { sid: Option<i64>, replace: bool },
    /// Only the messages after the first `old` (the rows the database
    /// holds), with the session's facts and state updated.
    Grow { sid: i64, old: usize },
}

/// The rows of one transaction.
#[derive(Default)]
struct Batch {
    sessions: Vec<u8>,
    messages: Vec<u8>,
    windows: Vec<u8>,
    /// Sessions whose old rows go first.
    replaced: Vec<i64>,
    /// In how many of the batch's messages each term occurs (for
    /// `pi_terms`; foldhash: a batch looks up a few million tokens).
    terms: HashMap<String, i64, foldhash::fast::RandomState>,
    /// Grown sessions: their updated row, their marks.
    grown: Vec<Grown>,
    sessions_in: usize,
    messages_in: u64,
}

struct Grown {
    sid: i64,
    digest: i64,
    row: SessionRow,
    lineage: RowLineage,
    docs_len: i64,
    state: FileState,
    old: i32,
    /// Old rows off the active branch, by (offset, role).
    inactive: Vec<(i64, String)>,
    /// Its usage, whole ([`crate::index::spent::Rows::encode`]).
    usage: Vec<u8>,
}

impl Batch {
    fn bytes(&self) -> usize {
        self.sessions.len()
            + self.messages.len()
            + self.windows.len()
            + self.grown.iter().map(|g| g.usage.len()).sum::<usize>()
    }
    fn is_empty(&self) -> bool {
        self.sessions_in == 0 && self.grown.is_empty()
    }
}

/// Append `s` escaped for `COPY`'s text format (NUL, which PostgreSQL's
/// text cannot hold, becomes U+FFFD).
fn copy_str(out: &mut Vec<u8>, s: &str) {
    for &b in s.as_bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0 => out.extend_from_slice("\u{FFFD}".as_bytes()),
            b => out.push(b),
        }
    }
}

fn copy_opt(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => copy_str(out, s),
        None => out.extend_from_slice(b"\\N"),
    }
}

fn copy_num(out: &mut Vec<u8>, n: impl std::fmt::Display) {
    use std::io::Write;
    let _ = write!(out, "{n}");
}

/// Append `bytes` as a `bytea` in `COPY`'s text format (hex, its
/// backslash escaped).
fn copy_bytea(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\\\x");
    for &b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 15)]);
    }
}

fn copy_opt_num(out: &mut Vec<u8>, n: Option<i64>) {
    match n {
        Some(n) => copy_num(out, n),
        None => out.extend_from_slice(b"\\N"),
    }
}

/// A `text[]` literal of `items`, each quoted.
fn array_literal(items: &[String]) -> String {
    let mut s = String::from("{");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('"');
        for c in item.chars() {
            if c == '"' || c == '\\' {
                s.push('\\');
            }
            s.push(c);
        }
        s.push('"');
    }
    s.push('}');
    s
}

pub use super::text::pg_text;

fn ms(ts: Option<&str>) -> Option<i64> {
    ts.and_then(crate::pi::time::parse_iso_millis)
}

/// The columns of `pi_sessions` a push writes, in `COPY` order.
const SESSION_COLUMNS: &str = "host, sid, path, session_id, cwd, session_name, name_tsv, title, models, \
     started_ms, last_ms, messages, file_size, file_mtime_ns, indexed_to, head_hash, tail_hash, digest, \
     pushed_schema, title_tsv, parent_session, parent_path, parent_how, fork_ids, fork_paths, family, \
     family_age, agent, usage";

/// The columns of `pi_messages`, in `COPY` order.
const MESSAGE_COLUMNS: &str =
    "host, sid, ord, line, off, entry_id, role, ts_ms, model, active, edited, \
     replacement, text, windowed, tsv, rank_len, copy";

/// One session as a push writes its row: the host and id it is stored
/// under, its listing row, its documents, its file's state, its lineage
/// and its usage.
struct Writing<'a> {
    host: &'a str,
    sid: i64,
    row: &'a SessionRow,
    docs: &'a [StoredDoc],
    st: &'a FileState,
    lineage: &'a RowLineage,
    usage: &'a [u8],
}

fn session_row(
    out: &mut Vec<u8>,
    rows: i32,
    analyzer: &mut tantivy::tokenizer::TextAnalyzer,
    pushed: &Writing,
) {
    let Writing {
        host,
        sid,
        row,
        docs,
        st,
        lineage,
        usage,
    } = *pushed;
    let messages = docs.len();
    copy_str(out, host);
    out.push(b'\t');
    copy_num(out, sid);
    out.push(b'\t');
    copy_str(out, &row.path);
    out.push(b'\t');
    copy_str(out, &row.session_id);
    out.push(b'\t');
    copy_opt(out, row.cwd.as_deref());
    out.push(b'\t');
    copy_opt(out, row.session_name.as_deref());
    out.push(b'\t');
    copy_str(out, &text::name_tsv(analyzer, row.session_name.as_deref()));
    out.push(b'\t');
    copy_opt(out, row.title.as_deref());
    out.push(b'\t');
    copy_str(out, &array_literal(&row.models));
    out.push(b'\t');
    copy_opt_num(out, ms(row.started.as_deref()));
    out.push(b'\t');
    copy_opt_num(out, row.last_ms);
    out.push(b'\t');
    copy_num(out, messages);
    for v in [
        st.size,
        st.mtime_ns,
        st.indexed_to,
        st.head_hash,
        st.tail_hash,
    ] {
        out.push(b'\t');
        copy_num(out, v as i64);
    }
    out.push(b'\t');
    copy_num(out, digest(docs));
    out.push(b'\t');
    copy_num(out, rows);
    out.push(b'\t');
    copy_str(out, &text::name_tsv(analyzer, row.title.as_deref()));
    let l = lineage;
    for v in [&l.parent_session, &l.parent_path, &l.parent_how] {
        out.push(b'\t');
        copy_opt(out, v.as_deref());
    }
    for v in [&l.fork_ids, &l.fork_paths] {
        out.push(b'\t');
        copy_str(out, &array_literal(v));
    }
    out.push(b'\t');
    copy_opt_num(out, l.family);
    out.push(b'\t');
    copy_opt_num(out, l.family_age.map(i64::from));
    out.push(b'\t');
    copy_str(out, row.agent.as_str());
    out.push(b'\t');
    copy_bytea(out, usage);
    out.push(b'\n');
}

fn message_row(
    batch: &mut Batch,
    list: &PairWords,
    analyzer: &mut tantivy::tokenizer::TextAnalyzer,
    host: &str,
    sid: i64,
    ord: usize,
    d: &StoredDoc,
) {
    let toks = text::tokens(analyzer, &d.text);
    let replaced = d.replacement.as_deref().map(|r| text::tokens(analyzer, r));
    // The message's terms, each once, as `pi_terms` counts them.
    let terms = &mut batch.terms;
    let indexed = text::index_tokens(
        &toks,
        replaced.as_deref(),
        &mut |t| match terms.get_mut(t) {
            Some(n) => *n += 1,
            None => {
                terms.insert(t.to_owned(), 1);
            }
        },
        list,
    );
    let out = &mut batch.messages;
    copy_str(out, host);
    out.push(b'\t');
    copy_num(out, sid);
    out.push(b'\t');
    copy_num(out, ord);
    out.push(b'\t');
    copy_num(out, d.line as i64);
    out.push(b'\t');
    copy_num(out, d.offset as i64);
    out.push(b'\t');
    copy_opt(out, d.entry_id.as_deref());
    out.push(b'\t');
    copy_str(out, d.role.as_str());
    out.push(b'\t');
    copy_opt_num(out, d.timestamp_ms);
    out.push(b'\t');
    copy_opt(out, d.model.as_deref());
    out.push(b'\t');
    out.push(if d.active { b't' } else { b'f' });
    out.push(b'\t');
    copy_num(out, d.edited.rank());
    out.push(b'\t');
    copy_opt(out, d.replacement.as_deref());
    out.push(b'\t');
    copy_str(out, &d.text);
    out.push(b'\t');
    out.push(if indexed.windowed { b't' } else { b'f' });
    out.push(b'\t');
    copy_str(out, &indexed.tsv);
    out.push(b'\t');
    copy_num(out, indexed.len);
    out.push(b'\t');
    // The copy key of the text as the local index hashed it (before NUL
    // became U+FFFD).
    copy_opt_num(
        out,
        d.entry_id
            .as_deref()
            .map(|id| crate::index::lineage::copy_key(id, &d.text) as i64),
    );
    out.push(b'\n');
    for (win, (w, len)) in indexed.windows.iter().enumerate() {
        let out = &mut batch.windows;
        copy_str(out, host);
        out.push(b'\t');
        copy_num(out, sid);
        out.push(b'\t');
        copy_num(out, ord);
        out.push(b'\t');
        copy_num(out, win);
        out.push(b'\t');
        copy_str(out, w);
        out.push(b'\t');
        copy_num(out, len);
        out.push(b'\n');
    }
    batch.messages_in += 1;
}

/// `COPY table (columns) FROM STDIN` of `data`, handed over a chunk at a
/// time; `pause` is the tests' point in the middle of it. Under
/// row-level security (the pushing role of docs/team.md), where PostgreSQL
/// refuses `COPY FROM`, the rows are copied into a temporary table and
/// inserted from there, so that the policies check every row.
async fn copy(
    tx: &Transaction<'_>,
    table: &str,
    columns: &str,
    data: &[u8],
    pause: bool,
    rls: bool,
) -> Result<(), tokio_postgres::Error> {
    if data.is_empty() {
        return Ok(());
    }
    let into = if rls {
        let stage = format!("pi_stage_{table}");
        tx.batch_execute(&format!(
            "CREATE TEMP TABLE {stage} (LIKE {table}) ON COMMIT DROP"
        ))
        .await?;
        stage
    } else {
        table.to_owned()
    };
    let sink = tx
        .copy_in::<_, Bytes>(&format!("COPY {into} ({columns}) FROM STDIN"))
        .await?;
    let mut sink = std::pin::pin!(sink);
    let mut first = true;
    for chunk in data.chunks(CHUNK) {
        sink.send(Bytes::copy_from_slice(chunk)).await?;
        if first && pause {
            crate::failpoint::point("push-mid-copy");
            crate::failpoint::push_pause();
        }
        first = false;
    }
    sink.as_mut().finish().await?;
    if rls {
        tx.batch_execute(&format!(
            "INSERT INTO {table} ({columns}) SELECT {columns} FROM {into}"
        ))
        .await?;
    }
    Ok(())
}

/// The host's row: its kinds, and now as the time it last pushed.
async fn upsert_host(
    tx: &Transaction<'_>,
    host: &str,
    kinds: &str,
) -> Result<(), tokio_postgres::Error> {
    tx.execute_typed(
        "INSERT INTO pi_hosts (host, kinds) VALUES ($1, $2) \
         ON CONFLICT (host) DO UPDATE SET kinds = EXCLUDED.kinds, pushed_at = now()",
        &[(&host, Type::TEXT), (&kinds, Type::TEXT)],
    )
    .await?;
    Ok(())
}

/// Delete the rows of sessions `sids` of `host`, their terms' counts in
/// `pi_terms` taken down first (a term in none of the host's messages
/// any more loses its row).
async fn delete_sessions(
    tx: &Transaction<'_>,
    host: &str,
    sids: &[i64],
) -> Result<(), tokio_postgres::Error> {
    if sids.is_empty() {
        return Ok(());
    }
    // The one way rows go (see `schema`, version 6).
    tx.execute_typed(
        "SELECT pi_remove_sessions($1, $2)",
        &[(&host, Type::TEXT), (&sids, Type::INT8_ARRAY)],
    )
    .await?;
    Ok(())
}

/// Add the counts of `batch`'s terms (and of its messages, as the empty
/// term's) to `pi_terms`, in the order of its key (two pushes of one host
/// never wait on each other's rows in a cycle).
async fn add_terms(
    tx: &Transaction<'_>,
    host: &str,
    batch: &Batch,
) -> Result<(), tokio_postgres::Error> {
    if batch.messages_in == 0 {
        return Ok(());
    }
    let mut terms: Vec<&str> = Vec::with_capacity(batch.terms.len() + 1);
    let mut docs: Vec<i64> = Vec::with_capacity(batch.terms.len() + 1);
    terms.push("");
    docs.push(batch.messages_in as i64);
    for (term, n) in &batch.terms {
        terms.push(term);
        docs.push(*n);
    }
    tx.execute_typed(
        "INSERT INTO pi_terms (term, host, docs) SELECT term, $1, docs \
         FROM unnest($2::text[], $3::bigint[]) AS x(term, docs) ORDER BY term \
         ON CONFLICT (term, host) DO UPDATE SET docs = pi_terms.docs + EXCLUDED.docs",
        &[
            (&host, Type::TEXT),
            (&terms, Type::TEXT_ARRAY),
            (&docs, Type::INT8_ARRAY),
        ],
    )
    .await?;
    Ok(())
}

async fn commit_batch(
    client: &mut Client,
    host: &str,
    kinds: &str,
    batch: &Batch,
    first: bool,
    rls: bool,
) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    upsert_host(&tx, host, kinds).await?;
    delete_sessions(&tx, host, &batch.replaced).await?;
    crate::failpoint::point("push-before-copy");
    copy(
        &tx,
        "pi_sessions",
        SESSION_COLUMNS,
        &batch.sessions,
        false,
        rls,
    )
    .await?;
    copy(
        &tx,
        "pi_messages",
        MESSAGE_COLUMNS,
        &batch.messages,
        first,
        rls,
    )
    .await?;
    copy(
        &tx,
        "pi_windows",
        "host, sid, ord, win, tsv, rank_len",
        &batch.windows,
        false,
        rls,
    )
    .await?;
    add_terms(&tx, host, batch).await?;
    for g in &batch.grown {
        let r = &g.row;
        let st = &g.state;
        let mut analyzer = crate::index::tokenizer::analyzer();
        let name_tsv = text::name_tsv(&mut analyzer, r.session_name.as_deref());
        let title_tsv = text::name_tsv(&mut analyzer, r.title.as_deref());
        let (size, mtime, to, head, tail) = (
            st.size as i64,
            st.mtime_ns as i64,
            st.indexed_to as i64,
            st.head_hash as i64,
            st.tail_hash as i64,
        );
        let cwd = r.cwd.as_deref().map(pg_text);
        let name = r.session_name.as_deref().map(pg_text);
        let title = r.title.as_deref().map(pg_text);
        let models: Vec<String> = r.models.iter().map(|m| pg_text(m).into_owned()).collect();
        let started = ms(r.started.as_deref());
        tx.execute_typed(
            "UPDATE pi_sessions SET cwd = $3, session_name = $4, name_tsv = $5::tsvector, \
             title = $6, models = $7, started_ms = $8, last_ms = $9, messages = $10, \
             file_size = $11, file_mtime_ns = $12, indexed_to = $13, head_hash = $14, \
             tail_hash = $15, digest = $16, title_tsv = $17::tsvector, agent = $18, \
             usage = $19 WHERE host = $1 AND sid = $2",
            &[
                (&host, Type::TEXT),
                (&g.sid, Type::INT8),
                (&cwd, Type::TEXT),
                (&name, Type::TEXT),
                (&name_tsv, Type::TEXT),
                (&title, Type::TEXT),
                (&models, Type::TEXT_ARRAY),
                (&started, Type::INT8),
                (&r.last_ms, Type::INT8),
                (&g.docs_len, Type::INT8),
                (&size, Type::INT8),
                (&mtime, Type::INT8),
                (&to, Type::INT8),
                (&head, Type::INT8),
                (&tail, Type::INT8),
                (&g.digest, Type::INT8),
                (&title_tsv, Type::TEXT),
                (&r.agent.as_str(), Type::TEXT),
                (&g.usage, Type::BYTEA),
            ],
        )
        .await?;
        relink(&tx, host, g.sid, &g.lineage).await?;
        // The old messages' branch marks, as the local index has them now
        // (an append can move the active branch).
        let offs: Vec<i64> = g.inactive.iter().map(|(o, _)| *o).collect();
        let roles: Vec<&str> = g.inactive.iter().map(|(_, r)| r.as_str()).collect();
        tx.execute_typed(
            "UPDATE pi_messages m SET active = NOT EXISTS (SELECT 1 FROM unnest($4::bigint[], $5::text[]) AS x(off, role) \
             WHERE x.off = m.off AND x.role = m.role) \
             WHERE m.host = $1 AND m.sid = $2 AND m.ord < $3 \
             AND m.active = EXISTS (SELECT 1 FROM unnest($4::bigint[], $5::text[]) AS x(off, role) \
             WHERE x.off = m.off AND x.role = m.role)",
            &[
                (&host, Type::TEXT),
                (&g.sid, Type::INT8),
                (&g.old, Type::INT4),
                (&offs, Type::INT8_ARRAY),
                (&roles, Type::TEXT_ARRAY),
            ],
        )
        .await?;
    }
    crate::failpoint::point("push-before-commit");
    tx.commit().await?;
    crate::failpoint::point("push-after-commit");
    Ok(())
}

/// Write `lineage` on the row of session `sid`.
async fn relink(
    tx: &Transaction<'_>,
    host: &str,
    sid: i64,
    lineage: &RowLineage,
) -> Result<(), tokio_postgres::Error> {
    let l = lineage;
    tx.execute_typed(
        "UPDATE pi_sessions SET parent_session = $3, parent_path = $4, parent_how = $5, \
         fork_ids = $6, fork_paths = $7, family = $8, family_age = $9 WHERE host = $1 AND sid = $2",
        &[
            (&host, Type::TEXT),
            (&sid, Type::INT8),
            (&l.parent_session, Type::TEXT),
            (&l.parent_path, Type::TEXT),
            (&l.parent_how, Type::TEXT),
            (&l.fork_ids, Type::TEXT_ARRAY),
            (&l.fork_paths, Type::TEXT_ARRAY),
            (&l.family, Type::INT8),
            (&l.family_age, Type::INT4),
        ],
    )
    .await?;
    Ok(())
}

/// One transaction: the sessions gone deleted, the moved ones' paths
/// changed, and the lineage of sessions whose files did not change
/// brought up to date.
async fn delete_and_move(
    client: &mut Client,
    host: &str,
    kinds: &str,
    gone: &[i64],
    moves: &[(i64, String, FileState)],
    relinks: &[(i64, RowLineage)],
) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    upsert_host(&tx, host, kinds).await?;
    delete_sessions(&tx, host, gone).await?;
    for (sid, path, st) in moves {
        let path = pg_text(path);
        let (size, mtime, to, head, tail) = (
            st.size as i64,
            st.mtime_ns as i64,
            st.indexed_to as i64,
            st.head_hash as i64,
            st.tail_hash as i64,
        );
        tx.execute_typed(
            "UPDATE pi_sessions SET path = $3, file_size = $4, file_mtime_ns = $5, indexed_to = $6, \
             head_hash = $7, tail_hash = $8 WHERE host = $1 AND sid = $2",
            &[
                (&host, Type::TEXT),
                (sid, Type::INT8),
                (&path, Type::TEXT),
                (&size, Type::INT8),
                (&mtime, Type::INT8),
                (&to, Type::INT8),
                (&head, Type::INT8),
                (&tail, Type::INT8),
            ],
        )
        .await?;
    }
    for (sid, lineage) in relinks {
        relink(&tx, host, *sid, lineage).await?;
    }
    crate::failpoint::point("push-before-removal-commit");
    tx.commit().await?;
    Ok(())
}

/// Send the usage of the sessions `fills` (their sid and local path),
/// pushed before the database held usage, in transactions of about
/// `limit` bytes.
fn fill_usage(
    db: &mut Db,
    pi: &PiIndex,
    searcher: &Searcher,
    host: &str,
    fills: &[(i64, &str)],
    limit: usize,
    report: &mut PushReport,
) -> Result<(), TeamError> {
    let mut sids: Vec<i64> = Vec::new();
    let mut values: Vec<Vec<u8>> = Vec::new();
    let mut bytes = 0;
    for (i, (sid, path)) in fills.iter().enumerate() {
        let value = pi.recorded_usage(searcher, path)?.encode().into_bytes();
        bytes += value.len();
        sids.push(*sid);
        values.push(value);
        if bytes >= limit || i + 1 == fills.len() {
            let r = db
                .rt
                .block_on(add_usage(&mut db.client, host, &sids, &values));
            r.map_err(|e| db.error("sending the usage of sessions pushed before", &e))?;
            report.transactions += 1;
            report.sessions_usage_added += sids.len() as u64;
            report.bytes_sent += bytes as u64;
            (sids, values, bytes) = (Vec::new(), Vec::new(), 0);
        }
    }
    Ok(())
}

/// One transaction: the usage `values` on the rows of sessions `sids`.
async fn add_usage(
    client: &mut Client,
    host: &str,
    sids: &[i64],
    values: &[Vec<u8>],
) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.execute_typed(
        "UPDATE pi_sessions s SET usage = x.usage \
         FROM unnest($2::bigint[], $3::bytea[]) AS x(sid, usage) \
         WHERE s.host = $1 AND s.sid = x.sid",
        &[
            (&host, Type::TEXT),
            (&sids, Type::INT8_ARRAY),
            (&values, Type::BYTEA_ARRAY),
        ],
    )
    .await?;
    tx.commit().await
}

async fn new_sids(client: &Client, n: i64) -> Result<Vec<i64>, tokio_postgres::Error> {
    let rows = client
        .query_typed(
            "SELECT nextval('pi_sessions_sid_seq') FROM generate_series(1, $1)",
            &[(&n, Type::INT8)],
        )
        .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The first key of the advisory lock a push holds for its host (the
/// second is the host's `hashtext`): `pi-i` in ASCII.
const PUSH_LOCK: i32 = 0x7069_2d69;

/// Push what changed in the local index `pi` since `host`'s last push.
/// `progress` is told (sessions done, sessions to send) as batches
/// commit; `waiting`, before the push waits for another push of the
/// same host to end (one host's pushes run one at a time, each reading
/// what the one before committed).
pub fn push(
    db: &mut Db,
    pi: &PiIndex,
    host: &str,
    progress: &dyn Fn(u64, u64),
    waiting: &dyn Fn(),
) -> Result<PushReport, TeamError> {
    let host = pg_text(host).into_owned();
    let lock = |db: &Db, sql: &str| {
        db.rt
            .block_on(db.client.query_typed_one(
                sql,
                &[(&PUSH_LOCK, Type::INT4), (&host.as_str(), Type::TEXT)],
            ))
            .map(|r| r.try_get::<_, bool>(0).unwrap_or(true))
    };
    let locked = lock(db, "SELECT pg_try_advisory_lock($1, hashtext($2))")
        .map_err(|e| db.error("taking this host's push lock", &e))?;
    if !locked {
        waiting();
        lock(db, "SELECT pg_advisory_lock($1, hashtext($2)) IS NULL")
            .map_err(|e| db.error("waiting for another push of this host", &e))?;
    }
    let pushed = push_locked(db, pi, &host, progress);
    // Given back on the same connection (a `push --watch` keeps it); a
    // connection that is gone took the lock with it.
    let _ = lock(db, "SELECT pg_advisory_unlock($1, hashtext($2))");
    pushed
}

fn push_locked(
    db: &mut Db,
    pi: &PiIndex,
    host: &str,
    progress: &dyn Fn(u64, u64),
) -> Result<PushReport, TeamError> {
    let started = std::time::Instant::now();
    let host = host.to_owned();
    // The files and every session's place in its family, read from one
    // state of the index (the files' states saved beside it by a build
    // with nothing to do, when it saved them for this state).
    let reader = Reader::new(pi.clone());
    let searcher = pi.searcher()?;
    let (local, _) = pi.file_states_saved_or_read(&searcher)?;
    let kinds = pi.build_info()?.map(|i| i.kinds).unwrap_or_default();
    let mut remote = state(db, &host)?;
    let mut report = PushReport {
        host: host.clone(),
        sessions: local.len() as u64,
        ..PushReport::default()
    };
    // An index of other kinds holds other documents: everything again.
    if remote.kinds.as_deref().is_some_and(|k| k != kinds) {
        let all: Vec<i64> = remote.sessions.values().map(|p| p.sid).collect();
        let r = db.rt.block_on(delete_and_move(
            &mut db.client,
            &host,
            &kinds,
            &all,
            &[],
            &[],
        ));
        r.map_err(|e| db.error("removing the rows of this host's other kinds", &e))?;
        report.transactions += 1;
        remote.sessions.clear();
    }
    // Every session's place in its family, as the local index resolves
    // it now (from columns, plus the records of the sessions with
    // relatives).
    // The team's pair words, chosen once, by the first push that may
    // (from its index's commonest terms), before any row holds pairs.
    if !remote.paired && remote.may_pair && !local.is_empty() {
        let words = common_terms(pi, &searcher, schema::PAIR_WORDS)?;
        if !words.is_empty() {
            db.rt
                .block_on(choose_pair_words(&mut db.client, &words))
                .map_err(|e| db.error("choosing the team's pair words", &e))?;
            // Ours, or those of a push that chose first.
            remote.paired = true;
        }
    }
    // Rows as this version makes them: with their pairs once the words
    // are chosen, else as version 4 made them (replaced when they are).
    let rows = schema::rows(remote.paired);
    let lineage = super::lineage::local(&reader, &searcher)?;
    let want = |path: &str| {
        lineage
            .get(pg_text(path).as_ref())
            .cloned()
            .unwrap_or_default()
    };
    let mut new: Vec<&str> = Vec::new();
    let mut changed: Vec<(&str, Pushed)> = Vec::new();
    // Sessions whose file did not change but whose family did.
    let mut relinks: Vec<(i64, RowLineage)> = Vec::new();
    // Sessions whose file did not change, pushed before the database
    // held usage: their usage alone.
    let mut fills: Vec<(i64, &str)> = Vec::new();
    for (path, st) in &local {
        match remote.sessions.get(pg_text(path).as_ref()) {
            None => new.push(path),
            Some(p) if p.schema >= rows && same(&p.state, st) => {
                report.sessions_unchanged += 1;
                let w = want(path);
                if p.lineage != w {
                    relinks.push((p.sid, w));
                }
                if p.without_usage {
                    fills.push((p.sid, path));
                }
            }
            Some(p) => changed.push((path, p.clone())),
        }
    }
    let live: HashSet<String> = local.keys().map(|p| pg_text(p).into_owned()).collect();
    let mut gone: Vec<(&String, &Pushed)> = remote
        .sessions
        .iter()
        .filter(|(p, _)| !live.contains(p.as_str()))
        .collect();
    if new.is_empty()
        && changed.is_empty()
        && gone.is_empty()
        && relinks.is_empty()
        && fills.is_empty()
    {
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    }
    new.sort_unstable();
    changed.sort_unstable_by(|a, b| a.0.cmp(b.0));
    gone.sort_unstable_by(|a, b| a.0.cmp(b.0));

    // Moves: a gone session whose bytes appear at a new path.
    let mut moves: Vec<(i64, String, FileState)> = Vec::new();
    let mut moved_paths: HashSet<&str> = HashSet::new();
    let mut moved_sids: HashSet<i64> = HashSet::new();
    for (_, p) in gone.iter().filter(|(_, p)| p.schema >= rows) {
        let Some(path) = new
            .iter()
            .find(|n| !moved_paths.contains(**n) && moved(&local[**n], &p.state))
        else {
            continue;
        };
        let Some(row) = lookup::session_by_path(&reader, &searcher, path)? else {
            continue;
        };
        if pg_text(&row.session_id) == p.session_id.as_str() && row.messages as i64 == p.messages {
            moved_paths.insert(path);
            moved_sids.insert(p.sid);
            moves.push((p.sid, (*path).to_owned(), local[*path]));
            let w = want(path);
            if p.lineage != w {
                relinks.push((p.sid, w));
            }
            if p.without_usage {
                fills.push((p.sid, path));
            }
        }
    }
    new.retain(|n| !moved_paths.contains(n));
    let deleted: Vec<i64> = gone
        .iter()
        .map(|(_, p)| p.sid)
        .filter(|s| !moved_sids.contains(s))
        .collect();
    relinks.sort_unstable_by_key(|(sid, _)| *sid);
    if !deleted.is_empty() || !moves.is_empty() || !relinks.is_empty() {
        let r = db.rt.block_on(delete_and_move(
            &mut db.client,
            &host,
            &kinds,
            &deleted,
            &moves,
            &relinks,
        ));
        r.map_err(|e| db.error("removing and moving sessions", &e))?;
        report.transactions += 1;
        report.sessions_deleted = deleted.len() as u64;
        report.sessions_moved = moves.len() as u64;
        report.sessions_relinked = relinks.len() as u64;
    }
    let limit = crate::failpoint::push_batch_bytes(BATCH_BYTES);
    fill_usage(db, pi, &searcher, &host, &fills, limit, &mut report)?;

    let todo = (new.len() + changed.len()) as u64;
    progress(0, todo);
    // The new sessions' numbers, all at once: the batches are made on
    // another thread, which does not talk to the database.
    let mut sids: Vec<i64> = if new.is_empty() {
        Vec::new()
    } else {
        db.run(new_sids(&db.client, new.len() as i64))
            .map_err(|e| db.error("numbering new sessions", &e))?
    };
    sids.reverse();
    let jobs = new
        .iter()
        .map(|p| (*p, None))
        .chain(changed.into_iter().map(|(p, old)| (p, Some(old))));
    // A batch is made while the one before commits: the server's work
    // (COPY, its indexes) and ours (reading the local index, tokenizing)
    // overlap. One batch waits at most: memory stays bounded.
    let (to_send, batches) = std::sync::mpsc::sync_channel::<Result<Batch, TeamError>>(1);
    // The pair words, for the rows to send (see `rows` above).
    let list = if remote.paired {
        db.run(read_pair_words(&db.client))
            .map_err(|e| db.error("reading the team's pair words", &e))?
    } else {
        PairWords::default()
    };
    let list = &list;
    let (host, local, reader, searcher, want) = (host.as_str(), &local, &reader, &searcher, &want);
    let make = move || -> Result<(), TeamError> {
        let mut analyzer = crate::index::tokenizer::analyzer();
        let mut batch = Batch::default();
        // The messages of a few hundred sessions are found at a time,
        // in one pass over the index (and read a session at a time).
        let mut jobs = jobs.peekable();
        while jobs.peek().is_some() {
            let mut chunk = Vec::with_capacity(SESSIONS_AT_ONCE);
            for (path, old) in jobs.by_ref().take(SESSIONS_AT_ONCE) {
                if let Some(row) = lookup::session_by_path(reader, searcher, path)? {
                    chunk.push((path, old, row));
                }
            }
            let keys: Vec<u64> = chunk.iter().map(|(_, _, row)| row.key).collect();
            let addrs = lookup::message_addresses(reader, searcher, &keys)?;
            for ((path, old, row), addrs) in chunk.into_iter().zip(addrs) {
                let docs = lookup::documents_at(reader, searcher, addrs)?;
                // Its usage, whole, whatever was sent of it before.
                let usage = pi.recorded_usage(searcher, path)?.encode();
                let st = local[path];
                let job = match &old {
                    None => Job::Whole {
                        sid: None,
                        replace: false,
                    },
                    Some(p) => {
                        let before = docs.partition_point(|d| d.offset < p.state.indexed_to);
                        let grown = p.schema >= rows
                            && pg_text(&row.session_id) == p.session_id.as_str()
                            && st.indexed_to > p.state.indexed_to
                            && before as i64 == p.messages
                            && digest(&docs[..before]) == p.digest;
                        if grown {
                            Job::Grow {
                                sid: p.sid,
                                old: before,
                            }
                        } else {
                            Job::Whole {
                                sid: Some(p.sid),
                                replace: true,
                            }
                        }
                    }
                };
                match job {
                    Job::Whole { sid, replace } => {
                        let sid = sid.or_else(|| sids.pop()).unwrap_or_default();
                        if replace {
                            batch.replaced.push(sid);
                        }
                        session_row(
                            &mut batch.sessions,
                            rows,
                            &mut analyzer,
                            &Writing {
                                host,
                                sid,
                                row: &row,
                                docs: &docs,
                                st: &st,
                                lineage: &want(path),
                                usage: usage.as_bytes(),
                            },
                        );
                        for (ord, d) in docs.iter().enumerate() {
                            message_row(&mut batch, list, &mut analyzer, host, sid, ord, d);
                        }
                    }
                    Job::Grow { sid, old } => {
                        for (i, d) in docs[old..].iter().enumerate() {
                            message_row(&mut batch, list, &mut analyzer, host, sid, old + i, d);
                        }
                        let inactive = docs[..old]
                            .iter()
                            .filter(|d| !d.active)
                            .map(|d| (d.offset as i64, d.role.as_str().to_owned()))
                            .collect();
                        batch.grown.push(Grown {
                            sid,
                            lineage: want(path),
                            digest: digest(&docs),
                            docs_len: docs.len() as i64,
                            row,
                            state: st,
                            old: old as i32,
                            inactive,
                            usage: usage.into_bytes(),
                        });
                    }
                }
                batch.sessions_in += 1;
                drop(docs);
                // A send fails only when the pushing side stopped (an error
                // it reports): stop too.
                if batch.bytes() >= limit {
                    if to_send.send(Ok(std::mem::take(&mut batch))).is_err() {
                        return Ok(());
                    }
                    // What the batch read of the index leaves the push's
                    // memory (it stays in the page cache).
                    pi.release_mapped();
                }
            }
        }
        if !batch.is_empty() {
            let _ = to_send.send(Ok(batch));
        }
        Ok(())
    };
    std::thread::scope(|scope| -> Result<(), TeamError> {
        let to_send = scope.spawn(make);
        let mut first = true;
        for batch in batches {
            let mut batch = batch?;
            flush(db, host, &kinds, &mut batch, &mut report, first, remote.rls)?;
            first = false;
            let done = report.sessions_new + report.sessions_grown + report.sessions_replaced;
            progress(done, todo);
        }
        if !first {
            // Sessions whose documents were gone count as done too.
            progress(todo, todo);
        }
        to_send
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })?;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

fn flush(
    db: &mut Db,
    host: &str,
    kinds: &str,
    batch: &mut Batch,
    report: &mut PushReport,
    first: bool,
    rls: bool,
) -> Result<(), TeamError> {
    let r = db
        .rt
        .block_on(commit_batch(&mut db.client, host, kinds, batch, first, rls));
    r.map_err(|e| db.error("pushing a batch of sessions", &e))?;
    report.transactions += 1;
    let (replaced, grown) = (batch.replaced.len(), batch.grown.len());
    report.sessions_replaced += replaced as u64;
    report.sessions_grown += grown as u64;
    report.sessions_new += (batch.sessions_in - replaced - grown) as u64;
    report.messages_sent += batch.messages_in;
    report.bytes_sent += batch.bytes() as u64;
    *batch = Batch::default();
    Ok(())
}
