//! Hostile input, through the real binary: arguments nobody checked,
//! session files whose text, directory, name and id hold terminal escape
//! sequences, index directories in every broken state, closed pipes, dumb
//! terminals, special files, and one message of tens of megabytes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{
    as_nobody, cannot_run, closed_pipe, on_terminal, run, run_measured, run_timeout, Scratch,
};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/search")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `pi-index <cmd> --index <index> <args>` for this scratch.
fn pi(s: &Scratch, args: &[&str]) -> Output {
    run(s
        .cmd()
        .arg(args[0])
        .arg("--index")
        .arg(s.index())
        .args(&args[1..]))
}

/// `search --json` hits: (session id prefix, line).
fn json_hits(out: &Output) -> Vec<(String, u64)> {
    text(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            (
                v["session_id"].as_str().unwrap()[..8].to_owned(),
                v["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------
// Counts and offsets
// ---------------------------------------------------------------------

#[test]
fn counts_and_offsets_past_any_index_are_clamped_never_a_crash() {
    let s = Scratch::new();
    s.build(&[&corpus()], &[]);
    let all = pi(&s, &["search", "tokio", "--json", "-n", "100"]);
    assert_eq!(all.status.code(), Some(0));
    let expected = json_hits(&all);
    assert_eq!(expected.len(), 4);

    // More hits than the index holds: every hit, nothing allocated for
    // the rest.
    for n in ["4000000000", "18446744073709551615"] {
        let out = pi(&s, &["search", "tokio", "--json", "-n", n]);
        assert_eq!(out.status.code(), Some(0), "-n {n}: {}", text(&out.stderr));
        assert_eq!(json_hits(&out), expected, "-n {n}");
    }
    // Past the last hit: nothing, exit 1, and a word saying why.
    for offset in ["1000", "20"] {
        for n in ["20", "18446744073709551615"] {
            let out = pi(&s, &["search", "tokio", "--offset", offset, "-n", n]);
            assert_eq!(
                out.status.code(),
                Some(1),
                "--offset {offset} -n {n}: {}",
                text(&out.stderr)
            );
            assert_eq!(text(&out.stdout), "");
            let err = text(&out.stderr);
            assert!(
                err.contains(&format!("--offset {offset} is past the last hit")),
                "{err}"
            );
        }
    }
    // Deeper than any front end pages (the limit they share): refused
    // before anything is read, with what to do.
    for offset in ["1001", "4294967296", "18446744073709551615"] {
        let out = pi(&s, &["search", "tokio", "--offset", offset]);
        assert_eq!(out.status.code(), Some(2), "--offset {offset}");
        assert_eq!(text(&out.stdout), "");
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!(
                "offset {offset} is more than 1000, the deepest a search pages: narrow the query instead"
            )),
            "{err}"
        );
    }

    // show: more context than the session has is the whole session.
    let a = "aaaa0001-0000-4000-8000-000000000001";
    let whole = s.show_json(a, &[]);
    for context in ["18446744073709551615", "4294967296"] {
        for around in ["0", "4"] {
            let docs = s.show_json(a, &["--around", around, "--context", context]);
            assert_eq!(docs, whole, "--around {around} --context {context}");
        }
        // A line past the session's end is said, not answered with its
        // last messages (as the MCP `show` says it).
        let out = pi(
            &s,
            &[
                "show",
                a,
                "--around",
                "18446744073709551615",
                "--context",
                context,
            ],
        );
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            text(&out.stderr),
            "pi-index: error: line 18446744073709551615 is past the session's last message (line 7): give a line up to 7\n"
        );
    }
}

#[test]
fn build_refuses_thread_counts_and_budgets_it_cannot_honour() {
    let s = Scratch::new();
    for (flag, value) in [
        ("--threads", "65535"),
        ("--threads", "1000"),
        ("--memory", "18446744073709551615"),
        ("--memory", "17592186044416"),
        ("--memory", "100000000"),
        ("--memory", "3801"),
        ("--memory", "15"),
    ] {
        let out = run_timeout(s.build_cmd(&[&corpus()]).args([flag, value, "-q"]), 60);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let err = text(&out.stderr);
        assert!(
            err.contains(flag) && err.contains(value) && err.contains("not in"),
            "{flag} {value}: {err}"
        );
        assert!(!s.index().join("meta.json").exists(), "{flag} {value}");
    }
    // The largest accepted values work (a budget per thread, only as many
    // threads as cores holding one).
    let r = s.build(&[&corpus()], &["--threads", "64", "--memory", "3800"]);
    assert_eq!(r["sessions"], 3);
    // Segment writers (what `--memory` is each of): one per core, not per
    // thread.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(r["timings"]["writers"], cores.min(64), "{r}");
    let r = s.build(&[&corpus()], &["--full", "--threads", "1"]);
    assert_eq!(r["timings"]["writers"], 1, "{r}");
}

// ---------------------------------------------------------------------
// Terminal escapes from session files
// ---------------------------------------------------------------------

/// What a hostile session carries in every field: a title change (OSC 0),
/// a clipboard write (OSC 52), a screen clear (CSI), the same through C1
/// controls (CSI, OSC and ST as single characters), a bell, a backspace
/// and DEL.
fn payload(tag: &str) -> String {
    format!(
        "{tag} \x1b]0;pwned-title\x07 \x1b]52;c;cHduZWQ=\x07 \x1b[2J\x1b[H \u{9b}2J \u{9d}0;c1-title\u{9c} bell\x07 back\x08 del\x7f end"
    )
}

const HOSTILE_ID: &str = "evil\x1b]0;id-title\x07\u{9b}2J-0001";

/// A session whose text, cwd, name, model, id and file path hold escapes;
/// beside it a decoy whose name holds one, and a damaged line, so that
/// `build -v` names both. Returns the directory and the session file.
fn hostile_sessions(root: &Path) -> (PathBuf, PathBuf) {
    let dir = root.join("sessions\x1b]0;dir-title\x07");
    fs::create_dir_all(&dir).unwrap();
    let line = |v: serde_json::Value| v.to_string() + "\n";
    let mut s = line(serde_json::json!({
        "type": "session", "version": 3, "id": HOSTILE_ID,
        "timestamp": "2026-04-01T10:00:00.000Z", "cwd": payload("/home/cwd"),
    }));
    s += &line(serde_json::json!({
        "type": "session_info", "id": "e0", "parentId": null,
        "timestamp": "2026-04-01T10:00:00.500Z", "name": payload("name"),
    }));
    s += &line(serde_json::json!({
        "type": "message", "id": "e1", "parentId": "e0",
        "timestamp": "2026-04-01T10:00:01.000Z",
        "message": {"role": "user", "content": payload("zqhostile question\nsecond line"), "timestamp": 0},
    }));
    s += "{\"type\":\"message\",\"id\":\"broken\n";
    s += &line(serde_json::json!({
        "type": "message", "id": "e2", "parentId": "e1",
        "timestamp": "2026-04-01T10:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": payload("zqhostile answer")}],
            "provider": "evil\x1b]0;provider\x07", "model": "m\u{9b}2J", "timestamp": 0},
    }));
    let file = dir.join("session\x1b[2J.jsonl");
    fs::write(&file, s).unwrap();
    fs::write(
        dir.join("decoy\x1b]0;decoy-title\x07.jsonl"),
        "{\"type\":\"session_meta\"}\n",
    )
    .unwrap();
    (dir, file)
}

