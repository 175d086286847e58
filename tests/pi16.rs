//! Sessions written by Pi 1.6.0's own `SessionManager`
//! (`scripts/pi/write-sessions.mjs`: a `system` message first, every
//! `context_edit` form, `usage`, a compaction, `/tree` branches, renames)
//! indexed exactly as Pi's own parser and `buildSessionContext` see them
//! (`scripts/pi/pi-view.mjs`): entry ids, roles, text, active branch,
//! edit marks; and every planted word found where it must be, and nowhere
//! else.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::Value;

use crate::util::reference;
use crate::util::{run, Scratch};

/// The reference sessions, Pi's view of them, and an index of them.
struct Written {
    s: Scratch,
    manifest: Value,
    files: Vec<PathBuf>,
    views: Vec<Value>,
}

fn written(kinds: &[&str]) -> Option<Written> {
    let pi = reference::pi()?;
    let s = Scratch::new();
    let out = s.dir.path().join("pi16");
    let manifest = pi.write_sessions(&out, &s.dir.path().join("node-home"));
    let files: Vec<PathBuf> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
        .collect();
    assert_eq!(files.len(), 5, "{manifest}");
    let views = pi.view(&files, &s.dir.path().join("node-home"));
    let r = s.build(&[&out], kinds);
    assert_eq!(r["files_indexed"], 5, "{r}");
    assert_eq!(r["lines_damaged"], 0, "{r}");
    Some(Written {
        s,
        manifest,
        files,
        views,
    })
}

