//! Index shapes, measured: what it costs tantivy to index the same
//! extracted messages as differently shaped documents.
//!
//! The corpus is parsed once (2 threads); then, round after round, each
//! shape indexes every message into a fresh index in a temp directory and
//! commits (merges included). CPU is the process's (`getrusage`, all
//! threads), so the shapes are comparable however busy the machine is
//! between rounds; rounds interleave the shapes, and medians are printed.
//!
//! ```text
//! cargo run --release --example shapes -- CORPUS_DIR [ROUNDS] [SHAPE,...]
//! ```
//!
//! `SHAPES_NO_TOKENS=1` skips the token statistics printed first,
//! `SHAPES_VERBOSE=1` prints the per-thread writer's segments and commit
//! cost, `SHAPES_MINIMAL=1` gives the per-thread writer's documents only
//! their text and session ordinal (what the per-message fields cost).
//!
//! Shapes (all keep the text searchable with positions, the same
//! tokenizer unless said):
//!
//! - `today`: the index as built now (every session field on every
//!   message: session id, path, cwd and model as terms and stored strings).
//! - `lean`: one document per message with only what is per message (text
//!   stored, session ordinal, role, time, branch, offset and model hash as
//!   fast columns, line and entry id stored); the session's fields would
//!   live once, on a session document.
//! - `lean-nostore`: `lean` without storing the text.
//! - `lean-simple`: `lean` with tantivy's default tokenizer (what
//!   fast-resume uses) instead of the code-aware one.
//! - `lean-thread`: `lean`, fed by the parsing threads into their own
//!   segment writers (our own document type, no copy into a
//!   `TantivyDocument`), segments added to the index at the end.
//! - `block16k`, `block64k`: consecutive messages of a session
//!   concatenated into documents of up to 16 or 64 KB of text.
//! - `session`: one document per session, all its text.
//! - `block16k-thread`, `session-thread`: those two fed by the parsing
//!   threads as `lean-thread` is.

// A measuring tool: prints numbers, never session text.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;
use tantivy::schema::{
    DateOptions, DateTimePrecision, Field, IndexRecordOption, NumericOptions, Schema,
    TextFieldIndexing, TextOptions, STORED,
};
use tantivy::{DateTime, Index, IndexWriter, TantivyDocument};

use pi_index::discover::discover;
use pi_index::index::schema::{text_analyzer, TEXT_TOKENIZER};
use pi_index::index::writer::{IndexStore, SessionMeta};
use pi_index::pi::{Document, Kinds, Session};
use pi_index::pipeline::read_session;

const THREADS: usize = 2;

thread_local! {
    static MINIMAL: bool = std::env::var_os("SHAPES_MINIMAL").is_some();
}
const MEMORY: usize = 64 << 20;

