//! The four tools' arguments, results and work, apart from the protocol:
//! each takes its arguments as the client sent them (a JSON object) and
//! what to read ([`Reading`]: the index as of one commit, or the team
//! database), and returns the result object or the message of a tool
//! error. The doc comments of the argument and result types are
//! the descriptions a model reads in the JSON schemas.
//!
//! Every result is bounded whatever the corpus: at most [`MAX_LIMIT`] hits
//! or sessions and [`MAX_MESSAGES`] messages per call, each text cut at
//! [`MAX_TEXT_CHARS`] characters (with `truncated: true`), names and
//! titles at [`MAX_NAME_CHARS`].

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::live::{Reading, Refresh};
use crate::read::usage::Spent;
use crate::read::{
    ReadError, SearchRequest, SearchResult, SessionList, SessionQuery, SessionRow, StoredDoc,
};
use crate::search::query::{normalize_dir, parse_when, shown, Filters, Key, Now, Warning};
use crate::search::{LookupError, Sort};

/// Most hits (search) or sessions (sessions) one call returns.
pub const MAX_LIMIT: u64 = 50;
/// Hits or sessions returned when no limit is given.
pub const DEFAULT_LIMIT: u64 = 10;
/// Deepest offset for paging (the top `offset + limit` matches are
/// ranked): the limit every front end shares.
pub const MAX_OFFSET: u64 = crate::search::query::MAX_OFFSET as u64;
/// Most messages one `show` call returns.
pub const MAX_MESSAGES: usize = 50;
/// Most messages `show` gives on each side of `around`.
pub const MAX_CONTEXT: u64 = 24;
/// Messages on each side of `around` when no context is given.
pub const DEFAULT_CONTEXT: u64 = 5;
/// Characters of a message's text in a result before it is cut.
pub const MAX_TEXT_CHARS: usize = 2000;
/// Characters of a session name, title or directory before it is cut.
pub const MAX_NAME_CHARS: usize = 300;
/// Characters of a snippet.
pub const SNIPPET_CHARS: usize = 200;

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for. Words are ANDed (`error handling` finds messages
    /// with both); "double quotes" for a phrase; `OR` between alternatives;
    /// `-word` or `NOT word` to exclude; parentheses to group; `pars*` for
    /// a prefix. Identifiers and paths match whole or by their parts
    /// (`serde_json::from_str`, `parseSessionEntries`, `src/main.rs`).
    /// Inline filters also work: `role:user`, `cwd:~/src/app`,
    /// `session:<id prefix>`, `model:opus`, `after:7d`, `before:2026-03-01`,
    /// `branch:active`.
    pub query: String,
    /// How many hits to return: 1 to 50 (default 10).
    #[serde(default)]
    #[schemars(with = "Option<u64>", range(min = 1, max = 50), extend("default" = 10))]
    pub limit: Option<Value>,
    /// Hits to skip first, for paging (use the `next_offset` of the previous
    /// result): 0 to 1000 (default 0).
    #[serde(default)]
    #[schemars(with = "Option<u64>", range(min = 0, max = 1000), extend("default" = 0))]
    pub offset: Option<Value>,
    /// Only messages of these roles, comma separated: `user`, `assistant`
    /// (indexed by default), `thinking`, `tool`, `summary`, `custom` (only
    /// if the index was built to include them).
    pub role: Option<String>,
    /// Only sessions that ran in this directory or below it (absolute, or
    /// starting with `~`).
    pub cwd: Option<String>,
    /// Only messages at or after this time: `2026-03-01`, an RFC 3339
    /// timestamp, `today`, `yesterday`, or an age such as `7d`, `12h`, `2w`.
    pub since: Option<String>,
    /// Only messages before this time (same forms as `since`).
    pub until: Option<String>,
    /// Only messages on the active branch of their session (not on branches
    /// abandoned with Pi's /tree). Default false.
    pub active_only: Option<bool>,
    /// Order of hits: `relevance` (default: best match first, ties newest
    /// first), `newest` or `oldest`.
    pub sort: Option<SortArg>,
}

/// Orders of `search` hits.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortArg {
    /// Best match first.
    Relevance,
    /// Newest first.
    Newest,
    /// Oldest first.
    Oldest,
}

