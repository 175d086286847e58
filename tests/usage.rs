//! `pi-index usage`: what Pi cost, against Pi's own totals and against
//! ccusage, and on fixtures of every place Pi 1.6 and Oh My Pi record
//! usage (`fixtures/usage/`), faults included.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{json_lines, reference, run, Scratch};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `pi-index usage ARGS --json` (UTC) on the scratch's index: its rows,
/// and stderr.
fn usage(s: &Scratch, args: &[&str]) -> (Vec<Value>, String) {
    let out = run(s
        .cmd()
        .arg("usage")
        .args(args)
        .args(["--json", "--timezone", "UTC", "--index"])
        .arg(s.index()));
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "usage {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        json_lines(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-9
}

/// `v` with every float rounded to 12 places: costs compared as money,
/// not as the last bit of a parse (serde_json's default float parser is
/// not exact to the last bit).
fn money(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => {
            json!((n.as_f64().unwrap() * 1e12).round() / 1e12)
        }
        Value::Array(a) => Value::Array(a.iter().map(money).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), money(v))).collect()),
        other => other.clone(),
    }
}

#[test]
fn each_session_equals_pi_s_own_totals_and_each_day_counts_a_family_s_entries_once() {
    let Some(pi) = reference::pi() else { return };
    let s = Scratch::new();
    let out = s.dir.path().join("pi16-usage");
    let manifest = pi.write_usage(&out, &s.dir.path().join("node-home"));
    let r = s.build(&[&out], &[]);
    assert_eq!(r["files_indexed"], 5, "{r}");
    let (rows, err) = usage(&s, &["session"]);
    assert_eq!(err, "");
    let files = manifest["files"].as_array().unwrap();
    assert_eq!(rows.len(), files.len());
    for f in files {
        let row = rows
            .iter()
            .find(|r| r["path"] == f["path"])
            .unwrap_or_else(|| panic!("no row for {}", f["path"]));
        // What Pi's /session shows: getSessionStats' sum over every entry
        // of the file, and getUsageCostBreakdown by bucket.
        assert!(
            close(&row["cost"], f["cost"].as_f64().unwrap()),
            "{row}\n{f}"
        );
        let t = &f["tokens"];
        for (ours, pis) in [
            ("input", "input"),
            ("output", "output"),
            ("cache_read", "cacheRead"),
            ("cache_write", "cacheWrite"),
        ] {
            assert_eq!(row[ours], t[pis], "{ours}: {row}");
        }
        let ours = row["breakdown"].as_array().unwrap();
        let theirs = f["breakdown"].as_array().unwrap();
        assert_eq!(ours.len(), theirs.len(), "{row}\n{f}");
        for (a, b) in ours.iter().zip(theirs) {
            assert_eq!(a["key"], b["key"], "{row}\n{f}");
            assert_eq!(a["tokens"], b["tokens"], "{row}\n{f}");
            assert!(close(&a["cost"], b["cost"].as_f64().unwrap()), "{a} {b}");
        }
    }
    // The forks spent their own answers only; the parent everything.
    let own = |id: &Value| {
        rows.iter().find(|r| r["session_id"] == *id).unwrap()["own_cost"]
            .as_f64()
            .unwrap()
    };
    let parent = files.iter().find(|f| f["group"] == "full").unwrap();
    assert!(close(
        &json!(own(&parent["id"])),
        parent["cost"].as_f64().unwrap()
    ));
    for fork in files.iter().filter(|f| f["group"] == "full").skip(1) {
        let o = own(&fork["id"]);
        assert!(
            o > 0.0 && o < fork["cost"].as_f64().unwrap() / 5.0,
            "{fork}"
        );
    }
    // Each day: every entry of a family once.
    let (days, _) = usage(&s, &["daily"]);
    let want = manifest["daily"].as_object().unwrap();
    assert_eq!(days.len(), want.len(), "{days:?}");
    let mut total = 0.0;
    for d in &days {
        let w = &want[d["period"].as_str().unwrap()];
        for k in ["input", "output", "cache_read", "cache_write"] {
            assert_eq!(d[k], w[k], "{d} {w}");
        }
        assert!(close(&d["cost"], w["cost"].as_f64().unwrap()), "{d} {w}");
        total += d["cost"].as_f64().unwrap();
    }
    // Less than the files sum to: the copies are not counted again.
    let files_sum: f64 = files.iter().map(|f| f["cost"].as_f64().unwrap()).sum();
    assert!(total < files_sum * 0.8, "{total} {files_sum}");
    // Weeks and months hold the same money.
    for g in ["weekly", "monthly", "model", "project"] {
        let (rows, _) = usage(&s, &[g]);
        let sum: f64 = rows.iter().map(|r| r["cost"].as_f64().unwrap()).sum();
        assert!((sum - total).abs() < 1e-9, "{g}: {sum} {total}");
    }
}

