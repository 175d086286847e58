//! Forks and copies (the format page's "Forks" section): a message copied
//! into forks is one hit, shown at the oldest session holding it, with its
//! copies listed; every session knows its parent and forks; and the next
//! build leaves the same hits and families as a fresh one.
//!
//! Files: `fixtures/forks/` (hand-made: an older fork without
//! `parentSession`, a stated fork whose parent moved and whose copy was
//! edited after the fork, a fork whose parent is not indexed, an unrelated
//! session sharing entry ids by chance), and sessions written by Pi 1.6's
//! own `createBranchedSession` and `forkFrom` (`scripts/pi/write-forks.mjs`).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{json_lines, reference, run, Scratch};

fn forks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/forks")
}

const PARENT: &str = "f0a1b2c3-0000-4000-8000-000000000001";
const INFERRED: &str = "f0a1b2c3-0000-4000-8000-0000000000aa";
const EDITED: &str = "f0a1b2c3-0000-4000-8000-0000000000bb";
const ORPHAN: &str = "f0a1b2c3-0000-4000-8000-0000000000cc";
const UNRELATED: &str = "f0a1b2c3-0000-4000-8000-0000000000dd";

fn built() -> Scratch {
    let s = Scratch::new();
    let r = s.build(&[&forks_dir()], &[]);
    assert_eq!(r["files_indexed"], 5, "{r}");
    s
}

/// A hit as (session id, line, [(copy session id, copy line)]).
type Found = (String, u64, Vec<(String, u64)>);

/// Each hit of `query`.
fn hits(s: &Scratch, query: &str, extra: &[&str]) -> Vec<Found> {
    s.search_json(query, extra)
        .iter()
        .map(|h| {
            let copies = h["copies"]
                .as_array()
                .unwrap_or_else(|| panic!("no copies in {h}"))
                .iter()
                .map(|c| {
                    (
                        c["session_id"].as_str().unwrap().to_owned(),
                        c["line"].as_u64().unwrap(),
                    )
                })
                .collect();
            (
                h["session_id"].as_str().unwrap().to_owned(),
                h["line"].as_u64().unwrap(),
                copies,
            )
        })
        .collect()
}

fn id(s: &str) -> String {
    s.to_owned()
}

#[test]
fn a_copied_message_is_one_hit_at_the_oldest_session_with_its_copies() {
    let s = built();
    assert_eq!(
        hits(&s, "zqforkshared", &[]),
        [(id(PARENT), 2, vec![(id(INFERRED), 2), (id(EDITED), 2)])]
    );
    assert_eq!(
        hits(&s, "zqforkanswer", &[]),
        [(id(PARENT), 3, vec![(id(INFERRED), 3), (id(EDITED), 3)])]
    );
    // The copy's copies have the copy's paths.
    let h = &s.search_json("zqforkshared", &[])[0];
    assert!(
        h["path"].as_str().unwrap().ends_with("fork-parent.jsonl"),
        "{h}"
    );
    assert!(
        h["copies"][1]["path"]
            .as_str()
            .unwrap()
            .ends_with("fork-edited-copy.jsonl"),
        "{h}"
    );
}

#[test]
fn copies_shows_every_copy_as_its_own_hit() {
    let s = built();
    let mut got = hits(&s, "zqforkshared", &["--copies"]);
    got.sort();
    assert_eq!(
        got,
        [
            (id(PARENT), 2, vec![]),
            (id(INFERRED), 2, vec![]),
            (id(EDITED), 2, vec![]),
        ]
    );
}

#[test]
fn a_copy_edited_after_the_fork_and_ids_shared_by_chance_are_never_merged() {
    let s = built();
    let sorted = |q: &str| {
        let mut v = hits(&s, q, &[]);
        v.sort();
        v
    };
    // The edited answer: its own hit, as is the original.
    assert_eq!(
        sorted("zqforktimeout"),
        [(id(PARENT), 5, vec![]), (id(EDITED), 5, vec![])]
    );
    // The same id and the same text in an unrelated session.
    assert_eq!(
        sorted("zqforkyes"),
        [(id(PARENT), 6, vec![]), (id(UNRELATED), 4, vec![])]
    );
    // The same id with other text.
    assert_eq!(hits(&s, "zqforkcollide", &[]), [(id(UNRELATED), 3, vec![])]);
}

