//! `pi-index serve`: the real binary serving an index, spoken to over raw
//! HTTP (the security rules, the JSON API against the command line's
//! `--json`) and driven in headless Chromium through chromedriver
//! (WebDriver, by fantoccini): search as you type, a hit opened on its
//! entry, Back, branches, folding, a 50,000-message session windowed, the
//! charts, live refresh, and a hostile corpus that must run nothing.
//!
//! Without `chromium` and `chromedriver` (Debian's packages; `.ci/run`
//! installs them) the browser tests say why and pass, except under CI,
//! where they fail. No test asserts a duration: each polls for its
//! outcome with a deadline.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::web::{browser, http, Browser, Server, DEADLINE};
use crate::util::{copy_dir, json_lines, run, session_file, Scratch, WriterLock};

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

const ALPHA: &str = "aaaa0001-0000-4000-8000-000000000001";

// ---- the rules every request passes -------------------------------------

#[test]
fn serve_refuses_foreign_hosts_origins_and_writes() {
    let s = Scratch::new();
    search_fixtures(&s);
    let srv = Server::start(&s, &["--no-refresh"]);
    let own = format!("127.0.0.1:{}", srv.port);
    let ok = srv.get("/api/status");
    assert_eq!(ok.status, 200, "{}", ok.body);
    for host in [own.clone(), format!("localhost:{}", srv.port)] {
        assert_eq!(http(srv.port, "GET", "/", &host, &[]).status, 200, "{host}");
    }
    // DNS rebinding: another name pointed at 127.0.0.1.
    let r = http(
        srv.port,
        "GET",
        "/api/search?q=tokio",
        &format!("evil.example:{}", srv.port),
        &[],
    );
    assert_eq!(r.status, 403);
    assert_eq!(
        r.body,
        format!("pi-index: refused: the Host header (evil.example:{}) is not this server's address; open http://127.0.0.1:{}/ instead\n", srv.port, srv.port)
    );
    assert_eq!(
        http(
            srv.port,
            "GET",
            "/",
            &format!("127.0.0.1:{}", srv.port + 1),
            &[]
        )
        .status,
        403
    );
    // Another site's page reading the API.
    let r = srv.get_with("/api/search?q=tokio", &["Origin: http://evil.example"]);
    assert_eq!(r.status, 403);
    assert_eq!(
        r.body,
        "pi-index: refused: a request from another site's page (its Origin is not this server)\n"
    );
    let own_origin = format!("Origin: http://{own}");
    assert_eq!(
        srv.get_with("/api/search?q=tokio", &[&own_origin]).status,
        200
    );
    let r = srv.get_with(
        "/api/search?q=tokio",
        &["Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: no-cors"],
    );
    assert_eq!(r.status, 403);
    // Following another site's link to a page is harmless: the page,
    // with nothing searched.
    let nav = srv.get_with(
        "/?q=tokio",
        &[
            "Sec-Fetch-Site: cross-site",
            "Sec-Fetch-Mode: navigate",
            "Sec-Fetch-Dest: document",
        ],
    );
    assert_eq!(nav.status, 200);
    assert!(nav
        .body
        .contains("opened from another site, so nothing was searched"));
    assert!(!nav.body.contains("class=\"hit"));
    // A frame of another site's page is not a link followed.
    for dest in ["iframe", "frame", "embed"] {
        let r = srv.get_with(
            "/?q=tokio",
            &[
                "Sec-Fetch-Site: cross-site",
                "Sec-Fetch-Mode: navigate",
                &format!("Sec-Fetch-Dest: {dest}"),
            ],
        );
        assert_eq!(r.status, 403, "{dest}");
    }
    // Nothing changes anything.
    for method in ["POST", "PUT", "DELETE"] {
        let r = http(
            srv.port,
            method,
            "/api/search?q=tokio",
            &own,
            &["Content-Length: 0"],
        );
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(
            r.body,
            "pi-index: the web view is read-only: only GET and HEAD\n"
        );
    }
    // The headers, on answers and refusals alike.
    for r in [
        ok,
        nav,
        srv.get_with("/", &["Origin: http://evil.example"]),
        srv.get("/nowhere"),
    ] {
        assert_eq!(
            r.header("content-security-policy"),
            Some("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
        );
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(r.header("referrer-policy"), Some("no-referrer"));
        assert_eq!(r.header("x-frame-options"), Some("DENY"));
    }
    let page = srv.get("/");
    assert!(!page.body.contains("<script>"), "no inline script");
    assert!(page
        .body
        .contains("<script type=\"module\" src=\"/assets/app.js?v="));
}

#[test]
fn serve_bind_needs_a_token_and_a_token_is_checked() {
    let s = Scratch::new();
    search_fixtures(&s);
    let out = run(s
        .cmd()
        .args(["serve", "--bind", "0.0.0.0", "--port", "0", "--index"])
        .arg(s.index()));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pi-index: error: --bind 0.0.0.0 would serve your sessions to other machines: give a --token as well (every request must then carry it), or leave --bind out to serve on loopback only\n"
    );
    let srv = Server::start(&s, &["--no-refresh", "--token", "sekret-1"]);
    assert!(srv.url.ends_with("/?token=sekret-1"), "{}", srv.url);
    let r = srv.get("/api/status");
    assert_eq!(r.status, 401);
    assert_eq!(r.body, "pi-index: this server needs its token: open the URL it printed (with ?token=…), or send Authorization: Bearer TOKEN\n");
    assert_eq!(srv.get("/?token=wrong").status, 401);
    let first = srv.get("/?token=sekret-1");
    assert_eq!(first.status, 200);
    assert_eq!(
        first.header("set-cookie"),
        Some("pi_index_token=sekret-1; Path=/; HttpOnly; SameSite=Strict")
    );
    assert_eq!(
        srv.get_with("/api/status", &["Cookie: a=b; pi_index_token=sekret-1"])
            .status,
        200
    );
    assert_eq!(
        srv.get_with("/api/status", &["Authorization: Bearer sekret-1"])
            .status,
        200
    );
    assert_eq!(
        srv.get_with("/api/status", &["Authorization: Bearer sekret-2"])
            .status,
        401
    );
}

#[test]
fn serve_assets_come_from_the_binary_with_etags() {
    let s = Scratch::new();
    search_fixtures(&s);
    let srv = Server::start(&s, &["--no-refresh"]);
    for (name, kind) in [
        ("app.js", "text/javascript; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
    ] {
        let r = srv.get(&format!("/assets/{name}"));
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some(kind));
        assert_eq!(
            r.body,
            std::fs::read_to_string(repo().join("src/serve/assets").join(name)).unwrap()
        );
        let tag = r.header("etag").unwrap().to_owned();
        let again = srv.get_with(
            &format!("/assets/{name}"),
            &[&format!("If-None-Match: {tag}")],
        );
        assert_eq!(again.status, 304);
        assert_eq!(again.body, "");
    }
    assert_eq!(srv.get("/assets/../Cargo.toml").status, 404);
}

// ---- the JSON API: the command line's objects ---------------------------

#[test]
fn serve_api_answers_with_the_cli_json_objects() {
    let s = Scratch::new();
    search_fixtures(&s);
    let srv = Server::start(&s, &["--no-refresh"]);
    let index = s.index();
    let cli = |args: &[&str]| {
        let out = run(s.cmd().args(args).arg("--index").arg(&index));
        assert!(out.status.success(), "{args:?}");
        json_lines(&out)
    };
    let skipped = json!({"status": "skipped", "new_messages": 0});
    let found = srv.json("/api/search?q=tokio");
    assert_eq!(found["hits"], json!(s.search_json("tokio", &[])));
    assert_eq!(found["total"], 4);
    assert_eq!(found["warnings"], json!([]));
    assert_eq!(found["index"], skipped);
    let newest = srv.json("/api/search?q=tokio&sort=newest&limit=2&offset=1");
    assert_eq!(
        newest["hits"],
        json!(s.search_json("tokio", &["--sort", "newest", "-n", "2", "--offset", "1"]))
    );
    // What the server keeps between searches (time orders, column
    // handles, sessions, filter terms checked on pruned matches) gives
    // the CLI's answer, asked twice (the second from what was kept).
    for (q, query, args) in [
        ("tokio&sort=oldest", "tokio", vec!["--sort", "oldest"]),
        ("tokio%20role%3Auser", "tokio role:user", vec![]),
        ("tokio%20role%3Aassistant", "tokio role:assistant", vec![]),
        (
            "tokio%20role%3Aassistant&sort=newest",
            "tokio role:assistant",
            vec!["--sort", "newest"],
        ),
    ] {
        let want = json!(s.search_json(query, &args));
        assert!(!want.as_array().unwrap().is_empty(), "{query}");
        for _ in 0..2 {
            let got = srv.json(&format!("/api/search?q={q}"));
            assert_eq!(got["hits"], want, "{q}");
        }
    }
    let warned = srv.json("/api/search?q=tokio%20OR");
    assert_eq!(
        warned["warnings"],
        json!([{"position": 6, "message": "OR with nothing after it: ignored"}])
    );

    let all = srv.json("/api/sessions");
    assert_eq!(all["sessions"], json!(cli(&["sessions", "--json"])));
    assert_eq!(all["total"], 3);
    let ranked = srv.json("/api/sessions?q=tokio");
    assert_eq!(
        ranked["sessions"],
        json!(cli(&["sessions", "tokio", "--json"]))
    );

    let one = srv.json(&format!("/api/session/{ALPHA}?branch=all"));
    assert_eq!(one["documents"], json!(s.show_json(ALPHA, &[])));
    assert_eq!(
        one["session"],
        cli(&["sessions", "--json"])
            .into_iter()
            .find(|r| r["session_id"] == ALPHA)
            .unwrap()
    );
    // A page is the same slice of the same list (only the page is read
    // from the store).
    let whole = s.show_json(ALPHA, &[]);
    let page = srv.json(&format!("/api/session/{ALPHA}?branch=all&offset=1&limit=2"));
    assert_eq!(page["total"], whole.len());
    assert_eq!(page["documents"], json!(whole[1..3]));
    let active = srv.json(&format!("/api/session/{ALPHA}"));
    assert_eq!(
        active["documents"],
        json!(s.show_json(ALPHA, &["--branch", "active"]))
    );

    let stats = srv.json("/api/stats");
    assert_eq!(stats["stats"], cli(&["stats", "--json"])[0]);
    assert_eq!(
        stats["activity"]["per_directory"],
        json!([
            ["/home/u/alpha", 1],
            ["/home/u/alpha/sub", 1],
            ["/home/u/beta", 1]
        ])
    );

    // Errors say what to do, as JSON, with their status.
    let bad = |path: &str, status: u16, error: &str| {
        let r = srv.get(path);
        assert_eq!(r.status, status, "{path}");
        assert_eq!(
            serde_json::from_str::<Value>(&r.body).unwrap(),
            json!({"error": error}),
            "{path}"
        );
    };
    bad("/api/search?q=role:robot", 400, &s_error(&s, "role:robot"));
    bad(
        "/api/search?q=tokio&limit=1000",
        400,
        "limit=1000: give 1 to 100, and offset= for the next page",
    );
    bad(
        "/api/search?q=tokio&sort=up",
        400,
        "sort=\"up\" is not an order: use relevance, newest or oldest",
    );
    // The limits every front end shares, with the CLI's and MCP's words.
    let long = "a".repeat(pi_index::search::query::limits::MAX_QUERY_BYTES + 1);
    let said = pi_index::search::query::limits::check(&long)
        .unwrap_err()
        .to_string();
    assert!(said.contains("4096 bytes and 256 words"), "{said}");
    bad(&format!("/api/search?q={long}"), 400, &said);
    bad("/api/session/nope", 404, "no indexed session has the id \"nope\": search for it from the search page (a new session appears after the next refresh)");
    // A prefix or a path is not an id.
    assert_eq!(srv.get("/api/session/aaaa0001").status, 404);
    let path = std::fs::canonicalize(s.dir.path().join("sessions/--home-u-alpha--")).unwrap();
    assert_eq!(
        srv.get(&format!(
            "/api/session/{}",
            path.display().to_string().replace('/', "%2F")
        ))
        .status,
        404
    );
}