fn search(s: &Scratch, query: &str, extra: &[&str]) -> Vec<Value> {
    let out = run(s
        .cmd()
        .args(["search", query, "--json", "-n", "1000", "--index"])
        .arg(s.index())
        .args(extra));
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "search {query}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_message_as_pi_reads_it() {
    let Some(w) = written(&[]) else { return };
    for (file, view) in w.files.iter().zip(&w.views) {
        assert!(view.get("error").is_none(), "{view}");
        let docs = w.s.show_json(file.to_str().unwrap(), &[]);
        let got: Vec<(u64, String, String, String, bool)> = docs
            .iter()
            .map(|d| {
                (
                    d["line"].as_u64().unwrap(),
                    d["entry_id"].as_str().unwrap().to_owned(),
                    d["role"].as_str().unwrap().to_owned(),
                    d["text"].as_str().unwrap().to_owned(),
                    d["active"].as_bool().unwrap(),
                )
            })
            .collect();
        // Pi's entries: every user and assistant message with text (the
        // format page's rule: trimmed, non-empty), at its line.
        let want: Vec<(u64, String, String, String, bool)> = view["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "message" && (e["role"] == "user" || e["role"] == "assistant"))
            .filter(|e| !e["text"].as_str().unwrap().trim().is_empty())
            .map(|e| {
                (
                    e["line"].as_u64().unwrap(),
                    e["id"].as_str().unwrap().to_owned(),
                    e["role"].as_str().unwrap().to_owned(),
                    e["text"].as_str().unwrap().trim().to_owned(),
                    e["active"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "{}", file.display());
        // The active branch is Pi's: what `show` prints by default is the
        // messages of Pi's activeBranch.
        let branch: BTreeSet<&str> = view["activeBranch"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let active =
            w.s.show_json(file.to_str().unwrap(), &["--branch", "active"]);
        for d in &active {
            assert!(branch.contains(d["entry_id"].as_str().unwrap()), "{d}");
        }
        assert_eq!(
            active.len(),
            want.iter().filter(|d| d.4).count(),
            "{}",
            file.display()
        );
        // Edit marks: for the messages Pi sends the model, exactly what
        // buildSessionContext applied.
        let in_context: BTreeSet<&str> = view["context"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["sourceId"].as_str())
            .collect();
        let pi_edits: BTreeMap<&str, &str> = view["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| Some((e["id"].as_str()?, e.get("edited")?.as_str()?)))
            .collect();
        for d in &docs {
            let id = d["entry_id"].as_str().unwrap();
            if in_context.contains(id) || pi_edits.get(id) == Some(&"omitted") {
                let want = pi_edits.get(id).copied();
                assert_eq!(d["edited"].as_str(), want, "edited mark of {d}");
            }
        }
        // Name: Pi's session name.
        for d in &docs {
            assert_eq!(d["session_name"], view["name"], "{d}");
            assert_eq!(d["session_id"], view["sessionId"], "{d}");
        }
    }
}

/// Where Pi's writer put each planted word, and what the manifest says of
/// it.
fn words(manifest: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for f in manifest["files"].as_array().unwrap() {
        for w in f["words"].as_array().unwrap() {
            out.push((w["word"].as_str().unwrap().to_owned(), w.clone()));
        }
    }
    out
}

#[test]
fn planted_words_are_found_where_pi_put_them_and_nowhere_else() {
    let Some(w) = written(&[]) else { return };
    // Which context_edit replacements are in effect: the latest edit of an
    // active target among the edits on the active branch (Pi's rule),
    // computed from Pi's own view.
    let mut in_effect: BTreeSet<String> = BTreeSet::new();
    for view in &w.views {
        let entries = view["entries"].as_array().unwrap();
        let mut latest: BTreeMap<&str, &Value> = BTreeMap::new();
        for e in entries {
            if e["type"] == "context_edit" && e["active"] == true {
                latest.insert(e["targetId"].as_str().unwrap(), e);
            }
        }
        for (target, e) in latest {
            let t = entries.iter().find(|x| x["id"] == target).unwrap();
            let has_text = t["type"] == "message"
                && (t["role"] == "user" || t["role"] == "assistant")
                && !t["text"].as_str().unwrap_or("").trim().is_empty();
            if t["active"] == true && has_text && !e["replacement"].is_null() {
                in_effect.insert(e["id"].as_str().unwrap().to_owned());
            }
        }
    }
    let mut checked = 0;
    for (word, info) in words(&w.manifest) {
        if info["where"] == "systemCheckpoint" {
            continue;
        }
        let hits = search(&w.s, &word, &[]);
        let at: Vec<&str> = hits
            .iter()
            .map(|h| h["entry_id"].as_str().unwrap())
            .collect();
        match info["where"].as_str().unwrap() {
            "text" => {
                assert_eq!(at, [info["entryId"].as_str().unwrap()], "{word}: {info}");
                let h = &hits[0];
                assert_eq!(h["line"], info["line"], "{word}");
                assert_eq!(h["role"], info["role"], "{word}");
                assert_eq!(h["active"], info["active"], "{word}");
                assert_eq!(h["edited"], info["edited"], "{word}: {info}");
            }
            "replacement" if in_effect.contains(info["entryId"].as_str().unwrap()) => {
                // Found as part of its target's hit.
                assert_eq!(at.len(), 1, "{word}: {hits:?}");
                assert_eq!(hits[0]["edited"], "replaced", "{word}");
                assert!(
                    hits[0]["replacement"].as_str().unwrap().contains(&word),
                    "{word}: {}",
                    hits[0]
                );
            }
            _ => assert!(at.is_empty(), "{word} ({}) found: {hits:?}", info["where"]),
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} words checked");
}

#[test]
fn system_messages_are_found_only_with_the_system_kind() {
    let Some(w) = written(&["--include", "system"]) else {
        return;
    };
    let system: Vec<(String, Value)> = words(&w.manifest)
        .into_iter()
        .filter(|(_, i)| i["where"] == "system")
        .collect();
    assert!(system.len() >= 2, "{system:?}");
    for (word, info) in system {
        let hits = search(&w.s, &word, &["--role", "system"]);
        assert_eq!(hits.len(), 1, "{word}: {hits:?}");
        assert_eq!(hits[0]["entry_id"], info["entryId"], "{word}");
        assert_eq!(hits[0]["role"], "system");
    }
}

#[test]
fn session_names_are_searchable_and_renames_win() {
    let Some(w) = written(&[]) else { return };
    for (word, info) in words(&w.manifest) {
        if info["where"] != "sessionName" {
            continue;
        }
        let file = w.manifest["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| {
                f["words"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x["word"] == word.as_str())
            })
            .unwrap();
        let current = file["name"].as_str().unwrap_or("").contains(&word);
        let hits = search(&w.s, &format!("name:{word}"), &[]);
        let ids: BTreeSet<&str> = hits
            .iter()
            .map(|h| h["session_id"].as_str().unwrap())
            .collect();
        if current {
            assert_eq!(ids, BTreeSet::from([file["sessionId"].as_str().unwrap()]));
            let out = run(w
                .s
                .cmd()
                .args(["sessions", &word, "--json", "--index"])
                .arg(w.s.index()));
            let first: Value = serde_json::from_str(
                String::from_utf8(out.stdout)
                    .unwrap()
                    .lines()
                    .next()
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(first["session_id"], file["sessionId"], "{word}");
            assert_eq!(first["matched"], "name", "{word}");
        } else {
            assert!(ids.is_empty(), "an earlier name {word} is found: {hits:?}");
        }
    }
}
