//! Paging with `--offset`: pages cut at any offset, put end to end, are
//! one big page (nothing twice, nothing missing, the same order), also
//! inside groups of equal scores, which are common (the same text in many
//! sessions). Checked on sessions of duplicated text with duplicated
//! timestamps, in two segments, and on a generated corpus.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::util::{run, Scratch};

/// A hit's identity and the keys it is ordered by.
#[derive(Clone, Debug, PartialEq)]
struct Hit {
    path: String,
    offset: u64,
    role: String,
    score: f64,
    timestamp: Option<String>,
}

fn search(s: &Scratch, query: &str, args: &[&str]) -> (Vec<Hit>, String) {
    let out = run(s
        .cmd()
        .env("TZ", "UTC0")
        .args(["search", "--json", "--index"])
        .arg(s.index())
        .args(args)
        .arg("--")
        .arg(query));
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{query}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            Hit {
                path: v["path"].as_str().unwrap().to_owned(),
                offset: v["offset"].as_u64().unwrap(),
                role: v["role"].as_str().unwrap().to_owned(),
                score: v["score"].as_f64().unwrap(),
                timestamp: v["timestamp"].as_str().map(str::to_owned),
            }
        })
        .collect();
    (hits, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Pages of `size` equal one page of (up to) `total` hits, which holds
/// every hit once, in (score, time) order. Returns the big page.
#[track_caller]
fn pages_are_one_page(s: &Scratch, query: &str, sort: &str, size: usize, total: usize) -> Vec<Hit> {
    let n = total.to_string();
    let (big, _) = search(s, query, &["--sort", sort, "-n", &n]);
    let mut joined = Vec::new();
    for offset in (0..big.len()).step_by(size) {
        let (o, z) = (offset.to_string(), size.to_string());
        let (page, _) = search(s, query, &["--sort", sort, "-n", &z, "--offset", &o]);
        joined.extend(page);
    }
    let ids = |v: &[Hit]| -> Vec<(String, u64, String)> {
        v.iter()
            .map(|h| (h.path.clone(), h.offset, h.role.clone()))
            .collect()
    };
    let unique: BTreeSet<_> = ids(&big).into_iter().collect();
    assert_eq!(unique.len(), big.len(), "{query}: a hit twice in one page");
    assert_eq!(
        ids(&joined),
        ids(&big),
        "{query} --sort {sort}: pages of {size} differ from one page"
    );
    for w in big.windows(2) {
        let ordered = match sort {
            "relevance" => {
                w[0].score > w[1].score
                    || (w[0].score == w[1].score && w[0].timestamp >= w[1].timestamp)
            }
            "newest" => w[0].timestamp >= w[1].timestamp,
            _ => w[0].timestamp <= w[1].timestamp,
        };
        assert!(
            ordered,
            "{query} --sort {sort}: {:?} before {:?}",
            w[0], w[1]
        );
    }
    big
}

/// How many neighbours in `hits` tie on score and time, and on score alone.
fn ties(hits: &[Hit]) -> (usize, usize) {
    let whole = hits
        .windows(2)
        .filter(|w| w[0].score == w[1].score && w[0].timestamp == w[1].timestamp)
        .count();
    let score = hits.windows(2).filter(|w| w[0].score == w[1].score).count();
    (whole, score)
}

/// One session of three messages whose text every session repeats; the
/// times repeat every four sessions. Its entry ids are its own: sessions
/// that began with the same ids and text would be one family (forks
/// without `parentSession`), whose copies are one hit each.
fn session(i: usize) -> String {
    let id = format!("{i:08x}-0000-4000-8000-{i:012x}");
    let sec = i % 4;
    let line = |n: usize, role: &str, text: &str| {
        let parent = if n == 1 {
            "null".to_string()
        } else {
            format!("\"{i:05x}m{}\"", n - 1)
        };
        let content = if role == "user" {
            format!("\"{text}\"")
        } else {
            format!(r#"[{{"type":"text","text":"{text}"}}]"#)
        };
        format!(
            r#"{{"type":"message","id":"{i:05x}m{n}","parentId":{parent},"timestamp":"2026-02-0{n}T10:00:0{sec}.000Z","message":{{"role":"{role}","content":{content},"timestamp":0}}}}"#
        )
    };
    format!(
        "{}\n{}\n{}\n{}\n",
        format_args!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-02-01T09:00:00.000Z","cwd":"/home/u/p{}"}}"#,
            i % 3
        ),
        line(1, "user", "why does the tokio runtime panic"),
        line(
            2,
            "assistant",
            "the tokio runtime panics when you block inside async code"
        ),
        line(3, "user", "thanks, the runtime works now"),
    )
}

fn write_sessions(dir: &Path, range: std::ops::Range<usize>) {
    std::fs::create_dir_all(dir).unwrap();
    for i in range {
        std::fs::write(dir.join(format!("s{i:03}.jsonl")), session(i)).unwrap();
    }
}

#[test]
fn pages_of_duplicated_text_in_two_segments_are_one_page() {
    let s = Scratch::new();
    let dir = s.dir.path().join("dup");
    write_sessions(&dir, 0..24);
    s.build(&[&dir], &[]);
    // A second build adds a segment whose documents tie with the first's.
    write_sessions(&dir, 24..48);
    let r = s.build(&[&dir], &[]);
    assert_eq!(r["messages_indexed"], 72, "{r}");

    let big = pages_are_one_page(&s, "tokio", "relevance", 7, 96);
    assert_eq!(big.len(), 96);
    let (whole, score) = ties(&big);
    assert!(
        whole >= 80 && score >= 90,
        "ties: {whole} of score and time, {score} of score"
    );
    let big = pages_are_one_page(&s, "runtime", "relevance", 10, 144);
    assert_eq!(big.len(), 144);
    for (q, n) in [("role:user", 96), ("-tokio", 48), ("tokio OR thanks", 144)] {
        assert_eq!(pages_are_one_page(&s, q, "relevance", 9, n).len(), n, "{q}");
    }
    for sort in ["newest", "oldest"] {
        assert_eq!(pages_are_one_page(&s, "runtime", sort, 11, 144).len(), 144);
    }
    // Past the end: nothing, and exit 1.
    let (past, _) = search(&s, "tokio", &["--offset", "96"]);
    assert!(past.is_empty());
}

#[test]
fn pages_of_a_generated_corpus_are_one_page() {
    let s = Scratch::new();
    let corpus = s.dir.path().join("corpus");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen-corpus.py");
    let out = Command::new("python3")
        .arg(script)
        .arg("--out")
        .arg(&corpus)
        .args(["--size", "5MB", "--seed", "23", "--json"])
        .output()
        .expect("python3 runs the corpus generator");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest: Value = serde_json::from_slice(&out.stdout).unwrap();
    s.build(&[&corpus], &[]);

    // The commonest words of the indexed text, whatever text the
    // generator writes: a word in many messages ties on score often.
    let out = run(s
        .cmd()
        .args(["search", "--json", "-n", "1000000", "--index"])
        .arg(s.index())
        .arg("*"));
    let mut df: std::collections::HashMap<String, usize> = Default::default();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().count() as u64,
        manifest["totals"]["documents"].as_u64().unwrap()
    );
    for l in text.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        let words: BTreeSet<String> = v["text"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| w.len() >= 3)
            .map(str::to_owned)
            .collect();
        for w in words {
            *df.entry(w).or_default() += 1;
        }
    }
    let mut common: Vec<(usize, String)> = df.into_iter().map(|(w, n)| (n, w)).collect();
    common.sort_by(|a, b| b.cmp(a));
    let (df, word) = &common[0];
    assert!(
        *df >= 300,
        "the commonest word, {word:?}, is in only {df} messages"
    );

    // Pages of 50 over the hits of the commonest word (ten pages of 100
    // over 1000 hits at most, as the issue measured, for the others).
    let big = pages_are_one_page(&s, word, "relevance", 50, 1000);
    assert_eq!(big.len(), *df);
    let (_, score) = ties(&big);
    assert!(score >= 20, "{word}: only {score} equal scores");
    let either = format!("{word} OR {}", common[1].1);
    assert!(pages_are_one_page(&s, &either, "relevance", 100, 1000).len() > *df);
    // Every message, all of score 0: the order is recency alone.
    let documents = text.lines().count();
    assert_eq!(
        pages_are_one_page(&s, "*", "relevance", 100, 1000).len(),
        documents.min(1000)
    );
    pages_are_one_page(&s, "role:user", "relevance", 20, 1000);
    pages_are_one_page(&s, word, "newest", 50, 1000);
}
