//! `usage --db`: what Pi cost, as the team database holds it, against
//! each host's own index: every grouping and filter, `host:`, the team's
//! totals, pushes that grow, rewrite and remove sessions, a database
//! pushed before it held usage, and the MCP tool and web view over it.
//! Against the module cluster of `tests/team.rs`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::team::{cluster, database, fresh_dump};
use crate::util::pg::{dump, push_ok};
use crate::util::web::Server;
use crate::util::{json_lines, reference, run, Scratch};

/// Every grouping the local index has.
const GROUPS: [&str; 6] = ["daily", "weekly", "monthly", "session", "model", "project"];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `pi-index usage ARGS --json --timezone UTC` reading `from` (`--index
/// DIR` or `--db URL`): its rows and stderr.
fn usage_from(s: &Scratch, from: &[&str], args: &[&str]) -> (Vec<Value>, String) {
    let out = run(s
        .cmd()
        .arg("usage")
        .args(args)
        .args(["--json", "--timezone", "UTC"])
        .args(from));
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "usage {args:?} {from:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        json_lines(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `usage ARGS` of the scratch's own index.
fn local(s: &Scratch, args: &[&str]) -> (Vec<Value>, String) {
    let index = s.index();
    usage_from(s, &["--index", index.to_str().unwrap()], args)
}

/// `usage ARGS --db URL`.
fn db(s: &Scratch, url: &str, args: &[&str]) -> (Vec<Value>, String) {
    usage_from(s, &["--db", url], args)
}

/// Whether `a` and `b` are the same JSON, numbers that are not whole
/// within 1e-9 (money summed in the same order, read back by a parser
/// that is not exact to the last bit).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() < 1e-9
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn assert_same(a: &[Value], b: &[Value], what: &str) {
    let (a, b) = (Value::from(a.to_vec()), Value::from(b.to_vec()));
    assert!(same(&a, &b), "{what}:\n{a:#}\n{b:#}");
}

/// The rows of one host as its own index prints them: every session row
/// names `host`, which is taken off; no other row names one.
fn of_host(rows: &[Value], host: &str) -> Vec<Value> {
    rows.iter()
        .map(|r| {
            let mut r = r.clone();
            let o = r.as_object_mut().unwrap();
            match o.remove("host") {
                Some(h) => {
                    assert!(o.contains_key("session_id"), "{r}");
                    assert_eq!(h, host, "{r}");
                }
                None => assert!(
                    !o.contains_key("session_id"),
                    "a session without its host: {r}"
                ),
            }
            r
        })
        .collect()
}

/// `usage --db` of `host:HOST` and the local index of `s` agree: rows
/// and warnings, in every grouping, alone and with `extra`'s filters.
fn same_as_local(s: &Scratch, url: &str, host: &str, extra: &[&[&str]]) {
    let filter = format!("host:{host}");
    for g in GROUPS {
        for more in [&[][..]].iter().chain(extra) {
            let args: Vec<&str> = [g].into_iter().chain(more.iter().copied()).collect();
            let (want, want_err) = local(s, &args);
            let mut with_host = args.clone();
            with_host.push(&filter);
            let (got, err) = db(s, url, &with_host);
            assert_same(&of_host(&got, host), &want, &format!("{host} {args:?}"));
            assert_eq!(err, want_err, "{host} {args:?}");
        }
    }
}

/// Every file of `from` copied into the new directory `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in std::fs::read_dir(from).unwrap() {
        let f = f.unwrap().path();
        if f.is_dir() {
            copy_dir(&f, &to.join(f.file_name().unwrap()));
        } else {
            std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
        }
    }
}

