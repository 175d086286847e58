//! One test per rule of the Pi session format contract
//! (`/work/shared/pi-session-format.md`), each on its own fixture in
//! `fixtures/sessions/` (see `fixtures/README.md`). Every expected value
//! below was written by hand from the extraction rules; none is copied from
//! pi-index's output.

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const SONNET: Option<&str> = Some("anthropic/claude-sonnet-4-5");
const GPT5: Option<&str> = Some("openai/gpt-5");
const NONE: Option<&str> = None;

/// The session-level fields every document of one file carries.
struct Session {
    id: &'static str,
    cwd: Option<&'static str>,
    name: Option<&'static str>,
    /// The agent that wrote it: `pi`, or `omp` for Oh My Pi's files.
    agent: &'static str,
}

fn session(id: &'static str) -> Session {
    Session {
        id,
        cwd: Some("/home/u/proj"),
        name: None,
        agent: "pi",
    }
}

/// An Oh My Pi session's fields.
fn omp_session(id: &'static str, name: Option<&'static str>) -> Session {
    Session {
        name,
        agent: "omp",
        ..session(id)
    }
}

/// One expected document (the per-line fields).
#[derive(Clone)]
struct Doc {
    line: usize,
    entry_id: Option<&'static str>,
    role: &'static str,
    timestamp: Option<&'static str>,
    model: Option<&'static str>,
    active: bool,
    text: &'static str,
    /// What a `context_edit` did to it for the model (null: nothing).
    edited: Option<&'static str>,
    /// The text the model is sent instead.
    replacement: Option<&'static str>,
}

impl Doc {
    /// The same document, marked as edited for the model.
    fn edited(mut self, how: &'static str, replacement: Option<&'static str>) -> Doc {
        self.edited = Some(how);
        self.replacement = replacement;
        self
    }
}

fn doc(
    line: usize,
    entry_id: Option<&'static str>,
    role: &'static str,
    timestamp: Option<&'static str>,
    model: Option<&'static str>,
    active: bool,
    text: &'static str,
) -> Doc {
    Doc {
        line,
        entry_id,
        role,
        timestamp,
        model,
        active,
        text,
        edited: None,
        replacement: None,
    }
}

/// The documents of `docs` whose role is user or assistant: what a build
/// without `--include` must produce.
fn default_kinds(docs: &[Doc]) -> Vec<Doc> {
    docs.iter()
        .filter(|d| d.role == "user" || d.role == "assistant")
        .cloned()
        .collect()
}

