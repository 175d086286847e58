//! The corpus the benches read: `$PI_INDEX_BENCH_CORPUS` if set, else one
//! generated once by `scripts/gen-corpus.py` (seed 42) into
//! `target/bench-corpus-<vocab>-<size>`, size `$PI_INDEX_BENCH_SIZE`
//! (default 64MB, small enough for `cargo bench` to finish in minutes
//! anywhere), vocabulary `$PI_INDEX_BENCH_VOCAB` (`real`, the default:
//! text from the local cargo registry's sources; or `words`, the old word
//! lists, which flatter any index).

use std::path::{Path, PathBuf};
use std::process::Command;

use pi_index::pipeline::{build, BuildOptions};

/// The corpus size asked for.
pub fn size() -> String {
    std::env::var("PI_INDEX_BENCH_SIZE").unwrap_or_else(|_| "64MB".into())
}

/// The vocabulary asked for.
pub fn vocab() -> String {
    std::env::var("PI_INDEX_BENCH_VOCAB").unwrap_or_else(|_| "real".into())
}

/// The corpus directory, generated on first use.
pub fn corpus() -> PathBuf {
    if let Some(dir) = std::env::var_os("PI_INDEX_BENCH_CORPUS") {
        return PathBuf::from(dir);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root
        .join("target")
        .join(format!("bench-corpus-{}-{}", vocab(), size()));
    if !dir.join(".complete").exists() {
        let _ = std::fs::remove_dir_all(&dir);
        let status = Command::new("python3")
            .arg(root.join("scripts/gen-corpus.py"))
            .arg("--out")
            .arg(&dir)
            .args(["--size", &size(), "--seed", "42", "--vocab", &vocab()])
            .status()
            .expect("python3 runs scripts/gen-corpus.py");
        assert!(status.success(), "corpus generation failed");
        std::fs::write(dir.join(".complete"), b"").unwrap();
    }
    dir
}

/// The index the search and picker benches read: `$PI_INDEX_BENCH_INDEX`,
/// else one built once from [`corpus`] into `target/bench-index-<size>`.
#[allow(dead_code)] // not every bench that includes this file reads an index
pub fn index() -> PathBuf {
    if let Some(dir) = std::env::var_os("PI_INDEX_BENCH_INDEX") {
        return PathBuf::from(dir);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target").join(format!("bench-index-{}", size()));
    if !dir.join("meta.json").exists() {
        build(
            &BuildOptions::new(vec![corpus()], dir.clone())
                .threads(2)
                .thread_memory(32 << 20),
            &|_| {},
        )
        .unwrap();
    }
    dir
}
