//! Oh My Pi's sessions, read as Oh My Pi reads them.
//!
//! - A title renamed in place (Oh My Pi rewrites its 256-byte title slot,
//!   the file's first line) and a message appended are one grown file and
//!   one new message, not a rewrite; a change anywhere else still is one.
//!   Hand-made from a fixture: runs everywhere.
//! - Sessions written by Oh My Pi 18.2.3's own `SessionManager`
//!   (`scripts/omp/write-sessions.mjs`, into `~/.omp/agent/sessions` of
//!   a scratch HOME) are found by a build with no PATH and indexed exactly
//!   as its own loader reads them back (`scripts/omp/omp-view.mjs`): every
//!   message, its line, entry, branch, the session's name, its forks; and
//!   a rename done by Oh My Pi itself (`scripts/omp/rename-append.mjs`)
//!   is read as an append. Oh My Pi is installed by `scripts/omp/setup.sh`
//!   on first use; without npm's registry these tests say why and pass,
//!   except under CI.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::reference::{self, Omp};
use crate::util::{fixture, run, Scratch};

const OMP_FIRST: &str = "-proj/2026-07-01T10-00-00-000Z_0198c0de-7a11-7000-8000-0000000000a1.jsonl";

/// A title slot as Oh My Pi writes one: `width` bytes, its newline
/// included.
fn slot(title: &str, width: usize) -> Vec<u8> {
    let unpadded = format!(
        r#"{{"type":"title","v":1,"title":"{title}","source":"user","updatedAt":"2026-07-02T09:00:00.000Z","pad":""}}"#
    );
    let pad = width - 1 - unpadded.len();
    let line = unpadded.replace(r#""pad":"""#, &format!(r#""pad":"{}""#, " ".repeat(pad)));
    assert_eq!(line.len() + 1, width);
    (line + "\n").into_bytes()
}

/// Overwrite the start of `path` with `bytes`, in place (what Oh My Pi's
/// `updateSessionTitle` does), and give the file a modification time a
/// second past the last one (a build then looks at it whatever the
/// clock's resolution: no test here waits for time to pass).
fn write_at_start(path: &Path, bytes: &[u8]) {
    let before = fs::metadata(path).unwrap().modified().unwrap();
    let mut f = OpenOptions::new().write(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
    f.set_modified(before + Duration::from_secs(1)).unwrap();
}

/// Append `text` to `path`, with a modification time a second later.
fn append(path: &Path, text: &str) {
    let before = fs::metadata(path).unwrap().modified().unwrap();
    let mut f = OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f.set_modified(before + Duration::from_secs(1)).unwrap();
}

fn names(s: &Scratch, query: &str) -> BTreeSet<String> {
    s.search_json(query, &[])
        .iter()
        .map(|h| h["session_name"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn a_title_renamed_in_place_and_a_message_appended_are_one_grown_file_and_one_new_message() {
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions/-proj");
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("omp.jsonl");
    fs::copy(fixture(OMP_FIRST), &file).unwrap();
    let r = s.build(&[&dir], &[]);
    assert_eq!(
        (r["files_indexed"].clone(), r["messages_indexed"].clone()),
        (json!(1), json!(4)),
        "{r}"
    );
    assert_eq!(
        names(&s, "name:zqomptitle"),
        ["Watcher debounce: zqomptitle".to_owned()].into()
    );
    let size = fs::metadata(&file).unwrap().len();

    // Renamed in place, then a title_change and a message appended, as Oh
    // My Pi's setSessionName and its next prompt write them.
    write_at_start(&file, &slot("Renamed zqompnewtitle", 256));
    let appended = concat!(
        r#"{"type":"title_change","id":"a100000a","parentId":"a1000009","timestamp":"2026-07-02T09:00:00.000Z","title":"Renamed zqompnewtitle","source":"user","previousTitle":"Watcher debounce: zqomptitle"}"#,
        "\n",
        r#"{"type":"message","id":"a100000b","parentId":"a100000a","timestamp":"2026-07-02T09:00:01.000Z","message":{"role":"user","content":"One more thing zqompgrown","timestamp":1782982801000}}"#,
        "\n"
    );
    append(&file, appended);
    let r = s.build(&[&dir], &[]);
    assert_eq!(r["files_grown"], 1, "{r}");
    assert_eq!(r["files_replaced"], 0, "{r}");
    assert_eq!(r["files_indexed"], 1, "{r}");
    assert_eq!(r["messages_indexed"], 1, "{r}");
    assert_eq!(
        r["bytes_read"],
        appended.len(),
        "only the tail is read: {r}"
    );
    assert_eq!(
        fs::metadata(&file).unwrap().len(),
        size + appended.len() as u64
    );
    // The new title is the session's, on every message, old and new.
    let docs = s.show_json(file.to_str().unwrap(), &[]);
    assert_eq!(docs.len(), 5, "{docs:?}");
    assert!(
        docs.iter()
            .all(|d| d["session_name"] == "Renamed zqompnewtitle"),
        "{docs:?}"
    );
    assert_eq!(docs[4]["text"], "One more thing zqompgrown");
    assert_eq!(docs[4]["line"], 13);
    assert!(s.search_json("name:zqomptitle", &[]).is_empty());
    assert_eq!(s.search_json("name:zqompnewtitle", &[]).len(), 5);
    // What the index holds is what a fresh build of these bytes holds.
    let out = run(s.cmd().arg("check").arg(&dir).arg("--index").arg(s.index()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // A rename alone (same size): grown, nothing new, the title taken.
    write_at_start(&file, &slot("Again zqompagain", 256));
    let r = s.build(&[&dir], &[]);
    assert_eq!(
        (
            r["files_grown"].clone(),
            r["files_replaced"].clone(),
            r["messages_indexed"].clone()
        ),
        (json!(1), json!(0), json!(0)),
        "{r}"
    );
    assert_eq!(
        names(&s, "name:zqompagain"),
        ["Again zqompagain".to_owned()].into()
    );

    // Any other byte changed (a word of the first message, same length):
    // the file is rewritten, and read again whole.
    let bytes = fs::read(&file).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let changed = text.replace("fire twice?", "fire again?");
    assert_eq!(changed.len(), text.len());
    write_at_start(&file, changed.as_bytes());
    let r = s.build(&[&dir], &[]);
    assert_eq!(
        (
            r["files_grown"].clone(),
            r["files_replaced"].clone(),
            r["messages_indexed"].clone()
        ),
        (json!(0), json!(1), json!(5)),
        "{r}"
    );
    assert_eq!(s.search_json("\"fire again\"", &[]).len(), 1);

    // A slot of another width moves every byte after it: a rewrite too.
    let text = fs::read_to_string(&file).unwrap();
    let rest = &text[256..];
    let mut wider = slot("Wider zqompwider", 300);
    wider.extend_from_slice(rest.as_bytes());
    fs::write(&file, &wider).unwrap();
    let r = s.build(&[&dir], &[]);
    assert_eq!(
        (r["files_grown"].clone(), r["files_replaced"].clone()),
        (json!(0), json!(1)),
        "{r}"
    );
    assert_eq!(
        names(&s, "name:zqompwider"),
        ["Wider zqompwider".to_owned()].into()
    );
}

/// The sessions Oh My Pi wrote into `s`'s HOME, its view of them, and an
/// index of them built with no PATH.
struct Written {
    s: Scratch,
    manifest: Value,
    files: Vec<PathBuf>,
    views: Vec<Value>,
    omp: &'static Omp,
}

fn written(kinds: &[&str]) -> Option<Written> {
    let omp = reference::omp()?;
    let s = Scratch::new();
    let manifest = omp.write_sessions(&s.dir.path().join("cwds"), &s.home());
    let files: Vec<PathBuf> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
        .collect();
    assert_eq!(files.len(), 7, "{manifest}");
    let sessions = fs::canonicalize(s.home().join(".omp/agent/sessions")).unwrap();
    for f in &files {
        assert!(
            fs::canonicalize(f).unwrap().starts_with(&sessions),
            "{}",
            f.display()
        );
    }
    let views = omp.view(&files, &s.home());
    // No PATH: Oh My Pi's session dir of this HOME.
    let r = s.report(
        s.cmd()
            .arg("build")
            .arg("--index")
            .arg(s.index())
            .args(kinds),
    );
    assert_eq!(r["files_indexed"], 7, "{r}");
    assert_eq!(r["files_rejected"], 0, "{r}");
    assert_eq!(r["lines_damaged"], 0, "{r}");
    let read: Vec<&Value> = r["roots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["read"] == true)
        .collect();
    assert_eq!(read.len(), 1, "{r}");
    assert_eq!(
        read[0]["path"],
        s.home().join(".omp/agent/sessions").to_str().unwrap()
    );
    assert_eq!(read[0]["agents"], json!(["omp"]), "{r}");
    Some(Written {
        s,
        manifest,
        files,
        views,
        omp,
    })
}

/// Oh My Pi's view of a file's documents, as pi-index indexes them by
/// default: user and assistant messages with text, trimmed.
type DocView = (u64, String, String, String, bool);

fn want_docs(view: &Value) -> Vec<DocView> {
    view["entries"]
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
        .collect()
}

fn got_docs(s: &Scratch, file: &Path) -> Vec<Value> {
    s.show_json(file.to_str().unwrap(), &[])
}

fn as_views(docs: &[Value]) -> Vec<DocView> {
    docs.iter()
        .map(|d| {
            (
                d["line"].as_u64().unwrap(),
                d["entry_id"].as_str().unwrap().to_owned(),
                d["role"].as_str().unwrap().to_owned(),
                d["text"].as_str().unwrap().to_owned(),
                d["active"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn omp_sessions_are_found_with_no_path_and_read_as_omp_reads_them() {
    let Some(w) = written(&[]) else { return };
    let mut named = 0;
    for (file, view) in w.files.iter().zip(&w.views) {
        assert!(view.get("error").is_none(), "{view}");
        let docs = got_docs(&w.s, file);
        assert_eq!(as_views(&docs), want_docs(view), "{}", file.display());
        // The active branch is Oh My Pi's: its getBranch() from the leaf.
        let branch: BTreeSet<&str> = view["activeBranch"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for d in &docs {
            assert_eq!(
                d["active"].as_bool().unwrap(),
                branch.contains(d["entry_id"].as_str().unwrap()),
                "{d}"
            );
            // Its name as Oh My Pi shows it (the title slot), its id, and
            // the agent that wrote it.
            assert_eq!(d["session_name"], view["name"], "{d}");
            assert_eq!(d["session_id"], view["sessionId"], "{d}");
            assert_eq!(d["agent"], "omp", "{d}");
            assert_eq!(d["cwd"], view["header"]["cwd"], "{d}");
        }
        // The model of a user message is the last default model_change
        // before it, as Oh My Pi's context takes it.
        let mut model: Option<&str> = None;
        let by_line: BTreeMap<u64, &Value> = docs
            .iter()
            .map(|d| (d["line"].as_u64().unwrap(), d))
            .collect();
        for e in view["entries"].as_array().unwrap() {
            if e["type"] == "model_change" && e["role"].is_null() {
                model = e["model"].as_str();
            }
            if e["type"] == "message" && e["role"] == "user" {
                if let Some(d) = by_line.get(&e["line"].as_u64().unwrap()) {
                    assert_eq!(d["model"].as_str(), model, "{d}");
                }
            }
            if e["type"] == "message" && e["role"] == "assistant" {
                if let Some(d) = by_line.get(&e["line"].as_u64().unwrap()) {
                    assert_eq!(d["model"], e["model"], "{d}");
                }
            }
        }
        if !view["name"].is_null() {
            named += 1;
        }
    }
    // alpha, gamma, and the fork base with its three forks (which carry
    // its name); beta was never named.
    assert_eq!(named, 6);
    let unnamed: Vec<&Value> = w.views.iter().filter(|v| v["name"].is_null()).collect();
    assert_eq!(unnamed.len(), 1);
    assert!(unnamed[0]["titleSlot"]["title"] == "", "{}", unnamed[0]);
}

/// Where Oh My Pi put each planted word: (file, entry id, line, active).
fn planted(manifest: &Value) -> BTreeMap<String, Vec<(String, Value)>> {
    let mut out: BTreeMap<String, Vec<(String, Value)>> = BTreeMap::new();
    for f in manifest["files"].as_array().unwrap() {
        for w in f["words"].as_array().unwrap() {
            out.entry(w["word"].as_str().unwrap().to_owned())
                .or_default()
                .push((f["path"].as_str().unwrap().to_owned(), w.clone()));
        }
    }
    out
}

#[test]
fn planted_words_are_found_where_omp_put_them_and_nowhere_else() {
    let Some(w) = written(&[]) else { return };
    let words = planted(&w.manifest);
    let mut checked = 0;
    for (word, places) in &words {
        let hits = w.s.search_json(word, &[]);
        if word.starts_with("ompplant") {
            // One hit: the first place (forks hold copies of it, listed
            // with the hit, never hits of their own).
            assert_eq!(hits.len(), 1, "{word}: {hits:?}");
            let h = &hits[0];
            let found: Vec<(String, u64)> = std::iter::once(&h)
                .map(|h| {
                    (
                        h["path"].as_str().unwrap().to_owned(),
                        h["line"].as_u64().unwrap(),
                    )
                })
                .chain(h["copies"].as_array().unwrap().iter().map(|c| {
                    (
                        c["path"].as_str().unwrap().to_owned(),
                        c["line"].as_u64().unwrap(),
                    )
                }))
                .collect();
            let mut found: Vec<(String, u64)> = found
                .into_iter()
                .map(|(p, l)| {
                    (
                        fs::canonicalize(p).unwrap().to_string_lossy().into_owned(),
                        l,
                    )
                })
                .collect();
            found.sort();
            let mut want: Vec<(String, u64)> = places
                .iter()
                .map(|(p, info)| {
                    (
                        fs::canonicalize(p).unwrap().to_string_lossy().into_owned(),
                        info["line"].as_u64().unwrap(),
                    )
                })
                .collect();
            want.sort();
            assert_eq!(found, want, "{word}");
            assert_eq!(h["agent"], "omp", "{word}");
            if places.len() == 1 {
                let info = &places[0].1;
                assert_eq!(h["entry_id"], info["entryId"], "{word}");
                assert_eq!(h["role"], info["role"], "{word}");
                assert_eq!(h["active"], info["active"], "{word}");
            }
            checked += 1;
        } else {
            // Names are not message text; the rest is found only with
            // --include (next test).
            assert!(hits.is_empty(), "{word}: {hits:?}");
        }
    }
    // alpha 7, beta 10, gamma 2, delta and its forks 10.
    assert_eq!(checked, 29);
    // Names: the title slot's, by `name:`; never one a rename replaced.
    for (word, name) in [
        ("ompname01", "Renamed ompname01"),
        ("ompname02", "Scout ompname02"),
        ("ompname03", "Fork base ompname03"),
    ] {
        assert_eq!(
            names(&w.s, &format!("name:{word}")),
            [name.to_owned()].into(),
            "{word}"
        );
    }
    assert!(w.s.search_json("name:omphide04", &[]).is_empty());
}

#[test]
fn omp_message_kinds_and_entry_types_are_found_with_their_kinds() {
    let Some(w) = written(&["--include", "all"]) else {
        return;
    };
    let role_of = |word: &str| -> Vec<String> {
        w.s.search_json(word, &[])
            .iter()
            .map(|h| h["role"].as_str().unwrap().to_owned())
            .collect()
    };
    for (word, role) in [
        ("omphide01", "thinking"), // thinking block
        ("omphide02", "tool"),     // tool call arguments
        ("omphide03", "tool"),     // tool result
        ("omphide05", "tool"),     // bashExecution
        ("omphide06", "tool"),     // pythonExecution
        ("omphide07", "tool"),     // fileMention
        ("omphide08", "custom"),   // developer message
        ("omphide09", "custom"),   // custom_message
        ("omphide12", "summary"),  // branch_summary
        ("omphide13", "summary"),  // compaction
        ("omphide15", "system"),   // session_init's prompt
        ("omphide16", "system"),   // session_init's task
    ] {
        assert_eq!(role_of(word), [role], "{word}");
    }
    // Never indexed: a name a rename replaced (title_change), a label,
    // ttsr rule names, a compaction's short summary.
    for word in ["omphide04", "omphide10", "omphide11", "omphide14"] {
        assert!(role_of(word).is_empty(), "{word}");
    }
}

#[test]
fn forks_written_by_omp_know_their_parent() {
    let Some(w) = written(&[]) else { return };
    let forks = &w.manifest["forks"];
    let id_of = |path: &Value| -> String {
        let p = fs::canonicalize(path.as_str().unwrap()).unwrap();
        w.files
            .iter()
            .zip(&w.views)
            .find(|(f, _)| fs::canonicalize(f).unwrap() == p)
            .map(|(_, v)| v["sessionId"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let (base, branched, forked, clone) = (
        id_of(&forks["base"]),
        id_of(&forks["branched"]),
        id_of(&forks["forked"]),
        id_of(&forks["clone"]),
    );
    let out = run(w
        .s
        .cmd()
        .args(["sessions", "--all", "--json", "--index"])
        .arg(w.s.index()));
    let rows = crate::util::json_lines(&out);
    let row = |id: &str| rows.iter().find(|r| r["session_id"] == id).unwrap().clone();
    // /branch names its parent by path, fork() and forkFrom by id: each
    // is the stated fork of its parent.
    for (child, parent) in [(&branched, &base), (&forked, &branched), (&clone, &base)] {
        let r = row(child);
        assert_eq!(r["parent"]["session"], json!(parent), "{r}");
        assert_eq!(r["parent"]["how"], "stated", "{r}");
        assert_eq!(r["agent"], "omp", "{r}");
    }
    let kids: BTreeSet<String> = row(&base)["forks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["session"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kids, [branched.clone(), clone.clone()].into());
    // The base's first message, copied into all three: one hit.
    let hits = w.s.search_json("ompplant30", &[]);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["session_id"], json!(base));
    assert_eq!(hits[0]["copies"].as_array().unwrap().len(), 3, "{hits:?}");
}

#[test]
fn a_rename_by_omp_itself_is_read_as_an_append() {
    let Some(w) = written(&[]) else { return };
    let alpha = w
        .files
        .iter()
        .zip(&w.views)
        .find(|(_, v)| v["name"] == "Renamed ompname01")
        .map(|(f, _)| f.clone())
        .unwrap();
    let before = w.s.show_json(alpha.to_str().unwrap(), &[]).len();
    let done = w.omp.rename_append(
        &alpha,
        "New name ompname09",
        "appended ompplant99",
        &w.s.home(),
    );
    // Oh My Pi changed the slot in place, and appended: the bytes between
    // them are as they were.
    assert!(done["after"].as_u64() > done["before"].as_u64(), "{done}");
    let r =
        w.s.report(w.s.cmd().arg("build").arg("--index").arg(w.s.index()));
    assert_eq!(r["files_grown"], 1, "{r}");
    assert_eq!(r["files_replaced"], 0, "{r}");
    assert_eq!(r["files_unchanged"], 6, "{r}");
    assert_eq!(r["messages_indexed"], 1, "{r}");
    let view = &w.omp.view(std::slice::from_ref(&alpha), &w.s.home())[0];
    assert_eq!(view["name"], "New name ompname09");
    let docs = got_docs(&w.s, &alpha);
    assert_eq!(docs.len(), before + 1);
    assert_eq!(as_views(&docs), want_docs(view));
    assert!(docs
        .iter()
        .all(|d| d["session_name"] == "New name ompname09"));
    assert_eq!(
        names(&w.s, "name:ompname09"),
        ["New name ompname09".to_owned()].into()
    );
    assert!(w.s.search_json("name:ompname01", &[]).is_empty());
    let hit = &w.s.search_json("ompplant99", &[])[0];
    assert_eq!(
        hit["line"],
        view["entries"].as_array().unwrap().last().unwrap()["line"]
    );
}

#[test]
fn hits_say_oh_my_pi_wrote_them_and_resume_them_in_omp() {
    let s = Scratch::new();
    let omp = fixture(OMP_FIRST);
    let pi = fixture("branch-abandoned.jsonl");
    s.build(&[&omp, &pi], &[]);
    // Text: the agent before the session's directory, and the command
    // that resumes it; a Pi session's lines are as they were.
    let out = run(s
        .cmd()
        .args(["search", "zqompuser", "--index"])
        .arg(s.index()));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Watcher debounce: zqomptitle", "{text}");
    assert!(
        lines[1].starts_with("Oh My Pi  /home/u/proj  ")
            && lines[1].ends_with(omp.to_str().unwrap()),
        "{text}"
    );
    assert_eq!(
        lines[2],
        format!("resume: omp --resume {}", omp.display()),
        "{text}"
    );
    let pi_text = {
        let out = run(s
            .cmd()
            .args(["search", "polling", "-n", "1", "--index"])
            .arg(s.index()));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let pi_lines: Vec<&str> = pi_text.lines().collect();
    assert!(pi_lines[1].starts_with("/home/u/proj  "), "{pi_text}");
    assert_eq!(
        pi_lines[2],
        format!("resume: pi --session {}", pi.display()),
        "{pi_text}"
    );
    // JSON, sessions and show: the agent of each.
    assert_eq!(s.search_json("zqompuser", &[])[0]["agent"], "omp");
    assert_eq!(s.search_json("polling", &[])[0]["agent"], "pi");
    let out = run(s
        .cmd()
        .args(["sessions", "--json", "--index"])
        .arg(s.index()));
    let agents: BTreeSet<(String, String)> = crate::util::json_lines(&out)
        .iter()
        .map(|r| {
            (
                r["session_id"].as_str().unwrap().to_owned(),
                r["agent"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        agents,
        [
            (
                "0198c0de-7a11-7000-8000-0000000000a1".to_owned(),
                "omp".to_owned()
            ),
            (
                "4f8a2b6c-0d4e-4f8a-ab6c-0d4e8f2a6b0c".to_owned(),
                "pi".to_owned()
            ),
        ]
        .into()
    );
    // The MCP tools.
    let call = |tool: &str, args: &str| -> Value {
        let out = run(s
            .cmd()
            .args([
                "mcp",
                "--no-refresh",
                "--call",
                tool,
                "--args",
                args,
                "--index",
            ])
            .arg(s.index()));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(
        call("search", r#"{"query":"zqompuser"}"#)["hits"][0]["agent"],
        "omp"
    );
    assert_eq!(
        call(
            "show",
            r#"{"session":"0198c0de-7a11-7000-8000-0000000000a1"}"#
        )["agent"],
        "omp"
    );
    let listed = call("sessions", r#"{"query":"zqompuser"}"#);
    assert_eq!(listed["sessions"][0]["agent"], "omp", "{listed}");
}

/// What Oh My Pi wrote is what `usage` sums: each session's tokens and
/// cost are those of the usage its own loader reads back, on assistant
/// messages and `model_usage` entries, every branch.
#[test]
fn usage_written_by_omp_is_summed_as_omp_recorded_it() {
    let Some(w) = written(&[]) else { return };
    let out = run(w
        .s
        .cmd()
        .args(["usage", "session", "--json", "--timezone", "UTC", "--index"])
        .arg(w.s.index()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = crate::util::json_lines(&out);
    let mut with_usage = 0;
    for (file, view) in w.files.iter().zip(&w.views) {
        let mut tokens = [0u64; 4];
        let mut cost = 0f64;
        let mut entries = 0;
        for e in view["entries"].as_array().unwrap() {
            let u = &e["usage"];
            if !u.is_object() {
                continue;
            }
            entries += 1;
            for (t, key) in tokens
                .iter_mut()
                .zip(["input", "output", "cacheRead", "cacheWrite"])
            {
                *t += u[key].as_u64().unwrap();
            }
            cost += u["cost"]["total"].as_f64().unwrap();
        }
        let path = fs::canonicalize(file).unwrap();
        let row = rows.iter().find(|r| {
            fs::canonicalize(r["path"].as_str().unwrap())
                .ok()
                .as_deref()
                == Some(&*path)
        });
        if entries == 0 {
            // A session that spent nothing is no row, or a row of nothing.
            if let Some(row) = row {
                assert_eq!(row["cost"].as_f64(), Some(0.0), "{row}");
            }
            continue;
        }
        with_usage += 1;
        let row = row.unwrap_or_else(|| panic!("no usage row for {}", file.display()));
        for (t, key) in tokens
            .iter()
            .zip(["input", "output", "cache_read", "cache_write"])
        {
            assert_eq!(row[key], json!(t), "{key}: {row}");
        }
        let ours = row["cost"].as_f64().unwrap();
        assert!((ours - cost).abs() < 1e-12, "{ours} vs {cost}: {row}");
    }
    assert!(with_usage >= 5, "{with_usage} of {} files", w.files.len());
}
