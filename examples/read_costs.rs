//! What a search pays before its own work, per call, in one process: the
//! query-side expansion of a text's words into its segmentations
//! ([`pi_index::search::query::expand::alternatives`]) and the families
//! ([`pi_index::index::PiIndex::families`]), each repeated N times warm;
//! and what a build's commit adds to save the copy groups
//! ([`pi_index::search::groups::save`]; this rewrites the index's file
//! for its current state) and a search to read them.
//!
//!     cargo run --release --example read_costs -- INDEX TEXT N
#![allow(clippy::disallowed_macros)]

use std::time::Instant;

use pi_index::index::PiIndex;
use pi_index::search::query::expand::{alternatives, Dictionary, Typed};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 4 {
        eprintln!("usage: read_costs INDEX TEXT N");
        std::process::exit(2);
    }
    let pi = PiIndex::open(std::path::Path::new(&a[1])).expect("an index");
    let searcher = pi.index.reader().expect("a reader").searcher();
    let n: u32 = a[3].parse().expect("N, a number");
    let word = &a[2];
    let t = Instant::now();
    let mut forms: Vec<Vec<String>> = Vec::new();
    for _ in 0..n {
        let mut d = Dictionary::new(&searcher, pi.fields.text);
        let mut toks = Vec::new();
        pi_index::index::tokenizer::analyzer()
            .token_stream(word)
            .process(&mut |t| toks.push((t.position, t.offset_to, t.text.clone())));
        let typed = Typed::of(&toks);
        forms = alternatives(&typed, &mut d)
            .into_iter()
            .map(|f| f.into_iter().map(|(_, t)| t).collect())
            .collect();
    }
    println!("alternatives: {:?} per call: {forms:?}", t.elapsed() / n);
    let reader = pi_index::search::Reader::new(pi.clone());
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(reader.families(&searcher).expect("families"));
    }
    println!("families: {:?} per call", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        pi_index::index::saved::groups::save(&pi, &searcher).expect("groups saved");
    }
    println!("copy groups saved: {:?} per call", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        // A fresh index each time: an open one keeps what it read.
        let fresh = pi_index::search::Reader::open(std::path::Path::new(&a[1])).expect("an index");
        std::hint::black_box(fresh.copy_groups(&searcher).expect("groups for this state"));
    }
    println!(
        "copy groups read, with an open: {:?} per call",
        t.elapsed() / n
    );
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(PiIndex::open(std::path::Path::new(&a[1])).expect("an index"));
    }
    println!("an open alone: {:?} per call", t.elapsed() / n);
}
