//! Hostile input, through the real binary: arguments nobody checked,
//! session files whose text, directory, name and id hold terminal escape
//! sequences, index directories in every broken state, closed pipes, dumb
//! terminals, special files, and one message of tens of megabytes.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{run, run_timeout, Scratch};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/search")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `pi-index <cmd> --index <index> <args>` for this scratch.
fn pi(s: &Scratch, args: &[&str]) -> Output {
    run(s
        .cmd()
        .arg(args[0])
        .arg("--index")
        .arg(s.index())
        .args(&args[1..]))
}

/// `search --json` hits: (session id prefix, line).
fn json_hits(out: &Output) -> Vec<(String, u64)> {
    text(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            (
                v["session_id"].as_str().unwrap()[..8].to_owned(),
                v["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------
// Counts and offsets
// ---------------------------------------------------------------------

#[test]
fn counts_and_offsets_past_any_index_are_clamped_never_a_crash() {
    let s = Scratch::new();
    s.build(&[&corpus()], &[]);
    let all = pi(&s, &["search", "tokio", "--json", "-n", "100"]);
    assert_eq!(all.status.code(), Some(0));
    let expected = json_hits(&all);
    assert_eq!(expected.len(), 4);

    // More hits than the index holds: every hit, nothing allocated for
    // the rest.
    for n in ["4000000000", "18446744073709551615"] {
        let out = pi(&s, &["search", "tokio", "--json", "-n", n]);
        assert_eq!(out.status.code(), Some(0), "-n {n}: {}", text(&out.stderr));
        assert_eq!(json_hits(&out), expected, "-n {n}");
    }
    // Past the last hit: nothing, exit 1, and a word saying why.
    for offset in ["4294967296", "18446744073709551615"] {
        for n in ["20", "18446744073709551615"] {
            let out = pi(&s, &["search", "tokio", "--offset", offset, "-n", n]);
            assert_eq!(
                out.status.code(),
                Some(1),
                "--offset {offset} -n {n}: {}",
                text(&out.stderr)
            );
            assert_eq!(text(&out.stdout), "");
            let err = text(&out.stderr);
            assert!(
                err.contains(&format!("--offset {offset} is past the last hit")),
                "{err}"
            );
        }
    }

    // show: more context than the session has is the whole session.
    let a = "aaaa0001-0000-4000-8000-000000000001";
    let whole = s.show_json(a, &[]);
    for context in ["18446744073709551615", "4294967296"] {
        for around in ["0", "4", "18446744073709551615"] {
            let docs = s.show_json(a, &["--around", around, "--context", context]);
            assert_eq!(docs, whole, "--around {around} --context {context}");
        }
    }
}

#[test]
fn build_refuses_thread_counts_and_budgets_it_cannot_honour() {
    let s = Scratch::new();
    for (flag, value) in [
        ("--threads", "65535"),
        ("--threads", "1000"),
        ("--memory", "18446744073709551615"),
        ("--memory", "17592186044416"),
        ("--memory", "100000000"),
    ] {
        let out = run_timeout(s.build_cmd(&[&corpus()]).args([flag, value, "-q"]), 60);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let err = text(&out.stderr);
        assert!(
            err.contains(flag) && err.contains(value) && err.contains("not in"),
            "{flag} {value}: {err}"
        );
        assert!(!s.index().join("meta.json").exists(), "{flag} {value}");
    }
    // The largest accepted values work: a budget past what tantivy takes
    // per thread is capped, not an error.
    let r = s.build(&[&corpus()], &["--threads", "64", "--memory", "65536"]);
    assert_eq!(r["sessions"], 3);
}
