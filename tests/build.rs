//! `pi-index build` and `show` through the real binary: locations, output
//! contracts, exit codes and error messages.

use std::fs;
use std::path::Path;

use crate::util::{fixture, fixtures, run, Scratch};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Copy one fixture into `dir` under Pi's folder layout.
fn install(dir: &Path, name: &str) -> std::path::PathBuf {
    let project = dir.join("--home-u-proj--");
    fs::create_dir_all(&project).unwrap();
    let to = project.join(name);
    fs::copy(fixture(name), &to).unwrap();
    to
}

#[test]
fn summary_line_names_every_count() {
    let s = Scratch::new();
    let out = run(&mut s.build_cmd(&[&fixtures()]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "one summary line: {text}");
    for part in [
        "indexed 53 sessions",
        "68 files seen",
        "15 rejected",
        "183 messages",
        "6 damaged lines",
        "MB/s",
    ] {
        assert!(text.contains(part), "{part:?} missing from {text:?}");
    }
}

/// `stats` as text: each count with its noun, singular for one, the
/// numbers of the top projects right-aligned.
#[test]
fn stats_says_each_count_with_its_noun() {
    let s = Scratch::new();
    assert!(run(&mut s.build_cmd(&[&fixtures()])).status.success());
    let out = run(s.cmd().args(["stats", "--index"]).arg(s.index()));
    let text = stdout(&out);
    assert!(
        text.contains("\ncopies     0 (copied into 3 forks; 183 distinct messages)\n"),
        "{text}"
    );
    // The fixtures fit one segment writer: one segment.
    assert!(
        text.lines()
            .any(|l| l.starts_with("size       ") && l.ends_with(" MB in 1 segment")),
        "{text}"
    );
    let top = text.split("top projects\n").nth(1).unwrap();
    assert_eq!(
        top,
        concat!(
            "       47 sessions       162 messages  /home/u/proj\n",
            "        3 sessions        14 messages  /home/u/old-proj\n",
            "        2 sessions         5 messages  C:\\Users\\u\\proj\n",
            "        1 session          2 messages  (unknown)\n",
        )
    );
}

#[test]
fn json_report_is_the_only_stdout_and_has_every_key() {
    let s = Scratch::new();
    let report = s.build(&[&fixtures()], &[]);
    for key in [
        "files_scanned",
        "files_indexed",
        "files_unchanged",
        "files_rejected",
        "sessions",
        "messages_indexed",
        "lines_read",
        "lines_damaged",
        "bytes_read",
        "elapsed_ms",
        "damaged",
        "damaged_more",
    ] {
        assert!(report.get(key).is_some(), "missing {key}");
    }
    let first = &report["damaged"][0];
    assert!(first["path"]
        .as_str()
        .unwrap()
        .ends_with("damaged-lines.jsonl"));
    assert_eq!(first["line"], 3);
    assert!(first["error"].as_str().unwrap().contains("JSON"));
}

/// A build that writes reports each phase's wall and CPU, the commit's
/// parts, and the CPU of each of its threads: one entry per thread of
/// `-j`, so the serial share can be read on any machine.
#[cfg(unix)]
#[test]
fn json_timings_give_each_phase_s_cpu_and_each_thread_s() {
    for threads in ["1", "3"] {
        let s = Scratch::new();
        let r = s.build(&[&fixtures()], &["--full", "-j", threads]);
        let t = &r["timings"];
        for key in [
            "discover_ms",
            "parse_ms",
            "commit_ms",
            "discover_cpu_ms",
            "parse_cpu_ms",
            "commit_cpu_ms",
            "flush_ms",
            "merge_ms",
            "merge_cpu_ms",
            "groups_ms",
        ] {
            assert!(t[key].is_u64(), "{key}: {t}");
        }
        let workers = t["workers_cpu_ms"].as_array().unwrap();
        assert_eq!(workers.len().to_string(), threads, "{t}");
        // Segment writers: the threads, at most the cores.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let want = cores.min(threads.parse().unwrap());
        assert_eq!(t["writers"], want, "{t}");
        assert!(workers.iter().all(serde_json::Value::is_u64), "{t}");
        // The commit's parts are parts of it.
        let part = |k: &str| t[k].as_u64().unwrap();
        assert!(
            part("flush_ms") + part("merge_ms") + part("groups_ms") <= part("commit_ms"),
            "{t}"
        );
    }
}

#[test]
fn quiet_prints_nothing() {
    let s = Scratch::new();
    let out = run(s.build_cmd(&[&fixture("branch-abandoned.jsonl")]).arg("-q"));
    assert!(out.status.success());
    assert_eq!(stdout(&out), "");
    assert_eq!(stderr(&out), "");
}

#[test]
fn verbose_lists_rejected_files_and_damaged_lines() {
    let s = Scratch::new();
    let out = run(s.build_cmd(&[&fixtures()]).arg("-v"));
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("decoy-codex.jsonl: not a Pi session header (type \"session_meta\")"),
        "{err}"
    );
    assert!(err.contains("damaged-lines.jsonl:3: invalid JSON"), "{err}");
    assert!(
        err.contains("invalid-utf8.jsonl:2: invalid UTF-8, replaced"),
        "{err}"
    );
}