/// What `pi-index search` says of a query it cannot run (after
/// `pi-index: error: `).
fn s_error(s: &Scratch, q: &str) -> String {
    let out = run(s
        .cmd()
        .args(["search", "--index"])
        .arg(s.index())
        .args(["--", q]));
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8_lossy(&out.stderr)
        .trim_end()
        .trim_start_matches("pi-index: error: ")
        .to_owned()
}

#[test]
fn serve_raw_download_is_the_file() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let srv = Server::start(&s, &["--no-refresh"]);
    let file = dir.join(
        "--home-u-alpha--/2026-01-10T09-00-00-000Z_aaaa0001-0000-4000-8000-000000000001.jsonl",
    );
    let r = srv.get(&format!("/session/{ALPHA}/raw"));
    assert_eq!(r.status, 200);
    assert_eq!(r.body, std::fs::read_to_string(file).unwrap());
    assert_eq!(
        r.header("content-disposition"),
        Some("attachment; filename=\"2026-01-10T09-00-00-000Z_aaaa0001-0000-4000-8000-000000000001.jsonl\"")
    );
}

/// Polls `get` until `ok` holds for it (the refresh runs on the server's
/// own thread), up to the deadline.
fn until(what: &str, get: impl Fn() -> Value, ok: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let v = get();
        if ok(&v) {
            return v;
        }
        assert!(start.elapsed() < DEADLINE, "never {what}: {v}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serve_follows_the_session_directory_as_pi_writes() {
    let s = Scratch::new();
    let dir = search_fixtures(&s);
    let dir_arg = dir.to_string_lossy().into_owned();
    let srv = Server::start(&s, &[&dir_arg]);
    // The first refresh checks every file, and says why.
    let first = until(
        "a first refresh",
        || srv.json("/api/status"),
        |v| v["index"]["checked"].is_string(),
    );
    assert_eq!(first["index"]["checked"], "full", "{first}");
    assert_eq!(
        first["index"]["full_because"],
        "the first check since the watch began"
    );
    // A refresh that went through: a full check that failed (the index
    // busy, say) gives its check back, and the next refresh is full
    // again for the same reason (each search refreshes).
    until(
        "a refresh that went through",
        || {
            srv.json("/api/search?q=zqnothinghere");
            srv.json("/api/status")
        },
        |v| matches!(v["index"]["status"].as_str(), Some("current" | "updated")),
    );
    // A message appended, and a session in a project directory made now:
    // found, by refreshes of what the watch saw.
    let alpha = dir.join(
        "--home-u-alpha--/2026-01-10T09-00-00-000Z_aaaa0001-0000-4000-8000-000000000001.jsonl",
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&alpha)
        .unwrap();
    f.write_all(crate::util::message("w1", "\"a6\"", 10, "user", "zqserved one").as_bytes())
        .unwrap();
    drop(f);
    let new_dir = dir.join("--home-u-served--");
    std::fs::create_dir(&new_dir).unwrap();
    std::fs::write(
        new_dir.join("2026-05-01_ffff0006.jsonl"),
        session_file("ffff0006", "/home/u/served", &[("user", "zqserved two")]),
    )
    .unwrap();
    until(
        "both found",
        || srv.json("/api/search?q=zqserved"),
        |v| v["total"] == 2,
    );
    // The refresh that committed them reports once it has returned, a
    // moment after its commit is searchable: waited for, not read once.
    // A full check would stay the last report (nothing changes after
    // it), so this fails if the watch did not find them.
    let status = until(
        "a watched refresh reported",
        || srv.json("/api/status"),
        |v| v["index"]["checked"] == "watched",
    );
    assert!(status["generation"].as_u64() > first["generation"].as_u64());
    // Removed: gone from the results.
    std::fs::remove_dir_all(&new_dir).unwrap();
    until(
        "the removed session gone",
        || srv.json("/api/search?q=zqserved"),
        |v| v["total"] == 1,
    );
    assert_eq!(srv.json("/api/status")["index"]["checked"], "watched");
}

// ---- the browser --------------------------------------------------------

const ENTER: &str = "\u{e007}";
const DOWN: &str = "\u{e015}";

#[test]
fn browser_search_as_you_type_opens_the_hit_and_back_restores_the_query() {
    let Some(b) = browser("browser_search_as_you_type_opens_the_hit_and_back_restores_the_query")
    else {
        return;
    };
    let s = Scratch::new();
    search_fixtures(&s);
    let srv = Server::start(&s, &["--no-refresh"]);
    b.goto(&srv.url);
    // No query: every session, grouped by directory.
    assert_eq!(
        b.js(
            "return [...document.querySelectorAll('section.directory h2')].map(h => h.textContent)"
        ),
        json!(["/home/u/alpha/sub", "/home/u/beta", "/home/u/alpha"])
    );
    assert_eq!(b.js("return document.activeElement.id"), json!("q"));
    b.keys("#q", "panics");
    b.until("document.querySelector('#results').dataset.query === 'panics' && document.querySelector('a.hit')");
    assert_eq!(
        b.js("return [...document.querySelectorAll('a.hit')].map(a => [a.querySelector('.role').textContent, a.querySelector('.snippet').innerHTML, a.getAttribute('href')])"),
        json!([["user", "What about tokio runtime <mark>panics</mark>", format!("/session/{ALPHA}?line=4&branch=all#a3")]])
    );
    assert!(b.url().ends_with("/?q=panics"), "{}", b.url());
    // A chip edits the query.
    b.click("a.chip[data-filter='role:assistant']");
    b.until("document.querySelector('#q').value === 'panics role:assistant'");
    assert_eq!(
        b.js("return document.querySelector('p.count').textContent"),
        json!("1 sessions")
    );
    assert_eq!(
        b.js("return document.querySelector('a.hit .role').textContent"),
        json!("assistant")
    );
    b.back();
    b.until("document.querySelector('#q').value === 'panics' && document.querySelector('a.hit .role').textContent === 'user'");
    // Keys: down selects the hit, Enter opens it, on its entry.
    b.keys("#q", DOWN);
    b.until("document.querySelector('a.hit.selected')");
    b.keys("#q", ENTER);
    b.until("location.pathname.startsWith('/session/')");
    assert_eq!(
        b.until("document.querySelector(':target') && document.querySelector(':target').id"),
        json!("a3")
    );
    assert_eq!(
        b.js("const t = document.querySelector(':target'); return [t.querySelector('.md').textContent.trim(), getComputedStyle(t).outlineStyle, t.querySelector('.mark.abandoned').textContent]"),
        json!(["What about tokio runtime panics?", "solid", "abandoned branch"])
    );
    // Back restores the query and its results.
    b.back();
    b.until("location.pathname === '/' && document.querySelector('#q').value === 'panics' && document.querySelector('a.hit')");
    // `/` focuses the box from anywhere.
    b.js("document.activeElement.blur(); return 1");
    b.keys("body", "/");
    assert_eq!(b.js("return document.activeElement.id"), json!("q"));
}

/// A session with two branches, thinking, tools (one failing, one edit
/// with its diff), a bash execution, images, raw HTML and the other
/// entry kinds.
fn rich_session(dir: &Path) -> PathBuf {
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let big = "A".repeat(3 << 20);
    let lines = vec![
        json!({"type":"session","version":3,"id":"rich0001","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/home/u/rich"}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-05-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"Look at this <b>bold?</b> screenshot"},{"type":"image","data":png,"mimeType":"image/png"},{"type":"image","data":big,"mimeType":"image/png"}],"timestamp":0}}),
        json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-05-01T10:00:02.000Z","message":{"role":"assistant","model":"claude-x","content":[{"type":"thinking","thinking":"zqthought one"},{"type":"text","text":"answer A zqabandoned"}],"timestamp":0}}),
        json!({"type":"message","id":"a2","parentId":"u1","timestamp":"2026-05-01T10:00:03.000Z","message":{"role":"assistant","model":"claude-x","content":[{"type":"thinking","thinking":"zqthought two"},{"type":"text","text":"answer **B**"},{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"ls -la /tmp","timeout":5}},{"type":"toolCall","id":"t2","name":"edit","arguments":{"path":"src/x.rs","oldText":"a","newText":"b"}},{"type":"toolCall","id":"t3","name":"read","arguments":{"path":"/nope"}}],"timestamp":0}}),
        json!({"type":"message","id":"r1","parentId":"a2","timestamp":"2026-05-01T10:00:04.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"zqlisting total 0"}],"isError":false,"timestamp":0}}),
        json!({"type":"message","id":"r2","parentId":"r1","timestamp":"2026-05-01T10:00:05.000Z","message":{"role":"toolResult","toolCallId":"t2","toolName":"edit","content":[{"type":"text","text":"edited"}],"details":{"diff":"-a\n+b"},"isError":false,"timestamp":0}}),
        json!({"type":"message","id":"r3","parentId":"r2","timestamp":"2026-05-01T10:00:06.000Z","message":{"role":"toolResult","toolCallId":"t3","toolName":"read","content":[{"type":"text","text":"ENOENT: no such file"}],"isError":true,"timestamp":0}}),
        json!({"type":"message","id":"b1","parentId":"r3","timestamp":"2026-05-01T10:00:07.000Z","message":{"role":"bashExecution","command":"cargo test","output":"zqbashout ok","exitCode":0,"cancelled":false,"truncated":false,"timestamp":0}}),
        json!({"type":"label","id":"l1","parentId":"b1","timestamp":"2026-05-01T10:00:08.000Z","targetId":"a2","label":"checkpoint"}),
        json!({"type":"compaction","id":"c1","parentId":"l1","timestamp":"2026-05-01T10:00:09.000Z","summary":"zqsummary of *earlier* work","firstKeptEntryId":"a2","tokensBefore":100}),
        json!({"type":"custom_message","id":"x1","parentId":"c1","timestamp":"2026-05-01T10:00:10.000Z","customType":"note","content":"zqcustom text","display":true}),
        json!({"type":"session_info","id":"n1","parentId":"x1","timestamp":"2026-05-01T10:00:11.000Z","name":"Rich session"}),
    ];
    let path = dir.join("2026-05-01T10-00-00-000Z_rich0001.jsonl");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        &path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    std::fs::canonicalize(path).unwrap()
}

