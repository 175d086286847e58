//! A session as the read side gives it (a line of `sessions --json`),
//! how a session is named, and a listing of sessions.

use serde::Serialize;

use super::lineage::Lineage;
use crate::index::stored::StoredSession;
use crate::pi::time::format_millis;
use crate::pi::Agent;

/// One session, as `pi-index sessions` lists it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SessionRow {
    /// The host that pushed it (the team database's sessions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
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
    /// [`crate::search::family::annotate`]; absent otherwise).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub family: Option<Lineage>,
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
            host: None,
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

/// Which sessions a listing gives: newest activity first, `limit` after
/// `offset` of those at or below `dir` and active since `since` (of
/// `host`, in the team database).
#[derive(Clone, Debug, Default)]
pub struct SessionList {
    /// Only this host's (the team database).
    pub host: Option<String>,
    /// Only sessions at or below this directory (normalized).
    pub dir: Option<String>,
    /// Only sessions active at or after this time (epoch ms).
    pub since: Option<i64>,
    /// Skip this many.
    pub offset: usize,
    /// At most this many.
    pub limit: usize,
}

/// A page of a listing, and how many the listing holds.
#[derive(Clone, Debug, Default)]
pub struct SessionPage {
    /// The page, newest activity first, each with its family.
    pub sessions: Vec<SessionRow>,
    /// Sessions the listing holds in all.
    pub total: usize,
}

/// Which session a `show` argument names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionKey {
    /// A session file, by its stored path.
    Path(String),
    /// A session id.
    Id(String),
}
