//! The tests that need fault injection (`--features failpoints`): a build
//! killed at each named point of its work, and files that vanish or shrink
//! between discovery and reading. Release builds carry none of it.

// Benches, examples and tests print as they like; only the product is
// held to printing through pi_index::output (clippy.toml).
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

mod util;

use std::path::PathBuf;
use util::crash::{change, fixture_copy, hits, total_messages};
use util::incremental::{append, setup, user};
use util::{run, Scratch};

#[test]
fn a_build_killed_anywhere_leaves_the_last_commit_and_the_next_build_completes() {
    for point in [
        "before-writer",
        "after-first-file",
        "before-commit",
        "after-prepare-commit",
        "after-commit",
    ] {
        let s = Scratch::new();
        let dir = fixture_copy(&s);
        s.build(&[&dir], &[]);
        let before_total = total_messages(&s);
        let before_notify = hits(&s, "notify");
        change(&dir);

        let out = run(s
            .build_cmd(&[&dir])
            .env("PI_INDEX_CRASH_AT", point)
            .arg("-q"));
        assert!(
            !out.status.success(),
            "{point}: the build should have crashed"
        );
        assert_eq!(out.status.code(), None, "{point}: killed by a signal");

        // The index opens and answers with a committed state.
        let committed = point == "after-commit";
        assert_eq!(hits(&s, "notify"), before_notify, "{point}");
        assert_eq!(
            hits(&s, "zqcrashprobe").len(),
            usize::from(committed),
            "{point}"
        );
        if !committed {
            assert_eq!(total_messages(&s), before_total, "{point}");
        }

        // The next build completes the work: nothing twice, nothing missing.
        s.build(&[&dir], &[]);
        assert_eq!(
            hits(&s, "zqcrashprobe"),
            vec![("branch-abandoned.jsonl".to_owned(), 8)],
            "{point}"
        );
        assert_eq!(hits(&s, "notify"), before_notify, "{point}");
        let fresh = Scratch::new();
        fresh.build(&[&dir], &[]);
        assert_eq!(total_messages(&s), total_messages(&fresh), "{point}");
        for word in ["notify", "polling", "model", "windows", "bom"] {
            assert_eq!(hits(&s, word), hits(&fresh, word), "{point}: {word}");
        }
    }
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
fn a_panic_while_reading_one_file_costs_only_that_file_and_says_what_happened() {
    let s = Scratch::new();
    let dir = fixture_copy(&s);
    let whole = Scratch::new();
    whole.build(&[&fixture_copy(&whole)], &[]);
    assert_eq!(hits(&whole, "notify").len(), 4, "the file has hits to lose");
    let r = s.report(
        s.build_cmd(&[&dir])
            .env("PI_INDEX_TEST_PANIC", "branch-abandoned.jsonl"),
    );
    assert_eq!(r["files_failed"], 1, "{r}");
    assert_eq!(r["files_indexed"], 2, "{r}");
    let reason = r["errors"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("internal error")
            && reason.contains("PI_INDEX_TEST_PANIC at")
            && reason.contains("please report it"),
        "{reason}"
    );
    // Its documents, queued before the panic, were withdrawn; the others
    // are there.
    assert!(hits(&s, "notify").is_empty(), "{:?}", hits(&s, "notify"));
    let clean = Scratch::new();
    let only_others = fixture_copy(&clean);
    std::fs::remove_file(only_others.join("branch-abandoned.jsonl")).unwrap();
    clean.build(&[&only_others], &[]);
    assert_eq!(total_messages(&s), total_messages(&clean));
}

#[test]
fn a_message_over_the_cap_is_indexed_to_the_cap_and_every_cut_is_reported() {
    // The cap made small: 4,096 bytes of text a message.
    const CAP: &str = "4096";
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("capped.jsonl");
    let header = br#"{"type":"session","version":3,"id":"capped-01","timestamp":"2026-04-01T10:00:00.000Z","cwd":"/p"}"#;
    let message = |id: &str, parent: &str, content: &[u8]| -> Vec<u8> {
        let mut l = format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-04-01T10:00:01.000Z","message":{{"role":"user","content":""#
        )
        .into_bytes();
        l.extend_from_slice(content);
        l.extend_from_slice(br#"","timestamp":0}}"#);
        l
    };
    // Line 2: longer than the cap, a giant line.
    let long = format!("zqfirst{} zqlast", " abcdef".repeat(1400));
    let line2 = message("g1", "null", long.as_bytes());
    // Line 3: shorter than the cap, but its 1,500 invalid bytes become
    // 4,500 bytes of U+FFFD: its text passes the cap all the same.
    let mut bad = b"zqbad ".to_vec();
    bad.extend_from_slice(&[0xFF; 1500]);
    bad.extend_from_slice(b" zqbadend");
    let line3 = message("g2", r#""g1""#, &bad);
    assert!(line3.len() < 4096);
    let line4 = message("g3", r#""g2""#, b"zqsmall");
    let mut bytes = Vec::new();
    for l in [&header[..], &line2, &line3, &line4] {
        bytes.extend_from_slice(l);
        bytes.push(b'\n');
    }
    std::fs::write(&file, &bytes).unwrap();

    let out = run(s
        .build_cmd(&[&dir])
        .env("PI_INDEX_TEST_MAX_DOCUMENT", CAP)
        .args(["--json", "-v"]));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let path = file.to_str().unwrap();
    let kept2 = long[..4096].trim_end().len();
    // Whole U+FFFD characters up to the cap.
    let kept3 = 6 + (4096 - 6) / 3 * 3;
    assert_eq!(
        r["messages_truncated"],
        serde_json::json!([
            {"path": path, "line": 2, "line_bytes": line2.len(), "indexed_bytes": kept2},
            {"path": path, "line": 3, "line_bytes": line3.len(), "indexed_bytes": kept3},
        ]),
        "{r}"
    );
    assert_eq!(r["messages_indexed"], 3, "{r}");
    assert_eq!(r["lines_damaged"], 1, "{r}");
    for (line, len, kept) in [(2, line2.len(), kept2), (3, line3.len(), kept3)] {
        let want = format!(
            "truncated {path}:{line}: a line of {:.1} kB, {:.1} kB of its text indexed: the rest cannot be found\n",
            len as f64 / 1e3,
            kept as f64 / 1e3
        );
        assert!(err.contains(&want), "{want}\n{err}");
    }

    // What is indexed is what `show` prints; past the cut, nothing.
    let docs = s.show_json("capped-01", &[]);
    let texts: Vec<&str> = docs.iter().map(|d| d["text"].as_str().unwrap()).collect();
    assert_eq!(texts[0], &long[..kept2]);
    assert_eq!(texts[1].len(), kept3);
    assert_eq!(texts[2], "zqsmall");
    let found = |word: &str| {
        run(s.cmd().args(["search", word, "--index"]).arg(s.index()))
            .status
            .code()
    };
    for word in ["zqfirst", "zqbad", "zqsmall"] {
        assert_eq!(found(word), Some(0), "{word}");
    }
    for word in ["zqlast", "zqbadend"] {
        assert_eq!(found(word), Some(1), "{word}");
    }

    // Without -v, one note says so; a build that reads only what was
    // appended reports nothing again.
    let out = run(s
        .build_cmd(&[&dir])
        .env("PI_INDEX_TEST_MAX_DOCUMENT", CAP)
        .arg("--full"));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err,
        "pi-index: note: 2 lines hold more text than one message indexes: only the first 4.1 kB of each is indexed (-v lists them)\n"
    );
    append(&file, &(user("g4", Some("g3"), 4, "zqappended") + "\n"));
    let r = s.report(s.build_cmd(&[&dir]).env("PI_INDEX_TEST_MAX_DOCUMENT", CAP));
    assert_eq!(r["messages_indexed"], 1, "{r}");
    assert_eq!(r["messages_truncated"], serde_json::json!([]), "{r}");
    assert_eq!(found("zqappended"), Some(0));
}

#[test]
fn a_panic_in_the_picker_restores_the_terminal_on_either_thread() {
    use util::tmux::{prompt, tmux_available, Run, Setup, Tmux};
    if !tmux_available() {
        return;
    }
    for place in ["main", "worker"] {
        let t = Setup::new();
        t.build();
        let run = Run {
            env: vec![("PI_INDEX_TEST_PICK_PANIC", format!("{place}:zqboom"))],
            ..Run::default()
        };
        let tmux = Tmux::start(&t.root(), 100, 30, &t.script("", run));
        tmux.wait_for("the listing", |s| prompt(s).ends_with("3 sessions"));
        tmux.type_text("zqboom");
        assert_eq!(t.status(), 101, "{place}: {}", t.file("stderr"));
        let err = t.file("stderr");
        assert!(
            err.contains(&format!("PI_INDEX_TEST_PICK_PANIC in the picker's {place}")),
            "{place}: {err}"
        );
        t.assert_terminal_restored();
        drop(tmux);
    }
}

/// Waits (with a deadline) until `path` exists: the other process reached
/// its pause point.
fn wait_for(path: &std::path::Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !path.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The race of two builds, in a known order: a message is appended, build
/// A plans (it sees the line as new) and waits before taking the writer,
/// build B indexes the line and commits, then A goes on. Returns A's
/// `--json` report, B's, and the setup. `env` is added to A's.
fn the_race(
    env: &[(&str, &str)],
) -> (
    serde_json::Value,
    serde_json::Value,
    util::incremental::Setup,
) {
    let t = setup();
    t.build(&[]);
    append(
        &t.file,
        &(user("b1", Some("a2"), 2, "second question zqtwice") + "\n"),
    );
    let flag = t.s.dir.path().join("go");
    let mut a = t.s.build_cmd(&[&t.sessions]);
    a.env(
        "PI_INDEX_TEST_PAUSE_AT",
        format!("before-writer:{}", flag.display()),
    )
    .envs(env.iter().copied())
    .arg("--json")
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let a = a.spawn().unwrap();
    wait_for(&t.s.dir.path().join("go.reached"));
    let b = t.build(&[]);
    std::fs::write(&flag, b"").unwrap();
    let out = a.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (serde_json::from_slice(&out.stdout).unwrap(), b, t)
}

#[test]
fn a_build_that_planned_before_another_committed_indexes_nothing_twice() {
    use util::concurrent::{check, documents, fresh_documents};
    let (a, b, t) = the_race(&[]);
    assert_eq!(b["files_grown"], 1, "{b}");
    assert_eq!(b["messages_indexed"], 1, "{b}");
    // Planned again under the lock, against B's commit: nothing left to do.
    assert_eq!(a["messages_indexed"], 0, "{a}");
    assert_eq!(a["files_unchanged"], 2, "{a}");

    assert_eq!(t.s.search_json("zqtwice", &[]).len(), 1);
    let (code, report) = check(&t.s, &[&t.sessions], &[]);
    assert_eq!(
        (code, &report["doubled"]),
        (0, &serde_json::json!(0)),
        "{report}"
    );
    let other = t.sessions.join("--home-u-inc--/other.jsonl");
    let files = [t.file.as_path(), other.as_path()];
    assert_eq!(
        documents(&t.s, &files),
        fresh_documents(&[&t.sessions], &files)
    );
}

#[test]
fn check_finds_doubled_and_missing_documents_and_repair_mends_them() {
    use util::concurrent::{check, documents, fresh_documents};
    // As builds were before they planned again under the lock: A indexes
    // the line B already committed.
    let (_, _, t) = the_race(&[("PI_INDEX_TEST_NO_REPLAN", "1")]);
    assert_eq!(
        t.s.search_json("zqtwice", &[]).len(),
        2,
        "the double is there"
    );

    let (code, report) = check(&t.s, &[&t.sessions], &[]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["doubled"], 1, "{report}");
    assert_eq!(report["missing"], 0, "{report}");
    assert_eq!(report["defects"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(report["defects"][0]["path"], t.file.to_str().unwrap());

    // A second file loses its last document as it is indexed.
    let other = t.sessions.join("--home-u-inc--/other.jsonl");
    append(
        &other,
        &(user("c1", None, 3, "third question zqmissing") + "\n"),
    );
    t.s.report(
        t.s.build_cmd(&[&t.sessions])
            .env("PI_INDEX_TEST_DROP_LAST", "other.jsonl"),
    );
    assert!(t.s.search_json("zqmissing", &[]).is_empty());
    let (code, report) = check(&t.s, &[&t.sessions], &[]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        (&report["doubled"], &report["missing"]),
        (&serde_json::json!(1), &serde_json::json!(1)),
        "{report}"
    );

    let (code, report) = check(&t.s, &[&t.sessions], &["--repair"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["repaired"], 2, "{report}");
    assert_eq!(report["doubled"], 0, "{report}");
    assert_eq!(t.s.search_json("zqtwice", &[]).len(), 1);
    assert_eq!(t.s.search_json("zqmissing", &[]).len(), 1);
    let files = [t.file.as_path(), other.as_path()];
    assert_eq!(
        documents(&t.s, &files),
        fresh_documents(&[&t.sessions], &files)
    );
}

/// A local index of the fixtures pushed once, then changed (a session
/// grown, one rewritten, one deleted, one added, and a fork added to a
/// family: its parent's row changes though its file did not) and built
/// again: what the next push has to send.
fn pushed_then_changed(url: &str) -> (Scratch, PathBuf) {
    let s = Scratch::new();
    let dir = fixture_copy(&s);
    for name in [
        "v1-no-version.jsonl",
        "glued-two-objects.jsonl",
        "entry-context-edit.jsonl",
    ] {
        std::fs::copy(util::fixture(name), dir.join(name)).unwrap();
    }
    let forks = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/forks");
    for name in ["fork-parent.jsonl", "fork-inferred-no-parent-session.jsonl"] {
        std::fs::copy(forks.join(name), dir.join(name)).unwrap();
    }
    s.build(&[&dir], &[]);
    util::pg::push_ok(&s, url, "h");
    // Grown, deleted and added (see `change`), one rewritten, and a fork.
    change(&dir);
    std::fs::copy(
        forks.join("fork-edited-copy.jsonl"),
        dir.join("fork-edited-copy.jsonl"),
    )
    .unwrap();
    let v1 = dir.join("v1-no-version.jsonl");
    let kept: Vec<String> = std::fs::read_to_string(&v1)
        .unwrap()
        .lines()
        .take(2)
        .map(str::to_owned)
        .collect();
    std::fs::write(&v1, kept.join("\n") + "\n").unwrap();
    s.build(&[&dir], &[]);
    (s, dir)
}

#[test]
fn a_push_killed_anywhere_then_pushed_again_holds_exactly_an_uninterrupted_push() {
    let Some(c) = util::pg::Cluster::start() else {
        return;
    };
    for (i, point) in [
        "push-before-removal-commit",
        "push-before-copy",
        "push-mid-copy",
        "push-before-commit",
        "push-after-commit",
    ]
    .iter()
    .enumerate()
    {
        let url = c.create_db(&format!("killed_{i}"));
        let (s, _dir) = pushed_then_changed(&url);
        let out = run(s
            .cmd()
            .args(["push", &url, "--as", "h", "--json", "--index"])
            .arg(s.index())
            .env("PI_INDEX_CRASH_AT", point)
            .env("PI_INDEX_TEST_PUSH_BATCH", "100"));
        assert_eq!(out.status.code(), None, "{point}: killed by a signal");
        let again = util::pg::push_ok(&s, &url, "h");
        assert!(
            again["transactions"].as_u64().unwrap() >= 1,
            "{point}: {again}"
        );
        // The same as one uninterrupted push of the same index.
        util::pg::fresh_like(&c, &s, &format!("fresh_{i}"), "h", &format!("killed_{i}"));
        assert_eq!(
            util::pg::dump(&c, &format!("killed_{i}")),
            util::pg::dump(&c, &format!("fresh_{i}")),
            "{point}"
        );
        // And a push after that has nothing left to do.
        let r = util::pg::push_ok(&s, &url, "h");
        assert_eq!(r["transactions"], 0, "{point}: {r}");
    }
}

#[test]
fn the_server_stopped_mid_push_is_exit_2_with_a_clear_message_and_the_local_index_intact() {
    let Some(c) = util::pg::Cluster::start() else {
        return;
    };
    let url = c.create_db("stopped");
    let s = Scratch::new();
    let dir = fixture_copy(&s);
    s.build(&[&dir], &[]);
    let before = hits(&s, "notify");
    let paused = s.dir.path().join("paused");
    let child = s
        .cmd()
        .args(["push", &url, "--as", "h", "--index"])
        .arg(s.index())
        .env("PI_INDEX_TEST_PUSH_PAUSE", &paused)
        .env("PI_INDEX_TEST_PUSH_BATCH", "2000")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    util::pg::eventually(60, || paused.exists().then_some(()));
    c.stop();
    std::fs::remove_file(&paused).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("pi-index: error: the database at postgres@127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("try again when"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(hits(&s, "notify"), before);
    // Back up: the next push completes it, as one uninterrupted push.
    c.restart();
    util::pg::push_ok(&s, &url, "h");
    util::pg::fresh_like(&c, &s, "fresh", "h", "stopped");
    assert_eq!(util::pg::dump(&c, "stopped"), util::pg::dump(&c, "fresh"));
}

/// Two pushes of one host at once: the second says it waits for the
/// first and then pushes what is left (nothing), never a raw constraint
/// error; the database is as one push leaves it.
#[test]
fn a_second_push_of_the_same_host_waits_for_the_first_and_says_so() {
    use std::io::BufRead;
    let Some(c) = util::pg::Cluster::start() else {
        return;
    };
    let url = c.create_db("twice");
    let s = Scratch::new();
    let dir = fixture_copy(&s);
    s.build(&[&dir], &[]);
    let paused = s.dir.path().join("paused");
    let first = s
        .cmd()
        .args(["push", &url, "--as", "h", "--json", "--index"])
        .arg(s.index())
        .env("PI_INDEX_TEST_PUSH_PAUSE", &paused)
        .env("PI_INDEX_TEST_PUSH_BATCH", "2000")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    util::pg::eventually(60, || paused.exists().then_some(()));
    let mut second = s
        .cmd()
        .args(["push", &url, "--as", "h", "--json", "--index"])
        .arg(s.index())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(second.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert_eq!(
        line,
        "pi-index: another push of h is running: waiting for it to end\n"
    );
    std::fs::remove_file(&paused).unwrap();
    let a = first.wait_with_output().unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let b = second.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(b.status.success(), "{rest}");
    assert_eq!(rest, "");
    let a: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
    assert!(a["sessions_new"].as_u64().unwrap() > 0, "{a}");
    assert_eq!(b["sessions_new"], 0, "{b}");
    assert_eq!(b["sessions_unchanged"], a["sessions_new"], "{b}");
    util::pg::fresh_like(&c, &s, "fresh", "h", "twice");
    assert_eq!(util::pg::dump(&c, "twice"), util::pg::dump(&c, "fresh"));
}

/// A watch whose event queue overflowed (the kernel drops events then,
/// and says so) falls back to checking every file: what was written
/// while its events were lost is found all the same, and the refresh says
/// why it checked everything. The MCP server over stdio, the overflow at
/// the call chosen by the test (`PI_INDEX_TEST_WATCH_OVERFLOW`).
#[test]
fn a_watch_that_overflowed_checks_every_file_and_misses_nothing() {
    use serde_json::{json, Value};
    use util::raw::Raw;
    let t = setup();
    t.build(&[]);
    let flag = t.s.dir.path().join("overflow");
    let args: Vec<String> = vec![
        t.sessions.to_string_lossy().into_owned(),
        "--index".into(),
        t.s.index().to_string_lossy().into_owned(),
    ];
    let mut raw = Raw::start(&t.s, &args, &[("PI_INDEX_TEST_WATCH_OVERFLOW", &flag)]);
    let mut id = 1;
    let mut search = |raw: &mut Raw| -> Value {
        id += 1;
        raw.call(id, "search", json!({"query": "zqlost"}));
        let reply = raw.reply(&json!(id));
        assert_eq!(reply["result"]["isError"], false, "{reply}");
        reply["result"]["structuredContent"].clone()
    };
    let first = search(&mut raw);
    assert_eq!(first["total"], 0);
    assert_eq!(first["index"]["checked"], "full", "{first}");
    // Watched: the append is what the watch saw.
    append(&t.file, &(user("b1", Some("a2"), 2, "zqlost one") + "\n"));
    let watched = search(&mut raw);
    assert_eq!(watched["total"], 1);
    assert_eq!(
        watched["index"],
        json!({"status": "updated", "new_messages": 1, "checked": "watched"})
    );
    // Its events lost: an append, and a session in a new directory.
    append(&t.file, &(user("b2", Some("b1"), 3, "zqlost two") + "\n"));
    let dir = t.sessions.join("--home-u-lost--");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("lost.jsonl"),
        util::session_file("lost0001", "/home/u/lost", &[("user", "zqlost three")]),
    )
    .unwrap();
    std::fs::write(&flag, b"").unwrap();
    let full = search(&mut raw);
    assert!(!flag.exists(), "the overflow was not taken");
    assert_eq!(full["total"], 3, "{full}");
    assert_eq!(
        full["index"],
        json!({"status": "updated", "new_messages": 2, "checked": "full",
               "full_because": "the watch's event queue overflowed"})
    );
    // And watched again after.
    let after = search(&mut raw);
    assert_eq!(
        after["index"],
        json!({"status": "current", "new_messages": 0, "checked": "watched"})
    );
    drop(raw);
    let (code, report) = util::concurrent::check(&t.s, &[&t.sessions], &[]);
    assert_eq!(code, 0, "{report}");
}

/// A watched refresh is a build like any other: planned, then planned
/// again under the writer's lock when another build committed meanwhile.
/// The server's refresh of an append waits before taking the writer, a
/// `pi-index build` indexes the append and commits, then the refresh
/// goes on: it indexes nothing twice.
#[test]
fn a_watched_refresh_that_planned_before_another_build_committed_indexes_nothing_twice() {
    use serde_json::{json, Value};
    use util::raw::Raw;
    let t = setup();
    t.build(&[]);
    let flag = t.s.dir.path().join("go");
    let pause = std::ffi::OsString::from(format!("before-writer:{}", flag.display()));
    let args: Vec<String> = vec![
        t.sessions.to_string_lossy().into_owned(),
        "--index".into(),
        t.s.index().to_string_lossy().into_owned(),
    ];
    let mut raw = Raw::start(
        &t.s,
        &args,
        &[("PI_INDEX_TEST_PAUSE_AT", std::path::Path::new(&pause))],
    );
    let search = |raw: &mut Raw, id: u64| -> Value {
        let reply = raw.reply(&json!(id));
        assert_eq!(reply["result"]["isError"], false, "{reply}");
        reply["result"]["structuredContent"].clone()
    };
    raw.call(2, "search", json!({"query": "zqtwice"}));
    assert_eq!(search(&mut raw, 2)["total"], 0);
    append(
        &t.file,
        &(user("b1", Some("a2"), 2, "second question zqtwice") + "\n"),
    );
    raw.call(3, "search", json!({"query": "zqtwice"}));
    wait_for(&t.s.dir.path().join("go.reached"));
    let b = t.build(&[]);
    assert_eq!(b["messages_indexed"], 1, "{b}");
    std::fs::write(&flag, b"").unwrap();
    let r = search(&mut raw, 3);
    assert_eq!(r["total"], 1, "{r}");
    assert_eq!(
        r["index"],
        json!({"status": "current", "new_messages": 0, "checked": "watched"})
    );
    drop(raw);
    let (code, report) = util::concurrent::check(&t.s, &[&t.sessions], &[]);
    assert_eq!(code, 0, "{report}");
}

/// While the first build of an index runs (it has committed nothing
/// yet), the readers and `check --repair` say a build is writing it, and
/// what to do; never that the index is someone else's (whose advice,
/// `build --full`, would destroy the build in progress).
#[test]
fn readers_during_an_index_s_first_build_say_a_build_is_writing_it() {
    let s = Scratch::new();
    let dir = fixture_copy(&s);
    let flag = s.dir.path().join("go");
    let child = s
        .build_cmd(&[&dir])
        .env(
            "PI_INDEX_TEST_PAUSE_AT",
            format!("after-first-file:{}", flag.display()),
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&s.dir.path().join("go.reached"));
    let said = format!(
        "pi-index: error: a `pi-index build` is writing the index at {}, its first: wait for it to finish (nothing is searchable before it commits)\n",
        s.index().display()
    );
    let dir_arg = dir.to_string_lossy().into_owned();
    for args in [
        &["search", "notify"][..],
        &["sessions"],
        &["stats"],
        &["check", &dir_arg, "--repair"],
    ] {
        let out = run(s.cmd().args(args).arg("--index").arg(s.index()));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), said, "{args:?}");
    }
    std::fs::write(&flag, b"").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!hits(&s, "notify").is_empty());
    // A first build that stopped before its commit is said as such.
    let t = Scratch::new();
    let dir = fixture_copy(&t);
    let out = run(t
        .build_cmd(&[&dir])
        .env("PI_INDEX_CRASH_AT", "after-first-file"));
    assert_eq!(out.status.code(), None);
    let out = run(t.cmd().args(["search", "notify", "--index"]).arg(t.index()));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "pi-index: error: the index at {} was never committed (the build that created it stopped): run `pi-index build`\n",
            t.index().display()
        )
    );
    t.build(&[&dir], &[]);
    assert!(!hits(&t, "notify").is_empty());
}

/// A file system mounted by a test, unmounted when dropped.
struct Mounted(PathBuf);

impl Mounted {
    /// A tmpfs of `size` at `at`, or why not (not root, no
    /// CAP_SYS_ADMIN).
    fn tmpfs(at: &std::path::Path, size: &str) -> Result<Mounted, String> {
        std::fs::create_dir_all(at).unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Mounted(at.to_owned()))
    }

    /// `dir` made read-only where it is (a read-only bind mount over it):
    /// what the build opens there from now on cannot be written.
    fn read_only(dir: &std::path::Path) -> Mounted {
        for args in [&["--bind"][..], &["-o", "remount,bind,ro"][..]] {
            let out = std::process::Command::new("mount")
                .args(args)
                .args(if args[0] == "--bind" {
                    vec![dir, dir]
                } else {
                    vec![dir]
                })
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Mounted(dir.to_owned())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Every byte left on the file system of `dir` taken by a file, removed
/// when dropped.
struct Filled(PathBuf);

impl Filled {
    fn at(dir: &std::path::Path) -> Filled {
        use std::io::Write;
        let path = dir.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        while f.write_all(&block[..1]).is_ok() {}
        Filled(path)
    }
}

impl Drop for Filled {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A build (fresh, incremental, or `check --repair`'s) whose index
/// directory fills up, turns read-only or is removed at each point a
/// build passes: never a panic; exit 2 with the system's words and what
/// to do, and the index as it was (after the commit: the new one); and
/// once the disk is back, the next build completes the work.
#[test]
fn a_full_read_only_or_vanished_index_directory_at_any_phase_is_exit_2_and_the_index_as_it_was() {
    let root = tempfile::tempdir().unwrap();
    let mnt = root.path().join("small-disk");
    let _disk = match Mounted::tmpfs(&mnt, "8m") {
        Ok(m) => m,
        Err(why) => return util::cannot_run(&why),
    };
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Kind {
        Fresh,
        Incremental,
        Repair,
    }
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Fault {
        Full,
        ReadOnly,
        Vanished,
    }
    for kind in [Kind::Fresh, Kind::Incremental, Kind::Repair] {
        for point in [
            "before-writer",
            "after-first-file",
            "before-commit",
            "after-prepare-commit",
            "after-commit",
        ] {
            for fault in [Fault::Full, Fault::ReadOnly, Fault::Vanished] {
                let case = format!("{kind:?} {point} {fault:?}");
                // The sessions stay on the big disk; the index (and HOME)
                // on the small one.
                let s = Scratch {
                    dir: tempfile::tempdir_in(&mnt).unwrap(),
                };
                let big = Scratch::new();
                let dir = fixture_copy(&big);
                let mut before = None;
                match kind {
                    Kind::Fresh => change(&dir),
                    Kind::Incremental => {
                        s.build(&[&dir], &[]);
                        before = Some((hits(&s, "notify"), total_messages(&s)));
                        change(&dir);
                    }
                    Kind::Repair => {
                        change(&dir);
                        // The damage `check --repair` mends: the probe's
                        // document left out.
                        s.report(
                            s.build_cmd(&[&dir])
                                .env("PI_INDEX_TEST_DROP_LAST", "branch-abandoned.jsonl"),
                        );
                        before = Some((hits(&s, "notify"), total_messages(&s)));
                    }
                }
                let flag = big.dir.path().join("go");
                let mut cmd = s.cmd();
                if kind == Kind::Repair {
                    cmd.arg("check").arg(&dir).arg("--repair");
                } else {
                    cmd.arg("build").arg(&dir).arg("-q");
                }
                cmd.arg("--index")
                    .arg(s.index())
                    .env(
                        "PI_INDEX_TEST_PAUSE_AT",
                        format!("{point}:{}", flag.display()),
                    )
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                let child = cmd.spawn().unwrap();
                wait_for(&big.dir.path().join("go.reached"));
                let held: (Option<Filled>, Option<Mounted>) = match fault {
                    Fault::Full => (Some(Filled::at(&mnt)), None),
                    Fault::ReadOnly => (None, Some(Mounted::read_only(&s.index()))),
                    Fault::Vanished => {
                        std::fs::remove_dir_all(s.index()).unwrap();
                        (None, None)
                    }
                };
                std::fs::write(&flag, b"").unwrap();
                let out = child.wait_with_output().unwrap();
                drop(held);
                let err = String::from_utf8_lossy(&out.stderr).into_owned();
                assert!(!err.contains("panicked"), "{case}: {err}");
                let committed = point == "after-commit" && fault != Fault::Vanished;
                if committed {
                    assert_eq!(out.status.code(), Some(0), "{case}: {err}");
                } else {
                    assert_eq!(out.status.code(), Some(2), "{case}: {err}");
                    assert_eq!(err.lines().count(), 1, "{case}: {err}");
                    let said = match fault {
                        Fault::Full => "No space left on device (os error 28): free some space on that disk, or choose another with --index (the index as it was is kept)",
                        Fault::ReadOnly => "Read-only file system (os error 30): the disk is read-only: choose another with --index",
                        Fault::Vanished => "was removed while pi-index used it: run `pi-index build` to create it again",
                    };
                    assert!(err.contains(said), "{case}: {err}");
                }
                // The index as it was: the last commit, whole.
                match (fault, before) {
                    (Fault::Vanished, _) => assert!(!s.index().exists(), "{case}"),
                    (_, _) if committed => {
                        assert_eq!(hits(&s, "zqcrashprobe").len(), 1, "{case}")
                    }
                    (_, Some((notify, total))) => {
                        assert_eq!(hits(&s, "notify"), notify, "{case}");
                        assert_eq!(total_messages(&s), total, "{case}");
                        assert!(hits(&s, "zqcrashprobe").is_empty(), "{case}");
                    }
                    (_, None) => {
                        let out = run(s.cmd().args(["search", "notify", "--index"]).arg(s.index()));
                        assert_eq!(out.status.code(), Some(2), "{case}");
                        assert!(
                            String::from_utf8_lossy(&out.stderr).contains("was never committed"),
                            "{case}: {}",
                            String::from_utf8_lossy(&out.stderr)
                        );
                    }
                }
                // The disk back: the next build (or repair) completes the
                // work.
                if kind == Kind::Repair && !matches!(fault, Fault::Vanished) {
                    let out = run(s
                        .cmd()
                        .arg("check")
                        .arg(&dir)
                        .arg("--repair")
                        .arg("--index")
                        .arg(s.index()));
                    assert_eq!(
                        out.status.code(),
                        Some(0),
                        "{case}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                } else {
                    s.build(&[&dir], &[]);
                }
                assert_eq!(
                    hits(&s, "zqcrashprobe"),
                    vec![("branch-abandoned.jsonl".to_owned(), 8)],
                    "{case}"
                );
                let fresh = Scratch::new();
                fresh.build(&[&dir], &[]);
                assert_eq!(total_messages(&s), total_messages(&fresh), "{case}");
            }
        }
    }
}

/// An incremental build whose commit's merge runs out of disk space (the
/// fourth small segment): the build still succeeds with everything it
/// committed, its segments left unmerged and its deletes (the grown
/// session's old record) kept, and the next build with room merges them.
#[test]
fn a_merge_out_of_disk_space_after_the_commit_loses_nothing() {
    let t = setup();
    // Each message follows the one before: no branch moves an older one.
    let grow = |n: u32| {
        let parent = if n == 1 {
            "a2".to_owned()
        } else {
            format!("z{}", n - 1)
        };
        append(
            &t.file,
            &(user(
                &format!("z{n}"),
                Some(&parent),
                3,
                &format!("zqmerge{n} question"),
            ) + "\n"),
        )
    };
    let sessions = || {
        let out = run(t
            .s
            .cmd()
            .args(["stats", "--json", "--index"])
            .arg(t.s.index()));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["sessions"].clone()
    };
    assert_eq!(t.build(&["-j", "1"])["segments"], 1);
    for n in 1..=2 {
        grow(n);
        assert_eq!(t.build(&["-j", "1"])["segments"], n + 1);
    }
    grow(3);
    let r = t.s.report(
        t.s.build_cmd(&[&t.sessions])
            .args(["-j", "1"])
            .env("PI_INDEX_TEST_MERGE_ENOSPC", "1"),
    );
    assert_eq!(r["messages_indexed"], 1);
    assert_eq!(r["segments"], 4, "the merge failed: every segment kept");
    for n in 1..=3 {
        assert_eq!(hits(&t.s, &format!("zqmerge{n}")).len(), 1, "zqmerge{n}");
    }
    assert_eq!(sessions(), 2);
    // With room again, the next commit merges the lowest tier.
    grow(4);
    assert_eq!(t.build(&["-j", "1"])["segments"], 1);
    for n in 1..=4 {
        assert_eq!(hits(&t.s, &format!("zqmerge{n}")).len(), 1, "zqmerge{n}");
    }
    assert_eq!(sessions(), 2);
    let out = run(t
        .s
        .cmd()
        .args(["check", "--index"])
        .arg(t.s.index())
        .arg(&t.sessions));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
