//! One read interface over the two places sessions are read from: the
//! local index ([`crate::search::Local`]) and the team database
//! ([`crate::team::Team`]). Both give the same objects (a message, a
//! session, a hit, the stats), each with its `host` where it has one, so
//! that every front end (the command line, the web view, the MCP server,
//! the picker) is written once, against [`Source`]; what only the local
//! index can give (a session's file: its tool calls, its tree, its raw
//! lines) is a [`Capabilities`] a front end checks.
//!
//! - [`source`]: the interface, what each source can give, and its
//!   errors.
//! - [`doc`], [`session`], [`hit`], [`found`], [`lineage`], [`stats`]: the
//!   objects.
//! - [`open`](mod@open): the source a command reads (`--db`, else the
//!   local index).

pub mod doc;
pub mod found;
pub mod hit;
pub mod lineage;
pub mod open;
pub mod session;
pub mod source;
pub mod stats;
pub mod usage;

pub use doc::{Preview, StoredDoc, Target, Window};
pub use found::{Matched, SessionHit, SessionQuery, SessionSearch};
pub use hit::{CopyRef, Hit, SearchRequest, SearchResult};
pub use lineage::{Lineage, Link, ParentRef, SessionRef};
pub use open::{database_url, open, serving};
pub use session::{SessionKey, SessionList, SessionPage, SessionRow};
pub use source::{Capabilities, Kind, ReadError, Source};
pub use stats::{Activity, Built, HostStats, Place, Project, Stats};
