//! Where a build's CPU goes, phase by phase, in one process.
//!
//! For a corpus directory, four rounds of: parse and extract every file
//! (2 threads), index the extracted documents into a fresh index (2
//! threads feeding tantivy's 2 indexing threads, nothing else running;
//! the build also writes one small summary document per session),
//! then a whole `build` of the same files into another fresh index. CPU
//! time is the process's (`getrusage`, all threads), so the phases can be
//! compared with the budget a target speed leaves: at 0.6 GB/s, 2 cores
//! have 0.85 CPU-seconds per 256 MB.
//!
//! ```text
//! cargo run --release --example phases -- CORPUS_DIR
//! ```

// Benches, examples and tests print as they like; only the product is
// held to printing through pi_index::output (clippy.toml).
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;

use pi_index::discover::discover;
use pi_index::index::writer::{IndexStore, SessionMeta};
use pi_index::pi::Kinds;
use pi_index::pipeline::{build, read_session, BuildOptions};

const THREADS: usize = 2;
const MEMORY: usize = 32 << 20;

/// CPU seconds used by this process so far, all threads.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// Run `f`, returning its result with the CPU and wall seconds it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (cpu, wall) = (cpu_seconds(), Instant::now());
    let out = f();
    (out, cpu_seconds() - cpu, wall.elapsed().as_secs_f64())
}

fn main() {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: phases CORPUS_DIR");
        std::process::exit(2);
    };
    let found = discover(std::slice::from_ref(&dir));
    let bytes: u64 = found.files.iter().map(|c| c.len).sum();
    let files: Vec<PathBuf> = found.files.into_iter().map(|c| c.path).collect();
    println!("{} files, {:.1} MB", files.len(), bytes as f64 / 1e6);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("thread pool");
    for round in 1..=4 {
        let (sessions, parse_cpu, parse_wall) = timed(|| {
            pool.install(|| {
                files
                    .par_iter()
                    .filter_map(|p| match read_session(p, Kinds::default()) {
                        Ok(Ok((s, _))) => Some((s, p.to_string_lossy().into_owned())),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
            })
        });
        let scratch = tempfile::tempdir().expect("temp dir");
        let (docs, index_cpu, index_wall) = timed(|| {
            let store = IndexStore::open_or_create(&scratch.path().join("index"), false)
                .expect("open index");
            let writer = store.writer(THREADS, MEMORY).expect("writer");
            pool.install(|| {
                sessions.par_iter().for_each(|(s, path)| {
                    writer
                        .add_documents(&SessionMeta::of(s, path), s.documents.clone())
                        .expect("add");
                })
            });
            writer
                .commit("none", 0, &[], &|_, _| {})
                .expect("commit")
                .0
                .documents
        });
        drop(sessions);
        let scratch = tempfile::tempdir().expect("temp dir");
        let (report, build_cpu, build_wall) = timed(|| {
            build(
                &BuildOptions::new(vec![dir.clone()], scratch.path().join("index"))
                    .threads(THREADS)
                    .thread_memory(MEMORY),
                &|_| {},
            )
            .expect("build")
        });
        assert_eq!(
            docs, report.messages_indexed,
            "both index the same messages"
        );
        println!(
            "round {round}: parse {parse_cpu:.3} CPU-s ({parse_wall:.3} s) | \
             index {index_cpu:.3} CPU-s ({index_wall:.3} s, {docs} documents) | \
             build {build_cpu:.3} CPU-s ({build_wall:.3} s, {:.0} MB/s)",
            bytes as f64 / 1e6 / build_wall
        );
    }
}