/// The local rows of `scratches` as one team report: each `key`'s
/// tokens and cost summed, its models merged.
fn summed(rows: &[Vec<Value>], key: &str) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for r in rows.iter().flatten() {
        let k = r[key].as_str().unwrap().to_owned();
        let at = match out.iter().position(|(o, _)| *o == k) {
            Some(i) => i,
            None => {
                out.push((
                    k.clone(),
                    json!({key: k, "input": 0, "output": 0, "cache_read": 0, "cache_write": 0,
                           "total_tokens": 0, "cost": 0.0, "models": []}),
                ));
                out.len() - 1
            }
        };
        let sum = &mut out[at].1;
        for t in [
            "input",
            "output",
            "cache_read",
            "cache_write",
            "total_tokens",
        ] {
            sum[t] = json!(sum[t].as_u64().unwrap() + r[t].as_u64().unwrap());
        }
        sum["cost"] = json!(sum["cost"].as_f64().unwrap() + r["cost"].as_f64().unwrap());
        let mut models: Vec<Value> = sum["models"].as_array().unwrap().clone();
        for m in r["models"].as_array().unwrap() {
            if !models.contains(m) {
                models.push(m.clone());
            }
        }
        models.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        sum["models"] = Value::from(models);
    }
    out
}

/// Two hosts that index the same files at the same paths (so their
/// sessions' and families' keys are the same numbers) and more: alice
/// Pi 1.6's sessions and forks (families), bob a backup folder of the
/// fixtures (copies of each session). `usage --db host:NAME` is each
/// host's own `usage`, in every grouping, with every filter, warnings
/// included; without `host:` each period, model and project totals both
/// hosts (a host's entries are never merged with another's), sessions
/// are named by host, and `usage host` totals each.
#[test]
fn usage_db_counts_each_host_s_entries_exactly_as_its_own_index_does() {
    let Some(pi) = reference::pi() else { return };
    let Some(url) = database("usage_hosts") else {
        return;
    };
    let files = Scratch::new();
    let spend = files.dir.path().join("usage");
    copy_dir(&repo().join("fixtures/usage"), &spend);
    let pi16 = files.dir.path().join("pi16-usage");
    let manifest = pi.write_usage(&pi16, &files.dir.path().join("node-home"));
    let backup = files.dir.path().join("backup");
    copy_dir(&spend, &backup);
    let (alice, bob) = (Scratch::new(), Scratch::new());
    alice.build(&[&spend, &pi16], &[]);
    bob.build(&[&spend, &backup], &[]);
    push_ok(&alice, &url, "alice@laptop");
    push_ok(&bob, &url, "bob@devbox");

    // Each host as its own index counts it, filters too.
    let parent = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["group"] == "full")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let family = format!("family:{}", &parent[..13]);
    same_as_local(
        &alice,
        &url,
        "alice@laptop",
        &[
            &[&family],
            &["cwd:/home/u/spend", "model:sonnet"],
            &["session:0198d000-0000-7000-8000-0000000000f2"],
            &["--since", "2026-08-02", "--until", "2026-08-04"],
        ],
    );
    same_as_local(
        &bob,
        &url,
        "bob@devbox",
        &[
            &["family:0198d000-0000-7000-8000-0000000000e1"],
            &["model:haiku"],
        ],
    );
    // The cases are there: alice's family spends less than its files
    // sum to, bob's backup spends nothing again.
    let (sessions, _) = local(&alice, &["session", &family]);
    assert!(sessions.len() >= 3, "{sessions:?}");
    let files_sum: f64 = sessions.iter().map(|r| r["cost"].as_f64().unwrap()).sum();
    let own_sum: f64 = sessions
        .iter()
        .map(|r| r["own_cost"].as_f64().unwrap())
        .sum();
    assert!(own_sum < files_sum * 0.8, "{own_sum} {files_sum}");
    let (bob_sessions, _) = local(&bob, &["session"]);
    let (spend_sessions, _) = local(&bob, &["session", "cwd:/home/u/spend"]);
    assert!(spend_sessions.len() >= 2, "{spend_sessions:?}");
    assert_eq!(
        bob_sessions.len(),
        2 * local(&built(&spend), &["session"]).0.len()
    );

    // The team: each period, model and project both hosts' (the same
    // files of two hosts are two hosts' spending).
    for (g, key) in [
        ("daily", "period"),
        ("model", "model"),
        ("project", "project"),
    ] {
        let want = summed(&[local(&alice, &[g]).0, local(&bob, &[g]).0], key);
        let (got, _) = db(&alice, &url, &[g]);
        assert_eq!(got.len(), want.len(), "{g}: {got:?}");
        for row in &got {
            let k = row[key].as_str().unwrap();
            let (_, w) = want.iter().find(|(o, _)| o == k).unwrap();
            assert!(same(row, w), "{g}:\n{row}\n{w}");
        }
    }
    // Sessions: every host's, each named by its host.
    let (all, _) = db(&alice, &url, &["session"]);
    for (s, host) in [(&alice, "alice@laptop"), (&bob, "bob@devbox")] {
        let (mine, _) = local(s, &["session"]);
        let theirs: Vec<Value> = all.iter().filter(|r| r["host"] == host).cloned().collect();
        assert_eq!(theirs.len(), mine.len(), "{host}");
        for r in of_host(&theirs, host) {
            assert!(mine.iter().any(|m| same(m, &r)), "{host}: {r}");
        }
    }
    // A row per host: what its own index totals.
    let (hosts, _) = db(&alice, &url, &["host"]);
    let total = |s: &Scratch| -> f64 {
        local(s, &["daily"])
            .0
            .iter()
            .map(|d| d["cost"].as_f64().unwrap())
            .sum()
    };
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    assert_eq!(
        hosts[0]["host"], "alice@laptop",
        "costliest first: {hosts:?}"
    );
    assert!((hosts[0]["cost"].as_f64().unwrap() - total(&alice)).abs() < 1e-9);
    assert_eq!(hosts[1]["host"], "bob@devbox");
    assert!((hosts[1]["cost"].as_f64().unwrap() - total(&bob)).abs() < 1e-9);
    // For people: sessions under a Host column.
    let out = run(alice.cmd().args(["usage", "session", "--db", &url]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(&format!("{:<24}  Session ", "Host")),
        "{text}"
    );
    assert!(text.contains("\nbob@devbox  "), "{text}");
}