#[test]
fn filters_are_honoured_per_copy() {
    let s = built();
    // Only the edited fork is in /home/u/forks-b: the hit is its copy.
    assert_eq!(
        hits(&s, "zqforkshared", &["--cwd", "/home/u/forks-b"]),
        [(id(EDITED), 2, vec![])]
    );
    assert_eq!(
        hits(&s, "zqforkshared cwd:/home/u/forks", &[]),
        [(id(PARENT), 2, vec![(id(INFERRED), 2)])]
    );
    assert_eq!(
        hits(&s, "zqforkshared", &["--session", INFERRED]),
        [(id(INFERRED), 2, vec![])]
    );
}

#[test]
fn counts_and_pages_are_of_hits_after_merging() {
    let s = built();
    // Every message of the family: parent 5, inferred fork 3 (2 copies),
    // edited fork 4 (3 copies): 7 distinct messages.
    let all = hits(&s, &format!("* family:{INFERRED}"), &["--sort", "oldest"]);
    assert_eq!(all.len(), 7, "{all:?}");
    let copies: usize = all.iter().map(|h| h.2.len()).sum();
    assert_eq!(copies, 5, "{all:?}");
    assert_eq!(
        hits(&s, &format!("* family:{INFERRED}"), &["--copies"]).len(),
        12
    );
    // Pages cut from the merged order: the same hits, each once.
    let mut paged = Vec::new();
    for offset in 0..7 {
        let o = offset.to_string();
        let page = hits(
            &s,
            &format!("* family:{INFERRED}"),
            &["--sort", "oldest", "-n", "1", "--offset", &o],
        );
        assert_eq!(page.len(), 1, "offset {offset}");
        paged.extend(page);
    }
    assert_eq!(paged, all);
    // The text output says how many hits there are after merging.
    let out = run(s
        .cmd()
        .args(["search", "-n", "2", "--color", "never", "--index"])
        .arg(s.index())
        .arg(format!("* family:{PARENT}")));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 of 7 hits shown"), "{text}");
}

#[test]
fn text_output_says_how_many_forks_hold_the_message() {
    let s = built();
    let out = run(s
        .cmd()
        .args(["search", "--color", "never", "--index"])
        .arg(s.index())
        .arg("zqforkshared"));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("line 2"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("[also in 2 forks]: How do I retry a flaky test? zqforkshared"),
        "{line}"
    );
}

/// `sessions --json`, by session id.
fn sessions(s: &Scratch, extra: &[&str]) -> Vec<Value> {
    let out = run(s
        .cmd()
        .args(["sessions", "--json", "--index"])
        .arg(s.index())
        .args(extra));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    json_lines(&out)
}

