//! `pi-index search`, `sessions`, `stats`, `show` formats and
//! `completions`, through the real binary, on `fixtures/search`:
//!
//! - A `/home/u/alpha` (2026-01-10, claude-opus-4): lines 2-7; lines 4-5
//!   (tokio runtime panics) are an abandoned branch.
//! - B `/home/u/alpha/sub` (2026-03-05, gpt-5): flaky watcher test, accents.
//! - C `/home/u/beta` (2026-02-14, gemini, named "Beta planning"): tokio.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::util::{run, Scratch};

const A: &str = "aaaa0001";
const B: &str = "bbbb0002";
const C: &str = "cccc0003";

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/search")
}

/// One index of `fixtures/search`, built once for all tests here.
fn scratch() -> &'static Scratch {
    static S: OnceLock<Scratch> = OnceLock::new();
    S.get_or_init(|| {
        let s = Scratch::new();
        let r = s.build(&[&corpus()], &[]);
        assert_eq!(r["sessions"], 3);
        s
    })
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn pi(args: &[&str]) -> Out {
    let s = scratch();
    // The index goes right after the command, so that a `--` among the
    // arguments (for queries starting with `-`) does not swallow it.
    let out = run(s
        .cmd()
        .arg(args[0])
        .arg("--index")
        .arg(s.index())
        .args(&args[1..]));
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `search --json`: (session prefix, line) of each hit, in order.
fn hits(args: &[&str]) -> Vec<(String, u64)> {
    let mut all = vec!["search", "--json"];
    all.extend_from_slice(args);
    let out = pi(&all);
    assert!(
        out.code == 0 || out.code == 1,
        "exit {}: {}",
        out.code,
        out.stderr
    );
    out.stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
            (
                v["session_id"].as_str().unwrap()[..8].to_owned(),
                v["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn sorted(mut v: Vec<(String, u64)>) -> Vec<(String, u64)> {
    v.sort();
    v
}

fn h(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
    sorted(pairs.iter().map(|(s, l)| (s.to_string(), *l)).collect())
}

#[test]
fn one_word_finds_every_message_with_it() {
    assert_eq!(
        sorted(hits(&["tokio"])),
        h(&[(A, 4), (A, 5), (C, 3), (C, 4)])
    );
}

#[test]
fn words_are_anded() {
    assert_eq!(sorted(hits(&["tokio", "ecosystem"])), h(&[(C, 4)]));
    assert_eq!(sorted(hits(&["tokio ecosystem"])), h(&[(C, 4)]));
}

#[test]
fn phrases_keep_word_order() {
    assert_eq!(sorted(hits(&["\"runtime panics\""])), h(&[(A, 4), (A, 5)]));
    assert_eq!(hits(&["\"panics runtime\""]), vec![]);
}

#[test]
fn or_not_and_parentheses() {
    assert_eq!(
        sorted(hits(&["flaky OR ecosystem"])),
        h(&[(B, 2), (B, 3), (C, 4)])
    );
    assert_eq!(
        sorted(hits(&["tokio -ecosystem"])),
        h(&[(A, 4), (A, 5), (C, 3)])
    );
    assert_eq!(
        sorted(hits(&["tokio NOT ecosystem"])),
        h(&[(A, 4), (A, 5), (C, 3)])
    );
    assert_eq!(sorted(hits(&["(flaky OR ecosystem) tokio"])), h(&[(C, 4)]));
    assert_eq!(
        sorted(hits(&["tokio -\"runtime panics\""])),
        h(&[(C, 3), (C, 4)])
    );
    assert_eq!(
        sorted(hits(&["--", "-tokio -serde_json -flaky"])),
        h(&[(A, 7)])
    );
}

#[test]
fn identifiers_and_paths_whole_and_by_parts() {
    for q in [
        "serde_json::from_str",
        "serde_json",
        "from_str",
        "parseSessionEntries",
        "parsesessionentries",
        "session entries",
        "\"parse session entries\"",
        "src/core/session-manager.ts",
        "session-manager.ts",
        "manager",
        "serde_js*",
        "json",
        "sessionEntries",
        "parseSession",
        "Entries",
        "session-manager",
        "core/session-manager.ts",
        "\"src/core/session-manager.ts\"",
        "\"json from_str\"",
        "json::from_str",
        "manager.ts",
    ] {
        let got = sorted(hits(&[q]));
        assert!(got.contains(&(A.to_owned(), 3)), "{q}: {got:?}");
    }
    assert_eq!(
        sorted(hits(&["serde_json::from_str"])),
        h(&[(A, 2), (A, 3)])
    );
    for q in [
        "serde_yaml",
        "\"entries session\"",
        "\"session parse\"",
        "src/session-manager.ts",
        "session-manager.rs",
    ] {
        assert_eq!(hits(&[q]), vec![], "{q}");
    }
}

#[test]
fn cjk_is_searchable_by_character() {
    assert_eq!(sorted(hits(&["検索"])), h(&[(A, 7)]));
    assert_eq!(sorted(hits(&["\"検索エンジン\""])), h(&[(A, 7)]));
    assert_eq!(sorted(hits(&["索エ"])), h(&[(A, 7)]));
    assert_eq!(hits(&["\"検エ\""]), vec![]);
    // Matched characters are highlighted.
    let out = pi(&["search", "検索", "--color", "always"]);
    assert!(
        out.stdout
            .contains("\x1b[1;31m検\x1b[0m\x1b[1;31m索\x1b[0m"),
        "{}",
        out.stdout
    );
}

#[test]
fn prefixes() {
    assert_eq!(sorted(hits(&["runt*"])), h(&[(A, 4), (A, 5)]));
    assert_eq!(sorted(hits(&["ecosys*"])), h(&[(C, 4)]));
}

#[test]
fn case_and_accents_are_folded() {
    assert_eq!(sorted(hits(&["CAFE resume"])), h(&[(B, 3)]));
    assert_eq!(sorted(hits(&["Tokio"])).len(), 4);
}

#[test]
fn role_filters_inline_and_as_flags() {
    assert_eq!(sorted(hits(&["tokio role:user"])), h(&[(A, 4), (C, 3)]));
    assert_eq!(
        sorted(hits(&["tokio", "--role", "assistant"])),
        h(&[(A, 5), (C, 4)])
    );
    assert_eq!(sorted(hits(&["tokio role:user|assistant"])).len(), 4);
    // Thinking is not indexed by default.
    assert_eq!(hits(&["zqsecret"]), vec![]);
}

#[test]
fn cwd_filters_take_the_directory_and_below() {
    assert_eq!(
        sorted(hits(&["the", "cwd:/home/u/alpha"])),
        sorted(hits(&["the", "--cwd", "/home/u/alpha/"]))
    );
    let alpha = sorted(hits(&["--", "-zzzz", "cwd:/home/u/alpha"]));
    assert!(alpha.iter().all(|(s, _)| s == A || s == B), "{alpha:?}");
    assert!(alpha.iter().any(|(s, _)| s == B));
    assert_eq!(
        sorted(hits(&["--", "-zzzz", "cwd:/home/u/alpha/sub"])),
        h(&[(B, 2), (B, 3)])
    );
    // A sibling that shares the prefix is not below it.
    assert_eq!(hits(&["--", "-zzzz", "cwd:/home/u/alph"]), vec![]);
}

#[test]
fn session_model_and_branch_filters() {
    assert_eq!(
        sorted(hits(&["tokio", &format!("session:{C}")])),
        h(&[(C, 3), (C, 4)])
    );
    assert_eq!(
        sorted(hits(&["tokio", "--session", "cccc"])),
        h(&[(C, 3), (C, 4)])
    );
    assert_eq!(sorted(hits(&["flaky model:gpt"])), h(&[(B, 3)]));
    assert_eq!(sorted(hits(&["tokio", "--model", "OPUS"])), h(&[(A, 5)]));
    assert_eq!(sorted(hits(&["tokio branch:active"])), h(&[(C, 3), (C, 4)]));
    assert_eq!(
        sorted(hits(&["tokio", "--active-only"])),
        h(&[(C, 3), (C, 4)])
    );
}

#[test]
fn date_filters() {
    assert_eq!(
        sorted(hits(&["tokio after:2026-02-01"])),
        h(&[(C, 3), (C, 4)])
    );
    assert_eq!(
        sorted(hits(&["tokio before:2026-02-01"])),
        h(&[(A, 4), (A, 5)])
    );
    assert_eq!(
        sorted(hits(&[
            "tokio",
            "--since",
            "2026-01-10T09:00:04Z",
            "--until",
            "2026-02-14T08:00:02Z"
        ])),
        h(&[(A, 5), (C, 3)])
    );
    // Everything in the fixtures is older than a week from today.
    assert_eq!(hits(&["tokio after:7d"]), vec![]);
}

#[test]
fn sorting_and_paging() {
    let newest = hits(&["tokio", "--sort", "newest"]);
    assert_eq!(
        newest,
        vec![
            (C.to_owned(), 4),
            (C.to_owned(), 3),
            (A.to_owned(), 5),
            (A.to_owned(), 4)
        ]
    );
    let oldest = hits(&["tokio", "--sort", "oldest"]);
    assert_eq!(oldest, newest.iter().rev().cloned().collect::<Vec<_>>());
    assert_eq!(
        hits(&["tokio", "--sort", "newest", "-n", "1"]),
        newest[..1].to_vec()
    );
    assert_eq!(
        hits(&["tokio", "--sort", "newest", "-n", "2", "--offset", "1"]),
        newest[1..3].to_vec()
    );
}

#[test]
fn json_hits_have_every_show_key_plus_score_and_snippet() {
    let out = pi(&["search", "--json", "ecosystem"]);
    assert_eq!(out.code, 0);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    for k in crate::util::DOC_KEYS
        .into_iter()
        .chain(["score", "snippet"])
    {
        assert!(keys.contains(&k), "{k} missing from {keys:?}");
    }
    assert_eq!(v["session_name"], "Beta planning");
    assert_eq!(v["model"], "google/gemini-2.5-pro");
    assert!(v["score"].as_f64().unwrap() > 0.0);
    assert_eq!(v["snippet"], "Prefer tokio: its ecosystem is larger");
    assert!(!out.stdout.contains('\x1b'));
}

#[test]
fn human_output_groups_by_session_and_says_how_to_show_and_resume() {
    let out = pi(&["search", "tokio"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let o = &out.stdout;
    assert!(o.contains("Beta planning"), "{o}");
    assert!(
        o.contains("What about tokio runtime panics?") || o.contains("How do I parse JSON"),
        "{o}"
    );
    assert_eq!(o.matches("resume: pi --session ").count(), 2, "{o}");
    assert!(o.contains(&format!(
        "pi-index show {C}-0000-4000-8000-000000000003 --around 3"
    )));
    assert_eq!(o.matches("[abandoned branch]").count(), 2, "{o}");
    assert!(!o.contains('\x1b'), "no colour when NO_COLOR is set");
    let coloured = pi(&["search", "tokio", "--color", "always"]);
    assert!(
        coloured.stdout.contains("\x1b[1;31mtokio\x1b[0m"),
        "{}",
        coloured.stdout
    );
}

#[test]
fn exit_codes_like_grep() {
    assert_eq!(pi(&["search", "tokio"]).code, 0);
    let none = pi(&["search", "zzzznothing"]);
    assert_eq!(none.code, 1);
    assert_eq!(none.stdout, "");
    let bad = pi(&["search", "tokio role:robot"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("unknown role \"robot\""),
        "{}",
        bad.stderr
    );
    let bad = pi(&["search", "tokio", "--since", "soon"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("cannot read \"soon\" as a date"),
        "{}",
        bad.stderr
    );
}

#[test]
fn broken_queries_search_what_they_can_and_say_what_was_ignored() {
    let out = pi(&["search", "--json", "(tokio OR flaky"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains("query position 0: unclosed '('"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout.lines().count(), 6);
    let out = pi(&["search", "--json", "tokio)", "\"runtime"]);
    assert_eq!(out.code, 0);
    assert!(out.stderr.contains("unmatched ')'"), "{}", out.stderr);
    assert!(out.stderr.contains("unterminated quote"), "{}", out.stderr);
}

#[test]
fn a_missing_index_hints_at_build() {
    let s = Scratch::new();
    for cmd in [&["search", "x"][..], &["sessions"], &["stats"]] {
        let out = run(s.cmd().args(cmd).arg("--index").arg(s.index()));
        assert_eq!(out.status.code(), Some(2), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("run `pi-index build` first"), "{err}");
        assert_eq!(err.lines().count(), 1);
    }
}

#[test]
fn an_empty_index_hints_at_build() {
    let s = Scratch::new();
    let empty = s.dir.path().join("nothing");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions/decoy-codex.jsonl"),
        empty.join("decoy.jsonl"),
    )
    .unwrap();
    let r = s.build(&[&empty], &[]);
    assert_eq!(r["sessions"], 0);
    for (cmd, code) in [
        (&["search", "x"][..], 1),
        (&["sessions"], 0),
        (&["stats"], 0),
    ] {
        let out = run(s.cmd().args(cmd).arg("--index").arg(s.index()));
        assert_eq!(out.status.code(), Some(code), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is empty: run `pi-index build`"), "{err}");
        assert_eq!(err.lines().count(), 1);
    }
}

#[test]
fn show_formats_and_context() {
    let a = format!("{A}-0000-4000-8000-000000000001");
    let t = pi(&["show", &a, "--format", "transcript"]);
    assert_eq!(t.code, 0);
    assert_eq!(
        t.stdout,
        "> How do I parse JSON with serde_json::from_str in Rust?\n\
         Use serde_json::from_str with a typed struct; parseSessionEntries shows the pattern in src/core/session-manager.ts.\n\
         > Compare simd-json and serde_json throughput.\n\
         simd-json is faster on large documents; 検索エンジン benchmarks agree.\n"
            .replace("\n> Compare", "\n\n> Compare")
    );
    let around = pi(&[
        "show",
        &a,
        "--format",
        "json",
        "--around",
        "4",
        "--context",
        "1",
    ]);
    let lines: Vec<u64> = around
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["line"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(lines, vec![3, 4, 5]);
    let active = pi(&["show", &a, "--format", "json"]);
    assert_eq!(active.stdout.lines().count(), 4);
    let all = pi(&["show", &a, "--format", "json", "--branch", "all"]);
    assert_eq!(all.stdout.lines().count(), 6);
}

#[test]
fn sessions_newest_first_with_filters() {
    let out = pi(&["sessions", "--json"]);
    assert_eq!(out.code, 0);
    let ids: Vec<String> = out
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["session_id"]
                .as_str()
                .unwrap()[..8]
                .to_owned()
        })
        .collect();
    assert_eq!(ids, vec![B, C, A]);
    let first: serde_json::Value =
        serde_json::from_str(out.stdout.lines().nth(1).unwrap()).unwrap();
    assert_eq!(first["session_name"], "Beta planning");
    assert_eq!(first["messages"], 2);
    assert_eq!(first["cwd"], "/home/u/beta");

    let alpha = pi(&["sessions", "--json", "--cwd", "/home/u/alpha"]);
    assert_eq!(alpha.stdout.lines().count(), 2);
    let recent = pi(&["sessions", "--json", "--since", "2026-02-01"]);
    assert_eq!(recent.stdout.lines().count(), 2);
    let human = pi(&["sessions"]);
    let first_line = human.stdout.lines().next().unwrap();
    assert!(first_line.starts_with("2026-03-05 12:00"), "{first_line}");
    assert!(
        first_line.contains("Explain the flaky test"),
        "{first_line}"
    );
    assert!(first_line.contains("2 messages"), "{first_line}");
}

#[test]
fn stats_counts() {
    let out = pi(&["stats", "--json"]);
    assert_eq!(out.code, 0);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["sessions"], 3);
    assert_eq!(v["messages"], 10);
    assert_eq!(v["messages_by_role"]["user"], 5);
    assert_eq!(v["messages_by_role"]["assistant"], 5);
    assert_eq!(v["first"], "2026-01-10T09:00:00.000Z");
    assert_eq!(v["last"], "2026-03-05T12:00:02.000Z");
    assert_eq!(v["kinds"], "none");
    assert!(v["index_bytes"].as_u64().unwrap() > 0);
    assert_eq!(v["top_projects"].as_array().unwrap().len(), 3);
    let human = pi(&["stats"]);
    assert!(human.stdout.contains("sessions   3"), "{}", human.stdout);
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = pi(&["completions", shell]);
        assert_eq!(out.code, 0, "{shell}");
        assert!(out.stdout.contains("pi-index"), "{shell}");
        assert!(out.stdout.contains("search"), "{shell}");
    }
}
