//! No request goes unanswered and none can exhaust the server (issue 19):
//!
//! - the query length limit, the same through the command line, the
//!   picker and the MCP server (`pi_index::search::query::limits`);
//! - a raw stdio conversation with the real `pi-index mcp`: lines that are
//!   not JSON, values that cannot be read (`1e309`, `"\ud800"`), a batch, a
//!   line over the limit, each answered, and the calls in flight at end of
//!   input answered before the process exits;
//! - resource bounds of the real server process, read from
//!   `/proc/PID/status` (`VmHWM`: its peak resident memory) and
//!   `/proc/PID/fd`: never a duration. Each loop is bounded and runs on
//!   127.0.0.1 only.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::mcp::{search_fixtures, server_args};
use crate::util::{run, Scratch};

const BIN: &str = env!("CARGO_BIN_EXE_pi-index");

/// The limits as the messages give them.
const LIMITS: &str = "a query may have at most 4096 bytes and 256 words";

/// `n` distinct words: `w0 w1 …`.
fn words(n: usize) -> String {
    (0..n)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A line of `/proc/PID/status` in bytes (`VmHWM`, `VmRSS`).
fn status_bytes(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(&format!("{key}:")))
        .unwrap_or_else(|| panic!("no {key} in /proc/{pid}/status"));
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap();
    kib * 1024
}

// ---------------------------------------------------------------------------
// The query limit, in every front end

#[test]
fn a_query_over_the_limit_exits_2_with_the_limit_and_not_the_query() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let _ = dir;
    // As many words as a shell passes: 20,000 arguments.
    let many: Vec<String> = (0..20_000).map(|i| format!("w{i}")).collect();
    let out = run(s
        .cmd()
        .args(["search", "--index"])
        .arg(s.index())
        .arg("--")
        .args(&many));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "pi-index: error: the query is too long ({} bytes, more than 256 words): {LIMITS}; keep the words that set what you look for apart (a name, an error's distinctive words) and leave out the rest",
            many.join(" ").len()
        )
    );
    // One word of 100,000 characters: not echoed, in search or sessions.
    let word = "q".repeat(100_000);
    for cmd in ["search", "sessions"] {
        let out = run(s
            .cmd()
            .args([cmd, "--index"])
            .arg(s.index())
            .arg("--")
            .arg(&word));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.starts_with("pi-index: error: the query is too long (100000 bytes, 1 word)"),
            "{cmd}: {err}"
        );
        assert!(!err.contains("qqqq"), "{cmd}: the word came back");
    }
    // At the limit, the query runs.
    let out = run(s
        .cmd()
        .args(["search", "--index"])
        .arg(s.index())
        .arg("--")
        .arg(words(255) + " tokio"));
    assert_eq!(
        out.status.code(),
        Some(1),
        "256 words: searched, none match all"
    );
}

#[test]
fn the_picker_says_the_limit_in_its_status_line() {
    use crate::pick_app::{fixtures_view, picker, screen};
    use crossterm::event::Event;
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "tokio", false);
    app.event(&Event::Paste(format!(" {}", words(300))));
    pi_index::pick::settle(&mut app, Some(&view));
    let text = screen(&mut app, 200, 30);
    let status = text.lines().nth(1).unwrap();
    let want = format!(
        "the query is too long ({} bytes, more than 256 words): {LIMITS}",
        "tokio ".len() + words(300).len()
    );
    assert!(status.starts_with(&want), "{status}");
    // The rows of the last query that ran stay.
    assert!(text.contains("Beta planning"), "{text}");
}

#[test]
fn mcp_search_and_sessions_over_the_limit_are_tool_errors() {
    let Some(py) = crate::mcp::python("mcp_search_and_sessions_over_the_limit_are_tool_errors")
    else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let word = "q".repeat(100_000);
    let c = crate::mcp::client(
        py,
        &s,
        json!([
            {"call": "search", "args": {"query": words(300)}},
            {"call": "sessions", "args": {"query": word}},
            {"call": "search", "args": {"query": "tokio", "since": word}},
            {"call": "show", "args": {"session": word}},
            {"call": "search", "args": {"query": "tokio", "sort": word}},
        ]),
        &crate::mcp::strs(&server_args(&s, &dir)),
    );
    assert_eq!(
        crate::mcp::err(&c.results[0]),
        format!("the query is too long ({} bytes, more than 256 words): {LIMITS}; keep the words that set what you look for apart (a name, an error's distinctive words) and leave out the rest", words(300).len())
    );
    assert!(crate::mcp::err(&c.results[1])
        .starts_with("the query is too long (100000 bytes, 1 word): a query may have at most"));
    for r in &c.results[1..] {
        let text = crate::mcp::err(r);
        assert!(
            text.len() < 1000,
            "a long value came back whole: {}",
            &text[..200]
        );
        assert!(!text.contains(&"q".repeat(1000)), "{}", &text[..200]);
    }
}

