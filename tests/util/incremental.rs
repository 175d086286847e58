//! A small session to build incrementally: two files in one project, the
//! first with a user question and its answer, and helpers to append
//! entries and read back what the index holds of it.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{run, Scratch};

pub const HEADER: &str = r#"{"type":"session","version":3,"id":"inc00001-0000-4000-8000-000000000001","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/home/u/inc"}"#;

pub fn user(id: &str, parent: Option<&str>, minute: u32, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-05-01T10:{minute:02}:00.000Z","message":{{"role":"user","content":"{text}","timestamp":0}}}}"#
    )
}

pub fn assistant(id: &str, parent: &str, minute: u32, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-05-01T10:{minute:02}:30.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"provider":"anthropic","model":"m","stopReason":"stop","timestamp":0}}}}"#
    )
}

pub struct Setup {
    pub s: Scratch,
    pub sessions: PathBuf,
    pub file: PathBuf,
}

pub fn setup() -> Setup {
    let s = Scratch::new();
    let sessions = s.dir.path().join("sessions");
    let project = sessions.join("--home-u-inc--");
    fs::create_dir_all(&project).unwrap();
    let file = project.join("2026-05-01T10-00-00-000Z_inc00001.jsonl");
    let lines = [
        HEADER.to_owned(),
        user("a1", None, 1, "first question about alpacas"),
        assistant("a2", "a1", 1, "first answer about alpacas"),
    ];
    fs::write(&file, lines.join("\n") + "\n").unwrap();
    // A second, untouched session.
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions/branch-abandoned.jsonl"),
        project.join("other.jsonl"),
    )
    .unwrap();
    Setup { s, sessions, file }
}

pub fn append(path: &Path, text: &str) {
    let mut f = OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

impl Setup {
    pub fn build(&self, extra: &[&str]) -> serde_json::Value {
        self.s.build(&[&self.sessions], extra)
    }
    /// Exit code of `search --json WORD`.
    pub fn search_exit(&self, word: &str) -> Option<i32> {
        let out = run(self
            .s
            .cmd()
            .args(["search", "--json", word, "--index"])
            .arg(self.s.index()));
        out.status.code()
    }
    pub fn docs(&self) -> Vec<serde_json::Value> {
        self.s.show_json(self.file.to_str().unwrap(), &[])
    }
    pub fn texts(&self) -> Vec<(u64, String, bool)> {
        self.docs()
            .iter()
            .map(|d| {
                (
                    d["line"].as_u64().unwrap(),
                    d["text"].as_str().unwrap().to_owned(),
                    d["active"].as_bool().unwrap(),
                )
            })
            .collect()
    }
}
