//! The query language through the real binary, against an independent
//! evaluation: every indexed document is read back with
//! `show --format json --branch all`, each query's meaning is written
//! here by hand as a plain-Rust predicate ([`E`]), and the set of
//! (path, line, role) that `search --json` returns must equal the set the
//! predicate picks. Words are matched as lower-cased runs of letters and
//! digits, so the queries use plain words.
//!
//! The index holds `fixtures/search`, `fixtures/sessions` (every kind
//! included, for the roles) and one session written here with symbols,
//! emoji and dashes, whose messages fall on either side of midnight
//! depending on the time zone. Every search runs with `TZ` set.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{run, Scratch};

/// A document as `show --format json` prints it, with its words.
#[derive(Debug)]
struct Doc {
    path: String,
    line: u64,
    role: String,
    session_id: String,
    cwd: Option<String>,
    model: Option<String>,
    timestamp: Option<String>,
    active: bool,
    words: Vec<String>,
}

impl Doc {
    fn of(v: &Value) -> Doc {
        let s = |k: &str| v[k].as_str().map(str::to_owned);
        let text = s("text").unwrap_or_default().to_lowercase();
        Doc {
            path: s("path").unwrap(),
            line: v["line"].as_u64().unwrap(),
            role: s("role").unwrap(),
            session_id: s("session_id").unwrap(),
            cwd: s("cwd"),
            model: s("model"),
            timestamp: s("timestamp"),
            active: v["active"].as_bool().unwrap(),
            words: text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect(),
        }
    }

    fn key(&self) -> (String, u64, String) {
        (self.path.clone(), self.line, self.role.clone())
    }
}