/// A scratch whose index holds `dir`.
fn built(dir: &Path) -> Scratch {
    let s = Scratch::new();
    s.build(&[dir], &[]);
    s
}

/// The fixtures of `fixtures/usage` in the scratch's `sessions` folder.
fn spend_dir(s: &Scratch) -> PathBuf {
    let dir = s.dir.path().join("sessions");
    copy_dir(&repo().join("fixtures/usage"), &dir);
    dir
}

/// A session that grows, one rewritten and one removed: each push
/// replaces what the database held of them, so `usage --db` stays the
/// local `usage` and the database what a fresh push makes; the web
/// view's stats page charts it.
#[test]
fn a_grown_a_rewritten_and_a_removed_session_leave_the_database_s_usage_exact() {
    let Some(url) = database("usage_incremental") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    let dir = spend_dir(&s);
    s.build(&[&dir], &[]);
    let r = push_ok(&s, &url, "h");
    assert_eq!(r["sessions_new"], 4, "{r}");
    same_as_local(&s, &url, "h", &[]);

    // An answer appended: only it is sent as a message, and the session's
    // usage replaced (its cost counted once, with the answer's).
    let more = r#"{"type":"message","id":"e100000d","parentId":"e100000c","timestamp":"2026-08-03T09:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"one more"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":11,"cost":{"input":0.00003,"output":0.000015,"cacheRead":0,"cacheWrite":0,"total":0.000045}},"stopReason":"stop","timestamp":1785747600000}}"#;
    let grown = dir.join("usage-everywhere.jsonl");
    let text = std::fs::read_to_string(&grown).unwrap();
    std::fs::write(&grown, format!("{text}{more}\n")).unwrap();
    s.build(&[&dir], &[]);
    let (before, _) = db(&s, &url, &["session", "host:h"]);
    let r = push_ok(&s, &url, "h");
    assert_eq!(
        (r["sessions_grown"].as_u64(), r["messages_sent"].as_u64()),
        (Some(1), Some(1)),
        "{r}"
    );
    same_as_local(&s, &url, "h", &[]);
    let (after, _) = db(
        &s,
        &url,
        &["session", "session:0198d000-0000-7000-8000-0000000000e1"],
    );
    let was = before
        .iter()
        .find(|r| r["session_id"] == after[0]["session_id"])
        .unwrap();
    assert!(
        (after[0]["cost"].as_f64().unwrap() - was["cost"].as_f64().unwrap() - 0.000045).abs()
            < 1e-12,
        "{was}\n{}",
        after[0]
    );

    // One rewritten (its last answer gone), one removed.
    let rewritten = dir.join("omp-usage.jsonl");
    let text = std::fs::read_to_string(&rewritten).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&rewritten, lines[..lines.len() - 1].join("\n") + "\n").unwrap();
    std::fs::remove_file(dir.join("usage-v1.jsonl")).unwrap();
    s.build(&[&dir], &[]);
    let r = push_ok(&s, &url, "h");
    assert_eq!(
        (
            r["sessions_replaced"].as_u64(),
            r["sessions_deleted"].as_u64()
        ),
        (Some(1), Some(1)),
        "{r}"
    );
    same_as_local(&s, &url, "h", &[]);
    let (sessions, _) = db(&s, &url, &["session"]);
    assert_eq!(sessions.len(), 3, "{sessions:?}");
    assert_eq!(
        dump(c, "usage_incremental"),
        fresh_dump(&s, "usage_incremental_fresh", "h", "usage_incremental")
    );

    // The web view over the database charts what `usage --db` counts,
    // and each host's cost.
    let srv = Server::start(&s, &["--db", &url]);
    let page = srv.get("/stats");
    assert_eq!(page.status, 200);
    let (daily, _) = db(&s, &url, &["daily"]);
    let days = crate::serve::chart_bars(&page.body, "chart-cost-days");
    let last = daily.last().unwrap();
    assert_eq!(days.last().unwrap().0, last["period"].as_str().unwrap());
    assert!((days.last().unwrap().1 - last["cost"].as_f64().unwrap()).abs() < 1e-9);
    for (chart, group, key) in [
        ("chart-cost-models", "model", "model"),
        ("chart-cost-hosts", "host", "host"),
    ] {
        let bars = crate::serve::chart_bars(&page.body, chart);
        let (rows, _) = db(&s, &url, &[group]);
        assert_eq!(bars.len(), rows.len().min(10), "{chart}");
        for ((label, value), row) in bars.iter().zip(&rows) {
            assert_eq!(label, row[key].as_str().unwrap());
            assert!((row["cost"].as_f64().unwrap() - value).abs() < 1e-9);
        }
    }
    assert!(!page.body.contains("without-usage"), "{}", page.body);
}

