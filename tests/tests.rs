//! The integration tests: the real `pi-index` binary on the fixtures, on
//! generated corpora and on files changed under its feet. One test binary
//! whose modules share `util` (ripgrep's layout), so tantivy and the
//! helpers are linked once. The tests that need fault injection live in
//! `failpoints.rs`, built with `--features failpoints`.

mod util;

mod build;
mod corpus;
mod crash;
mod format_rules;
mod incremental;
mod mcp;
mod never_panics;
mod permissions;
mod search;