/// Result of `search`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOutput {
    /// The hits, best (or newest/oldest) first.
    pub hits: Vec<HitOut>,
    /// How many messages matched in all.
    pub total: u64,
    /// Pass this as `offset` to get the next hits; absent when there are
    /// no more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Parts of the query that were repaired or ignored (an unbalanced
    /// parenthesis or quote, a dangling operator), with their position.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// How fresh the index was for this answer (the local index).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Refresh>,
    /// The team database the answer was read from (`--db`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
}

/// One matching message.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HitOut {
    /// The host that pushed the session (the team database's hits only):
    /// pass it to `show` with the session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The session's id: pass it to `show` (with `around` = `line`) to read
    /// the conversation around this message.
    pub session_id: String,
    /// The session file.
    pub path: String,
    /// The message's line in the session file.
    pub line: u64,
    /// The entry id of the message (absent in old sessions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// `user`, `assistant`, `thinking`, `tool`, `summary` or `custom`.
    pub role: String,
    /// When the message was written, RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The directory the session ran in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The session's name, if the user gave it one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_name: Option<String>,
    /// The agent that wrote the session: `pi`, or `omp` (Oh My Pi).
    pub agent: String,
    /// False when the message is on a branch the user abandoned (Pi's /tree).
    pub active: bool,
    /// A short excerpt around the matched words.
    pub snippet: String,
    /// The message's text, cut at 2,000 characters.
    pub text: String,
    /// True when `text` was cut: `show` gives the message whole.
    pub truncated: bool,
    /// The same message (same entry id and text) in forks of this
    /// session that matched too: one hit stands for them all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub copies: Vec<crate::read::CopyRef>,
}

/// Arguments of `show`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowArgs {
    /// The session: its id (as `search` and `sessions` return it), a unique
    /// prefix of the id, or the session file's path.
    pub session: String,
    /// The host whose session it is, as `search` and `sessions` return it
    /// (the team database only, when several hosts hold that id).
    pub host: Option<String>,
    /// Show the messages around this line of the session file (a hit's
    /// `line`), whatever their branch. Without it: the session's active
    /// branch from the start.
    #[serde(default)]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub around: Option<Value>,
    /// With `around`: how many messages before and after it, 0 to 24
    /// (default 5).
    #[serde(default)]
    #[schemars(with = "Option<u64>", range(min = 0, max = 24), extend("default" = 5))]
    pub context: Option<Value>,
}

/// Result of `show`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ShowOutput {
    /// The host that pushed it (the team database only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The session's id.
    pub session_id: String,
    /// The session file.
    pub path: String,
    /// The directory the session ran in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The session's name, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_name: Option<String>,
    /// The agent that wrote it: `pi`, or `omp` (Oh My Pi).
    pub agent: String,
    /// The messages, in file order (at most 50).
    pub messages: Vec<MessageOut>,
    /// Messages in the part asked for (the active branch, or the whole
    /// session with `around`); more than `messages` holds when cut.
    pub total: u64,
    /// How to get the messages that were left out, when some were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub more: Option<String>,
    /// How fresh the index was for this answer (the local index).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Refresh>,
    /// The team database the answer was read from (`--db`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
}

/// One message of a session.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MessageOut {
    /// Its line in the session file.
    pub line: u64,
    /// Its entry id (absent in old sessions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// `user`, `assistant`, `thinking`, `tool`, `summary` or `custom`.
    pub role: String,
    /// When it was written, RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// False when it is on an abandoned branch.
    pub active: bool,
    /// The text, cut at 2,000 characters.
    pub text: String,
    /// True when `text` was cut.
    pub truncated: bool,
}

/// Arguments of `sessions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionsArgs {
    /// Only sessions with messages matching this query (the language of
    /// `search`), best match first. Without it: every session, newest
    /// activity first.
    pub query: Option<String>,
    /// Only sessions that ran in this directory or below it.
    pub cwd: Option<String>,
    /// Only sessions active at or after this time: `2026-03-01`, `today`,
    /// `yesterday`, or an age such as `7d`, `12h`, `2w`.
    pub since: Option<String>,
    /// How many sessions to return: 1 to 50 (default 10).
    #[serde(default)]
    #[schemars(with = "Option<u64>", range(min = 1, max = 50), extend("default" = 10))]
    pub limit: Option<Value>,
    /// Sessions to skip first, for paging (the previous result's
    /// `next_offset`).
    #[serde(default)]
    #[schemars(with = "Option<u64>", range(min = 0, max = 1000), extend("default" = 0))]
    pub offset: Option<Value>,
}