/// Fail when `bytes` holds an escape or C1 control, or any other control
/// character a terminal acts on (all but newline, tab and the carriage
/// return a terminal's own line discipline adds).
fn assert_inert(what: &str, bytes: &[u8]) {
    let s = String::from_utf8_lossy(bytes);
    for (i, c) in s.char_indices() {
        let bad =
            (c.is_control() && !matches!(c, '\n' | '\t')) || ('\u{80}'..='\u{9f}').contains(&c);
        assert!(
            !bad,
            "{what}: control character {:?} at byte {i}: {:?}",
            c,
            &s[i.saturating_sub(40)..(i + 40).min(s.len())]
        );
    }
}

/// Our own colours, and nothing else, removed: what is left must be inert.
fn strip_our_colours(bytes: &[u8]) -> Vec<u8> {
    let s = String::from_utf8_lossy(bytes).into_owned();
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(i) = rest.find("\x1b[") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(after.len());
        if after[end..].starts_with('m') {
            rest = &after[end + 1..];
        } else {
            out.push_str("\x1b[");
            rest = after;
        }
    }
    out.push_str(rest);
    out.into_bytes()
}

#[test]
fn escapes_in_session_files_never_reach_the_terminal() {
    let s = Scratch::new();
    let (dir, file) = hostile_sessions(s.dir.path());
    let check = |what: &str, out: &Output, code: i32| {
        assert_eq!(
            out.status.code(),
            Some(code),
            "{what}: {}",
            text(&out.stderr)
        );
        assert_inert(&format!("{what} (stdout)"), &out.stdout);
        assert_inert(&format!("{what} (stderr)"), &out.stderr);
    };
    check("build", &run(&mut s.build_cmd(&[&dir])), 0);
    check(
        "build -v",
        &run(s.build_cmd(&[&dir]).args(["--full", "-v"])),
        0,
    );
    let out = run(s.build_cmd(&[&dir]).args(["--full", "--json", "-v"]));
    check("build --json", &out, 0);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["rejected"][0]["path"]
        .as_str()
        .unwrap()
        .ends_with("decoy\x1b]0;decoy-title\x07.jsonl"));

    let id = HOSTILE_ID;
    let path = file.to_str().unwrap();
    let wrong = format!("{id}-nothing");
    let human: Vec<(&str, Vec<&str>, i32)> = vec![
        ("search", vec!["search", "zqhostile"], 0),
        (
            "search --role",
            vec!["search", "zqhostile", "--role", "user"],
            0,
        ),
        ("show", vec!["show", id], 0),
        ("show --branch all", vec!["show", id, "--branch", "all"], 0),
        ("show --around", vec!["show", id, "--around", "3"], 0),
        (
            "show --format transcript",
            vec!["show", id, "--format", "transcript"],
            0,
        ),
        ("show PATH", vec!["show", path], 0),
        ("show (not found)", vec!["show", &wrong], 2),
        ("sessions", vec!["sessions"], 0),
        ("stats", vec!["stats"], 0),
        ("search (bad filter)", vec!["search", "x", "--role", id], 2),
        (
            "search (bad flag value)",
            vec!["search", "x", "--sort", id],
            2,
        ),
    ];
    for (what, args, code) in &human {
        let out = pi(&s, args);
        check(what, &out, *code);
    }
    // The text is still there, made harmless.
    let out = pi(&s, &["show", id]);
    let shown = text(&out.stdout);
    assert!(shown.contains("zqhostile question"), "{shown}");
    assert!(
        shown.contains("pwned-title") || shown.contains("end"),
        "{shown}"
    );
    // With colour on, our colours are the only escapes.
    for (what, args) in [
        (
            "search --color always",
            &["search", "zqhostile", "--color", "always"][..],
        ),
        (
            "sessions --color always",
            &["sessions", "--color", "always"],
        ),
    ] {
        let out = pi(&s, args);
        assert_eq!(out.status.code(), Some(0), "{what}");
        assert!(out.stdout.contains(&0x1b), "{what}: coloured");
        assert_inert(what, &strip_our_colours(&out.stdout));
    }

    // JSON escapes them as JSON does, and they read back exactly.
    let json: Vec<(&str, Vec<&str>)> = vec![
        ("search --json", vec!["search", "zqhostile", "--json"]),
        ("show --format json", vec!["show", id, "--format", "json"]),
        ("sessions --json", vec!["sessions", "--json"]),
        ("stats --json", vec!["stats", "--json"]),
    ];
    for (what, args) in &json {
        let out = pi(&s, args);
        check(what, &out, 0);
        for line in text(&out.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(got) = v.get("session_id") {
                assert_eq!(got, id, "{what}");
                assert_eq!(v["cwd"], payload("/home/cwd"), "{what}");
                assert_eq!(v["session_name"], payload("name"), "{what}");
            }
            if v.get("role").is_some_and(|r| r == "assistant") {
                assert_eq!(v["text"], payload("zqhostile answer"), "{what}");
                assert_eq!(v["model"], "evil\x1b]0;provider\x07/m\u{9b}2J", "{what}");
            }
        }
    }
}

