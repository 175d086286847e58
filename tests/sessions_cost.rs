//! `sessions --sort cost`: sessions by what each spent itself, most
//! first (a fork's copies of its parent's entries are its parent's), on
//! hand-made sessions of round costs (`fixtures/usage-forks/`) and on
//! sessions and forks Pi 1.6 wrote; what it takes with it and what it
//! refuses.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{json_lines, reference, run, Scratch};

fn forks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/usage-forks")
}

/// `fixtures/usage-forks` indexed.
fn indexed() -> Scratch {
    let s = Scratch::new();
    s.build(&[&forks()], &[]);
    s
}

/// `pi-index sessions ARGS --index …`: exit code, stdout, stderr.
fn sessions(s: &Scratch, args: &[&str]) -> (Option<i32>, String, String) {
    let out = run(s
        .cmd()
        .arg("sessions")
        .args(args)
        .arg("--index")
        .arg(s.index()));
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `pi-index sessions ARGS --json`'s rows.
fn rows(s: &Scratch, args: &[&str]) -> Vec<Value> {
    let out = run(s
        .cmd()
        .arg("sessions")
        .args(args)
        .args(["--json", "--index"])
        .arg(s.index()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_lines(&out)
}

/// Each row's id (its last three digits) and its three figures.
fn figures(rows: &[Value]) -> Vec<(String, Value, Value, Value)> {
    rows.iter()
        .map(|r| {
            let id = r["session_id"].as_str().unwrap();
            (
                id[id.len() - 3..].to_owned(),
                r["cost"].clone(),
                r["own_cost"].clone(),
                r["total_tokens"].clone(),
            )
        })
        .collect()
}

fn fig(id: &str, cost: Value, own: Value, tokens: Value) -> (String, Value, Value, Value) {
    (id.to_owned(), cost, own, tokens)
}

#[test]
fn sort_cost_orders_sessions_by_what_each_spent_itself_ties_newest_first() {
    let s = indexed();
    let ranked = rows(&s, &["--sort", "cost"]);
    // The parent first; the fork's file holds $0.24, but it spent $0.06
    // itself: tied with the newer session that spent as much, after it;
    // a session that cost nothing next, one that recorded no usage last.
    assert_eq!(
        figures(&ranked),
        [
            fig("101", json!(0.48), json!(0.48), json!(372000)),
            fig("103", json!(0.06), json!(0.06), json!(27000)),
            fig("102", json!(0.24), json!(0.06), json!(144000)),
            fig("104", json!(0.0), json!(0.0), json!(5500)),
            fig("105", Value::Null, Value::Null, Value::Null),
        ]
    );
    // Each line is the session's line of `sessions --json`, with the
    // three figures added; those are `usage session`'s.
    let listed = rows(&s, &[]);
    let usage = json_lines(&run(s
        .cmd()
        .args(["usage", "session", "--json", "--index"])
        .arg(s.index())));
    assert_eq!(usage.len(), 4);
    for r in &ranked {
        let mut plain = r.clone();
        for k in ["cost", "own_cost", "total_tokens"] {
            plain.as_object_mut().unwrap().remove(k);
        }
        assert!(listed.contains(&plain), "{r}");
        match usage.iter().find(|u| u["path"] == r["path"]) {
            Some(u) => {
                for k in ["cost", "own_cost", "total_tokens"] {
                    assert_eq!(r[k], u[k], "{k}: {r}");
                }
            }
            None => assert_eq!(r["cost"], Value::Null, "{r}"),
        }
    }
    // By time (the default, or said), no figures: usage is not read.
    assert!(listed.iter().all(|r| r.get("cost").is_none()));
    assert_eq!(rows(&s, &["--sort", "time"]), listed);
    assert_eq!(
        figures(&listed)
            .into_iter()
            .map(|f| f.0)
            .collect::<Vec<_>>(),
        ["104", "103", "102", "105", "101"]
    );
}

#[test]
fn sort_cost_prints_what_each_spent_as_a_column() {
    let s = indexed();
    let (code, out, err) = sessions(&s, &["--sort", "cost"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let line = |time: &str, cost: &str, label: &str, cwd: &str, n: u32, id: &str| {
        let messages = if n == 1 { "message" } else { "messages" };
        format!(
            "{time}  {cost:>8}  {label:<60}  {cwd}  {n} {messages}  0198d000-0000-7000-8000-000000000{id}\n"
        )
    };
    let want = [
        line(
            "2026-08-10 09:00",
            "$0.48",
            "Plan the migration to the new schema zqcostparent",
            "/home/u/costly",
            4,
            "101",
        ),
        line(
            "2026-08-13 09:00",
            "$0.06",
            "Name the new table zqcosttie",
            "/home/u/costly",
            2,
            "103",
        ),
        line(
            "2026-08-12 09:00",
            "$0.06",
            "Migration, keeping both tables",
            "/home/u/costly",
            4,
            "102",
        ),
        line(
            "2026-08-14 09:00",
            "$0.00",
            "Say hello zqcostfree",
            "/home/u/local-model",
            2,
            "104",
        ),
        line(
            "2026-08-11 09:00",
            "-",
            "A question never answered zqcostnone",
            "/home/u/costly",
            1,
            "105",
        ),
    ];
    assert_eq!(out, want.concat());
    // The column, exactly: the time, two spaces, eight columns of cost.
    assert!(out.starts_with("2026-08-10 09:00     $0.48  Plan the migration"));
    // -n: the N that cost most; --all: every one.
    let (_, two, _) = sessions(&s, &["--sort", "cost", "-n", "2"]);
    assert_eq!(two, want[..2].concat());
    let (_, all, _) = sessions(&s, &["--sort", "cost", "--all"]);
    assert_eq!(all, out);
}

#[test]
fn sort_cost_keeps_what_cwd_since_and_n_choose() {
    let s = indexed();
    let ids = |args: &[&str]| -> Vec<String> {
        figures(&rows(&s, args)).into_iter().map(|f| f.0).collect()
    };
    assert_eq!(
        ids(&["--sort", "cost", "--cwd", "/home/u/costly"]),
        ["101", "103", "102", "105"]
    );
    // Active since the 12th: the parent and the unanswered question are
    // left out; each session's cost is still the whole session's.
    let since = rows(&s, &["--sort", "cost", "--since", "2026-08-12"]);
    assert_eq!(
        figures(&since),
        [
            fig("103", json!(0.06), json!(0.06), json!(27000)),
            fig("102", json!(0.24), json!(0.06), json!(144000)),
            fig("104", json!(0.0), json!(0.0), json!(5500)),
        ]
    );
    assert_eq!(ids(&["--sort", "cost", "-n", "1"]), ["101"]);
    assert_eq!(
        ids(&["--sort", "cost", "-n", "3", "--cwd", "/home/u/costly"]),
        ["101", "103", "102"]
    );
    // --threads draws its tree newest first, as without --sort time.
    let (code, threads, _) = sessions(&s, &["--threads", "--sort", "time"]);
    assert_eq!(code, Some(0));
    assert_eq!(threads, sessions(&s, &["--threads"]).1);
}

#[test]
fn sort_refuses_what_it_cannot_order() {
    let s = indexed();
    for (args, want) in [
        (
            &["--sort", "cost", "migration"][..],
            "pi-index: error: --sort cost: a QUERY ranks the sessions it finds by how well they match; --sort orders the sessions without one (choose them with --cwd and --since, or total a query's with `pi-index usage session`)\n",
        ),
        (
            &["migration", "--sort", "time"],
            "pi-index: error: --sort time: a QUERY ranks the sessions it finds by how well they match; --sort orders the sessions without one (choose them with --cwd and --since, or total a query's with `pi-index usage session`)\n",
        ),
        (
            &["--sort", "cost", "--threads"],
            "pi-index: error: --sort cost: --threads draws each session above its forks, newest first, and cannot order them by cost: drop one of the two\n",
        ),
    ] {
        let (code, out, err) = sessions(&s, args);
        assert_eq!(code, Some(2), "{args:?}");
        assert_eq!(out, "", "{args:?}");
        assert_eq!(err, want, "{args:?}");
    }
    // An order it does not know: clap names the ones it does.
    let (code, _, err) = sessions(&s, &["--sort", "price"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("invalid value 'price' for '--sort <ORDER>'")
            && err.contains("[possible values: time, cost]"),
        "{err}"
    );
}

/// Sessions and forks Pi 1.6 wrote: each line's `cost` and tokens are
/// Pi's own totals of its file, its `own_cost` what `usage session`
/// says, the lines ordered by it; and what they spent themselves adds up
/// to every entry of each family once (Pi's entries, counted by the
/// script that wrote them).
#[test]
fn sort_cost_on_sessions_pi_wrote_equals_pi_s_totals() {
    let Some(pi) = reference::pi() else { return };
    let s = Scratch::new();
    let out = s.dir.path().join("pi16-usage");
    let manifest = pi.write_usage(&out, &s.dir.path().join("node-home"));
    s.build(&[&out], &[]);
    let ranked = rows(&s, &["--sort", "cost"]);
    let files = manifest["files"].as_array().unwrap();
    assert_eq!(ranked.len(), files.len());
    let usage = json_lines(&run(s
        .cmd()
        .args(["usage", "session", "--json", "--index"])
        .arg(s.index())));
    for f in files {
        let r = ranked
            .iter()
            .find(|r| r["path"] == f["path"])
            .unwrap_or_else(|| panic!("no line for {}", f["path"]));
        assert!(
            (r["cost"].as_f64().unwrap() - f["cost"].as_f64().unwrap()).abs() < 1e-9,
            "{r}\n{f}"
        );
        let t = &f["tokens"];
        let tokens: u64 = ["input", "output", "cacheRead", "cacheWrite"]
            .iter()
            .map(|k| t[k].as_u64().unwrap())
            .sum();
        assert_eq!(r["total_tokens"], tokens, "{r}");
        let u = usage.iter().find(|u| u["path"] == f["path"]).unwrap();
        assert_eq!(r["own_cost"], u["own_cost"], "{r}");
    }
    // Most first; ties newest first.
    for pair in ranked.windows(2) {
        let (a, b) = (
            pair[0]["own_cost"].as_f64().unwrap(),
            pair[1]["own_cost"].as_f64().unwrap(),
        );
        assert!(
            a > b || (a == b && pair[0]["last"].as_str() >= pair[1]["last"].as_str()),
            "{pair:?}"
        );
    }
    // The parent of the forks spent more than any of them.
    let full = files.iter().find(|f| f["group"] == "full").unwrap();
    let first_full = ranked
        .iter()
        .position(|r| {
            files
                .iter()
                .any(|f| f["path"] == r["path"] && f["group"] == "full")
        })
        .unwrap();
    assert_eq!(ranked[first_full]["path"], full["path"]);
    let own: f64 = ranked.iter().map(|r| r["own_cost"].as_f64().unwrap()).sum();
    let once: f64 = manifest["daily"]
        .as_object()
        .unwrap()
        .values()
        .map(|d| d["cost"].as_f64().unwrap())
        .sum();
    assert!((own - once).abs() < 1e-9, "{own} {once}");
    let files_sum: f64 = files.iter().map(|f| f["cost"].as_f64().unwrap()).sum();
    assert!(own < files_sum * 0.8, "{own} {files_sum}");
}