#[test]
fn browser_session_page_branches_folds_and_tools() {
    let Some(b) = browser("browser_session_page_branches_folds_and_tools") else {
        return;
    };
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    let path = rich_session(&dir);
    s.build(&[&dir], &[]);
    let srv = Server::start(&s, &["--no-refresh"]);
    let texts = "return [...document.querySelectorAll('article.entry')].map(e => e.id)";
    b.goto(&format!("{}session/rich0001", srv.url));
    // The active branch: answer B, not the abandoned answer A.
    assert_eq!(
        b.js(texts),
        json!(["u1", "a2", "b1", "l1", "c1", "x1", "n1"])
    );
    assert_eq!(
        b.js("return document.querySelector('h1').textContent"),
        json!("Rich session")
    );
    assert_eq!(
        b.js("return document.querySelector('button.copy').dataset.copy"),
        json!(format!(
            "cd /home/u/rich && pi --session {}",
            path.display()
        ))
    );
    assert_eq!(
        b.js("return document.querySelector('#n-tools').textContent"),
        json!("3")
    );
    // Raw HTML is text; Markdown is rendered.
    assert_eq!(
        b.js("const m = document.querySelector('#u1 .md'); return [m.textContent.trim(), m.querySelectorAll('b').length]"),
        json!(["Look at this <b>bold?</b> screenshot", 0])
    );
    assert_eq!(
        b.js("return document.querySelector('#a2 .md strong').textContent"),
        json!("B")
    );
    // Images: the small one drawn, the big one named.
    b.until("document.querySelector('#u1 img.thumb').naturalWidth === 1");
    assert_eq!(
        b.js("return document.querySelector('#u1 .image-note').textContent"),
        json!("image image/png, 2304 KB: not drawn")
    );
    // Tool calls: one row each, name and main argument; results inside.
    assert_eq!(
        b.js("return [...document.querySelectorAll('#a2 details.tool')].map(d => [d.dataset.tool, d.querySelector('.preview').textContent, d.classList.contains('error')])"),
        json!([["bash", "ls -la /tmp", false], ["edit", "src/x.rs", false], ["read", "/nope", true]])
    );
    assert_eq!(
        b.js("return [...document.querySelectorAll('#a2 pre.diff span')].map(s => [s.className, s.textContent])"),
        json!([["del", "-a\n"], ["add", "+b\n"]])
    );
    assert_eq!(
        b.js("return document.querySelectorAll('#r1, #r2, #r3').length"),
        json!(3),
        "results keep their anchors"
    );
    // Folding: thinking and tool output closed, a toggle for all.
    let open =
        "return [...document.querySelectorAll('details.thinking, details.tool')].map(d => d.open)";
    assert_eq!(b.js(open), json!([false, false, false, false, false]));
    b.click("#toggle-thinking");
    assert_eq!(b.js(open), json!([true, false, false, false, false]));
    assert!(b
        .js("return document.querySelector('#a2 details.thinking').innerText")
        .as_str()
        .unwrap()
        .contains("zqthought two"));
    b.click("#toggle-tools");
    assert_eq!(b.js(open), json!([true, true, true, true, true]));
    assert!(b
        .js("return document.querySelector('#a2 details.tool pre.result').innerText")
        .as_str()
        .unwrap()
        .contains("zqlisting total 0"));
    b.click("#toggle-thinking");
    assert_eq!(b.js(open), json!([false, true, true, true, true]));
    // Every branch, the abandoned one marked; then switch to it.
    b.click("#view-all");
    b.until("document.querySelector('#a1')");
    assert_eq!(
        b.js(texts),
        json!(["u1", "a1", "a2", "b1", "l1", "c1", "x1", "n1"])
    );
    assert_eq!(
        b.js("return [...document.querySelectorAll('article.entry .mark.abandoned')].map(m => m.closest('article').id)"),
        json!(["a1"])
    );
    b.click("a.branch[data-leaf='a1']");
    b.until("location.search === '?leaf=a1'");
    assert_eq!(b.js(texts), json!(["u1", "a1"]));
    assert!(b
        .js("return document.body.innerText")
        .as_str()
        .unwrap()
        .contains("answer A zqabandoned"));
    b.click("#view-active");
    b.until("location.search === ''");
    assert_eq!(
        b.js(texts),
        json!(["u1", "a2", "b1", "l1", "c1", "x1", "n1"])
    );
    assert_eq!(
        b.js("return document.querySelector('#l1').innerText.includes('label checkpoint on a2')"),
        json!(true)
    );
}

#[test]
fn browser_big_session_opens_windowed_and_scrolls_on() {
    let Some(b) = browser("browser_big_session_opens_windowed_and_scrolls_on") else {
        return;
    };
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(dir.join("2026-05-01_big00001.jsonl")).unwrap(),
    );
    writeln!(f, "{}", json!({"type":"session","version":3,"id":"big00001","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/home/u/big"})).unwrap();
    for i in 0..50_000u32 {
        let parent = if i == 0 {
            Value::Null
        } else {
            json!(format!("{:08x}", i - 1))
        };
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let content = if role == "user" {
            json!(format!("message {i}"))
        } else {
            json!([{"type":"text","text":format!("message {i}")}])
        };
        writeln!(f, "{}", json!({"type":"message","id":format!("{i:08x}"),"parentId":parent,"timestamp":"2026-05-01T10:00:01.000Z","message":{"role":role,"content":content,"timestamp":0}})).unwrap();
    }
    drop(f);
    s.build(&[&dir], &[]);
    let srv = Server::start(&s, &["--no-refresh"]);
    let page = srv.get("/session/big00001");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.body.matches("<article").count(),
        200,
        "one window, not the whole session"
    );
    b.goto(&format!("{}session/big00001", srv.url));
    let count = "document.querySelectorAll('article.entry').length";
    assert_eq!(b.js(&format!("return {count}")), json!(200));
    assert_eq!(
        b.js("return document.querySelector('article.entry:last-of-type').dataset.line"),
        json!("201")
    );
    b.js("window.scrollTo(0, document.body.scrollHeight); return 1");
    b.until(&format!("{count} === 400"));
    assert_eq!(
        b.js("return [...document.querySelectorAll('article.entry')].at(-1).dataset.line"),
        json!("401")
    );
    // Opened at a hit deep inside: the window around it, the entry the target.
    b.goto(&format!(
        "{}session/big00001?line=40002#{:08x}",
        srv.url, 40_000
    ));
    assert_eq!(
        b.until("document.querySelector(':target') && document.querySelector(':target').id"),
        json!(format!("{:08x}", 40_000))
    );
    assert_eq!(b.js(&format!("return {count}")), json!(200));
    assert_eq!(
        b.js("return document.querySelector('article.entry').dataset.line"),
        json!("39982")
    );
    assert!(b
        .js("return document.querySelector('a.earlier').textContent")
        .as_str()
        .unwrap()
        .starts_with("earlier entries (39980 before these)"));
}