#[test]
fn plain_sessions_equal_ccusage_pi_daily_per_day() {
    let Some(pi) = reference::pi() else { return };
    let Some(ccusage) = reference::ccusage() else {
        return;
    };
    let s = Scratch::new();
    let out = s.dir.path().join("pi16-usage");
    pi.write_usage(&out, &s.dir.path().join("node-home"));
    // The sessions ccusage reads as Pi writes them: assistant messages
    // only, no forks.
    let plain = out.join("sessions/--home-u-usage-plain--");
    s.build(&[&plain], &[]);
    let (ours, _) = usage(&s, &["daily"]);
    let home = s.dir.path().join("ccusage-home");
    std::fs::create_dir_all(&home).unwrap();
    let cc = run(std::process::Command::new(ccusage)
        .args([
            "pi",
            "daily",
            "--json",
            "--offline",
            "--timezone",
            "UTC",
            "--pi-path",
        ])
        .arg(&plain)
        .env("HOME", &home));
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let theirs: Value = serde_json::from_slice(&cc.stdout).unwrap();
    let theirs = theirs["daily"].as_array().unwrap();
    assert_eq!(ours.len(), theirs.len(), "{ours:?}\n{theirs:?}");
    assert!(ours.len() >= 3);
    for (a, b) in ours.iter().zip(theirs) {
        assert_eq!(a["period"], b["date"]);
        assert_eq!(a["input"], b["inputTokens"], "{a} {b}");
        assert_eq!(a["output"], b["outputTokens"], "{a} {b}");
        assert_eq!(a["cache_read"], b["cacheReadTokens"], "{a} {b}");
        assert_eq!(a["cache_write"], b["cacheCreationTokens"], "{a} {b}");
        assert_eq!(a["total_tokens"], b["totalTokens"], "{a} {b}");
        assert!(
            close(&a["cost"], b["totalCost"].as_f64().unwrap()),
            "{a} {b}"
        );
    }
}

/// `fixtures/usage` indexed.
fn fixtures() -> (Scratch, PathBuf) {
    let s = Scratch::new();
    let dir = repo().join("fixtures/usage");
    s.build(&[&dir], &[]);
    (s, dir)
}

fn row<'a>(rows: &'a [Value], file: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["path"].as_str().unwrap().ends_with(file))
        .unwrap_or_else(|| panic!("no row for {file}: {rows:?}"))
}

