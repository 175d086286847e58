//! `pi-index serve` against hostile clients, through the real binary:
//! every number and parameter a client sends, bounded and answered with
//! a 4xx JSON error, never a 5xx; connections that send half a request or
//! nothing; another site's page in headless Chromium (frames, images,
//! fetches and a link, on another port of this machine); session files
//! swapped for links, devices and pipes under the server; ids a browser
//! would rewrite; `--bind` with a token, reached from another network
//! namespace; and `serve --db`'s totals.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::web::{browser, http, Response, Server, DEADLINE};
use crate::util::{cannot_run, copy_dir, run, session_file, Scratch};

const ALPHA: &str = "aaaa0001-0000-4000-8000-000000000001";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `fixtures/search` copied into the scratch and indexed.
fn search_fixtures(s: &Scratch) -> PathBuf {
    let dir = s.dir.path().join("sessions");
    copy_dir(&repo().join("fixtures/search"), &dir);
    s.build(&[&dir], &[]);
    dir
}

/// Whether `r` is the API's JSON error with a 4xx status.
fn json_4xx(what: &str, r: &Response) -> Value {
    assert!(
        (400..500).contains(&r.status),
        "{what}: {} {}",
        r.status,
        r.body
    );
    assert_eq!(
        r.header("content-type"),
        Some("application/json"),
        "{what}: {}",
        r.body
    );
    let v: Value =
        serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{what}: {e}: {}", r.body));
    assert!(
        v["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{what}: {v}"
    );
    v
}

/// One raw request line sent as is (its target not re-encoded).
fn raw_get(port: u16, target: &[u8]) -> Response {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut req = b"GET ".to_vec();
    req.extend_from_slice(target);
    req.extend_from_slice(
        format!(" HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    c.write_all(&req).unwrap();
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head: {}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Response {
        status,
        headers,
        body: String::from_utf8_lossy(&raw[split + 4..]).into_owned(),
    }
}

// ---- every number a client sends ----------------------------------------

/// Values a client may send for any parameter: negative, 2^64 and past
/// it, NaN, floats, huge, empty, control bytes, bytes that are not UTF-8,
/// and a parameter given twice.
const VALUES: [&str; 18] = [
    "-1",
    "18446744073709551616",
    "18446744073709551615",
    "99999999999999999999999999",
    "1000000000",
    "1001",
    "NaN",
    "1e3",
    "0x10",
    "%20%205",
    "",
    "%00",
    "%FF%FE",
    "%0A%0D",
    "0",
    "100",
    "101",
    "all",
];

#[test]
fn serve_every_parameter_of_every_route_is_bounded_4xx_json_never_5xx() {
    let s = Scratch::new();
    search_fixtures(&s);
    let srv = Server::start(&s, &["--no-refresh"]);
    // Under the 64 KB a request target may have (hyper's limit: longer
    // ones are refused 414 before any route, see below).
    let huge = "9".repeat(30_000);
    let mut values: Vec<String> = VALUES.iter().map(|v| v.to_string()).collect();
    values.push(huge.clone());
    let routes = [
        "/api/search?q=tokio",
        "/api/sessions?q=tokio",
        "/api/sessions?",
        &format!("/api/session/{ALPHA}?"),
        "/api/stats?",
        "/api/status?",
        "/?q=tokio",
        "/?",
        "/stats?",
        &format!("/session/{ALPHA}?"),
        &format!("/session/{ALPHA}/raw?"),
        &format!("/session/?id={ALPHA}"),
    ];
    let params = [
        "q", "sort", "limit", "offset", "branch", "fragment", "host", "line", "from", "leaf", "id",
        "raw", "token",
    ];
    for route in routes {
        for p in params {
            for v in &values {
                for repeated in [false, true] {
                    let mut target = format!("{route}&{p}={v}");
                    if repeated {
                        target += &format!("&{p}={v}");
                    }
                    let r = raw_get(srv.port, target.as_bytes());
                    let what = format!("GET {}", &target[..target.len().min(120)]);
                    assert!(r.status < 500, "{what}: {} {}", r.status, r.body);
                    if r.status >= 400 && route.starts_with("/api/") {
                        json_4xx(&what, &r);
                    }
                }
            }
        }
    }
    // Each number over its bound is refused by name, with what to do.
    let r = srv.get("/api/search?q=*&offset=1000000000");
    let e = json_4xx("offset", &r);
    assert_eq!(
        e["error"],
        "offset 1000000000 is more than 1000, the deepest a search pages: narrow the query instead (more words, `cwd:`, `after:`, `role:`)"
    );
    let e = json_4xx(
        "offset",
        &srv.get("/api/search?q=*&offset=18446744073709551615"),
    );
    assert!(e["error"]
        .as_str()
        .unwrap()
        .starts_with("offset 18446744073709551615 is more than 1000"));
    let e = json_4xx("offset", &srv.get("/api/sessions?q=tokio&offset=1001"));
    assert!(e["error"]
        .as_str()
        .unwrap()
        .starts_with("offset 1001 is more than 1000"));
    let e = json_4xx("limit", &srv.get("/api/search?q=tokio&limit=-1"));
    assert_eq!(
        e["error"],
        "the query string cannot be read (limit: invalid digit found in string): numbers are whole numbers of 0 or more, and each parameter is given once"
    );
    let e = json_4xx("twice", &srv.get("/api/search?q=a&q=b"));
    assert_eq!(
        e["error"],
        "the query string cannot be read (duplicate field `q`): numbers are whole numbers of 0 or more, and each parameter is given once"
    );
    let e = json_4xx("line", &srv.get(&format!("/api/session/{ALPHA}?limit=101")));
    assert_eq!(
        e["error"],
        "limit=101: give 1 to 100, and offset= for the next page"
    );
    // A page's bad parameter is a 400 too, said in text.
    let r = srv.get(&format!("/session/{ALPHA}?line=99999999999999999999"));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body
            .starts_with("pi-index: the query string cannot be read (line: "),
        "{}",
        r.body
    );
    // A request target past hyper's 64 KB: 414 from the HTTP layer, and
    // the server goes on.
    let long = format!("/api/search?q={}", "9".repeat(100_000));
    assert_eq!(raw_get(srv.port, long.as_bytes()).status, 414);
    // A path that is not UTF-8.
    let e = json_4xx("path", &raw_get(srv.port, b"/api/session/%FF%FE"));
    assert_eq!(
        e["error"],
        "the session id in the path cannot be read (it must be UTF-8, percent-encoded)"
    );
    // Random query strings, bytes and all.
    use proptest::prelude::*;
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 300,
        failure_persistence: None,
        ..Default::default()
    });
    let port = srv.port;
    runner
        .run(
            &(
                prop::sample::select(vec!["/api/search", "/api/sessions", "/", "/stats"]),
                prop::collection::vec(
                    (
                        prop::sample::select(params.to_vec()),
                        prop::collection::vec(any::<u8>(), 0..24),
                    ),
                    0..5,
                ),
            ),
            |(path, pairs)| {
                let mut target = path.as_bytes().to_vec();
                target.push(b'?');
                for (k, v) in pairs {
                    target.extend_from_slice(k.as_bytes());
                    target.push(b'=');
                    for b in v {
                        // Percent-encoded, so that any byte reaches the server.
                        target.extend_from_slice(format!("%{b:02X}").as_bytes());
                    }
                    target.push(b'&');
                }
                let r = raw_get(port, &target);
                prop_assert!(
                    r.status < 500,
                    "{}: {} {}",
                    String::from_utf8_lossy(&target),
                    r.status,
                    r.body
                );
                if r.status >= 400 && path.starts_with("/api/") {
                    prop_assert_eq!(r.header("content-type"), Some("application/json"));
                }
                Ok(())
            },
        )
        .unwrap();
    // And the server still answers.
    assert_eq!(srv.get("/api/status").status, 200);
    assert_eq!(srv.json("/api/search?q=tokio")["total"], 4);
}