/// Three sessions dated from today back: messages today (3), yesterday
/// (1), 5 days ago (1) and 120 days ago (1), in two directories, from two
/// models. Returns the first millisecond of today (UTC) plus an hour.
fn recent_sessions(dir: &Path) -> i64 {
    std::fs::create_dir_all(dir).unwrap();
    let day = 86_400_000i64;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let today = now - now.rem_euclid(day) + 3_600_000;
    let iso = pi_index::pi::time::format_millis;
    // (file id, cwd, [(days ago, role, model)])
    type Messages<'a> = &'a [(i64, &'a str, Option<&'a str>)];
    let sessions: [(&str, &str, Messages); 3] = [
        (
            "s1",
            "/home/u/a",
            &[
                (0, "user", None),
                (0, "assistant", Some("model-x")),
                (1, "user", None),
            ],
        ),
        (
            "s2",
            "/home/u/a",
            &[(0, "user", None), (5, "assistant", Some("model-y"))],
        ),
        ("s3", "/home/u/b", &[(120, "assistant", Some("model-x"))]),
    ];
    for (id, cwd, msgs) in sessions {
        let mut text = format!(
            "{}\n",
            json!({"type":"session","version":3,"id":id,"timestamp":iso(today - 200 * day),"cwd":cwd})
        );
        let mut parent = Value::Null;
        for (i, (ago, role, model)) in msgs.iter().enumerate() {
            let mid = format!("{id}m{i}");
            let mut m =
                json!({"role": role, "content": [{"type":"text","text":"hello"}], "timestamp": 0});
            if let Some(model) = model {
                m["provider"] = json!("p");
                m["model"] = json!(model);
            }
            text += &format!(
                "{}\n",
                json!({"type":"message","id":mid,"parentId":parent,"timestamp":iso(today - ago * day),"message":m})
            );
            parent = json!(mid);
        }
        std::fs::write(dir.join(format!("2026-01-01_{id}.jsonl")), text).unwrap();
    }
    today
}

#[test]
fn browser_stats_charts_have_the_right_bars() {
    let Some(b) = browser("browser_stats_charts_have_the_right_bars") else {
        return;
    };
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    let today = recent_sessions(&dir);
    let iso = pi_index::pi::time::format_millis;
    s.build(&[&dir], &[]);
    let srv = Server::start(&s, &["--no-refresh"]);
    b.goto(&format!("{}stats", srv.url));
    let bars = |chart: &str| {
        b.js(&format!("return [...document.querySelectorAll('#{chart} rect.bar')].map(r => [r.dataset.label, Number(r.dataset.value), Number(r.getAttribute('height'))])"))
    };
    let days = bars("chart-days");
    let days = days.as_array().unwrap();
    assert_eq!(days.len(), 90);
    let values: Vec<i64> = days.iter().map(|d| d[1].as_i64().unwrap()).collect();
    let mut want = vec![0; 90];
    want[89] = 3;
    want[88] = 1;
    want[84] = 1;
    assert_eq!(values, want);
    assert_eq!(days[89][0], json!(iso(today)[..10]));
    assert_eq!(days[89][2], json!(156));
    assert_eq!(days[88][2], json!(52));
    let rows = |chart: &str| {
        b.js(&format!("return [...document.querySelectorAll('#{chart} rect.bar')].map(r => [r.dataset.label, Number(r.dataset.value)])"))
    };
    assert_eq!(
        rows("chart-dirs"),
        json!([["/home/u/a", 2], ["/home/u/b", 1]])
    );
    assert_eq!(
        rows("chart-models"),
        json!([["p/model-x", 2], ["p/model-y", 1]])
    );
    assert_eq!(
        b.js("return document.querySelector('#n-messages').textContent"),
        json!("6")
    );
}

#[test]
fn browser_live_refresh_shows_new_messages_and_a_busy_index() {
    let Some(b) = browser("browser_live_refresh_shows_new_messages_and_a_busy_index") else {
        return;
    };
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("2026-05-01_live0001.jsonl");
    std::fs::write(
        &file,
        session_file(
            "live0001",
            "/home/u/live",
            &[("user", "first zqone"), ("assistant", "reply")],
        ),
    )
    .unwrap();
    s.build(&[&dir], &[]);
    let dir_arg = dir.to_string_lossy().into_owned();
    let srv = Server::start(&s, &[&dir_arg]);
    b.goto(&format!("{}session/live0001", srv.url));
    assert_eq!(
        b.js("return document.querySelectorAll('article.entry').length"),
        json!(2)
    );
    assert_eq!(
        b.js("return document.querySelector('#live').hidden"),
        json!(true)
    );
    let append = |id: &str, parent: &str, second: u32, text: &str| {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(crate::util::message(id, parent, second, "user", text).as_bytes())
            .unwrap();
    };
    append("m2", "\"m1\"", 3, "second zqtwo");
    b.until("!document.querySelector('#live').hidden");
    b.click("#live-reload");
    b.until("document.querySelectorAll('article.entry').length === 3");
    assert!(b
        .js("return document.querySelector('#m2').innerText")
        .as_str()
        .unwrap()
        .contains("second zqtwo"));
    // Another build holds the lock: the page says so, and shows what is indexed.
    let lock = WriterLock::take(&s.index());
    append("m3", "\"m2\"", 4, "third zqthree");
    assert_eq!(
        b.until("!document.querySelector('#index-note').hidden && document.querySelector('#index-note').textContent"),
        json!("another `pi-index build` is writing the index: answered from the last committed index, which may miss the newest messages")
    );
    let busy = srv.json("/api/search?q=zqthree");
    assert_eq!(busy["total"], 0);
    assert_eq!(busy["index"]["status"], "busy");
    drop(lock);
    b.until(
        "document.querySelector('#index-note').hidden && !document.querySelector('#live').hidden",
    );
    assert_eq!(srv.json("/api/search?q=zqthree")["total"], 1);
}

#[test]
fn browser_a_fork_links_to_its_parent_and_back() {
    let Some(b) = browser("browser_a_fork_links_to_its_parent_and_back") else {
        return;
    };
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let parent = dir.join("2026-05-01T10-00-00-000Z_par00001.jsonl");
    let body = session_file(
        "par00001",
        "/home/u/f",
        &[("user", "zqparent question"), ("assistant", "answer")],
    );
    std::fs::write(&parent, &body).unwrap();
    let parent = std::fs::canonicalize(parent).unwrap();
    // Pi's /fork: a new id, the parent's path in the header, its entries.
    let header = format!(
        "{}\n",
        json!({"type":"session","version":3,"id":"chi00001","timestamp":"2026-05-01T11:00:00.000Z","cwd":"/home/u/f","parentSession":parent.to_string_lossy()})
    );
    let entries: String = body.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(
        dir.join("2026-05-01T11-00-00-000Z_chi00001.jsonl"),
        header + &entries + &crate::util::message("m2", "\"m1\"", 9, "user", "zqchild follow-up"),
    )
    .unwrap();
    s.build(&[&dir], &[]);
    let srv = Server::start(&s, &["--no-refresh"]);
    // Every session: the fork nested under its parent.
    b.goto(&srv.url);
    assert_eq!(
        b.js("return [...document.querySelectorAll('ul.sessions > li')].map(li => [li.querySelector('a.session').textContent, [...li.querySelectorAll('ul.forks a.session')].map(a => a.textContent)])"),
        json!([["zqparent question", ["zqparent question"]]])
    );
    b.goto(&format!("{}session/chi00001", srv.url));
    assert_eq!(
        b.js("return document.querySelector('#forked-from a').getAttribute('href')"),
        json!("/session/par00001")
    );
    b.click("#forked-from a");
    b.until("location.pathname === '/session/par00001'");
    assert_eq!(
        b.js("return [...document.querySelectorAll('#forks a')].map(a => a.getAttribute('href'))"),
        json!(["/session/chi00001"])
    );
    b.click("#forks a");
    b.until("location.pathname === '/session/chi00001'");
    assert!(b
        .js("return document.body.innerText")
        .as_str()
        .unwrap()
        .contains("zqchild follow-up"));
}

/// The `href`s inside the element that starts at `marker` in `html`, up
/// to its closing `end`.
fn hrefs_in(html: &str, marker: &str, end: &str) -> Vec<String> {
    let Some(at) = html.find(marker) else {
        return Vec::new();
    };
    let part = &html[at..];
    let part = &part[..part.find(end).unwrap_or(part.len())];
    part.split("href=\"")
        .skip(1)
        .map(|h| h[..h.find('"').unwrap()].to_owned())
        .collect()
}

