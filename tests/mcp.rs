//! `pi-index mcp` and the Pi extension, through the real clients:
//!
//! - the official MCP Python SDK (`mcp`, pinned in
//!   `scripts/mcp/requirements.txt`, installed by `scripts/mcp/setup.sh`
//!   into `target/mcp-venv`) runs `scripts/mcp/client.py`, which connects
//!   to the binary over stdio, lists the tools, makes the calls a test
//!   gives it and prints what came back; the assertions are here;
//! - Pi 1.6.0 itself (`scripts/pi/setup.sh`, into `target/pi-node`):
//!   `pi mcp add` / `pi mcp list --json` in a sandboxed HOME, a tool call
//!   from Pi's own agent loop (its offline faux model), and the extension of
//!   `integrations/pi` installed with `pi install` and driven in
//!   `--mode rpc`, answering its selector as docs/rpc-extension-ui.md says.
//!
//! A client that cannot be installed (no registry, no python3) makes its
//! tests say why on stderr and pass; under CI (`CI` set, as `.ci/run` does)
//! they fail instead.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{copy_dir, message, run, session_file, Scratch, WriterLock};

const BIN: &str = env!("CARGO_BIN_EXE_pi-index");
const A: &str = "aaaa0001-0000-4000-8000-000000000001";
const B: &str = "bbbb0002-0000-4000-8000-000000000002";
const C: &str = "cccc0003-0000-4000-8000-000000000003";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A client this test needs could not be had: say why, and fail under CI.
fn unavailable(test: &str, why: &str) {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    assert!(!ci, "{test}: {why} (under CI this test must run)");
    eprintln!("{test}: NOT RUN: {why}");
}

/// Run an idempotent setup script; its last stdout line (a path).
fn setup(script: &str) -> Result<PathBuf, String> {
    let out = Command::new("bash")
        .arg(repo().join(script))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {script}: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    if !out.status.success() {
        return Err(format!(
            "{script} failed ({}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("").trim();
    if last.is_empty() || !Path::new(last).exists() {
        return Err(format!("{script} printed no usable path: {stdout:?}"));
    }
    Ok(PathBuf::from(last))
}

/// The Python of the venv with the MCP SDK, or `None` (said why).
pub(crate) fn python(test: &str) -> Option<&'static Path> {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PY.get_or_init(|| setup("scripts/mcp/setup.sh")) {
        Ok(p) => Some(p),
        Err(why) => {
            unavailable(test, &format!("the MCP Python SDK is not available: {why}"));
            None
        }
    }
}

/// Node 22 with Pi 1.6.0 installed beside it, or `None` (said why).
pub(crate) fn pi_node(test: &str) -> Option<&'static Path> {
    static NODE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match NODE.get_or_init(|| setup("scripts/pi/setup.sh")) {
        Ok(p) => Some(p),
        Err(why) => {
            unavailable(test, &format!("Pi 1.6.0 is not available: {why}"));
            None
        }
    }
}

