//! A refresh that reads only what the watcher saw change
//! (`pipeline::build_changed`, as the long-running front ends refresh)
//! leaves what a fresh build of the same files holds: a new file, an
//! append, a new directory, a deletion and a move, each seen by the
//! watcher (polled with a deadline) and then indexed.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use pi_index::pipeline::{build, build_changed, BuildOptions};
use pi_index::watch::{Changes, SessionWatch};

use crate::util::concurrent::{check, documents, fresh_documents};
use crate::util::incremental::{append, setup, user};

fn opts(root: &std::path::Path, index: PathBuf) -> BuildOptions {
    BuildOptions::new(vec![root.to_owned()], index)
        .threads(2)
        .thread_memory(32 << 20)
}

/// Takes from the watch until `n` paths have been seen (or everything).
fn changes(w: &SessionWatch, want: &[&std::path::Path]) -> Vec<PathBuf> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen: Vec<PathBuf> = Vec::new();
    while !want.iter().all(|p| seen.iter().any(|s| s == p)) {
        assert!(Instant::now() < deadline, "saw {seen:?}, wanted {want:?}");
        w.wait(Duration::from_millis(100));
        match w.take() {
            Changes::Paths(p) => seen.extend(p),
            Changes::None => {}
            Changes::Everything(why) => panic!("everything: {why}"),
        }
    }
    seen
}

#[test]
fn a_refresh_of_what_the_watcher_saw_equals_a_fresh_build() {
    let t = setup();
    let root = fs::canonicalize(&t.sessions).unwrap();
    let o = opts(&root, t.s.index());
    build(&o, &|_| {}).unwrap();
    let w = SessionWatch::start(std::slice::from_ref(&root));
    assert!(matches!(w.take(), Changes::Everything(_)));

    let project = root.join("--home-u-inc--");
    let file = project.join("2026-05-01T10-00-00-000Z_inc00001.jsonl");
    let other = project.join("other.jsonl");
    // An append, and a new file in a new directory.
    append(
        &file,
        &(user("b1", Some("a2"), 2, "appended zqwatched") + "\n"),
    );
    let newdir = root.join("--home-u-new--");
    fs::create_dir(&newdir).unwrap();
    let new = newdir.join("new.jsonl");
    fs::copy(&other, &new).unwrap();
    let seen = changes(&w, &[&file, &newdir]);
    let r = build_changed(&o, &seen, &|_| {}).unwrap();
    assert_eq!((r.files_grown, r.files_indexed), (1, 2), "{r:?}");
    assert_eq!(r.files_scanned, 2, "only what changed is looked at: {r:?}");

    // A deletion.
    fs::remove_file(&other).unwrap();
    let seen = changes(&w, &[&other]);
    let r = build_changed(&o, &seen, &|_| {}).unwrap();
    assert_eq!((r.files_deleted, r.files_indexed), (1, 0), "{r:?}");

    // A move to another project folder.
    let moved_dir = root.join("--home-u-moved--");
    fs::create_dir(&moved_dir).unwrap();
    let moved = moved_dir.join(file.file_name().unwrap());
    fs::rename(&file, &moved).unwrap();
    // (A file put into a directory just created can come before the
    // directory's own watch: the directory's creation is what is seen,
    // and the refresh walks it.)
    let seen = changes(&w, &[&file, &moved_dir]);
    let r = build_changed(&o, &seen, &|_| {}).unwrap();
    assert_eq!(r.files_moved, 1, "{r:?}");

    // Nothing since: nothing to take, and a refresh would have no work.
    assert_eq!(w.take(), Changes::None);
    let files = [moved.as_path(), new.as_path()];
    assert_eq!(documents(&t.s, &files), fresh_documents(&[&root], &files));
    assert_eq!(t.s.search_json("zqwatched", &[]).len(), 1);
    let (code, report) = check(&t.s, &[&root], &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["files_checked"], 2, "{report}");
}

/// A project directory linked into the session directory (a symbolic
/// link to a folder elsewhere) is walked through the link by a build,
/// and watched through it: a refresh of what changed there names the
/// file as the build did, and indexes the append once, not a second copy
/// of the file under its real path.
#[test]
fn a_linked_project_directory_is_refreshed_under_the_build_s_path() {
    let t = setup();
    let root = fs::canonicalize(&t.sessions).unwrap();
    let elsewhere = fs::canonicalize(t.s.dir.path()).unwrap().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    let real = elsewhere.join("linked.jsonl");
    fs::copy(root.join("--home-u-inc--/other.jsonl"), &real).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("--linked--")).unwrap();
    let o = opts(&root, t.s.index());
    let r = build(&o, &|_| {}).unwrap();
    assert_eq!(r.files_indexed, 3, "{r:?}");
    let w = SessionWatch::start(std::slice::from_ref(&root));
    assert!(matches!(w.take(), Changes::Everything(_)));
    append(&real, &(user("z1", None, 9, "zqlinked append") + "\n"));
    let Changes::Paths(seen) = w.take() else {
        panic!("the append was not seen")
    };
    let linked = root.join("--linked--/linked.jsonl");
    assert_eq!(seen, std::slice::from_ref(&linked));
    let r = build_changed(&o, &seen, &|_| {}).unwrap();
    assert_eq!((r.files_grown, r.files_indexed), (1, 1), "{r:?}");
    let hits = t.s.search_json("zqlinked", &[]);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["path"], linked.to_string_lossy().as_ref());
    let (code, report) = check(&t.s, &[&root], &[]);
    assert_eq!(code, 0, "{report}");
}
