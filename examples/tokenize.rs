//! The tokenizer alone: tokens per second over a file of messages
//! separated by NUL lines (`scripts/dump-text.py` writes a corpus's
//! user and assistant text so), and a checksum of what it produced, so that two
//! versions of the tokenizer can be compared for speed (and under
//! `valgrind --tool=callgrind`, for instructions per token) and for
//! output.
//!
//! ```sh
//! cargo run --release --example tokenize -- TEXT_FILE [ROUNDS]
//! ```

// A measuring tool: it prints to stdout.
#![allow(clippy::disallowed_macros)]

use std::time::Instant;

use tantivy::tokenizer::TokenStream;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: tokenize TEXT_FILE [ROUNDS]");
    let rounds: usize = args.next().map_or(3, |r| r.parse().expect("ROUNDS"));
    let text = std::fs::read_to_string(&path).expect("a UTF-8 file");
    let messages: Vec<&str> = text.split("\n\0\n").collect();
    let mut analyzer = pi_index::index::tokenizer::analyzer();
    for round in 0..rounds {
        let started = Instant::now();
        let (mut tokens, mut sum) = (0u64, 0u64);
        for m in &messages {
            let mut stream = analyzer.token_stream(m);
            while stream.advance() {
                let t = stream.token();
                tokens += 1;
                // A checksum of texts and positions: a faster tokenizer
                // must give the same one.
                sum = sum
                    .wrapping_mul(31)
                    .wrapping_add(t.text.len() as u64 ^ (t.position as u64) << 8)
                    .wrapping_add(t.text.as_bytes().first().copied().unwrap_or(0) as u64)
                    .wrapping_add((t.offset_from as u64) << 20);
            }
        }
        let s = started.elapsed().as_secs_f64();
        println!(
            "round {round}: {tokens} tokens in {:.1} ms, {:.1} ns/token, {:.0} MB/s, checksum {sum:x}",
            s * 1e3,
            s * 1e9 / tokens as f64,
            text.len() as f64 / 1e6 / s
        );
    }
}