// ---- connections --------------------------------------------------------

#[test]
fn serve_half_sent_requests_are_closed_and_connections_are_capped() {
    let s = Scratch::new();
    search_fixtures(&s);
    let srv = Server::start(&s, &["--no-refresh"]);
    // Half a request line, then nothing: closed by the server.
    let mut half = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    half.write_all(b"GET /api/sta").unwrap();
    half.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut buf = [0u8; 64];
    assert_eq!(half.read(&mut buf).unwrap(), 0, "closed, unanswered");
    // As many connections as the server holds that send nothing: one
    // more is answered 503 at once and closed (the kernel hands them
    // over in order).
    let mut silent: Vec<TcpStream> = (0..256)
        .map(|_| TcpStream::connect(("127.0.0.1", srv.port)).unwrap())
        .collect();
    let mut over = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    over.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut answer = String::new();
    over.read_to_string(&mut answer).unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{answer}"
    );
    assert!(
        answer.ends_with(
            "\r\n\r\npi-index: too many connections at once: retry when others are done\n"
        ),
        "{answer}"
    );
    // A silent connection's place is given back when it closes.
    silent.truncate(0);
    // A thousand half-sent requests: each is closed by the server (at
    // once when over the cap, else after its head timeout), and the
    // server answers again.
    let mut half: Vec<TcpStream> = (0..1000)
        .map(|_| {
            let mut c = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
            c.write_all(b"GET /api/stat").unwrap();
            c
        })
        .collect();
    for c in &mut half {
        c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut rest = Vec::new();
        match c.read_to_end(&mut rest) {
            Ok(_) => {}
            // Closed with bytes of ours unread: a reset, closed all the same.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("not closed by the server: {e}"),
        }
        let rest = String::from_utf8_lossy(&rest);
        assert!(
            rest.is_empty() || rest.starts_with("HTTP/1.1 503 "),
            "{rest}"
        );
    }
    drop(half);
    let start = Instant::now();
    loop {
        let r = srv.get("/api/status");
        if r.status == 200 {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "{} {}", r.status, r.body);
        std::thread::sleep(Duration::from_millis(50));
    }
    // A request with a body is refused unread.
    let r = http(
        srv.port,
        "GET",
        "/api/status",
        &format!("127.0.0.1:{}", srv.port),
        &["Content-Length: 5"],
    );
    assert_eq!(r.status, 413);
    assert_eq!(r.body, "pi-index: the web view takes no request body\n");
}