/// Result of `sessions`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionsOutput {
    /// The sessions.
    pub sessions: Vec<SessionOut>,
    /// How many sessions qualified in all (with a query: sessions whose
    /// name, first user message or messages match, ranked in that order
    /// as `pi-index sessions QUERY` ranks them).
    pub total: u64,
    /// Pass this as `offset` to get the next sessions; absent when there
    /// are no more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Parts of the query that were repaired or ignored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// How fresh the index was for this answer (the local index).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Refresh>,
    /// The team database the answer was read from (`--db`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
}

/// One session.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionOut {
    /// The host that pushed it (the team database only): pass it to
    /// `show` with the id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Its id: pass it to `show`.
    pub session_id: String,
    /// The session file.
    pub path: String,
    /// The directory it ran in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Its name, if the user gave it one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_name: Option<String>,
    /// The agent that wrote it: `pi`, or `omp` (Oh My Pi).
    pub agent: String,
    /// The first line of its first user message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When it started, RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// Its last indexed message's time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    /// Indexed messages.
    pub messages: u64,
    /// With a query: how many of its messages match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<u64>,
    /// With a query: its best matching message (none when only its name
    /// or first user message matched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best: Option<BestHit>,
    /// The session it was forked from (`how`: `stated` by its header, or
    /// `inferred`; `session` absent when that file is not indexed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<crate::read::ParentRef>,
    /// The sessions forked from it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub forks: Vec<crate::read::SessionRef>,
}

/// A session's best matching message.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BestHit {
    /// Its line (for `show` with `around`).
    pub line: u64,
    /// Its role.
    pub role: String,
    /// An excerpt around the matched words.
    pub snippet: String,
}

/// Deserialize `args` (the client's `arguments` object), or say what is
/// wrong with them as the tool error.
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Map<String, Value>) -> Result<T, String> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        // serde quotes the value it could not read, which may be anything.
        let e = e.to_string();
        let e = match e.char_indices().nth(super::message::MAX_ERROR_CHARS) {
            Some((i, _)) => format!("{}…", &e[..i]),
            None => e,
        };
        format!("invalid arguments for {tool}: {e}; see the tool's input schema")
    })
}

/// A count given as an integer, an integral float (`10.0`) or a string of
/// digits (models send all three), or the tool error naming the argument.
fn count(name: &str, v: &Option<Value>) -> Result<Option<u64>, String> {
    let bad = |v: &Value| {
        let v = match v {
            Value::String(s) => shown(s),
            v => crate::output::text::ellipsized(
                &v.to_string(),
                crate::search::query::limits::SHOWN_CHARS,
            ),
        };
        Err(format!(
            "{name} must be a whole number of 0 or more, not {v}"
        ))
    };
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => Ok(Some(u)),
            (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f < 1e15 => Ok(Some(f as u64)),
            _ => bad(&Value::Number(n.clone())),
        },
        Some(Value::String(s)) => match s.trim().parse() {
            Ok(n) => Ok(Some(n)),
            Err(_) => bad(&Value::String(s.clone())),
        },
        Some(other) => bad(other),
    }
}

fn limit(given: &Option<Value>) -> Result<u64, String> {
    match count("limit", given)?.unwrap_or(DEFAULT_LIMIT) {
        0 => Err("limit must be at least 1 (and at most 50)".into()),
        n if n > MAX_LIMIT => Err(format!(
            "limit {n} is more than {MAX_LIMIT}, the most one call returns: ask for at most {MAX_LIMIT} and page with `offset` (each result's `next_offset`)"
        )),
        n => Ok(n),
    }
}

fn offset(given: &Option<Value>) -> Result<u64, String> {
    match count("offset", given)?.unwrap_or(0) {
        n if n > MAX_OFFSET => Err(format!(
            "offset {n} is more than {MAX_OFFSET}: narrow the query instead (more words, `cwd`, `since`, `role`)"
        )),
        n => Ok(n),
    }
}

pub use crate::output::text::cut;

fn cut_name(s: Option<String>) -> Option<String> {
    s.map(|s| crate::output::text::ellipsized(&s, MAX_NAME_CHARS))
}

fn filters(
    role: &Option<String>,
    cwd: &Option<String>,
    since: &Option<String>,
    until: &Option<String>,
    now: &Now,
) -> Result<Filters, String> {
    let mut f = Filters::default();
    for (key, name, value) in [
        (Key::Role, "role", role),
        (Key::Cwd, "cwd", cwd),
        (Key::After, "since", since),
        (Key::Before, "until", until),
    ] {
        if let Some(v) = value {
            f.add(key, v, now).map_err(|e| format!("{name}: {e}"))?;
        }
    }
    Ok(f)
}

