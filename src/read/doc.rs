//! A message as the read side gives it (a line of `show --format json`),
//! which of a session's messages a page shows, and the messages around
//! a place in a session.

use serde::Serialize;

use super::session::SessionRow;
use crate::pi::time::format_millis;
use crate::pi::{Agent, Edited, Role};

/// A message as `show --format json` prints it: the stable, documented
/// output contract (one object per line).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StoredDoc {
    /// The host that pushed it (the team database's messages only: the
    /// local index holds this machine's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
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
            host: session.and_then(|s| s.host.clone()),
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

/// Which messages of a session a page shows.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Only the active branch's.
    pub active_only: bool,
    /// Skip this many.
    pub offset: usize,
    /// At most this many.
    pub limit: usize,
}

/// Where in a session a preview is centred.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The message of the entry at this byte offset, with this role (an
    /// entry may hold a thinking block and a text).
    Message {
        /// Byte offset of the entry's line.
        offset: u64,
        /// The message's role rank ([`crate::pi::Role::rank`]).
        role: u64,
    },
    /// The start of the session (its first message: what a session
    /// found by its title is known by).
    Start,
    /// The end of the session: where it was left.
    End,
}

/// The messages around a target, in file order, every branch (as `show
/// --around` prints them).
#[derive(Clone, Debug, Default)]
pub struct Preview {
    /// The messages shown, in file order.
    pub docs: Vec<StoredDoc>,
    /// Which of them is the target.
    pub at: usize,
    /// Messages of the session before the first shown.
    pub before: usize,
    /// Messages of the session after the last shown.
    pub after: usize,
}
