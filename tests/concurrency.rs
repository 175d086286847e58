//! Builds at the same time as Pi writes: three build loops (a user's shell,
//! the MCP server's refresh and the picker's all run this same build)
//! against one index while an appender adds messages the way Pi does (a
//! line written in two pieces now and then), and one more build killed
//! with SIGKILL in the middle of each round. Some rounds also rewrite the
//! file whole (a new file renamed over it, as Pi's migration and `/fork`
//! do), cut it shorter, or move it to another project folder. After every round the index
//! must hold exactly what a fresh build of the same bytes holds:
//! `pi-index check` says so, and at the end every document is compared
//! with a fresh build's.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::util::concurrent::{check, documents, fresh_documents};
use crate::util::incremental::{assistant, user, HEADER};
use crate::util::{run, Scratch};

/// Rounds of the soak; each appends `PER_ROUND` messages.
const ROUNDS: usize = 50;
const PER_ROUND: usize = 12;

fn session(dir: &Path, messages: usize) -> PathBuf {
    let project = dir.join("--home-u-live--");
    fs::create_dir_all(&project).unwrap();
    let file = project.join("2026-05-01T10-00-00-000Z_live.jsonl");
    let mut lines = vec![HEADER.to_owned()];
    let mut parent: Option<String> = None;
    for i in 0..messages {
        let id = format!("m{i:07}");
        let text = format!("message {i} about the loop zqlive{i}");
        lines.push(if i % 2 == 0 {
            user(&id, parent.as_deref(), (i % 60) as u32, &text)
        } else {
            assistant(&id, parent.as_deref().unwrap(), (i % 60) as u32, &text)
        });
        parent = Some(id);
    }
    fs::write(&file, lines.join("\n") + "\n").unwrap();
    file
}

/// What a round does to the file besides appending, by round number.
enum Change {
    Append,
    /// A new file with the same lines renamed over it.
    Rewrite,
    /// Cut back to its first `n` messages.
    Truncate(usize),
    /// Moved to another project folder under the same root.
    Move,
}

fn change_of(round: usize) -> Change {
    match round % 10 {
        3 => Change::Rewrite,
        6 => Change::Truncate(1500 + round),
        8 => Change::Move,
        _ => Change::Append,
    }
}

/// Apply a change, returning the file's path and how many messages it
/// holds afterwards.
fn apply(change: Change, file: PathBuf, messages: usize) -> (PathBuf, usize) {
    match change {
        Change::Append => (file, messages),
        Change::Rewrite => {
            let tmp = file.with_extension("tmp");
            fs::copy(&file, &tmp).unwrap();
            fs::rename(&tmp, &file).unwrap();
            (file, messages)
        }
        Change::Truncate(n) => {
            let text = fs::read_to_string(&file).unwrap();
            let keep: usize = text.split_inclusive('\n').take(n + 1).map(str::len).sum();
            OpenOptions::new()
                .write(true)
                .open(&file)
                .unwrap()
                .set_len(keep as u64)
                .unwrap();
            (file, n)
        }
        Change::Move => {
            let project = file.parent().unwrap();
            let other = project.with_file_name(if project.ends_with("--home-u-live--") {
                "--home-u-moved--"
            } else {
                "--home-u-live--"
            });
            fs::create_dir_all(&other).unwrap();
            let to = other.join(file.file_name().unwrap());
            fs::rename(&file, &to).unwrap();
            (to, messages)
        }
    }
}

/// Appends `n` messages after the last one, `first` the number of the
/// first; every third is written in two pieces (Pi's half-written line).
fn append_messages(file: &Path, first: usize, n: usize) {
    let mut f = OpenOptions::new().append(true).open(file).unwrap();
    for i in first..first + n {
        let id = format!("m{i:07}");
        let parent = format!("m{:07}", i - 1);
        let text = format!("message {i} about the loop zqlive{i}");
        let line = if i % 2 == 0 {
            user(&id, Some(&parent), (i % 60) as u32, &text)
        } else {
            assistant(&id, &parent, (i % 60) as u32, &text)
        } + "\n";
        if i % 3 == 0 {
            let (a, b) = line.split_at(line.len() / 2);
            f.write_all(a.as_bytes()).unwrap();
            f.flush().unwrap();
            std::thread::yield_now();
            f.write_all(b.as_bytes()).unwrap();
        } else {
            f.write_all(line.as_bytes()).unwrap();
        }
        f.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

fn build_quietly(s: &Scratch, root: &Path) {
    let out = run(s.build_cmd(&[root]).arg("-q"));
    assert!(
        out.status.success(),
        "a build failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn three_builders_and_a_writer_leave_exactly_what_a_fresh_build_holds() {
    let s = Arc::new(Scratch::new());
    let root = s.dir.path().join("sessions");
    const START: usize = 2000;
    let mut file = session(&root, START);
    build_quietly(&s, &root);

    let mut next = START;
    for round in 0..ROUNDS {
        let done = Arc::new(AtomicBool::new(false));
        let builders: Vec<_> = (0..3)
            .map(|_| {
                let (s, root, done) = (s.clone(), root.clone(), done.clone());
                std::thread::spawn(move || {
                    while !done.load(Ordering::Relaxed) {
                        build_quietly(&s, &root);
                    }
                })
            })
            .collect();
        // A fourth build, killed wherever it is.
        let mut doomed = s.build_cmd(&[&root]).arg("-q").spawn().unwrap();
        (file, next) = apply(change_of(round), file, next);
        append_messages(&file, next, PER_ROUND / 2);
        let _ = doomed.kill();
        let _ = doomed.wait();
        append_messages(&file, next + PER_ROUND / 2, PER_ROUND - PER_ROUND / 2);
        next += PER_ROUND;
        done.store(true, Ordering::Relaxed);
        for b in builders {
            b.join().unwrap();
        }
        build_quietly(&s, &root);
        let (code, report) = check(&s, &[&root], &[]);
        assert_eq!(code, 0, "round {round}: {report}");
        assert_eq!(report["documents"], next as u64, "round {round}: {report}");
    }
    let files = [file.as_path()];
    let ours = documents(&s, &files);
    assert_eq!(ours[0].len(), next);
    assert_eq!(ours, fresh_documents(&[&root], &files));
}
