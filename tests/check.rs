//! `pi-index check` on indexes a plain build leaves (the damage only
//! fault injection makes is in failpoints.rs): consistent, out of date,
//! a state that lies about the file, and no index at all.

use std::fs::{self, OpenOptions};
use std::io::Write;

use crate::util::concurrent::check;
use crate::util::incremental::{append, setup, user};
use crate::util::run;

#[test]
fn a_fresh_index_is_consistent_and_changes_since_are_not_defects() {
    let t = setup();
    t.build(&[]);
    let (code, report) = check(&t.s, &[&t.sessions], &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["files_checked"], 2);
    assert_eq!(report["out_of_date"], 0);
    // Pi appends, a new session appears: the next build's work.
    append(
        &t.file,
        &(user("b1", Some("a2"), 2, "later zqlater") + "\n"),
    );
    fs::write(
        t.sessions.join("--home-u-inc--/new.jsonl"),
        fs::read(t.sessions.join("--home-u-inc--/other.jsonl")).unwrap(),
    )
    .unwrap();
    let (code, report) = check(&t.s, &[&t.sessions], &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["out_of_date"], 2, "{report}");
    let out = run(t
        .s
        .cmd()
        .arg("check")
        .arg(&t.sessions)
        .arg("--index")
        .arg(t.s.index()));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "index consistent: 2 files, 8 documents, as a fresh build of the same bytes \
         (2 files changed since the last build: `pi-index build` reads them)\n"
    );
}

#[test]
fn a_state_that_says_unchanged_over_other_bytes_is_found_and_repaired() {
    let t = setup();
    t.build(&[]);
    // The same size, the same time, other words (an editor that keeps the
    // modification time): the next build would not read it again.
    let before = fs::metadata(&t.file).unwrap();
    let text = fs::read_to_string(&t.file).unwrap();
    let swapped = text.replace("first answer about alpacas", "first answer about zqlamas");
    assert_eq!(swapped.len(), text.len());
    let mut f = OpenOptions::new().write(true).open(&t.file).unwrap();
    f.write_all(swapped.as_bytes()).unwrap();
    f.set_modified(before.modified().unwrap()).unwrap();
    drop(f);
    assert!(t.build(&[])["files_unchanged"] == 2);

    let out = run(t
        .s
        .cmd()
        .arg("check")
        .arg(&t.sessions)
        .arg("--index")
        .arg(t.s.index()));
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with(&format!(
            "{}: its state says the file is unchanged, but the bytes indexed are not the file's\n",
            t.file.display()
        )),
        "{said}"
    );
    assert!(
        said.ends_with(
            "index differs from the files: 1 session records wrong; `pi-index check --repair` mends it\n"
        ),
        "{said}"
    );

    let (code, report) = check(&t.s, &[&t.sessions], &["--repair"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["repaired"], 1);
    assert_eq!(t.s.search_json("zqlamas", &[]).len(), 1);
}

#[test]
fn check_without_an_index_says_to_build_one() {
    let t = setup();
    let out = run(t
        .s
        .cmd()
        .arg("check")
        .arg(&t.sessions)
        .arg("--index")
        .arg(t.s.index()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("run `pi-index build` first"), "{err}");
}