#[test]
fn serve_forks_are_the_index_families() {
    // The forks fixtures: an older fork whose header names no parent
    // (inferred from its first entries), a stated fork whose parent
    // moved (found by its id), a fork whose parent is not indexed.
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    copy_dir(&repo().join("fixtures/forks"), &dir);
    s.build(&[&dir], &[]);
    let parent = "f0a1b2c3-0000-4000-8000-000000000001";
    let inferred = "f0a1b2c3-0000-4000-8000-0000000000aa";
    let edited = "f0a1b2c3-0000-4000-8000-0000000000bb";
    let orphan = "f0a1b2c3-0000-4000-8000-0000000000cc";
    let srv = Server::start(&s, &["--no-refresh"]);
    let page = |id: &str| {
        let r = srv.get(&format!("/session/{id}"));
        assert_eq!(r.status, 200, "{id}");
        r.body
    };
    let link = |id: &str| format!("/session/{id}");
    for fork in [inferred, edited] {
        assert_eq!(
            hrefs_in(&page(fork), "id=\"forked-from\"", "</dd>"),
            [link(parent)],
            "{fork}"
        );
    }
    // Its forks, oldest first, as `sessions --json` lists them.
    assert_eq!(
        hrefs_in(&page(parent), "id=\"forks\"", "</dd>"),
        [link(inferred), link(edited)]
    );
    let row = srv.json(&format!("/api/session/{parent}"))["session"].clone();
    let forks: Vec<Value> = row["forks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["session"].clone())
        .collect();
    assert_eq!(forks, [json!(inferred), json!(edited)]);
    // A parent that is not indexed: named, not linked.
    let body = page(orphan);
    assert!(
        body.contains("2026-02-01T10-00-00-000Z_9999aaaa-0000-4000-8000-000000000009.jsonl (not in the index)"),
        "{body}"
    );
    assert!(hrefs_in(&body, "id=\"forked-from\"", "</dd>").is_empty());
    // Every session: the inferred fork nested under its parent (the
    // edited one is in another directory: listed there, marked a fork).
    let home = srv.get("/").body;
    let under_parent = hrefs_in(
        &home[home.find(&format!("href=\"{}\"", link(parent))).unwrap()..],
        "<ul class=\"forks\"",
        "</ul>",
    );
    assert_eq!(under_parent, [link(inferred)]);
    let b = home.find("/home/u/forks-b").unwrap();
    let section = &home[b..home[b..].find("</section>").unwrap() + b];
    assert!(section.contains(&link(edited)), "{section}");
    assert!(
        section.contains("<span class=\"mark\">fork</span>"),
        "{section}"
    );
}

/// Strings that run script wherever they are put into HTML unescaped.
const HOSTILE: [&str; 6] = [
    "<script>window.__pwned=1;alert(1)</script>",
    "<img src=x onerror=\"window.__pwned=2;alert(2)\">",
    "<svg onload=\"window.__pwned=3\"></svg>",
    "\"><img src=y onerror=window.__pwned=4>",
    "[click me](javascript:window.__pwned=5)",
    "'><iframe src=javascript:window.__pwned=6>",
];

#[test]
fn browser_hostile_corpus_runs_nothing_and_shows_the_text() {
    let Some(b) = browser("browser_hostile_corpus_runs_nothing_and_shows_the_text") else {
        return;
    };
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let all = HOSTILE.join(" ");
    let svg = "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIG9ubG9hZD0id2luZG93Ll9fcHduZWQ9NyI+PC9zdmc+";
    let lines = [
        json!({"type":"session","version":3,"id":"evil0001","timestamp":"2026-05-01T10:00:00.000Z","cwd":format!("/home/u/{}", HOSTILE[1])}),
        json!({"type":"session_info","id":"n0","parentId":null,"timestamp":"2026-05-01T10:00:00.500Z","name":format!("zqhostile {}", HOSTILE[0])}),
        json!({"type":"message","id":"u1","parentId":"n0","timestamp":"2026-05-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":format!("zqhostile {all}")},{"type":"image","data":svg,"mimeType":"image/svg+xml"},{"type":"image","data":"AAAA","mimeType":"image/png\" onerror=\"window.__pwned=8"}],"timestamp":0}}),
        json!({"type":"message","id":"a1\"><script>window.__pwned=9</script>","parentId":"u1","timestamp":"2026-05-01T10:00:02.000Z","message":{"role":"assistant","model":HOSTILE[2],"provider":"p","content":[{"type":"text","text":format!("zqhostile reply {all}")},{"type":"toolCall","id":"t1","name":HOSTILE[3],"arguments":{"command":HOSTILE[0],"path":HOSTILE[1]}}],"timestamp":0}}),
        json!({"type":"message","id":"r1","parentId":"a1\"><script>window.__pwned=9</script>","timestamp":"2026-05-01T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":HOSTILE[3],"content":[{"type":"text","text":all}],"details":{"diff":HOSTILE[2]},"isError":true,"timestamp":0}}),
        json!({"type":"label","id":"l1","parentId":"r1","timestamp":"2026-05-01T10:00:04.000Z","targetId":HOSTILE[3],"label":HOSTILE[1]}),
    ];
    // A file name that is markup too.
    let name = "2026-05-01_<svg onload=window.__pwned=10>.jsonl";
    std::fs::write(
        dir.join(name),
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    s.build(&[&dir], &[]);
    let srv = Server::start(&s, &["--no-refresh"]);
    let clean = |b: &Browser, page: &str| {
        assert_eq!(
            b.js("return typeof window.__pwned"),
            json!("undefined"),
            "{page}: script ran"
        );
        b.no_dialog();
        assert_eq!(b.js("return document.querySelectorAll('script:not([src]), iframe, img[onerror], svg[onload], [onload], [onerror]').length"), json!(0), "{page}");
        assert_eq!(
            b.js("return document.querySelectorAll('a[href^=\"javascript:\" i]').length"),
            json!(0),
            "{page}"
        );
    };
    b.goto(&srv.url);
    b.keys("#q", "zqhostile");
    b.until("document.querySelector('#results').dataset.query === 'zqhostile' && document.querySelector('a.hit')");
    clean(&b, "search");
    let shown = b.js("return document.body.innerText");
    let shown = shown.as_str().unwrap();
    assert!(
        shown.contains(&format!("zqhostile {}", HOSTILE[0])),
        "the name, literally: {shown}"
    );
    assert!(
        shown.contains(&format!("/home/u/{}", HOSTILE[1])),
        "the directory, literally"
    );
    // Every session listed, and the page of a hit.
    b.goto(&srv.url);
    clean(&b, "every session");
    b.goto(&format!("{}session/evil0001?branch=all", srv.url));
    b.click("#toggle-tools");
    b.click("#toggle-thinking");
    clean(&b, "session");
    // Every hostile text but the Markdown link is on the page as text.
    let literally = |b: &Browser, page: &str| -> String {
        let text = b.js("return document.body.innerText");
        let text = text.as_str().unwrap().to_owned();
        for h in HOSTILE.iter().filter(|h| !h.starts_with('[')) {
            assert!(text.contains(h), "{page}: shown literally: {h}\n{text}");
        }
        text
    };
    // Clicking everything that looks like a link runs nothing either.
    let click_links = |b: &Browser, page: &str| {
        b.js("document.querySelectorAll('#entries a').forEach(a => { if (!a.target) a.click(); }); return 1");
        clean(b, page);
    };
    let text = literally(&b, "session");
    // The javascript: link is its text alone.
    assert!(
        text.contains("zqhostile reply") && text.contains(" click me "),
        "{text}"
    );
    assert!(text.contains(name), "the file name, literally");
    assert_eq!(
        b.js("return [...document.querySelectorAll('.image-note')].map(n => n.textContent)"),
        json!([
            "image image/svg+xml, 0 KB: not drawn",
            "image image/png\" onerror=\"window.__pwned=8, 0 KB: not drawn"
        ])
    );
    click_links(&b, "session, links clicked");
    b.goto(&format!("{}stats", srv.url));
    clean(&b, "stats");
    assert!(
        b.js("return document.body.innerText")
            .as_str()
            .unwrap()
            .contains(HOSTILE[2]),
        "the model name, literally"
    );

    // The same corpus from the team database, pushed under a host name
    // that is markup too (`serve --db`).
    let Some(url) = crate::team::database("serve_db_hostile") else {
        return;
    };
    let host = HOSTILE[3];
    crate::util::pg::push_ok(&s, &url, host);
    drop(srv);
    let srv = Server::start(&s, &["--db", &url]);
    b.goto(&srv.url);
    clean(&b, "every session, --db");
    b.keys("#q", "zqhostile");
    b.until("document.querySelector('#results').dataset.query === 'zqhostile' && document.querySelector('a.hit')");
    clean(&b, "search, --db");
    let shown = b.js("return document.body.innerText");
    let shown = shown.as_str().unwrap();
    assert!(shown.contains(host), "the host, literally: {shown}");
    b.click("a.hit");
    b.until("location.pathname.startsWith('/session/')");
    clean(&b, "session, --db");
    literally(&b, "session, --db");
    click_links(&b, "session, links clicked, --db");
    b.goto(&format!("{}stats", srv.url));
    clean(&b, "stats, --db");
}

/// Not a check: the web view's screenshots (README.md, docs/web.md), taken with headless Chromium
/// over the search fixtures (`cargo test --test tests serve::screenshots
/// -- --ignored`, which writes docs/serve-*.png).
#[test]
#[ignore]
fn screenshots() {
    let Some(b) = browser("screenshots") else {
        return;
    };
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    copy_dir(&repo().join("fixtures/search"), &dir);
    rich_session(&dir.join("--home-u-rich--"));
    recent_sessions(&dir.join("--home-u-recent--"));
    // What the stats page charts: a small generated corpus whose
    // assistant messages record usage over weeks.
    let generated = Command::new("python3")
        .arg(repo().join("scripts/gen-corpus.py"))
        .args(["--size", "4MB", "--seed", "42", "--vocab", "real", "--out"])
        .arg(dir.join("generated"))
        .output()
        .unwrap();
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    s.build(&[&dir], &[]);
    let srv = Server::start(&s, &["--no-refresh"]);
    let docs = repo().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    b.goto(&srv.url);
    b.keys("#q", "tokio");
    b.until("document.querySelector('#results').dataset.query === 'tokio' && document.querySelector('a.hit')");
    b.screenshot(&docs.join("serve-search.png"));
    b.goto(&format!("{}session/rich0001", srv.url));
    b.click("#toggle-tools");
    b.screenshot(&docs.join("serve-session.png"));
    b.goto(&format!("{}stats", srv.url));
    b.screenshot(&docs.join("serve-stats.png"));
    b.js("document.querySelector('#chart-cost-days').scrollIntoView(); window.scrollBy(0, -60); return 0;");
    b.screenshot(&docs.join("serve-cost.png"));
}