#[test]
fn usage_is_read_from_every_entry_that_records_it() {
    let (s, _) = fixtures();
    let (rows, _) = usage(&s, &["session"]);
    // A usage entry, an assistant tool call, a tool result (its own usage,
    // not its details'), an answer by another model (responseModel), an
    // abandoned branch's answer and summary, a compaction, a last answer.
    assert_eq!(
        money(row(&rows, "usage-everywhere.jsonl")),
        money(&json!({
            "session_id": "0198d000-0000-7000-8000-0000000000e1",
            "path": repo().join("fixtures/usage/usage-everywhere.jsonl").to_str().unwrap(),
            "cwd": "/home/u/spend",
            "input": 15900, "output": 1080, "cache_read": 8000, "cache_write": 4000,
            "total_tokens": 28980, "cost": 0.055975, "own_cost": 0.055975,
            "models": ["Tools/summaries", "anthropic/claude-opus-4-5", "anthropic/claude-sonnet-4-5", "openrouter/openai/gpt-5"],
            "breakdown": [
                {"key": "anthropic/claude-sonnet-4-5", "cost": 0.026850000000000002, "tokens": 14390},
                {"key": "Tools/summaries", "cost": 0.0152, "tokens": 12460},
                {"key": "anthropic/claude-opus-4-5", "cost": 0.01125, "tokens": 550},
                {"key": "openrouter/openai/gpt-5", "cost": 0.002675, "tokens": 1580}
            ]
        }))
    );
    // Oh My Pi: a model_usage entry, a task tool's subagent in its
    // details, its own answers; the name from its title slot.
    assert_eq!(
        money(&row(&rows, "omp-usage.jsonl")["breakdown"]),
        money(&json!([
            {"key": "Tools/summaries", "cost": 0.0195, "tokens": 4500},
            {"key": "anthropic/claude-sonnet-4-5", "cost": 0.00615, "tokens": 1770},
            {"key": "anthropic/claude-haiku-4-5", "cost": 0.00036, "tokens": 312}
        ]))
    );
    assert_eq!(row(&rows, "omp-usage.jsonl")["name"], "OMP spend");
    // Version 1: no ids; two answers of the same usage are two entries.
    assert!(close(&row(&rows, "usage-v1.jsonl")["cost"], 0.0036));
    // The same whatever the kinds indexed (tool results parsed).
    let t = Scratch::new();
    t.build(&[&repo().join("fixtures/usage")], &["--include", "all"]);
    let (all, _) = usage(&t, &["session"]);
    for file in [
        "usage-everywhere.jsonl",
        "omp-usage.jsonl",
        "usage-v1.jsonl",
    ] {
        assert_eq!(money(row(&all, file)), money(row(&rows, file)), "{file}");
    }
}

#[test]
fn costs_that_are_not_money_are_counted_reported_and_never_summed() {
    let (s, dir) = fixtures();
    let (rows, err) = usage(
        &s,
        &["session", "session:0198d000-0000-7000-8000-0000000000f2"],
    );
    assert_eq!(rows.len(), 1);
    // Two sound answers of eight.
    assert!(close(&rows[0]["cost"], 0.0045));
    assert_eq!(rows[0]["input"], 300);
    assert_eq!(
        err,
        "pi-index: warning: 1 entry left out of every sum: an assistant message without usage\n\
         pi-index: warning: 2 entries left out of every sum: usage without a cost\n\
         pi-index: warning: 2 entries left out of every sum: a cost that is negative, not a number or absurd (over 1e6)\n\
         pi-index: warning: 1 entry left out of every sum: token counts that are not whole numbers of 0 or more\n"
    );
    let out = run(s
        .cmd()
        .args(["usage", "session", "-v", "--index"])
        .arg(s.index())
        .arg("session:0198d000-0000-7000-8000-0000000000f2"));
    let verbose = String::from_utf8_lossy(&out.stderr);
    let file = dir.join("usage-faults.jsonl");
    for (line, why) in [
        (3, "an assistant message without usage"),
        (4, "usage without a cost"),
        (
            5,
            "a cost that is negative, not a number or absurd (over 1e6)",
        ),
        (
            6,
            "a cost that is negative, not a number or absurd (over 1e6)",
        ),
        (7, "usage without a cost"),
        (8, "token counts that are not whole numbers of 0 or more"),
    ] {
        assert!(
            verbose.contains(&format!("left out {}:{line}: {why}\n", file.display())),
            "{verbose}"
        );
    }
}