/// Run `cmd` to completion within `secs`, or kill it and fail.
pub(crate) fn output_within(cmd: &mut Command, secs: u64) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} did not finish within {secs} s; stderr: {}",
                String::from_utf8_lossy(&err.join().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

// ---------------------------------------------------------------------------
// The Python SDK

/// What `client.py` reports.
pub(crate) struct Client {
    server: Value,
    tools: Vec<Value>,
    pub(crate) results: Vec<Value>,
}

/// Run `client.py` with `steps` against `pi-index mcp <server_args>` over
/// stdio, with the scratch's HOME.
pub(crate) fn client(py: &Path, s: &Scratch, steps: Value, server_args: &[&str]) -> Client {
    let mut target = vec!["--", BIN, "mcp"];
    target.extend_from_slice(server_args);
    client_of(py, s, steps, &target)
}

/// Run `client.py` with `steps` against `target` (`-- COMMAND...` or
/// `--url URL`).
pub(crate) fn client_of(py: &Path, s: &Scratch, steps: Value, target: &[&str]) -> Client {
    let steps_file = s.dir.path().join(format!(
        "steps-{}.json",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::write(&steps_file, steps.to_string()).unwrap();
    std::fs::create_dir_all(s.home()).unwrap();
    let out = output_within(
        Command::new(py)
            .arg(repo().join("scripts/mcp/client.py"))
            .arg(&steps_file)
            .args(target)
            .env_remove("PI_INDEX_DIR")
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env_remove("XDG_DATA_HOME")
            .env("HOME", s.home()),
        120,
    );
    assert!(
        out.status.success(),
        "client.py failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "client.py printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    Client {
        server: v["server"].clone(),
        tools: v["tools"].as_array().unwrap().clone(),
        results: v["results"].as_array().unwrap().clone(),
    }
}

/// A successful call's structured result (checked to equal its text).
pub(crate) fn ok(r: &Value) -> &Value {
    assert_eq!(r["is_error"], false, "expected a result, got {r}");
    let text: Value = serde_json::from_str(r["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, r["structured"], "text and structured content differ");
    &r["structured"]
}

/// A tool error's message.
pub(crate) fn err(r: &Value) -> &str {
    assert_eq!(r["is_error"], true, "expected a tool error, got {r}");
    r["text"].as_str().unwrap()
}

/// (session id, line) of each hit, in order.
fn lines(result: &Value) -> Vec<(String, u64)> {
    result["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["session_id"].as_str().unwrap().to_owned(),
                h["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn set(mut v: Vec<(String, u64)>) -> Vec<(String, u64)> {
    v.sort();
    v
}

fn at(id: &str, line: u64) -> (String, u64) {
    (id.to_owned(), line)
}

/// `fixtures/search` copied into the scratch (the server refreshes from
/// it) and indexed there.
pub(crate) fn search_fixtures(s: &Scratch) -> PathBuf {
    let dir = s.dir.path().join("sessions");
    copy_dir(&repo().join("fixtures/search"), &dir);
    let r = s.build(&[&dir], &[]);
    assert_eq!(r["sessions"], 3);
    dir
}

pub(crate) fn server_args<'a>(s: &'a Scratch, sessions: &'a Path) -> Vec<String> {
    vec![
        sessions.to_string_lossy().into_owned(),
        "--index".into(),
        s.index().to_string_lossy().into_owned(),
    ]
}

pub(crate) fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn python_sdk_lists_four_tools_with_schemas() {
    let Some(py) = python("python_sdk_lists_four_tools_with_schemas") else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let c = client(py, &s, json!([]), &strs(&server_args(&s, &dir)));
    assert_eq!(c.server["name"], "pi-index");
    assert_eq!(c.server["version"], env!("CARGO_PKG_VERSION"));
    assert!(c.server["instructions"]
        .as_str()
        .unwrap()
        .contains("`search`"));
    let mut names: Vec<&str> = c
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["search", "sessions", "show", "usage"]);
    let tool = |n: &str| c.tools.iter().find(|t| t["name"] == n).unwrap();
    let props = |n: &str| keys(&tool(n)["inputSchema"]["properties"]);
    assert_eq!(
        props("search"),
        [
            "active_only",
            "cwd",
            "limit",
            "offset",
            "query",
            "role",
            "since",
            "sort",
            "until"
        ]
    );
    // `host`: the team database's (`--db`), where ids repeat across hosts.
    assert_eq!(props("show"), ["around", "context", "host", "session"]);
    assert_eq!(
        props("sessions"),
        ["cwd", "limit", "offset", "query", "since"]
    );
    assert_eq!(tool("search")["inputSchema"]["required"], json!(["query"]));
    assert_eq!(tool("show")["inputSchema"]["required"], json!(["session"]));
    assert!(tool("sessions")["inputSchema"].get("required").is_none());
    assert_eq!(
        props("usage"),
        ["cwd", "group", "host", "limit", "model", "since", "timezone", "until"]
    );
    assert!(tool("usage")["inputSchema"].get("required").is_none());
    let limit = &tool("search")["inputSchema"]["properties"]["limit"];
    assert_eq!(
        (
            limit["minimum"].clone(),
            limit["maximum"].clone(),
            limit["default"].clone()
        ),
        (json!(1), json!(50), json!(10))
    );
    for t in &c.tools {
        assert_eq!(
            t["inputSchema"]["additionalProperties"], false,
            "{}",
            t["name"]
        );
        assert_eq!(t["outputSchema"]["type"], "object", "{}", t["name"]);
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{}", t["name"]);
        assert!(
            t["description"].as_str().unwrap().len() > 200,
            "{}",
            t["name"]
        );
    }
    let hit = &tool("search")["outputSchema"]["$defs"]["HitOut"]["properties"];
    assert_eq!(
        keys(hit),
        [
            "active",
            "agent",
            "copies",
            "cwd",
            "entry_id",
            "host",
            "line",
            "path",
            "role",
            "session_id",
            "session_name",
            "snippet",
            "text",
            "timestamp",
            "truncated"
        ]
    );
}

#[test]
fn python_sdk_search_returns_exact_hits() {
    let Some(py) = python("python_sdk_search_returns_exact_hits") else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let q = |extra: Value| {
        let mut args = json!({"query": "tokio"});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"call": "search", "args": args})
    };
    let c = client(
        py,
        &s,
        json!([
            q(json!({})),
            q(json!({"active_only": true})),
            q(json!({"role": "user"})),
            q(json!({"cwd": "/home/u/alpha"})),
            q(json!({"since": "2026-02-01"})),
            q(json!({"until": "2026-02-01"})),
            q(json!({"sort": "newest", "limit": 2})),
            q(json!({"sort": "newest", "limit": 2, "offset": 2})),
            {"call": "search", "args": {"query": "role:assistant tokio"}},
            {"call": "search", "args": {"query": "\"runtime panics\" -blocking"}},
            {"call": "search", "args": {"query": "(tokio OR smol"}},
            {"call": "search", "args": {"query": "zqnothing"}},
            q(json!({"limit": "2"})),
            q(json!({"limit": 2.0})),
        ]),
        &strs(&server_args(&s, &dir)),
    );
    let r: Vec<&Value> = c.results.iter().map(ok).collect();
    let all = set(vec![at(A, 4), at(A, 5), at(C, 3), at(C, 4)]);
    assert_eq!(set(lines(r[0])), all);
    assert_eq!(r[0]["total"], 4);
    assert!(r[0].get("next_offset").is_none());
    // Nothing changed since the build: the refresh found it current,
    // checking every file (the first call: the watch just began).
    assert_eq!(
        r[0]["index"],
        json!({"status": "current", "new_messages": 0, "checked": "full",
               "full_because": "the first check since the watch began"})
    );
    let hits = r[0]["hits"].as_array().unwrap();
    let a4 = hits
        .iter()
        .find(|h| h["line"] == 4 && h["session_id"] == A)
        .unwrap();
    assert_eq!(
        keys(a4),
        [
            "active",
            "agent",
            "cwd",
            "entry_id",
            "line",
            "path",
            "role",
            "session_id",
            "snippet",
            "text",
            "timestamp",
            "truncated"
        ]
    );
    assert_eq!(a4["role"], "user");
    assert_eq!(a4["active"], false);
    assert_eq!(a4["entry_id"], "a3");
    assert_eq!(a4["timestamp"], "2026-01-10T09:00:03.000Z");
    assert_eq!(a4["cwd"], "/home/u/alpha");
    assert_eq!(a4["text"], "What about tokio runtime panics?");
    assert_eq!(a4["truncated"], false);
    assert!(a4["snippet"].as_str().unwrap().contains("tokio"));
    assert!(a4["path"]
        .as_str()
        .unwrap()
        .starts_with(&*dir.canonicalize().unwrap().to_string_lossy()));
    let c4 = hits
        .iter()
        .find(|h| h["session_id"] == C && h["line"] == 4)
        .unwrap();
    assert_eq!(c4["session_name"], "Beta planning");

    assert_eq!(set(lines(r[1])), set(vec![at(C, 3), at(C, 4)]));
    assert_eq!(set(lines(r[2])), set(vec![at(A, 4), at(C, 3)]));
    assert_eq!(set(lines(r[3])), set(vec![at(A, 4), at(A, 5)]));
    assert_eq!(set(lines(r[4])), set(vec![at(C, 3), at(C, 4)]));
    assert_eq!(set(lines(r[5])), set(vec![at(A, 4), at(A, 5)]));
    assert_eq!(lines(r[6]), vec![at(C, 4), at(C, 3)]);
    assert_eq!(
        (r[6]["total"].clone(), r[6]["next_offset"].clone()),
        (json!(4), json!(2))
    );
    assert_eq!(lines(r[7]), vec![at(A, 5), at(A, 4)]);
    assert!(r[7].get("next_offset").is_none());
    assert_eq!(set(lines(r[8])), set(vec![at(A, 5), at(C, 4)]));
    assert_eq!(lines(r[9]), vec![at(A, 4)]);
    // An unbalanced parenthesis is repaired and reported, never an error.
    assert_eq!(set(lines(r[10])), all);
    let w = r[10]["warnings"].as_array().unwrap();
    assert!(
        !w.is_empty() && w[0].as_str().unwrap().starts_with("query position "),
        "{w:?}"
    );
    assert_eq!((lines(r[11]), r[11]["total"].clone()), (vec![], json!(0)));
    // Counts as a string or an integral float, as models send them.
    assert_eq!(lines(r[12]).len(), 2);
    assert_eq!(lines(r[13]).len(), 2);
}

#[test]
fn python_sdk_show_and_sessions() {
    let Some(py) = python("python_sdk_show_and_sessions") else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let a_path = dir.canonicalize().unwrap().join(
        "--home-u-alpha--/2026-01-10T09-00-00-000Z_aaaa0001-0000-4000-8000-000000000001.jsonl",
    );
    let c = client(
        py,
        &s,
        json!([
            {"call": "show", "args": {"session": "aaaa0001"}},
            {"call": "show", "args": {"session": "aaaa0001", "around": 4, "context": 1}},
            {"call": "show", "args": {"session": a_path.to_string_lossy()}},
            {"call": "show", "args": {"session": C, "around": 4}},
            {"call": "sessions", "args": {}},
            {"call": "sessions", "args": {"query": "tokio"}},
            {"call": "sessions", "args": {"cwd": "/home/u/alpha"}},
            {"call": "sessions", "args": {"since": "2026-02-01"}},
            {"call": "sessions", "args": {"limit": 1}},
            {"call": "search", "args": {"query": "tokio"}},
            {"call": "show", "args": {"session": C, "around": 999}},
        ]),
        &strs(&server_args(&s, &dir)),
    );
    // Past the session's end: said, as `pi-index show --around` says it.
    assert_eq!(
        err(&c.results[10]),
        "line 999 is past the session's last message (line 4): give a line up to 4"
    );
    let r: Vec<&Value> = c.results[..10].iter().map(ok).collect();
    let msg_lines = |v: &Value| -> Vec<u64> {
        v["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["line"].as_u64().unwrap())
            .collect()
    };
    // The active branch, from the start.
    assert_eq!(r[0]["session_id"], A);
    assert_eq!(r[0]["cwd"], "/home/u/alpha");
    assert_eq!(r[0]["path"], a_path.to_string_lossy().as_ref());
    assert_eq!(msg_lines(r[0]), [2, 3, 6, 7]);
    assert_eq!(r[0]["total"], 4);
    assert!(r[0].get("more").is_none());
    let m = &r[0]["messages"][0];
    assert_eq!(
        m,
        &json!({"line": 2, "entry_id": "a1", "role": "user", "timestamp": "2026-01-10T09:00:01.000Z",
                "active": true, "text": "How do I parse JSON with serde_json::from_str in Rust?", "truncated": false})
    );
    // Around a hit on the abandoned branch: both sides, whatever the branch.
    assert_eq!(msg_lines(r[1]), [3, 4, 5]);
    let actives: Vec<&Value> = r[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["active"])
        .collect();
    assert_eq!(actives, [&json!(true), &json!(false), &json!(false)]);
    assert_eq!(
        r[1]["more"],
        format!("call show again with session={A} and earlier messages: around=2 context=24; later messages: around=7 context=24")
    );
    assert_eq!(msg_lines(r[2]), [2, 3, 6, 7]);
    assert_eq!(msg_lines(r[3]), [3, 4]);
    assert_eq!(r[3]["session_name"], "Beta planning");
    assert!(r[3].get("more").is_none(), "{}", r[3]);

    let ids = |v: &Value| -> Vec<String> {
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(r[4]), [B, C, A]);
    assert_eq!(r[4]["total"], 3);
    let cs = &r[4]["sessions"][1];
    assert_eq!(cs["session_name"], "Beta planning");
    assert_eq!(cs["title"], "tokio or async-std for the server?");
    assert_eq!(cs["messages"], 2);
    assert_eq!(cs["cwd"], "/home/u/beta");
    assert_eq!(cs["started"], "2026-02-14T08:00:00.000Z");
    // With a query: ranked as `pi-index sessions QUERY` ranks them (name,
    // then first user message, then messages): C's first user message
    // names tokio, A has it in messages only.
    assert_eq!(ids(r[5]), [C, A]);
    let cli = s
        .cmd()
        .args(["sessions", "tokio", "--json", "--index"])
        .arg(s.index())
        .output()
        .unwrap();
    let cli_ids: Vec<String> = crate::util::json_lines(&cli)
        .iter()
        .map(|v| v["session_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids(r[5]), cli_ids, "the same rows as the command line's");
    let mut order: Vec<String> = Vec::new();
    for (id, _) in lines(r[9]) {
        if !order.contains(&id) {
            order.push(id);
        }
    }
    assert_eq!(
        set(order.iter().map(|o| (o.clone(), 0)).collect()),
        set(vec![at(A, 0), at(C, 0)])
    );
    for sess in r[5]["sessions"].as_array().unwrap() {
        assert_eq!(sess["matches"], 2);
        let best = sess["best"]["line"].as_u64().unwrap();
        let first_hit = lines(r[9])
            .into_iter()
            .find(|(id, _)| sess["session_id"] == id.as_str())
            .unwrap();
        assert_eq!(best, first_hit.1);
    }
    assert_eq!(ids(r[6]), [B, A]);
    assert_eq!(ids(r[7]), [B, C]);
    assert_eq!(ids(r[8]), [B]);
    assert_eq!(
        (r[8]["total"].clone(), r[8]["next_offset"].clone()),
        (json!(3), json!(1))
    );
}

#[test]
fn python_sdk_bad_arguments_are_tool_errors() {
    let Some(py) = python("python_sdk_bad_arguments_are_tool_errors") else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let call = |tool: &str, args: Value| json!({"call": tool, "args": args});
    let c = client(
        py,
        &s,
        json!([
            call("search", json!({"query": "tokio", "limit": 10000})),
            call("search", json!({"query": "tokio", "limit": 0})),
            call("search", json!({"query": "tokio", "limit": "abc"})),
            call("search", json!({"query": "tokio", "limit": -3})),
            call("search", json!({"query": "tokio", "offset": 5000})),
            call("search", json!({})),
            call("search", json!({"query": "tokio", "colour": "red"})),
            call("search", json!({"query": "  "})),
            call("search", json!({"query": "tokio", "role": "robot"})),
            call("search", json!({"query": "tokio", "since": "soon"})),
            call("search", json!({"query": "tokio", "active_only": "maybe"})),
            call("show", json!({"session": "zzzz"})),
            call("show", json!({"session": "aaaa0001", "context": 99})),
            call("show", json!({})),
            call("sessions", json!({"limit": 51})),
            call("nosuch", json!({})),
            call("search", json!({"query": "tokio"})),
        ]),
        &strs(&server_args(&s, &dir)),
    );
    let r = &c.results;
    assert_eq!(
        err(&r[0]),
        "limit 10000 is more than 50, the most one call returns: ask for at most 50 and page with `offset` (each result's `next_offset`)"
    );
    assert_eq!(err(&r[1]), "limit must be at least 1 (and at most 50)");
    assert_eq!(
        err(&r[2]),
        "limit must be a whole number of 0 or more, not \"abc\""
    );
    assert_eq!(
        err(&r[3]),
        "limit must be a whole number of 0 or more, not -3"
    );
    assert_eq!(
        err(&r[4]),
        "offset 5000 is more than 1000: narrow the query instead (more words, `cwd`, `since`, `role`)"
    );
    assert_eq!(
        err(&r[5]),
        "invalid arguments for search: missing field `query`; see the tool's input schema"
    );
    assert!(
        err(&r[6]).starts_with("invalid arguments for search: unknown field `colour`, expected one of `query`, `limit`"),
        "{}",
        err(&r[6])
    );
    assert_eq!(
        err(&r[7]),
        "query is empty: give words to look for (filters alone work too, e.g. `role:user after:7d`)"
    );
    // The filter's own message (the query language's), named by argument.
    assert!(
        err(&r[8]).starts_with("role: ") && err(&r[8]).contains("robot"),
        "{}",
        err(&r[8])
    );
    assert!(
        err(&r[9]).starts_with("since: ") && err(&r[9]).contains("soon"),
        "{}",
        err(&r[9])
    );
    assert!(
        err(&r[10]).starts_with(
            "invalid arguments for search: invalid type: string \"maybe\", expected a boolean"
        ),
        "{}",
        err(&r[10])
    );
    assert_eq!(
        err(&r[11]),
        "no indexed session matches \"zzzz\": give a session id as search or sessions return it, a unique prefix of one, or the session file's path"
    );
    assert_eq!(
        err(&r[12]),
        "context 99 is more than 24: ask for at most 24 messages on each side, and call show again around another line for more"
    );
    assert_eq!(
        err(&r[13]),
        "invalid arguments for show: missing field `session`; see the tool's input schema"
    );
    assert!(err(&r[14]).starts_with("limit 51 is more than 50"));
    // An unknown tool is the protocol's error, not a tool's.
    assert!(r[15]["protocol_error"].as_str().is_some(), "{}", r[15]);
    // And the server is still there.
    assert_eq!(ok(&r[16])["total"], 4);
}

#[test]
fn python_sdk_without_an_index() {
    let Some(py) = python("python_sdk_without_an_index") else {
        return;
    };
    let s = Scratch::new();
    let none = s.dir.path().join("no-index");
    let none_s = none.to_string_lossy().into_owned();
    // No index, no refresh: say how to make one.
    let c = client(
        py,
        &s,
        json!([{"call": "search", "args": {"query": "tokio"}}]),
        &["--index", &none_s, "--no-refresh"],
    );
    assert_eq!(
        err(&c.results[0]),
        format!("no index at {none_s}: run `pi-index build` first (the server was started with --no-refresh, so it does not build one)")
    );
    // No index and no session directory in this HOME to build one from.
    let c = client(
        py,
        &s,
        json!([{"call": "sessions", "args": {}}]),
        &["--index", &none_s],
    );
    let e = err(&c.results[0]);
    assert!(
        e.starts_with(&format!("no index at {none_s} and no Pi session directory to build it from (looked in "))
            && e.ends_with("run `pi-index build DIR` with the directory of your sessions, or start the server as `pi-index mcp DIR`"),
        "{e}"
    );
    // With a session directory, the first call builds the index.
    let dir = s.dir.path().join("sessions");
    copy_dir(&repo().join("fixtures/search"), &dir);
    let dir_s = dir.to_string_lossy().into_owned();
    let c = client(
        py,
        &s,
        json!([
            {"call": "search", "args": {"query": "tokio"}},
            {"call": "search", "args": {"query": "tokio"}},
        ]),
        &[&dir_s, "--index", &none_s],
    );
    let first = ok(&c.results[0]);
    assert_eq!(first["total"], 4);
    assert_eq!(
        first["index"],
        json!({"status": "updated", "new_messages": 10, "checked": "full",
               "full_because": "the first check since the watch began"})
    );
    assert_eq!(
        ok(&c.results[1])["index"],
        json!({"status": "current", "new_messages": 0, "checked": "watched"})
    );
}

#[test]
fn python_sdk_sees_new_messages_without_a_restart() {
    let Some(py) = python("python_sdk_sees_new_messages_without_a_restart") else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let new = dir.join("--home-u-gamma--/2026-05-01_dddd0004.jsonl");
    let body = session_file(
        "dddd0004",
        "/home/u/gamma",
        &[
            ("user", "where is zqlater handled?"),
            ("assistant", "zqlater lives in src/later.rs"),
        ],
    );
    let more = message("m2", "\"m1\"", 3, "user", "and zqlater tests?");
    let long = "zqlong ".repeat(1000);
    let c = client(
        py,
        &s,
        json!([
            {"call": "search", "args": {"query": "zqlater"}},
            {"write": new.to_string_lossy(), "text": body},
            {"call": "search", "args": {"query": "zqlater"}},
            {"write": new.to_string_lossy(), "text": more},
            {"call": "search", "args": {"query": "zqlater", "sort": "oldest"}},
            {"write": new.to_string_lossy(), "text": message("m3", "\"m2\"", 4, "assistant", &long)},
            {"call": "search", "args": {"query": "zqlong"}},
            {"call": "show", "args": {"session": "dddd0004", "around": 5, "context": 0}},
        ]),
        &strs(&server_args(&s, &dir)),
    );
    let r = &c.results;
    assert_eq!(ok(&r[0])["total"], 0);
    let second = ok(&r[2]);
    assert_eq!(
        set(lines(second)),
        set(vec![at("dddd0004", 2), at("dddd0004", 3)])
    );
    assert_eq!(
        second["index"],
        json!({"status": "updated", "new_messages": 2, "checked": "watched"})
    );
    let third = ok(&r[4]);
    assert_eq!(
        lines(third),
        vec![at("dddd0004", 2), at("dddd0004", 3), at("dddd0004", 4)]
    );
    assert_eq!(
        third["index"],
        json!({"status": "updated", "new_messages": 1, "checked": "watched"})
    );
    // A long message is cut at 2,000 characters, and says so.
    let hit = &ok(&r[6])["hits"][0];
    assert_eq!(hit["text"].as_str().unwrap().chars().count(), 2000);
    assert_eq!(hit["truncated"], true);
    let shown = &ok(&r[7])["messages"][0];
    assert_eq!(
        (shown["line"].clone(), shown["truncated"].clone()),
        (json!(5), json!(true))
    );
    assert_eq!(shown["text"].as_str().unwrap().chars().count(), 2000);
}

/// The refresh as a tool call reports it: `(status, new_messages,
/// checked)`.
fn refreshed(r: &Value) -> (String, u64, String) {
    let index = &ok(r)["index"];
    (
        index["status"].as_str().unwrap().to_owned(),
        index["new_messages"].as_u64().unwrap(),
        index["checked"].as_str().unwrap_or("").to_owned(),
    )
}

fn is(status: &str, new: u64, checked: &str) -> (String, u64, String) {
    (status.to_owned(), new, checked.to_owned())
}

/// (path, line) of each hit, sorted.
fn paths(result: &Value) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = result["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap().to_owned(),
                h["line"].as_u64().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// What Pi writes right before a call is found by that call, with no
/// wait between the two (the client makes the call as soon as the write
/// returned): appends, a session in a new project directory, a move to
/// another new directory, a deletion. Each refresh after the first says
/// it was a watched one (only what changed was looked at), so none of
/// this passes by way of a full check.
#[test]
fn python_sdk_a_call_finds_what_pi_wrote_just_before_it() {
    let Some(py) = python("python_sdk_a_call_finds_what_pi_wrote_just_before_it") else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let alpha = dir.join(
        "--home-u-alpha--/2026-01-10T09-00-00-000Z_aaaa0001-0000-4000-8000-000000000001.jsonl",
    );
    let fresh = dir.join("--home-u-delta--/2026-05-01_dddd0004.jsonl");
    let moved = dir.join(
        "--home-u-moved--/2026-01-10T09-00-00-000Z_aaaa0001-0000-4000-8000-000000000001.jsonl",
    );
    let q = || json!({"call": "search", "args": {"query": "zqwatched", "limit": 50}});
    let mut steps = vec![q()];
    // Twenty appends, each searched for at once.
    let mut parent = "a6".to_owned();
    for i in 0..20 {
        let id = format!("w{i}");
        steps.push(json!({"write": alpha.to_string_lossy(),
            "text": message(&id, &format!("\"{parent}\""), 10 + i, "user", &format!("zqwatched append {i}"))}));
        steps.push(q());
        parent = id;
    }
    // Nothing since: current, and still watched.
    steps.push(q());
    // A session in a project directory made just now.
    steps.push(
        json!({"write": fresh.to_string_lossy(), "text": session_file(
        "dddd0004", "/home/u/delta", &[("user", "zqwatched in a new directory")])}),
    );
    steps.push(q());
    // Alpha moved to another new directory.
    steps.push(json!({"rename": alpha.to_string_lossy(), "to": moved.to_string_lossy()}));
    steps.push(q());
    // The new session deleted.
    steps.push(json!({"remove": fresh.to_string_lossy()}));
    steps.push(q());
    let c = client(py, &s, json!(steps), &strs(&server_args(&s, &dir)));
    let r = &c.results;
    assert_eq!(ok(&r[0])["total"], 0);
    assert_eq!(
        ok(&r[0])["index"]["full_because"],
        "the first check since the watch began"
    );
    for i in 0..20 {
        let found = &r[2 + 2 * i];
        assert_eq!(ok(found)["total"], i + 1, "append {i}: {found}");
        assert_eq!(refreshed(found), is("updated", 1, "watched"), "append {i}");
    }
    let at = 41;
    assert_eq!(ok(&r[at])["total"], 20);
    assert_eq!(refreshed(&r[at]), is("current", 0, "watched"));
    let alpha_s = alpha.to_string_lossy().into_owned();
    let fresh_s = fresh.to_string_lossy().into_owned();
    let moved_s = moved.to_string_lossy().into_owned();
    let appended =
        |path: &str| -> Vec<(String, u64)> { (0..20).map(|i| (path.to_owned(), 8 + i)).collect() };
    let mut want = appended(&alpha_s);
    want.push((fresh_s.clone(), 2));
    want.sort();
    assert_eq!(paths(ok(&r[at + 2])), want, "the new directory's session");
    assert_eq!(refreshed(&r[at + 2]), is("updated", 1, "watched"));
    let mut want = appended(&moved_s);
    want.push((fresh_s, 2));
    want.sort();
    assert_eq!(paths(ok(&r[at + 4])), want, "alpha moved");
    // (A moved file is indexed again under its new path, as a build
    // does: its 6 messages and the 20 appended.)
    assert_eq!(refreshed(&r[at + 4]), is("updated", 26, "watched"));
    assert_eq!(
        paths(ok(&r[at + 6])),
        appended(&moved_s),
        "the new one deleted"
    );
    assert_eq!(refreshed(&r[at + 6]), is("updated", 0, "watched"));
    // The index is the one a build of the files as they are makes.
    let (code, report) = crate::util::concurrent::check(&s, &[&dir], &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["files_checked"], 3, "{report}");
}

/// With no PATH the server reads Pi's own session directory, which may
/// not exist when it starts: the call after it appears checks every file
/// (and says why), and the ones after are watched.
#[test]
fn python_sdk_watches_pis_session_directory_once_it_appears() {
    let Some(py) = python("python_sdk_watches_pis_session_directory_once_it_appears") else {
        return;
    };
    let s = Scratch::new();
    let index = s.index().to_string_lossy().into_owned();
    let file = s
        .home()
        .join(".pi/agent/sessions/--home-u-later--/2026-05-01_eeee0005.jsonl");
    let q = json!({"call": "search", "args": {"query": "zqlater"}});
    let c = client(
        py,
        &s,
        json!([
            q,
            {"write": file.to_string_lossy(), "text": session_file(
                "eeee0005", "/home/u/later", &[("user", "zqlater one")])},
            q,
            {"write": file.to_string_lossy(), "text": message("m9", "\"m0\"", 9, "assistant", "zqlater two")},
            q,
            q,
        ]),
        &["--index", &index],
    );
    let r = &c.results;
    assert!(
        err(&r[0]).starts_with(&format!("no index at {index} and no Pi session directory")),
        "{}",
        r[0]
    );
    assert_eq!(ok(&r[2])["total"], 1);
    assert_eq!(refreshed(&r[2]), is("updated", 1, "full"));
    assert_eq!(ok(&r[4])["total"], 2);
    assert_eq!(refreshed(&r[4]), is("updated", 1, "watched"));
    assert_eq!(refreshed(&r[5]), is("current", 0, "watched"));
}

/// A commit of another process (a `pi-index build` of another directory
/// into the same index) is answered from at the next call, though the
/// server's own refresh had nothing to do.
#[test]
fn a_call_sees_what_another_build_committed() {
    use crate::util::raw::Raw;
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let mut raw = Raw::start(&s, &server_args(&s, &dir), &[]);
    let search = |raw: &mut Raw, id: u64| -> Value {
        raw.call(id, "search", json!({"query": "zqother"}));
        let reply = raw.reply(&json!(id));
        assert_eq!(reply["result"]["isError"], false, "{reply}");
        reply["result"]["structuredContent"].clone()
    };
    assert_eq!(search(&mut raw, 2)["total"], 0);
    let other = s.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(
        other.join("2026-05-01_aaaa0009.jsonl"),
        session_file("aaaa0009", "/home/u/other", &[("user", "zqother found")]),
    )
    .unwrap();
    s.build(&[&other], &[]);
    let r = search(&mut raw, 3);
    assert_eq!(r["total"], 1, "{r}");
    assert_eq!(
        r["index"],
        json!({"status": "current", "new_messages": 0, "checked": "watched"})
    );
}

#[test]
fn python_sdk_over_streamable_http() {
    let Some(py) = python("python_sdk_over_streamable_http") else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let mut args = server_args(&s, &dir);
    args.extend(["--transport", "http", "--port", "0"].map(String::from));
    let mut server = Command::new(BIN)
        .arg("mcp")
        .args(&args)
        .env("HOME", s.home())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first
        .trim()
        .strip_prefix("pi-index: MCP (streamable HTTP) at ")
        .unwrap_or_else(|| panic!("no URL on stderr: {first:?}"))
        .to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let c = client_of(
        py,
        &s,
        json!([
            {"call": "search", "args": {"query": "tokio", "active_only": true}},
            {"call": "show", "args": {"session": "cccc"}},
            {"call": "search", "args": {"query": "tokio", "limit": 10000}},
        ]),
        &["--url", &url],
    );
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(c.tools.len(), 4);
    assert_eq!(set(lines(ok(&c.results[0]))), set(vec![at(C, 3), at(C, 4)]));
    assert_eq!(ok(&c.results[1])["session_id"], C);
    assert!(err(&c.results[2]).starts_with("limit 10000 is more than 50"));
}

#[test]
fn python_sdk_answers_while_another_build_writes() {
    let Some(py) = python("python_sdk_answers_while_another_build_writes") else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let new = dir.join("2026-05-01_eeee0005.jsonl");
    std::fs::write(
        &new,
        session_file(
            "eeee0005",
            "/home/u/e",
            &[("user", "zqbusy one"), ("assistant", "zqbusy two")],
        ),
    )
    .unwrap();
    let steps = json!([{"call": "search", "args": {"query": "zqbusy OR tokio"}}]);
    let lock = WriterLock::take(&s.index());
    let c = client(py, &s, steps.clone(), &strs(&server_args(&s, &dir)));
    let busy = ok(&c.results[0]);
    assert_eq!(busy["total"], 4, "answered from the committed index");
    assert_eq!(
        busy["index"],
        json!({"status": "busy", "new_messages": 0, "checked": "full",
               "full_because": "the first check since the watch began",
               "note": "another `pi-index build` is writing the index: answered from the last committed index, which may miss the newest messages"})
    );
    drop(lock);
    let c = client(py, &s, steps, &strs(&server_args(&s, &dir)));
    let after = ok(&c.results[0]);
    assert_eq!(after["total"], 6);
    assert_eq!(
        after["index"],
        json!({"status": "updated", "new_messages": 2, "checked": "full",
               "full_because": "the first check since the watch began"})
    );
}

// ---------------------------------------------------------------------------
// Pi 1.6 itself

/// Pi's command line: node 22 and the package's bin.
pub(crate) fn pi_cmd(node: &Path, home: &Path, cwd: &Path) -> Command {
    let cli = node
        .ancestors()
        .nth(4)
        .unwrap()
        .join("node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
    let mut cmd = Command::new(node);
    cmd.arg(cli)
        .current_dir(cwd)
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .env_remove("PI_INDEX_DIR")
        .env_remove("PI_INDEX_BIN")
        .env("HOME", home)
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env("PI_TELEMETRY", "0");
    cmd
}

/// A sandbox for Pi: HOME, a project directory Pi starts in, and one
/// session (whose cwd exists, as Pi requires to open it) holding the
/// planted word `zqfindplant`, indexed.
struct PiSandbox {
    s: Scratch,
    proj: PathBuf,
    other: PathBuf,
    sessions: PathBuf,
    file: PathBuf,
}

impl PiSandbox {
    fn new() -> PiSandbox {
        let s = Scratch::new();
        let root = s.dir.path().canonicalize().unwrap();
        let (proj, other, sessions) =
            (root.join("proj"), root.join("other"), root.join("sessions"));
        for d in [&proj, &other, &sessions, &s.home()] {
            std::fs::create_dir_all(d).unwrap();
        }
        let file = sessions.join("2026-05-01T10-00-00-000Z_ffff0006.jsonl");
        std::fs::write(
            &file,
            session_file(
                "ffff0006",
                &other.to_string_lossy(),
                &[
                    ("user", "How did we fix the zqfindplant crash?"),
                    (
                        "assistant",
                        "The zqfindplant crash was a race in the watcher; we added a lock.",
                    ),
                    ("user", "Thanks, and the follow-up?"),
                ],
            ),
        )
        .unwrap();
        s.build(&[&sessions], &[]);
        PiSandbox {
            s,
            proj,
            other,
            sessions,
            file,
        }
    }

    fn pi(&self, node: &Path) -> Command {
        pi_cmd(node, &self.s.home(), &self.proj)
    }
}

fn run_pi(cmd: &mut Command) -> (i32, String, String) {
    let out = output_within(cmd, 60);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn pi_mcp_add_then_list_shows_the_server_connected() {
    let Some(node) = pi_node("pi_mcp_add_then_list_shows_the_server_connected") else {
        return;
    };
    let p = PiSandbox::new();
    let index = p.s.index().to_string_lossy().into_owned();
    let (code, out, err) = run_pi(p.pi(node).args([
        "mcp", "add", "pi-index", "--", BIN, "mcp", "--index", &index,
    ]));
    assert_eq!(code, 0, "{out}{err}");
    let config = p.s.home().join(".pi/agent/mcp.json");
    assert!(
        out.starts_with(&format!(
            "Added global MCP server \"pi-index\" in {}.",
            config.display()
        )),
        "{out}"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({"mcpServers": {"pi-index": {"command": BIN, "args": ["mcp", "--index", index]}}})
    );
    let (code, out, err) = run_pi(p.pi(node).args(["mcp", "list", "--json"]));
    assert_eq!(code, 0, "{out}{err}");
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list["errors"], json!([]));
    let servers = list["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1, "{list}");
    let server = &servers[0];
    assert_eq!(server["name"], "pi-index");
    assert_eq!(server["state"], "connected", "{server}");
    assert_eq!(server["enabled"], true);
    assert_eq!(
        server["tools"],
        json!(["search", "sessions", "show", "usage"])
    );
}

/// Pi in `--mode rpc`: JSON lines in and out.
pub(crate) struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Rpc {
    pub(crate) fn start(cmd: &mut Command) -> Rpc {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start pi --mode rpc");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            // Split on \n only (docs/rpc.md).
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            while r.read_until(b'\n', &mut buf).unwrap_or(0) > 0 {
                if tx.send(String::from_utf8_lossy(&buf).into_owned()).is_err() {
                    break;
                }
                buf.clear();
            }
        });
        Rpc {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    pub(crate) fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next object for which `pred` holds, within 60 s.
    pub(crate) fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                    self.seen.push(line.chars().take(300).collect());
                    if pred(&v) {
                        return v;
                    }
                }
                Err(_) => panic!(
                    "Pi sent no {what} within 60 s; it sent:\n{}",
                    self.seen.join("")
                ),
            }
        }
    }

    /// Send a command and wait for its response.
    pub(crate) fn command(&mut self, id: &str, v: Value) -> Value {
        self.send(v);
        self.until(&format!("response {id}"), |o| {
            o["id"] == id && o["type"] == "response"
        })
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn faux_model() -> String {
    repo()
        .join("scripts/pi/faux-model.ts")
        .to_string_lossy()
        .into_owned()
}

/// The text of the result of the first tool execution in a prompt's run.
pub(crate) fn tool_result(rpc: &mut Rpc, prompt: &str) -> (String, bool) {
    rpc.send(json!({"id": "p", "type": "prompt", "message": prompt}));
    let end = rpc.until("tool_execution_end", |o| o["type"] == "tool_execution_end");
    rpc.until("agent_settled", |o| o["type"] == "agent_settled");
    let text = end["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    (text, end["isError"] == true)
}

#[test]
fn pi_agent_calls_the_mcp_search_tool() {
    let Some(node) = pi_node("pi_agent_calls_the_mcp_search_tool") else {
        return;
    };
    let p = PiSandbox::new();
    let index = p.s.index().to_string_lossy().into_owned();
    let sessions = p.sessions.to_string_lossy().into_owned();
    // Direct exposure: the tools are declared to the model like built-ins.
    let (code, out, err) = run_pi(p.pi(node).args([
        "mcp",
        "add",
        "--exposure",
        "direct",
        "pi-index",
        "--",
        BIN,
        "mcp",
        &sessions,
        "--index",
        &index,
    ]));
    assert_eq!(code, 0, "{out}{err}");
    let mut rpc = Rpc::start(p.pi(node).args([
        "--mode",
        "rpc",
        "--no-session",
        "-e",
        &faux_model(),
        "--model",
        "faux/faux-1",
    ]));
    let (text, is_error) = tool_result(
        &mut rpc,
        r#"use tool mcp__pi_index__search {"query": "zqfindplant", "limit": 1}"#,
    );
    assert!(!is_error, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(lines(&v), vec![("ffff0006".to_owned(), 2)]);
    assert_eq!(
        (v["total"].clone(), v["next_offset"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(v["hits"][0]["path"], p.file.to_string_lossy().as_ref());
    // And a tool error reaches the model as one.
    let (text, is_error) = tool_result(
        &mut rpc,
        r#"use tool mcp__pi_index__show {"session": "nosuchsession"}"#,
    );
    assert!(is_error, "{text}");
    assert!(text.contains("no indexed session matches"), "{text}");
}

/// `pi install` of `integrations/pi` into the sandbox's settings.
fn install_extension(node: &Path, p: &PiSandbox) {
    let pkg = repo().join("integrations/pi");
    let (code, out, err) = run_pi(p.pi(node).arg("install").arg(&pkg));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("Installed {}", pkg.display())),
        "{out}{err}"
    );
}

/// Pi with the extension, an index, and `pi-index` on PATH.
fn pi_with_extension(node: &Path, p: &PiSandbox, extra: &[&str]) -> Rpc {
    let path = format!(
        "{}:{}",
        Path::new(BIN).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Rpc::start(
        p.pi(node)
            .env("PATH", path)
            .env("PI_INDEX_DIR", p.s.index())
            .args(["--mode", "rpc", "--no-mcp"])
            .args(extra),
    )
}

#[test]
fn pi_extension_find_opens_the_chosen_hit() {
    let Some(node) = pi_node("pi_extension_find_opens_the_chosen_hit") else {
        return;
    };
    let p = PiSandbox::new();
    install_extension(node, &p);
    let mut rpc = pi_with_extension(node, &p, &[]);
    let cmds = rpc.command("c", json!({"id": "c", "type": "get_commands"}));
    let find = cmds["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "find")
        .cloned()
        .unwrap_or_else(|| panic!("no /find among {cmds}"));
    assert_eq!(find["source"], "extension");

    rpc.send(json!({"id": "1", "type": "prompt", "message": "/find zqfindplant"}));
    let select = rpc.until("select", |o| {
        o["type"] == "extension_ui_request" && o["method"] == "select"
    });
    assert_eq!(select["title"], "2 past messages match \"zqfindplant\"");
    let options: Vec<&str> = select["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    assert_eq!(options.len(), 2);
    assert!(
        options
            .iter()
            .any(|o| o.ends_with("user · other · How did we fix the zqfindplant crash")),
        "{options:?}"
    );
    let choice = options
        .iter()
        .find(|o| o.contains(" assistant · other · The zqfindplant crash was a race"))
        .unwrap_or_else(|| panic!("{options:?}"));
    assert!(choice.contains("2026-05-01 10:00"), "{choice}");
    rpc.send(json!({"type": "extension_ui_response", "id": select["id"], "value": choice}));
    let note = rpc.until("notify", |o| o["method"] == "notify");
    assert_eq!(
        note["message"],
        format!("opened {} at line 3", p.file.display())
    );
    let done = rpc.until("response 1", |o| o["id"] == "1");
    assert_eq!(done["success"], true, "{done}");
    let state = rpc.command("2", json!({"id": "2", "type": "get_state"}));
    assert_eq!(
        state["data"]["sessionFile"],
        p.file.to_string_lossy().as_ref()
    );
    let entries = rpc.command("3", json!({"id": "3", "type": "get_entries"}));
    // At the chosen message: the assistant's reply (entry m1).
    assert_eq!(entries["data"]["leafId"], "m1", "{entries}");

    // Cancelling the selector changes nothing; a miss says so.
    rpc.send(json!({"id": "4", "type": "prompt", "message": "/find zqfindplant"}));
    let select = rpc.until("select", |o| o["method"] == "select");
    rpc.send(json!({"type": "extension_ui_response", "id": select["id"], "cancelled": true}));
    rpc.until("response 4", |o| o["id"] == "4");
    rpc.send(json!({"id": "5", "type": "prompt", "message": "/find zqnowhere"}));
    let note = rpc.until("notify", |o| o["method"] == "notify");
    assert_eq!(note["message"], "no past message matches \"zqnowhere\"");
}

#[test]
fn pi_extension_session_search_tool_has_the_mcp_contract() {
    let Some(node) = pi_node("pi_extension_session_search_tool_has_the_mcp_contract") else {
        return;
    };
    let p = PiSandbox::new();
    install_extension(node, &p);
    let mut rpc = pi_with_extension(node, &p, &["-e", &faux_model(), "--model", "faux/faux-1"]);
    let args = json!({"query": "zqfindplant", "cwd": p.other.to_string_lossy(), "limit": 1});
    let (text, is_error) = tool_result(&mut rpc, &format!("use tool session_search {args}"));
    assert!(!is_error, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(lines(&v), vec![("ffff0006".to_owned(), 2)]);
    assert_eq!(
        (v["total"].clone(), v["next_offset"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(
        keys(&v["hits"][0]),
        [
            "active",
            "agent",
            "cwd",
            "entry_id",
            "line",
            "path",
            "role",
            "session_id",
            "snippet",
            "text",
            "timestamp",
            "truncated"
        ]
    );
    // Pi checks the declared bounds itself, before pi-index is run.
    let (text, is_error) = tool_result(
        &mut rpc,
        r#"use tool session_search {"query": "x", "limit": 10000}"#,
    );
    assert!(is_error);
    assert!(text.contains("limit: expected <= 50"), "{text}");
    // What only pi-index checks comes back as its message.
    let (text, is_error) = tool_result(
        &mut rpc,
        r#"use tool session_search {"query": "x", "since": "soon"}"#,
    );
    assert!(is_error);
    assert!(
        text.starts_with("since: ") && text.contains("soon"),
        "{text}"
    );

    // The parameters Pi declared to the model (written in the session's
    // system message) are the MCP search tool's.
    let state = rpc.command("s", json!({"id": "s", "type": "get_state"}));
    let file = state["data"]["sessionFile"].as_str().unwrap().to_owned();
    let declared = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|e| {
            e["message"]["toolsAdded"]
                .as_array()?
                .iter()
                .find(|t| t["name"] == "session_search")
                .cloned()
        })
        .unwrap_or_else(|| panic!("no session_search in the system message of {file}"));
    let mcp = schemars::schema_for!(pi_index::mcp::tools::SearchArgs);
    assert_eq!(
        keys(&declared["parameters"]["properties"]),
        keys(&mcp.as_value()["properties"])
    );
    assert_eq!(declared["parameters"]["required"], json!(["query"]));
}

#[test]
fn pi_extension_says_when_pi_index_is_missing() {
    let Some(node) = pi_node("pi_extension_says_when_pi_index_is_missing") else {
        return;
    };
    let p = PiSandbox::new();
    install_extension(node, &p);
    // A PATH without pi-index.
    let mut rpc = Rpc::start(
        p.pi(node)
            .env("PATH", "/usr/bin:/bin")
            .args(["--mode", "rpc", "--no-mcp"]),
    );
    rpc.send(json!({"id": "1", "type": "prompt", "message": "/find anything"}));
    let note = rpc.until("notify", |o| o["method"] == "notify");
    assert_eq!(note["notifyType"], "error");
    // Installed from a directory, the package has no platform package
    // beside it: PATH, and the message says both.
    let platform = crate::util::npm_platform().unwrap();
    assert_eq!(
        note["message"],
        format!(
            "pi-index is not installed (`pi-index` was not found): install it with `pi install npm:pi-index` \
             or `npm i -g pi-index`, or set PI_INDEX_BIN to the binary's path. This package's own binary: \
             @pi-index/{platform}, the package of pi-index's binary for {platform}, is not installed beside \
             pi-index: install pi-index from npm with its optional dependencies, not with --omit=optional"
        )
    );
}

#[test]
fn python_sdk_search_merges_copies_and_sessions_know_their_family() {
    let Some(py) = python("python_sdk_search_merges_copies_and_sessions_know_their_family") else {
        return;
    };
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    copy_dir(&repo().join("fixtures/forks"), &dir);
    s.build(&[&dir], &[]);
    let (parent, inferred, edited) = (
        "f0a1b2c3-0000-4000-8000-000000000001",
        "f0a1b2c3-0000-4000-8000-0000000000aa",
        "f0a1b2c3-0000-4000-8000-0000000000bb",
    );
    let c = client(
        py,
        &s,
        json!([
            {"call": "search", "args": {"query": "zqforkshared"}},
            {"call": "sessions", "args": {}},
        ]),
        &strs(&server_args(&s, &dir)),
    );
    let r: Vec<&Value> = c.results.iter().map(ok).collect();
    // One hit for the message and its two copies: the agent's limit is
    // not spent on copies.
    assert_eq!(lines(r[0]), [at(parent, 2)]);
    assert_eq!(r[0]["total"], 1);
    let copies: Vec<(&str, u64)> = r[0]["hits"][0]["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["session_id"].as_str().unwrap(),
                c["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(copies, [(inferred, 2), (edited, 2)]);
    let row = |id: &str| {
        r[1]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["session_id"] == id)
            .unwrap()
            .clone()
    };
    let parent_row = row(parent);
    let forks: Vec<&str> = parent_row["forks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["session"].as_str().unwrap())
        .collect();
    assert_eq!(forks, [inferred, edited]);
    assert!(parent_row.get("parent").is_none());
    assert_eq!(row(inferred)["parent"]["session"], parent);
    assert_eq!(row(inferred)["parent"]["how"], "inferred");
    assert_eq!(row(edited)["parent"]["how"], "stated");
    assert!(row(edited).get("forks").is_none());
}

/// `pi-index mcp --db URL`: the same tools over the team database, two
/// hosts having pushed the search fixtures: the local answers, each with
/// its host, and `database` where the local ones say `index`; a session
/// two hosts hold is shown by its host.
#[test]
fn python_sdk_over_the_team_database_each_answer_with_its_host() {
    let Some(py) = python("python_sdk_over_the_team_database_each_answer_with_its_host") else {
        return;
    };
    let Some(url) = crate::team::database("mcp_db") else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    for host in ["alice@laptop", "bob@devbox"] {
        crate::util::pg::push_ok(&s, &url, host);
    }
    let steps = json!([
        {"call": "search", "args": {"query": "tokio host:bob@devbox"}},
        {"call": "sessions", "args": {}},
        {"call": "sessions", "args": {"query": "tokio", "cwd": "/home/u/alpha"}},
        {"call": "show", "args": {"session": A, "host": "bob@devbox"}},
        {"call": "show", "args": {"session": A}},
        {"call": "search", "args": {"query": "tokio"}},
    ]);
    let c = client(py, &s, steps.clone(), &["--db", &url]);
    let local = client(py, &s, steps, &strs(&server_args(&s, &dir)));
    let r: Vec<&Value> = c.results[..4].iter().map(ok).collect();
    let database = url.trim_start_matches("postgres://");
    for answer in &r {
        assert_eq!(answer["database"], database, "{answer}");
        assert!(answer.get("index").is_none(), "{answer}");
    }
    // One host's hits: the local hits but for the snippet's ranking, each
    // with the host.
    assert_eq!(set(lines(r[0])), set(lines(ok(&local.results[5]))));
    let hits = r[0]["hits"].as_array().unwrap();
    assert!(hits.iter().all(|h| h["host"] == "bob@devbox"), "{hits:?}");
    let a4 = hits
        .iter()
        .find(|h| h["line"] == 4 && h["session_id"] == A)
        .unwrap();
    assert_eq!(a4["text"], "What about tokio runtime panics?");
    assert_eq!(a4["active"], false);
    // Every host's sessions, newest first.
    assert_eq!(r[1]["total"], 6);
    let hosts: Vec<&str> = r[1]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts.len(), 6);
    assert!(hosts.contains(&"alice@laptop") && hosts.contains(&"bob@devbox"));
    // A query and a directory: alpha's session, on each host.
    let found: Vec<(&str, &str)> = r[2]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["session_id"].as_str().unwrap(),
                s["host"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|(id, _)| *id == A), "{found:?}");
    // A session by its id and host: the local messages.
    assert_eq!(r[3]["host"], "bob@devbox");
    let local_show = ok(&local.results[3]);
    assert_eq!(r[3]["messages"], local_show["messages"]);
    assert_eq!(r[3]["total"], local_show["total"]);
    // Two hosts hold it: without one, the error says how to choose.
    assert!(
        err(&c.results[4]).contains("--host"),
        "{}",
        err(&c.results[4])
    );
    // And `--call` reads the database too.
    let out = s
        .cmd()
        .args([
            "mcp",
            "--db",
            &url,
            "--call",
            "sessions",
            "--args",
            "{\"limit\": 1}",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"], 6);
    assert_eq!(v["database"], database);
}

/// The `usage` tool answers what `pi-index usage --json` prints: the same
/// rows (the latest periods up to `limit`), the total of the range with
/// each entry once, and what was left out; a bad group or limit is a tool
/// error that says what to give.
#[test]
fn the_usage_tool_answers_as_the_command_line_does() {
    let s = Scratch::new();
    s.build(&[&repo().join("fixtures/usage")], &[]);
    let call = |args: &str| {
        run(s
            .cmd()
            .args([
                "mcp",
                "--no-refresh",
                "--call",
                "usage",
                "--args",
                args,
                "--index",
            ])
            .arg(s.index()))
    };
    let cli = |args: &[&str]| -> Vec<Value> {
        let out = run(s
            .cmd()
            .arg("usage")
            .args(args)
            .args(["--json", "--timezone", "UTC", "--index"])
            .arg(s.index()));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        crate::util::json_lines(&out)
    };
    let tokens = [
        "input",
        "output",
        "cache_read",
        "cache_write",
        "total_tokens",
    ];
    for (group, args) in [
        ("daily", r#"{"timezone":"UTC"}"#),
        ("model", r#"{"group":"model","timezone":"UTC"}"#),
        ("session", r#"{"group":"session","timezone":"UTC"}"#),
    ] {
        let out = call(args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let want = cli(&[group]);
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(v["rows_total"], json!(want.len()), "{v}");
        assert_eq!(rows.len(), want.len(), "{v}");
        assert!(rows.len() >= 3, "{v}");
        for (a, b) in rows.iter().zip(&want) {
            for key in ["period", "session_id", "model", "models"] {
                assert_eq!(a.get(key), b.get(key), "{key}: {a} {b}");
            }
            for key in tokens {
                assert_eq!(a[key], b[key], "{key}: {a} {b}");
            }
            assert!((a["cost"].as_f64().unwrap() - b["cost"].as_f64().unwrap()).abs() < 1e-12);
        }
        assert!(!v["left_out"].as_array().unwrap().is_empty(), "{v}");
    }
    // The latest days when they are more than asked for.
    let v: Value = serde_json::from_slice(&call(r#"{"timezone":"UTC","limit":2}"#).stdout).unwrap();
    let days = cli(&["daily"]);
    let latest: Vec<&Value> = days[days.len() - 2..]
        .iter()
        .map(|d| &d["period"])
        .collect();
    let got: Vec<&Value> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["period"])
        .collect();
    assert_eq!(got, latest, "{v}");
    assert_eq!(v["rows_total"], json!(days.len()));
    // Bad arguments are tool errors that say what to give.
    for (args, says) in [
        (
            r#"{"group":"hourly"}"#,
            "give daily, weekly, monthly, session, model, project or host",
        ),
        (r#"{"limit":51}"#, "the most one call returns"),
        (r#"{"timezone":"Mars/Olympus"}"#, "IANA time zone"),
    ] {
        let out = call(args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{args}: {text}");
        assert!(text.contains(says), "{args}: {text}");
    }
}
