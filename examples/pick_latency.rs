//! The picker's keystroke-to-frame latency, as docs/pick.md gives it: each
//! query of `benches/pick_drive.rs` typed key by key from an empty query,
//! `--rounds` times, every keystroke timed from the key event to the
//! frame (120x40, `TestBackend`) that shows its rows and preview; then
//! the median, p99 and maximum per query and over all.
//!
//! ```text
//! cargo run --release --example pick_latency -- INDEX_DIR [--rounds N]
//! ```

// Benches, examples and tests print as they like; only the product is
// held to printing through pi_index::output (clippy.toml).
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use std::path::PathBuf;
use std::time::Duration;

use pi_index::pick::View;

#[path = "../benches/pick_drive.rs"]
mod pick_drive;
use pick_drive::{Driver, SCENARIOS};

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// The `q` quantile of sorted `v` (nearest rank).
fn quantile(v: &[Duration], q: f64) -> Duration {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<PathBuf> = None;
    let mut rounds = 20usize;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--rounds N")
            }
            _ => dir = Some(PathBuf::from(a)),
        }
    }
    let dir = dir
        .or_else(|| std::env::var_os("PI_INDEX_BENCH_INDEX").map(PathBuf::from))
        .expect("usage: pick_latency INDEX_DIR [--rounds N]");
    let local = pi_index::search::Local::open(&dir).expect("open the index");
    let documents = local.searcher.num_docs();
    let view = View::local(local);
    println!(
        "index {}: {} documents; terminal {}x{}; {rounds} rounds",
        dir.display(),
        documents,
        pick_drive::SIZE.0,
        pick_drive::SIZE.1
    );
    let mut d = Driver::new(view, "");
    // One round unmeasured: the index's pages into the page cache.
    for (_, query) in SCENARIOS {
        d.type_query(query);
    }
    let mut all = Vec::new();
    println!("| query | keystrokes | median | p99 | max | last key (full query), median |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, query) in SCENARIOS {
        let mut times = Vec::new();
        let mut last = Vec::new();
        for _ in 0..rounds {
            let t = d.type_query(query);
            last.push(*t.last().unwrap());
            times.extend(t);
        }
        times.sort();
        last.sort();
        println!(
            "| {name}: `{query}` | {} | {} | {} | {} | {} |",
            times.len(),
            ms(quantile(&times, 0.5)),
            ms(quantile(&times, 0.99)),
            ms(*times.last().unwrap()),
            ms(quantile(&last, 0.5)),
        );
        all.extend(times);
    }
    all.sort();
    println!(
        "| all | {} | {} | {} | {} | |",
        all.len(),
        ms(quantile(&all, 0.5)),
        ms(quantile(&all, 0.99)),
        ms(*all.last().unwrap()),
    );
}
