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

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};

use pi_index::index::PiIndex;
use pi_index::pi::Kinds;
use pi_index::pipeline::{build, BuildOptions};
use pi_index::search::query::Filters;
use pi_index::search::{SearchRequest, Sort};

#[path = "corpus.rs"]
mod corpus;
use corpus::{corpus, size};

fn index() -> PathBuf {
    if let Some(dir) = std::env::var_os("PI_INDEX_BENCH_INDEX") {
        return PathBuf::from(dir);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target").join(format!("bench-index-{}", size()));
    if !dir.join("meta.json").exists() {
        build(
            &BuildOptions {
                roots: vec![corpus()],
                index_dir: dir.clone(),
                kinds: Kinds::default(),
                threads: 2,
                memory_budget: 64 << 20,
                full: false,
                prune: false,
                locations: Vec::new(),
            },
            &|_| {},
        )
        .unwrap();
    }
    dir
}

fn request(query: &str, sort: Sort) -> SearchRequest {
    SearchRequest {
        query: query.into(),
        filters: Filters::default(),
        sort,
        limit: 20,
        offset: 0,
        snippet_chars: 160,
        now: pi_index::search::query::Now::system(),
    }
}

fn search(c: &mut Criterion) {
    let pi = PiIndex::open(&index()).unwrap();
    let searcher = pi.searcher().unwrap();
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
        let hits = pi.search(&searcher, &req).unwrap();
        eprintln!(
            "{name}: {query:?} -> {} of {} hits",
            hits.hits.len(),
            hits.total
        );
        g.bench_function(name, |b| {
            b.iter(|| pi.search(&searcher, &req).unwrap().hits.len())
        });
    }
    g.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
