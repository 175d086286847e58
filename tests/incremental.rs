//! Incremental builds through the real binary: unchanged files are not
//! read, appended lines are indexed once, branch moves and renames reach
//! the old documents, rewritten, shrunk and deleted files are replaced or
//! removed, and a change of kinds or schema rebuilds everything, saying why.

mod common;

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use common::{run, Scratch};

const HEADER: &str = r#"{"type":"session","version":3,"id":"inc00001-0000-4000-8000-000000000001","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/home/u/inc"}"#;

fn user(id: &str, parent: Option<&str>, minute: u32, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-05-01T10:{minute:02}:00.000Z","message":{{"role":"user","content":"{text}","timestamp":0}}}}"#
    )
}

fn assistant(id: &str, parent: &str, minute: u32, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-05-01T10:{minute:02}:30.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"provider":"anthropic","model":"m","stopReason":"stop","timestamp":0}}}}"#
    )
}

struct Setup {
    s: Scratch,
    sessions: PathBuf,
    file: PathBuf,
}

fn setup() -> Setup {
    let s = Scratch::new();
    let sessions = s.dir.path().join("sessions");
    let project = sessions.join("--home-u-inc--");
    fs::create_dir_all(&project).unwrap();
    let file = project.join("2026-05-01T10-00-00-000Z_inc00001.jsonl");
    let lines = [
        HEADER.to_owned(),
        user("a1", None, 1, "first question about alpacas"),
        assistant("a2", "a1", 1, "first answer about alpacas"),
    ];
    fs::write(&file, lines.join("\n") + "\n").unwrap();
    // A second, untouched session.
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions/branch-abandoned.jsonl"),
        project.join("other.jsonl"),
    )
    .unwrap();
    Setup { s, sessions, file }
}

fn append(path: &Path, text: &str) {
    let mut f = OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

impl Setup {
    fn build(&self, extra: &[&str]) -> serde_json::Value {
        self.s.build(&[&self.sessions], extra)
    }
    /// Exit code of `search --json WORD`.
    fn search_exit(&self, word: &str) -> Option<i32> {
        let out = run(self
            .s
            .cmd()
            .args(["search", "--json", word, "--index"])
            .arg(self.s.index()));
        out.status.code()
    }
    fn docs(&self) -> Vec<serde_json::Value> {
        self.s.show_json(self.file.to_str().unwrap(), &[])
    }
    fn texts(&self) -> Vec<(u64, String, bool)> {
        self.docs()
            .iter()
            .map(|d| {
                (
                    d["line"].as_u64().unwrap(),
                    d["text"].as_str().unwrap().to_owned(),
                    d["active"].as_bool().unwrap(),
                )
            })
            .collect()
    }
}

#[test]
fn nothing_changed_means_nothing_read() {
    let t = setup();
    t.build(&[]);
    let r = t.build(&[]);
    assert_eq!(r["files_unchanged"], 2);
    assert_eq!(r["files_indexed"], 0);
    assert_eq!(r["bytes_read"], 0);
    assert_eq!(r["messages_indexed"], 0);
    assert_eq!(r["sessions"], 2);
}

#[test]
fn an_appended_message_is_indexed_exactly_once() {
    let t = setup();
    t.build(&[]);
    let before = fs::metadata(&t.file).unwrap().len();
    append(
        &t.file,
        &(user("a3", Some("a2"), 2, "second question about llamas") + "\n"),
    );
    let r = t.build(&[]);
    assert_eq!(r["files_grown"], 1);
    assert_eq!(r["files_unchanged"], 1);
    assert_eq!(r["messages_indexed"], 1);
    assert_eq!(
        r["bytes_read"],
        fs::metadata(&t.file).unwrap().len() - before
    );
    assert_eq!(
        t.texts(),
        vec![
            (2, "first question about alpacas".into(), true),
            (3, "first answer about alpacas".into(), true),
            (4, "second question about llamas".into(), true),
        ]
    );
    // Search sees it, once.
    let out = run(t
        .s
        .cmd()
        .args(["search", "--json", "llamas", "--index"])
        .arg(t.s.index()));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    // The session's summary follows.
    let out = run(t
        .s
        .cmd()
        .args(["sessions", "--json", "--index"])
        .arg(t.s.index()));
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(first["messages"], 3);
    assert_eq!(first["title"], "first question about alpacas");
    assert_eq!(first["last"], "2026-05-01T10:02:00.000Z");
}

#[test]
fn a_half_written_line_is_picked_up_once_complete() {
    let t = setup();
    t.build(&[]);
    let line = user("a3", Some("a2"), 2, "typed slowly");
    let (head, tail) = line.split_at(40);
    append(&t.file, head);
    let r = t.build(&[]);
    assert_eq!(r["messages_indexed"], 0);
    assert_eq!(t.texts().len(), 2);
    append(&t.file, &format!("{tail}\n"));
    let r = t.build(&[]);
    assert_eq!(r["files_grown"], 1);
    assert_eq!(r["messages_indexed"], 1);
    assert_eq!(r["lines_damaged"], 0);
    assert_eq!(t.texts().last().unwrap().1, "typed slowly");
    assert_eq!(t.texts().len(), 3);
}

#[test]
fn a_new_branch_moves_the_old_documents_off_the_active_path() {
    let t = setup();
    append(
        &t.file,
        &(user("a3", Some("a2"), 2, "go left")
            + "\n"
            + &assistant("a4", "a3", 2, "went left")
            + "\n"),
    );
    t.build(&[]);
    assert!(t.texts().iter().all(|d| d.2));
    // /tree back to a2 and continue from there.
    append(
        &t.file,
        &(user("a5", Some("a2"), 3, "go right instead") + "\n"),
    );
    let r = t.build(&[]);
    assert_eq!(r["files_grown"], 1);
    assert_eq!(r["messages_indexed"], 1);
    assert_eq!(
        t.texts(),
        vec![
            (2, "first question about alpacas".into(), true),
            (3, "first answer about alpacas".into(), true),
            (4, "go left".into(), false),
            (5, "went left".into(), false),
            (6, "go right instead".into(), true),
        ]
    );
    // And back again: the left branch is active once more.
    append(
        &t.file,
        &(assistant("a6", "a4", 4, "back on the left") + "\n"),
    );
    t.build(&[]);
    let active: Vec<bool> = t.texts().iter().map(|d| d.2).collect();
    assert_eq!(active, vec![true, true, true, true, false, true]);
}

/// An assistant entry with thinking and text: two documents of one entry.
fn thinking_reply(id: &str, parent: &str, minute: u32, thought: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-05-01T10:{minute:02}:30.000Z","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"{thought}"}},{{"type":"text","text":"{text}"}}],"provider":"anthropic","model":"m","stopReason":"stop","timestamp":0}}}}"#
    )
}

