//! A copy of three fixtures for crash tests, a change to build after a
//! crash, and what the index answers.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{run, Scratch};

pub fn fixture_copy(s: &Scratch) -> PathBuf {
    let dir = s.dir.path().join("sessions");
    fs::create_dir_all(&dir).unwrap();
    for name in [
        "branch-abandoned.jsonl",
        "utf8-bom.jsonl",
        "entry-model-change.jsonl",
    ] {
        fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/sessions")
                .join(name),
            dir.join(name),
        )
        .unwrap();
    }
    dir
}

/// (session file name, line) of every hit for `word`.
pub fn hits(s: &Scratch, word: &str) -> Vec<(String, u64)> {
    let out = run(s
        .cmd()
        .args(["search", "--json", "-n", "100", "--index"])
        .arg(s.index())
        .arg(word));
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "search failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Vec<(String, u64)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let d: serde_json::Value = serde_json::from_str(l).unwrap();
            let p = d["path"].as_str().unwrap();
            (
                p.rsplit('/').next().unwrap().to_owned(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

pub fn total_messages(s: &Scratch) -> u64 {
    let out = run(s.cmd().args(["stats", "--json", "--index"]).arg(s.index()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["messages"].as_u64().unwrap()
}

/// A change for the next build: one file grows, one is deleted, one is new.
pub fn change(dir: &Path) {
    let mut f = OpenOptions::new()
        .append(true)
        .open(dir.join("branch-abandoned.jsonl"))
        .unwrap();
    writeln!(
        f,
        r#"{{"type":"message","id":"9f9f9f9f","parentId":"5b6c7d8e","timestamp":"2026-01-19T10:20:00.000Z","message":{{"role":"user","content":"zqcrashprobe appended","timestamp":0}}}}"#
    )
    .unwrap();
    fs::remove_file(dir.join("utf8-bom.jsonl")).unwrap();
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions/crlf-line-endings.jsonl"),
        dir.join("crlf-line-endings.jsonl"),
    )
    .unwrap();
}