fn family_of(rows: &[Value], session: &str) -> (Value, Vec<String>) {
    let row = rows
        .iter()
        .find(|r| r["session_id"] == session)
        .unwrap_or_else(|| panic!("{session} not listed"));
    let mut parent = row["parent"].clone();
    if let Some(p) = parent.get_mut("path") {
        // Indexed parents are named by where they are indexed.
        let name = p.as_str().unwrap().rsplit('/').next().unwrap().to_owned();
        *p = Value::String(name);
    }
    let forks = row["forks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["session"].as_str().unwrap().to_owned())
        .collect();
    (parent, forks)
}

#[test]
fn every_session_knows_its_parent_and_its_forks() {
    let s = built();
    let rows = sessions(&s, &[]);
    assert_eq!(rows.len(), 5);
    assert_eq!(
        family_of(&rows, PARENT),
        (Value::Null, vec![id(INFERRED), id(EDITED)])
    );
    assert_eq!(
        family_of(&rows, INFERRED),
        (
            json!({"session": PARENT, "path": "fork-parent.jsonl", "how": "inferred"}),
            vec![]
        )
    );
    // Stated, and found where it moved to (by the id in the named file's
    // name).
    assert_eq!(
        family_of(&rows, EDITED),
        (
            json!({"session": PARENT, "path": "fork-parent.jsonl", "how": "stated"}),
            vec![]
        )
    );
    // Not indexed: kept as the path the header names.
    assert_eq!(
        family_of(&rows, ORPHAN),
        (
            json!({"session": null, "path": "2026-02-01T10-00-00-000Z_9999aaaa-0000-4000-8000-000000000009.jsonl", "how": "stated"}),
            vec![]
        )
    );
    assert_eq!(family_of(&rows, UNRELATED), (Value::Null, vec![]));
}

#[test]
fn sessions_threads_draws_forks_under_their_parent() {
    let s = built();
    let out = run(s
        .cmd()
        .args(["sessions", "--threads", "--color", "never", "--index"])
        .arg(s.index()));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    // Newest activity first (copies keep their times: the edited fork's
    // last message is of the parent's day); forks under their parent,
    // newest first too.
    let got: Vec<(bool, String)> = text
        .lines()
        .map(|l| {
            let id = l.split_whitespace().last().unwrap().to_owned();
            (l.contains("└ "), id)
        })
        .collect();
    assert_eq!(
        got,
        [
            (false, id(UNRELATED)),
            (false, id(ORPHAN)),
            (false, id(PARENT)),
            (true, id(INFERRED)),
            (true, id(EDITED)),
        ],
        "{text}"
    );
}

#[test]
fn show_says_where_a_session_was_forked_from() {
    let s = built();
    let show = |id: &str| {
        let out = run(s.cmd().args(["show", id, "--index"]).arg(s.index()));
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let edited = show(EDITED);
    assert!(
        edited.contains(&format!("forked from {PARENT} at entry 1e000003  file ")),
        "{edited}"
    );
    let inferred = show(INFERRED);
    assert!(
        inferred.contains(&format!(
            "forked from {PARENT} at entry 1e000002 (inferred: it begins with the same entries)"
        )),
        "{inferred}"
    );
    let parent = show(PARENT);
    assert!(
        parent.contains(&format!("2 forks: {INFERRED}, {EDITED}")),
        "{parent}"
    );
    let orphan = show(ORPHAN);
    assert!(
        orphan.contains("forked from /home/u/.pi/agent/sessions/--home-u-gone--/2026-02-01T10-00-00-000Z_9999aaaa-0000-4000-8000-000000000009.jsonl (not indexed)"),
        "{orphan}"
    );
}

#[test]
fn stats_counts_messages_and_copies() {
    let s = built();
    let out = run(s.cmd().args(["stats", "--json", "--index"]).arg(s.index()));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // 5 + 3 + 4 + 2 + 3 documents; 2 + 3 of them copies.
    assert_eq!(v["messages"], 17, "{v}");
    assert_eq!(v["copies"], 5, "{v}");
    assert_eq!(v["forks"], 3, "{v}");
}

/// What a build leaves: every hit of each word (with its copies) and
/// every session's family.
fn observed(s: &Scratch, words: &[&str]) -> Value {
    let mut found = serde_json::Map::new();
    for w in words {
        // As a set: hits of equal score and time are in index order,
        // which differs between an index built once and one built in steps.
        let mut hits: Vec<Value> = s
            .search_json(w, &[])
            .into_iter()
            .map(|h| {
                json!({
                    "path": h["path"],
                    "line": h["line"],
                    "copies": h["copies"],
                })
            })
            .collect();
        hits.sort_by_key(|h| h.to_string());
        found.insert((*w).to_owned(), Value::Array(hits));
    }
    let mut rows: Vec<Value> = sessions(s, &[])
        .into_iter()
        .map(|r| json!({"path": r["path"], "parent": r["parent"], "forks": r["forks"]}))
        .collect();
    rows.sort_by_key(|r| r["path"].to_string());
    json!({"hits": found, "sessions": rows})
}

const WORDS: [&str; 6] = [
    "zqforkshared",
    "zqforkanswer",
    "zqforktimeout",
    "zqforkinferredown",
    "zqforkgrown",
    "zqforkyes",
];

/// The incremental index at `s` equals a fresh build of `dir`.
fn same_as_fresh(s: &Scratch, dir: &Path, step: &str) -> Value {
    let fresh = Scratch::new();
    fresh.build(&[dir], &[]);
    let (a, b) = (observed(s, &WORDS), observed(&fresh, &WORDS));
    assert_eq!(
        a, b,
        "{step}: the incremental index differs from a fresh build"
    );
    a
}

#[test]
fn the_next_build_leaves_the_same_hits_and_families_as_a_fresh_build() {
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    let proj = dir.join("--home-u-forks--");
    fs::create_dir_all(&proj).unwrap();
    let put = |name: &str| {
        fs::copy(forks_dir().join(name), proj.join(name)).unwrap();
    };
    // A fork indexed before its parent (and an older one inferred).
    put("fork-inferred-no-parent-session.jsonl");
    s.build(&[&dir], &[]);
    let alone = same_as_fresh(&s, &dir, "fork alone");
    assert_eq!(alone["hits"]["zqforkshared"][0]["copies"], json!([]));
    // The parent arrives in a later build.
    put("fork-parent.jsonl");
    s.build(&[&dir], &[]);
    let v = same_as_fresh(&s, &dir, "parent after its fork");
    assert_eq!(v["hits"]["zqforkshared"].as_array().unwrap().len(), 1);
    // A stated fork written after its parent was indexed.
    let edited = proj.join("fork-edited-copy.jsonl");
    put("fork-edited-copy.jsonl");
    s.build(&[&dir], &[]);
    let v = same_as_fresh(&s, &dir, "fork after its parent");
    assert_eq!(
        v["hits"]["zqforkshared"][0]["copies"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // The fork grows past the copied part.
    let mut f = fs::OpenOptions::new().append(true).open(&edited).unwrap();
    std::io::Write::write_all(
        &mut f,
        br#"{"type":"message","id":"5c000005","parentId":"1e000004","timestamp":"2026-03-03T10:00:05.000Z","message":{"role":"user","content":"It grew zqforkgrown zqforkshared","timestamp":1772532005000}}
"#,
    )
    .unwrap();
    drop(f);
    let r = s.build(&[&dir], &[]);
    assert_eq!(r["files_grown"], 1, "{r}");
    let v = same_as_fresh(&s, &dir, "fork grown");
    assert_eq!(v["hits"]["zqforkgrown"].as_array().unwrap().len(), 1);
    // The parent moves: its forks follow it.
    let moved = dir.join("--home-u-elsewhere--");
    fs::create_dir_all(&moved).unwrap();
    fs::rename(
        proj.join("fork-parent.jsonl"),
        moved.join("fork-parent.jsonl"),
    )
    .unwrap();
    s.build(&[&dir], &[]);
    let v = same_as_fresh(&s, &dir, "parent moved");
    assert_eq!(
        v["hits"]["zqforkshared"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["path"].as_str().unwrap().contains("elsewhere"))
            .count(),
        1,
        "{v}"
    );
    // The parent is deleted: the forks keep their copies, each once per
    // family (the stated fork's parent is now a path; the inferred fork
    // is on its own).
    fs::remove_file(moved.join("fork-parent.jsonl")).unwrap();
    s.build(&[&dir], &[]);
    same_as_fresh(&s, &dir, "parent deleted");
}

#[test]
fn pi16_forks_are_one_hit_and_know_their_parent() {
    let Some(pi) = reference::pi() else { return };
    let s = Scratch::new();
    let out = s.dir.path().join("pi16");
    let m = pi.write_forks(&out, &s.dir.path().join("node-home"));
    let r = s.build(&[&out], &[]);
    assert_eq!(r["files_indexed"], 3, "{r}");
    let (parent, fork, clone) = (&m["parent"], &m["fork"], &m["clone"]);
    let pid = parent["id"].as_str().unwrap();
    let fid = fork["id"].as_str().unwrap();
    let cid = clone["id"].as_str().unwrap();
    // Lines: header, system, model_change, then the four shared messages.
    for (n, word) in [
        "forkshared01",
        "forkshared02",
        "forkshared03",
        "forkshared04",
    ]
    .into_iter()
    .enumerate()
    {
        let got = s.search_json(word, &[]);
        assert_eq!(got.len(), 1, "{word}: {got:?}");
        let h = &got[0];
        assert_eq!(h["session_id"], pid, "{word}");
        assert_eq!(h["entry_id"], m["shared"][n], "{word}");
        assert_eq!(h["line"], 4 + n as u64, "{word}");
        let copies: Vec<(&str, u64)> = h["copies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["session_id"].as_str().unwrap(),
                    c["line"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(copies, [(fid, 4 + n as u64), (cid, 4 + n as u64)], "{word}");
    }
    // The parent's own continuation is in the clone too, not in the fork.
    let own = hits(&s, "forkparent05", &[]);
    assert_eq!(
        own,
        [
            (id(pid), 8, vec![(id(cid), 8)]),
            (id(pid), 9, vec![(id(cid), 9)])
        ]
    );
    assert_eq!(hits(&s, "forkone06", &[]).len(), 2);
    // The clone is in another directory: a search there shows its copy.
    assert_eq!(
        hits(&s, "forkshared01", &["--cwd", "/home/u/fork-other"]),
        [(id(cid), 4, vec![])]
    );
    let rows = sessions(&s, &[]);
    let (p, forks) = family_of(&rows, pid);
    assert_eq!(p, Value::Null);
    assert_eq!(forks, [id(fid), id(cid)]);
    let parent_name = parent["path"].as_str().unwrap().rsplit('/').next().unwrap();
    for child in [fid, cid] {
        assert_eq!(
            family_of(&rows, child),
            (
                json!({"session": pid, "path": parent_name, "how": "stated"}),
                vec![]
            )
        );
    }
    let out = run(s.cmd().args(["show", fid, "--index"]).arg(s.index()));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "forked from {pid} at entry {}",
            m["shared"][3].as_str().unwrap()
        )),
        "{text}"
    );
}

#[test]
fn sessions_query_rows_say_where_else_their_hit_is() {
    let s = built();
    let rows = sessions(&s, &["zqforkshared"]);
    let copies = |id: &str| -> Vec<String> {
        let row = rows.iter().find(|r| r["session_id"] == id).unwrap();
        row["hit"]["copies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["session_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(rows.len(), 3);
    assert_eq!(copies(PARENT), [id(INFERRED), id(EDITED)]);
    assert_eq!(copies(INFERRED), [id(PARENT), id(EDITED)]);
    assert_eq!(copies(EDITED), [id(PARENT), id(INFERRED)]);
    let out = run(s
        .cmd()
        .args(["sessions", "--color", "never", "--index"])
        .arg(s.index())
        .arg("zqforkshared"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.matches("line 2 [also in 2 forks]: ").count(),
        3,
        "{text}"
    );
}

#[test]
fn parents_that_name_each_other_are_one_family_and_nothing_loops() {
    // Edited by hand (or by a tool): each header names the other file.
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    let write = |path: &Path, id: &str, other: &Path, day: u32| {
        let msg = |eid: &str, text: &str| {
            format!(
                r#"{{"type":"message","id":"{eid}","parentId":null,"timestamp":"2026-04-0{day}T10:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":0}}}}"#
            )
        };
        let header = format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-04-0{day}T10:00:00.000Z","cwd":"/home/u/loop","parentSession":"{}"}}"#,
            other.display()
        );
        fs::write(
            path,
            format!(
                "{header}\n{}\n",
                msg("9c000001", "the same first question zqforkloop")
            ),
        )
        .unwrap();
    };
    write(&a, "loop-a", &b, 1);
    write(&b, "loop-b", &a, 2);
    s.build(&[&dir], &[]);
    // One message in one family: one hit, at the older session.
    assert_eq!(
        hits(&s, "zqforkloop", &[]),
        [(id("loop-a"), 2, vec![(id("loop-b"), 2)])]
    );
    let out = run(s
        .cmd()
        .args(["sessions", "--threads", "--color", "never", "--index"])
        .arg(s.index()));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 2, "{text}");
    let out = run(s.cmd().args(["show", "loop-a", "--index"]).arg(s.index()));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_generated_corpus_with_forks_has_one_hit_per_distinct_message() {
    // Every linear session forked one to three times (the benchmark's
    // share is a tenth; all of them here, so that every planted word can
    // be copied).
    let s = Scratch::new();
    let corpus = s.dir.path().join("corpus");
    let m = crate::corpus::generate_with(&corpus, "3MB", "11", &["--fork-share", "1"]);
    let (totals, forks) = (&m["totals"], &m["forks"]);
    assert!(forks["forks"].as_u64().unwrap() >= 5, "{forks}");
    let r = s.build(&[&corpus], &[]);
    assert_eq!(
        r["files_indexed"].as_u64().unwrap(),
        totals["files"].as_u64().unwrap() + forks["forks"].as_u64().unwrap()
    );
    let copied = forks["copiedDocuments"].as_u64().unwrap();
    assert_eq!(
        r["messages_indexed"].as_u64().unwrap(),
        totals["documents"].as_u64().unwrap() + copied + forks["ownDocuments"].as_u64().unwrap()
    );
    // Each planted word is one message: one hit, at the session it was
    // planted in, whatever forks copied it.
    let mut copies_seen = 0;
    for p in m["planted"].as_array().unwrap() {
        let token = p["token"].as_str().unwrap();
        let got = s.search_json(token, &[]);
        assert_eq!(got.len(), 1, "{token}: {got:?}");
        assert!(
            got[0]["path"]
                .as_str()
                .unwrap()
                .ends_with(p["file"].as_str().unwrap()),
            "{token}: {got:?}"
        );
        assert_eq!(got[0]["line"], p["line"], "{token}");
        let n = got[0]["copies"].as_array().unwrap().len();
        assert_eq!(s.search_json(token, &["--copies"]).len(), 1 + n, "{token}");
        copies_seen += n;
    }
    assert!(copies_seen > 0, "no planted word was copied into a fork");
    let out = run(s.cmd().args(["stats", "--json", "--index"]).arg(s.index()));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["copies"].as_u64().unwrap(), copied, "{v}");
    assert_eq!(v["forks"], forks["forks"], "{v}");
}

/// Every search of `queries` in every order and page, as the library
/// gives it (hits as JSON, and the total), and whether each merged its
/// copies by the groups the build saved.
fn searched(index: &Path, queries: &[(&str, Option<&str>)]) -> (Vec<Value>, Vec<bool>) {
    use pi_index::read::SearchRequest;
    use pi_index::search::query::filters::Key;
    use pi_index::search::query::{Now, Sort};
    let local = pi_index::search::Local::open(index).unwrap();
    let now = Now::system();
    let mut out = Vec::new();
    let mut by_groups = Vec::new();
    for (query, role) in queries {
        for sort in [Sort::Relevance, Sort::Newest, Sort::Oldest] {
            for (limit, offset) in [(20, 0), (7, 13), (1000, 0)] {
                let mut filters = pi_index::search::query::Filters::default();
                if let Some(role) = role {
                    filters.add(Key::Role, role, &now).unwrap();
                }
                let req = SearchRequest {
                    query: (*query).to_owned(),
                    filters,
                    sort,
                    limit,
                    offset,
                    snippet_chars: 80,
                    now: Now::system(),
                    copies: false,
                };
                let got = local.search(&req).unwrap();
                by_groups.push(local.merges_by_saved_groups(&req).unwrap());
                out.push(json!({
                    "query": query, "role": role, "sort": format!("{sort:?}"),
                    "limit": limit, "offset": offset, "total": got.total,
                    "hits": serde_json::to_value(&got.hits).unwrap(),
                }));
            }
        }
    }
    (out, by_groups)
}

#[test]
fn saved_copy_groups_give_exactly_the_hits_merged_at_search_time() {
    // Generated forks (every session forked one to three times) beside
    // the hand-made ones: an edited copy, ids shared by chance, an
    // inferred fork, a parent that is not indexed.
    let s = Scratch::new();
    let corpus = s.dir.path().join("corpus");
    let m = crate::corpus::generate_with(&corpus, "2MB", "11", &["--fork-share", "1"]);
    s.build(&[&corpus, &forks_dir()], &[]);
    let groups = s.index().join("copy-groups.bin");
    assert!(groups.is_file(), "the build saved no copy groups");
    let planted: Vec<String> = m["planted"].as_array().unwrap()[..4]
        .iter()
        .map(|p| p["token"].as_str().unwrap().to_owned())
        .collect();
    let mut queries: Vec<(&str, Option<&str>)> = vec![
        ("the", None),
        ("error", None),
        ("file index", None),
        ("\"the file\"", None),
        ("the -file", None),
        ("error OR shared", None),
        ("role:user the", None),
        ("the", Some("assistant")),
        ("after:2020-01-01 the", None),
        ("before:2020-01-01 the", None),
        ("shared", None),
        ("", None),
    ];
    for p in &planted {
        queries.push((p, None));
    }
    let (saved, by_groups) = searched(&s.index(), &queries);
    assert!(
        by_groups.iter().all(|b| *b),
        "a query of words and role/time filters merged at search time"
    );
    // The merging had something to do: some hit lists copies, and some
    // count is below the count of every copy.
    assert!(saved.iter().any(|r| r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["copies"].as_array().is_some_and(|c| !c.is_empty()))));
    let every = s.search_json("the", &["--copies"]).len();
    let the = saved
        .iter()
        .find(|r| r["query"] == "the" && r["limit"] == 1000 && r["role"].is_null())
        .unwrap();
    assert!(
        (the["total"].as_u64().unwrap() as usize) < every,
        "{} hits merged, {every} copies",
        the["total"]
    );
    // What copies may differ in is merged at search time.
    let local = pi_index::search::Local::open(&s.index()).unwrap();
    for query in ["cwd:/tmp the", "branch:active the", "family:loop-a the"] {
        let req = pi_index::read::SearchRequest {
            query: query.into(),
            filters: Default::default(),
            sort: Default::default(),
            limit: 20,
            offset: 0,
            snippet_chars: 80,
            now: pi_index::search::query::Now::system(),
            copies: false,
        };
        assert!(!local.merges_by_saved_groups(&req).unwrap(), "{query}");
    }
    drop(local);

    // Without the file, every search merges at search time: the same.
    fs::remove_file(&groups).unwrap();
    let (merged, by_groups) = searched(&s.index(), &queries);
    assert!(by_groups.iter().all(|b| !*b));
    assert_eq!(saved.len(), merged.len());
    for (a, b) in saved.iter().zip(&merged) {
        assert_eq!(a, b);
    }
}

/// A session folder indexed beside two backups of it: most documents of
/// every segment are copies, so a search's total is counted in one walk
/// of the matches, each one's bit looked at (`Groups::matching_ahead`).
/// Every search gives what merging at search time gives.
#[test]
fn a_folder_and_its_backups_count_each_message_once() {
    let s = Scratch::new();
    let corpus = s.dir.path().join("corpus");
    crate::corpus::generate_with(&corpus, "2MB", "12", &[]);
    for copy in ["backup-1", "backup-2"] {
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(&corpus)
            .arg(s.dir.path().join(copy))
            .status()
            .unwrap();
        assert!(status.success());
    }
    let folders = ["corpus", "backup-1", "backup-2"].map(|f| s.dir.path().join(f));
    s.build(
        &folders.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
        &[],
    );
    // Two of every three messages stand behind their first copy: more
    // than half of the documents, session records included.
    let out = run(s.cmd().args(["stats", "--json", "--index"]).arg(s.index()));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (copies, messages) = (
        v["copies"].as_u64().unwrap(),
        v["messages"].as_u64().unwrap(),
    );
    let sessions = v["sessions"].as_u64().unwrap();
    assert!(2 * copies > messages + sessions, "{v}");
    let queries: Vec<(&str, Option<&str>)> = vec![
        ("the", None),
        ("file index", None),
        ("error OR shared", None),
        ("role:user the", None),
        ("the", Some("assistant")),
        ("", None),
    ];
    let (saved, by_groups) = searched(&s.index(), &queries);
    assert!(by_groups.iter().all(|b| *b));
    let the = saved
        .iter()
        .find(|r| r["query"] == "the" && r["limit"] == 1000 && r["role"].is_null())
        .unwrap();
    let every = s.search_json("the", &["--copies", "-n", "100000"]).len() as u64;
    assert!(
        2 * the["total"].as_u64().unwrap() < every,
        "{} merged of {every} copies",
        the["total"]
    );
    fs::remove_file(s.index().join("copy-groups.bin")).unwrap();
    let (merged, by_groups) = searched(&s.index(), &queries);
    assert!(by_groups.iter().all(|b| !*b));
    assert_eq!(saved, merged);
}

#[test]
fn copy_groups_of_another_state_are_not_used_and_a_build_with_nothing_to_index_saves_them_again() {
    let s = Scratch::new();
    let corpus = s.dir.path().join("corpus");
    crate::corpus::generate_with(&corpus, "1MB", "12", &["--fork-share", "1"]);
    s.build(&[&forks_dir()], &[]);
    let groups = s.index().join("copy-groups.bin");
    let old = fs::read(&groups).unwrap();
    s.build(&[&forks_dir(), &corpus], &[]);
    let searched_with = |what: &str| {
        let local = pi_index::search::Local::open(&s.index()).unwrap();
        let req = pi_index::read::SearchRequest {
            query: "the".into(),
            filters: Default::default(),
            sort: Default::default(),
            limit: 1000,
            offset: 0,
            snippet_chars: 80,
            now: pi_index::search::query::Now::system(),
            copies: false,
        };
        let by_groups = local.merges_by_saved_groups(&req).unwrap();
        let got = local.search(&req).unwrap();
        eprintln!("{what}: {} hits", got.total);
        (
            by_groups,
            got.total,
            serde_json::to_value(&got.hits).unwrap(),
        )
    };
    let current = searched_with("current");
    assert!(current.0, "the build's own groups were not used");
    let current_bytes = fs::read(&groups).unwrap();
    // The first build's groups, for segments that are gone: ignored.
    fs::write(&groups, &old).unwrap();
    let stale = searched_with("stale file");
    assert!(!stale.0, "groups of another state were used");
    assert_eq!((current.1, &current.2), (stale.1, &stale.2));
    // A file cut short: ignored too.
    fs::write(&groups, &current_bytes[..current_bytes.len() / 2]).unwrap();
    let cut = searched_with("cut file");
    assert!(!cut.0);
    assert_eq!((current.1, &current.2), (cut.1, &cut.2));
    // A build with nothing to index saves them again, whole, for the
    // state the index shows, and commits nothing: from a stale file, a
    // cut one, one of version 2 (whose groups were followed by more
    // bytes) and none at all.
    let meta = fs::read(s.index().join("meta.json")).unwrap();
    let mut version_2 = current_bytes.clone();
    version_2[..23].copy_from_slice(b"pi-index copy groups 2\n");
    version_2.extend_from_slice(&[0; 8]);
    let cut_bytes = current_bytes[..current_bytes.len() - 1].to_vec();
    // Version 3: the same groups without the bits and their checksum.
    let parts = Parts::of(&current_bytes);
    // Version 3: the same groups without the bits, their checksum and the
    // sessions' names, and two counts fewer.
    let mut version_3 = b"pi-index copy groups 3\n".to_vec();
    version_3.extend_from_slice(&current_bytes[23..parts.bits - 8]);
    version_3.extend_from_slice(&current_bytes[parts.leads..parts.sessions]);
    // A bit changed: its checksum no longer holds.
    let mut changed_bit = current_bytes.clone();
    changed_bit[parts.bits] ^= 1;
    for (what, bytes) in [
        ("stale", Some(old)),
        ("cut", Some(cut_bytes)),
        ("version 2", Some(version_2)),
        ("version 3", Some(version_3)),
        ("a bit changed", Some(changed_bit)),
        ("none", None),
    ] {
        match bytes {
            Some(b) => fs::write(&groups, b).unwrap(),
            None => fs::remove_file(&groups).unwrap(),
        }
        assert!(!searched_with(what).0, "{what}: used before the build");
        s.build(&[&forks_dir(), &corpus], &[]);
        assert_eq!(fs::read(&groups).unwrap(), current_bytes, "{what}");
        assert_eq!(
            fs::read(s.index().join("meta.json")).unwrap(),
            meta,
            "{what}"
        );
        let again = searched_with(what);
        assert!(again.0, "{what}: not used after the build");
        assert_eq!((current.1, &current.2), (again.1, &again.2));
    }
    // A file that holds the state is left as it is.
    let before = fs::metadata(&groups).unwrap().modified().unwrap();
    s.build(&[&forks_dir(), &corpus], &[]);
    assert_eq!(fs::metadata(&groups).unwrap().modified().unwrap(), before);

    // A table that names documents the index does not hold, or sessions
    // it does not have (its bits and their checksum intact, so the file
    // is opened): a hit's copies are looked up in it, found damaged, and
    // the search merges at search time instead, with the same hits.
    let some_copies = |hits: &Value| {
        hits.as_array()
            .unwrap()
            .iter()
            .any(|h| h["copies"].as_array().is_some_and(|c| !c.is_empty()))
    };
    assert!(some_copies(&current.2), "no hit has copies to look up");
    let mut no_documents = current_bytes.clone();
    for member in (parts.members..parts.sessions).step_by(8) {
        no_documents[member + 4..member + 8].copy_from_slice(&u32::MAX.to_le_bytes());
    }
    let mut no_sessions = current_bytes.clone();
    for session in (parts.sessions..parts.names).step_by(24) {
        no_sessions[session..session + 8].copy_from_slice(&[0; 8]);
    }
    for (what, bytes) in [("no documents", no_documents), ("no sessions", no_sessions)] {
        fs::write(&groups, &bytes).unwrap();
        let with_damage = searched_with(what);
        assert!(
            with_damage.0,
            "{what}: a file with its bits whole was not opened"
        );
        assert_eq!(
            (current.1, &current.2),
            (with_damage.1, &with_damage.2),
            "{what}"
        );
    }
}

/// Where the parts of a copy groups file of version 4 begin: its bits
/// (after the header of the index's state, the flags and four counts),
/// its groups' table (after the bits and their checksum), the members in
/// it, the sessions they are in, and those sessions' names.
struct Parts {
    bits: usize,
    leads: usize,
    members: usize,
    sessions: usize,
    names: usize,
}

impl Parts {
    fn of(bytes: &[u8]) -> Parts {
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        assert!(bytes.starts_with(b"pi-index copy groups 4\n"));
        // The magic, the count of segments, each one's id and counts.
        let segments = word(23);
        let head = 27 + 40 * segments;
        let max_docs = (0..segments).map(|i| word(27 + 40 * i + 32));
        let bits = head + 17;
        let words: usize = max_docs.map(|m| m.div_ceil(64)).sum();
        let leads = bits + 8 * words + 4;
        let [n, m, s, h] = [1, 5, 9, 13].map(|at| word(head + at));
        let members = leads + 16 * n;
        let sessions = members + 8 * m;
        let names = sessions + 24 * s;
        assert_eq!(bytes.len(), names + h);
        Parts {
            bits,
            leads,
            members,
            sessions,
            names,
        }
    }
}
