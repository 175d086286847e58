//! The integration tests: the real `pi-index` binary on the fixtures, on
//! generated corpora and on files changed under its feet. One test binary
//! whose modules share `util` (ripgrep's layout), so tantivy and the
//! helpers are linked once. The tests that need fault injection live in
//! `failpoints.rs`, built with `--features failpoints`.

// Benches, examples and tests print as they like; only the product is
// held to printing through pi_index::output (clippy.toml).
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

mod util;

mod architecture;
mod build;
mod check;
mod comments;
mod concurrency;
mod corpus;
mod crash;
mod docs;
mod forks;
mod format_rules;
mod hostile;
mod incremental;
mod locations;
mod mcp;
mod mcp_limits;
mod mempalace;
mod never_panics;
mod omp;
mod paging;
mod permissions;
mod pi16;
mod pick;
mod pick_app;
mod query;
mod recall;
mod release;
mod search;
mod serve;
mod serve_hostile;
mod sessions_cost;
mod sessions_limit;
mod sessions_search;
mod team;
mod team_usage;
mod usage;
mod watch;