/// Every file name in the index directory.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The disk fills up during a build, then during a full rebuild: each says
/// so, the old index keeps answering, and the failed build leaves no file
/// behind. `fill` makes the next writes fail; `unfill` undoes it.
fn disk_full_case(s: &Scratch, sessions: &Path, fill: &dyn Fn(&mut Command), unfill: &dyn Fn()) {
    s.build(&[sessions], &[]);
    let before = json_hits(&pi(s, &["search", "tokio", "--json"]));
    assert_eq!(before.len(), 4);
    let files = listing(&s.index());
    fs::copy(
        crate::util::fixture("branch-abandoned.jsonl"),
        sessions.join("new.jsonl"),
    )
    .unwrap();
    for extra in [&[][..], &["--full"]] {
        let mut cmd = s.build_cmd(&[sessions]);
        cmd.args(extra);
        fill(&mut cmd);
        let out = run(&mut cmd);
        let what = format!("build {extra:?}");
        assert_eq!(out.status.code(), Some(2), "{what}");
        let err = text(&out.stderr);
        assert!(
            err.to_lowercase().contains("no space left on device"),
            "{what}: {err}"
        );
        assert!(err.contains("free some space"), "{what}: {err}");
        assert!(
            !err.contains("killed") && !err.contains("--full"),
            "{what}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert_eq!(listing(&s.index()), files, "{what}: files left behind");
        let out = pi(s, &["search", "tokio", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out.stderr));
        assert_eq!(json_hits(&out), before, "{what}: the old index answers");
    }
    unfill();
    let r = s.build(&[sessions], &[]);
    assert_eq!(r["files_indexed"], 1, "{r}");
    let out = pi(s, &["search", "notify", "--json"]);
    assert_eq!(out.status.code(), Some(0));
}

fn copy_corpus(to: &Path) {
    for sub in [
        "--home-u-alpha--",
        "--home-u-alpha-sub--",
        "--home-u-beta--",
    ] {
        fs::create_dir_all(to.join(sub)).unwrap();
        for e in fs::read_dir(corpus().join(sub)).unwrap() {
            let e = e.unwrap();
            fs::copy(e.path(), to.join(sub).join(e.file_name())).unwrap();
        }
    }
}

/// Fault injection (`--features failpoints`): writes to the index fail
/// with ENOSPC once a build has written `PI_INDEX_TEST_ENOSPC_AFTER` bytes.
#[test]
fn a_full_disk_is_named_and_costs_nothing_injected() {
    if !cfg!(feature = "failpoints") {
        return cannot_run("needs `--features failpoints` (the README's test command)");
    }
    // Points inside what the incremental build of one small file writes
    // (~12 KB since the parsing threads write the segments themselves):
    // at once, early, late.
    for after in ["0", "3000", "10000"] {
        let s = Scratch::new();
        let sessions = s.dir.path().join("sessions");
        copy_corpus(&sessions);
        disk_full_case(
            &s,
            &sessions,
            &|cmd| {
                cmd.env("PI_INDEX_TEST_ENOSPC_AFTER", after);
            },
            &|| {},
        );
    }
}

/// The same on a real full disk: a small tmpfs, when the tests run as root
/// and may mount one.
#[test]
fn a_full_disk_is_named_and_costs_nothing_tmpfs() {
    let s = Scratch::new();
    let mnt = s.dir.path().join("small-disk");
    fs::create_dir_all(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(&mnt)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        return cannot_run("cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN)");
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    let sessions = s.dir.path().join("sessions");
    copy_corpus(&sessions);
    // The index on the small disk.
    let s2 = Scratch {
        dir: tempfile::tempdir_in(&mnt).unwrap(),
    };
    let filler = mnt.join("filler");
    disk_full_case(
        &s2,
        &sessions,
        &|_| {
            // Fill what is left, to the last byte.
            use std::io::Write;
            let mut f = fs::File::create(&filler).unwrap();
            let block = vec![0u8; 4096];
            while f.write_all(&block).is_ok() {}
            while f.write_all(&block[..1]).is_ok() {}
        },
        &|| fs::remove_file(&filler).unwrap(),
    );
}

/// A file name holding a newline (or any control character) cannot
/// forge a line of output: every path printed for a person shows it
/// escaped, and the resume command quotes it for the shell.
#[test]
fn a_newline_in_a_file_name_is_escaped_wherever_a_path_is_printed() {
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    crate::util::copy_dir(&corpus(), &dir);
    let file = dir.join(
        "--home-u-alpha--/2026-01-10T09-00-00-000Z_aaaa0001-0000-4000-8000-000000000001.jsonl",
    );
    let evil = dir.join("--home-u-alpha--/evil\npi-index: forged line\x1b[2J.jsonl");
    fs::rename(&file, &evil).unwrap();
    let built = run(s
        .cmd()
        .arg("build")
        .arg(&dir)
        .arg("-v")
        .arg("--index")
        .arg(s.index()));
    assert_eq!(built.status.code(), Some(0), "{}", text(&built.stderr));
    let shown = format!(
        "{}/--home-u-alpha--/evil\\npi-index: forged line\\u{{1b}}[2J.jsonl",
        dir.display()
    );
    for args in [
        &["search", "tokio"][..],
        &["show", "aaaa0001-0000-4000-8000-000000000001"],
        &["sessions"],
    ] {
        let out = pi(&s, args);
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(
            !all.lines().any(|l| l.starts_with("pi-index: forged line")),
            "{args:?}: {all}"
        );
        assert!(!all.contains('\x1b'), "{args:?}");
        if args[0] != "sessions" {
            assert!(all.contains(&shown), "{args:?}: {all}");
        }
    }
    let out = pi(&s, &["search", "tokio"]);
    assert!(
        text(&out.stdout).contains("resume: pi --session $'"),
        "{}",
        text(&out.stdout)
    );
}

/// A fresh build much larger than its disk, on every thread: the writes
/// fail while documents are being added to segments (not only at the
/// commit). One error line, exit 2, no panic, and no index committed; the
/// build on a disk with room afterwards is whole.
#[test]
fn a_fresh_build_larger_than_its_disk_is_one_error_and_no_panic() {
    let s = Scratch::new();
    let corpus = s.dir.path().join("corpus");
    let gen = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen-corpus.py"))
        .arg("--out")
        .arg(&corpus)
        .args(["--size", "12MB", "--seed", "5"])
        .output()
        .unwrap();
    assert!(gen.status.success(), "{}", text(&gen.stderr));
    let mnt = s.dir.path().join("small-disk");
    fs::create_dir_all(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&mnt)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        return cannot_run("cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN)");
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let unmount = Unmount(mnt.clone());
    let index = mnt.join("index");
    for threads in ["1", "4"] {
        let out = run(s
            .cmd()
            .arg("build")
            .arg(&corpus)
            .args(["-j", threads, "--index"])
            .arg(&index));
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "-j {threads}: {err}");
        assert!(!err.contains("panicked"), "-j {threads}: {err}");
        assert_eq!(err.lines().count(), 1, "-j {threads}: {err}");
        assert!(
            err.contains("No space left on device (os error 28): free some space on that disk"),
            "-j {threads}: {err}"
        );
        let search = run(s.cmd().args(["search", "tokio", "--index"]).arg(&index));
        assert_eq!(search.status.code(), Some(2), "-j {threads}");
        assert!(
            text(&search.stderr).contains("was never committed"),
            "{}",
            text(&search.stderr)
        );
    }
    // Room again: the build is whole.
    let elsewhere = Scratch::new();
    let whole = elsewhere.build(&[&corpus], &[]);
    drop(unmount);
    let r = s.build(&[&corpus], &[]);
    assert_eq!(r["messages_indexed"], whole["messages_indexed"], "{r}");
}

// ---------------------------------------------------------------------
// Pipes and terminals
// ---------------------------------------------------------------------

#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let s = Scratch::new();
    s.build(&[&corpus()], &[]);
    let a = "aaaa0001-0000-4000-8000-000000000001";
    for args in [
        &["search", "tokio", "--json"][..],
        &["search", "tokio"],
        &["sessions", "--json"],
        &["sessions"],
        &["show", a, "--format", "json"],
        &["show", a],
        &["show", a, "--format", "transcript"],
        &["stats", "--json"],
        &["stats"],
        &["completions", "bash"],
    ] {
        let out = run(s
            .cmd()
            .arg(args[0])
            .arg("--index")
            .arg(s.index())
            .args(&args[1..])
            .stdout(closed_pipe()));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), "", "{args:?}");
    }
    for extra in [&["--json"][..], &[]] {
        let out = run(s
            .build_cmd(&[&corpus()])
            .arg("--full")
            .args(extra)
            .stdout(closed_pipe()));
        assert_eq!(
            out.status.code(),
            Some(0),
            "build {extra:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), "", "build {extra:?}");
    }
}

