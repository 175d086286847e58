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
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::mcp::{search_fixtures, server_args};
use crate::util::raw::Raw;
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

    // A method MCP does not have, named by 100,000 characters: not echoed.
    raw.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "m".repeat(100_000)}).to_string());
    assert_eq!(
        rpc_error(&raw.reply(&json!(8))),
        (
            -32601,
            format!(
                "Method not found: \"{}…\" (100000 characters)",
                "m".repeat(60)
            )
        )
    );

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

// ---------------------------------------------------------------------------
// Streamable HTTP, spoken by hand on 127.0.0.1

/// `pi-index mcp --transport http` on a free port, with `extra` flags.
struct Http {
    child: Child,
    addr: std::net::SocketAddr,
}

impl Http {
    fn start(s: &Scratch, dir: &Path, extra: &[&str]) -> Http {
        raise_fd_limit();
        let mut child = Command::new(BIN)
            .arg("mcp")
            .args(server_args(s, dir))
            .args(["--transport", "http", "--port", "0"])
            .args(extra)
            .env("HOME", s.home())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let url = first
            .trim()
            .strip_prefix("pi-index: MCP (streamable HTTP) at http://")
            .and_then(|u| u.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("no URL on stderr: {first:?}"));
        Http {
            addr: url.parse().unwrap(),
            child,
        }
    }

    /// One request on a connection of its own: (status, headers in lower
    /// case, body).
    fn request(&self, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut c = Conn::open(self.addr);
        c.send(method, headers, body);
        c.reply()
    }

    /// POST a JSON-RPC message (with the headers MCP wants and `extra`).
    fn post(&self, extra: &[(&str, &str)], body: &str) -> Reply {
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        headers.extend_from_slice(extra);
        self.request("POST", &headers, body)
    }

    /// A new session's id.
    fn initialize(&self) -> String {
        let r = self.post(&[], INITIALIZE);
        assert_eq!(r.status, 200, "{}", r.body);
        r.header("mcp-session-id").expect("a session id").to_owned()
    }

    /// The descriptors the server holds.
    fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .unwrap()
            .count()
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

/// 800 sockets in this process and as many in the server: more than a
/// default soft limit of 1,024 leaves to the tests running beside.
fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain calls on a struct this function owns.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max.min(65536);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// An HTTP/1.1 connection, kept alive between requests.
struct Conn {
    read: BufReader<std::net::TcpStream>,
    write: std::net::TcpStream,
}

impl Conn {
    fn open(addr: std::net::SocketAddr) -> Conn {
        let s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        Conn {
            read: BufReader::new(s.try_clone().unwrap()),
            write: s,
        }
    }

    fn send(&mut self, method: &str, headers: &[(&str, &str)], body: &str) {
        let mut req = format!("{method} /mcp HTTP/1.1\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req.push_str("host: 127.0.0.1\r\n");
        }
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
        match self.write.write_all(req.as_bytes()) {
            Ok(()) => {}
            // A server that answers before taking the whole body (a body
            // over the limit: 413, and the connection closed) may close
            // while this is still writing; its answer is then read.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
                ) => {}
            Err(e) => panic!("sending {method}: {e}"),
        }
    }

    /// The next response, its body read whole (by length, or chunk by
    /// chunk to the last).
    fn reply(&mut self) -> Reply {
        let mut line = String::new();
        self.read.read_line(&mut line).unwrap();
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line: {line:?}"));
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.read.read_line(&mut line).unwrap();
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (k, v) = l.split_once(':').unwrap();
            headers.push((k.to_ascii_lowercase(), v.trim().to_owned()));
        }
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let mut body = Vec::new();
        if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            loop {
                line.clear();
                self.read.read_line(&mut line).unwrap();
                let n = usize::from_str_radix(line.trim(), 16).unwrap();
                let mut chunk = vec![0; n + 2];
                std::io::Read::read_exact(&mut self.read, &mut chunk).unwrap();
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        } else if let Some(n) = get("content-length").and_then(|v| v.parse().ok()) {
            body = vec![0; n];
            std::io::Read::read_exact(&mut self.read, &mut body).unwrap();
        }
        Reply {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }
}

