//! Recall of identifiers however they are typed: identifiers of every
//! shape drawn from a generated real-vocabulary corpus
//! (`scripts/gen-corpus.py`), each searched as written in the text, in
//! lower case, in upper case and with its separators removed (lower
//! case), and compared, session by session, with a case-insensitive scan
//! of the user and assistant text that knows nothing of the tokenizer.
//!
//! The scan: an identifier occurs in a text where its letters appear,
//! ASCII case ignored, with no letter or digit right before or right
//! after (`from_utf8` occurs in `String::from_utf8_lossy`, `HashMap` does
//! not occur in `FxHashMap`). Searches run through the library
//! (`pi_index::search::query::compile`, the query `search` runs), over an
//! index that the real binary built.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use pi_index::index::schema::session_key;
use pi_index::search::query::{compile, FieldMap, Filters, Now};
use pi_index::search::Reader;
use tantivy::collector::DocSetCollector;

use crate::util::Scratch;

/// The shapes of identifiers the tokenizer splits differently.
const SHAPES: [&str; 8] = [
    "CamelCase",
    "camelCase",
    "snake_case",
    "SCREAMING_CASE",
    "kebab-case",
    "a::b path",
    "dotted.name",
    "with digits",
];

/// How many identifiers of each shape are drawn (fewer when the corpus
/// has fewer).
const PER_SHAPE: usize = 200;

/// The shape of a candidate identifier (a run of letters, digits, `_`,
/// `-`, `.` and `:` cut at its ends to letters and digits), or `None`.
fn shape(w: &str) -> Option<usize> {
    let b = w.as_bytes();
    if w.len() < 3 || w.len() > 60 || !b[0].is_ascii_alphabetic() {
        return None;
    }
    let ident = |s: &str| {
        !s.is_empty()
            && s.as_bytes()[0].is_ascii_alphabetic()
            && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
    };
    let lower_word = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_lowercase());
    let upper_word = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_uppercase());
    if w.contains("::") {
        let segs: Vec<&str> = w.split("::").collect();
        return (segs.len() >= 2 && segs.iter().all(|s| ident(s))).then_some(5);
    }
    if w.contains(':') {
        return None;
    }
    if w.contains('.') {
        let segs: Vec<&str> = w.split('.').collect();
        return (segs.len() >= 2 && segs.iter().all(|s| ident(s) && s.len() >= 2)).then_some(6);
    }
    if w.contains('-') {
        let segs: Vec<&str> = w.split('-').collect();
        return (segs.len() >= 2 && segs.iter().all(|s| lower_word(s))).then_some(4);
    }
    if w.contains('_') {
        let segs: Vec<&str> = w.split('_').collect();
        if segs.len() < 2 {
            return None;
        }
        if segs.iter().all(|s| lower_word(s)) {
            return Some(2);
        }
        if segs.iter().all(|s| upper_word(s)) {
            return Some(3);
        }
        return None;
    }
    let digits = b.iter().any(u8::is_ascii_digit);
    if digits {
        return b.iter().all(u8::is_ascii_alphanumeric).then_some(7);
    }
    if !b.iter().all(u8::is_ascii_alphabetic) {
        return None;
    }
    // Humps: a capital after a lower-case letter, every capital alone.
    let humps = b
        .windows(2)
        .filter(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase())
        .count();
    let capitals_alone = b
        .windows(2)
        .all(|p| !(p[0].is_ascii_uppercase() && p[1].is_ascii_uppercase()));
    if humps == 0 || !capitals_alone {
        return None;
    }
    Some(if b[0].is_ascii_uppercase() { 0 } else { 1 })
}

/// The candidate identifiers of `text`.
fn candidates(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| {
        !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' || c == ':')
    })
    .map(|w| w.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
    .filter(|w| !w.is_empty())
}

/// Does `needle` (ASCII, lower case) occur in `hay` (lower-cased ASCII,
/// other characters as they are) with no letter or digit on either side?
fn occurs(hay: &str, needle: &str) -> bool {
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        let at = from + i;
        let end = at + needle.len();
        let before = hay[..at].chars().next_back();
        let after = hay[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return true;
        }
        from = at + 1;
        while !hay.is_char_boundary(from) {
            from += 1;
        }
    }
    false
}