/// A database pushed before it held usage (schema 7): `usage --db` says
/// to push; the first push migrates and sends each unchanged session's
/// usage alone, and the host not pushed yet is said, not counted, until
/// its own push. The MCP tool reads it as the command line does, and
/// `host` is the team database's.
#[test]
fn a_database_pushed_before_it_held_usage_says_what_to_do_and_each_host_s_next_push_sends_it() {
    let Some(url) = database("usage_v7") else {
        return;
    };
    let c = cluster().unwrap();
    let (one, two) = (Scratch::new(), Scratch::new());
    let dir = spend_dir(&one);
    one.build(&[&dir], &[]);
    two.build(&[&dir, &spend_dir(&two)], &[]);
    push_ok(&one, &url, "one");
    push_ok(&two, &url, "two");
    c.sql(
        "usage_v7",
        "ALTER TABLE pi_sessions DROP COLUMN usage; UPDATE pi_index_schema SET version = 7",
    );
    let out = run(one.cmd().args(["usage", "--db", &url]));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("older schema (7)") && err.contains("run `pi-index push` once"),
        "{err}"
    );

    let r = push_ok(&one, &url, "one");
    assert_eq!(
        (
            r["sessions_usage_added"].as_u64(),
            r["sessions_unchanged"].as_u64(),
            r["messages_sent"].as_u64(),
            r["sessions_replaced"].as_u64()
        ),
        (Some(4), Some(4), Some(0), Some(0)),
        "{r}"
    );
    same_as_local(&one, &url, "one", &[]);
    let (rows, err) = db(&one, &url, &["daily"]);
    assert_same(&rows, &local(&one, &["daily"]).0, "two not counted");
    assert!(
        err.starts_with(
            "pi-index: warning: 8 sessions of two were pushed before the team database held usage and are not counted: the next `pi-index push` on two sends it\n"
        ),
        "{err}"
    );
    let r = push_ok(&two, &url, "two");
    assert_eq!(r["sessions_usage_added"], 8, "{r}");
    same_as_local(&two, &url, "two", &[]);
    let (_, err) = db(&one, &url, &["daily"]);
    assert!(!err.contains("pushed before"), "{err}");
    // Nothing more to send.
    let r = push_ok(&two, &url, "two");
    assert_eq!(
        (
            r["sessions_usage_added"].as_u64(),
            r["transactions"].as_u64()
        ),
        (Some(0), Some(0)),
        "{r}"
    );
    let fresh = crate::util::pg::fresh_like(c, &two, "usage_v7_fresh", "two", "usage_v7");
    let (want, _) = db(&two, &fresh, &["session"]);
    let (got, _) = db(&two, &url, &["session", "host:two"]);
    assert_same(&got, &want, "as a fresh push");

    // The MCP tool: the same rows, grouped and filtered by host.
    let call = |s: &Scratch, from: &[&str], args: &str| {
        run(s
            .cmd()
            .args(["mcp", "--call", "usage", "--args", args])
            .args(from))
    };
    let out = call(
        &one,
        &["--db", &url],
        r#"{"group":"session","host":"two","timezone":"UTC","limit":50}"#,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (want, _) = db(&one, &url, &["session", "host:two"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), want.len(), "{v}");
    for (a, b) in rows.iter().zip(&want) {
        for key in ["host", "session_id", "models", "input", "total_tokens"] {
            assert_eq!(a[key], b[key], "{key}: {a} {b}");
        }
        assert!((a["cost"].as_f64().unwrap() - b["cost"].as_f64().unwrap()).abs() < 1e-9);
        assert!((a["own_cost"].as_f64().unwrap() - b["own_cost"].as_f64().unwrap()).abs() < 1e-9);
    }
    let out = call(&one, &["--db", &url], r#"{"group":"host"}"#);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (hosts, _) = db(&one, &url, &["host"]);
    assert_eq!(
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["host"])
            .collect::<Vec<_>>(),
        hosts.iter().map(|r| &r["host"]).collect::<Vec<_>>()
    );
    assert_eq!(hosts.len(), 2);
    // The local index has no hosts: both front ends say where they are.
    let index = one.index();
    let out = call(
        &one,
        &["--index", index.to_str().unwrap()],
        r#"{"group":"host"}"#,
    );
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("`pi-index mcp --db`"), "{said}");
    for args in [&["usage", "host"][..], &["usage", "daily", "host:one"]] {
        let out = run(one.cmd().args(args).arg("--index").arg(&index));
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--db URL"),
            "{args:?}"
        );
    }
}

