//! The tests that need fault injection (`--features failpoints`): a build
//! killed at each named point of its work, and files that vanish or shrink
//! between discovery and reading. Release builds carry none of it.

// Benches, examples and tests print as they like; only the product is
// held to printing through pi_index::output (clippy.toml).
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

mod util;

use util::crash::{change, fixture_copy, hits, total_messages};
use util::incremental::{append, setup, user};
use util::{run, Scratch};

#[test]
fn a_build_killed_anywhere_leaves_the_last_commit_and_the_next_build_completes() {
    for point in [
        "before-writer",
        "after-first-file",
        "before-commit",
        "after-prepare-commit",
        "after-commit",
    ] {
        let s = Scratch::new();
        let dir = fixture_copy(&s);
        s.build(&[&dir], &[]);
        let before_total = total_messages(&s);
        let before_notify = hits(&s, "notify");
        change(&dir);

        let out = run(s
            .build_cmd(&[&dir])
            .env("PI_INDEX_CRASH_AT", point)
            .arg("-q"));
        assert!(
            !out.status.success(),
            "{point}: the build should have crashed"
        );
        assert_eq!(out.status.code(), None, "{point}: killed by a signal");

        // The index opens and answers with a committed state.
        let committed = point == "after-commit";
        assert_eq!(hits(&s, "notify"), before_notify, "{point}");
        assert_eq!(
            hits(&s, "zqcrashprobe").len(),
            usize::from(committed),
            "{point}"
        );
        if !committed {
            assert_eq!(total_messages(&s), before_total, "{point}");
        }

        // The next build completes the work: nothing twice, nothing missing.
        s.build(&[&dir], &[]);
        assert_eq!(
            hits(&s, "zqcrashprobe"),
            vec![("branch-abandoned.jsonl".to_owned(), 8)],
            "{point}"
        );
        assert_eq!(hits(&s, "notify"), before_notify, "{point}");
        let fresh = Scratch::new();
        fresh.build(&[&dir], &[]);
        assert_eq!(total_messages(&s), total_messages(&fresh), "{point}");
        for word in ["notify", "polling", "model", "windows", "bom"] {
            assert_eq!(hits(&s, word), hits(&fresh, word), "{point}: {word}");
        }
    }
}

#[test]
fn files_that_vanish_or_shrink_during_a_build_cost_only_themselves() {
    let t = setup();
    // Vanishes between discovery and reading: reported, the rest indexed.
    let r = t.s.report(
        t.s.build_cmd(&[&t.sessions])
            .env("PI_INDEX_TEST_VANISH", "other.jsonl"),
    );
    assert_eq!(r["files_failed"], 1);
    assert_eq!(r["files_indexed"], 1);
    assert!(r["errors"][0]["path"]
        .as_str()
        .unwrap()
        .ends_with("other.jsonl"));
    assert_eq!(t.texts().len(), 2);

    // Shrinks while mapped (Pi rewriting it): no crash, skipped, reported;
    // the index keeps what it had, and the next build reads the new file.
    append(
        &t.file,
        &(user("a3", Some("a2"), 2, "grown before the rewrite") + "\n"),
    );
    let r = t.s.report(
        t.s.build_cmd(&[&t.sessions])
            .env("PI_INDEX_TEST_SHRINK", t.file.file_name().unwrap()),
    );
    assert_eq!(r["files_failed"], 1, "{r}");
    assert!(
        r["errors"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("shrank"),
        "{r}"
    );
    assert_eq!(t.texts().len(), 2, "the index kept what it had");
    // The file is now empty: the next build sees it as rejected and drops it.
    let r = t.build(&[]);
    assert_eq!(r["files_rejected"], 1);
}

#[test]
fn a_panic_while_reading_one_file_costs_only_that_file_and_says_what_happened() {
    let s = Scratch::new();
    let dir = fixture_copy(&s);
    let whole = Scratch::new();
    whole.build(&[&fixture_copy(&whole)], &[]);
    assert_eq!(hits(&whole, "notify").len(), 4, "the file has hits to lose");
    let r = s.report(
        s.build_cmd(&[&dir])
            .env("PI_INDEX_TEST_PANIC", "branch-abandoned.jsonl"),
    );
    assert_eq!(r["files_failed"], 1, "{r}");
    assert_eq!(r["files_indexed"], 2, "{r}");
    let reason = r["errors"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("internal error")
            && reason.contains("PI_INDEX_TEST_PANIC at")
            && reason.contains("please report it"),
        "{reason}"
    );
    // Its documents, queued before the panic, were withdrawn; the others
    // are there.
    assert!(hits(&s, "notify").is_empty(), "{:?}", hits(&s, "notify"));
    let clean = Scratch::new();
    let only_others = fixture_copy(&clean);
    std::fs::remove_file(only_others.join("branch-abandoned.jsonl")).unwrap();
    clean.build(&[&only_others], &[]);
    assert_eq!(total_messages(&s), total_messages(&clean));
}
