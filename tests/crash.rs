//! Crash safety and concurrency through the real binary: a build killed at
//! any point leaves an index that opens and answers with the last
//! committed state, and the next build completes it with no duplicate and
//! no missing document; a second writer is refused with a clear message,
//! a lock left by a killed build is no obstacle, and searches never wait.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::crash::{change, fixture_copy, hits, total_messages};
use crate::util::{run, Scratch};

#[test]
fn a_build_killed_with_sigkill_at_any_moment_is_recovered() {
    let s = Scratch::new();
    let corpus = s.dir.path().join("corpus");
    let gen = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen-corpus.py"))
        .arg("--out")
        .arg(&corpus)
        .args(["--size", "8MB", "--seed", "3"])
        .output()
        .unwrap();
    assert!(gen.status.success());
    // A first build, then full rebuilds killed at several moments: whatever
    // the moment, the index opens and answers from the last commit, and the
    // final build equals a clean one.
    let first = s.build(&[&corpus], &[]);
    // The moments are fractions of how long a whole rebuild takes here.
    // The child is frozen (SIGSTOP) at its moment and only then checked
    // and killed, so a kill never races the build's end; when the build
    // was already over, the moment is halved and the build run again, so
    // every kill lands while the build runs, on any machine and load.
    let started = std::time::Instant::now();
    s.build(&[&corpus], &["--full"]);
    let whole = started.elapsed();
    for fraction in [0.0, 0.05, 0.2, 0.4, 0.7] {
        let mut at = whole.mul_f64(fraction);
        loop {
            let mut child = s
                .build_cmd(&[&corpus])
                .arg("--full")
                .arg("-q")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(at);
            // SAFETY: signalling our own child, which has not been reaped
            // (its pid cannot have been reused).
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGSTOP) };
            let running = child.try_wait().unwrap().is_none();
            child.kill().unwrap();
            let _ = child.wait();
            if running {
                break;
            }
            assert!(
                at > Duration::ZERO,
                "a build ended before it could be stopped"
            );
            at /= 2;
        }
        let out = run(s
            .cmd()
            .args(["search", "--json", "the", "--index"])
            .arg(s.index()));
        assert_eq!(
            out.status.code(),
            Some(0),
            "after a kill at {at:?} into a build: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            total_messages(&s),
            first["messages_indexed"].as_u64().unwrap()
        );
    }
    let r = s.build(&[&corpus], &[]);
    let fresh = Scratch::new();
    let clean = fresh.build(&[&corpus], &[]);
    assert_eq!(r["sessions"], clean["sessions"]);
    assert_eq!(total_messages(&s), total_messages(&fresh));
}

#[test]
fn a_second_writer_waits_for_the_first_says_so_and_searches_never_wait() {
    use std::io::BufRead;
    let s = Scratch::new();
    let dir = fixture_copy(&s);
    s.build(&[&dir], &[]);
    // Hold the writer lock as a running build would.
    let lock = fs::File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(s.index().join(".tantivy-writer.lock"))
        .unwrap();
    lock.try_lock().unwrap();

    // Nothing changed: no lock needed, the build succeeds.
    let r = s.build(&[&dir], &[]);
    assert_eq!(r["files_unchanged"], 3);
    // Something changed: the build waits for the lock, and says so.
    change(&dir);
    let mut waiting = s
        .build_cmd(&[&dir])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(waiting.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(
        first.contains("waiting for another build to finish writing"),
        "{first}"
    );
    // Searches do not take the lock: they answer from the last commit.
    assert!(!hits(&s, "notify").is_empty());
    assert!(hits(&s, "zqcrashprobe").is_empty());

    // The lock released (the lock file stays behind, as after a killed
    // build), the waiting build goes on and indexes the change.
    drop(lock);
    let out = waiting.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(s.index().join(".tantivy-writer.lock").exists());
    assert_eq!(hits(&s, "zqcrashprobe").len(), 1);
}

#[test]
fn a_corrupt_index_names_the_directory_and_full_recovers_it() {
    let s = Scratch::new();
    let dir = fixture_copy(&s);
    s.build(&[&dir], &[]);
    fs::write(s.index().join("meta.json"), b"{ not json").unwrap();
    let out = run(s.cmd().args(["search", "notify", "--index"]).arg(s.index()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&s.index().display().to_string()), "{err}");
    assert!(err.contains("--full"), "{err}");
    let out = run(&mut s.build_cmd(&[&dir]));
    assert_eq!(out.status.code(), Some(2));
    let r = s.build(&[&dir], &["--full"]);
    assert_eq!(r["files_indexed"], 3);
    assert!(!hits(&s, "notify").is_empty());
}

#[test]
fn another_programs_index_is_named_and_full_replaces_it() {
    let s = Scratch::new();
    let dir = fixture_copy(&s);
    // A tantivy index with some other schema, as another tool would leave.
    {
        let mut b = tantivy::schema::Schema::builder();
        let title = b.add_text_field("title", tantivy::schema::TEXT | tantivy::schema::STORED);
        fs::create_dir_all(s.index()).unwrap();
        let index = tantivy::Index::create_in_dir(s.index(), b.build()).unwrap();
        let mut w: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
        w.add_document(tantivy::doc!(title => "someone else's"))
            .unwrap();
        w.commit().unwrap();
    }
    for cmd in [&["search", "x"][..], &["build"]] {
        let mut c = s.cmd();
        c.args(cmd);
        if cmd[0] == "build" {
            c.arg(&dir);
        }
        let out = run(c.arg("--index").arg(s.index()));
        assert_eq!(out.status.code(), Some(2), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&s.index().display().to_string()), "{err}");
        assert!(
            err.contains("did not write") && err.contains("--full"),
            "{err}"
        );
    }
    let r = s.build(&[&dir], &["--full"]);
    assert_eq!(r["files_indexed"], 3);
    assert!(!hits(&s, "notify").is_empty());

    // A directory with anything else in it is never replaced, even so.
    let mine = s.dir.path().join("mine");
    fs::create_dir_all(&mine).unwrap();
    fs::write(mine.join("notes.txt"), b"keep me").unwrap();
    let out = run(s
        .cmd()
        .arg("build")
        .arg(&dir)
        .arg("--full")
        .arg("--index")
        .arg(&mine));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(fs::read(mine.join("notes.txt")).unwrap(), b"keep me");
}