/// The text of a user or assistant message line, as the format page
/// says: a string content, or the text blocks joined with newlines.
fn message_text(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    if v["type"] != "message" {
        return None;
    }
    let m = &v["message"];
    if m["role"] != "user" && m["role"] != "assistant" {
        return None;
    }
    match &m["content"] {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// Every session file below `dir`: its key in the index and its user and
/// assistant text, lower-cased (ASCII) and original.
fn sessions(dir: &Path) -> Vec<(u64, String, String)> {
    let mut out = Vec::new();
    for project in std::fs::read_dir(dir).unwrap() {
        for file in std::fs::read_dir(project.unwrap().path()).unwrap() {
            let path = std::fs::canonicalize(file.unwrap().path()).unwrap();
            let body = std::fs::read_to_string(&path).unwrap();
            let text: Vec<String> = body.lines().filter_map(message_text).collect();
            let text = text.join("\n");
            out.push((
                session_key(path.to_str().unwrap()),
                text.to_ascii_lowercase(),
                text,
            ));
        }
    }
    out.sort();
    out
}

/// A small deterministic hash, to draw identifiers in a fixed order.
fn mix(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The typing variants of an identifier.
fn variants(id: &str) -> [(&'static str, String); 4] {
    let lower = id.to_ascii_lowercase();
    let joined: String = lower
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ':'))
        .collect();
    [
        ("as typed", id.to_owned()),
        ("lower", lower),
        ("upper", id.to_ascii_uppercase()),
        ("no separators", joined),
    ]
}

#[derive(Default)]
struct Tally {
    truth: usize,
    found: usize,
    returned: usize,
    missed: Vec<String>,
}

/// `--sources DIR` for the sources of a few crates this project builds
/// with, at the versions Cargo.lock pins: the corpus (and so the sample
/// and the truth) is the same on every machine that built the project,
/// whatever else its cargo registry holds.
fn pinned_sources() -> Vec<String> {
    const CRATES: [&str; 6] = [
        "tantivy",
        "tokio",
        "rayon",
        "serde_json",
        "clap_builder",
        "ratatui-widgets",
    ];
    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"))
        .expect("Cargo.lock");
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(&std::env::var_os("HOME").expect("HOME")).join(".cargo"));
    let registries: Vec<std::path::PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .expect("the cargo registry's sources (the project was built from it)")
        .map(|e| e.unwrap().path())
        .collect();
    let mut args = Vec::new();
    for name in CRATES {
        let version = lock
            .split("[[package]]")
            .find_map(|p| {
                let mut lines = p.lines().map(str::trim);
                (lines.any(|l| l == format!("name = \"{name}\"")))
                    .then(|| {
                        p.lines()
                            .find_map(|l| l.trim().strip_prefix("version = \""))
                    })
                    .flatten()
            })
            .map(|v| v.trim_end_matches('"').to_owned())
            .unwrap_or_else(|| panic!("{name} is not in Cargo.lock"));
        let dir = registries
            .iter()
            .map(|r| r.join(format!("{name}-{version}")))
            .find(|d| d.is_dir())
            .unwrap_or_else(|| panic!("{name}-{version} is not in the cargo registry"));
        args.push("--sources".to_owned());
        args.push(dir.to_string_lossy().into_owned());
    }
    args
}

#[test]
fn identifiers_are_found_however_they_are_typed() {
    let s = Scratch::new();
    let corpus = s.dir.path().join("corpus");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen-corpus.py");
    let out = Command::new("python3")
        .arg(script)
        .arg("--out")
        .arg(&corpus)
        .args(["--size", "12MB", "--seed", "20"])
        .args(pinned_sources())
        .output()
        .expect("python3 runs the corpus generator");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    s.build(&[&corpus], &[]);
    let sessions = sessions(&std::fs::canonicalize(&corpus).unwrap());

    // Draw identifiers of each shape: distinct, in the order of a hash.
    let mut by_shape: Vec<BTreeSet<String>> = vec![BTreeSet::new(); SHAPES.len()];
    for (_, _, text) in &sessions {
        for w in candidates(text) {
            if let Some(k) = shape(w) {
                by_shape[k].insert(w.to_owned());
            }
        }
    }
    let mut drawn: Vec<(usize, String)> = Vec::new();
    for (k, ids) in by_shape.iter().enumerate() {
        let mut ids: Vec<&String> = ids.iter().collect();
        ids.sort_by_key(|id| (mix(id), id.as_str()));
        assert!(
            ids.len() >= 40,
            "the corpus has only {} {} identifiers",
            ids.len(),
            SHAPES[k]
        );
        drawn.extend(ids.into_iter().take(PER_SHAPE).map(|id| (k, id.clone())));
    }

    let reader = Reader::open(&s.index()).unwrap();
    let searcher = reader.searcher().unwrap();
    let now = Now::system();
    let keys = |query: &str| -> BTreeSet<u64> {
        let mut map = FieldMap::new(&reader, &searcher).unwrap();
        let compiled = compile(query, &Filters::default(), &now, &mut map)
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        let addrs = searcher.search(&*compiled.query, &DocSetCollector).unwrap();
        addrs
            .into_iter()
            .map(|a| {
                let col = searcher
                    .segment_reader(a.segment_ord)
                    .fast_fields()
                    .u64("sess")
                    .unwrap();
                col.first(a.doc_id).unwrap()
            })
            .collect()
    };
    // The keys computed here are the index's: every session with text is
    // among the sessions of `*`.
    let all = keys("*");
    let with_text: BTreeSet<u64> = sessions
        .iter()
        .filter(|(_, t, _)| !t.trim().is_empty())
        .map(|(k, _, _)| *k)
        .collect();
    assert_eq!(all, with_text, "session keys");

    let mut tally: BTreeMap<(&str, usize), Tally> = BTreeMap::new();
    for (k, id) in &drawn {
        let needle = id.to_ascii_lowercase();
        let truth: BTreeSet<u64> = sessions
            .iter()
            .filter(|(_, lower, _)| occurs(lower, &needle))
            .map(|(key, _, _)| *key)
            .collect();
        assert!(!truth.is_empty(), "{id} was drawn from the text");
        for (variant, query) in variants(id) {
            let found = keys(&query);
            let t = tally.entry((variant, *k)).or_default();
            t.truth += truth.len();
            t.returned += found.len();
            let hit = truth.intersection(&found).count();
            t.found += hit;
            if hit < truth.len() {
                t.missed.push(format!(
                    "{query} ({} of {})",
                    truth.len() - hit,
                    truth.len()
                ));
            }
        }
    }

    let mut failed = Vec::new();
    for variant in ["as typed", "lower", "upper", "no separators"] {
        let (mut truth, mut found, mut returned) = (0, 0, 0);
        for (k, name) in SHAPES.iter().enumerate() {
            let t = &tally[&(variant, k)];
            truth += t.truth;
            found += t.found;
            returned += t.returned;
            println!(
                "{variant:>13} {name:<14} recall {:.4} ({}/{}) precision {:.4}{}",
                t.found as f64 / t.truth as f64,
                t.found,
                t.truth,
                t.found as f64 / t.returned.max(1) as f64,
                if t.missed.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; missed: {}",
                        t.missed
                            .iter()
                            .take(6)
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            );
        }
        let recall = found as f64 / truth as f64;
        println!(
            "{variant:>13} ALL            recall {recall:.4} ({found}/{truth}) precision {:.4}",
            found as f64 / returned.max(1) as f64
        );
        if recall < 0.99 {
            failed.push(format!("{variant}: recall {recall:.4}"));
        }
    }
    assert!(
        failed.is_empty(),
        "session-level recall under 0.99: {}",
        failed.join("; ")
    );
}

/// A session whose messages are `texts`, one per line after the header
/// (line 2 on), alternately from the user and the assistant.
fn write_session(path: &Path, id: &str, texts: &[&str]) {
    let mut lines = vec![format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-02-01T10:00:00.000Z","cwd":"/home/u/proj"}}"#
    )];
    let mut parent = "null".to_owned();
    for (i, text) in texts.iter().enumerate() {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let eid = format!("{i:08x}");
        let msg = serde_json::json!({
            "role": role,
            "content": [{"type": "text", "text": text}],
            "timestamp": 1_769_940_000_000u64 + i as u64 * 1000,
        });
        lines.push(format!(
            r#"{{"type":"message","id":"{eid}","parentId":{parent},"timestamp":"2026-02-01T10:00:{:02}.000Z","message":{msg}}}"#,
            i % 60
        ));
        parent = format!("\"{eid}\"");
    }
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn the_issues_queries_find_what_the_text_says() {
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let mut texts = vec![
        "Call JoinHandle::is_finished before you join it.", // line 2
        "Use String::from_utf8 on the bytes you read.",     // line 3
        "The HeaderMap holds every header of the request.", // line 4
        "a plain header map, in prose",                     // line 5
        "headermap, typed in lower case as one word",       // line 6
        "Both HashMap and std::collections::hash_map are fine", // line 7
    ];
    // Other messages, so that no word above is common.
    let filler: Vec<String> = (0..30)
        .map(|i| format!("filler message number {i} about nothing much"))
        .collect();
    texts.extend(filler.iter().map(String::as_str));
    write_session(
        &dir.join("s.jsonl"),
        "5e55104e-0000-4000-8000-000000000001",
        &texts,
    );
    s.build(&[&dir], &[]);
    let lines = |q: &str| -> Vec<u64> {
        s.search_json(q, &[])
            .iter()
            .map(|h| h["line"].as_u64().unwrap())
            .collect()
    };
    for q in [
        "JoinHandle::is_finished",
        "joinhandle::is_finished",
        "JOINHANDLE::IS_FINISHED",
        "joinhandleisfinished",
        "isfinished",
        "is_finished",
    ] {
        assert_eq!(lines(q), [2], "{q}");
    }
    for q in ["from_utf8", "fromutf8", "FROMUTF8", "string::from_utf8"] {
        assert_eq!(lines(q), [3], "{q}");
    }
    // The exact form first: the word as typed (line 6, and line 4's
    // HeaderMap, which the index also holds whole), then the phrase of
    // its parts in prose (line 5: what the expansion costs in precision).
    let found = lines("headermap");
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[2], 5, "{found:?}");
    assert_eq!(
        found[..2].iter().copied().collect::<BTreeSet<u64>>(),
        [4, 6].into()
    );
    assert_eq!(lines("HeaderMap").len(), 3);
    // `hashmap` finds HashMap (its whole) and hash_map (its parts in a
    // row).
    assert_eq!(
        lines("hashmap").into_iter().collect::<BTreeSet<u64>>(),
        [7].into()
    );
    assert_eq!(lines("collections::hashmap"), [7]);
    // A common word is not cut into others: `number` is not `numb er`,
    // and what is not there stays not found.
    assert_eq!(lines("filler").len(), 30);
    assert!(lines("joinhandleisdone").is_empty());
}
