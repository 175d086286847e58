//! The picker's latency: a keystroke to the frame that shows its results
//! (the session-level search, the preview of the selected hit, the draw),
//! driven through the app's state machine into ratatui's `TestBackend`
//! (see `pick_drive.rs`). Each iteration is the last key of a query,
//! typed and then taken back, alternately: both are keystrokes a user
//! makes. Criterion reports the mean; `examples/pick_latency.rs` prints
//! the median and p99 of every keystroke of typing each query.
//!
//! ```text
//! PI_INDEX_BENCH_INDEX=DIR cargo bench --bench pick
//! ```

// Benches, examples and tests print as they like; only the product is
// held to printing through pi_index::output (clippy.toml).
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use crossterm::event::KeyCode;

use pi_index::pick::View;

#[path = "corpus.rs"]
mod corpus;
#[path = "pick_drive.rs"]
mod pick_drive;
use pick_drive::{Driver, SCENARIOS};

fn keystroke(c: &mut Criterion) {
    let dir = corpus::index();
    let mut g = c.benchmark_group("pick_keystroke_to_frame");
    for (name, query) in SCENARIOS {
        let (prefix, last) = query.split_at(query.len() - 1);
        let last = last.chars().next().unwrap();
        let mut d = Driver::new(View::open(&dir).unwrap(), prefix);
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += if d.app.query().text.len() == prefix.len() {
                        d.press(KeyCode::Char(last))
                    } else {
                        d.press(KeyCode::Backspace)
                    };
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, keystroke);
criterion_main!(benches);