/// Not a check: the browser half of the web view's benchmark, for the
/// lead to run on a release build and the 1 GB corpus index
/// (`PI_INDEX_BENCH_INDEX=IDX cargo test --release --test tests
/// serve::browser_latency -- --ignored --nocapture`): keystroke to
/// painted results on the search page (every prefix of each query typed,
/// an `input` event to the frame after the results are in place), and
/// the largest recent session's first screen (navigation start to the
/// first entry painted), medians and p99 from the page's own clock.
/// `PI_INDEX_BENCH_BIN=BIN` serves with another binary (to time two builds
/// one after the other in one run).
#[test]
#[ignore]
fn browser_latency() {
    let Some(index) = std::env::var_os("PI_INDEX_BENCH_INDEX") else {
        panic!("set PI_INDEX_BENCH_INDEX to an index (see the doc comment)");
    };
    let Some(b) = browser("browser_latency") else {
        return;
    };
    let s = Scratch::new();
    // PI_INDEX_BENCH_BIN: another build's binary, to time two side by side.
    let mut cmd = s.cmd();
    if let Some(bin) = std::env::var_os("PI_INDEX_BENCH_BIN") {
        let mut other = Command::new(bin);
        other.env("HOME", s.dir.path()).env("NO_COLOR", "1");
        cmd = other;
    }
    let mut child = cmd
        .args(["serve", "--no-refresh", "--port", "0", "--index"])
        .arg(&index)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let url = line
        .split("serving ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let stats = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
        (at(0.5), at(0.99), v.len())
    };
    b.goto(&url);
    let mut all = Vec::new();
    for q in [
        "error",
        "error handling",
        "connection pool timeout",
        "error role:user after:2026-02-01",
    ] {
        for _round in 0..5 {
            for n in 1..=q.len() {
                let ms = b.rt.block_on(b.c().execute_async(
                    "const [q, done] = arguments; const box = document.querySelector('#q'); const res = document.querySelector('#results');
                     const t0 = performance.now();
                     const seen = new MutationObserver(() => { if (res.dataset.query === q.trim()) { seen.disconnect(); requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0))); } });
                     seen.observe(res, {childList: true, subtree: true, attributes: true});
                     box.value = q; box.dispatchEvent(new Event('input'));",
                    vec![json!(&q[..n])],
                ));
                if let Ok(Value::Number(ms)) = ms {
                    all.push(ms.as_f64().unwrap());
                }
            }
        }
        println!("typed {q:?}");
    }
    let (median, p99, n) = stats(all);
    println!(
        "keystroke to painted results: median {median:.1} ms, p99 {p99:.1} ms over {n} keystrokes"
    );
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let r = http(
        port,
        "GET",
        "/api/sessions?limit=100",
        &format!("127.0.0.1:{port}"),
        &[],
    );
    let sessions: Value = serde_json::from_str(&r.body).unwrap();
    let big = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|s| s["messages"].as_u64())
        .unwrap()
        .clone();
    let mut first = Vec::new();
    for _ in 0..20 {
        b.goto(&format!(
            "{url}session/{}",
            big["session_id"].as_str().unwrap()
        ));
        let v = b.until("document.querySelector('article.entry') && performance.getEntriesByType('paint').length && performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd");
        first.push(v.as_f64().unwrap());
    }
    let (median, p99, n) = stats(first);
    println!("session of {} messages, first screen (navigation to DOMContentLoaded): median {median:.1} ms, p99 {p99:.1} ms over {n}", big["messages"]);
    let _ = child.kill();
    let _ = child.wait();
}

// ---- serve --db: the team database --------------------------------------

/// Three hosts push the sessions of [`crate::team::sessions_with`], each
/// with its planted word, into the database `name` of the team tests'
/// cluster: its URL and the pushing scratches (`None` without
/// PostgreSQL, said).
fn three_hosts(name: &str) -> Option<(String, Vec<Scratch>)> {
    let url = crate::team::database(name)?;
    let mut scratches = Vec::new();
    for (host, word) in TEAM.iter().zip(["zqalpha", "zqbravo", "zqcharlie"]) {
        let s = Scratch::new();
        let dir = crate::team::sessions_with(&s, word);
        s.build(&[&dir], &[]);
        crate::util::pg::push_ok(&s, &url, host);
        scratches.push(s);
    }
    Some((url, scratches))
}

const TEAM: [&str; 3] = ["alice@laptop", "bob@devbox", "ci@runner-7"];

/// What the command line prints with `--db URL`: one object per line.
fn cli_db(s: &Scratch, url: &str, args: &[&str]) -> Vec<Value> {
    let out = run(s.cmd().arg(args[0]).args(["--db", url]).args(&args[1..]));
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_lines(&out)
}

#[test]
fn serve_db_answers_with_the_cli_s_db_objects_each_with_its_host() {
    let Some((url, scratches)) = three_hosts("serve_db_api") else {
        return;
    };
    let s = &scratches[0];
    let srv = Server::start(s, &["--db", &url]);
    let database = url.trim_start_matches("postgres://");
    let search = |q: &str, args: &[&str]| {
        let mut a = vec!["search", "--json"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["--", q]);
        cli_db(s, &url, &a)
    };

    // Each host's planted word, with its host: the hits of `search --db`.
    for (host, word) in TEAM.iter().zip(["zqalpha", "zqbravo", "zqcharlie"]) {
        let found = srv.json(&format!("/api/search?q={word}"));
        let want = search(word, &[]);
        assert_eq!(want.len(), 2);
        assert!(want.iter().all(|h| h["host"] == *host));
        assert_eq!(found["hits"], json!(want), "{word}");
        assert_eq!(found["total"], 2);
        assert_eq!(found["more"], false);
        assert_eq!(found["database"], database);
        assert_eq!(found["warnings"], json!([]));
    }
    // Every host holds the fixture: `host:` keeps one; pages and orders
    // are the command line's.
    let bobs = srv.json("/api/search?q=notify%20host%3Abob%40devbox");
    let want = search("notify host:bob@devbox", &[]);
    assert!(!want.is_empty());
    assert_eq!(bobs["hits"], json!(want));
    let all = search("notify", &[]);
    assert_eq!(all.len(), 3 * want.len());
    let page = srv.json("/api/search?q=notify&sort=newest&limit=2&offset=1");
    assert_eq!(
        page["hits"],
        json!(search(
            "notify",
            &["--sort", "newest", "-n", "2", "--offset", "1"]
        ))
    );

    // Sessions: every host's, newest first, and one host's.
    let listed = srv.json("/api/sessions");
    assert_eq!(
        listed["sessions"],
        json!(cli_db(s, &url, &["sessions", "--json"]))
    );
    assert_eq!(listed["total"], 6);
    let bob = srv.json("/api/sessions?host=bob%40devbox&limit=1&offset=1");
    let want = cli_db(s, &url, &["sessions", "--json", "--host", "bob@devbox"]);
    assert_eq!(want.len(), 2);
    assert_eq!(bob["sessions"], json!(want[1..]));
    assert_eq!(bob["total"], 2);
    let found = srv.json("/api/sessions?q=zqcharlie");
    assert_eq!(
        found["sessions"],
        json!(cli_db(s, &url, &["sessions", "--json", "--", "zqcharlie"]))
    );
    assert_eq!(found["sessions"][0]["host"], "ci@runner-7");
    assert_eq!(found["more"], false);

    // A session by its id and host: its messages, the documents of
    // `show --db`, a page at a time.
    let id = "same-id-on-every-host";
    let show = |args: &[&str]| {
        let mut a = vec!["show", id, "--format", "json", "--host", "alice@laptop"];
        a.extend_from_slice(args);
        cli_db(s, &url, &a)
    };
    let one = srv.json(&format!("/api/session/{id}?host=alice%40laptop&branch=all"));
    assert_eq!(one["documents"], json!(show(&["--branch", "all"])));
    assert_eq!(one["total"], 2);
    assert_eq!(
        one["session"],
        cli_db(s, &url, &["sessions", "--json", "--host", "alice@laptop"])
            .into_iter()
            .find(|r| r["session_id"] == id)
            .unwrap()
    );
    let second = srv.json(&format!(
        "/api/session/{id}?host=alice%40laptop&offset=1&limit=1"
    ));
    assert_eq!(second["documents"], json!(show(&["--branch", "all"])[1..]));
    // The fixture's abandoned branch: only the active one by default.
    let sessions = cli_db(s, &url, &["sessions", "--json", "--host", "bob@devbox"]);
    let branched = sessions
        .iter()
        .find(|r| {
            r["path"]
                .as_str()
                .unwrap()
                .ends_with("branch-abandoned.jsonl")
        })
        .unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let shown = |branch: &str| {
        cli_db(
            s,
            &url,
            &[
                "show",
                &branched,
                "--format",
                "json",
                "--host",
                "bob@devbox",
                "--branch",
                branch,
            ],
        )
    };
    let active = srv.json(&format!("/api/session/{branched}?host=bob%40devbox"));
    assert_eq!(active["documents"], json!(shown("active")));
    let every = srv.json(&format!(
        "/api/session/{branched}?host=bob%40devbox&branch=all"
    ));
    assert_eq!(every["documents"], json!(shown("all")));
    assert!(shown("active").len() < shown("all").len());

    // What the database holds: each host's, and in all the sum of what
    // each host's index holds.
    let stats = srv.json("/api/stats");
    let local = |s: &Scratch| {
        let out = run(s.cmd().args(["stats", "--json", "--index"]).arg(s.index()));
        json_lines(&out).remove(0)
    };
    let locals: Vec<Value> = scratches.iter().map(local).collect();
    let sum = |k: &str| locals.iter().map(|l| l[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(stats["stats"]["sessions"], sum("sessions"));
    assert_eq!(stats["stats"]["messages"], sum("messages"));
    for role in ["user", "assistant"] {
        let n: u64 = locals
            .iter()
            .map(|l| l["messages_by_role"][role].as_u64().unwrap())
            .sum();
        assert_eq!(stats["stats"]["messages_by_role"][role], n, "{role}");
    }
    let hosts: Vec<(Value, Value, Value)> = stats["stats"]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].clone(),
                h["sessions"].clone(),
                h["messages"].clone(),
            )
        })
        .collect();
    let want: Vec<(Value, Value, Value)> = TEAM
        .iter()
        .zip(&locals)
        .map(|(h, l)| (json!(h), l["sessions"].clone(), l["messages"].clone()))
        .collect();
    assert_eq!(hosts, want);
    assert_eq!(stats["database"], database);

    // Errors say what to do, with their status.
    let bad = |path: &str, status: u16, error: &str| {
        let r = srv.get(path);
        assert_eq!(r.status, status, "{path}: {}", r.body);
        assert_eq!(
            serde_json::from_str::<Value>(&r.body).unwrap(),
            json!({"error": error}),
            "{path}"
        );
    };
    let said = run(s.cmd().args(["search", "--db", &url, "--", "role:robot"]));
    assert_eq!(said.status.code(), Some(2));
    let said = String::from_utf8_lossy(&said.stderr)
        .trim_end()
        .trim_start_matches("pi-index: error: ")
        .to_owned();
    bad("/api/search?q=role:robot", 400, &said);
    bad(
        &format!("/api/session/{id}"),
        400,
        "3 hosts pushed a session with the id \"same-id-on-every-host\" (alice@laptop, bob@devbox, ci@runner-7): choose one with host=NAME",
    );
    bad(
        &format!("/api/session/{id}?host=nobody"),
        404,
        "no pushed session has the id \"same-id-on-every-host\" on the host \"nobody\": search for it from the search page",
    );
    // A prefix is not an id.
    assert_eq!(
        srv.get("/api/session/same-id?host=bob%40devbox").status,
        404
    );
    let raw = srv.get(&format!("/session/{id}/raw?host=bob%40devbox"));
    assert_eq!(raw.status, 404);
    assert!(
        raw.body.contains("on the host that pushed it"),
        "{}",
        raw.body
    );
    // The rules of every request hold here too.
    let foreign = http(srv.port, "GET", "/api/search?q=notify", "evil.example", &[]);
    assert_eq!(foreign.status, 403);

    // The pages: each session under its host, a hit opens its host's
    // session at its entry, an id several hosts hold asks which.
    let home = srv.get("/");
    assert_eq!(home.status, 200);
    for host in TEAM {
        assert!(
            home.body
                .contains(&format!("<span class=\"host\">{host}</span>")),
            "{host}"
        );
    }
    assert!(home.body.contains(&format!("team database {database}")));
    let hit = srv.get("/?q=zqbravo");
    let hrefs: Vec<&str> = hit
        .body
        .split("class=\"hit\" href=\"")
        .skip(1)
        .map(|h| &h[..h.find('"').unwrap()])
        .collect();
    assert_eq!(
        hrefs,
        [
            "/session/same-id-on-every-host?host=bob%40devbox&amp;line=2#a1",
            "/session/same-id-on-every-host?host=bob%40devbox&amp;line=3#a2"
        ]
    );
    let which = srv.get(&format!("/session/{id}"));
    assert_eq!(which.status, 300);
    assert_eq!(
        hrefs_in(&which.body, "<ul class=\"hosts\">", "</ul>"),
        TEAM.map(|h| format!("/session/{id}?host={}", h.replace('@', "%40")))
    );
    let page = srv.get(&format!("/session/{id}?host=ci%40runner-7"));
    assert_eq!(page.status, 200);
    assert!(page
        .body
        .contains("<dd class=\"host\" id=\"host\">ci@runner-7</dd>"));
    assert!(page.body.contains("where is the zqcharlie config"));
    assert!(!page.body.contains("zqalpha"));
    let stats_page = srv.get("/stats");
    assert_eq!(stats_page.status, 200);
    assert!(
        stats_page.body.contains("<dd id=\"n-hosts\">3</dd>"),
        "{}",
        stats_page.body
    );
    // The hosts' usage, charted (tests/team_usage.rs holds the charts to
    // `usage --db`): each host's cost.
    assert!(!stats_page.body.contains("id=\"cost-none\""));
    let hosts = chart_bars(&stats_page.body, "chart-cost-hosts");
    assert_eq!(hosts.len(), 3, "{hosts:?}");
    assert!(hosts.iter().all(|(_, cost)| *cost > 0.0), "{hosts:?}");
    // A session's header says what it cost, as `usage --db` counts that
    // host's session; one that recorded no usage (this one) shows none.
    let rows = cli_db(
        &scratches[0],
        &url,
        &["usage", "session", "host:ci@runner-7", "--json"],
    );
    assert!(!rows.iter().any(|r| r["session_id"] == id), "{rows:?}");
    assert_eq!(header_cost(&page.body), None);
    assert!(!page.body.contains("<dt>cost</dt>"), "{}", page.body);
    let row = rows
        .iter()
        .find(|r| r["cost"].as_f64().unwrap() > 0.0)
        .unwrap_or_else(|| panic!("{rows:?}"));
    let costly = srv.get(&format!(
        "/session/{}?host=ci%40runner-7",
        row["session_id"].as_str().unwrap()
    ));
    assert_eq!(costly.status, 200);
    let (cost, own, tokens, _) =
        header_cost(&costly.body).unwrap_or_else(|| panic!("{}", costly.body));
    assert_eq!(
        (cost, own, tokens),
        (
            row["cost"].as_f64().unwrap(),
            row["own_cost"].as_f64().unwrap(),
            row["total_tokens"].as_u64().unwrap()
        )
    );

    // Two at once: a host pushes while the server runs; its next request
    // reads it (the database is read at each request).
    let late = Scratch::new();
    let dir = crate::team::sessions_with(&late, "zqdelta");
    late.build(&[&dir], &[]);
    crate::util::pg::push_ok(&late, &url, "dave@late");
    let found = srv.json("/api/search?q=zqdelta");
    assert_eq!(found["total"], 2);
    assert!(found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["host"] == "dave@late"));
    assert_eq!(srv.json("/api/sessions")["total"], 8);

    // A role that may only read serves the same (the connections are
    // read-only; nothing is written).
    let c = crate::team::cluster().unwrap();
    c.sql(
        "serve_db_api",
        "CREATE ROLE serve_reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO serve_reader",
    );
    let reader = Server::start(s, &["--db", &c.url_as("serve_reader", "serve_db_api")]);
    assert_eq!(
        reader.json("/api/search?q=zqbravo")["hits"],
        json!(search("zqbravo", &[]))
    );
    assert_eq!(reader.get("/stats").status, 200);
    assert_eq!(
        reader
            .get("/session/same-id-on-every-host?host=bob%40devbox")
            .status,
        200
    );
}

