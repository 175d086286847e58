//! Incremental builds through the real binary: unchanged files are not
//! read, appended lines are indexed once, branch moves and renames reach
//! the old documents, rewritten, shrunk and deleted files are replaced or
//! removed, and a change of kinds or schema rebuilds everything, saying why.

use std::fs;

use crate::util::incremental::{append, assistant, setup, user, HEADER};
use crate::util::run;

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
fn a_line_of_tens_of_megabytes_is_indexed_to_the_cap_and_the_cut_reported() {
    // Indexed whole before one message's text was capped (docs/
    // limitations.md): now its first MiB, and the build says so.
    let t = setup();
    t.build(&[]);
    let big = "word ".repeat(5_000_000); // 25 MB of text
    let line = user("a3", Some("a2"), 2, &big);
    append(&t.file, &(line.clone() + "\n"));
    let r = t.build(&[]);
    assert_eq!(r["messages_indexed"], 1);
    assert_eq!(r["lines_damaged"], 0);
    let texts = t.texts();
    assert_eq!(texts.len(), 3);
    let kept = &big[..pi_index::pi::giant::MAX_DOCUMENT_BYTES].trim_end();
    assert_eq!(texts[2].1, *kept);
    assert_eq!(
        r["messages_truncated"],
        serde_json::json!([{
            "path": t.file.to_str().unwrap(),
            "line": texts[2].0,
            "line_bytes": line.len(),
            "indexed_bytes": kept.len(),
        }])
    );
}

#[test]
fn an_appended_context_edit_marks_old_messages_and_a_branch_move_unmarks_them() {
    let t = setup();
    t.build(&[]);
    let edit = |id: &str, parent: &str, target: &str, replacement: &str| {
        format!(
            r#"{{"type":"context_edit","id":"{id}","parentId":"{parent}","timestamp":"2026-05-01T10:05:00.000Z","targetId":"{target}","replacement":{replacement}}}"#
        )
    };
    let marks =
        |t: &crate::util::incremental::Setup| -> Vec<(u64, serde_json::Value, serde_json::Value)> {
            t.docs()
                .iter()
                .map(|d| {
                    (
                        d["line"].as_u64().unwrap(),
                        d["edited"].clone(),
                        d["replacement"].clone(),
                    )
                })
                .collect()
        };
    // Edits of both old messages, in one append: only the new lines are read.
    append(
        &t.file,
        &format!(
            "{}\n{}\n",
            edit("e1", "a2", "a1", "null"),
            edit("e2", "e1", "a2", r#"{"content":"zqshorter answer"}"#)
        ),
    );
    let r = t.build(&[]);
    assert_eq!(r["files_grown"], 1, "{r}");
    assert_eq!(
        marks(&t),
        vec![
            (2, "omitted".into(), serde_json::Value::Null),
            (3, "replaced".into(), "zqshorter answer".into()),
        ]
    );
    assert_eq!(t.search_exit("zqshorter"), Some(0));
    // A new branch from a2: the edits are abandoned, the marks go.
    append(&t.file, &(user("a3", Some("a2"), 6, "a new branch") + "\n"));
    t.build(&[]);
    assert_eq!(
        marks(&t),
        vec![
            (2, serde_json::Value::Null, serde_json::Value::Null),
            (3, serde_json::Value::Null, serde_json::Value::Null),
            (6, serde_json::Value::Null, serde_json::Value::Null),
        ]
    );
    assert_eq!(t.search_exit("zqshorter"), Some(1));
}

#[test]
fn a_branch_move_reaches_one_of_two_glued_entries_alone() {
    let t = setup();
    // Line 4 holds two entries glued together (a lost newline).
    append(
        &t.file,
        &(user("a3", Some("a2"), 2, "glued question")
            + &assistant("a4", "a3", 2, "glued answer")
            + "\n"),
    );
    let r = t.build(&[]);
    assert_eq!(r["lines_recovered"], 1, "{r}");
    // A new branch from a3: a4 (glued behind it) is abandoned, a3 is not.
    append(
        &t.file,
        &(assistant("a5", "a3", 3, "another answer") + "\n"),
    );
    t.build(&[]);
    let incremental = t.texts();
    assert_eq!(
        incremental,
        vec![
            (2, "first question about alpacas".into(), true),
            (3, "first answer about alpacas".into(), true),
            (4, "glued question".into(), true),
            (4, "glued answer".into(), false),
            (5, "another answer".into(), true),
        ]
    );
    t.build(&["--full"]);
    assert_eq!(t.texts(), incremental, "as a full build reads it");
}

/// Builds that each add a segment larger than the small ones merged
/// before (2,100 messages): the commit merges segments in tiers, so the
/// index keeps a few however many builds there were (merging only small
/// segments kept every one), and what those builds deleted (a grown
/// file's session record) stays deleted in the merged segments: the
/// index holds what a fresh build of the same files holds.
#[test]
fn builds_that_each_add_thousands_of_messages_keep_a_few_segments() {
    let t = setup();
    let project = t.file.parent().unwrap().to_owned();
    let stats = |index: &std::path::Path| -> serde_json::Value {
        let out = run(t.s.cmd().args(["stats", "--json", "--index"]).arg(index));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let first = t.build(&["-j", "1"]);
    assert_eq!(first["segments"], 1);
    for b in 1..=12_u32 {
        let mut lines = vec![format!(
            r#"{{"type":"session","version":3,"id":"tier{b:04}-0000-4000-8000-000000000001","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/home/u/inc"}}"#
        )];
        for i in 0..2_100_u32 {
            let parent = (i > 0).then(|| format!("m{}", i - 1));
            let text = format!("batch{b} message{i} about llamas and tiers");
            lines.push(if i % 2 == 0 {
                user(&format!("m{i}"), parent.as_deref(), i % 60, &text)
            } else {
                assistant(&format!("m{i}"), parent.as_deref().unwrap(), i % 60, &text)
            });
        }
        fs::write(
            project.join(format!("tier{b:04}.jsonl")),
            lines.join("\n") + "\n",
        )
        .unwrap();
        // The first session grows too: its record is replaced.
        append(
            &t.file,
            &(user(
                &format!("g{b}"),
                Some("a2"),
                2,
                &format!("grown{b} question"),
            ) + "\n"),
        );
        let r = t.build(&["-j", "1"]);
        assert_eq!(r["files_grown"], 1);
        assert_eq!(r["messages_indexed"], 2_101);
        // One segment a build, each kept, would be 1 + b.
        let segments = r["segments"].as_u64().unwrap();
        assert!(segments <= 5, "build {b}: {segments} segments");
        // stats counts the same segments.
        assert_eq!(stats(&t.s.index())["segments"], segments);
    }

    let fresh = t.s.dir.path().join("fresh");
    let out = run(t
        .s
        .cmd()
        .args(["build", "--quiet", "--index"])
        .arg(&fresh)
        .arg(&t.sessions));
    assert!(out.status.success());
    let (kept, fresh) = (stats(&t.s.index()), stats(&fresh));
    for key in ["sessions", "messages"] {
        assert_eq!(kept[key], fresh[key], "{key}");
    }
    assert_eq!(kept["sessions"], 14);
    // The last grown message, once.
    let out = run(t
        .s
        .cmd()
        .args(["search", "--json", "grown12", "--index"])
        .arg(t.s.index()));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}