// ---- the file behind /session/ID/raw ------------------------------------

#[test]
fn serve_raw_and_the_session_page_read_only_the_regular_file_the_index_read() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let file = dir.join(
        "--home-u-alpha--/2026-01-10T09-00-00-000Z_aaaa0001-0000-4000-8000-000000000001.jsonl",
    );
    let indexed = std::fs::read_to_string(&file).unwrap();
    let srv = Server::start(&s, &["--no-refresh"]);
    let raw = format!("/session/{ALPHA}/raw");
    assert_eq!(srv.get(&raw).body, indexed);
    // Grown since: the length the index read.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    f.write_all(b"{\"type\":\"message\",\"id\":\"zz\",\"parentId\":null,\"timestamp\":\"2026-01-10T09:09:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"zqlater\",\"timestamp\":0}}\n").unwrap();
    drop(f);
    assert_eq!(srv.get(&raw).body, indexed);
    let keep = s.dir.path().join("kept.jsonl");
    std::fs::rename(&file, &keep).unwrap();
    for what in [
        "a link to /etc/passwd",
        "a link to /dev/zero",
        "a pipe",
        "a copy (another file)",
    ] {
        let _ = std::fs::remove_file(&file);
        match what {
            "a link to /etc/passwd" => std::os::unix::fs::symlink("/etc/passwd", &file).unwrap(),
            "a link to /dev/zero" => std::os::unix::fs::symlink("/dev/zero", &file).unwrap(),
            "a pipe" => assert!(std::process::Command::new("mkfifo")
                .arg(&file)
                .status()
                .unwrap()
                .success()),
            _ => {
                std::fs::copy(&keep, &file).unwrap();
            }
        }
        let r = srv.get(&raw);
        assert_eq!(
            r.status,
            404,
            "{what}: {}",
            &r.body[..r.body.len().min(200)]
        );
        assert!(
            r.body.starts_with(&format!(
                "pi-index: the session's file {} cannot be read (",
                file.display()
            )),
            "{what}: {}",
            &r.body[..r.body.len().min(200)]
        );
        assert!(!r.body.contains("root:"), "{what}");
        let page = srv.get(&format!("/session/{ALPHA}"));
        assert_eq!(page.status, 404, "{what}");
        assert!(!page.body.contains("root:"), "{what}");
    }
    // The file back where the index read it: served again.
    let _ = std::fs::remove_file(&file);
    std::fs::rename(&keep, &file).unwrap();
    assert_eq!(srv.get(&raw).status, 200);
}

// ---- ids a browser would rewrite ----------------------------------------

