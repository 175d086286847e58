//! Session names are searchable: the `name:` filter, and `pi-index
//! sessions QUERY`, one row per session ranked by its name, its first user
//! message and its matching messages; a rename is found after the next
//! incremental build.

use std::fs;

use serde_json::Value;

use crate::util::{fixtures, run, Scratch};

fn lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn search(s: &Scratch, q: &str) -> Vec<Value> {
    lines(&run(s
        .cmd()
        .args(["search", q, "--json", "-n", "1000", "--index"])
        .arg(s.index())))
}

fn sessions(s: &Scratch, q: &str) -> Vec<Value> {
    lines(&run(s
        .cmd()
        .args(["sessions", q, "--json", "--index"])
        .arg(s.index())))
}

const RENAMED: &str = "7f1a5b9c-3d7e-4f1a-9b5c-3d7e1f5a9b3c"; // "Flaky socket test: fixed"

#[test]
fn the_name_filter_finds_the_messages_of_sessions_so_named() {
    let s = Scratch::new();
    s.build(&[&fixtures()], &[]);
    let ids = |hits: &[Value]| -> std::collections::BTreeSet<String> {
        hits.iter()
            .map(|h| h["session_id"].as_str().unwrap().to_owned())
            .collect()
    };
    let named = search(&s, "name:socket");
    assert_eq!(named.len(), 4, "{named:?}");
    assert_eq!(ids(&named), [RENAMED.to_owned()].into());
    // Words in any order, case folded; every word must be there.
    assert_eq!(
        ids(&search(&s, r#"name:"FIXED flaky""#)),
        [RENAMED.to_owned()].into()
    );
    assert!(search(&s, r#"name:"flaky nowhere""#).is_empty());
    // Operators apply to it as to any filter.
    let not_named = search(&s, "port -name:socket");
    assert!(!ids(&not_named).contains(RENAMED), "{not_named:?}");
    assert_eq!(
        ids(&search(&s, "port name:socket")),
        [RENAMED.to_owned()].into()
    );
    // A cleared name is no name.
    assert!(search(&s, "name:renamed").is_empty());
    // No value is an error that says what is accepted.
    let out = run(s.cmd().args(["search", "name:", "--index"]).arg(s.index()));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("name: needs a value"));
}

#[test]
fn sessions_query_ranks_names_then_first_messages_then_messages() {
    let s = Scratch::new();
    s.build(&[&fixtures()], &[]);
    let rows = sessions(&s, "flaky");
    assert!(rows.len() >= 3, "{rows:?}");
    // One row per session.
    let ids: Vec<&str> = rows
        .iter()
        .map(|r| r["session_id"].as_str().unwrap())
        .collect();
    let unique: std::collections::BTreeSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    // The session named so first, then the one whose first message says
    // it, then those where only a later message does.
    assert_eq!(rows[0]["session_id"], RENAMED);
    assert_eq!(rows[0]["matched"], "name");
    assert_eq!(rows[1]["matched"], "title", "{}", rows[1]);
    assert!(rows[1]["title"]
        .as_str()
        .unwrap()
        .to_lowercase()
        .contains("flaky"));
    for r in &rows[2..] {
        assert_eq!(r["matched"], "messages", "{r}");
        assert!(r["matches"].as_u64().unwrap() >= 1);
        assert!(
            r["hit"]["snippet"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("flaky"),
            "{r}"
        );
        assert_eq!(r["snippet"], r["hit"]["snippet"]);
    }
    // Nothing found: exit 1.
    let out = run(s
        .cmd()
        .args(["sessions", "zqnothinghere", "--index"])
        .arg(s.index()));
    assert_eq!(out.status.code(), Some(1));
    // Human rows: label, directory, matches, id, then the best hit.
    let out = run(s
        .cmd()
        .args(["sessions", "flaky", "-n", "1", "--index"])
        .arg(s.index()));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.contains("Flaky socket test: fixed") && text.contains(RENAMED),
        "{text}"
    );
}

#[test]
fn a_rename_is_found_after_the_next_incremental_build() {
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.jsonl");
    let head = concat!(
        r#"{"type":"session","version":3,"id":"rn-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
        "\n",
        r#"{"type":"session_info","id":"n1","parentId":null,"timestamp":"2026-01-01T00:00:00.500Z","name":"zqfirstname"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":"n1","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hello"}}"#,
        "\n",
    );
    fs::write(&file, head).unwrap();
    s.build(&[&dir], &[]);
    assert_eq!(sessions(&s, "zqfirstname").len(), 1);
    let mut text = fs::read_to_string(&file).unwrap();
    text.push_str(concat!(
        r#"{"type":"session_info","id":"n2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","name":"zqsecondname"}"#,
        "\n"
    ));
    fs::write(&file, text).unwrap();
    let r = s.build(&[&dir], &[]);
    assert_eq!(r["files_grown"], 1, "{r}");
    assert!(sessions(&s, "zqfirstname").is_empty());
    let rows = sessions(&s, "zqsecondname");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["session_name"], "zqsecondname");
    assert_eq!(search(&s, "name:zqsecondname").len(), 1);
    assert!(search(&s, "name:zqfirstname").is_empty());
}
