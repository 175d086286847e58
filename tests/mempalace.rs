//! `show --format transcript --branch all` against MemPalace 3.11.0 itself
//! (its Pi importer, `mempalace.normalize._try_pi_jsonl` and
//! `_messages_to_transcript`, run from a pinned venv): the same text, byte
//! for byte, on every undamaged session MemPalace reads as Pi, among the
//! fixtures and the sessions Pi 1.6.0's own SessionManager writes.

use std::path::PathBuf;

use crate::util::reference;
use crate::util::{fixtures, run, Scratch};

/// Every `*.jsonl` below `dir`.
fn jsonl_below(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Index `files` (under `root`), run MemPalace on each, and compare the
/// transcripts of every file pi-index indexed without damage and MemPalace
/// read as a Pi session. Returns how many were compared.
fn compare(root: &std::path::Path, python: &std::path::Path) -> usize {
    let s = Scratch::new();
    let report = s.build(&[root], &[]);
    // Damaged lines, and lines of glued entries (which MemPalace drops
    // whole), are where pi-index does better: not compared.
    let damaged: Vec<&str> = ["damaged", "recovered"]
        .iter()
        .flat_map(|k| report[*k].as_array().unwrap())
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    let files = jsonl_below(root);
    let reference = reference::mempalace_transcripts(python, &files);
    let mut compared = 0;
    for (file, mp) in files.iter().zip(&reference) {
        let canon = std::fs::canonicalize(file).unwrap();
        let path = canon.to_str().unwrap();
        // A last line without its newline is still being written: pi-index
        // reads it once it is complete (MemPalace reads it as it is).
        let being_written = !std::fs::read(file).unwrap().ends_with(b"\n");
        if mp["pi"] != true || damaged.contains(&path) || being_written {
            continue;
        }
        let out = run(s
            .cmd()
            .args([
                "show",
                path,
                "--format",
                "transcript",
                "--branch",
                "all",
                "--index",
            ])
            .arg(s.index()));
        if !out.status.success() {
            // Not a session by the format page (and by Pi, which refuses
            // it too): a header that is not the first line, or has no id.
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("no indexed session"), "{path}: {err}");
            assert!(
                report["rejected"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|r| r["path"] == path),
                "{path} is neither indexed nor rejected"
            );
            continue;
        }
        let ours = String::from_utf8(out.stdout).unwrap();
        // pi-index never prints a control character raw (docs/guide.md,
        // "What reaches the terminal"): a carriage return is dropped. MemPalace
        // itself turns CRLF into LF when it reads a transcript file.
        let theirs = mp["transcript"].as_str().unwrap().replace("\r\n", "\n");
        assert!(
            !theirs
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{path}: MemPalace's transcript holds a control character"
        );
        assert_eq!(ours, theirs, "transcript of {path}");
        compared += 1;
    }
    compared
}

#[test]
fn transcripts_of_the_fixtures_are_mempalace_s_byte_for_byte() {
    let Some(python) = reference::mempalace() else {
        return;
    };
    let n = compare(&fixtures(), python);
    assert!(n >= 30, "only {n} fixtures compared");
}

#[test]
fn transcripts_of_sessions_pi_wrote_are_mempalace_s_byte_for_byte() {
    let Some(python) = reference::mempalace() else {
        return;
    };
    let Some(pi) = reference::pi() else { return };
    let s = Scratch::new();
    let out = s.dir.path().join("pi16");
    pi.write_sessions(&out, &s.dir.path().join("node-home"));
    let n = compare(&out, python);
    assert_eq!(n, 5, "every session Pi wrote is compared");
}

#[test]
fn a_multi_line_user_turn_is_marked_once_and_an_unanswered_turn_ends_with_a_blank_line() {
    // MemPalace's exchange chunking splits at lines that begin with `> `:
    // one user turn is one `> ` line, its other lines verbatim.
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("multi.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"type":"session","version":3,"id":"mp-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#, "\n",
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"first line\n  second line"}}"#, "\n",
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"reply"}]}}"#, "\n",
            r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"more"}]}}"#, "\n",
            r#"{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"unanswered"}}"#, "\n",
        ),
    )
    .unwrap();
    s.build(&[&dir], &[]);
    let out = run(s
        .cmd()
        .args(["show", "mp-1", "--format", "transcript", "--index"])
        .arg(s.index()));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "> first line\n  second line\nreply\n\nmore\n\n> unanswered\n"
    );
}