#[test]
fn serve_ids_that_are_dot_segments_link_to_their_sessions() {
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions/--home-u-dots--");
    std::fs::create_dir_all(&dir).unwrap();
    for (id, word) in [("..", "zqdotdot"), (".", "zqdot")] {
        std::fs::write(
            dir.join(format!("2026-03-01T10-00-00-000Z_{word}.jsonl")),
            session_file(id, "/home/u/dots", &[("user", &format!("where is {word}"))]),
        )
        .unwrap();
    }
    s.build(&[&dir], &[]);
    let srv = Server::start(&s, &["--no-refresh"]);
    for (id, word) in [("..", "zqdotdot"), (".", "zqdot")] {
        let page = srv.get(&format!("/?q={word}"));
        let want = format!("href=\"/session/?id={id}\"");
        assert!(page.body.contains(&want), "{id}: {}", page.body);
        let r = srv.get(&format!("/session/?id={id}"));
        assert_eq!(r.status, 200, "{id}: {}", r.body);
        assert!(r.body.contains(word), "{id}");
        assert!(
            r.body
                .contains(&format!("href=\"/session/?id={id}&amp;raw=1\"")),
            "{id}"
        );
        let raw = srv.get(&format!("/session/?id={id}&raw=1"));
        assert_eq!(raw.status, 200, "{id}");
        assert!(raw.body.contains(word), "{id}");
    }
    // In a browser the link opens the session, not the search page.
    let Some(b) = browser("serve_ids_that_are_dot_segments_link_to_their_sessions") else {
        return;
    };
    b.goto(&format!("{}?q=zqdotdot", srv.url.trim_end_matches('/')));
    b.until("document.querySelector('a.session')");
    b.click("a.session");
    b.until("location.search === '?id=..'");
    assert!(b
        .js("return document.body.innerText")
        .as_str()
        .unwrap()
        .contains("where is zqdotdot"));
}

// ---- another site's page, in Chromium -----------------------------------

/// What the recording proxy saw of one request and its answer.
#[derive(Clone, Debug)]
struct Seen {
    target: String,
    site: String,
    mode: String,
    dest: String,
    status: u16,
    body: String,
}

/// A proxy on its own port in front of the server, as if it were the
/// server (the Host it forwards is the server's): it records what the
/// browser sent and what the server answered.
fn recording_proxy(server: u16) -> (u16, Arc<Mutex<Vec<Seen>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let log = log.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(c.try_clone().unwrap());
                let mut head = Vec::new();
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if line == "\r\n" {
                        break;
                    }
                    head.push(line.trim_end().to_owned());
                }
                let header = |name: &str| {
                    head.iter()
                        .filter_map(|l| l.split_once(':'))
                        .find(|(k, _)| k.eq_ignore_ascii_case(name))
                        .map(|(_, v)| v.trim().to_owned())
                        .unwrap_or_default()
                };
                let (site, mode, dest) = (
                    header("sec-fetch-site"),
                    header("sec-fetch-mode"),
                    header("sec-fetch-dest"),
                );
                let target = head[0].split(' ').nth(1).unwrap_or("").to_owned();
                let mut out = format!("{}\r\n", head[0]);
                for l in &head[1..] {
                    let lower = l.to_ascii_lowercase();
                    if lower.starts_with("host:") || lower.starts_with("connection:") {
                        continue;
                    }
                    if lower.starts_with("origin:") && l.contains(&format!(":{port}")) {
                        out += &format!("Origin: http://127.0.0.1:{server}\r\n");
                        continue;
                    }
                    out += l;
                    out += "\r\n";
                }
                out += &format!("Host: 127.0.0.1:{server}\r\nConnection: close\r\n\r\n");
                let mut s = TcpStream::connect(("127.0.0.1", server)).unwrap();
                s.write_all(out.as_bytes()).unwrap();
                let mut answer = Vec::new();
                let _ = s.read_to_end(&mut answer);
                let text = String::from_utf8_lossy(&answer).into_owned();
                let status = text
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
                log.lock().unwrap().push(Seen {
                    target,
                    site,
                    mode,
                    dest,
                    status,
                    body: body.chars().take(300).collect(),
                });
                let _ = c.write_all(&answer);
            });
        }
    });
    (port, seen)
}

/// A page of another site (another port of this machine): whatever is
/// asked, this HTML.
fn attacker(html: String) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let mut r = BufReader::new(c.try_clone().unwrap());
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
            }
            let _ = c.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                    html.len()
                )
                .as_bytes(),
            );
        }
    });
    port
}