/// Assert that `show --format json` printed exactly `expected` for `path`.
fn assert_docs(path: &Path, got: &[Value], s: &Session, expected: &[Doc]) {
    let file_name = path.file_name().unwrap().to_str().unwrap();
    let got_lines: Vec<(u64, String)> = got
        .iter()
        .map(|d| {
            (
                d["line"].as_u64().unwrap_or(0),
                d["role"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    let want_lines: Vec<(u64, String)> = expected
        .iter()
        .map(|d| (d.line as u64, d.role.to_string()))
        .collect();
    assert_eq!(
        got_lines, want_lines,
        "(line, role) of the documents of {file_name}"
    );
    for (i, (g, w)) in got.iter().zip(expected).enumerate() {
        let obj = g.as_object().expect("each document is a JSON object");
        let keys: BTreeSet<&str> = obj.keys().map(String::as_str).collect();
        let want_keys: BTreeSet<&str> = crate::util::DOC_KEYS.iter().copied().collect();
        assert_eq!(keys, want_keys, "keys of document {i} of {file_name}");
        let p = obj["path"].as_str().expect("path is a string");
        assert!(
            p.ends_with(file_name),
            "path {p:?} of document {i} does not end with {file_name}"
        );
        let mut g = g.clone();
        g.as_object_mut().unwrap().remove("path");
        let want = json!({
            "session_id": s.id,
            "line": w.line,
            "offset": crate::util::line_offset(path, w.line),
            "entry_id": w.entry_id,
            "role": w.role,
            "timestamp": w.timestamp,
            "cwd": s.cwd,
            "session_name": s.name,
            "agent": s.agent,
            "model": w.model,
            "active": w.active,
            "edited": w.edited,
            "replacement": w.replacement,
            "text": w.text,
        });
        assert_eq!(g, want, "document {i} (line {}) of {file_name}", w.line);
    }
}

/// The `(file name, line)` pairs of the report's `damaged` list; also checks
/// that every item has a non-empty `error`.
fn damaged_pairs(report: &Value) -> BTreeSet<(String, u64)> {
    report["damaged"]
        .as_array()
        .expect("damaged is a list")
        .iter()
        .map(|d| {
            let err = d["error"].as_str().expect("damaged.error is a string");
            assert!(!err.is_empty(), "empty error in {d}");
            let p = d["path"].as_str().expect("damaged.path is a string");
            let name = Path::new(p)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, d["line"].as_u64().expect("damaged.line is a number"))
        })
        .collect()
}

fn pairs(list: &[(&str, u64)]) -> BTreeSet<(String, u64)> {
    list.iter().map(|(f, l)| (f.to_string(), *l)).collect()
}

/// Assert the counters of a build report of a fresh index.
fn assert_report(
    report: &Value,
    scanned: u64,
    indexed: u64,
    rejected: u64,
    messages: u64,
    damaged: &[(&str, u64)],
) {
    for key in ["lines_read", "bytes_read", "elapsed_ms"] {
        assert!(report[key].is_u64(), "report.{key} is a number: {report}");
    }
    assert_eq!(
        report["files_scanned"],
        json!(scanned),
        "files_scanned: {report}"
    );
    assert_eq!(
        report["files_indexed"],
        json!(indexed),
        "files_indexed: {report}"
    );
    assert_eq!(
        report["files_unchanged"],
        json!(0),
        "files_unchanged: {report}"
    );
    assert_eq!(
        report["files_rejected"],
        json!(rejected),
        "files_rejected: {report}"
    );
    assert_eq!(report["sessions"], json!(indexed), "sessions: {report}");
    assert_eq!(
        report["messages_indexed"],
        json!(messages),
        "messages_indexed: {report}"
    );
    assert_eq!(
        report["lines_damaged"],
        json!(damaged.len()),
        "lines_damaged: {report}"
    );
    assert_eq!(damaged_pairs(report), pairs(damaged), "damaged: {report}");
}

/// Index one accepted fixture with `extra` build flags, check the report
/// (one file, one session, `expected.len()` documents, `damaged` lines) and
/// the documents `show` prints.
fn check(name: &str, extra: &[&str], s: &Session, expected: &[Doc], damaged: &[(&str, u64)]) {
    let path = crate::util::fixture(name);
    let scratch = crate::util::Scratch::new();
    let report = scratch.build(&[&path], extra);
    let file_name = path.file_name().unwrap().to_str().unwrap();
    let damaged: Vec<(&str, u64)> = damaged.iter().map(|(_, l)| (file_name, *l)).collect();
    assert_report(&report, 1, 1, 0, expected.len() as u64, &damaged);
    let docs = scratch.show_json(path.to_str().unwrap(), &[]);
    assert_docs(&path, &docs, s, expected);
}

/// Build one fixture that the fingerprint must reject.
fn check_rejected(name: &str) {
    let path = crate::util::fixture(name);
    let scratch = crate::util::Scratch::new();
    let report = scratch.build(&[&path], &[]);
    assert_report(&report, 1, 0, 1, 0, &[]);
}

// ------------------------------------------------------------ folder layout

#[test]
#[rustfmt::skip]
fn pi_layout_version_3_conversation() {
    let s = session("019b8e0a-7c41-7d2e-9f3a-5b6c7d8e9f01");
    check(
        "--home-u-proj--/2026-01-05T10-00-00-000Z_019b8e0a-7c41-7d2e-9f3a-5b6c7d8e9f01.jsonl",
        &[],
        &s,
        &[
            doc(4, Some("c3d4e5f6"), "user", Some("2026-01-05T10:00:01.120Z"), SONNET, true,
                "List the Rust files in src/ and say what each one does."),
            doc(5, Some("d4e5f6a7"), "assistant", Some("2026-01-05T10:00:04.870Z"), SONNET, true,
                "There are two: `src/main.rs` parses the command line and `src/lib.rs` holds the indexer."),
            doc(6, Some("e5f6a7b8"), "user", Some("2026-01-05T10:01:12.300Z"), SONNET, true,
                "Thanks. Add a --json flag to the build command."),
            doc(7, Some("f6a7b8c9"), "assistant", Some("2026-01-05T10:01:15.642Z"), SONNET, true,
                "Done: `build --json` now prints the report as one JSON object."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn pi_layout_version_2_with_parent_session() {
    let s = session("5f0c2a9e-3b7d-4e1a-8c6f-2d9b7e4a1c3f");
    check(
        "--home-u-proj--/2026-01-02T08-15-30-250Z_5f0c2a9e-3b7d-4e1a-8c6f-2d9b7e4a1c3f.jsonl",
        &[],
        &s,
        &[
            doc(3, Some("22bb33cc"), "user", Some("2026-01-02T08:15:41.019Z"), GPT5, true,
                "Why does `cargo test` hang on the integration tests?"),
            doc(4, Some("33cc44dd"), "assistant", Some("2026-01-02T08:15:52.733Z"), GPT5, true,
                "The tests wait on a child process that never exits; close its stdin."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn cwd_comes_from_the_header_not_the_folder_name() {
    let s = Session {
        id: "019c4a1b-2e3f-7a40-8b51-c6d7e8f9a0b1",
        cwd: Some("C:\\Users\\u\\proj"),
        name: None,
        agent: "pi",
    };
    let gemini = Some("google/gemini-2.5-pro");
    check(
        "--C--Users-u-proj--/2026-02-10T14-22-05-731Z_019c4a1b-2e3f-7a40-8b51-c6d7e8f9a0b1.jsonl",
        &[],
        &s,
        &[
            doc(3, Some("6e7f8091"), "user", Some("2026-02-10T14:22:19.402Z"), gemini, true,
                "Why does the build fail on Windows only?"),
            doc(4, Some("7f8091a2"), "assistant", Some("2026-02-10T14:22:31.987Z"), gemini, true,
                "The build script joins paths with '/'; use Path::join instead."),
        ],
        &[],
    );
}

// ------------------------------------------------------------ versions and header

#[test]
#[rustfmt::skip]
fn v1_no_version_linear_no_entry_ids_header_model() {
    let s = Session {
        id: "8d3f1c2a-6b4e-4f9a-b1c7-2e5d8a9f0b3c",
        cwd: Some("/home/u/old-proj"),
        name: None,
        agent: "pi",
    };
    let header_model = Some("anthropic/claude-sonnet-4-20250514");
    let gpt41 = Some("openai/gpt-4.1");
    let all = [
        doc(2, None, "user", Some("2025-11-20T16:04:20.004Z"), header_model, true,
            "What does the --release flag change?"),
        doc(3, None, "assistant", Some("2025-11-20T16:04:26.311Z"), header_model, true,
            "It turns on optimisations (opt-level 3) and turns off debug assertions."),
        doc(6, None, "user", Some("2025-11-20T16:05:10.250Z"), gpt41, true,
            "And for benchmarks?"),
        doc(7, None, "assistant", Some("2025-11-20T16:05:14.808Z"), gpt41, true,
            "Benchmarks use the bench profile, which inherits from release."),
        doc(8, None, "summary", Some("2025-11-20T16:30:00.000Z"), gpt41, true,
            "Discussed the release and bench profiles."),
    ];
    check("v1-no-version.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("v1-no-version.jsonl", &["--include", "summary"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn v1_migrated_file_saying_version_3_uses_the_tree() {
    let s = Session {
        id: "2c7e9a41-8f3b-4d6c-a5e2-7b1f0d9c8e36",
        cwd: Some("/home/u/old-proj"),
        name: None,
        agent: "pi",
    };
    let m = Some("anthropic/claude-sonnet-4-20250514");
    check(
        "v1-migrated-says-v3.jsonl",
        &[],
        &s,
        &[
            doc(3, Some("9c8d7e6f"), "user", Some("2025-11-28T11:40:09.515Z"), m, true,
                "Rename the crate to pi-index."),
            doc(4, Some("0a1b2c3d"), "assistant", Some("2025-11-28T11:40:17.262Z"), m, true,
                "Renamed it in Cargo.toml and in the README."),
            doc(5, Some("e1f2a3b4"), "user", Some("2026-01-06T09:00:03.000Z"), m, false,
                "Also rename the binary."),
            doc(6, Some("f2a3b4c5"), "assistant", Some("2026-01-06T09:00:09.500Z"), m, false,
                "Renamed the binary to pi-index too."),
            doc(7, Some("a3b4c5d6"), "user", Some("2026-01-06T09:05:00.000Z"), m, true,
                "Actually, keep the old binary name."),
            doc(8, Some("b4c5d6e7"), "assistant", Some("2026-01-06T09:05:04.250Z"), m, true,
                "Kept the old binary name."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn version_4_header_is_read_best_effort() {
    let s = session("019e2b7c-4d5e-7f60-a1b2-c3d4e5f60718");
    check(
        "v4-future-version.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("4c5d6e7f"), "user", Some("2026-06-01T09:00:07.211Z"), NONE, true,
                "Does pi-index read version 4 files?"),
            doc(3, Some("5d6e7f80"), "assistant", Some("2026-06-01T09:00:10.940Z"), SONNET, true,
                "Yes, on a best effort basis."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn header_without_cwd_gives_null_cwd() {
    let s = Session {
        id: "0d9c8b7a-6f5e-4d3c-b2a1-098f7e6d5c4b",
        cwd: None,
        name: None,
        agent: "pi",
    };
    check(
        "header-no-cwd.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("1e2f3a4b"), "user", Some("2026-01-07T12:00:05.500Z"), NONE, true,
                "Where am I?"),
            doc(3, Some("2f3a4b5c"), "assistant", Some("2026-01-07T12:00:08.125Z"), SONNET, true,
                "The header has no cwd, so I cannot tell."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn utf8_bom_before_header() {
    let s = session("1b5c9d3e-7f1a-4b5c-9d3e-7f1a5b9c3d7f");
    let path = crate::util::fixture("utf8-bom.jsonl");
    assert_eq!(&std::fs::read(&path).unwrap()[..3], b"\xef\xbb\xbf");
    check(
        "utf8-bom.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("8f9a0b1d"), "user", Some("2026-02-03T09:00:05.000Z"), NONE, true,
                "This file starts with a byte-order mark."),
            doc(3, Some("9a0b1c2e"), "assistant", Some("2026-02-03T09:00:09.000Z"), SONNET, true,
                "The BOM belongs to line 1."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn blank_lines_before_header_count_as_lines() {
    let s = session("7b6a5948-3726-4150-8f9e-8d7c6b5a4938");
    check(
        "blank-lines-before-header.jsonl",
        &[],
        &s,
        &[
            doc(4, Some("3a4b5c6d"), "user", Some("2026-01-08T07:30:04.040Z"), NONE, true,
                "Blank lines came first."),
            doc(6, Some("4b5c6d7e"), "assistant", Some("2026-01-08T07:30:06.606Z"), SONNET, true,
                "They still count as lines."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn second_session_line_is_ignored() {
    // The repeated header on line 4 must not change the id or cwd, and the
    // one on the last line (7) must not become the leaf.
    let s = session("6a1d3f7e-2b4c-4e8a-9d1f-3c5b7a9e1d2f");
    check(
        "second-session-line.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("3f2e1d0c"), "user", Some("2025-12-15T18:20:06.410Z"), NONE, true,
                "Resume where we stopped yesterday."),
            doc(3, Some("4a3b2c1d"), "assistant", Some("2025-12-15T18:20:11.082Z"), SONNET, true,
                "We stopped at the migration script."),
            doc(5, Some("5b4c3d2e"), "user", Some("2025-12-16T08:00:12.345Z"), NONE, true,
                "Run it now."),
            doc(6, Some("6c5d4e3f"), "assistant", Some("2025-12-16T08:00:19.876Z"), SONNET, true,
                "The migration finished without errors."),
        ],
        &[],
    );
}

// ------------------------------------------------------------ fingerprint: rejected files

#[test]
fn empty_file_is_rejected() {
    check_rejected("empty-file.jsonl");
}

#[test]
fn file_of_blank_lines_is_rejected() {
    check_rejected("only-blank-lines.jsonl");
}

#[test]
fn header_without_id_is_rejected() {
    check_rejected("header-missing-id.jsonl");
}

#[test]
fn v1_header_without_cwd_is_rejected() {
    check_rejected("v1-header-missing-cwd.jsonl");
}

#[test]
fn header_not_on_first_non_empty_line_is_rejected() {
    check_rejected("header-not-first-line.jsonl");
}

#[test]
fn decoy_codex_cli_is_rejected() {
    check_rejected("decoy-codex.jsonl");
}

#[test]
fn decoy_claude_code_is_rejected() {
    check_rejected("decoy-claude-code.jsonl");
    check_rejected("decoy-claude-code-user-first.jsonl");
}

#[test]
fn decoy_gemini_cli_is_rejected() {
    check_rejected("decoy-gemini.jsonl");
}

#[test]
fn decoy_arbitrary_json_lines_is_rejected() {
    check_rejected("decoy-arbitrary.jsonl");
}

#[test]
fn decoy_json_array_is_rejected() {
    check_rejected("decoy-json-array.jsonl");
}

#[test]
fn decoy_binary_is_rejected() {
    check_rejected("decoy-binary.jsonl");
}

#[test]
fn first_line_over_1_mib_is_rejected() {
    // Generated here rather than shipped: a valid version-3 header padded to
    // 2 MiB, followed by an ordinary user message.
    let scratch = crate::util::Scratch::new();
    let dir = scratch.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big-header.jsonl");
    let header = json!({
        "type": "session", "version": 3, "id": "5c9d3e7f-1a5b-4c9d-8e7f-1a5b9c3d7e1a",
        "timestamp": "2026-02-13T09:00:00.000Z", "cwd": "/home/u/proj",
        "pad": "x".repeat(2 * 1024 * 1024),
    });
    let user = r#"{"type":"message","id":"0a0b0c0d","parentId":null,"timestamp":"2026-02-13T09:00:05.000Z","message":{"role":"user","content":"hello","timestamp":1770973204998}}"#;
    std::fs::write(&path, format!("{header}\n{user}\n")).unwrap();
    let report = scratch.build(&[&path], &[]);
    assert_report(&report, 1, 0, 1, 0, &[]);
}

#[test]
#[rustfmt::skip]
fn only_jsonl_files_are_discovered() {
    // The same valid session under three names: only the .jsonl one is
    // scanned when a directory is indexed.
    let scratch = crate::util::Scratch::new();
    let dir = scratch.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let src = crate::util::fixture("decoy-wrong-extension.json");
    for name in ["a.json", "a.txt", "a.jsonl"] {
        std::fs::copy(&src, dir.join(name)).unwrap();
    }
    let report = scratch.build(&[&dir], &[]);
    assert_report(&report, 1, 1, 0, 2, &[]);
    let path = dir.join("a.jsonl");
    let docs = scratch.show_json(path.to_str().unwrap(), &[]);
    let s = session("4a8b2c6e-0d4f-4a8b-8c6e-0d4f8a2b6c0f");
    assert_docs(
        &path,
        &docs,
        &s,
        &[
            doc(2, Some("6f7a8b9d"), "user", Some("2026-02-11T09:00:05.000Z"), NONE, true,
                "A valid session in a .json file is never discovered."),
            doc(3, Some("7a8b9c0e"), "assistant", Some("2026-02-11T09:00:09.000Z"), SONNET, true,
                "Only *.jsonl files are read."),
        ],
    );
}

// ------------------------------------------------------------ entry types

#[test]
#[rustfmt::skip]
fn model_change_sets_the_model_of_later_documents() {
    let s = session("3b9f1e7d-5c2a-4f8e-b6d4-a2c8e0f4b6d8");
    check(
        "entry-model-change.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("0f1e2d3c"), "user", Some("2026-01-09T13:00:02.000Z"), NONE, true,
                "Which model are you?"),
            doc(4, Some("2b3c4d5f"), "assistant", Some("2026-01-09T13:00:05.500Z"), SONNET, true,
                "Claude Sonnet 4.5."),
            doc(6, Some("4d5e6f7b"), "user", Some("2026-01-09T13:01:02.000Z"), GPT5, true,
                "And now?"),
            doc(7, Some("5e6f7a8c"), "assistant", Some("2026-01-09T13:01:04.250Z"), Some("gpt-5"), true,
                "GPT-5, without a provider field."),
            doc(8, Some("6f7a8b9d"), "user", Some("2026-01-09T13:01:30.000Z"), GPT5, true,
                "And this reply?"),
            doc(9, Some("7a8b9c0e"), "assistant", Some("2026-01-09T13:01:33.125Z"), GPT5, true,
                "This reply names no model at all."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn thinking_level_change_is_never_indexed() {
    let s = session("5a7c9e1b-3d5f-4a7c-9e1b-3d5f7a9c1e3b");
    check(
        "entry-thinking-level-change.jsonl",
        &["--include", "all"],
        &s,
        &[
            doc(2, Some("8c9d0e1f"), "user", Some("2026-01-10T10:00:03.000Z"), NONE, true,
                "Think harder about this one."),
            doc(4, Some("0e1f2a3b"), "assistant", Some("2026-01-10T10:00:19.333Z"), SONNET, true,
                "Thinking level is now high."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn compaction_summary_is_opt_in() {
    let s = session("7d1e5f9a-2b6c-4d0e-8f3a-7b1c5d9e3f7a");
    let all = [
        doc(3, Some("2b3c4d5e"), "user", Some("2026-01-11T15:00:04.000Z"), SONNET, true,
            "Profile the indexer and find the hot spot."),
        doc(4, Some("3c4d5e6f"), "assistant", Some("2026-01-11T15:02:10.500Z"), SONNET, true,
            "Most of the time goes to JSON parsing."),
        doc(5, Some("4d5e6f7a"), "user", Some("2026-01-11T15:03:00.000Z"), SONNET, true,
            "Switch to simd-json."),
        doc(6, Some("5e6f7a8b"), "assistant", Some("2026-01-11T15:06:44.812Z"), SONNET, true,
            "Switched the parser; indexing is 2.1x faster."),
        doc(7, Some("6f7a8b9c"), "summary", Some("2026-01-11T15:30:00.000Z"), SONNET, true,
            "## Goal\nSpeed up the indexer.\n\n## Progress\n- Profiled: JSON parsing dominates.\n- Switched to simd-json (2.1x faster)."),
        doc(8, Some("7a8b9c0d"), "user", Some("2026-01-11T15:31:00.000Z"), SONNET, true,
            "Now check memory use."),
        doc(9, Some("8b9c0d1e"), "assistant", Some("2026-01-11T15:31:40.404Z"), SONNET, true,
            "Peak RSS is 48 MB on the 2 GB corpus."),
    ];
    check("entry-compaction.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("entry-compaction.jsonl", &["--include", "summary"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn branch_summary_is_opt_in_and_on_the_new_branch() {
    let s = session("9f3a7b1c-5d9e-4f3a-8b7c-1d5e9f3a7b1c");
    let all = [
        doc(2, Some("2b3c4d5e"), "user", Some("2026-01-12T09:00:05.000Z"), NONE, true,
            "Fix the flaky test by adding a retry."),
        doc(3, Some("3c4d5e6f"), "assistant", Some("2026-01-12T09:00:30.000Z"), SONNET, true,
            "Added a retry loop around the socket connect."),
        doc(4, Some("4d5e6f7a"), "user", Some("2026-01-12T09:05:00.000Z"), NONE, false,
            "Still flaky. Try a longer timeout instead."),
        doc(5, Some("5e6f7a8b"), "assistant", Some("2026-01-12T09:05:20.000Z"), SONNET, false,
            "Raised the connect timeout to 30 s."),
        doc(6, Some("6f7a8b9c"), "summary", Some("2026-01-12T09:20:00.000Z"), NONE, true,
            "Tried raising the connect timeout to 30 s; the test stayed flaky."),
        doc(7, Some("7a8b9c0d"), "user", Some("2026-01-12T09:20:10.000Z"), NONE, true,
            "Use a random free port instead of 8080."),
        doc(8, Some("8b9c0d1e"), "assistant", Some("2026-01-12T09:20:41.250Z"), SONNET, true,
            "The test now binds port 0 and reads the assigned port back."),
    ];
    check("entry-branch-summary.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("entry-branch-summary.jsonl", &["--include", "summary"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn custom_entry_is_never_indexed() {
    let s = session("1c5d9e3f-7a1b-4c5d-9e3f-7a1b5c9d3e7f");
    check(
        "entry-custom-never-indexed.jsonl",
        &["--include", "all"],
        &s,
        &[
            doc(3, Some("1b0c9d8e"), "user", Some("2026-01-13T11:00:04.000Z"), NONE, true,
                "What is left to do?"),
            doc(5, Some("3d2e1f0a"), "assistant", Some("2026-01-13T11:00:09.999Z"), SONNET, true,
                "Only the release notes."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn custom_message_entry_is_opt_in() {
    let s = session("3e7f1a5b-9c3d-4e7f-a1b5-c9d3e7f1a5b9");
    let all = [
        doc(3, Some("5a6b7c8d"), "user", Some("2026-01-14T16:00:03.000Z"), SONNET, true,
            "Run the linter."),
        doc(4, Some("6b7c8d9e"), "custom", Some("2026-01-14T16:00:09.000Z"), SONNET, true,
            "clippy: 2 warnings in src/index.rs"),
        doc(5, Some("7c8d9e0f"), "custom", Some("2026-01-14T16:00:09.500Z"), SONNET, true,
            "Loaded AGENTS.md\nLoaded docs/session.md"),
        doc(6, Some("8d9e0f1a"), "assistant", Some("2026-01-14T16:00:20.020Z"), SONNET, true,
            "Both warnings are unused imports; I removed them."),
    ];
    check("entry-custom-message.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("entry-custom-message.jsonl", &["--include", "custom"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn label_entry_is_never_indexed() {
    let s = session("5b9c3d7e-1f5a-4b9c-8d7e-1f5a9b3c7d1e");
    check(
        "entry-label.jsonl",
        &["--include", "all"],
        &s,
        &[
            doc(2, Some("9e0f1a2b"), "user", Some("2026-01-15T08:00:02.000Z"), NONE, true,
                "Bookmark this answer."),
            doc(3, Some("0f1a2b3c"), "assistant", Some("2026-01-15T08:00:05.000Z"), SONNET, true,
                "Here is the answer worth keeping."),
            doc(6, Some("3c4d5e6f"), "user", Some("2026-01-15T08:01:10.000Z"), NONE, true,
                "Thanks, label removed again."),
            doc(7, Some("4d5e6f7a"), "assistant", Some("2026-01-15T08:01:12.000Z"), SONNET, true,
                "Noted."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn session_info_last_name_wins_for_every_document() {
    let s = Session {
        id: "7f1a5b9c-3d7e-4f1a-9b5c-3d7e1f5a9b3c",
        cwd: Some("/home/u/proj"),
        name: Some("Flaky socket test: fixed"),
        agent: "pi",
    };
    check(
        "session-info-renamed.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("5e6f7a8b"), "user", Some("2026-01-16T19:00:04.000Z"), NONE, true,
                "The socket test fails one run in ten."),
            doc(3, Some("6f7a8b9c"), "assistant", Some("2026-01-16T19:00:30.000Z"), SONNET, true,
                "It races on a fixed port."),
            doc(5, Some("8b9c0d1e"), "user", Some("2026-01-16T19:02:00.000Z"), NONE, true,
                "Use port 0."),
            doc(6, Some("9c0d1e2f"), "assistant", Some("2026-01-16T19:02:25.000Z"), SONNET, true,
                "Done; ten runs in a row pass."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn session_info_empty_name_clears_it() {
    let s = session("9b3c7d1e-5f9a-4b3c-8d1e-5f9a3b7c1d5e");
    check(
        "session-info-name-cleared.jsonl",
        &[],
        &s,
        &[
            doc(3, Some("2f3a4b5c"), "user", Some("2026-01-17T10:00:04.000Z"), NONE, true,
                "Draft the release notes for 0.2."),
            doc(4, Some("3a4b5c6d"), "assistant", Some("2026-01-17T10:00:40.000Z"), SONNET, true,
                "Here is a draft with three sections."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn unknown_entry_type_is_skipped_silently() {
    let s = session("2d6e0f4a-8b2c-4d6e-9f4a-8b2c6d0e4f8a");
    check(
        "unknown-entry-type.jsonl",
        &["--include", "all"],
        &s,
        &[
            doc(2, Some("6d7e8f9a"), "user", Some("2026-01-18T14:00:03.000Z"), NONE, true,
                "Take a checkpoint."),
            doc(3, Some("7e8f9a0b"), "assistant", Some("2026-01-18T14:00:06.000Z"), SONNET, true,
                "Checkpoint taken."),
            doc(6, Some("9a0b1c2d"), "user", Some("2026-01-18T14:01:00.000Z"), NONE, true,
                "Continue after the checkpoint."),
            doc(7, Some("0b1c2d3e"), "assistant", Some("2026-01-18T14:01:05.000Z"), SONNET, true,
                "Continuing."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn usage_entries_are_skipped_and_keep_the_branch() {
    // Pi 0.86+ `usage` entries (cache warm-ups, any `kind`) sit in the
    // parent chain and are the leaf at the end: never a document.
    let s = session("7c3d4e5f-6071-4829-9bac-1d2e3f4a5b6c");
    let all = [
        doc(2, Some("c0b1d2e3"), "user", Some("2026-11-21T09:00:05.000Z"), NONE, true, "Warm the cache first."),
        doc(3, Some("c1b2d3e4"), "assistant", Some("2026-11-21T09:00:09.000Z"), SONNET, true, "Cache warmed."),
        doc(5, Some("c3b4d5e6"), "user", Some("2026-11-21T09:00:15.000Z"), NONE, true, "Now run the build."),
        doc(6, Some("c4b5d6e7"), "assistant", Some("2026-11-21T09:00:19.000Z"), SONNET, true, "The build passed."),
    ];
    check("entry-usage.jsonl", &[], &s, &all, &[]);
    check("entry-usage.jsonl", &["--include", "all"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn context_edit_marks_its_target_and_the_latest_edit_on_the_active_branch_wins() {
    // The text the user saw stays indexed; the mark follows the latest
    // edit on the active branch (L8 then L9 on L4: omitted; L14 then L15
    // on L12: replaced, trimmed); L11's edit lies on the abandoned branch
    // (L10, L11), so L5 is not edited; abandoned messages are never marked.
    let s = session("8d4e5f60-7182-493a-acbd-2e3f4a5b6c7d");
    let all = [
        doc(2, Some("e0000001"), "user", Some("2026-11-22T09:00:05.000Z"), NONE, true,
            "Please read the config file.").edited("omitted", None),
        doc(3, Some("e0000002"), "assistant", Some("2026-11-22T09:00:09.000Z"), SONNET, true,
            "I read it: it sets the port to 8080.").edited("replaced", Some("Config read (zqshortened).")),
        doc(4, Some("e0000003"), "user", Some("2026-11-22T09:00:15.000Z"), NONE, true,
            "Now run the tests.").edited("omitted", None),
        doc(5, Some("e0000004"), "assistant", Some("2026-11-22T09:00:19.000Z"), SONNET, true,
            "All 12 tests pass."),
        doc(10, Some("e0000009"), "user", Some("2026-11-22T09:00:30.000Z"), NONE, false,
            "An abandoned question."),
        doc(12, Some("e000000b"), "user", Some("2026-11-22T09:00:40.000Z"), NONE, true,
            "The question kept.").edited("replaced", Some("The question, shortened zqlater.")),
        doc(13, Some("e000000c"), "assistant", Some("2026-11-22T09:00:44.000Z"), SONNET, true,
            "The answer kept."),
    ];
    check("entry-context-edit.jsonl", &[], &s, &all, &[]);
    // The replacement in effect is found, as part of its target's hit; a
    // replacement a later edit superseded is not.
    let path = crate::util::fixture("entry-context-edit.jsonl");
    let scratch = crate::util::Scratch::new();
    scratch.build(&[&path], &[]);
    let search = |q: &str| -> Vec<Value> { scratch.search_json(q, &[]) };
    let hits = search("zqshortened");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["line"], 3);
    assert_eq!(hits[0]["text"], "I read it: it sets the port to 8080.");
    assert_eq!(hits[0]["edited"], "replaced");
    assert!(hits[0]["snippet"].as_str().unwrap().contains("zqshortened"), "{}", hits[0]);
    assert_eq!(search("zqlater")[0]["line"], 12);
    assert!(search("zqfirsttry").is_empty(), "a superseded replacement is not found");
    // `show` says so in words.
    let out = crate::util::run(scratch.cmd().args(["show", path.to_str().unwrap(), "--index"]).arg(scratch.index()));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("line 2 [omitted from the model's context]"), "{text}");
    assert!(text.contains("line 3 [replaced in the model's context]\nI read it: it sets the port to 8080.\n[sent to the model instead]\nConfig read (zqshortened)."), "{text}");
}

// ------------------------------------------------------------ branches

#[test]
#[rustfmt::skip]
fn branch_abandoned_entries_are_inactive() {
    let s = session("4f8a2b6c-0d4e-4f8a-ab6c-0d4e8f2a6b0c");
    check(
        "branch-abandoned.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("0c1d2e3f"), "user", Some("2026-01-19T10:00:05.000Z"), NONE, true,
                "Add a --watch flag."),
            doc(3, Some("1d2e3f4a"), "assistant", Some("2026-01-19T10:00:40.000Z"), SONNET, true,
                "Added --watch using the notify crate."),
            doc(4, Some("2e3f4a5b"), "user", Some("2026-01-19T10:02:00.000Z"), NONE, false,
                "Make it poll instead; notify is flaky on NFS."),
            doc(5, Some("3f4a5b6c"), "assistant", Some("2026-01-19T10:02:30.000Z"), SONNET, false,
                "Switched to polling every 2 s."),
            doc(6, Some("4a5b6c7d"), "user", Some("2026-01-19T10:10:00.000Z"), NONE, true,
                "Keep notify but fall back to polling on NFS."),
            doc(7, Some("5b6c7d8e"), "assistant", Some("2026-01-19T10:10:45.000Z"), SONNET, true,
                "Done: notify first, polling when the filesystem is NFS."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn branch_leaf_is_a_trailing_label_entry() {
    let s = session("6b0c4d8e-2f6a-4b0c-8d8e-2f6a0b4c8d2f");
    check(
        "branch-leaf-is-label.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("a0b1c2d3"), "user", Some("2026-01-20T10:00:05.000Z"), NONE, true,
                "Write the CSV exporter."),
            doc(3, Some("b1c2d3e4"), "assistant", Some("2026-01-20T10:01:00.000Z"), SONNET, true,
                "Wrote export_csv in src/export.rs."),
            doc(4, Some("c2d3e4f5"), "user", Some("2026-01-20T10:02:00.000Z"), NONE, true,
                "Quote every field."),
            doc(5, Some("d3e4f5a6"), "assistant", Some("2026-01-20T10:02:20.000Z"), SONNET, true,
                "Every field is now quoted."),
            doc(6, Some("e4f5a6b7"), "user", Some("2026-01-20T10:05:00.000Z"), NONE, false,
                "Quote only fields that need it."),
            doc(7, Some("f5a6b7c8"), "assistant", Some("2026-01-20T10:05:20.000Z"), SONNET, false,
                "Fields are quoted only when they contain a comma, quote or newline."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn branch_leaf_is_a_trailing_session_info_entry() {
    let s = Session {
        id: "8d2e6f0a-4b8c-4d2e-9f0a-4b8c2d6e0f4b",
        cwd: Some("/home/u/proj"),
        name: Some("Port scanner"),
        agent: "pi",
    };
    check(
        "branch-leaf-is-session-info.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("1f2a3b4c"), "user", Some("2026-01-21T10:00:05.000Z"), NONE, true,
                "Write a port scanner."),
            doc(3, Some("2a3b4c5d"), "assistant", Some("2026-01-21T10:00:50.000Z"), SONNET, true,
                "Here is a TCP connect scanner."),
            doc(4, Some("3b4c5d6e"), "user", Some("2026-01-21T10:01:30.000Z"), NONE, false,
                "Make it scan UDP too."),
            doc(5, Some("4c5d6e7f"), "assistant", Some("2026-01-21T10:02:10.000Z"), SONNET, false,
                "UDP scanning added."),
        ],
        &[],
    );
}

// ------------------------------------------------------------ messages and blocks

#[test]
#[rustfmt::skip]
fn user_text_and_image_blocks() {
    let s = session("0e4f8a2b-6c0d-4e4f-8a2b-6c0d4e8f2a6c");
    check(
        "message-user-text-image.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("6a7b8c9d"), "user", Some("2026-01-22T09:00:06.000Z"), NONE, true,
                "Here is the screenshot of the broken layout:\nWhy is the sidebar cut off?"),
            doc(3, Some("7b8c9d0e"), "assistant", Some("2026-01-22T09:00:20.000Z"), SONNET, true,
                "The sidebar has a fixed height of 600px."),
            // line 4: a user message with only an image: no document
            doc(5, Some("9d0e1f2a"), "assistant", Some("2026-01-22T09:01:15.000Z"), SONNET, true,
                "That image shows the same problem."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn text_blocks_joined_with_newline_then_trimmed() {
    let s = session("2a6b0c4d-8e2f-4a6b-8c4d-8e2f6a0b4c8e");
    check(
        "text-block-joining.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("0a1b2c3d"), "user", Some("2026-01-23T09:00:05.000Z"), NONE, true,
                // The empty block between them is skipped (as Pi shows it,
                // and as MemPalace's importer reads it).
                "First paragraph.\nSecond paragraph after an empty block."),
            doc(3, Some("1b2c3d4e"), "assistant", Some("2026-01-23T09:00:10.000Z"), SONNET, true,
                "Answer part one.\nAnswer part two."),
            // lines 4 and 5: whitespace only after trimming: no document
            doc(6, Some("4e5f6a7b"), "user", Some("2026-01-23T09:00:40.000Z"), NONE, true,
                "Leading and trailing whitespace is trimmed,\n  inner lines are kept."),
            doc(7, Some("5f6a7b8c"), "assistant", Some("2026-01-23T09:00:45.000Z"), SONNET, true,
                "Done."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn assistant_text_thinking_and_tool_call() {
    let s = session("4c8d2e6f-0a4b-4c8d-9e6f-0a4b8c2d6e0a");
    let all = [
        doc(4, Some("2d3e4f5a"), "user", Some("2026-01-24T09:00:05.000Z"), SONNET, true,
            "Which test is failing?"),
        doc(5, Some("3e4f5a6b"), "assistant", Some("2026-01-24T09:00:12.000Z"), SONNET, true,
            "Let me run the test suite."),
        doc(5, Some("3e4f5a6b"), "thinking", Some("2026-01-24T09:00:12.000Z"), SONNET, true,
            "The user wants the failing test. I should run cargo test first."),
        doc(5, Some("3e4f5a6b"), "tool", Some("2026-01-24T09:00:12.000Z"), SONNET, true,
            "bash\ncommand: cargo test 2>&1 | tail -n 20\ntimeout: 120"),
        doc(6, Some("4f5a6b7c"), "tool", Some("2026-01-24T09:01:02.000Z"), SONNET, true,
            "test format_rules::bom ... FAILED\n\nfailures:\n    format_rules::bom"),
        doc(7, Some("5a6b7c8d"), "assistant", Some("2026-01-24T09:01:09.000Z"), SONNET, true,
            "Only `format_rules::bom` fails: the BOM is not stripped."),
        doc(7, Some("5a6b7c8d"), "thinking", Some("2026-01-24T09:01:09.000Z"), SONNET, true,
            "Only the BOM test fails."),
    ];
    check("assistant-text-thinking-toolcall.jsonl", &[], &s, &default_kinds(&all), &[]);
    check(
        "assistant-text-thinking-toolcall.jsonl",
        &["--include", "thinking,tools"],
        &s,
        &all,
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn assistant_aborted_with_empty_content_yields_nothing() {
    let s = session("6e0f4a8b-2c6d-4e0f-8a8b-2c6d0e4f8a2c");
    check(
        "assistant-aborted-empty.jsonl",
        &["--include", "all"],
        &s,
        &[
            doc(3, Some("7d8e9f0a"), "user", Some("2026-01-25T09:00:05.000Z"), SONNET, true,
                "Refactor the whole parser."),
            // line 4: assistant with content [] and stopReason "aborted"
            doc(5, Some("9f0a1b2c"), "user", Some("2026-01-25T09:00:20.000Z"), SONNET, true,
                "Sorry, only the header parser."),
            doc(6, Some("0a1b2c3e"), "assistant", Some("2026-01-25T09:00:44.000Z"), SONNET, true,
                "The header parser now checks the fingerprint first."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn assistant_only_thinking_and_redacted_thinking() {
    let s = session("8a2b6c0d-4e8f-4a2b-9c0d-4e8f2a6b0c4e");
    let all = [
        doc(3, Some("2c3d4e5a"), "user", Some("2026-01-26T09:00:05.000Z"), SONNET, true,
            "Open the index read-only."),
        doc(4, Some("3d4e5f6b"), "thinking", Some("2026-01-26T09:00:40.000Z"), SONNET, true,
            "I need to check whether the index directory exists before opening it.\nThen open it with a reader only."),
        // line 5: only a redacted thinking block: nothing, even with thinking
        doc(6, Some("5f6a7b8d"), "user", Some("2026-01-26T09:01:30.000Z"), SONNET, true,
            "Continue."),
        doc(7, Some("6a7b8c9e"), "assistant", Some("2026-01-26T09:01:55.000Z"), SONNET, true,
            "Opened the index with a read-only reader."),
    ];
    check("assistant-only-thinking.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("assistant-only-thinking.jsonl", &["--include", "thinking"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn tool_result_text_blocks_are_opt_in() {
    let s = session("0c4d8e2f-6a0b-4c4d-8e2f-6a0b4c8d2e6a");
    let all = [
        doc(3, Some("8c9d0e1a"), "user", Some("2026-01-27T09:00:05.000Z"), SONNET, true,
            "Take a screenshot of the page."),
        doc(4, Some("9d0e1f2b"), "tool", Some("2026-01-27T09:00:09.000Z"), SONNET, true,
            "screenshot\nurl: http://localhost:8080/"),
        doc(5, Some("0e1f2a3c"), "tool", Some("2026-01-27T09:00:14.000Z"), SONNET, true,
            "Captured 1280x800.\nConsole: 1 error (404 /favicon.ico)"),
        doc(6, Some("1f2a3b4d"), "assistant", Some("2026-01-27T09:00:21.000Z"), SONNET, true,
            "The page renders; only the favicon is missing."),
    ];
    check("message-tool-result.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("message-tool-result.jsonl", &["--include", "tools"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn bash_execution_command_and_output_are_opt_in() {
    let s = session("2e6f0a4b-8c2d-4e6f-9a4b-8c2d6e0f4a8c");
    let all = [
        doc(3, Some("3b4c5d6f"), "user", Some("2026-01-28T09:00:05.000Z"), SONNET, true,
            "I will list the target directory myself."),
        doc(4, Some("4c5d6e7a"), "tool", Some("2026-01-28T09:00:09.000Z"), SONNET, true,
            "ls target\nCACHEDIR.TAG\ndebug\nrelease"),
        doc(5, Some("5d6e7f8b"), "tool", Some("2026-01-28T09:00:12.000Z"), SONNET, true,
            "git status --short"),
        doc(6, Some("6e7f8a9c"), "user", Some("2026-01-28T09:00:30.000Z"), SONNET, true,
            "Both debug and release builds exist. Which is newer?"),
        doc(7, Some("7f8a9b0d"), "assistant", Some("2026-01-28T09:00:36.000Z"), SONNET, true,
            "I cannot tell from the listing; run ls -lt."),
    ];
    check("message-bash-execution.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("message-bash-execution.jsonl", &["--include", "tools"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn custom_role_message_is_opt_in() {
    let s = session("4a8b2c6d-0e4f-4a8b-8c6d-0e4f8a2b6c0e");
    let all = [
        doc(3, Some("9b0c1d2f"), "user", Some("2026-01-29T09:00:05.000Z"), SONNET, true,
            "Deploy to staging."),
        doc(4, Some("0c1d2e3a"), "custom", Some("2026-01-29T09:00:05.100Z"), SONNET, true,
            "Staging deploys are frozen until 14:00 UTC."),
        doc(5, Some("1d2e3f4b"), "custom", Some("2026-01-29T09:00:05.200Z"), SONNET, true,
            "CI: 212 passed, 0 failed\nCoverage: 81%"),
        doc(6, Some("2e3f4a5c"), "assistant", Some("2026-01-29T09:00:12.000Z"), SONNET, true,
            "Deploys are frozen until 14:00 UTC; I queued the deploy."),
    ];
    check("message-custom-role.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("message-custom-role.jsonl", &["--include", "custom"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn hook_message_role_is_opt_in_custom() {
    let s = session("6c0d4e8f-2a6b-4c0d-9e8f-2a6b0c4d8e2a");
    let all = [
        doc(3, Some("4a5b6c7e"), "user", Some("2026-01-03T09:00:05.000Z"), GPT5, true,
            "Commit the change."),
        doc(4, Some("5b6c7d8f"), "custom", Some("2026-01-03T09:00:05.050Z"), GPT5, true,
            "Reminder: run cargo fmt before committing."),
        doc(5, Some("6c7d8e9a"), "assistant", Some("2026-01-03T09:00:15.000Z"), GPT5, true,
            "Ran cargo fmt, then committed."),
    ];
    check("message-hook-message-role.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("message-hook-message-role.jsonl", &["--include", "custom"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn summary_role_messages_are_opt_in() {
    let s = session("8e2f6a0b-4c8d-4e2f-8a0b-4c8d2e6f0a4c");
    let all = [
        doc(3, Some("8e9f0a1c"), "user", Some("2026-01-30T09:00:05.000Z"), SONNET, true,
            "Where were we?"),
        doc(4, Some("9f0a1b2d"), "summary", Some("2026-01-30T09:00:05.100Z"), SONNET, true,
            "Earlier: set up the CI workflow and fixed two clippy warnings."),
        doc(5, Some("0a1b2c3f"), "summary", Some("2026-01-30T09:00:05.200Z"), SONNET, true,
            "Abandoned branch: tried caching target/ between CI jobs; no speedup."),
        doc(6, Some("1b2c3d4a"), "assistant", Some("2026-01-30T09:00:14.000Z"), SONNET, true,
            "CI is set up; caching did not help, so it was dropped."),
    ];
    check("message-summary-roles.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("message-summary-roles.jsonl", &["--include", "summary"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn tool_calls_in_both_spellings() {
    let s = session("0a4b8c2d-6e0f-4a4b-9c2d-6e0f4a8b2c6e");
    let all = [
        doc(3, Some("3d4e5f6c"), "user", Some("2026-01-31T09:00:05.000Z"), SONNET, true,
            "Find where main is defined and add a binary."),
        doc(4, Some("4e5f6a7d"), "assistant", Some("2026-01-31T09:00:15.000Z"), SONNET, true,
            "Reading the code first."),
        doc(4, Some("4e5f6a7d"), "tool", Some("2026-01-31T09:00:15.000Z"), SONNET, true,
            concat!(
                "read\n",
                "limit: 40\n",
                "offset: 1\n",
                "path: src/lib.rs\n",
                "grep\n",
                "context: {\"after\":2,\"before\":0}\n",
                "ignoreCase: true\n",
                "paths: [\"src\",\"tests\"]\n",
                "pattern: fn main\n",
                "type: null\n",
                "write\n",
                "content: fn main() {}\n",
                "\n",
                "path: src/bin/extra.rs\n",
                "ls",
            )),
    ];
    check("toolcall-two-spellings.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("toolcall-two-spellings.jsonl", &["--include", "tools"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn legacy_extra_keys_are_ignored() {
    let s = session("2c6d0e4f-8a2b-4c6d-8e4f-8a2b6c0d4e8a");
    let all = [
        doc(3, Some("6f7a8b9e"), "user", Some("2025-12-01T09:00:05.000Z"), SONNET, true,
            "Summarise the attached notes."),
        doc(4, Some("7a8b9c0f"), "assistant", Some("2025-12-01T09:00:20.000Z"), SONNET, true,
            "The notes say the release ships on Friday."),
        doc(4, Some("7a8b9c0f"), "tool", Some("2025-12-01T09:00:20.000Z"), SONNET, true,
            "read\npath: notes.md"),
    ];
    check("legacy-extra-keys.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("legacy-extra-keys.jsonl", &["--include", "tools"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn timestamps_normalised_to_utc_milliseconds() {
    let s = session("6a0b4c8d-2e6f-4a0b-8c8d-2e6f0a4b8c2e");
    check(
        "timestamp-normalisation.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("1a1a1a1a"), "user", Some("2026-01-15T09:30:00.000Z"), NONE, true,
                "Entry timestamp without milliseconds."),
            doc(3, Some("2b2b2b2b"), "assistant", Some("2026-01-15T09:30:01.500Z"), SONNET, true,
                "Entry timestamp with an offset and one fraction digit."),
            doc(4, Some("3c3c3c3c"), "user", Some("2026-01-15T09:31:02.123Z"), NONE, true,
                "Entry timestamp with microseconds."),
            doc(5, Some("4d4d4d4d"), "assistant", Some("2026-01-15T09:31:03.456Z"), SONNET, true,
                "No entry timestamp: the message epoch is used."),
            doc(6, Some("5e5e5e5e"), "user", Some("2026-01-15T09:32:00.007Z"), NONE, true,
                "Unparsable entry timestamp: the message epoch is used."),
            doc(7, Some("6f6f6f6f"), "assistant", None, SONNET, true,
                "No timestamp anywhere."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn system_messages_are_opt_in_kind_system() {
    // Pi 0.86+ `system` messages (the system prompt's sections and the
    // tools it declares; a later one patches them) are never indexed by
    // default. Their text: content, each section's text (a null section
    // removes one), then `name: description` of each tool added.
    let s = session("6b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b");
    let all = [
        doc(4, Some("b2a3c4d5"), "system", Some("2026-11-20T09:00:00.300Z"), SONNET, true,
            "You are a coding agent zqsysprompt.\n<tools>\n- read: Read a file\n</tools>\n<cwd>\n/home/u/proj\n</cwd>\nread: Read a file"),
        doc(5, Some("b3a4c5d6"), "user", Some("2026-11-20T09:00:05.000Z"), SONNET, true,
            "Which file holds the line parser?"),
        doc(6, Some("b4a5c6d7"), "assistant", Some("2026-11-20T09:00:09.000Z"), SONNET, true,
            "src/pi/entry.rs holds it."),
        doc(7, Some("b5a6c7d8"), "system", Some("2026-11-20T09:00:10.000Z"), SONNET, true,
            "<skills>zqskills</skills>"),
        doc(8, Some("b6a7c8d9"), "user", Some("2026-11-20T09:00:15.000Z"), SONNET, true,
            "Thanks."),
    ];
    check("message-system-role.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("message-system-role.jsonl", &["--include", "system"], &s, &all, &[]);
    check("message-system-role.jsonl", &["--include", "thinking,tools,summary,custom"], &s, &default_kinds(&all), &[]);
    // role:system finds them, and only them.
    let path = crate::util::fixture("message-system-role.jsonl");
    let scratch = crate::util::Scratch::new();
    scratch.build(&[&path], &["--include", "system"]);
    let out = crate::util::run(scratch.cmd().args(["search", "role:system", "--json", "--index"]).arg(scratch.index()));
    let lines: Vec<u64> = String::from_utf8(out.stdout).unwrap().lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["line"].as_u64().unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert!(lines.contains(&4) && lines.contains(&7), "{lines:?}");
}

// ------------------------------------------------------------ damaged input

#[test]
#[rustfmt::skip]
fn damaged_lines_are_reported_and_what_was_written_is_recovered() {
    let s = session("4e8f2a6b-0c4d-4e8f-9a6b-0c4d8e2f6a0c");
    check(
        "damaged-lines.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("0d1e2f3a"), "user", Some("2026-02-01T09:00:05.000Z"), NONE, true,
                "Start the server."),
            doc(4, Some("1e2f3a4b"), "assistant", Some("2026-02-01T09:00:09.000Z"), SONNET, true,
                "Started on port 8080."),
            // Cut short: the text written so far is recovered; Pi skips
            // the line, so it is on no branch.
            doc(5, Some("2f3a4b5c"), "user", Some("2026-02-01T09:00:30.000Z"), NONE, false,
                "Now stop it and"),
            doc(7, Some("3a4b5c6d"), "user", Some("2026-02-01T09:01:00.000Z"), NONE, true,
                "Restart it with --verbose."),
            doc(8, Some("4b5c6d7e"), "assistant", Some("2026-02-01T09:01:04.000Z"), SONNET, true,
                "Restarted with verbose logging."),
        ],
        // 3: not JSON, 5: cut short, 6: a JSON array, 9: cut short (last line, with newline)
        &[("damaged-lines.jsonl", 3), ("damaged-lines.jsonl", 5), ("damaged-lines.jsonl", 6), ("damaged-lines.jsonl", 9)],
    );
}

#[test]
#[rustfmt::skip]
fn half_written_last_line_is_neither_indexed_nor_damaged() {
    let s = session("5f9a3b7c-1d5e-4f9a-ab7c-1d5e9f3a7b1d");
    let path = crate::util::fixture("half-written-last-line.jsonl");
    assert!(!std::fs::read(&path).unwrap().ends_with(b"\n"));
    check(
        "half-written-last-line.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("3e4f5a6c"), "user", Some("2026-02-05T09:00:05.000Z"), NONE, true,
                "Why is the index locked?"),
            doc(3, Some("4f5a6b7d"), "assistant", Some("2026-02-05T09:00:11.000Z"), SONNET, true,
                "Another writer holds the lock file."),
            doc(4, Some("5a6b7c8e"), "user", Some("2026-02-05T09:00:40.000Z"), NONE, true,
                "How do I release it?"),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn complete_last_line_without_newline_is_not_an_entry() {
    // Line 6 is a complete JSON object that would start a new branch from
    // line 3; with no newline after it, it is still being written: it is
    // not indexed and is not the leaf.
    let s = session("7b1c5d9e-3f7a-4b1c-9d9e-3f7a1b5c9d3f");
    check(
        "complete-last-line-no-newline.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("7c8d9e0a"), "user", Some("2026-02-06T09:00:05.000Z"), NONE, true,
                "Pick a name for the crate."),
            doc(3, Some("8d9e0f1b"), "assistant", Some("2026-02-06T09:00:09.000Z"), SONNET, true,
                "How about pi-index?"),
            doc(4, Some("9e0f1a2c"), "user", Some("2026-02-06T09:00:30.000Z"), NONE, true,
                "Good. Publish it."),
            doc(5, Some("0f1a2b3d"), "assistant", Some("2026-02-06T09:00:41.000Z"), SONNET, true,
                "Published pi-index 0.1.0."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn invalid_utf8_is_damaged_but_recovered() {
    let s = session("8c2d6e0f-4a8b-4c2d-9e0f-4a8b2c6d0e4f");
    check(
        "invalid-utf8.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("6d7e8f9b"), "user", Some("2026-02-02T09:00:05.000Z"), NONE, true,
                "Is caf\u{FFFD} spelled right? The euro sign \u{FFFD} got cut."),
            doc(3, Some("7e8f9a0c"), "assistant", Some("2026-02-02T09:00:09.000Z"), SONNET, true,
                "Those bytes are Latin-1, not UTF-8."),
        ],
        &[("invalid-utf8.jsonl", 2)],
    );
}

#[test]
#[rustfmt::skip]
fn crlf_line_endings() {
    let s = Session {
        id: "3d7e1f5a-9b3c-4d7e-8f5a-9b3c7d1e5f9b",
        cwd: Some("C:\\Users\\u\\proj"),
        name: None,
        agent: "pi",
    };
    check(
        "crlf-line-endings.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("0b1c2d3f"), "user", Some("2026-02-04T09:00:05.000Z"), NONE, true,
                "Saved with Windows line endings."),
            doc(3, Some("1c2d3e4a"), "assistant", Some("2026-02-04T09:00:09.000Z"), SONNET, true,
                "The trailing carriage return is ignored."),
            doc(4, Some("2d3e4f5b"), "user", Some("2026-02-04T09:00:20.000Z"), NONE, true,
                "Escaped CRLF\r\ninside a string stays."),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn huge_line_of_one_million_bytes() {
    let s = session("6e0f4a8c-2b6d-4e0f-8a8c-2b6d0e4f8a2d");
    let path = crate::util::fixture("huge-line.jsonl");
    let scratch = crate::util::Scratch::new();
    let report = scratch.build(&[&path], &[]);
    assert_report(&report, 1, 1, 0, 2, &[]);
    let mut docs = scratch.show_json(path.to_str().unwrap(), &[]);
    assert_eq!(docs.len(), 2);
    let text = docs[0]["text"].as_str().expect("text is a string").to_string();
    assert_eq!(text.len(), 1_000_000);
    assert!(text.starts_with("HUGE-BEGIN lorem ipsum dolor sit amet lorem ipsum"));
    assert!(text.ends_with("dolor sit amet lorem ip HUGE-END"));
    docs[0]["text"] = json!("<huge>");
    assert_docs(
        &path,
        &docs,
        &s,
        &[
            doc(2, Some("8a9b0c1d"), "user", Some("2026-02-12T09:00:05.000Z"), NONE, true, "<huge>"),
            doc(3, Some("9b0c1d2e"), "assistant", Some("2026-02-12T09:00:09.000Z"), SONNET, true,
                "That is a lot of lorem ipsum."),
        ],
    );
}

/// The `(file name, line)` pairs of the report's `recovered` list.
fn recovered_pairs(report: &Value) -> BTreeSet<(String, u64)> {
    report["recovered"]
        .as_array()
        .expect("recovered is a list")
        .iter()
        .map(|d| {
            assert!(!d["error"].as_str().unwrap().is_empty(), "{d}");
            let p = d["path"].as_str().unwrap();
            let name = Path::new(p)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, d["line"].as_u64().unwrap())
        })
        .collect()
}

/// Index a fixture with glued lines: `recovered` lines split, `damaged`
/// lines damaged, and exactly `expected` documents.
fn check_glued(
    name: &str,
    extra: &[&str],
    s: &Session,
    expected: &[Doc],
    recovered: &[u64],
    damaged: &[u64],
) {
    let path = crate::util::fixture(name);
    let scratch = crate::util::Scratch::new();
    let report = scratch.build(&[&path], extra);
    let damaged: Vec<(&str, u64)> = damaged.iter().map(|l| (name, *l)).collect();
    assert_report(&report, 1, 1, 0, expected.len() as u64, &damaged);
    assert_eq!(
        report["lines_recovered"],
        json!(recovered.len()),
        "{report}"
    );
    let want: Vec<(&str, u64)> = recovered.iter().map(|l| (name, *l)).collect();
    assert_eq!(recovered_pairs(&report), pairs(&want), "{report}");
    let docs = scratch.show_json(path.to_str().unwrap(), &[]);
    assert_docs(&path, &docs, s, expected);
}

#[test]
#[rustfmt::skip]
fn two_glued_objects_are_two_entries_on_the_active_branch() {
    // L3 holds an assistant reply and the next user message back to back
    // (a lost newline); L4 names the glued user message as its parent, so
    // the branch runs through both.
    let s = session("9e5f6071-8293-4a4b-bdce-3f4a5b6c7d8e");
    check_glued("glued-two-objects.jsonl", &[], &s, &[
        doc(2, Some("f0000001"), "user", Some("2026-06-01T09:00:05.000Z"), NONE, true, "Why did the build fail?"),
        doc(3, Some("f0000003"), "user", Some("2026-06-01T09:00:15.000Z"), NONE, true, "Which flag?"),
        doc(3, Some("f0000002"), "assistant", Some("2026-06-01T09:00:09.000Z"), SONNET, true, "A missing feature flag."),
        doc(4, Some("f0000004"), "assistant", Some("2026-06-01T09:00:19.000Z"), SONNET, true, "failpoints."),
    ], &[3], &[]);
}

#[test]
#[rustfmt::skip]
fn three_glued_objects_behind_a_tool_result_are_read() {
    // The first of the three is a tool result, which the prefix scan
    // would skip: the entries glued behind it are read all the same.
    let s = session("0f607182-93a4-4b5c-8edf-4a5b6c7d8e9f");
    let all = [
        doc(2, Some("f1000001"), "user", Some("2026-06-02T09:00:05.000Z"), NONE, true, "List the target directory."),
        doc(3, Some("f1000002"), "tool", Some("2026-06-02T09:00:09.000Z"), SONNET, true, "bash\ncommand: ls target"),
        doc(4, Some("f1000005"), "user", Some("2026-06-02T09:00:20.000Z"), NONE, true, "Three entries on one line."),
        doc(4, Some("f1000004"), "assistant", Some("2026-06-02T09:00:14.000Z"), SONNET, true, "Two profiles: debug and release."),
        doc(4, Some("f1000003"), "tool", Some("2026-06-02T09:00:10.000Z"), NONE, true, "debug\nrelease"),
        doc(5, Some("f1000006"), "assistant", Some("2026-06-02T09:00:24.000Z"), SONNET, true, "And the branch runs through them."),
    ];
    check_glued("glued-three-objects.jsonl", &[], &s, &default_kinds(&all), &[4], &[]);
    check_glued("glued-three-objects.jsonl", &["--include", "tools"], &s, &all, &[4], &[]);
}

#[test]
#[rustfmt::skip]
fn glued_objects_whose_last_is_cut_short() {
    // L3: a complete reply, then a user message cut short. The reply is
    // an entry; the rest is read as a line cut short is: its text so far
    // indexed, off the tree, the line damaged as well as recovered.
    let s = session("10718293-a4b5-4c6d-9ef0-5b6c7d8e9f0a");
    check_glued("glued-second-cut-short.jsonl", &[], &s, &[
        doc(2, Some("f2000001"), "user", Some("2026-06-03T09:00:05.000Z"), NONE, true, "Tell me a story."),
        doc(3, Some("f2000003"), "user", Some("2026-06-03T09:00:15.000Z"), NONE, false, "I was cut off mid"),
        doc(3, Some("f2000002"), "assistant", Some("2026-06-03T09:00:09.000Z"), SONNET, true, "Once upon a time."),
        doc(4, Some("f2000004"), "user", Some("2026-06-03T09:00:30.000Z"), NONE, true, "Go on."),
        doc(5, Some("f2000005"), "assistant", Some("2026-06-03T09:00:34.000Z"), SONNET, true, "The end."),
    ], &[3], &[3]);
}

#[test]
#[rustfmt::skip]
fn glued_objects_in_a_version_1_file() {
    let s = Session { id: "21829304-b5c6-4d7e-8f01-6c7d8e9f0a1b", cwd: Some("/home/u/old-proj"), name: None, agent: "pi" };
    let header = Some("anthropic/claude-sonnet-4-20250514");
    check_glued("glued-v1.jsonl", &[], &s, &[
        doc(2, None, "user", Some("2025-11-05T09:00:05.000Z"), header, true, "Is version 1 linear?"),
        doc(3, None, "user", Some("2025-11-05T09:00:15.000Z"), header, true, "Even glued?"),
        doc(3, None, "assistant", Some("2025-11-05T09:00:09.000Z"), SONNET, true, "Yes: one chain in file order."),
        doc(4, None, "assistant", Some("2025-11-05T09:00:19.000Z"), SONNET, true, "Even glued."),
    ], &[3], &[]);
}

// ------------------------------------------------------------ Oh My Pi

const OMP_FIRST: &str = "-proj/2026-07-01T10-00-00-000Z_0198c0de-7a11-7000-8000-0000000000a1.jsonl";

#[test]
#[rustfmt::skip]
fn omp_title_slot_before_the_header_names_the_session() {
    // Oh My Pi's folder layout (`-<cwd below home>`), its title slot on
    // line 1 (renamed: its `title_change` entries hold the older name),
    // the header on line 2, `model_change` as one `model` string, and a
    // `model_usage` entry in the parent chain.
    let s = omp_session("0198c0de-7a11-7000-8000-0000000000a1", Some("Watcher debounce: zqomptitle"));
    check(
        OMP_FIRST,
        &["--include", "all"],
        &s,
        &[
            doc(5, Some("a1000003"), "user", Some("2026-07-01T10:00:01.000Z"), SONNET, true,
                "Why does the watcher fire twice? zqompuser"),
            doc(6, Some("a1000004"), "assistant", Some("2026-07-01T10:00:03.000Z"), SONNET, true,
                "Because editors save in two steps. zqompanswer"),
            doc(9, Some("a1000007"), "user", Some("2026-07-01T10:00:07.000Z"), SONNET, true,
                "Debounce it then."),
            doc(10, Some("a1000008"), "assistant", Some("2026-07-01T10:00:08.000Z"), SONNET, true,
                "Done: events within 50 ms are merged."),
        ],
        &[],
    );
    // The slot's title is found by `name:`; the name it replaced is
    // found nowhere.
    let path = crate::util::fixture(OMP_FIRST);
    let scratch = crate::util::Scratch::new();
    scratch.build(&[&path], &[]);
    let hits = scratch.search_json("name:zqomptitle", &[]);
    assert_eq!(hits.len(), 4, "{hits:?}");
    assert!(hits.iter().all(|h| h["agent"] == "omp"), "{hits:?}");
    assert!(scratch.search_json("name:zqompoldname", &[]).is_empty());
    assert!(scratch.search_json("zqompoldname", &[]).is_empty());
}

#[test]
#[rustfmt::skip]
fn omp_entry_types_are_read_as_what_they_are() {
    // session_init (a subagent's prompt: kind `system`), a `developer`
    // message (kind `custom`), pythonExecution and fileMention (kind
    // `tools`); model_change with a role other than the default one,
    // service_tier_change, mode_change, credential_pin, ttsr_injection,
    // model_usage and reset_boundary: no document, no damage, and the
    // chain through them intact.
    let s = omp_session("0198c0de-7a11-7000-8000-0000000000a2", Some("OMP entry types"));
    let all = [
        doc(5, Some("b2000003"), "system", Some("2026-07-02T10:00:00.003Z"), GPT5, true,
            "You are a scout zqompsysprompt.\nFind the double event zqomptask\nread\ngrep"),
        doc(10, Some("b2000008"), "user", Some("2026-07-02T10:00:01.000Z"), GPT5, true,
            "Plan the change zqompplan"),
        doc(11, Some("b2000009"), "custom", Some("2026-07-02T10:00:01.500Z"), GPT5, true,
            "Reminder: today is 2026-07-02 zqompdeveloper"),
        doc(12, Some("b200000a"), "assistant", Some("2026-07-02T10:00:03.000Z"), GPT5, true,
            "Plan: merge the events."),
        doc(13, Some("b200000b"), "tool", Some("2026-07-02T10:00:04.000Z"), GPT5, true,
            "print(1 + 1)\n2 zqomppython"),
        doc(14, Some("b200000c"), "tool", Some("2026-07-02T10:00:05.000Z"), GPT5, true,
            "src/net.rs\nfn bind() {} zqompfile"),
        doc(17, Some("b200000f"), "user", Some("2026-07-02T10:00:08.000Z"), GPT5, true,
            "After the reset zqompreset"),
        doc(18, Some("b2000010"), "assistant", Some("2026-07-02T10:00:09.000Z"), GPT5, true,
            "Still here."),
    ];
    check("omp-entry-types.jsonl", &[], &s, &default_kinds(&all), &[]);
    check("omp-entry-types.jsonl", &["--include", "all"], &s, &all, &[]);
}

#[test]
#[rustfmt::skip]
fn omp_empty_slot_title_is_no_name_whatever_else_names_it() {
    // As Oh My Pi reads it: an empty slot title leaves the session
    // unnamed, though the header has a `title` and a `session_info`
    // (which Oh My Pi never reads) follows.
    let s = omp_session("0198c0de-7a11-7000-8000-0000000000a3", None);
    check(
        "omp-title-slot-empty-title.jsonl",
        &[],
        &s,
        &[
            doc(3, Some("c3000001"), "user", Some("2026-07-03T10:00:01.000Z"), NONE, true,
                "Untitled question"),
            doc(4, Some("c3000002"), "assistant", Some("2026-07-03T10:00:02.000Z"), SONNET, true,
                "Untitled answer"),
        ],
        &[],
    );
}

#[test]
#[rustfmt::skip]
fn omp_header_title_names_a_file_without_a_slot() {
    // Oh My Pi before 16.3: no slot, the name in the header's `title`.
    let s = omp_session("0198c0de-7a11-7000-8000-0000000000a4", Some("Legacy name zqomplegacy"));
    check(
        "omp-header-title-no-slot.jsonl",
        &[],
        &s,
        &[
            doc(2, Some("d4000001"), "user", Some("2026-05-04T10:00:01.000Z"), NONE, true,
                "Legacy question"),
            doc(3, Some("d4000002"), "assistant", Some("2026-05-04T10:00:02.000Z"), SONNET, true,
                "Legacy answer"),
        ],
        &[],
    );
}

#[test]
fn decoy_title_slot_without_a_header_is_rejected() {
    check_rejected("decoy-title-slot-no-header.jsonl");
    let path = crate::util::fixture("decoy-title-slot-no-header.jsonl");
    let scratch = crate::util::Scratch::new();
    let out = crate::util::run(scratch.build_cmd(&[&path]).arg("-v"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("decoy-title-slot-no-header.jsonl: not a Pi session header (an Oh My Pi title slot, then type \"message\")"),
        "{err}"
    );
}

#[test]
fn title_slot_not_on_the_first_line_is_rejected() {
    check_rejected("title-slot-not-first-line.jsonl");
}

#[test]
fn title_slot_of_a_version_omp_does_not_read_is_rejected() {
    check_rejected("title-slot-unknown-version.jsonl");
}

// ------------------------------------------------------------ the whole fixture directory

const ALL_DAMAGED: [(&str, u64); 6] = [
    ("damaged-lines.jsonl", 3),
    ("damaged-lines.jsonl", 5),
    ("damaged-lines.jsonl", 6),
    ("damaged-lines.jsonl", 9),
    ("glued-second-cut-short.jsonl", 3),
    ("invalid-utf8.jsonl", 2),
];

fn fixtures_dir() -> PathBuf {
    crate::util::fixtures()
}

#[test]
fn whole_fixture_directory_default_kinds() {
    // 68 *.jsonl files (the .json decoy is not discovered): 53 sessions,
    // 15 rejected (empty, blank lines only, 3 bad headers, 2 title slots
    // Oh My Pi would not skip, 8 decoys).
    let scratch = crate::util::Scratch::new();
    let report = scratch.build(&[&fixtures_dir()], &[]);
    assert_report(&report, 68, 53, 15, 183, &ALL_DAMAGED);
    assert_eq!(report["lines_recovered"], 4, "{report}");
}

#[test]
fn whole_fixture_directory_all_kinds() {
    // 183 user/assistant documents (two recovered from cut lines) + 29 opt-in ones (5 summary, 6 custom,
    // 3 thinking, 12 tool, 3 system); fixtures/README.md has the per-file counts.
    let scratch = crate::util::Scratch::new();
    let report = scratch.build(&[&fixtures_dir()], &["--include", "all"]);
    assert_report(&report, 68, 53, 15, 212, &ALL_DAMAGED);
}