fn warnings(r: &SearchResult) -> Vec<String> {
    query_warnings(&r.warnings)
}

fn query_warnings(list: &[Warning]) -> Vec<String> {
    list.iter()
        .map(|w| format!("query position {}: {}", w.position, w.message))
        .collect()
}

fn nonempty_query(q: &str) -> Result<String, String> {
    if q.trim().is_empty() {
        return Err("query is empty: give words to look for (filters alone work too, e.g. `role:user after:7d`)".into());
    }
    Ok(q.to_owned())
}

/// `search`.
pub fn search(reading: &Reading, args: SearchArgs) -> Result<SearchOutput, String> {
    let now = Now::system();
    let limit = limit(&args.limit)?;
    let offset = offset(&args.offset)?;
    let mut filters = filters(&args.role, &args.cwd, &args.since, &args.until, &now)?;
    if args.active_only.unwrap_or(false) {
        filters
            .add(Key::Branch, "active", &now)
            .map_err(|e| format!("active_only: {e}"))?;
    }
    let req = SearchRequest {
        query: nonempty_query(&args.query)?,
        filters,
        sort: match args.sort.unwrap_or(SortArg::Relevance) {
            SortArg::Relevance => Sort::Relevance,
            SortArg::Newest => Sort::Newest,
            SortArg::Oldest => Sort::Oldest,
        },
        limit: limit as usize,
        offset: offset as usize,
        snippet_chars: SNIPPET_CHARS,
        now,
        copies: false,
    };
    let result = reading.source().search(&req).map_err(|e| e.to_string())?;
    let shown = offset + result.hits.len() as u64;
    let total = result.total as u64;
    // The team database counts a pool of matches: more may follow it.
    let more = shown < total || result.more;
    Ok(SearchOutput {
        warnings: warnings(&result),
        next_offset: (more && shown <= MAX_OFFSET && !result.hits.is_empty()).then_some(shown),
        total,
        hits: result
            .hits
            .into_iter()
            .map(|h| {
                let (text, truncated) = cut(&h.doc.text, MAX_TEXT_CHARS);
                HitOut {
                    host: h.doc.host,
                    session_id: h.doc.session_id,
                    path: h.doc.path,
                    line: h.doc.line,
                    entry_id: h.doc.entry_id,
                    role: h.doc.role.as_str().to_owned(),
                    timestamp: h.doc.timestamp,
                    cwd: cut_name(h.doc.cwd),
                    session_name: cut_name(h.doc.session_name),
                    agent: h.doc.agent.as_str().to_owned(),
                    active: h.doc.active,
                    snippet: h.snippet,
                    text,
                    truncated,
                    copies: h.copies,
                }
            })
            .collect(),
        index: reading.refresh().cloned(),
        database: database(reading),
    })
}

/// The database an answer was read from, for people.
fn database(reading: &Reading) -> Option<String> {
    match reading {
        Reading::Database(db) => match db.place() {
            crate::read::Place::Database(target) => Some(target),
            crate::read::Place::Index(_) => None,
        },
        Reading::Index(_) => None,
    }
}