#[test]
fn no_path_uses_pi_coding_agent_dir_then_home() {
    let s = Scratch::new();
    let agent = s.dir.path().join("agent");
    install(&agent.join("sessions"), "branch-abandoned.jsonl");
    let out = run(s
        .cmd()
        .env("PI_CODING_AGENT_DIR", &agent)
        .args(["build", "--json", "--index"])
        .arg(s.index()));
    assert!(out.status.success(), "{}", stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["files_indexed"], 1);

    // Without the variable: ~/.pi/agent/sessions plus ~/.config/pi/agent/sessions.
    install(&s.home().join(".pi/agent/sessions"), "utf8-bom.jsonl");
    install(
        &s.home().join(".config/pi/agent/sessions"),
        "crlf-line-endings.jsonl",
    );
    let out = run(s.cmd().args(["build", "--json", "--index"]).arg(s.index()));
    assert!(out.status.success(), "{}", stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["files_indexed"], 2);
}

#[test]
fn no_session_directory_says_where_it_looked_and_exits_2() {
    let s = Scratch::new();
    let out = run(s.cmd().args(["build", "--index"]).arg(s.index()));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(".pi/agent/sessions"), "{err}");
    assert!(err.contains(".config/pi/agent/sessions"), "{err}");
    assert!(!s.index().exists(), "nothing is created on error");
}

#[test]
fn missing_path_is_an_error_with_exit_2() {
    let s = Scratch::new();
    let out = run(s
        .cmd()
        .args(["build", "/nonexistent/sessions", "--index"])
        .arg(s.index()));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/sessions: no such file or directory"));
}

#[test]
fn bad_flags_are_usage_errors_with_exit_2() {
    let s = Scratch::new();
    for args in [
        &["build", "--include", "bogus"][..],
        &["build", "--threads", "0"],
        &["frobnicate"],
    ] {
        let out = run(s.cmd().args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn a_foreign_index_directory_is_never_overwritten() {
    let s = Scratch::new();
    fs::create_dir_all(s.index()).unwrap();
    fs::write(s.index().join("precious.txt"), b"mine").unwrap();
    let out = run(&mut s.build_cmd(&[&fixture("branch-abandoned.jsonl")]));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("is not a pi-index index"), "{err}");
    assert_eq!(fs::read(s.index().join("precious.txt")).unwrap(), b"mine");
}

#[test]
fn index_location_comes_from_the_environment_and_the_data_dir() {
    let s = Scratch::new();
    let via_env = s.dir.path().join("env-index");
    let out = run(s
        .cmd()
        .env("PI_INDEX_DIR", &via_env)
        .arg("build")
        .arg(fixture("branch-abandoned.jsonl"))
        .arg("-q"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(via_env.join("meta.json").exists());

    let out = run(s
        .cmd()
        .arg("build")
        .arg(fixture("branch-abandoned.jsonl"))
        .arg("-q"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(s.home().join(".local/share/pi-index/meta.json").exists());
}

#[test]
fn a_second_build_reads_nothing_that_did_not_change() {
    let s = Scratch::new();
    let r1 = s.build(&[&fixtures()], &[]);
    let r2 = s.build(&[&fixtures()], &[]);
    assert_eq!(r1["messages_indexed"], 183);
    assert_eq!(r2["messages_indexed"], 0);
    assert_eq!(r2["files_unchanged"], 53);
    assert_eq!(r2["files_indexed"], 0);
    assert_eq!(r2["bytes_read"], 0);
    assert_eq!(r2["sessions"], 53);
    assert_eq!(r2["rebuilt"], serde_json::Value::Null);
    let docs = s.show_json(fixture("branch-abandoned.jsonl").to_str().unwrap(), &[]);
    assert_eq!(docs.len(), 6, "no duplicates after a second build");
    let r3 = s.build(&[&fixtures()], &["--full"]);
    assert_eq!(r3["messages_indexed"], 183);
    assert_eq!(r3["rebuilt"], "--full");
    assert_eq!(
        s.show_json(fixture("branch-abandoned.jsonl").to_str().unwrap(), &[])
            .len(),
        6
    );
}

#[test]
fn show_finds_a_session_by_id_prefix_and_explains_misses() {
    let s = Scratch::new();
    s.build(&[&fixture("branch-abandoned.jsonl")], &[]);
    let by_path = s.show_json(fixture("branch-abandoned.jsonl").to_str().unwrap(), &[]);
    let id = by_path[0]["session_id"].as_str().unwrap().to_owned();
    assert_eq!(s.show_json(&id, &[]), by_path);
    assert_eq!(s.show_json(&id[..6], &[]), by_path);

    let out = run(s.cmd().args(["show", "zzzz", "--index"]).arg(s.index()));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no indexed session matches \"zzzz\""));
}

#[test]
fn show_on_a_missing_index_hints_at_build() {
    let s = Scratch::new();
    let out = run(s.cmd().args(["show", "abc", "--index"]).arg(s.index()));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1);
    assert!(err.contains("run `pi-index build` first"), "{err}");
}

#[test]
fn show_text_marks_abandoned_branches_and_hides_them_by_default() {
    let s = Scratch::new();
    s.build(&[&fixture("branch-abandoned.jsonl")], &[]);
    let show = |extra: &[&str]| {
        let out = run(s
            .cmd()
            .arg("show")
            .arg(fixture("branch-abandoned.jsonl"))
            .arg("--index")
            .arg(s.index())
            .args(extra));
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let all = show(&["--branch", "all"]);
    assert_eq!(all.matches("(abandoned branch)").count(), 2, "{all}");
    assert!(all.contains("Make it poll instead; notify is flaky on NFS."));
    let active = show(&[]);
    assert_eq!(active.matches("(abandoned branch)").count(), 0, "{active}");
    assert!(!active.contains("Make it poll instead"));
    assert!(active.contains("Keep notify but fall back to polling on NFS."));
}
