//! For a team: every member's sessions in one PostgreSQL database, pushed
//! from each member's local index and searched there with the same query
//! language.
//!
//! This is a front end beside [`crate::search`]'s and the MCP server's:
//! it reads the committed local index ([`crate::index`]) and the query
//! grammar ([`crate::search::query::grammar`]), and knows nothing of the
//! build.
//!
//! - [`schema`]: the tables, their version, and the migration to it.
//! - [`text`]: `tsvector` and `tsquery` literals made by pi-index's own
//!   tokenizer, so that the server finds exactly what the local index
//!   finds (identifiers by their parts, folded, CJK per character).
//! - [`lineage`]: each session's place in its family, resolved by the
//!   pushing host's local index and kept on its row.
//! - [`push`]: what changed in the local index since this host's last
//!   push, sent by `COPY` in bounded batches, one transaction each, the
//!   push state committed with the rows.
//! - [`query`]: the query tree compiled to a SQL `WHERE` clause (user text
//!   only ever as bind parameters).
//! - [`search`]: `search`, `sessions` and `show` against the database.
//! - [`browse`]: what the front ends read beside searches: a session's
//!   messages a page at a time or around a place, and the stats.
//! - [`usage`]: what every host's sessions spent, for the report of
//!   [`crate::read::usage`].
//! - [`source`]: the database as a source of the read interface
//!   ([`Team`]: a pool of connections), what every front end reads with
//!   `--db`.
//! - [`db`]: one connection ([`Db`]), the URL it is made from, and the
//!   errors of the team database.
//! - `tls`: the connection's TLS (rustls), as `sslmode` asks.
//!
//! Every statement runs through one [`Db`]: a connection and the small
//! single-threaded runtime that drives it.

pub mod browse;
pub mod db;
pub mod lineage;
pub mod push;
pub mod query;
pub mod schema;
pub mod search;
pub mod source;
pub mod text;
mod tls;
pub mod usage;

pub use db::{advice, default_host_name, Db, TeamError, URL_VAR};
pub use source::Team;