#[test]
fn periods_filters_and_the_table() {
    let (s, _) = fixtures();
    let (days, _) = usage(&s, &["daily", "cwd:/home/u/spend"]);
    assert_eq!(
        days.iter().map(|d| d["period"].clone()).collect::<Vec<_>>(),
        [json!("2026-08-01"), json!("2026-08-02")]
    );
    assert!(close(&days[0]["cost"], 0.026275), "{}", days[0]);
    // In a zone nine hours ahead, 09:00 UTC is 18:00: the same days.
    let out = run(s
        .cmd()
        .args([
            "usage",
            "daily",
            "--json",
            "--timezone",
            "Asia/Tokyo",
            "--index",
        ])
        .arg(s.index())
        .arg("cwd:/home/u/spend"));
    assert_eq!(json_lines(&out).len(), 2);
    let (models, _) = usage(&s, &["model", "model:haiku"]);
    assert_eq!(models.len(), 1);
    assert_eq!(models[0]["model"], "anthropic/claude-haiku-4-5");
    let (since, _) = usage(
        &s,
        &["daily", "--since", "2026-08-02", "--until", "2026-08-04"],
    );
    assert_eq!(
        since
            .iter()
            .map(|d| d["period"].clone())
            .collect::<Vec<_>>(),
        [json!("2026-08-02"), json!("2026-08-03")]
    );
    let (weeks, _) = usage(&s, &["weekly"]);
    assert!(weeks.iter().any(|w| w["period"] == "2026-W31"), "{weeks:?}");
    let (months, _) = usage(&s, &["monthly"]);
    assert_eq!(
        months
            .iter()
            .map(|d| d["period"].clone())
            .collect::<Vec<_>>(),
        [json!("2025-10"), json!("2026-08")]
    );
    let (projects, _) = usage(&s, &["project"]);
    assert_eq!(projects[0]["project"], "/home/u/spend");
    // A table, with the total of every entry once.
    let out = run(s
        .cmd()
        .args(["usage", "daily", "--timezone", "UTC", "--index"])
        .arg(s.index()));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Date "), "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .starts_with("Total (each entry once)"),
        "{text}"
    );
    // A filter usage cannot take is said.
    let out = run(s
        .cmd()
        .args(["usage", "role:user", "--index"])
        .arg(s.index()));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pi-index: error: role: usage filters by cwd:, model:, session:, family: and host:\n"
    );
}

#[test]
fn an_appended_answer_adds_its_usage_to_what_was_read_before() {
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("usage-everywhere.jsonl");
    std::fs::copy(repo().join("fixtures/usage/usage-everywhere.jsonl"), &file).unwrap();
    s.build(&[&dir], &[]);
    let more = r#"{"type":"message","id":"e100000d","parentId":"e100000c","timestamp":"2026-08-03T09:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"one more"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":11,"cost":{"input":0.00003,"output":0.000015,"cacheRead":0,"cacheWrite":0,"total":0.000045}},"stopReason":"stop","timestamp":1785747600000}}"#;
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    writeln!(f, "{more}").unwrap();
    drop(f);
    let r = s.build(&[&dir], &[]);
    assert_eq!(r["files_grown"], 1, "{r}");
    let (rows, _) = usage(&s, &["session"]);
    assert!(close(&rows[0]["cost"], 0.05602));
    assert_eq!(rows[0]["input"], 15910);
    let fresh = Scratch::new();
    fresh.build(&[&dir], &[]);
    assert_eq!(
        money(&Value::Array(usage(&fresh, &["session"]).0)),
        money(&Value::Array(rows))
    );
}