#[test]
fn browser_another_site_s_page_reaches_no_handler_and_its_link_searches_nothing() {
    let Some(b) =
        browser("browser_another_site_s_page_reaches_no_handler_and_its_link_searches_nothing")
    else {
        return;
    };
    let s = Scratch::new();
    search_fixtures(&s);
    let srv = Server::start(&s, &["--no-refresh"]);
    let (proxy, seen) = recording_proxy(srv.port);
    let target = format!("http://127.0.0.1:{proxy}");
    let page = format!(
        r#"<!doctype html><html><body>
<iframe src="{target}/api/search?q=*&offset=1000000000"></iframe>
<iframe src="{target}/session/{ALPHA}"></iframe>
<iframe src="{target}/?q=tokio"></iframe>
<img src="{target}/api/search?q=tokio&limit=1">
<script>
fetch("{target}/api/search?q=tokio&offset=1000000000", {{mode: "no-cors"}}).finally(() => document.title = "fetched");
</script>
<a id="go" href="{target}/?q=tokio">a link</a>
</body></html>"#
    );
    let evil = attacker(page);
    b.goto(&format!("http://127.0.0.1:{evil}/"));
    b.until("document.title === 'fetched'");
    // Every request the page made (frames, image, fetch) was refused
    // before a handler ran; the iframe that killed the server once
    // among them.
    let start = Instant::now();
    loop {
        if seen.lock().unwrap().len() >= 5 {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "{:?}", seen.lock().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    for r in seen.lock().unwrap().iter() {
        assert_eq!(r.site, "same-site", "{r:?}");
        assert_eq!(r.status, 403, "{r:?}");
        assert_eq!(
            r.body,
            "pi-index: refused: a request another site's page made (Sec-Fetch-Site); only a link to a page may be followed from another site\n",
            "{r:?}"
        );
    }
    let dests: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.dest.clone())
        .collect();
    for d in ["iframe", "image", "empty"] {
        assert!(dests.iter().any(|x| x == d), "{dests:?}");
    }
    assert_eq!(
        srv.get("/api/status").status,
        200,
        "the server still answers"
    );
    // The link, followed: the search page, with the query in the box and
    // nothing searched.
    seen.lock().unwrap().clear();
    b.click("#go");
    b.until("document.querySelector('#q') && document.querySelector('#q').value === 'tokio'");
    let nav = seen
        .lock()
        .unwrap()
        .iter()
        .find(|r| r.target == "/?q=tokio")
        .cloned()
        .expect("the navigation");
    assert_eq!(
        (
            nav.site.as_str(),
            nav.mode.as_str(),
            nav.dest.as_str(),
            nav.status
        ),
        ("same-site", "navigate", "document", 200)
    );
    assert!(b
        .js("return document.querySelector('#results').innerText")
        .as_str()
        .unwrap()
        .contains("opened from another site, so nothing was searched"));
    assert_eq!(
        b.js("return document.querySelectorAll('a.hit, a.session').length"),
        0
    );
    // The person's own Enter searches.
    b.keys("#q", "\u{e007}");
    b.until("document.querySelectorAll('a.session').length > 0");
}

// ---- --bind with a token ------------------------------------------------

/// `serve` with `args`, and the URLs it printed.
fn start_printing(s: &Scratch, args: &[&str]) -> (Child, Vec<String>) {
    let mut child = s
        .cmd()
        .arg("serve")
        .arg("--index")
        .arg(s.index())
        .args(["--port", "0", "--no-refresh"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let urls = loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            panic!("serve exited: {said}");
        }
        said += &line;
        if let Some(rest) = line
            .split("serving http://")
            .nth(1)
            .map(|r| format!("http://{r}"))
        {
            let listed = rest.split(" (").next().unwrap().to_owned();
            break listed
                .split_whitespace()
                .filter(|w| w.starts_with("http://"))
                .map(str::to_owned)
                .collect::<Vec<_>>();
        }
    };
    std::thread::spawn(move || {
        let mut sink = String::new();
        let _ = err.read_to_string(&mut sink);
    });
    (child, urls)
}

#[test]
fn serve_bind_with_a_token_serves_any_host_and_prints_a_url_another_machine_opens() {
    let s = Scratch::new();
    search_fixtures(&s);
    let (mut child, urls) = start_printing(&s, &["--bind", "0.0.0.0", "--token", "T0k3n"]);
    let first = &urls[0];
    assert!(!first.contains("0.0.0.0"), "{urls:?}");
    assert!(first.ends_with("/?token=T0k3n"), "{first}");
    let authority = first
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let port: u16 = authority.rsplit(':').next().unwrap().parse().unwrap();
    // Any Host that carries the token, whatever name the client used; the
    // scheme's name in any case.
    for (host, auth) in [
        (authority.as_str(), "Authorization: Bearer T0k3n"),
        ("pi-box.example:1234", "Authorization: bearer T0k3n"),
        ("192.0.2.7", "Authorization: BEARER T0k3n"),
    ] {
        let r = http(port, "GET", "/api/status", host, &[auth]);
        assert_eq!(r.status, 200, "{host}: {}", r.body);
        assert_eq!(
            http(port, "GET", "/api/status", host, &[]).status,
            401,
            "{host}"
        );
    }
    let r = http(port, "GET", "/?token=T0k3n", "pi-box.example", &[]);
    assert_eq!(r.status, 200);
    // Another machine: a network namespace of its own, joined to this one
    // by a virtual link, opens the printed URL of that link's address.
    let ns = format!("pi-index-t{}", std::process::id());
    let ip = |args: &[&str]| {
        std::process::Command::new("ip")
            .args(args)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    let (a, b) = (
        format!("pia{}", std::process::id() % 10000),
        format!("pib{}", std::process::id() % 10000),
    );
    let linked = ip(&["netns", "add", &ns])
        && ip(&["link", "add", &a, "type", "veth", "peer", "name", &b])
        && ip(&["link", "set", &b, "netns", &ns])
        && ip(&["addr", "add", "10.213.7.1/24", "dev", &a])
        && ip(&["link", "set", &a, "up"])
        && ip(&["-n", &ns, "addr", "add", "10.213.7.2/24", "dev", &b])
        && ip(&["-n", &ns, "link", "set", &b, "up"]);
    struct Cleanup(String, String);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::process::Command::new("ip")
                .args(["link", "del", &self.1])
                .output();
            let _ = std::process::Command::new("ip")
                .args(["netns", "del", &self.0])
                .output();
        }
    }
    let _cleanup = Cleanup(ns.clone(), a.clone());
    if !linked {
        let _ = child.kill();
        return cannot_run(
            "cannot make a network namespace with a veth link here (ip netns, root)",
        );
    }
    let _ = child.kill();
    let _ = child.wait();
    // Started again: it lists the link's address now.
    let (mut child, urls) = start_printing(&s, &["--bind", "0.0.0.0", "--token", "T0k3n"]);
    let url = urls
        .iter()
        .find(|u| u.starts_with("http://10.213.7.1:"))
        .unwrap_or_else(|| panic!("the link's address among {urls:?}"))
        .clone();
    let out = run(std::process::Command::new("ip").args([
        "netns",
        "exec",
        &ns,
        "curl",
        "-sS",
        "-c",
        "/dev/null",
        "-L",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &url,
    ]));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "200",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- serve --db ---------------------------------------------------------

#[test]
fn serve_db_sessions_total_is_what_the_query_found_at_any_offset() {
    let Some(url) = crate::team::database("servetotal") else {
        return;
    };
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    copy_dir(&repo().join("fixtures/sessions"), &dir);
    s.build(&[&dir], &[]);
    crate::util::pg::push_ok(&s, &url, "h");
    let found = run(s
        .cmd()
        .args(["sessions", "--db", &url, "--json", "--all", "--", "the"]));
    let want = String::from_utf8_lossy(&found.stdout).lines().count();
    assert!(want > 5, "{want}");
    let mut child = s
        .cmd()
        .args(["serve", "--port", "0", "--db", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("serving ") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "serve exited");
    }
    let port: u16 = line
        .split("http://127.0.0.1:")
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let get = |path: &str| http(port, "GET", path, &format!("127.0.0.1:{port}"), &[]);
    for offset in [0, 1, 3, 1000] {
        let r = get(&format!("/api/sessions?q=the&limit=2&offset={offset}"));
        assert_eq!(r.status, 200, "{}", r.body);
        let v: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(v["total"], want, "offset {offset}: {v}");
        assert_eq!(v["more"], offset + 2 < want, "offset {offset}");
    }
    let e = json_4xx("deep", &get("/api/sessions?q=the&offset=1000000"));
    assert!(e["error"]
        .as_str()
        .unwrap()
        .starts_with("offset 1000000 is more than 1000"));
    let _ = child.kill();
    let _ = child.wait();
}
