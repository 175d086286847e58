//! Throughput of every build stage (split, fingerprint, parse+extract with
//! a serde_json baseline, tantivy indexing of extracted documents, the
//! whole build), on a generated corpus of realistic
//! sessions (see `scripts/gen-corpus.py`).
//!
//! The corpus is `$PI_INDEX_BENCH_CORPUS` if set, else one generated once
//! into `target/bench-corpus-<size>` (size `$PI_INDEX_BENCH_SIZE`, default
//! 64MB; the issue's floors are measured with 256MB). Files are read once
//! before measuring, so the page cache is warm and the numbers are CPU, not
//! disk.
//!
//! ```text
//! cargo bench --bench throughput                 # all groups
//! PI_INDEX_BENCH_SIZE=256MB cargo bench --bench throughput -- parse_extract
//! ```

// Benches, examples and tests print as they like; only the product is
// held to printing through pi_index::output (clippy.toml).
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rayon::prelude::*;

use pi_index::discover::discover;
use pi_index::index::writer::{IndexStore, SessionMeta};
use pi_index::pi::fingerprint::read_header;
use pi_index::pi::Kinds;
use pi_index::pipeline::{build, parse_session, read_session, BuildOptions};
use pi_index::source::{count_lines, MappedFile};

#[path = "serde_baseline.rs"]
mod serde_baseline;

#[path = "corpus.rs"]
mod corpus;
use corpus::corpus;

/// Threads used by the parallel groups: the floors are stated for 2.
const THREADS: usize = 2;

struct Corpus {
    files: Vec<PathBuf>,
    bytes: u64,
}

fn load() -> Corpus {
    let dir = corpus();
    let found = discover(&[dir]);
    let mut bytes = 0;
    let files: Vec<PathBuf> = found
        .files
        .into_iter()
        .map(|c| {
            // Warm the page cache.
            bytes += std::fs::read(&c.path).map(|b| b.len() as u64).unwrap_or(0);
            c.path
        })
        .collect();
    Corpus { files, bytes }
}

fn pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .unwrap()
}

fn stages(c: &mut Criterion) {
    let corpus = load();
    let pool = pool();
    eprintln!(
        "corpus: {} files, {:.1} MB",
        corpus.files.len(),
        corpus.bytes as f64 / 1e6
    );

    let mut g = c.benchmark_group("split_lines");
    g.sample_size(10)
        .throughput(Throughput::Bytes(corpus.bytes));
    g.bench_function("memchr_1_thread", |b| {
        b.iter(|| {
            corpus
                .files
                .iter()
                .map(|p| count_lines(MappedFile::open(p).unwrap().bytes()))
                .sum::<u64>()
        })
    });
    g.finish();

    let mut g = c.benchmark_group("fingerprint");
    g.sample_size(10)
        .throughput(Throughput::Elements(corpus.files.len() as u64));
    g.bench_function("first_line_per_file", |b| {
        b.iter(|| {
            corpus
                .files
                .iter()
                .filter(|p| {
                    let mut f = std::fs::File::open(p).unwrap();
                    read_header(&mut f).unwrap().is_ok()
                })
                .count()
        })
    });
    g.finish();

    let mut g = c.benchmark_group("parse_extract");
    g.sample_size(10)
        .throughput(Throughput::Bytes(corpus.bytes));
    g.bench_function(BenchmarkId::new("simd_json_tape", THREADS), |b| {
        b.iter(|| {
            pool.install(|| {
                corpus
                    .files
                    .par_iter()
                    .map(|p| match read_session(p, Kinds::default()).unwrap() {
                        Ok((s, _)) => s.documents.len(),
                        Err(_) => 0,
                    })
                    .sum::<usize>()
            })
        })
    });
    g.bench_function(BenchmarkId::new("serde_json_value", THREADS), |b| {
        b.iter(|| {
            pool.install(|| {
                corpus
                    .files
                    .par_iter()
                    .map(|p| serde_baseline::extract(MappedFile::open(p).unwrap().bytes()).0)
                    .sum::<u64>()
            })
        })
    });
    // The same two on files mapped once before measuring (and read once, so
    // their pages are mapped): parse and extract alone, without the
    // per-file open, map, page faults and unmap of the two above.
    let maps: Vec<MappedFile> = corpus
        .files
        .iter()
        .map(|p| MappedFile::open(p).unwrap())
        .collect();
    let touched: u64 = maps.iter().map(|m| count_lines(m.bytes())).sum();
    assert!(touched > 0);
    g.bench_function(BenchmarkId::new("simd_json_tape_premapped", THREADS), |b| {
        b.iter(|| {
            pool.install(|| {
                maps.par_iter()
                    .map(|m| match parse_session(m, Kinds::default()).unwrap() {
                        Ok((s, _)) => s.documents.len(),
                        Err(_) => 0,
                    })
                    .sum::<usize>()
            })
        })
    });
    g.bench_function(
        BenchmarkId::new("serde_json_value_premapped", THREADS),
        |b| {
            b.iter(|| {
                pool.install(|| {
                    maps.par_iter()
                        .map(|m| serde_baseline::extract(m.bytes()).0)
                        .sum::<u64>()
                })
            })
        },
    );
    drop(maps);
    g.finish();

    // tantivy alone: the documents of the corpus, already extracted,
    // written and committed into a fresh index. Throughput is in bytes of
    // text indexed (5-8% of the corpus).
    let sessions: Vec<(pi_index::pi::Session, String)> = corpus
        .files
        .iter()
        .filter_map(|p| match read_session(p, Kinds::default()).unwrap() {
            Ok((s, _)) => Some((s, p.to_string_lossy().into_owned())),
            Err(_) => None,
        })
        .collect();
    let text_bytes: u64 = sessions
        .iter()
        .flat_map(|(s, _)| s.documents.iter())
        .map(|d| d.text.len() as u64)
        .sum();
    let mut g = c.benchmark_group("index_documents");
    g.sample_size(10).throughput(Throughput::Bytes(text_bytes));
    g.bench_function(BenchmarkId::new("tantivy_text_bytes", THREADS), |b| {
        // The documents are copied before each run (they are consumed),
        // outside the measurement; the parsing threads index them, as in a
        // build.
        b.iter_batched(
            || {
                let docs: Vec<Vec<pi_index::pi::Document>> =
                    sessions.iter().map(|(s, _)| s.documents.clone()).collect();
                (tempfile::tempdir().unwrap(), docs)
            },
            |(dir, docs)| {
                let store = IndexStore::open_or_create(&dir.path().join("index"), false).unwrap();
                let w = store.writer(THREADS, 64 << 20).unwrap();
                pool.install(|| {
                    sessions.par_iter().zip(docs).for_each(|((s, path), docs)| {
                        w.add_documents(&SessionMeta::of(s, path), docs).unwrap();
                    })
                });
                (
                    w.commit("none", 0, &[], &|_, _| {}).unwrap().0.documents,
                    dir,
                )
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("build");
    g.sample_size(10)
        .throughput(Throughput::Bytes(corpus.bytes));
    g.bench_function(BenchmarkId::new("end_to_end_fresh_index", THREADS), |b| {
        b.iter_batched(
            || tempfile::tempdir().unwrap(),
            |dir| {
                let report = build(
                    &BuildOptions::new(vec![corpus_root(&corpus)], dir.path().join("index"))
                        .threads(THREADS)
                        .thread_memory(32 << 20),
                    &|_| {},
                )
                .unwrap();
                (report.messages_indexed, dir)
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn corpus_root(_c: &Corpus) -> PathBuf {
    corpus()
}

criterion_group!(benches, stages);
criterion_main!(benches);
