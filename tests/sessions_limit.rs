//! `sessions -n N` limits the listing as it limits a query's rows (the
//! newest N, as `ls`-like listings do), `--all` prints everything, and
//! `-n 0` is an error; the picker's listing and MCP `sessions` agree.

use serde_json::Value;

use crate::util::{fixtures, json_lines, run, Scratch};

/// The fixtures' index.
fn indexed() -> Scratch {
    let s = Scratch::new();
    s.build(&[&fixtures()], &[]);
    s
}

/// `pi-index sessions <args> --json`: exit code and ids, in order.
fn sessions(s: &Scratch, args: &[&str]) -> (Option<i32>, Vec<String>) {
    let out = run(s
        .cmd()
        .arg("sessions")
        .args(args)
        .args(["--json", "--index"])
        .arg(s.index()));
    let ids = json_lines(&out)
        .iter()
        .map(|v| {
            // A listing row is the session; a query's row has it flattened
            // too.
            v["session_id"].as_str().unwrap().to_owned()
        })
        .collect();
    (out.status.code(), ids)
}

#[test]
fn sessions_without_a_query_prints_the_newest_n() {
    let s = indexed();
    let (code, all) = sessions(&s, &["--all"]);
    assert_eq!(code, Some(0));
    // Every session of the fixtures: more than a default page.
    assert_eq!(all.len(), 53, "{all:?}");
    let (code, default) = sessions(&s, &[]);
    assert_eq!(code, Some(0));
    assert_eq!(default, all[..20], "the 20 newest by default");
    let (code, three) = sessions(&s, &["-n", "3"]);
    assert_eq!(code, Some(0));
    assert_eq!(three, all[..3]);
    assert_eq!(sessions(&s, &["--limit", "1"]).1, all[..1]);
    // More than there are is all of them.
    assert_eq!(sessions(&s, &["-n", "1000"]).1, all);
    // Human output is limited alike: one line per session.
    let out = run(s
        .cmd()
        .args(["sessions", "-n", "2", "--index"])
        .arg(s.index()));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().next().unwrap().ends_with(&all[0]), "{text}");
}

#[test]
fn sessions_with_a_query_is_limited_by_n_and_all_alike() {
    let s = indexed();
    let (code, all) = sessions(&s, &["the", "--all"]);
    assert_eq!(code, Some(0));
    assert!(all.len() > 20, "{}", all.len());
    assert_eq!(sessions(&s, &["the"]).1, all[..20]);
    assert_eq!(sessions(&s, &["the", "-n", "2"]).1, all[..2]);
}

#[test]
fn n_zero_is_an_error_that_points_at_all() {
    let s = indexed();
    for args in [&["-n", "0"][..], &["--limit", "0"], &["the", "-n", "0"]] {
        let out = run(s
            .cmd()
            .arg("sessions")
            .args(args)
            .arg("--index")
            .arg(s.index()));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("-n takes at least 1 (or use --all to print every session)"),
            "{args:?}: {err}"
        );
    }
    // `--all` and `-n` say different things: not both.
    let out = run(s
        .cmd()
        .args(["sessions", "--all", "-n", "3", "--index"])
        .arg(s.index()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--all") && err.contains("--limit"), "{err}");
}

/// `pi-index mcp --call sessions --args ARGS`: the result, or the error.
fn mcp_sessions(s: &Scratch, args: &str) -> Result<Value, String> {
    let out = run(s
        .cmd()
        .args([
            "mcp",
            "--no-refresh",
            "--call",
            "sessions",
            "--args",
            args,
            "--index",
        ])
        .arg(s.index()));
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    } else {
        assert_eq!(out.status.code(), Some(2));
        Err(String::from_utf8(out.stderr).unwrap())
    }
}

#[test]
fn mcp_sessions_lists_the_newest_limit_as_the_cli_does() {
    let s = indexed();
    let (_, all) = sessions(&s, &["--all"]);
    let ids = |v: &Value| -> Vec<String> {
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["session_id"].as_str().unwrap().to_owned())
            .collect()
    };
    let two = mcp_sessions(&s, r#"{"limit":2}"#).unwrap();
    assert_eq!(ids(&two), all[..2]);
    assert_eq!(two["total"], 53);
    assert_eq!(two["next_offset"], 2);
    let err = mcp_sessions(&s, r#"{"limit":0}"#).unwrap_err();
    assert!(err.contains("limit must be at least 1"), "{err}");
}

#[test]
fn the_pickers_listing_is_the_newest_limit_with_the_total() {
    use pi_index::pick::rows::{rows, Query};
    use pi_index::pick::View;
    use pi_index::search::query::Now;
    let s = indexed();
    let (_, all) = sessions(&s, &["--all"]);
    let view = View::open(&s.index()).unwrap();
    let listed = rows(&view, &Query::default(), 3, Now::system()).unwrap();
    let ids: Vec<&str> = listed
        .rows
        .iter()
        .map(|r| r.session.session_id.as_str())
        .collect();
    assert_eq!(ids, all[..3]);
    assert_eq!(listed.total, 53, "the total says more can be fetched");
}
