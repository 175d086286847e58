//! Where `build` with no PATH reads sessions (Pi 1.6's session dirs, in
//! its precedence), and what happens to indexed sessions that moved or lie
//! in a directory a build no longer reads: in a sandboxed HOME with
//! `PI_CODING_AGENT_DIR`, `PI_CODING_AGENT_SESSION_DIR` and settings.json
//! variants.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::util::{run, Scratch};

/// A one-message session file with id `id` whose user text is `word`.
fn session(path: &Path, id: &str, word: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(
        path,
        format!(
            concat!(
                r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/home/u/proj"}}"#,
                "\n",
                r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T10:00:01.000Z","message":{{"role":"user","content":"question {word}"}}}}"#,
                "\n",
                r#"{{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-03-01T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"answer"}}]}}}}"#,
                "\n"
            ),
            id = id,
            word = word
        ),
    )
    .unwrap();
}

/// `pi-index build --index <index> [extra]` with no PATH, in the
/// scratch HOME, with `env` set (and the Pi variables cleared otherwise).
fn build(s: &Scratch, env: &[(&str, &Path)], extra: &[&str]) -> Output {
    let mut cmd: Command = s.cmd();
    cmd.env_remove("PI_CODING_AGENT_SESSION_DIR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(cmd.arg("build").arg("--index").arg(s.index()).args(extra))
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn found(s: &Scratch, word: &str) -> Vec<String> {
    let out = run(s
        .cmd()
        .args(["search", word, "--json", "--index"])
        .arg(s.index()));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["path"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn canon(p: &Path) -> String {
    fs::canonicalize(p).unwrap().to_string_lossy().into_owned()
}

fn roots(r: &Value) -> Vec<(String, String, bool)> {
    r["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["path"].as_str().unwrap().to_owned(),
                l["why"].as_str().unwrap().to_owned(),
                l["read"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// Each root's path and the agents it belongs to.
fn agents(r: &Value) -> Vec<(String, Vec<String>)> {
    r["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["path"].as_str().unwrap().to_owned(),
                l["agents"]
                    .as_array()
                    .map(|a| a.iter().map(|x| x.as_str().unwrap().to_owned()).collect())
                    .unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn every_session_dir_pi_1_6_may_use_is_read_in_its_precedence() {
    let s = Scratch::new();
    let home = s.home();
    fs::create_dir_all(&home).unwrap();
    session(
        &home.join(".pi/agent/sessions/--home-u-proj--/a.jsonl"),
        "s-default",
        "zqdefault",
    );
    session(&home.join("envdir/b.jsonl"), "s-env", "zqenv");
    session(&home.join("setdir/c.jsonl"), "s-settings", "zqsettings");
    session(
        &home.join(".config/pi/agent/sessions/--x--/d.jsonl"),
        "s-config",
        "zqconfig",
    );
    fs::write(
        home.join(".pi/agent/settings.json"),
        "\u{feff}{\"defaultModel\":\"x\",\"sessionDir\":\"~/setdir\"}",
    )
    .unwrap();
    // `~` in the variable, as Pi expands it.
    let out = build(
        &s,
        &[("PI_CODING_AGENT_SESSION_DIR", Path::new("~/envdir"))],
        &["--json"],
    );
    let r = json(&out);
    assert_eq!(r["files_indexed"], 4, "{r}");
    let got = roots(&r);
    let want = [
        (home.join("envdir"), "$PI_CODING_AGENT_SESSION_DIR", true),
        (home.join("setdir"), "sessionDir in ", true),
        (
            home.join(".pi/agent/sessions"),
            "Pi's default session dir",
            true,
        ),
        (
            home.join(".config/pi/agent/sessions"),
            "where MemPalace's Pi importer looks",
            true,
        ),
        // Oh My Pi's, after Pi's: none here.
        (
            home.join(".omp/agent/sessions"),
            "Oh My Pi's default session dir",
            false,
        ),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((path, why, read), (wpath, wwhy, wread)) in got.iter().zip(&want) {
        assert_eq!(Path::new(path), wpath.as_path());
        assert!(why.starts_with(wwhy), "{why}");
        assert_eq!(read, wread, "{path}");
    }
    // Oh My Pi reads $PI_CODING_AGENT_SESSION_DIR too.
    let by = agents(&r);
    assert_eq!(by[0].1, ["pi", "omp"], "{by:?}");
    assert_eq!(by[1].1, ["pi"], "{by:?}");
    assert_eq!(by[4].1, ["omp"], "{by:?}");
    for w in ["zqdefault", "zqenv", "zqsettings", "zqconfig"] {
        assert_eq!(found(&s, w).len(), 1, "{w}");
    }
    // -v says which dirs were read and why; stats too.
    let out = build(
        &s,
        &[("PI_CODING_AGENT_SESSION_DIR", Path::new("~/envdir"))],
        &["-v"],
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "read {} ($PI_CODING_AGENT_SESSION_DIR) for Pi and Oh My Pi\n",
            home.join("envdir").display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "not read {} (Oh My Pi's default session dir (~/.omp/agent/sessions)) for Oh My Pi: does not exist\n",
            home.join(".omp/agent/sessions").display()
        )),
        "{err}"
    );
    let out = run(s.cmd().args(["stats", "--json", "--index"]).arg(s.index()));
    let st: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(st["roots"].as_array().unwrap().len(), 5, "{st}");
    let out = run(s.cmd().args(["stats", "--index"]).arg(s.index()));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("read from") && text.contains("(sessionDir in "),
        "{text}"
    );
}

#[test]
fn the_agent_dir_and_pi_s_default_are_both_read() {
    let s = Scratch::new();
    let home = s.home();
    let agent = s.dir.path().join("agent");
    session(&agent.join("sessions/--p--/a.jsonl"), "s-agent", "zqagent");
    session(
        &home.join(".pi/agent/sessions/--p--/b.jsonl"),
        "s-old",
        "zqold",
    );
    let r = json(&build(&s, &[("PI_CODING_AGENT_DIR", &agent)], &["--json"]));
    assert_eq!(r["files_indexed"], 2, "{r}");
    let got = roots(&r);
    assert!(got[0].1.contains("$PI_CODING_AGENT_DIR"), "{got:?}");
    assert!(got[1].1.contains("~/.pi/agent/sessions"), "{got:?}");
}

#[test]
fn a_broken_or_relative_setting_is_said_and_never_stops_the_build() {
    let s = Scratch::new();
    let home = s.home();
    session(&home.join(".pi/agent/sessions/--p--/a.jsonl"), "s-a", "zqa");
    let settings = home.join(".pi/agent/settings.json");
    for (content, says) in [
        ("{\"sessionDir\": ", "not valid JSON"),
        ("{\"sessionDir\": \"rel/dir\"}", "relative path"),
        ("{\"sessionDir\": 42}", "not a string"),
    ] {
        fs::write(&settings, content).unwrap();
        let out = build(&s, &[], &["--json"]);
        let r = json(&out);
        assert_eq!(r["sessions"], 1, "{content}: {r}");
        let err = stderr(&out);
        assert!(
            err.contains("warning") && err.contains(says),
            "{content}: {err}"
        );
        assert!(err.contains(&settings.display().to_string()), "{err}");
    }
    // A relative $PI_CODING_AGENT_SESSION_DIR too; a missing settings.json
    // is a note.
    fs::remove_file(&settings).unwrap();
    let out = build(
        &s,
        &[("PI_CODING_AGENT_SESSION_DIR", Path::new("envrel"))],
        &["--json"],
    );
    let r = json(&out);
    assert_eq!(r["sessions"], 1);
    let err = stderr(&out);
    assert!(
        err.contains("$PI_CODING_AGENT_SESSION_DIR=envrel") && err.contains("relative"),
        "{err}"
    );
    let unread: Vec<_> = roots(&r).into_iter().filter(|l| !l.2).collect();
    assert!(unread.iter().any(|l| l.0 == "envrel"), "{unread:?}");
    let out = build(&s, &[], &["--json"]);
    assert_eq!(
        stderr(&out),
        format!(
            "pi-index: note: {}: none, so no sessionDir setting (Pi's default applies)\n",
            settings.display()
        )
    );
}

#[test]
fn sessions_moved_to_a_new_session_dir_are_moved_not_deleted() {
    let s = Scratch::new();
    let home = s.home();
    let old = home.join(".pi/agent/sessions/--home-u-proj--/2026_s-moved.jsonl");
    session(&old, "s-moved", "zqmoved");
    let r = json(&build(&s, &[], &["--json"]));
    assert_eq!(r["files_indexed"], 1);
    let old_c = canon(&old);
    // The user sets sessionDir and moves their sessions there.
    fs::write(
        home.join(".pi/agent/settings.json"),
        r#"{"sessionDir":"~/sessions"}"#,
    )
    .unwrap();
    let new = home.join("sessions/2026_s-moved.jsonl");
    fs::create_dir_all(new.parent().unwrap()).unwrap();
    fs::rename(&old, &new).unwrap();
    let out = build(&s, &[], &["--json"]);
    let r = json(&out);
    assert_eq!(r["files_deleted"], 0, "{r}");
    assert_eq!(r["files_moved"], 1, "{r}");
    assert_eq!(r["moved"][0]["from"], old_c);
    assert_eq!(r["moved"][0]["to"], canon(&new));
    assert_eq!(r["sessions"], 1, "{r}");
    assert_eq!(found(&s, "zqmoved"), [canon(&new)]);
    // Said in words too; the next build has nothing to do.
    fs::rename(&new, home.join("sessions/x.jsonl")).unwrap();
    let out = build(&s, &[], &[]);
    let err = stderr(&out);
    assert!(
        err.contains("moved: ") && err.contains("x.jsonl (indexed there)"),
        "{err}"
    );
    let out = build(&s, &[], &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("index up to date: 1 session, nothing changed"),
        "{text}"
    );
}

#[test]
fn a_session_dir_no_longer_configured_is_kept_until_pruned() {
    let s = Scratch::new();
    let home = s.home();
    let a = home.join("envA");
    let b = home.join("envB");
    session(&a.join("a.jsonl"), "s-a", "zqalpha");
    session(&b.join("b.jsonl"), "s-b", "zqbeta");
    json(&build(
        &s,
        &[("PI_CODING_AGENT_SESSION_DIR", &a)],
        &["--json"],
    ));
    // The variable now names another dir: envA's sessions are not deleted.
    let out = build(&s, &[("PI_CODING_AGENT_SESSION_DIR", &b)], &["--json"]);
    let r = json(&out);
    assert_eq!(r["files_deleted"], 0, "{r}");
    assert_eq!(r["files_stale"], 1, "{r}");
    assert_eq!(
        r["stale_roots"],
        serde_json::json!([{"root": canon(&a), "sessions": 1, "pruned": false}])
    );
    assert_eq!(r["sessions"], 2);
    assert_eq!(found(&s, "zqalpha").len(), 1, "kept and searchable");
    let out = build(&s, &[("PI_CODING_AGENT_SESSION_DIR", &b)], &[]);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "1 session indexed from {}, which this build does not read: kept",
            canon(&a)
        )),
        "{err}"
    );
    assert!(err.contains("--prune"), "{err}");
    // Even once its files are gone, they are not "deleted" silently.
    fs::remove_dir_all(&a).unwrap();
    let r = json(&build(
        &s,
        &[("PI_CODING_AGENT_SESSION_DIR", &b)],
        &["--json"],
    ));
    assert_eq!(r["files_deleted"], 0, "{r}");
    assert_eq!(r["files_stale"], 1, "{r}");
    // --prune removes them.
    let r = json(&build(
        &s,
        &[("PI_CODING_AGENT_SESSION_DIR", &b)],
        &["--json", "--prune"],
    ));
    assert_eq!(r["files_pruned"], 1, "{r}");
    assert_eq!(r["stale_roots"][0]["pruned"], true, "{r}");
    assert_eq!(r["sessions"], 1);
    assert!(found(&s, "zqalpha").is_empty());
    assert_eq!(found(&s, "zqbeta").len(), 1);
}

#[test]
fn a_build_of_some_directories_keeps_the_others() {
    let s = Scratch::new();
    let a: PathBuf = s.dir.path().join("a");
    let b: PathBuf = s.dir.path().join("b");
    session(&a.join("1.jsonl"), "s-1", "zqone");
    session(&b.join("2.jsonl"), "s-2", "zqtwo");
    s.build(&[&a, &b], &[]);
    let r = s.build(&[&a], &[]);
    assert_eq!(r["files_deleted"], 0, "{r}");
    assert_eq!(r["files_stale"], 1, "{r}");
    assert_eq!(r["stale_roots"][0]["root"], canon(&b));
    assert_eq!(r["sessions"], 2);
    assert_eq!(found(&s, "zqtwo").len(), 1);
    // A file deleted inside a directory the build reads is deleted.
    fs::remove_file(a.join("1.jsonl")).unwrap();
    let r = s.build(&[&a], &[]);
    assert_eq!(r["files_deleted"], 1, "{r}");
    assert!(found(&s, "zqone").is_empty());
    // --full rebuilds from what the build reads: the others go.
    let r = s.build(&[&a], &["--full"]);
    assert_eq!(r["sessions"], 0, "{r}");
}

#[test]
fn the_summary_says_what_happened() {
    let s = Scratch::new();
    let a = s.dir.path().join("a");
    session(&a.join("1.jsonl"), "s-1", "zqone");
    let out = run(&mut s.build_cmd(&[&a]));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(
            "indexed 1 session (1 file seen, 0 rejected): 2 messages, 0 damaged lines,"
        ),
        "{text}"
    );
    let out = run(&mut s.build_cmd(&[&a]));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(
            "index up to date: 1 session, nothing changed (1 file seen, 0 rejected, 1 unchanged)"
        ),
        "{text}"
    );
}

/// An Oh My Pi session (a title slot, then what [`session`] writes) with
/// id `id` whose user text is `word`.
fn omp_session(path: &Path, id: &str, word: &str) {
    session(path, id, word);
    let body = fs::read_to_string(path).unwrap();
    fs::write(
        path,
        format!(
            "{{\"type\":\"title\",\"v\":1,\"title\":\"{word} title\",\"source\":\"user\",\"updatedAt\":\"2026-03-01T10:00:00.000Z\",\"pad\":\"   \"}}\n{body}"
        ),
    )
    .unwrap();
}

/// The agent of each session indexed whose first message holds `word`
/// (as `sessions --json` lists them), by file name. (A search would
/// merge their hits: sessions that begin with the same entries are
/// forks of one another.)
fn agents_of(s: &Scratch, word: &str) -> Vec<(String, String)> {
    let out = run(s
        .cmd()
        .args(["sessions", word, "--all", "--json", "--index"])
        .arg(s.index()));
    let mut v: Vec<(String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let h: Value = serde_json::from_str(l).unwrap();
            let path = h["path"].as_str().unwrap();
            (
                Path::new(path)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                h["agent"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn oh_my_pi_s_session_dir_is_read_after_pi_s_and_its_sessions_are_its() {
    let s = Scratch::new();
    let home = s.home();
    session(
        &home.join(".pi/agent/sessions/--home-u-proj--/pi.jsonl"),
        "s-pi",
        "zqboth",
    );
    // Oh My Pi's layout: `-<cwd below home>`; a file with its title slot,
    // and one without (written before 16.3), which its directory says is
    // Oh My Pi's.
    omp_session(
        &home.join(".omp/agent/sessions/-proj/slot.jsonl"),
        "s-omp",
        "zqboth",
    );
    session(
        &home.join(".omp/agent/sessions/-proj/old.jsonl"),
        "s-omp-old",
        "zqboth",
    );
    let r = json(&build(&s, &[], &["--json"]));
    assert_eq!(r["files_indexed"], 3, "{r}");
    let by = agents(&r);
    let omp_dir = home.join(".omp/agent/sessions");
    assert_eq!(
        by.last().unwrap(),
        &(
            omp_dir.to_string_lossy().into_owned(),
            vec!["omp".to_owned()]
        )
    );
    assert_eq!(
        agents_of(&s, "zqboth"),
        [
            ("old.jsonl".to_owned(), "omp".to_owned()),
            ("pi.jsonl".to_owned(), "pi".to_owned()),
            ("slot.jsonl".to_owned(), "omp".to_owned()),
        ]
    );
    let out = build(&s, &[], &["-v", "--full"]);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "read {} (Oh My Pi's default session dir (~/.omp/agent/sessions)) for Oh My Pi\n",
            omp_dir.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "read {} (Pi's default session dir) for Pi\n",
            home.join(".pi/agent/sessions").display()
        )),
        "{err}"
    );
    // The same directory named on the command line is still Oh My Pi's.
    fs::remove_dir_all(s.index()).unwrap();
    let r = s.build(&[&omp_dir.join("-proj")], &[]);
    assert_eq!(r["roots"][0]["agents"], serde_json::json!(["omp"]), "{r}");
    assert_eq!(
        agents_of(&s, "zqboth"),
        [
            ("old.jsonl".to_owned(), "omp".to_owned()),
            ("slot.jsonl".to_owned(), "omp".to_owned()),
        ]
    );
}

#[test]
fn oh_my_pi_s_profile_config_dir_and_xdg_dir_are_read_in_its_precedence() {
    let s = Scratch::new();
    let home = s.home();
    session(
        &home.join(".omp/profiles/work/agent/sessions/-p/a.jsonl"),
        "s-work",
        "zqprofile",
    );
    session(
        &home.join(".omp/agent/sessions/-p/b.jsonl"),
        "s-default",
        "zqdefault",
    );
    // A named profile: its sessions first, the default's still read.
    let r = json(&build(
        &s,
        &[("OMP_PROFILE", Path::new("work"))],
        &["--json"],
    ));
    assert_eq!(r["files_indexed"], 2, "{r}");
    let omp: Vec<(String, String)> = roots(&r)
        .into_iter()
        .filter(|l| l.1.contains("Oh My Pi"))
        .map(|l| (l.0, l.1))
        .collect();
    assert_eq!(
        omp,
        [
            (
                home.join(".omp/profiles/work/agent/sessions")
                    .to_string_lossy()
                    .into_owned(),
                "Oh My Pi's profile work ($OMP_PROFILE)".to_owned()
            ),
            (
                home.join(".omp/agent/sessions")
                    .to_string_lossy()
                    .into_owned(),
                "Oh My Pi's default session dir (~/.omp/agent/sessions)".to_owned()
            ),
        ]
    );
    assert_eq!(
        agents_of(&s, "zqprofile"),
        [("a.jsonl".to_owned(), "omp".to_owned())]
    );
    // PI_PROFILE when OMP_PROFILE is not set; an empty OMP_PROFILE is
    // the default profile, whatever PI_PROFILE says.
    let r = json(&build(
        &s,
        &[("PI_PROFILE", Path::new("work"))],
        &["--json"],
    ));
    assert!(
        roots(&r)
            .iter()
            .any(|l| l.1 == "Oh My Pi's profile work ($PI_PROFILE)"),
        "{r}"
    );
    let r = json(&build(
        &s,
        &[
            ("PI_PROFILE", Path::new("work")),
            ("OMP_PROFILE", Path::new("")),
        ],
        &["--json"],
    ));
    assert!(!roots(&r).iter().any(|l| l.1.contains("profile")), "{r}");
    // A name Oh My Pi refuses: said, and the default profile read.
    let out = build(&s, &[("OMP_PROFILE", Path::new("Bad!"))], &["--json"]);
    let r = json(&out);
    assert!(!roots(&r).iter().any(|l| l.1.contains("profile")), "{r}");
    assert!(
        stderr(&out).contains("$OMP_PROFILE=Bad!: not a profile name Oh My Pi accepts"),
        "{}",
        stderr(&out)
    );
    // $PI_CONFIG_DIR names the config dir below home.
    session(
        &home.join(".ompx/agent/sessions/-p/c.jsonl"),
        "s-cfg",
        "zqconfigdir",
    );
    let r = json(&build(
        &s,
        &[("PI_CONFIG_DIR", Path::new(".ompx"))],
        &["--json"],
    ));
    assert!(
        roots(&r).iter().any(
            |l| l.0 == home.join(".ompx/agent/sessions").to_string_lossy()
                && l.1 == "Oh My Pi's default session dir (~/.ompx/agent/sessions)"
                && l.2
        ),
        "{r}"
    );
    assert_eq!(
        agents_of(&s, "zqconfigdir"),
        [("c.jsonl".to_owned(), "omp".to_owned())]
    );
    // $XDG_DATA_HOME/omp, once it exists, holds the sessions.
    let xdg = s.dir.path().join("xdg");
    session(&xdg.join("omp/sessions/-p/d.jsonl"), "s-xdg", "zqxdg");
    let out = build(&s, &[("XDG_DATA_HOME", &xdg)], &["--json"]);
    let r = json(&out);
    if cfg!(any(target_os = "linux", target_os = "macos")) {
        assert!(
            roots(&r)
                .iter()
                .any(|l| l.0 == xdg.join("omp/sessions").to_string_lossy()
                    && l.1.contains("$XDG_DATA_HOME")),
            "{r}"
        );
        assert_eq!(
            agents_of(&s, "zqxdg"),
            [("d.jsonl".to_owned(), "omp".to_owned())]
        );
    }
}

#[test]
fn a_dir_pi_and_oh_my_pi_share_is_read_once_and_its_files_say_whose_they_are() {
    let s = Scratch::new();
    let agent = s.dir.path().join("agent");
    session(&agent.join("sessions/--p--/pi.jsonl"), "s-pi", "zqshared");
    omp_session(&agent.join("sessions/-p/omp.jsonl"), "s-omp", "zqshared");
    let r = json(&build(&s, &[("PI_CODING_AGENT_DIR", &agent)], &["--json"]));
    assert_eq!(r["files_indexed"], 2, "{r}");
    let by = agents(&r);
    assert_eq!(
        by[0],
        (
            agent.join("sessions").to_string_lossy().into_owned(),
            vec!["pi".to_owned(), "omp".to_owned()]
        ),
        "{by:?}"
    );
    assert_eq!(
        by.iter()
            .filter(|l| l.0 == agent.join("sessions").to_string_lossy())
            .count(),
        1
    );
    assert_eq!(
        agents_of(&s, "zqshared"),
        [
            ("omp.jsonl".to_owned(), "omp".to_owned()),
            ("pi.jsonl".to_owned(), "pi".to_owned()),
        ]
    );
}
