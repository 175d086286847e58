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
//! - what is returned (a message, a session, a hit) is the read
//!   interface's objects ([`crate::read`]), which [`Local`] implements.
//! - [`around`](mod@around): the messages around a line of a session.
//! - [`family`]: a session's parent and forks filled in, from the
//!   families the index resolves ([`crate::index::family`]).
//! - [`copies`]: one hit for a message copied into forks; [`skip`]: the
//!   copy groups the build saved, skipped by a search.
//! - [`lookup`]: finding a session and reading its stored documents;
//!   session listings; [`messages`]: message documents read back whole.
//! - [`sessions`]: session-level search (one row per session, for a
//!   picker); [`preview`]: the messages around a place in a session.
//! - [`snippet`]: snippets, from a bounded window of a long text.
//! - [`stats`]: what the index holds.
//! - [`usage`](mod@usage): what Pi cost, each entry of a family once.

pub mod around;
pub mod cache;
pub mod column_set;
pub mod copies;
pub mod error;
pub mod family;
pub mod hits;
pub mod local;
pub mod lookup;
pub mod messages;
pub mod parallel;
pub mod preview;
pub mod query;
pub mod reader;
pub mod sessions;
pub mod skip;
pub mod snippet;
pub mod stats;
pub(crate) mod top;
pub mod usage;

pub use error::{LookupError, SearchError};
pub use local::Local;
pub use query::Sort;
pub use reader::Reader;