// ---------------------------------------------------------------------------
// A raw stdio conversation

/// `pi-index mcp` over stdio, written to and read line by line.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Replies read while waiting for another.
    unread: Vec<Value>,
}

impl Raw {
    fn start(s: &Scratch, args: &[String], env: &[(&str, &Path)]) -> Raw {
        let mut cmd = Command::new(BIN);
        cmd.arg("mcp")
            .args(args)
            .env("HOME", s.home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut raw = Raw {
            child,
            stdin,
            lines,
            unread: Vec::new(),
        };
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
            .to_string(),
        );
        assert_eq!(
            raw.reply(&json!(1))["result"]["serverInfo"]["name"],
            "pi-index"
        );
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// A tool call with `id`.
    fn call(&mut self, id: u64, tool: &str, args: Value) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": tool, "arguments": args}})
            .to_string(),
        );
    }

    /// The reply whose id is `id` (null: the next reply without one).
    fn reply(&mut self, id: &Value) -> Value {
        if let Some(i) = self.unread.iter().position(|r| &r["id"] == id) {
            return self.unread.remove(i);
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no reply with id {id} ({e})"));
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("a reply that is not JSON ({e}): {line:.300}"));
            if &v["id"] == id {
                return v;
            }
            self.unread.push(v);
        }
    }

    /// Close stdin and wait for the exit (within 60 s).
    fn close(&mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The error code and message of a JSON-RPC error reply.
fn rpc_error(r: &Value) -> (i64, String) {
    (
        r["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {r}")),
        r["error"]["message"].as_str().unwrap().to_owned(),
    )
}

/// A tool result's text and whether it is a tool error.
fn tool_text(r: &Value) -> (bool, String) {
    let result = &r["result"];
    (
        result["isError"].as_bool().unwrap_or(false),
        result["content"][0]["text"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn stdio_answers_every_bad_line_and_goes_on() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let mut raw = Raw::start(&s, &server_args(&s, &dir), &[]);
    let null = Value::Null;

    raw.send("this is not json");
    let (code, message) = rpc_error(&raw.reply(&null));
    assert_eq!(code, -32700);
    assert!(
        message.starts_with("Parse error: the message is not JSON"),
        "{message}"
    );

    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"tokio","limit":1e309}}}"#);
    assert_eq!(
        rpc_error(&raw.reply(&json!(2))),
        (
            -32602,
            "Invalid params: number out of range at line 1 column 114".into()
        )
    );

    raw.send(r#"{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"search","arguments":{"query":"\ud800 x"}}}"#);
    let (code, message) = rpc_error(&raw.reply(&json!("three")));
    assert_eq!(code, -32602);
    assert!(message.starts_with("Invalid params: "), "{message}");

    raw.send(r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#);
    let (code, message) = rpc_error(&raw.reply(&null));
    assert_eq!(code, -32600);
    assert!(
        message.starts_with("batches are not supported"),
        "{message}"
    );

    // 4 MiB and one byte: skipped unread, and said.
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"search","arguments":{{"query":"{}"}}}}}}"#,
        "x".repeat(4 << 20)
    );
    raw.send(&long);
    assert_eq!(
        rpc_error(&raw.reply(&null)),
        (
            -32600,
            format!("Invalid Request: the message is {} bytes, more than the 4194304 bytes a message may have; it was not read", long.len())
        )
    );

    raw.send(r#"{"jsonrpc":"2.0","id":6}"#);
    assert_eq!(rpc_error(&raw.reply(&json!(6))).0, -32600);

    // The server goes on.
    raw.call(7, "search", json!({"query": "tokio", "active_only": true}));
    let (is_error, text) = tool_text(&raw.reply(&json!(7)));
    assert!(!is_error, "{text}");
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["total"], 2);
    assert!(
        raw.unread.is_empty(),
        "replies to nothing: {:?}",
        raw.unread
    );
    assert!(raw.close().success());
}

