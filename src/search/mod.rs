//! The read side: the query language, searching, reading a session's
//! documents back, listings and statistics. Nothing here writes the index.
//!
//! - [`query`]: the query language and its filters, turned into a tantivy
//!   query.
//! - [`hits`]: ranked hits with snippets; a page's first hits are found
//!   by the private module `top` (in time order, or best first through
//!   pruning).
//! - [`around`](mod@around): the messages around a line of a session.
//! - [`family`]: which session was forked from which.
//! - [`cache`]: what an open index keeps between searches of one state.
//! - [`copies`]: one hit for a message copied into forks.
//! - [`groups`]: the copy groups a build saves, so that merging copies
//!   costs a search almost nothing.
//! - [`lineage`]: a session's parent and forks, as printed.
//! - [`reader`]: finding a session and reading its stored documents;
//!   session listings.
//! - [`sessions`]: session-level search (one row per session, for a
//!   picker).
//! - [`snippet`]: snippets, from a bounded window of a long text.
//! - [`stats`]: what the index holds.
//! - [`usage`](mod@usage): what Pi cost, each entry of a family once.

pub mod around;
pub mod cache;
pub mod column_set;
pub mod copies;
pub mod family;
pub mod groups;
pub mod hits;
pub mod lineage;
pub mod parallel;
pub mod query;
pub mod reader;
pub mod sessions;
pub mod snippet;
pub mod stats;
pub(crate) mod top;
pub mod usage;

pub use hits::{Hit, SearchError, SearchRequest, SearchResult, Sort};
pub use reader::{LookupError, SessionKey, SessionRow, StoredDoc};
pub use sessions::{Matched, SessionHit, SessionQuery, SessionSearch};