/// What a query means, written independently of the parser.
#[derive(Clone, Debug)]
enum E {
    All,
    /// The word occurs.
    W(&'static str),
    /// The words occur in this order, adjacent.
    Phrase(&'static [&'static str]),
    Role(&'static str),
    /// The directory or below it.
    Cwd(&'static str),
    /// Session id prefix.
    Session(&'static str),
    /// Model name contains (lower case).
    Model(&'static str),
    /// At or after this RFC 3339 UTC instant (as stored: ms and `Z`).
    After(&'static str),
    /// Before it.
    Before(&'static str),
    Active,
    Not(Box<E>),
    And(Vec<E>),
    Or(Vec<E>),
}

use E::*;

fn not(e: E) -> E {
    Not(Box::new(e))
}

impl E {
    fn holds(&self, d: &Doc) -> bool {
        match self {
            All => true,
            W(w) => d.words.iter().any(|x| x == w),
            Phrase(ws) => d.words.windows(ws.len()).any(|win| win == *ws),
            Role(r) => d.role == *r,
            Cwd(dir) => d
                .cwd
                .as_deref()
                .is_some_and(|c| c == *dir || c.starts_with(&format!("{dir}/"))),
            Session(p) => d.session_id.starts_with(p),
            Model(m) => d
                .model
                .as_deref()
                .is_some_and(|x| x.to_lowercase().contains(m)),
            // Stored timestamps are all `YYYY-MM-DDTHH:MM:SS.mmmZ`, so the
            // strings compare as the instants do.
            After(t) => d.timestamp.as_deref().is_some_and(|x| x >= *t),
            Before(t) => d.timestamp.as_deref().is_some_and(|x| x < *t),
            Active => d.active,
            Not(e) => !e.holds(d),
            And(es) => es.iter().all(|e| e.holds(d)),
            Or(es) => es.iter().any(|e| e.holds(d)),
        }
    }
}

/// A session written for these tests: symbols, emoji, dashes, and
/// messages at 2026-04-01T02:00Z and 12:00Z (March 31 and April 1 in
/// Honolulu, both April 1 in UTC).
const EXTRA: &str = concat!(
    r#"{"type":"session","version":3,"id":"dddd0004-0000-4000-8000-000000000004","timestamp":"2026-04-01T01:59:00.000Z","cwd":"/home/u/gamma"}"#,
    "\n",
    r#"{"type":"message","id":"d1","parentId":null,"timestamp":"2026-04-01T02:00:00.000Z","message":{"role":"user","content":"Let's party 🎉 when the tokio — runtime release lands","timestamp":0}}"#,
    "\n",
    r#"{"type":"message","id":"d2","parentId":"d1","timestamp":"2026-04-01T12:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Words dash - separated, the tokio runtime party, and an em — dash."}],"timestamp":0,"api":"x","provider":"openai","model":"gpt-5-mini","usage":{"input":1,"output":1},"stopReason":"stop"}}"#,
    "\n",
);

struct Fixture {
    s: Scratch,
    docs: Vec<Doc>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let s = Scratch::new();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let extra = s.dir.path().join("extra/--home-u-gamma--");
        std::fs::create_dir_all(&extra).unwrap();
        std::fs::write(
            extra.join("2026-04-01T01-59-00-000Z_dddd0004-0000-4000-8000-000000000004.jsonl"),
            EXTRA,
        )
        .unwrap();
        s.build(
            &[
                &root.join("search"),
                &root.join("sessions"),
                &s.dir.path().join("extra"),
            ],
            &["--include", "all"],
        );
        let out = run(s
            .cmd()
            .args(["sessions", "--all", "--json", "--index"])
            .arg(s.index()));
        assert!(out.status.success());
        let mut docs = Vec::new();
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let path = v["path"].as_str().unwrap();
            docs.extend(s.show_json(path, &[]).iter().map(Doc::of));
        }
        let stats = run(s.cmd().args(["stats", "--json", "--index"]).arg(s.index()));
        let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
        assert_eq!(docs.len() as u64, stats["messages"].as_u64().unwrap());
        Fixture { s, docs }
    })
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// `pi-index search --json -n 1000 --index … [args] -- QUERY` with `TZ`.
fn search_tz(tz: &str, query: &str, args: &[&str]) -> Out {
    let f = fixture();
    let started = Instant::now();
    let out = run(f
        .s
        .cmd()
        .env("TZ", tz)
        .args(["search", "--json", "-n", "1000", "--index"])
        .arg(f.s.index())
        .args(args)
        .arg("--")
        .arg(query));
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: started.elapsed(),
    }
}

fn search(query: &str, args: &[&str]) -> Out {
    search_tz("UTC0", query, args)
}

fn keys(out: &Out) -> BTreeSet<(String, u64, String)> {
    assert!(
        out.code == 0 || out.code == 1,
        "exit {}: {}",
        out.code,
        out.stderr
    );
    let mut set = BTreeSet::new();
    for l in out.stdout.lines() {
        let v: Value = serde_json::from_str(l).expect("a JSON line");
        let key = (
            v["path"].as_str().unwrap().to_owned(),
            v["line"].as_u64().unwrap(),
            v["role"].as_str().unwrap().to_owned(),
        );
        assert!(set.insert(key.clone()), "{key:?} twice");
    }
    set
}

fn expected(e: &E) -> BTreeSet<(String, u64, String)> {
    fixture()
        .docs
        .iter()
        .filter(|d| e.holds(d))
        .map(Doc::key)
        .collect()
}

/// The query finds exactly what `e` picks, which is neither nothing nor
/// everything (so the case tells something), and prints no warning.
#[track_caller]
fn same(query: &str, e: E) {
    same_with(query, &[], e)
}

#[track_caller]
fn same_with(query: &str, args: &[&str], e: E) {
    let out = search(query, args);
    let want = expected(&e);
    assert!(!want.is_empty(), "{query}: the case picks nothing");
    assert!(
        want.len() < fixture().docs.len(),
        "{query}: the case picks everything"
    );
    assert_eq!(keys(&out), want, "{query} {args:?} means {e:?}");
    assert_eq!(out.stderr, "", "{query}");
}

#[test]
fn role_filters_under_not_or_and_parentheses() {
    // The issue's first two examples.
    same(
        "notify -role:user",
        And(vec![W("notify"), not(Role("user"))]),
    );
    same(
        "NFS OR role:assistant",
        Or(vec![W("nfs"), Role("assistant")]),
    );
    same(
        "(tokio OR flaky) -role:user",
        And(vec![Or(vec![W("tokio"), W("flaky")]), not(Role("user"))]),
    );
    same(
        "-(role:user OR role:assistant)",
        not(Or(vec![Role("user"), Role("assistant")])),
    );
    same(
        "role:user|assistant -the",
        And(vec![
            Or(vec![Role("user"), Role("assistant")]),
            not(W("the")),
        ]),
    );
    same("NOT role:tool the", And(vec![not(Role("tool")), W("the")]));
    same(
        "role:thinking OR (role:summary -the)",
        Or(vec![
            Role("thinking"),
            And(vec![Role("summary"), not(W("the"))]),
        ]),
    );
}

#[test]
fn cwd_filters_under_not_or_and_parentheses() {
    same(
        "tokio OR cwd:/home/u/alpha/sub",
        Or(vec![W("tokio"), Cwd("/home/u/alpha/sub")]),
    );
    same(
        "-cwd:/home/u/alpha the",
        And(vec![not(Cwd("/home/u/alpha")), W("the")]),
    );
    same(
        "(cwd:/home/u/beta OR cwd:/home/u/alpha/sub) -role:user",
        And(vec![
            Or(vec![Cwd("/home/u/beta"), Cwd("/home/u/alpha/sub")]),
            not(Role("user")),
        ]),
    );
    same(
        "cwd:\"/home/u/gamma\" OR -(cwd:/home/u OR the)",
        Or(vec![
            Cwd("/home/u/gamma"),
            not(Or(vec![Cwd("/home/u"), W("the")])),
        ]),
    );
}

#[test]
fn session_filters_under_not_or_and_parentheses() {
    same(
        "-session:aaaa0001 tokio",
        And(vec![not(Session("aaaa0001")), W("tokio")]),
    );
    same(
        "session:cccc OR flaky",
        Or(vec![Session("cccc"), W("flaky")]),
    );
    same(
        "(session:aaaa OR session:bbbb) -(json OR flaky)",
        And(vec![
            Or(vec![Session("aaaa"), Session("bbbb")]),
            not(Or(vec![W("json"), W("flaky")])),
        ]),
    );
}

#[test]
fn model_filters_under_not_or_and_parentheses() {
    same(
        "-model:opus tokio",
        And(vec![not(Model("opus")), W("tokio")]),
    );
    same(
        "model:gpt OR model:gemini",
        Or(vec![Model("gpt"), Model("gemini")]),
    );
    same(
        "role:assistant -(model:claude OR model:gpt)",
        And(vec![
            Role("assistant"),
            not(Or(vec![Model("claude"), Model("gpt")])),
        ]),
    );
}

#[test]
fn date_filters_under_not_or_and_parentheses() {
    same(
        "-after:2026-02-01 tokio",
        And(vec![not(After("2026-02-01T00:00:00.000Z")), W("tokio")]),
    );
    same(
        "before:2026-01-03 OR after:2026-03-01",
        Or(vec![
            Before("2026-01-03T00:00:00.000Z"),
            After("2026-03-01T00:00:00.000Z"),
        ]),
    );
    same(
        "tokio (after:2026-02-01 OR -before:2026-01-10T09:00:04Z)",
        And(vec![
            W("tokio"),
            Or(vec![
                After("2026-02-01T00:00:00.000Z"),
                not(Before("2026-01-10T09:00:04.000Z")),
            ]),
        ]),
    );
    same(
        "until:2026-01-10T09:00:03.5+00:00 -since:2026-01-10",
        And(vec![
            Before("2026-01-10T09:00:03.500Z"),
            not(After("2026-01-10T00:00:00.000Z")),
        ]),
    );
}

#[test]
fn civil_dates_are_local_midnight_in_tz() {
    // In UTC both gamma messages are on April 1; in Honolulu (UTC-10,
    // written as a POSIX rule so no time zone database is needed) the
    // first is on March 31.
    let april = "after:2026-04-01 before:2026-04-02";
    let utc = keys(&search_tz("UTC0", april, &[]));
    assert_eq!(
        utc,
        expected(&And(vec![
            After("2026-04-01T00:00:00.000Z"),
            Before("2026-04-02T00:00:00.000Z")
        ]))
    );
    assert_eq!(utc.len(), 2);
    let hst = keys(&search_tz("HST10", april, &[]));
    assert_eq!(
        hst,
        expected(&And(vec![
            After("2026-04-01T10:00:00.000Z"),
            Before("2026-04-02T10:00:00.000Z")
        ]))
    );
    assert_eq!(hst.len(), 1);
    let flag = keys(&search_tz("HST10", "*", &["--until", "2026-04-01"]));
    assert_eq!(flag, expected(&Before("2026-04-01T10:00:00.000Z")));
    // A local time, and an RFC 3339 instant whatever the zone.
    let local = keys(&search_tz("HST10", "before:2026-03-31T16:00:01", &[]));
    assert_eq!(local, expected(&Before("2026-04-01T02:00:01.000Z")));
    for tz in ["UTC0", "HST10", "JST-9"] {
        assert_eq!(
            keys(&search_tz(tz, "after:2026-04-01T11:00:00Z", &[])),
            expected(&After("2026-04-01T11:00:00.000Z")),
            "{tz}"
        );
    }
}

#[test]
fn branch_filters_under_not_or_and_parentheses() {
    same("-branch:active", not(Active));
    same(
        "(runtime -branch:active) OR flaky",
        Or(vec![And(vec![W("runtime"), not(Active)]), W("flaky")]),
    );
    same(
        "-(branch:active OR role:user)",
        not(Or(vec![Active, Role("user")])),
    );
}

#[test]
fn flags_are_anded_with_the_whole_query() {
    same_with(
        "tokio OR flaky",
        &["--role", "user"],
        And(vec![Role("user"), Or(vec![W("tokio"), W("flaky")])]),
    );
    same_with(
        "-tokio",
        &["--role", "assistant", "--active-only"],
        And(vec![Role("assistant"), Active, not(W("tokio"))]),
    );
    same_with(
        "runtime OR json",
        &["--cwd", "/home/u/alpha", "--model", "opus"],
        And(vec![
            Cwd("/home/u/alpha"),
            Model("opus"),
            Or(vec![W("runtime"), W("json")]),
        ]),
    );
}

#[test]
fn and_binds_tighter_than_or() {
    same(
        "tokio OR flaky watcher",
        Or(vec![W("tokio"), And(vec![W("flaky"), W("watcher")])]),
    );
    same(
        "flaky watcher OR tokio",
        Or(vec![And(vec![W("flaky"), W("watcher")]), W("tokio")]),
    );
    same(
        "(tokio OR flaky) the",
        And(vec![Or(vec![W("tokio"), W("flaky")]), W("the")]),
    );
    same("NOT tokio the", And(vec![not(W("tokio")), W("the")]));
    same(
        "runtime AND tokio OR flaky && watcher",
        Or(vec![
            And(vec![W("runtime"), W("tokio")]),
            And(vec![W("flaky"), W("watcher")]),
        ]),
    );
    // The two readings differ here, so the test tells them apart.
    assert_ne!(
        expected(&Or(vec![W("tokio"), And(vec![W("flaky"), W("watcher")])])),
        expected(&And(vec![Or(vec![W("tokio"), W("flaky")]), W("watcher")]))
    );
}

/// The query finds what `e` picks and warns exactly `warnings`
/// (position, start of the message).
#[track_caller]
fn warned(query: &str, e: E, warnings: &[(usize, &str)]) {
    let out = search(query, &[]);
    let want = expected(&e);
    assert!(!want.is_empty(), "{query}");
    assert_eq!(keys(&out), want, "{query} means {e:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), warnings.len(), "{query}: {}", out.stderr);
    for (line, (pos, msg)) in lines.iter().zip(warnings) {
        let prefix = format!("pi-index: warning: query position {pos}: {msg}");
        assert!(
            line.starts_with(&prefix),
            "{query}: {line:?}, want {prefix:?}"
        );
    }
}

#[test]
fn words_the_tokenizer_drops_are_left_out_with_a_warning() {
    let dropped = "has nothing the index keeps";
    warned("tokio —", W("tokio"), &[(6, &format!("'—' {dropped}"))]);
    warned("party 🎉", W("party"), &[(6, &format!("'🎉' {dropped}"))]);
    warned(
        "dash - separated",
        And(vec![W("dash"), W("separated")]),
        &[(5, &format!("'-' {dropped}"))],
    );
    warned(
        "tokio OR ...",
        W("tokio"),
        &[(9, &format!("'...' {dropped}"))],
    );
    warned("tokio -🎉", W("tokio"), &[(7, &format!("'🎉' {dropped}"))]);
    warned(
        "party (🎉 OR runtime)",
        And(vec![W("party"), W("runtime")]),
        &[(7, &format!("'🎉' {dropped}"))],
    );
    // Inside a phrase: the same word, said the same way, at its position.
    warned(
        "\"tokio — runtime\"",
        Phrase(&["tokio", "runtime"]),
        &[(7, &format!("in a phrase: '—' {dropped}"))],
    );
    warned(
        "\"🎉\" OR party",
        W("party"),
        &[(0, "the phrase \"🎉\" has nothing to search for: ignored")],
    );
    warned("—* party", W("party"), &[(0, &format!("'—*' {dropped}"))]);
}

#[test]
fn operator_warnings_say_where_the_operator_is() {
    warned("tokio OR", W("tokio"), &[(6, "OR with nothing after it")]);
    warned("tokio NOT", W("tokio"), &[(6, "NOT with nothing after it")]);
    warned(
        "flaky OR OR tokio",
        Or(vec![W("flaky"), W("tokio")]),
        &[(9, "OR with nothing before it")],
    );
    warned("tokio AND", W("tokio"), &[(6, "AND with nothing after it")]);
    warned(
        "flaky OR tokio) runtime",
        Or(vec![W("flaky"), And(vec![W("tokio"), W("runtime")])]),
        &[(14, "unmatched ')'")],
    );
    warned(
        "runtime (tokio OR flaky",
        And(vec![W("runtime"), Or(vec![W("tokio"), W("flaky")])]),
        &[(8, "unclosed '('")],
    );
}

#[test]
fn star_and_the_empty_query_are_every_message() {
    let all = expected(&All);
    assert_eq!(all.len(), fixture().docs.len());
    for q in ["*", "", "  "] {
        let out = search(q, &[]);
        assert_eq!(keys(&out), all, "{q:?}");
        assert_eq!(out.stderr, "", "{q:?}");
    }
    same("* -role:user", not(Role("user")));
    assert_eq!(keys(&search("-*", &[])), BTreeSet::new());
}

#[test]
fn a_query_of_only_ignored_parts_is_an_error() {
    for q in ["OR", "))((", "—", "NOT", "\"\"", "🎉 OR -", "AND ()", "- +"] {
        let out = search(q, &[]);
        assert_eq!(out.code, 2, "{q}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{q}");
        let last = out.stderr.lines().last().unwrap_or("");
        assert!(
            last.starts_with("pi-index: error: nothing left to search for: ")
                && last.ends_with("search '*' to list every message"),
            "{q}: {}",
            out.stderr
        );
    }
}

#[test]
fn filters_with_no_value_are_errors() {
    for (q, key) in [
        ("session:", "session"),
        ("tokio cwd:", "cwd"),
        ("role:\"\" tokio", "role"),
        ("tokio OR model:", "model"),
        ("-after:", "after"),
    ] {
        let out = search(q, &[]);
        assert_eq!(out.code, 2, "{q}");
        assert!(
            out.stderr
                .starts_with(&format!("pi-index: error: {key}: needs a value, e.g. ")),
            "{q}: {}",
            out.stderr
        );
    }
    let out = search("tokio", &["--session", ""]);
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn dates_that_do_not_exist_are_errors() {
    for (q, flag) in [
        ("before:2026-02-30", None),
        ("after:2026-13-01", None),
        ("before:2025-02-29", None),
        ("tokio", Some("2026-02-30")),
        ("after:2026-04-31T10:00:00Z", None),
    ] {
        let args: Vec<&str> = flag.map(|f| vec!["--since", f]).unwrap_or_default();
        let out = search(q, &args);
        assert_eq!(out.code, 2, "{q} {args:?}");
        assert!(
            out.stderr.contains("as a date (") && out.stderr.contains("use a date (2026-03-01"),
            "{q}: {}",
            out.stderr
        );
    }
}

#[test]
fn deep_nesting_is_a_clear_error_at_once() {
    // Within the length limit (4096 bytes, 256 words: longer queries are
    // refused for their length before they are parsed, see mcp_limits.rs).
    for q in [
        format!("{}tokio", "NOT ".repeat(200)),
        "(".repeat(4_000),
        format!("{}tokio{}", "(".repeat(2_000), ")".repeat(2_000)),
        format!("{}tokio", "-".repeat(3_000)),
    ] {
        let out = search(&q, &[]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(
            out.stderr.starts_with(
                "pi-index: error: the query nests parentheses and NOT more than 64 deep"
            ),
            "{}",
            out.stderr
        );
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(out.elapsed < Duration::from_secs(5), "{:?}", out.elapsed);
    }
    // At the limit it still runs.
    let q = format!("{}tokio{}", "(".repeat(64), ")".repeat(64));
    assert_eq!(keys(&search(&q, &[])), expected(&W("tokio")));
}

#[test]
fn many_warnings_are_cut_short() {
    let out = search(&format!("tokio{}", ")".repeat(500)), &[]);
    assert_eq!(keys(&out), expected(&W("tokio")));
    assert_eq!(out.stderr.lines().count(), 21, "{}", out.stderr);
    assert!(out.stderr.ends_with("pi-index: warning: and 480 more\n"));
}