#[test]
fn http_checks_host_and_origin_and_answers_what_is_not_a_message_with_400() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let http = Http::start(&s, &dir, &[]);
    for (header, value) in [
        ("origin", "http://evil.example"),
        ("origin", "http://127.0.0.1.evil.example:8080"),
        ("origin", "null"),
        ("host", "evil.example"),
        ("host", "localhost.evil.example:80"),
    ] {
        let r = http.post(&[(header, value)], INITIALIZE);
        assert_eq!(r.status, 403, "{header}: {value}: {}", r.body);
        assert!(r.body.starts_with("Forbidden: the "), "{}", r.body);
    }
    // No Origin (any client that is not a browser), or a loopback one.
    for origin in [
        None,
        Some("http://localhost:5173"),
        Some("http://127.0.0.1"),
        Some("http://[::1]:8080"),
    ] {
        let headers: Vec<(&str, &str)> = origin.map(|o| ("origin", o)).into_iter().collect();
        let r = http.post(&headers, INITIALIZE);
        assert_eq!(r.status, 200, "{origin:?}: {}", r.body);
    }

    let bad = |body: &str| -> (i64, Value) {
        let r = http.post(&[], body);
        assert_eq!(r.status, 400, "{body:.80}: {}", r.body);
        assert_eq!(r.header("content-type"), Some("application/json"));
        let v = r.json();
        (v["error"]["code"].as_i64().unwrap(), v["id"].clone())
    };
    assert_eq!(bad("{not json"), (-32700, Value::Null));
    assert_eq!(bad(&format!("[{PING}]")), (-32600, Value::Null));
    assert_eq!(
        bad(
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":1e309}}}"#
        ),
        (-32602, json!(9))
    );

    // Over 4 MiB: not read further, said, and the connection closed.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":10,"method":"ping","params":{{"x":"{}"}}}}"#,
        "x".repeat(5 << 20)
    );
    let r = http.post(&[], &big);
    assert_eq!(r.status, 413);
    assert_eq!(r.header("connection"), Some("close"));
    assert_eq!(
        r.json()["error"]["message"],
        "Invalid Request: the message is more than the 4194304 bytes a message may have; it was not read"
    );

    // A session: deleted once, then unknown.
    let id = http.initialize();
    let session = [("mcp-session-id", id.as_str())];
    assert_eq!(http.post(&session, PING).status, 200);
    let r = http.request("DELETE", &session, "");
    assert!(
        r.status == 200 || r.status == 202,
        "{} {}",
        r.status,
        r.body
    );
    let again = http.request("DELETE", &session, "");
    assert_eq!(again.status, 404, "{}", again.body);
    assert_eq!(http.post(&session, PING).status, 404);
    let unknown = [("mcp-session-id", "no-such-session")];
    assert_eq!(http.post(&unknown, PING).status, 404);
    assert_eq!(http.request("DELETE", &unknown, "").status, 404);
}

#[test]
fn http_sessions_are_capped_and_expire_when_idle() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let http = Http::start(&s, &dir, &["--max-sessions", "5", "--idle-timeout", "1"]);
    let ids: Vec<String> = (0..8).map(|_| http.initialize()).collect();
    let ping = |id: &str| http.post(&[("mcp-session-id", id)], PING).status;
    // The newest five live; the three oldest were closed for them.
    for id in &ids[3..] {
        assert_eq!(ping(id), 200);
    }
    for id in &ids[..3] {
        assert_eq!(ping(id), 404);
    }
    // Left alone, a session expires. Each probe waits longer than the
    // idle time first, as a probe is a use.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        std::thread::sleep(Duration::from_millis(1500));
        if ping(&ids[7]) == 404 {
            break;
        }
        assert!(Instant::now() < deadline, "the session never expired");
    }
}

#[test]
fn http_10000_initializes_without_delete_stay_under_100_mb() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let http = Http::start(&s, &dir, &[]);
    let mut c = Conn::open(http.addr);
    for i in 0..10_000 {
        c.send(
            "POST",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            INITIALIZE,
        );
        let r = c.reply();
        assert_eq!(r.status, 200, "initialize {i}: {}", r.body);
    }
    let peak = status_bytes(http.child.id(), "VmHWM");
    assert!(peak < 100 << 20, "the server peaked at {} MB", peak >> 20);
}

#[test]
fn http_half_sent_requests_are_closed_and_their_descriptors_freed() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let http = Http::start(&s, &dir, &["--request-timeout", "1"]);
    // A whole request first: the server at rest, as it will be after.
    assert_eq!(http.post(&[], INITIALIZE).status, 200);
    let idle = http.fds();
    // A kept-alive connection is not a request being sent: a client that
    // pauses past the timeout between two calls keeps its connection.
    let mut kept = Conn::open(http.addr);
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    kept.send("POST", &headers, INITIALIZE);
    assert_eq!(kept.reply().status, 200);
    std::thread::sleep(Duration::from_millis(2500));
    kept.send("POST", &headers, INITIALIZE);
    assert_eq!(kept.reply().status, 200);
    drop(kept);
    let mut held = Vec::new();
    for i in 0..800 {
        let mut s = std::net::TcpStream::connect(http.addr).unwrap();
        let part = if i % 2 == 0 {
            // Headers cut short.
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: appl".to_owned()
        } else {
            // Headers whole, a tenth of the body.
            format!("POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{}", INITIALIZE.len(), &INITIALIZE[..15])
        };
        s.write_all(part.as_bytes()).unwrap();
        held.push(s);
    }
    // The client keeps every socket open: the server must let go.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut now = http.fds();
    while now > idle {
        assert!(
            Instant::now() < deadline,
            "{now} descriptors held, {idle} at rest"
        );
        std::thread::sleep(Duration::from_millis(100));
        now = http.fds();
    }
    // A body that did not come was answered 408.
    let mut r = BufReader::new(&held[1]);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 408"), "{line:?}");
    // And the server still answers.
    assert_eq!(http.post(&[], INITIALIZE).status, 200);
}
