//! Search latency inside the process: one word, two words, a phrase, a
//! filtered query and a date-sorted query, each returning 20 hits with
//! snippets (what `pi-index search` prints).
//!
//! The index is built once from the corpus (see `throughput.rs`) into
//! `target/bench-index-<size>`; `$PI_INDEX_BENCH_INDEX` points at an
//! existing index instead.
//!
//! ```text
//! PI_INDEX_BENCH_SIZE=1GB cargo bench --bench search
//! ```

// Benches, examples and tests print as they like; only the product is
// held to printing through pi_index::output (clippy.toml).
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use criterion::{criterion_group, criterion_main, Criterion};

use pi_index::read::SearchRequest;
use pi_index::search::query::Filters;
use pi_index::search::Local;
use pi_index::search::Sort;

#[path = "corpus.rs"]
mod corpus;

fn request(query: &str, sort: Sort) -> SearchRequest {
    SearchRequest {
        query: query.into(),
        filters: Filters::default(),
        sort,
        limit: 20,
        offset: 0,
        snippet_chars: 160,
        now: pi_index::search::query::Now::system(),
        copies: false,
    }
}

fn search(c: &mut Criterion) {
    let local = Local::open(&corpus::index()).unwrap();
    let mut g = c.benchmark_group("search_20_hits");
    for (name, query, sort) in [
        ("one_word_rare", "zqplant0042", Sort::Relevance),
        ("one_word_common", "error", Sort::Relevance),
        ("two_words", "error handling", Sort::Relevance),
        ("phrase", "\"let me\"", Sort::Relevance),
        (
            "filtered",
            "error role:user after:2026-02-01",
            Sort::Relevance,
        ),
        ("sorted_by_date", "error", Sort::Newest),
    ] {
        let req = request(query, sort);
        let hits = local.search(&req).unwrap();
        eprintln!(
            "{name}: {query:?} -> {} of {} hits",
            hits.hits.len(),
            hits.total
        );
        g.bench_function(name, |b| b.iter(|| local.search(&req).unwrap().hits.len()));
    }
    g.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
