//! Oh My Pi's sessions, read as Oh My Pi reads them.
//!
//! - A title renamed in place (Oh My Pi rewrites its 256-byte title slot,
//!   the file's first line) and a message appended are one grown file and
//!   one new message, not a rewrite; a change anywhere else still is one.
//! - Hits say that Oh My Pi wrote the session, and resume it in `omp`.

use std::collections::BTreeSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

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