#[test]
fn a_branch_move_reaches_every_document_of_an_entry_as_a_full_build_would() {
    let t = setup();
    append(
        &t.file,
        &(user("b1", Some("a2"), 2, "go left")
            + "\n"
            + &thinking_reply("b2", "b1", 2, "left looks shorter", "went left")
            + "\n"),
    );
    t.build(&["--include", "thinking"]);
    append(
        &t.file,
        &(user("b3", Some("a2"), 3, "go right instead") + "\n"),
    );
    let r = t.build(&["--include", "thinking"]);
    assert_eq!(r["files_grown"], 1);
    let incremental = t.texts();
    assert_eq!(
        incremental,
        vec![
            (2, "first question about alpacas".into(), true),
            (3, "first answer about alpacas".into(), true),
            (4, "go left".into(), false),
            (5, "went left".into(), false),
            (5, "left looks shorter".into(), false),
            (6, "go right instead".into(), true),
        ]
    );
    t.build(&["--include", "thinking", "--full"]);
    assert_eq!(t.texts(), incremental);
}

#[test]
fn an_appended_rename_reaches_every_document() {
    let t = setup();
    t.build(&[]);
    append(
        &t.file,
        "{\"type\":\"session_info\",\"id\":\"n1\",\"parentId\":\"a2\",\"timestamp\":\"2026-05-01T10:05:00.000Z\",\"name\":\"Camelids\"}\n",
    );
    let r = t.build(&[]);
    assert_eq!(r["files_grown"], 1);
    let docs = t.docs();
    assert_eq!(docs.len(), 2);
    assert!(
        docs.iter().all(|d| d["session_name"] == "Camelids"),
        "{docs:?}"
    );
}

