//! The naive Rust extractor: every line into a `serde_json::Value`, the
//! same default rules as pi-index, one thread per core (rayon) so only the
//! parsing approach differs. Used by `scripts/bench.sh`.
//!
//! ```text
//! cargo run --release --example serde_extract -- CORPUS
//! ```

// Benches, examples and tests print as they like; only the product is
// held to printing through pi_index::output (clippy.toml).
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use rayon::prelude::*;

#[path = "../benches/serde_baseline.rs"]
mod serde_baseline;

fn main() {
    let roots: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    let files = pi_index::discover::discover(&roots).files;
    let (docs, text) = files
        .par_iter()
        .map(|c| {
            let bytes = std::fs::read(&c.path).unwrap_or_default();
            serde_baseline::extract(&bytes)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    println!("{docs} documents, {text} text bytes");
}