/// `show`.
pub fn show(reading: &Reading, args: ShowArgs) -> Result<ShowOutput, String> {
    let context = count("context", &args.context)?.unwrap_or(DEFAULT_CONTEXT);
    let around = count("around", &args.around)?;
    if context > MAX_CONTEXT {
        return Err(format!(
            "context {context} is more than {MAX_CONTEXT}: ask for at most {MAX_CONTEXT} messages on each side, and call show again around another line for more"
        ));
    }
    let docs = reading
        .source()
        .show(args.session.trim(), args.host.as_deref())
        .map_err(|e| match e {
            ReadError::Lookup(LookupError::NotFound(s)) => format!(
                "no indexed session matches {}: give a session id as search or sessions return it, a unique prefix of one, or the session file's path",
                shown(&s)
            ),
            ReadError::Lookup(LookupError::Ambiguous { prefix, count, examples }) => format!(
                "{} is the start of {count} session ids ({examples}): give more of the id",
                shown(&prefix)
            ),
            e => e.to_string(),
        })?;
    let first = docs.first().cloned();
    let session_id = first
        .as_ref()
        .map(|d| d.session_id.clone())
        .unwrap_or_default();
    let (selected, total, more): (Vec<&StoredDoc>, usize, Option<String>) = match around {
        Some(line) => {
            // Around a line: both sides, whatever their branch (a hit on an
            // abandoned branch is seen where it was said).
            let window = crate::search::around::around(&docs, line, context as usize)
                .map_err(|e| e.to_string())?;
            let (from, to) = (window.start, window.end);
            let mut notes = Vec::new();
            if from > 0 {
                notes.push(format!(
                    "earlier messages: around={} context={MAX_CONTEXT}",
                    docs[from.saturating_sub(MAX_CONTEXT as usize + 1)].line
                ));
            }
            if to < docs.len() {
                let next = (to + MAX_CONTEXT as usize).min(docs.len() - 1);
                notes.push(format!(
                    "later messages: around={} context={MAX_CONTEXT}",
                    docs[next].line
                ));
            }
            (
                docs[from..to].iter().collect(),
                docs.len(),
                (!notes.is_empty()).then(|| {
                    format!(
                        "call show again with session={session_id} and {}",
                        notes.join("; ")
                    )
                }),
            )
        }
        None => {
            let active: Vec<&StoredDoc> = docs.iter().filter(|d| d.active).collect();
            let total = active.len();
            let more = (total > MAX_MESSAGES).then(|| {
                // The next window starts right after the last message shown.
                let last = active[MAX_MESSAGES - 1];
                let pos = docs.iter().position(|d| std::ptr::eq(d, last)).unwrap_or(0);
                let next = (pos + 1 + MAX_CONTEXT as usize).min(docs.len() - 1);
                format!(
                    "showed the first {MAX_MESSAGES} of {total} messages; call show again with session={session_id} around={} context={MAX_CONTEXT} for the next ones (that view includes abandoned branches, marked active: false)",
                    docs[next].line
                )
            });
            (active.into_iter().take(MAX_MESSAGES).collect(), total, more)
        }
    };
    Ok(ShowOutput {
        host: first.as_ref().and_then(|d| d.host.clone()),
        session_id,
        path: first.as_ref().map(|d| d.path.clone()).unwrap_or_default(),
        cwd: cut_name(first.as_ref().and_then(|d| d.cwd.clone())),
        session_name: cut_name(first.as_ref().and_then(|d| d.session_name.clone())),
        agent: first
            .as_ref()
            .map_or(crate::pi::Agent::Pi, |d| d.agent)
            .as_str()
            .to_owned(),
        messages: selected
            .into_iter()
            .map(|d| {
                let (text, truncated) = cut(&d.text, MAX_TEXT_CHARS);
                MessageOut {
                    line: d.line,
                    entry_id: d.entry_id.clone(),
                    role: d.role.as_str().to_owned(),
                    timestamp: d.timestamp.clone(),
                    active: d.active,
                    text,
                    truncated,
                }
            })
            .collect(),
        total: total as u64,
        more,
        index: reading.refresh().cloned(),
        database: database(reading),
    })
}