/// A database of version 8 holds the first version of the usage value,
/// which this one does not read: its migration empties every row's usage,
/// `usage --db` says to push, and each host's next push sends it again,
/// the usage alone.
#[test]
fn a_database_of_the_first_usage_value_is_emptied_and_each_host_s_next_push_sends_it_again() {
    let Some(url) = database("usage_v8") else {
        return;
    };
    let c = cluster().unwrap();
    let one = Scratch::new();
    let dir = spend_dir(&one);
    one.build(&[&dir], &[]);
    push_ok(&one, &url, "one");
    // The values as version 8 held them: the first byte, the value's
    // version, 1.
    c.sql(
        "usage_v8",
        "UPDATE pi_sessions SET usage = set_byte(usage, 0, 1) WHERE length(usage) > 0; \
         UPDATE pi_index_schema SET version = 8",
    );
    let out = run(one.cmd().args(["usage", "--db", &url]));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("older schema (8)") && err.contains("run `pi-index push` once"),
        "{err}"
    );
    let r = push_ok(&one, &url, "one");
    assert_eq!(
        (
            r["sessions_usage_added"].as_u64(),
            r["messages_sent"].as_u64(),
            r["sessions_replaced"].as_u64()
        ),
        (Some(4), Some(0), Some(0)),
        "{r}"
    );
    same_as_local(&one, &url, "one", &[]);
}