/// Copies of one session (a backup beside the folder, files of one id)
/// spend once: every fixture copied into a second folder leaves each
/// day's and the whole total as they were, version 1 sessions (no entry
/// ids, so no family inferred) included; each copy's own row still shows
/// what its file records, and one of them spent it.
#[test]
fn a_backup_copy_of_the_sessions_spends_nothing_again() {
    let (one, dir) = fixtures();
    let (days, _) = usage(&one, &["daily"]);
    let (sessions, _) = usage(&one, &["session"]);
    let s = Scratch::new();
    let (a, b) = (s.dir.path().join("a"), s.dir.path().join("backup"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).unwrap();
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, d.join(f.file_name().unwrap())).unwrap();
        }
    }
    s.build(&[&a, &b], &[]);
    let (both, _) = usage(&s, &["daily"]);
    assert_eq!(money(&Value::Array(both)), money(&Value::Array(days)));
    let (rows, _) = usage(&s, &["session"]);
    assert_eq!(rows.len(), 2 * sessions.len());
    for once in &sessions {
        let name = Path::new(once["path"].as_str().unwrap())
            .file_name()
            .unwrap();
        let copies: Vec<&Value> = rows
            .iter()
            .filter(|r| Path::new(r["path"].as_str().unwrap()).file_name() == Some(name))
            .collect();
        assert_eq!(copies.len(), 2, "{name:?}");
        for c in &copies {
            assert!(
                close(&c["cost"], once["cost"].as_f64().unwrap()),
                "{c} {once}"
            );
        }
        let own: f64 = copies.iter().map(|c| c["own_cost"].as_f64().unwrap()).sum();
        assert!(
            close(&json!(own), once["own_cost"].as_f64().unwrap()),
            "{copies:?} {once}"
        );
    }
}

/// A session file's header line, started at `started`, naming its
/// parent file if it has one.
fn header(id: &str, started: &str, parent: Option<&Path>) -> String {
    let parent = parent.map_or(String::new(), |p| {
        format!(r#","parentSession":"{}""#, p.display())
    });
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{started}","cwd":"/home/u/long"{parent}}}"#
    ) + "\n"
}

/// Answers `from` to `from + n - 1` of a long session, a line each: the
/// entry ids `{prefix}{i:07x}`, the first one's parent `parent`, each
/// with its own tokens and a cost of 17 significant digits (as JavaScript
/// writes a double), one a minute from `start` (epoch ms); and what they
/// total: input tokens and cost.
fn answers(
    prefix: &str,
    from: u64,
    n: u64,
    parent: Option<&str>,
    start: i64,
) -> (String, u64, f64) {
    let (mut out, mut input, mut cost) = (String::new(), 0u64, 0f64);
    let mut parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    for i in from..from + n {
        let ts = start + i as i64 * 60_000;
        let (inp, c) = (1000 + i * 7, 0.0123456789012345 + i as f64 * 1.1e-7);
        input += inp;
        cost += c;
        let entry = format!("{prefix}{i:07x}");
        out.push_str(&format!(
            r#"{{"type":"message","id":"{entry}","parentId":{parent},"timestamp":"2026-08-01T09:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"answer {i}"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":{inp},"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":{},"cost":{{"input":{c},"output":0,"cacheRead":0,"cacheWrite":0,"total":{c}}}}},"stopReason":"stop","timestamp":{ts}}}}}"#,
            inp + 3
        ));
        out.push('\n');
        parent = format!("\"{entry}\"");
    }
    (out, input, cost)
}

/// The sum of `field` over report rows.
fn sum(rows: &[Value], field: &str) -> u64 {
    rows.iter().map(|r| r[field].as_u64().unwrap()).sum()
}