#[test]
fn serve_db_says_what_is_wrong_before_it_listens_and_survives_a_restart() {
    let Some(c) = crate::util::pg::Cluster::start() else {
        return;
    };
    let s = Scratch::new();
    let serve = |url: &str, extra: &[&str]| {
        run(s
            .cmd()
            .args(["serve", "--port", "0", "--db", url])
            .args(extra))
    };
    // No tables yet.
    let empty = c.create_db("empty");
    let out = serve(&empty, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("holds no pi-index tables yet: run `pi-index push` first"),
        "{err}"
    );
    // Nothing listening there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = serve(&format!("postgres://postgres@127.0.0.1:{closed}/x"), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot connect to the database at"), "{err}");
    assert!(err.contains("is the server running there"), "{err}");
    // The database is not the local index: its flags are refused.
    let out = serve(&empty, &["--no-refresh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));

    // The server stops and comes back: the request in between says so
    // (503), the one after is answered on a new connection.
    let url = c.create_db("team");
    let dir = crate::team::sessions_with(&s, "zqecho");
    s.build(&[&dir], &[]);
    crate::util::pg::push_ok(&s, &url, "erin@box");
    let srv = Server::start(&s, &["--db", &url]);
    assert_eq!(srv.json("/api/search?q=zqecho")["total"], 2);
    c.stop();
    let r = srv.get("/api/search?q=zqecho");
    assert_eq!(r.status, 503, "{}", r.body);
    let error = serde_json::from_str::<Value>(&r.body).unwrap()["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        error.contains("cannot connect to the database at"),
        "{error}"
    );
    c.restart();
    assert_eq!(srv.json("/api/search?q=zqecho")["total"], 2);
    // A restart between two requests: the idle connection the server
    // closed is replaced, and the request answered.
    c.stop();
    c.restart();
    assert_eq!(srv.json("/api/search?q=zqecho")["total"], 2);
    assert_eq!(srv.get("/").status, 200);
}

#[test]
fn browser_db_search_shows_each_host_opens_its_session_and_charts_the_hosts() {
    let Some(b) =
        browser("browser_db_search_shows_each_host_opens_its_session_and_charts_the_hosts")
    else {
        return;
    };
    let Some((url, scratches)) = three_hosts("serve_db_browser") else {
        return;
    };
    let srv = Server::start(&scratches[0], &["--db", &url]);
    b.goto(&srv.url);
    assert_eq!(
        b.js("return [...document.querySelectorAll('section.directory h2 .host')].map(h => h.textContent).sort()"),
        json!(TEAM)
    );
    b.keys("#q", "zqbravo");
    b.until("document.querySelector('#results').dataset.query === 'zqbravo' && document.querySelector('a.hit')");
    assert_eq!(
        b.js(
            "return [...document.querySelectorAll('.session-label .host')].map(h => h.textContent)"
        ),
        json!(["bob@devbox"])
    );
    assert_eq!(
        b.js("return [...document.querySelectorAll('a.hit')].map(a => [a.querySelector('.role').textContent, a.querySelector('.snippet').innerHTML])"),
        json!([
            ["user", "where is the <mark>zqbravo</mark> config"],
            ["assistant", "the <mark>zqbravo</mark> config is in etc"]
        ])
    );
    // Keys: down selects the first hit, Enter opens it, on its entry.
    b.keys("#q", DOWN);
    b.until("document.querySelector('a.hit.selected')");
    b.keys("#q", ENTER);
    b.until("location.pathname.startsWith('/session/')");
    assert_eq!(
        b.until("document.querySelector(':target') && document.querySelector(':target').id"),
        json!("a1")
    );
    assert_eq!(
        b.js("return [document.querySelector('#host').textContent, document.querySelector(':target .md').textContent.trim(), getComputedStyle(document.querySelector(':target')).outlineStyle]"),
        json!(["bob@devbox", "where is the zqbravo config", "solid"])
    );
    b.back();
    b.until("location.pathname === '/' && document.querySelector('#q').value === 'zqbravo' && document.querySelector('a.hit')");

    // The stats page: each host's sessions as a bar.
    b.goto(&format!("{}stats", srv.url));
    assert_eq!(
        b.js("return [...document.querySelectorAll('#chart-hosts rect.bar')].map(r => [r.dataset.label, Number(r.dataset.value)])"),
        json!([["alice@laptop", 2], ["bob@devbox", 2], ["ci@runner-7", 2]])
    );
    assert_eq!(
        b.js(
            "return [...document.querySelectorAll('table.hosts td.host')].map(t => t.textContent)"
        ),
        json!(TEAM)
    );
}

#[test]
fn serve_says_which_agent_wrote_a_session_and_resumes_it_there() {
    // An Oh My Pi session (a title slot before its header) beside a Pi one.
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let omp = "0198c0de-7a11-7000-8000-0000000000a1";
    std::fs::copy(
        repo().join("fixtures/sessions/-proj/2026-07-01T10-00-00-000Z_0198c0de-7a11-7000-8000-0000000000a1.jsonl"),
        dir.join("omp.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        repo().join("fixtures/sessions/branch-abandoned.jsonl"),
        dir.join("pi.jsonl"),
    )
    .unwrap();
    s.build(&[&dir], &[]);
    let srv = Server::start(&s, &["--no-refresh"]);
    // The API's hits are the CLI's, the agent in each.
    let found = srv.json("/api/search?q=zqompuser");
    assert_eq!(found["hits"], json!(s.search_json("zqompuser", &[])));
    assert_eq!(found["hits"][0]["agent"], "omp");
    // The results say it, after the session's name.
    let r = srv.get("/?q=zqompuser");
    assert_eq!(r.status, 200);
    assert!(
        r.body.contains(
            "<span class=\"mark agent\" title=\"the agent that wrote the session\">Oh My Pi</span>"
        ),
        "{}",
        r.body
    );
    // Its page: the agent, the command that resumes it in omp, and its
    // entries from the line after the header (no slot, no header drawn).
    let page = srv.get(&format!("/session/{omp}"));
    assert_eq!(page.status, 200);
    let file = std::fs::canonicalize(dir.join("omp.jsonl")).unwrap();
    for want in [
        "<dd class=\"agent\">Oh My Pi</dd>".to_owned(),
        format!("cd /home/u/proj &amp;&amp; omp --resume {}", file.display()),
        "Resume in Oh My Pi".to_owned(),
        "id=\"a1000003\"".to_owned(),
        "data-line=\"3\"".to_owned(),
    ] {
        assert!(page.body.contains(&want), "{want}: {}", page.body);
    }
    assert!(!page.body.contains("data-line=\"2\""), "{}", page.body);
    // A Pi session's page still resumes in pi.
    let pi = srv.get("/session/4f8a2b6c-0d4e-4f8a-ab6c-0d4e8f2a6b0c");
    assert!(pi.body.contains("&amp;&amp; pi --session "), "{}", pi.body);
    assert!(
        pi.body.contains("<dd class=\"agent\">Pi</dd>"),
        "{}",
        pi.body
    );
}

/// The bars of the chart `id` of a page: each bar's label and value.
pub fn chart_bars(body: &str, id: &str) -> Vec<(String, f64)> {
    let start = body
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no {id}"));
    let end = body[start..].find("</figure>").unwrap() + start;
    body[start..end]
        .split("<rect class=\"bar\"")
        .skip(1)
        .map(|r| {
            let attr = |name: &str| {
                let at = r.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                r[at..at + r[at..].find('"').unwrap()].to_owned()
            };
            (attr("data-label"), attr("data-value").parse().unwrap())
        })
        .collect()
}

/// The stats page charts what Pi cost as `pi-index usage` counts it:
/// cost and tokens per day over the 90 days to the last that spent
/// (the fixtures' sessions are months old), cost per model and per
/// project.
#[test]
fn serve_stats_charts_what_pi_cost_as_usage_counts_it() {
    let s = Scratch::new();
    s.build(&[&repo().join("fixtures/usage")], &[]);
    let usage = |group: &str| -> Vec<Value> {
        let out = crate::util::run(
            s.cmd()
                .args(["usage", group, "--json", "--timezone", "UTC", "--index"])
                .arg(s.index()),
        );
        assert!(out.status.success());
        crate::util::json_lines(&out)
    };
    let srv = Server::start(&s, &["--no-refresh"]);
    let page = srv.get("/stats");
    assert_eq!(page.status, 200);
    let days = chart_bars(&page.body, "chart-cost-days");
    assert_eq!(days.len(), 90);
    let daily = usage("daily");
    let last = daily.last().unwrap()["period"].as_str().unwrap();
    assert_eq!(days[89].0, last);
    // Every day that spent, at its cost; every other day nothing.
    let mut spent = 0;
    for (label, value) in &days {
        match daily.iter().find(|d| d["period"] == label.as_str()) {
            Some(d) => {
                spent += 1;
                assert!(
                    (d["cost"].as_f64().unwrap() - value).abs() < 1e-9,
                    "{label}"
                );
            }
            None => assert_eq!(*value, 0.0, "{label}"),
        }
    }
    assert!(spent >= 3, "{days:?}");
    let tokens = chart_bars(&page.body, "chart-tokens-days");
    let d = daily.iter().find(|d| d["period"] == last).unwrap();
    assert_eq!(tokens[89].1, d["total_tokens"].as_f64().unwrap());
    for (chart, group, key) in [
        ("chart-cost-models", "model", "model"),
        ("chart-cost-projects", "project", "project"),
    ] {
        let bars = chart_bars(&page.body, chart);
        let rows = usage(group);
        assert_eq!(bars.len(), rows.len().min(10), "{chart}");
        for ((label, value), row) in bars.iter().zip(&rows) {
            assert_eq!(label, row[key].as_str().unwrap());
            assert!((row["cost"].as_f64().unwrap() - value).abs() < 1e-9);
        }
    }
}

/// The `cost` entry of a session page's header: its `data-cost`,
/// `data-own-cost` and `data-tokens` (each as written, to the last bit),
/// and its text; `None` when it has none.
fn header_cost(body: &str) -> Option<(f64, f64, u64, String)> {
    let start = body.find("<dd id=\"cost\"")?;
    let dd = &body[start..start + body[start..].find("</dd>").unwrap()];
    let attr = |name: &str| -> &str {
        let at = dd.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        &dd[at..at + dd[at..].find('"').unwrap()]
    };
    // The text, tags dropped.
    let mut text = String::new();
    let mut inside = false;
    for c in dd[dd.find('>').unwrap() + 1..].chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => text.push(c),
            _ => {}
        }
    }
    Some((
        attr("data-cost").parse().unwrap(),
        attr("data-own-cost").parse().unwrap(),
        attr("data-tokens").parse().unwrap(),
        text,
    ))
}

/// The session page's header says what the session cost as `pi-index
/// usage session` counts it: its file's total and tokens (what Pi's
/// `/session` shows), and for a fork what it spent beyond the entries it
/// copied from its parent; nothing for a session that recorded no usage.
/// Files of one session id (a backup) are counted as the report counts
/// them.
#[test]
fn serve_session_page_says_what_the_session_cost() {
    let usage_of = |s: &Scratch| -> Vec<Value> {
        let out = run(s
            .cmd()
            .args(["usage", "session", "--json", "--index"])
            .arg(s.index()));
        assert!(out.status.success());
        json_lines(&out)
    };
    let s = Scratch::new();
    s.build(&[&repo().join("fixtures/usage-forks")], &[]);
    let usage = usage_of(&s);
    let srv = Server::start(&s, &["--no-refresh"]);
    let id = |n: &str| format!("0198d000-0000-7000-8000-000000000{n}");
    let page = |n: &str| {
        let r = srv.get(&format!("/session/{}", id(n)));
        assert_eq!(r.status, 200, "{n}");
        r.body
    };
    for (n, text) in [
        ("101", "$0.48 · 372,000 tokens"),
        (
            "102",
            "$0.24 · 144,000 tokens · $0.06 spent beyond the entries copied into it",
        ),
        ("104", "$0.00 · 5,500 tokens"),
    ] {
        let row = usage.iter().find(|u| u["session_id"] == id(n)).unwrap();
        let (cost, own, tokens, shown) =
            header_cost(&page(n)).unwrap_or_else(|| panic!("{n}: no cost"));
        assert_eq!(
            (cost, own, tokens, shown.as_str()),
            (
                row["cost"].as_f64().unwrap(),
                row["own_cost"].as_f64().unwrap(),
                row["total_tokens"].as_u64().unwrap(),
                text
            ),
            "{n}"
        );
    }
    // The fork's own spending, as its own element too.
    assert!(page("102").contains("<span id=\"own-cost\">$0.06</span>"));
    // A question never answered: no cost at all, not a zero.
    let none = page("105");
    assert!(none.contains("A question never answered zqcostnone"));
    assert!(none.contains("<dt>messages</dt>"), "{none}");
    assert_eq!(header_cost(&none), None);
    assert!(!none.contains("<dt>cost</dt>"), "{none}");
    drop(srv);

    // Two copies of one version 1 session (no entry ids: no family
    // joins them, their id does): one spent, the other nothing again. The page of each (the newest file of
    // the id is shown: first the one whose path sorts first, then the
    // backup, once it is appended to) shows what `usage session` gives
    // that file.
    const V1: &str = "0198d000-0000-7000-8000-0000000000b4";
    let b = Scratch::new();
    let (a, backup) = (b.dir.path().join("a"), b.dir.path().join("backup"));
    for d in [&a, &backup] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::copy(
            repo().join("fixtures/usage/usage-v1.jsonl"),
            d.join("v1.jsonl"),
        )
        .unwrap();
    }
    let mut owns = Vec::new();
    for round in 0..2 {
        if round == 1 {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(backup.join("v1.jsonl"))
                .unwrap();
            writeln!(
                f,
                r#"{{"type":"message","timestamp":"2025-10-01T10:00:00.000Z","message":{{"role":"user","content":"and then?","timestamp":1759312800000}}}}"#
            )
            .unwrap();
        }
        b.build(&[&a, &backup], &[]);
        let usage = usage_of(&b);
        assert_eq!(usage.len(), 2);
        let srv = Server::start(&b, &["--no-refresh"]);
        let path = srv.json(&format!("/api/session/{V1}"))["session"]["path"].clone();
        let want = [&a, &backup][round].join("v1.jsonl");
        assert_eq!(path, want.to_str().unwrap(), "{round}");
        let row = usage.iter().find(|u| u["path"] == path).unwrap();
        let r = srv.get(&format!("/session/{V1}"));
        let (cost, own, tokens, _) = header_cost(&r.body).unwrap();
        assert_eq!(
            (cost, own, tokens),
            (
                row["cost"].as_f64().unwrap(),
                row["own_cost"].as_f64().unwrap(),
                row["total_tokens"].as_u64().unwrap()
            ),
            "{round}"
        );
        assert_eq!(cost, 0.0036);
        owns.push(own);
    }
    owns.sort_by(f64::total_cmp);
    assert_eq!(owns, [0.0, 0.0036]);
}
