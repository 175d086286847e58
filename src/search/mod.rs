//! The read side: the query language, searching, reading a session's
//! documents back, listings and statistics. Nothing here writes the index.
//!
//! - [`reader`]: the read side's handle on an index ([`Reader`]): the
//!   index and what its searches keep between them ([`cache`]: the
//!   families, the copy groups, time orders, dictionary lookups).
//! - [`local`]: the handle and a searcher over one commit ([`Local`]):
//!   what the front ends ask of the local index.
//! - [`query`]: the query language and its filters, turned into a tantivy
//!   query.
//! - [`hits`]: ranked hits with snippets; a page's first hits are found
//!   by the private module `top` (in time order, or best first through
//!   pruning).
//! - [`types`]: what is returned: a message, a session, a hit.
//! - [`around`](mod@around): the messages around a line of a session.
//! - [`family`]: a session's parent and forks filled in, from the
//!   families the index resolves ([`crate::index::family`]).
//! - [`copies`]: one hit for a message copied into forks; [`skip`]: the
//!   copy groups the build saved, skipped by a search.
//! - [`lineage`]: a session's parent and forks, as printed.
//! - [`lookup`]: finding a session and reading its stored documents;
//!   session listings; [`messages`]: message documents read back whole.
//! - [`sessions`]: session-level search (one row per session, for a
//!   picker).
//! - [`snippet`]: snippets, from a bounded window of a long text.
//! - [`stats`]: what the index holds.

pub mod around;
pub mod cache;
pub mod column_set;
pub mod copies;
pub mod error;
pub mod family;
pub mod hits;
pub mod lineage;
pub mod local;
pub mod lookup;
pub mod messages;
pub mod parallel;
pub mod query;
pub mod reader;
pub mod sessions;
pub mod skip;
pub mod snippet;
pub mod stats;
pub(crate) mod top;
pub mod types;

pub use error::SearchError;
pub use hits::{SearchRequest, SearchResult};
pub use local::Local;
pub use query::Sort;
pub use reader::Reader;
pub use sessions::{Matched, SessionHit, SessionQuery, SessionSearch};
pub use types::{CopyRef, Hit, LookupError, SessionKey, SessionRow, StoredDoc};