/// A long session's usage is one value too long for one dictionary entry
/// of the column (which keeps at most 64 KiB of a value): it is stored in
/// chunks and read back whole, as written, grown, and as a copy.
#[test]
fn a_long_session_s_usage_is_read_back_whole() {
    const START: i64 = 1_785_574_800_000;
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("long.jsonl");
    let (body, input, cost) = answers("0", 0, 3000, None, START);
    let text = header(
        "0198d000-0000-7000-8000-0000000000f1",
        "2026-08-01T09:00:00.000Z",
        None,
    ) + &body;
    std::fs::write(&file, &text).unwrap();
    s.build(&[&dir], &[]);
    let (rows, _) = usage(&s, &["session"]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["input"], input);
    assert!(
        (rows[0]["cost"].as_f64().unwrap() - cost).abs() < 1e-9,
        "{} {cost}",
        rows[0]["cost"]
    );
    assert_eq!(sum(&usage(&s, &["daily"]).0, "input"), input);

    // Grown: the new answers are added to the value read back.
    let (more, more_input, more_cost) = answers("0", 3000, 50, Some("00000bb7"), START);
    std::fs::write(&file, text + &more).unwrap();
    let r = s.build(&[&dir], &[]);
    assert_eq!(r["files_grown"], 1, "{r}");
    let (rows, _) = usage(&s, &["session"]);
    assert_eq!(rows[0]["input"], input + more_input);
    assert!((rows[0]["cost"].as_f64().unwrap() - (cost + more_cost)).abs() < 1e-9);
    let fresh = Scratch::new();
    fresh.build(&[&dir], &[]);
    assert_eq!(
        money(&Value::Array(usage(&fresh, &["session"]).0)),
        money(&Value::Array(rows))
    );

    // A copy in another folder spends nothing again.
    let backup = s.dir.path().join("backup");
    std::fs::create_dir_all(&backup).unwrap();
    std::fs::copy(&file, backup.join("long.jsonl")).unwrap();
    s.build(&[&dir, &backup], &[]);
    assert_eq!(sum(&usage(&s, &["daily"]).0, "input"), input + more_input);
    let (rows, _) = usage(&s, &["session"]);
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r["input"] == input + more_input));
}

/// A fork of a long session copies its parent's first entries, so the
/// chunks of the two stored values that hold only those entries' rows
/// are the same bytes (one dictionary entry, read for both values), and
/// the first (which holds the number of rows) and the last differ: each
/// file's own totals, and each entry counted once by day. The fork's
/// header as old as its parent's, or older, still makes it the fork: the
/// parent spent the copied entries.
#[test]
fn a_fork_of_a_long_session_shares_its_parent_s_chunks_and_spends_once() {
    const START: i64 = 1_785_574_800_000;
    const PARENT_STARTED: &str = "2026-08-01T09:00:00.000Z";
    for fork_started in [PARENT_STARTED, "2026-07-31T09:00:00.000Z"] {
        let s = Scratch::new();
        let dir = s.dir.path().join("sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let parent_path = dir.join("parent.jsonl");
        let (body, input, cost) = answers("0", 0, 3000, None, START);
        std::fs::write(
            &parent_path,
            header("0198d000-0000-7000-8000-0000000000f2", PARENT_STARTED, None) + &body,
        )
        .unwrap();
        // The fork: the parent's first 2,000 answers, then 100 of its own.
        let (copied, copied_input, copied_cost) = answers("0", 0, 2000, None, START);
        assert!(body.starts_with(&copied));
        let (own, own_input, own_cost) = answers("f", 2000, 100, Some("000007cf"), START);
        std::fs::write(
            dir.join("fork.jsonl"),
            header(
                "0198d000-0000-7000-8000-0000000000f3",
                fork_started,
                Some(&parent_path),
            ) + &copied
                + &own,
        )
        .unwrap();
        s.build(&[&dir], &[]);

        let (rows, _) = usage(&s, &["session"]);
        assert_eq!(rows.len(), 2, "{rows:?}");
        let by = |name: &str| {
            rows.iter()
                .find(|r| r["path"].as_str().unwrap().ends_with(name))
                .unwrap()
        };
        let (parent, fork) = (by("parent.jsonl"), by("fork.jsonl"));
        assert_eq!(parent["input"], input, "{fork_started}");
        assert!((parent["cost"].as_f64().unwrap() - cost).abs() < 1e-9);
        assert!(
            (parent["own_cost"].as_f64().unwrap() - cost).abs() < 1e-9,
            "{fork_started}"
        );
        assert_eq!(fork["input"], copied_input + own_input);
        assert!((fork["cost"].as_f64().unwrap() - (copied_cost + own_cost)).abs() < 1e-9);
        assert!(
            (fork["own_cost"].as_f64().unwrap() - own_cost).abs() < 1e-9,
            "{fork_started}: {rows:?}"
        );
        assert_eq!(sum(&usage(&s, &["daily"]).0, "input"), input + own_input);
    }
}