/// `sessions`.
pub fn sessions(reading: &Reading, args: SessionsArgs) -> Result<SessionsOutput, String> {
    let now = Now::system();
    let limit = limit(&args.limit)? as usize;
    let offset = offset(&args.offset)? as usize;
    let since = args
        .since
        .as_deref()
        .map(|s| parse_when(s, &now))
        .transpose()
        .map_err(|e| format!("since: {e}"))?;
    // `cwd` and `since` select sessions (at or below the directory, active
    // since then), with a query as without, as `pi-index sessions` does.
    let dir = args.cwd.as_deref().map(normalize_dir);
    let source = reading.source();
    let mut warn = Vec::new();
    // (summary, matches, best hit), in the order to return them.
    let mut page: Vec<(SessionRow, Option<u64>, Option<BestHit>)> = Vec::new();
    let total = match args.query.as_deref().filter(|q| !q.trim().is_empty()) {
        Some(q) => {
            // Ranked as `pi-index sessions QUERY` ranks them (names, then
            // titles, then messages): the library's session search.
            let req = SessionQuery {
                query: q.to_owned(),
                filters: Filters::default(),
                dir,
                since,
                limit,
                offset,
                snippet_chars: SNIPPET_CHARS,
                now,
            };
            let found = source.find_sessions(&req).map_err(|e| e.to_string())?;
            warn = query_warnings(&found.warnings);
            for h in found.hits {
                let best = h.hit.map(|hit| BestHit {
                    line: hit.doc.line,
                    role: hit.doc.role.as_str().to_owned(),
                    snippet: hit.snippet,
                });
                page.push((h.session, Some(h.matches), best));
            }
            found.total
        }
        None => {
            let listed = source
                .sessions(&SessionList {
                    host: None,
                    dir,
                    since,
                    offset,
                    limit,
                })
                .map_err(|e| e.to_string())?;
            page.extend(listed.sessions.into_iter().map(|s| (s, None, None)));
            listed.total
        }
    };
    let shown = (offset + limit).min(total);
    Ok(SessionsOutput {
        sessions: page
            .into_iter()
            .map(|(mut s, matches, best)| SessionOut {
                parent: s.family.as_mut().and_then(|f| f.parent.take()),
                forks: s.family.take().map(|f| f.forks).unwrap_or_default(),
                host: s.host,
                session_id: s.session_id,
                path: s.path,
                cwd: cut_name(s.cwd),
                session_name: cut_name(s.session_name),
                agent: s.agent.as_str().to_owned(),
                title: cut_name(s.title),
                started: s.started,
                last: s.last,
                messages: s.messages,
                matches,
                best,
            })
            .collect(),
        total: total as u64,
        next_offset: (shown < total && shown <= MAX_OFFSET as usize).then_some(shown as u64),
        warnings: warn,
        index: reading.refresh().cloned(),
        database: database(reading),
    })
}

/// Rows `usage` returns when no limit is given: a month of days.
pub const DEFAULT_USAGE_ROWS: u64 = 31;

/// Arguments of `usage`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageArgs {
    /// How to group: `daily` (the default), `weekly`, `monthly`,
    /// `session`, `model` (`provider/model`), `project` (the working
    /// directory) or `host` (the team database's pushing hosts).
    pub group: Option<String>,
    /// Only what was spent at or after this time: `2026-03-01`, `today`,
    /// `yesterday`, or an age such as `7d`, `12h`, `2w`.
    pub since: Option<String>,
    /// Only what was spent before this time.
    pub until: Option<String>,
    /// Only sessions that ran in this directory or below it.
    pub cwd: Option<String>,
    /// Only models whose `provider/model` contains this.
    pub model: Option<String>,
    /// Only the sessions of this host (the team database only), as
    /// `search` and `sessions` name it.
    pub host: Option<String>,
    /// The IANA time zone days, weeks and months are counted in
    /// (`Europe/Paris`, `UTC`; default: the server's).
    pub timezone: Option<String>,
    /// How many rows: 1 to 50 (default 31): the latest periods, or the
    /// sessions, models or projects that cost most.
    #[serde(default)]
    #[schemars(with = "Option<u64>", range(min = 1, max = 50), extend("default" = 31))]
    pub limit: Option<Value>,
}

/// Result of `usage`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UsageOutput {
    /// The rows: periods oldest first; sessions, models and projects by
    /// cost, highest first.
    pub rows: Vec<UsageRowOut>,
    /// How many rows there are in all (`rows` holds the latest periods,
    /// or the costliest, up to `limit`).
    pub rows_total: u64,
    /// Everything spent in the range, each entry of a family of forks
    /// once (a fork's copies of its parent's entries are not counted
    /// again).
    pub total: Spent,
    /// Entries left out of every sum, and why (a cost missing, negative,
    /// not a number or absurd; an answer without usage).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// The team database's sessions not counted because their host
    /// pushed them before the database held usage (its next push sends
    /// it), by host.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub without_usage: Vec<WithoutUsage>,
    /// How fresh the index was for this answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Refresh>,
}

/// One row of `usage`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UsageRowOut {
    /// The period (`2026-03-01`, `2026-W09`, `2026-03`), for periods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    /// The host that pushed the session, for sessions of the team
    /// database; the host, for hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The session's id (pass it to `show`), for sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The session's name, for sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The session's directory, for sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// `provider/model`, for models.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The working directory, for projects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Tokens and cost (for a session: everything its file records, as
    /// Pi's `/session` shows it).
    #[serde(flatten)]
    pub spent: Spent,
    /// For a session: what it spent beyond the entries copied from the
    /// session it was forked from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_cost: Option<f64>,
    /// The models its entries name.
    pub models: Vec<String>,
}