#[test]
fn rewritten_and_shrunk_files_are_replaced() {
    let t = setup();
    t.build(&[]);
    // Rewritten in place (same length prefix changed): replaced.
    let lines = [
        HEADER.to_owned(),
        user("b1", None, 1, "a different first question"),
        assistant("b2", "b1", 1, "a different answer"),
        user("b3", Some("b2"), 2, "and more"),
    ];
    fs::write(&t.file, lines.join("\n") + "\n").unwrap();
    let r = t.build(&[]);
    assert_eq!(r["files_replaced"], 1);
    assert_eq!(r["messages_indexed"], 3);
    let texts: Vec<String> = t.texts().into_iter().map(|d| d.1).collect();
    assert_eq!(
        texts,
        [
            "a different first question",
            "a different answer",
            "and more"
        ]
    );
    // Shrunk: replaced.
    fs::write(&t.file, lines[..2].join("\n") + "\n").unwrap();
    let r = t.build(&[]);
    assert_eq!(r["files_replaced"], 1);
    let texts: Vec<String> = t.texts().into_iter().map(|d| d.1).collect();
    assert_eq!(texts, ["a different first question"]);
}

#[test]
fn deleted_files_lose_their_documents() {
    let t = setup();
    t.build(&[]);
    fs::remove_file(&t.file).unwrap();
    let r = t.build(&[]);
    assert_eq!(r["files_deleted"], 1);
    assert_eq!(r["sessions"], 1);
    assert_eq!(t.search_exit("alpacas"), Some(1), "nothing left to find");
}

#[test]
fn a_file_replaced_by_a_decoy_loses_its_documents() {
    let t = setup();
    t.build(&[]);
    fs::write(&t.file, "{\"type\":\"session_meta\",\"payload\":{}}\n").unwrap();
    let r = t.build(&[]);
    assert_eq!(r["files_rejected"], 1);
    assert_eq!(t.search_exit("alpacas"), Some(1), "nothing left to find");
}

#[test]
fn other_kinds_or_another_schema_rebuild_everything_and_say_why() {
    let t = setup();
    t.build(&[]);
    let out = run(t
        .s
        .build_cmd(&[&t.sessions])
        .args(["--include", "thinking"]));
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "rebuilding the whole index: the included kinds changed from none to thinking"
        ),
        "{err}"
    );
    let r = t.build(&["--include", "thinking"]);
    assert_eq!(r["files_unchanged"], 2);

    // An index written by another schema version.
    let meta = t.s.index().join("meta.json");
    let text = fs::read_to_string(&meta).unwrap();
    let older = text.replace(
        &format!("\\\"schema_version\\\":{}", pi_index::index::SCHEMA_VERSION),
        "\\\"schema_version\\\":1",
    );
    assert_ne!(text, older, "payload found in meta.json");
    fs::write(&meta, older).unwrap();
    let r = t.build(&["--include", "thinking"]);
    assert_eq!(
        r["rebuilt"],
        "the index was written by another version of pi-index"
    );
    assert_eq!(r["files_indexed"], 2);
    assert_eq!(t.texts().len(), 2);
}

#[test]
fn files_that_vanish_or_shrink_during_a_build_cost_only_themselves() {
    let t = setup();
    // Vanishes between discovery and reading: reported, the rest indexed.
    let r = t.s.report(
        t.s.build_cmd(&[&t.sessions])
            .env("PI_INDEX_TEST_VANISH", "other.jsonl"),
    );
    assert_eq!(r["files_failed"], 1);
    assert_eq!(r["files_indexed"], 1);
    assert!(r["errors"][0]["path"]
        .as_str()
        .unwrap()
        .ends_with("other.jsonl"));
    assert_eq!(t.texts().len(), 2);

    // Shrinks while mapped (Pi rewriting it): no crash, skipped, reported;
    // the index keeps what it had, and the next build reads the new file.
    append(
        &t.file,
        &(user("a3", Some("a2"), 2, "grown before the rewrite") + "\n"),
    );
    let r = t.s.report(
        t.s.build_cmd(&[&t.sessions])
            .env("PI_INDEX_TEST_SHRINK", t.file.file_name().unwrap()),
    );
    assert_eq!(r["files_failed"], 1, "{r}");
    assert!(
        r["errors"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("shrank"),
        "{r}"
    );
    assert_eq!(t.texts().len(), 2, "the index kept what it had");
    // The file is now empty: the next build sees it as rejected and drops it.
    let r = t.build(&[]);
    assert_eq!(r["files_rejected"], 1);
}

#[test]
fn a_line_of_tens_of_megabytes_is_indexed_whole() {
    let t = setup();
    t.build(&[]);
    let big = "word ".repeat(5_000_000); // 25 MB of text
    append(&t.file, &(user("a3", Some("a2"), 2, &big) + "\n"));
    let r = t.build(&[]);
    assert_eq!(r["messages_indexed"], 1);
    assert_eq!(r["lines_damaged"], 0);
    let texts = t.texts();
    assert_eq!(texts.len(), 3);
    assert_eq!(texts[2].1.len(), big.trim().len());
}