#[test]
fn a_dumb_terminal_gets_no_colour() {
    let s = Scratch::new();
    s.build(&[&corpus()], &[]);
    let at_terminal = |term: &str, args: &[&str]| {
        let mut cmd = s.cmd();
        cmd.env_remove("NO_COLOR")
            .env("TERM", term)
            .arg(args[0])
            .arg("--index")
            .arg(s.index())
            .args(&args[1..]);
        let (status, out) = on_terminal(cmd);
        assert!(status.success(), "{args:?}: {}", text(&out));
        out
    };
    for args in [&["search", "tokio"][..], &["sessions"]] {
        // A terminal that can: colour (the test sees a real terminal).
        assert!(
            at_terminal("xterm-256color", args).contains(&0x1b),
            "{args:?}"
        );
        let dumb = at_terminal("dumb", args);
        assert!(!dumb.contains(&0x1b), "{args:?}: {}", text(&dumb));
        assert!(text(&dumb).contains("tokio") || args[0] == "sessions");
    }
}

/// Every `pi-index show …` and `pi --session …` line of human search
/// output, as printed.
fn suggested_commands(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("resume: ")
                .or_else(|| l.starts_with("pi-index show ").then_some(l))
                .map(str::to_owned)
        })
        .collect()
}

#[test]
fn suggested_commands_paste_and_run() {
    let s = Scratch::new();
    let dir = s.dir.path().join("my sessions/it's here");
    fs::create_dir_all(&dir).unwrap();
    let session = |id: &str, word: &str| {
        format!(
            concat!(
                r#"{{"type":"session","version":3,"id":{id},"timestamp":"2026-04-01T10:00:00.000Z","cwd":"/p"}}"#,
                "\n",
                r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-04-01T10:00:01.000Z","message":{{"role":"user","content":"zqpaste {word}","timestamp":0}}}}"#,
                "\n"
            ),
            id = serde_json::to_string(id).unwrap(),
            word = word
        )
    };
    let ids = [
        ("-dash id's $HOME `x`", "one"),
        ("--help", "two"),
        ("plain-0001", "three"),
        (HOSTILE_ID, "four"),
    ];
    for (i, (id, word)) in ids.iter().enumerate() {
        fs::write(dir.join(format!("s {i} 'q'.jsonl")), session(id, word)).unwrap();
    }
    s.build(&[&dir], &[]);
    let out = pi(&s, &["search", "zqpaste"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    let commands = suggested_commands(&printed);
    assert_eq!(commands.len(), 8, "{printed}");
    let bin = env!("CARGO_BIN_EXE_pi-index");
    for c in &commands {
        // Pasted into bash as printed, with `pi-index` and `pi` standing
        // for the real binary and for Pi (which prints what it was given).
        let script = format!(
            "pi-index() {{ \"$PI_INDEX_BIN\" \"$@\"; }}\npi() {{ printf '%s\\0' \"$@\"; }}\n{c}\n"
        );
        let out = run(Command::new("bash")
            .arg("-c")
            .arg(script)
            .env("PI_INDEX_BIN", bin)
            .env("HOME", s.home())
            .env_remove("PI_INDEX_DIR")
            .env("NO_COLOR", "1"));
        assert_eq!(out.status.code(), Some(0), "{c}: {}", text(&out.stderr));
        let got = text(&out.stdout);
        if c.starts_with("pi --session ") {
            let args: Vec<&str> = got.split('\0').collect();
            assert_eq!(args[0], "--session", "{c}");
            assert!(Path::new(args[1]).is_file(), "{c}: {:?}", args[1]);
        } else {
            assert!(got.contains("zqpaste"), "{c}: {got}");
        }
    }
    // Each show command shows its own session.
    let shows: Vec<&String> = commands
        .iter()
        .filter(|c| c.starts_with("pi-index"))
        .collect();
    let mut words: Vec<String> = Vec::new();
    for c in shows {
        let c = c.replacen("pi-index show ", "pi-index show --format json ", 1);
        let script = format!("pi-index() {{ \"$PI_INDEX_BIN\" \"$@\"; }}\n{c}\n");
        let out = run(Command::new("bash")
            .arg("-c")
            .arg(script)
            .env("PI_INDEX_BIN", bin)
            .env("HOME", s.home())
            .env_remove("PI_INDEX_DIR"));
        assert_eq!(out.status.code(), Some(0), "{c}: {}", text(&out.stderr));
        let v: serde_json::Value =
            serde_json::from_str(text(&out.stdout).lines().next().unwrap()).unwrap();
        let id = v["session_id"].as_str().unwrap();
        let (_, word) = ids.iter().find(|(i, _)| *i == id).unwrap();
        assert_eq!(v["text"], format!("zqpaste {word}"), "{c}");
        words.push(word.to_string());
    }
    words.sort();
    assert_eq!(words, ["four", "one", "three", "two"]);
}

#[test]
fn special_files_and_empty_directories_named_as_paths_are_reported() {
    let s = Scratch::new();
    let fifo = s.dir.path().join("a-fifo.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a plain libc call on a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let empty = s.dir.path().join("no-sessions-here");
    fs::create_dir_all(&empty).unwrap();
    fs::write(empty.join("notes.txt"), b"not a session").unwrap();
    for (path, why) in [
        (fifo.as_path(), "named pipe"),
        (Path::new("/dev/zero"), "device"),
        (empty.as_path(), "no *.jsonl"),
    ] {
        let out = run_timeout(s.build_cmd(&[path]).arg("--json"), 30);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{path:?}: {}",
            text(&out.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["files_scanned"], 0, "{path:?}");
        let skipped = r["skipped"].as_array().expect("a `skipped` list");
        assert_eq!(skipped.len(), 1, "{r}");
        assert_eq!(skipped[0]["path"], path.to_str().unwrap(), "{r}");
        assert!(skipped[0]["reason"].as_str().unwrap().contains(why), "{r}");
        let out = run_timeout(&mut s.build_cmd(&[path]), 30);
        assert_eq!(out.status.code(), Some(0));
        let err = text(&out.stderr);
        assert!(
            err.contains(path.to_str().unwrap()) && err.contains(why),
            "{path:?}: {err}"
        );
    }
}

#[test]
fn show_takes_a_path_that_is_not_utf8_that_build_took() {
    use std::os::unix::ffi::OsStrExt;
    let s = Scratch::new();
    let dir = s
        .dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9-sessions"));
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join(std::ffi::OsStr::from_bytes(b"s\xff.jsonl"));
    fs::copy(crate::util::fixture("branch-abandoned.jsonl"), &file).unwrap();
    let r = s.build(&[&file], &[]);
    assert_eq!(r["files_indexed"], 1, "{r}");
    let out = run(s
        .cmd()
        .arg("show")
        .arg(&file)
        .args(["--format", "json", "--index"])
        .arg(s.index()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 4);
}

/// The index files whose names end with `ext`.
fn index_files(s: &Scratch, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(s.index())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    v.sort();
    v
}

#[test]
fn build_full_recreates_an_index_whatever_state_its_files_are_in() {
    let reference = Scratch::new();
    reference.build(&[&corpus()], &[]);
    let expected = json_hits(&pi(&reference, &["search", "tokio", "--json"]));
    assert_eq!(expected.len(), 4);
    for ext in [
        ".fieldnorm",
        ".store",
        ".idx",
        ".term",
        ".pos",
        ".fast",
        "meta.json",
        ".managed.json",
    ] {
        for how in ["truncated", "missing", "garbage"] {
            let s = Scratch::new();
            s.build(&[&corpus()], &[]);
            let files = index_files(&s, ext);
            assert!(!files.is_empty(), "{ext}");
            for f in &files {
                match how {
                    "truncated" => {
                        let len = fs::metadata(f).unwrap().len();
                        fs::OpenOptions::new()
                            .write(true)
                            .open(f)
                            .unwrap()
                            .set_len(len / 2)
                            .unwrap();
                    }
                    "missing" => fs::remove_file(f).unwrap(),
                    _ => fs::write(f, b"\x00garbage\xff").unwrap(),
                }
            }
            let what = format!("{how} {ext}");
            // Whatever a search says, what it suggests works.
            let out = pi(&s, &["search", "tokio", "--json"]);
            if out.status.code() != Some(0) {
                let err = text(&out.stderr);
                assert!(err.contains("pi-index build"), "{what}: {err}");
            }
            let out = run(s.build_cmd(&[&corpus()]).args(["--full", "--json"]));
            assert_eq!(
                out.status.code(),
                Some(0),
                "{what}: build --full failed: {}",
                text(&out.stderr)
            );
            let out = pi(&s, &["search", "tokio", "--json"]);
            assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out.stderr));
            assert_eq!(json_hits(&out), expected, "{what}");
        }
    }
}

#[test]
fn an_index_path_that_is_a_file_is_named_as_such() {
    let s = Scratch::new();
    fs::write(s.index(), b"a file").unwrap();
    let out = run(&mut s.build_cmd(&[&corpus()]));
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("is a file, not a directory") && !err.contains("os error 17"),
        "{err}"
    );
    for args in [
        &["search", "x"][..],
        &["show", "x"],
        &["sessions"],
        &["stats"],
    ] {
        let out = pi(&s, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("is a file, not a directory") && !err.contains("build` first"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(fs::read(s.index()).unwrap(), b"a file");
}

#[test]
fn another_user_searches_a_shared_index_and_is_told_why_it_cannot_write_it() {
    let bin = env!("CARGO_BIN_EXE_pi-index");
    let Some(_) = as_nobody(bin) else {
        return cannot_run(
            "cannot run the binary as an unprivileged user here (root without a working `setpriv`)",
        );
    };
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new();
    fs::set_permissions(s.dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let sessions = s.dir.path().join("sessions");
    fs::create_dir_all(&sessions).unwrap();
    for sub in ["--home-u-alpha--", "--home-u-beta--"] {
        fs::create_dir_all(sessions.join(sub)).unwrap();
        for e in fs::read_dir(corpus().join(sub)).unwrap() {
            let e = e.unwrap();
            fs::copy(e.path(), sessions.join(sub).join(e.file_name())).unwrap();
        }
    }
    s.build(&[&sessions], &[]);
    let expected = json_hits(&pi(&s, &["search", "tokio", "--json"]));
    let other = |args: &[&str]| {
        let mut cmd = as_nobody(bin).unwrap();
        cmd.env("HOME", s.dir.path())
            .env("NO_COLOR", "1")
            .env_remove("PI_INDEX_DIR")
            .arg(args[0])
            .arg("--index")
            .arg(s.index())
            .args(&args[1..]);
        run(&mut cmd)
    };
    // Another user reads the index: the files it is made of are as
    // readable as the directory they are in.
    let out = other(&["search", "tokio", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(json_hits(&out), expected);
    for args in [&["sessions"][..], &["stats"]] {
        let out = other(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // It cannot write it, and is told so: not that another build is
    // running, not to rebuild what is intact.
    fs::copy(
        crate::util::fixture("branch-abandoned.jsonl"),
        sessions.join("new.jsonl"),
    )
    .unwrap();
    let out = other(&["build", sessions.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("ermission denied"), "{err}");
    assert!(err.contains("permissions"), "{err}");
    assert!(
        !err.contains("another `pi-index build`") && !err.contains("--full"),
        "{err}"
    );
    // Nothing changed, so nothing to write: that works.
    fs::remove_file(sessions.join("new.jsonl")).unwrap();
    let out = other(&["build", sessions.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

// ---------------------------------------------------------------------
// Giant messages
// ---------------------------------------------------------------------

const MB: usize = 1 << 20;

/// A JSON string body (escaped) of about `bytes` bytes of words, with
/// escapes and multi-byte characters all along it, that starts with
/// `first` and ends with `last`.
fn giant_text(bytes: usize, first: &str, last: &str) -> String {
    let mut s = String::with_capacity(bytes + 64);
    s.push_str(first);
    let mut i = 0u64;
    while s.len() < bytes {
        i += 1;
        s.push_str(match i % 7 {
            0 => " caf\\u00e9 ",
            1 => " \\\"quoted\\\"\\n",
            2 => " \u{00e9}t\u{00e9} \u{1F600} ",
            3 => " back\\\\slash ",
            4 => " \\ud83d\\ude00 ",
            _ => " ordinary words here ",
        });
    }
    s.push(' ');
    s.push_str(last);
    s
}

const GIANT_HEADER: &str = r#"{"type":"session","version":3,"id":"giant-0001","timestamp":"2026-04-01T10:00:00.000Z","cwd":"/p"}"#;

/// A user message line of entry `id` whose content is `body` (escaped).
fn user_line(id: &str, parent: Option<&str>, body: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-04-01T10:00:01.000Z","message":{{"role":"user","content":"{body}","timestamp":0}}}}"#
    )
}

#[test]
fn a_giant_message_is_indexed_in_part_and_said_so_within_the_memory_budget() {
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    fs::create_dir_all(&dir).unwrap();
    let mut f = String::new();
    f += GIANT_HEADER;
    f += "\n";
    // Line 2: one user message of 64 MB.
    f += &user_line(
        "g1",
        None,
        &giant_text(64 * MB, "zqgiantstart", "zqgiantend"),
    );
    f += "\n";
    // Line 3: an assistant reply of 2,000 text blocks, 32 MB in all.
    f += r#"{"type":"message","id":"g2","parentId":"g1","timestamp":"2026-04-01T10:00:02.000Z","message":{"role":"assistant","content":["#;
    for b in 0..2000 {
        if b > 0 {
            f += ",";
        }
        f += r#"{"type":"text","text":""#;
        f += &giant_text(16 * 1024, if b == 0 { "zqblocksstart" } else { "" }, "");
        f += r#""}"#;
    }
    f += r#"],"provider":"p","model":"m","timestamp":0}}"#;
    f += "\n";
    // Line 4: 32 MB cut short (a crash while Pi wrote it).
    f += r#"{"type":"message","id":"g3","parentId":"g2","timestamp":"2026-04-01T10:00:03.000Z","message":{"role":"user","content":""#;
    f += &giant_text(32 * MB, "zqcutstart", "");
    f += "\n";
    // Line 5: an ordinary message after them.
    f += &user_line("g4", Some("g2"), "zqafter the giants");
    f += "\n";
    let file = dir.join("giant.jsonl");
    fs::write(&file, &f).unwrap();
    let file_len = f.len();
    drop(f);

    let (out, rss) = run_measured(s.build_cmd(&[&dir]).arg("--json"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    eprintln!("build over {} MB: peak RSS {} MB", file_len / MB, rss >> 20);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let truncated = r["messages_truncated"]
        .as_array()
        .expect("messages_truncated");
    let lines: Vec<u64> = truncated
        .iter()
        .map(|t| t["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2, 3, 4], "{r}");
    let cap = pi_index::pi::giant::MAX_DOCUMENT_BYTES as u64;
    for t in truncated {
        assert_eq!(t["path"], file.to_str().unwrap());
        let line = t["line_bytes"].as_u64().unwrap();
        let kept = t["indexed_bytes"].as_u64().unwrap();
        assert!(line > 30 * MB as u64, "{t}");
        assert!(kept > cap / 2 && kept <= cap, "{t}");
    }
    assert_eq!(r["messages_truncated_more"], 0);
    assert_eq!(r["messages_indexed"], 4, "{r}");
    assert_eq!(r["lines_damaged"], 1, "{r}");
    assert!(
        text(&out.stderr).contains(
            "pi-index: note: 3 lines hold more text than one message indexes: only the first 1.0 MB of each is indexed (-v lists them)"
        ),
        "{}",
        text(&out.stderr)
    );
    // The old code held the line several times over (1.36 GB for 200 MB);
    // now the line is never resident whole, and one message of it at most
    // the cap.
    assert!(
        rss < 150 * MB as u64,
        "peak RSS {} MB for a build over {} MB",
        rss >> 20,
        file_len / MB
    );

    // What was indexed is found; what was not is not (and was reported).
    for (word, line) in [
        ("zqgiantstart", 2),
        ("zqblocksstart", 3),
        ("zqcutstart", 4),
        ("zqafter", 5),
    ] {
        let out = pi(&s, &["search", "--json", word]);
        assert_eq!(out.status.code(), Some(0), "{word}: {}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["line"], line, "{word}");
        assert!(v["text"].as_str().unwrap().len() as u64 <= cap, "{word}");
    }
    let out = pi(&s, &["search", "zqgiantend"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_search_hitting_giant_messages_reads_a_bounded_part_of_each() {
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    fs::create_dir_all(&dir).unwrap();
    // Twenty messages of 4 MB, each with the word 900 kB in: inside what
    // is indexed of it, far from its start.
    let mut f = String::new();
    f += GIANT_HEADER;
    f += "\n";
    let mut parent = None;
    let ids: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    for id in &ids {
        let body = format!(
            "{} zqneedle {}",
            giant_text(900 * 1024, "zqlead", ""),
            giant_text(3 * MB, "", "")
        );
        f += &user_line(id, parent, &body);
        f += "\n";
        parent = Some(id);
    }
    let file_len = f.len();
    fs::write(dir.join("giants.jsonl"), &f).unwrap();
    drop(f);
    let r = s.build(&[&dir], &[]);
    assert_eq!(r["messages_indexed"], 20, "{r}");

    for json in [true, false] {
        let mut cmd = s.cmd();
        cmd.args(["search", "zqneedle", "-n", "20", "--index"])
            .arg(s.index());
        if json {
            cmd.arg("--json");
        }
        let (out, rss) = run_measured(&mut cmd);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        eprintln!(
            "search over {} MB, 20 hits (json: {json}): peak RSS {} MB",
            file_len / MB,
            rss >> 20
        );
        if json {
            let hits: Vec<serde_json::Value> = text(&out.stdout)
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(hits.len(), 20);
            for h in &hits {
                let snippet = h["snippet"].as_str().unwrap();
                assert!(snippet.contains("zqneedle"), "{snippet}");
                assert!(snippet.len() < 1000, "{snippet}");
            }
        } else {
            assert_eq!(text(&out.stdout).matches("zqneedle").count(), 20);
        }
        // The old code loaded, copied and tokenized every hit's 4 MB
        // (825 MB for one hit on a 200 MB message): now at most the cap
        // of each is loaded, and its snippet made from a window.
        assert!(
            rss < 130 * MB as u64,
            "peak RSS {} MB for 20 hits (json: {json})",
            rss >> 20
        );
    }
}