/// CPU seconds used by this process so far, all threads.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// Bytes of all files below `dir`.
fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|it| {
            it.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// The fields of the lean shape.
#[derive(Clone, Copy)]
struct Lean {
    text: Field,
    sess: Field,
    role: Field,
    ts: Field,
    active: Field,
    offset: Field,
    model: Field,
    line: Field,
    entry_id: Field,
}

fn lean_schema(store_text: bool, tokenizer: &str) -> (Schema, Lean) {
    let mut b = Schema::builder();
    let mut text_opts = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    if store_text {
        text_opts = text_opts.set_stored();
    }
    let fast = || NumericOptions::default().set_fast();
    let lean = Lean {
        text: b.add_text_field("text", text_opts),
        sess: b.add_u64_field("sess", fast()),
        role: b.add_u64_field("role", fast()),
        ts: b.add_date_field(
            "ts",
            DateOptions::default()
                .set_precision(DateTimePrecision::Milliseconds)
                .set_fast(),
        ),
        active: b.add_bool_field("active", fast()),
        offset: b.add_u64_field("offset", fast()),
        model: b.add_u64_field("model", fast()),
        line: b.add_u64_field("line", STORED),
        entry_id: b.add_text_field("entry_id", STORED),
    };
    (b.build(), lean)
}

fn hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in s.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn lean_doc(f: &Lean, sess: u64, d: &Document) -> TantivyDocument {
    let mut doc = TantivyDocument::new();
    doc.add_text(f.text, &d.text);
    doc.add_u64(f.sess, sess);
    doc.add_u64(f.role, d.role.rank());
    if let Some(ms) = d.timestamp_ms {
        doc.add_date(f.ts, DateTime::from_timestamp_millis(ms));
    }
    doc.add_bool(f.active, d.active);
    doc.add_u64(f.offset, d.offset);
    doc.add_u64(f.model, d.model.as_deref().map_or(0, hash));
    doc.add_u64(f.line, d.line);
    if let Some(id) = &d.entry_id {
        doc.add_text(f.entry_id, id);
    }
    doc
}

/// Our own document type for the per-thread writer: it owns the
/// extracted document and hands tantivy borrowed values, so nothing is
/// copied into a `TantivyDocument`.
struct LeanDoc {
    f: Lean,
    sess: u64,
    model: u64,
    doc: Document,
}

#[derive(Clone, Debug)]
enum V<'a> {
    Str(&'a str),
    U64(u64),
    Bool(bool),
    Date(DateTime),
}

impl<'a> tantivy::schema::Value<'a> for V<'a> {
    type ArrayIter = std::iter::Empty<Self>;
    type ObjectIter = std::iter::Empty<(&'a str, Self)>;
    fn as_value(&self) -> tantivy::schema::document::ReferenceValue<'a, Self> {
        use tantivy::schema::document::{ReferenceValue, ReferenceValueLeaf};
        ReferenceValue::Leaf(match *self {
            V::Str(s) => ReferenceValueLeaf::Str(s),
            V::U64(v) => ReferenceValueLeaf::U64(v),
            V::Bool(v) => ReferenceValueLeaf::Bool(v),
            V::Date(v) => ReferenceValueLeaf::Date(v),
        })
    }
}

impl tantivy::schema::Document for LeanDoc {
    type Value<'a> = V<'a>;
    type FieldsValuesIter<'a> = std::vec::IntoIter<(Field, V<'a>)>;
    fn iter_fields_and_values(&self) -> Self::FieldsValuesIter<'_> {
        let d = &self.doc;
        let f = &self.f;
        let mut v = Vec::with_capacity(9);
        v.push((f.text, V::Str(&d.text)));
        v.push((f.sess, V::U64(self.sess)));
        if MINIMAL.with(|m| *m) {
            return v.into_iter();
        }
        v.push((f.role, V::U64(d.role.rank())));
        if let Some(ms) = d.timestamp_ms {
            v.push((f.ts, V::Date(DateTime::from_timestamp_millis(ms))));
        }
        v.push((f.active, V::Bool(d.active)));
        v.push((f.offset, V::U64(d.offset)));
        v.push((f.model, V::U64(self.model)));
        v.push((f.line, V::U64(d.line)));
        if let Some(id) = &d.entry_id {
            v.push((f.entry_id, V::Str(id)));
        }
        v.into_iter()
    }
}

fn create(dir: &Path, schema: Schema) -> Index {
    let settings = tantivy::IndexSettings {
        docstore_compression: tantivy::store::Compressor::None,
        ..Default::default()
    };
    let index = Index::builder()
        .schema(schema)
        .settings(settings)
        .create_in_dir(dir)
        .expect("create index");
    index.tokenizers().register(TEXT_TOKENIZER, text_analyzer());
    index
}

