//! The objects the read side returns: a message, a session, a hit (the
//! stable, documented output contract of `show --format json`, `sessions
//! --json` and `search --json`), and how a session is named.

use serde::Serialize;

use super::query::shown;
use crate::index::stored::StoredSession;
use crate::index::IndexError;
use crate::pi::time::format_millis;
use crate::pi::{Agent, Edited, Role};

/// A message as `show --format json` prints it: the stable, documented
/// output contract (one object per line).
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
    pub role: Role,
    /// Entry time, RFC 3339 UTC with milliseconds.
    pub timestamp: Option<String>,
    /// The same time, epoch milliseconds.
    #[serde(skip)]
    pub timestamp_ms: Option<i64>,
    /// The session's working directory.
    pub cwd: Option<String>,
    /// The session's display name.
    pub session_name: Option<String>,
    /// The agent that wrote the session: `pi` or `omp` (Oh My Pi).
    pub agent: Agent,
    /// The model.
    pub model: Option<String>,
    /// On the active branch?
    pub active: bool,
    /// What the latest `context_edit` on the active branch did to this
    /// message for the model: `"omitted"`, `"replaced"` or null.
    pub edited: Edited,
    /// The text the model is sent instead, when replaced (null otherwise).
    pub replacement: Option<String>,
    /// The text, as the user saw it.
    pub text: String,
}

impl StoredDoc {
    /// The message `doc` of `session` (`None`: its session has no record).
    pub fn new(session: Option<&SessionRow>, doc: crate::pi::Document) -> StoredDoc {
        StoredDoc {
            session_id: session.map(|s| s.session_id.clone()).unwrap_or_default(),
            path: session.map(|s| s.path.clone()).unwrap_or_default(),
            line: doc.line,
            offset: doc.offset,
            entry_id: doc.entry_id,
            role: doc.role,
            timestamp: doc.timestamp_ms.map(format_millis),
            timestamp_ms: doc.timestamp_ms,
            cwd: session.and_then(|s| s.cwd.clone()),
            session_name: session.and_then(|s| s.session_name.clone()),
            agent: session.map(|s| s.agent).unwrap_or_default(),
            model: doc.model,
            active: doc.active,
            edited: doc.edited,
            replacement: doc.replacement,
            text: doc.text,
        }
    }

    /// Back to the document it was made from (for re-adding it).
    pub fn into_document(self) -> crate::pi::Document {
        crate::pi::Document {
            line: self.line,
            offset: self.offset,
            entry_id: self.entry_id,
            role: self.role,
            timestamp_ms: self.timestamp_ms,
            model: self.model,
            active: self.active,
            edited: self.edited,
            replacement: self.replacement,
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
    /// No session was named (an empty or blank argument).
    #[error("no session given: name one by its id (as search and sessions give it), a unique prefix of the id, or its file's path")]
    Empty,
    /// Nothing matches.
    #[error("no indexed session matches {}: check `pi-index sessions`, or run `pi-index build` if the session is new", shown(.0))]
    NotFound(String),
    /// A prefix matches several sessions.
    #[error("{} matches {count} sessions ({examples}): give more of the id", shown(.prefix))]
    Ambiguous {
        /// What was asked for.
        prefix: String,
        /// How many matched.
        count: usize,
        /// A few of them.
        examples: String,
    },
}

/// One session, as `pi-index sessions` lists it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SessionRow {
    /// Session id.
    pub session_id: String,
    /// Session file.
    pub path: String,
    /// Working directory.
    pub cwd: Option<String>,
    /// Display name.
    pub session_name: Option<String>,
    /// The agent that wrote it: `pi` or `omp` (Oh My Pi).
    pub agent: Agent,
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
    /// Every model the session's documents name.
    #[serde(skip)]
    pub models: Vec<String>,
    /// The key that joins the session's messages to it.
    #[serde(skip)]
    pub key: u64,
    /// The parent session file its header names (`parentSession`).
    #[serde(skip)]
    pub parent_path: Option<String>,
    /// The copy key of its first message ([`crate::index::lineage`]).
    #[serde(skip)]
    pub head: u64,
    /// Its place in its family, when it has relatives (filled by
    /// [`super::family::annotate`]; absent otherwise).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub family: Option<crate::search::lineage::Lineage>,
}

impl SessionRow {
    /// Whether the session ran at or below `dir` (normalized, see
    /// [`crate::search::query::normalize_dir`]) and was active at or after
    /// `since` (ms): what `sessions --cwd --since` and the MCP `sessions`
    /// tool select. `None` selects everything.
    pub fn selected(&self, dir: Option<&str>, since: Option<i64>) -> bool {
        let below = dir.is_none_or(|d| {
            self.cwd
                .as_deref()
                .unwrap_or("")
                .strip_prefix(d)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || d == "/")
        });
        below && since.is_none_or(|t| self.last_ms.is_some_and(|l| l >= t))
    }

    /// The name, else the title, else the id.
    pub fn label(&self) -> &str {
        self.session_name
            .as_deref()
            .or(self.title.as_deref())
            .unwrap_or(&self.session_id)
    }
}

impl From<StoredSession> for SessionRow {
    fn from(s: StoredSession) -> SessionRow {
        SessionRow {
            session_id: s.session_id,
            path: s.path,
            cwd: s.cwd,
            session_name: s.session_name,
            agent: s.agent,
            title: s.title,
            started: s.started_ms.map(format_millis),
            last: s.last_ms.map(format_millis),
            messages: s.messages,
            last_ms: s.last_ms,
            models: s.models,
            key: s.key,
            parent_path: s.parent_path,
            head: s.head,
            family: None,
        }
    }
}

/// One hit.
#[derive(Clone, Debug, Serialize)]
pub struct Hit {
    /// The stored document (every key `show --format json` prints).
    #[serde(flatten)]
    pub doc: StoredDoc,
    /// The BM25 score (0 when sorted by date or with no text query).
    pub score: f32,
    /// A short plain-text excerpt around the matched words.
    pub snippet: String,
    /// Byte ranges of matched words within `snippet`.
    #[serde(skip)]
    pub highlights: Vec<std::ops::Range<usize>>,
    /// The hit's session, as listed (read once per session of a search).
    #[serde(skip)]
    pub session: Option<std::sync::Arc<SessionRow>>,
    /// The other sessions of its family holding the same message (the
    /// same entry id and text) that matched too, oldest first.
    pub copies: Vec<CopyRef>,
}

/// Another session's copy of a hit's message (it matched the query too).
#[derive(Clone, Debug, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct CopyRef {
    /// The copy's session id.
    pub session_id: String,
    /// The copy's session file.
    pub path: String,
    /// Its 1-based line in that file.
    pub line: u64,
}