/// Sessions of a host held without their usage.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WithoutUsage {
    /// The host.
    pub host: String,
    /// How many of its sessions.
    pub sessions: u64,
}

/// Entries left out of the sums for one reason.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LeftOut {
    /// Why.
    pub why: String,
    /// How many.
    pub entries: u64,
}

/// Run `usage`: what Pi cost, as `pi-index usage` reports it.
pub fn usage(reading: &Reading, args: UsageArgs) -> Result<UsageOutput, String> {
    use crate::read::usage::{report, Grouping, UsageQuery};
    let rows = match count("limit", &args.limit)?.unwrap_or(DEFAULT_USAGE_ROWS) {
        0 => return Err("limit must be at least 1 (and at most 50)".into()),
        n if n > MAX_LIMIT => {
            return Err(format!(
                "limit {n} is more than {MAX_LIMIT}, the most one call returns: narrow it with `since`, `until`, `cwd` or `model`"
            ))
        }
        n => n as usize,
    };
    let grouping = match args.group.as_deref().unwrap_or("daily") {
        "daily" => Grouping::Daily,
        "weekly" => Grouping::Weekly,
        "monthly" => Grouping::Monthly,
        "session" => Grouping::Session,
        "model" => Grouping::Model,
        "project" => Grouping::Project,
        "host" => Grouping::Host,
        other => {
            return Err(format!(
                "group {}: give daily, weekly, monthly, session, model, project or host",
                shown(other)
            ))
        }
    };
    let hosts = reading.source().capabilities().hosts;
    if !hosts && (grouping == Grouping::Host || args.host.is_some()) {
        return Err(
            "this server reads the local index, this machine's sessions only: `host` groups and filters the team database's (`pi-index mcp --db`)".into(),
        );
    }
    let tz = match args.timezone.as_deref() {
        None => jiff::tz::TimeZone::system(),
        Some(name) => jiff::tz::TimeZone::get(name).map_err(|e| {
            format!(
                "timezone {}: {e}: give an IANA time zone name (Europe/Paris, America/New_York) or UTC",
                shown(name)
            )
        })?,
    };
    let now = Now::at(jiff::Timestamp::now().to_zoned_datetime(tz.clone()));
    let when = |name: &str, v: &Option<String>| {
        v.as_deref()
            .map(|v| parse_when(v, &now).map_err(|e| format!("{name}: {e}")))
            .transpose()
    };
    let q = UsageQuery {
        grouping,
        since_ms: when("since", &args.since)?,
        until_ms: when("until", &args.until)?,
        tz,
        cwd: args.cwd.as_deref().map(normalize_dir),
        models: args.model.iter().map(|m| m.to_lowercase()).collect(),
        session: None,
        family: None,
        host: args.host.clone(),
    };
    let data = reading
        .source()
        .usage(q.need())
        .map_err(|e| e.to_string())?;
    let r = report(&data, &q);
    let rows_total = r.rows.len() as u64;
    // The latest periods; the costliest of the rest (already first).
    let keep: Vec<_> = match grouping {
        Grouping::Daily | Grouping::Weekly | Grouping::Monthly => {
            let from = r.rows.len().saturating_sub(rows);
            r.rows[from..].to_vec()
        }
        _ => r.rows.iter().take(rows).cloned().collect(),
    };
    let name = |s: Option<String>| s.map(|s| cut(&s, MAX_NAME_CHARS).0);
    Ok(UsageOutput {
        rows: keep
            .into_iter()
            .map(|row| UsageRowOut {
                period: row.period.filter(|_| {
                    matches!(
                        grouping,
                        Grouping::Daily | Grouping::Weekly | Grouping::Monthly
                    )
                }),
                host: row.host,
                session_id: row.session_id,
                name: name(row.name),
                cwd: name(row.cwd),
                model: row.model,
                project: name(row.project),
                spent: row.spent,
                own_cost: row.own_cost,
                models: row.models,
            })
            .collect(),
        rows_total,
        total: r.total,
        left_out: r
            .faults
            .iter()
            .map(|(f, n)| LeftOut {
                why: f.as_str().to_owned(),
                entries: *n,
            })
            .collect(),
        without_usage: data
            .without_usage
            .iter()
            .filter(|(h, _)| args.host.as_ref().is_none_or(|want| want == h))
            .map(|(host, n)| WithoutUsage {
                host: host.clone(),
                sessions: *n,
            })
            .collect(),
        index: reading.refresh().cloned(),
    })
}