/// Index through tantivy's own writer and threads: `docs` yields the
/// documents of one session.
fn via_writer<F>(dir: &Path, schema: Schema, sessions: &[(Session, String)], docs: F) -> u64
where
    F: Fn(u64, &Session, &str) -> Vec<TantivyDocument> + Sync,
{
    let index = create(dir, schema);
    let writer: IndexWriter<TantivyDocument> = index
        .writer_with_num_threads(THREADS, MEMORY)
        .expect("writer");
    let n = std::sync::atomic::AtomicU64::new(0);
    sessions.par_iter().enumerate().for_each(|(i, (s, p))| {
        for d in docs(i as u64, s, p) {
            writer.add_document(d).expect("add");
            n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    let mut writer = writer;
    writer.commit().expect("commit");
    writer.wait_merging_threads().expect("merges");
    n.into_inner()
}

/// Index the lean documents from the parsing threads into per-thread
/// segment writers, each flushed when it reaches its share of the budget,
/// and add the segments to the index at the end.
fn per_thread(dir: &Path, sessions: &[(Session, String)], block: Option<usize>) -> u64 {
    let (schema, f) = lean_schema(true, TEXT_TOKENIZER);
    let index = create(dir, schema);
    let mut writer: IndexWriter<LeanDoc> = index.writer_with_num_threads(1, 15_000_000).unwrap();
    let budget = MEMORY / THREADS;
    let done: Mutex<Vec<tantivy::index::SegmentMeta>> = Mutex::new(Vec::new());
    let n = std::sync::atomic::AtomicU64::new(0);
    thread_local! {
        static SW: std::cell::RefCell<Option<(tantivy::index::Segment, tantivy::indexer::SegmentWriter)>> =
            const { std::cell::RefCell::new(None) };
    }
    let finish = |seg: tantivy::index::Segment, sw: tantivy::indexer::SegmentWriter| {
        let max = sw.max_doc();
        sw.finalize().expect("finalize");
        let meta = seg.with_max_doc(max).meta().clone();
        meta.untrack_temp_docstore();
        done.lock().unwrap().push(meta);
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .unwrap();
    pool.install(|| {
        sessions.par_iter().enumerate().for_each(|(i, (s, _))| {
            let grouped: Vec<Document>;
            let docs: &[Document] = match block {
                None => &s.documents,
                Some(max) => {
                    let mut out: Vec<Document> = Vec::new();
                    for d in &s.documents {
                        match out.last_mut() {
                            Some(last) if last.text.len() + d.text.len() <= max => {
                                last.text.push('\n');
                                last.text.push_str(&d.text);
                            }
                            _ => out.push(d.clone()),
                        }
                    }
                    grouped = out;
                    &grouped
                }
            };
            SW.with(|cell| {
                let mut slot = cell.borrow_mut();
                for d in docs {
                    let (_, sw) = slot.get_or_insert_with(|| {
                        let seg = index.new_segment();
                        let sw = tantivy::indexer::SegmentWriter::for_segment(budget, seg.clone())
                            .expect("segment writer");
                        (seg, sw)
                    });
                    let doc = LeanDoc {
                        f,
                        sess: i as u64,
                        model: d.model.as_deref().map_or(0, hash),
                        doc: d.clone(),
                    };
                    sw.add_document(tantivy::indexer::AddOperation {
                        opstamp: 0,
                        document: doc,
                    })
                    .expect("add");
                    n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if sw.mem_usage() >= budget - (2 << 20) {
                        let (seg, sw) = slot.take().unwrap();
                        finish(seg, sw);
                    }
                }
            });
        });
        // The last segment of each thread, finalized on its own thread.
        pool.broadcast(|_| {
            SW.with(|cell| {
                if let Some((seg, sw)) = cell.borrow_mut().take() {
                    finish(seg, sw);
                }
            })
        });
    });
    let metas = done.into_inner().unwrap();
    let (c0, w0) = (cpu_seconds(), Instant::now());
    let segments = metas.len();
    for meta in metas {
        writer.add_segment(meta).expect("add segment");
    }
    writer.commit().expect("commit");
    writer.wait_merging_threads().expect("merges");
    if std::env::var_os("SHAPES_VERBOSE").is_some() {
        eprintln!(
            "  {segments} segments; commit and merges {:.2} CPU-s {:.2} s",
            cpu_seconds() - c0,
            w0.elapsed().as_secs_f64()
        );
    }
    n.into_inner()
}

/// Documents of up to `max` bytes of text, each the concatenation of
/// consecutive messages of one session.
fn blocks(f: &Lean, sess: u64, s: &Session, max: usize) -> Vec<TantivyDocument> {
    let mut out = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, out: &mut Vec<TantivyDocument>| {
        if !text.is_empty() {
            let mut doc = TantivyDocument::new();
            doc.add_text(f.text, &*text);
            doc.add_u64(f.sess, sess);
            out.push(doc);
            text.clear();
        }
    };
    for d in &s.documents {
        if !text.is_empty() && text.len() + d.text.len() > max {
            flush(&mut text, &mut out);
        }
        text.push_str(&d.text);
        text.push('\n');
    }
    flush(&mut text, &mut out);
    out
}

fn run_shape(name: &str, sessions: &[(Session, String)], pool: &rayon::ThreadPool) -> (u64, u64) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path().join("index");
    std::fs::create_dir_all(&dir).unwrap();
    let docs = pool.install(|| match name {
        "today" => {
            let store = IndexStore::open_or_create(&dir, false).expect("open index");
            let writer = store.writer(THREADS, MEMORY).expect("writer");
            sessions.par_iter().for_each(|(s, path)| {
                writer
                    .add_documents(&SessionMeta::of(s, path), s.documents.clone())
                    .expect("add");
            });
            writer
                .commit("none", 0, &[], &|_, _| {})
                .expect("commit")
                .0
                .documents
        }
        "lean" | "lean-nostore" | "lean-simple" => {
            let tok = if name == "lean-simple" {
                "default"
            } else {
                TEXT_TOKENIZER
            };
            let (schema, f) = lean_schema(name != "lean-nostore", tok);
            via_writer(&dir, schema, sessions, |i, s, _| {
                s.documents.iter().map(|d| lean_doc(&f, i, d)).collect()
            })
        }
        "lean-thread" => per_thread(&dir, sessions, None),
        "block16k-thread" => per_thread(&dir, sessions, Some(16 << 10)),
        "session-thread" => per_thread(&dir, sessions, Some(usize::MAX)),
        "block16k" | "block64k" | "session" => {
            let max = match name {
                "block16k" => 16 << 10,
                "block64k" => 64 << 10,
                _ => usize::MAX,
            };
            let (schema, f) = lean_schema(true, TEXT_TOKENIZER);
            via_writer(&dir, schema, sessions, |i, s, _| blocks(&f, i, s, max))
        }
        other => panic!("unknown shape {other}"),
    });
    (docs, dir_size(&dir))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: shapes CORPUS_DIR [ROUNDS] [SHAPE,...]");
        std::process::exit(2);
    };
    let rounds: usize = args.next().map_or(3, |r| r.parse().expect("rounds"));
    let all = "today,lean,lean-nostore,lean-simple,lean-thread,block16k,block64k,session";
    let shapes: Vec<String> = args
        .next()
        .unwrap_or_else(|| all.into())
        .split(',')
        .map(str::to_owned)
        .collect();
    let found = discover(std::slice::from_ref(&dir));
    let bytes: u64 = found.files.iter().map(|c| c.len).sum();
    let files: Vec<PathBuf> = found.files.into_iter().map(|c| c.path).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("thread pool");
    let parse_cpu = cpu_seconds();
    let sessions: Vec<(Session, String)> = pool.install(|| {
        files
            .par_iter()
            .filter_map(|p| match read_session(p, Kinds::default()) {
                Ok(Ok((s, _))) => Some((s, p.to_string_lossy().into_owned())),
                _ => None,
            })
            .collect()
    });
    println!("parse + extract: {:.2} CPU-s", cpu_seconds() - parse_cpu);
    let messages: usize = sessions.iter().map(|(s, _)| s.documents.len()).sum();
    let text: usize = sessions
        .iter()
        .flat_map(|(s, _)| s.documents.iter().map(|d| d.text.len()))
        .sum();
    // Tokens of the text, with our tokenizer and with tantivy's default.
    let count = |mut a: tantivy::tokenizer::TextAnalyzer| {
        let (cpu, mut n, mut distinct) = (cpu_seconds(), 0u64, std::collections::HashSet::new());
        for (s, _) in &sessions {
            for d in &s.documents {
                let mut ts = a.token_stream(&d.text);
                while let Some(t) = ts.next() {
                    n += 1;
                    if distinct.len() < 5_000_000 {
                        distinct.insert(t.text.clone());
                    }
                }
            }
        }
        (n, distinct.len(), cpu_seconds() - cpu)
    };
    // Tokenizing alone, nothing kept: what the analyzer costs per token.
    let tokenize = |mut a: tantivy::tokenizer::TextAnalyzer| {
        let cpu = cpu_seconds();
        let mut n = 0u64;
        for _ in 0..3 {
            for (s, _) in &sessions {
                for d in &s.documents {
                    let mut ts = a.token_stream(&d.text);
                    while ts.advance() {
                        n += ts.token().text.len() as u64 & 1;
                    }
                }
            }
        }
        ((cpu_seconds() - cpu) / 3.0, n)
    };
    let default_analyzer = || {
        tantivy::tokenizer::TextAnalyzer::builder(tantivy::tokenizer::SimpleTokenizer::default())
            .filter(tantivy::tokenizer::RemoveLongFilter::limit(40))
            .filter(tantivy::tokenizer::LowerCaser)
            .build()
    };
    let stats = std::env::var_os("SHAPES_NO_TOKENS").is_none();
    let (ours_only, _) = if stats {
        tokenize(text_analyzer())
    } else {
        (0.0, 0)
    };
    let (default_only, _) = if stats {
        tokenize(default_analyzer())
    } else {
        (0.0, 0)
    };
    println!("tokenizing alone: code-aware {ours_only:.3} CPU-s, default {default_only:.3} CPU-s");
    let (ours, ours_distinct, ours_cpu) = if stats {
        count(text_analyzer())
    } else {
        (0, 0, 0.0)
    };
    let (simple, simple_distinct, simple_cpu) = if stats {
        count(default_analyzer())
    } else {
        (0, 0, 0.0)
    };
    println!(
        "{} files, {:.1} MB, {} sessions, {messages} messages, {:.1} MB of text",
        files.len(),
        bytes as f64 / 1e6,
        sessions.len(),
        text as f64 / 1e6
    );
    println!(
        "tokens: code-aware {ours} ({ours_distinct} distinct, {ours_cpu:.2} CPU-s to tokenize), \
         default {simple} ({simple_distinct} distinct, {simple_cpu:.2} CPU-s)"
    );
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); shapes.len()];
    let mut wall: Vec<Vec<f64>> = vec![Vec::new(); shapes.len()];
    let mut info = vec![(0u64, 0u64); shapes.len()];
    for round in 1..=rounds {
        for (i, name) in shapes.iter().enumerate() {
            let (c0, w0) = (cpu_seconds(), Instant::now());
            info[i] = run_shape(name, &sessions, &pool);
            cpu[i].push(cpu_seconds() - c0);
            wall[i].push(w0.elapsed().as_secs_f64());
            println!(
                "round {round} {name:>12}: {:.2} CPU-s {:.2} s",
                cpu[i].last().unwrap(),
                wall[i].last().unwrap()
            );
        }
    }
    let base = median(&mut cpu[0].clone());
    println!(
        "\n| shape | documents | index size | CPU-s (median) | wall s (median) | CPU vs {} |",
        shapes[0]
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (i, name) in shapes.iter().enumerate() {
        let c = median(&mut cpu[i]);
        println!(
            "| {name} | {} | {:.1} MB | {c:.2} | {:.2} | {:.2} |",
            info[i].0,
            info[i].1 as f64 / 1e6,
            median(&mut wall[i]),
            c / base
        );
    }
}
