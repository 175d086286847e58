//! A session's place in its family, as `sessions --json`, `show` and
//! MCP print it: its parent (stated or inferred) and its forks. The types
//! alone, below both the listings ([`super::session`]) and the families
//! that fill them ([`crate::search::family`], and the team database's
//! rows).

use serde::Serialize;

pub use crate::index::family::Link;

/// A session's parent, as `sessions --json` and `show` print it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ParentRef {
    /// The parent's session id (null when it is not indexed).
    pub session: Option<String>,
    /// The parent's file: where it is indexed, else the path the header
    /// names.
    pub path: String,
    /// Whether the header names it or it was inferred.
    pub how: Link,
}

/// A session named in a family.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SessionRef {
    /// Session id.
    pub session: String,
    /// Session file.
    pub path: String,
}

/// A session's place in its family: its parent and its forks (the
/// sessions whose parent it is), oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Lineage {
    /// The parent, if it has one.
    pub parent: Option<ParentRef>,
    /// Its forks.
    pub forks: Vec<SessionRef>,
}