#[test]
fn a_200000_word_query_is_refused_in_bounded_memory() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let mut raw = Raw::start(&s, &server_args(&s, &dir), &[]);
    // Eight pipelined calls of 30,000 words (once 5.7 GB), then one of
    // 200,000 words (1.4 MB, once 4.8 GB).
    for id in 10..18 {
        raw.call(id, "search", json!({"query": words(30_000)}));
    }
    raw.call(20, "search", json!({"query": words(200_000)}));
    for id in (10..18).chain([20]) {
        let (is_error, text) = tool_text(&raw.reply(&json!(id)));
        assert!(is_error, "{id}: {text:.200}");
        assert!(text.starts_with("the query is too long ("), "{text:.200}");
        assert!(text.contains(LIMITS), "{text}");
        assert!(!text.contains("w1234"), "the query came back: {text:.200}");
    }
    let peak = status_bytes(raw.child.id(), "VmHWM");
    assert!(peak < 100 << 20, "the server peaked at {} MB", peak >> 20);
    assert!(raw.close().success());
}

/// rmcp waits 5 s for the answers of calls still running at end of input,
/// then drops them; this transport waits for them all. The calls are held
/// (the `failpoints` feature) until the test lets them go, past that 5 s.
#[cfg(feature = "failpoints")]
#[test]
fn calls_in_flight_at_end_of_input_are_answered_before_exit() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let release = s.dir.path().join("release");
    let mut raw = Raw::start(
        &s,
        &server_args(&s, &dir),
        &[("PI_INDEX_TEST_MCP_HOLD", &release)],
    );
    for id in 2..5 {
        raw.call(id, "search", json!({"query": "tokio"}));
    }
    drop(raw.stdin.take());
    // Still running, its calls held, well past rmcp's own 5 s: a sleep
    // that only makes the case, never a duration asserted.
    let until = Instant::now() + Duration::from_secs(6);
    while Instant::now() < until {
        assert!(
            raw.child.try_wait().unwrap().is_none(),
            "the server left with calls running"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::write(&release, b"").unwrap();
    for id in 2..5 {
        let (is_error, text) = tool_text(&raw.reply(&json!(id)));
        assert!(!is_error, "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["total"], 4);
    }
    assert!(raw.close().success());
}

// ---------------------------------------------------------------------------
// The smaller items: one answer from the command line and from MCP

#[test]
fn show_nothing_a_line_past_the_end_and_a_signed_age_say_so_alike() {
    let Some(py) =
        crate::mcp::python("show_nothing_a_line_past_the_end_and_a_signed_age_say_so_alike")
    else {
        return;
    };
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let cli = |args: &[&str]| -> String {
        let out = run(s.cmd().args(args).arg("--index").arg(s.index()));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        err.trim_end()
            .strip_prefix("pi-index: error: ")
            .unwrap_or_else(|| panic!("{err}"))
            .to_owned()
    };
    let c = crate::mcp::client(
        py,
        &s,
        json!([
            {"call": "show", "args": {"session": ""}},
            {"call": "show", "args": {"session": "cccc", "around": 999}},
            {"call": "search", "args": {"query": "tokio after:-5d"}},
        ]),
        &crate::mcp::strs(&server_args(&s, &dir)),
    );
    let empty = "no session given: name one by its id (as search and sessions give it), a unique prefix of the id, or its file's path";
    assert_eq!(cli(&["show", ""]), empty);
    assert_eq!(crate::mcp::err(&c.results[0]), empty);
    let past = "line 999 is past the session's last message (line 4): give a line up to 4";
    assert_eq!(cli(&["show", "cccc", "--around", "999"]), past);
    assert_eq!(crate::mcp::err(&c.results[1]), past);
    let signed = "cannot read \"-5d\" as a date (an age is how long ago, written without a sign): use a date (2026-03-01, local midnight), a local time (2026-03-01T12:00), an RFC 3339 timestamp (2026-03-01T12:00:00Z), today, yesterday, now, or an age (7d, 12h, 30m, 2w, 1mo, 1y)";
    assert_eq!(cli(&["search", "tokio after:-5d"]), signed);
    assert_eq!(crate::mcp::err(&c.results[2]), signed);
}

#[test]
fn search_n_0_is_an_error_that_says_at_least_1() {
    let s = Scratch::new();
    search_fixtures(&s);
    let out = run(s
        .cmd()
        .args(["search", "config", "-n", "0", "--index"])
        .arg(s.index()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: invalid value '0' for '--limit <N>': expected at least 1"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
