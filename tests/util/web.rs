//! The web view's test harness: a running `pi-index serve`, raw HTTP/1.1
//! requests, and headless Chromium through chromedriver (WebDriver, by
//! fantoccini). Shared by tests/serve.rs and tests/serve_hostile.rs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use serde_json::{json, Value};

use super::{cannot_run, Scratch};

/// How long an outcome is waited for before a test fails.
pub const DEADLINE: Duration = Duration::from_secs(30);
/// A running `pi-index serve --port 0`, stopped when dropped.
pub struct Server {
    pub child: Child,
    pub port: u16,
    pub url: String,
}

impl Server {
    pub fn start(s: &Scratch, args: &[&str]) -> Server {
        let mut child = s
            .cmd()
            .arg("serve")
            .arg("--index")
            .arg(s.index())
            .args(["--port", "0"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start pi-index serve");
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut said = String::new();
        let url = loop {
            let mut line = String::new();
            if err.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = child.kill();
                panic!("serve exited before printing its URL: {said}");
            }
            said += &line;
            if let Some(rest) = line.split("serving ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        // Keep reading stderr so the server never blocks on it.
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = err.read_to_string(&mut sink);
        });
        let port = url
            .trim_start_matches("http://127.0.0.1:")
            .split('/')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("a loopback URL: {url}"));
        Server { child, port, url }
    }

    /// `GET path` with these extra header lines.
    pub fn get_with(&self, path: &str, headers: &[&str]) -> Response {
        http(
            self.port,
            "GET",
            path,
            &format!("127.0.0.1:{}", self.port),
            headers,
        )
    }

    pub fn get(&self, path: &str) -> Response {
        self.get_with(path, &[])
    }

    /// `GET path` answered 200 with JSON.
    pub fn json(&self, path: &str) -> Value {
        let r = self.get(path);
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        serde_json::from_str(&r.body).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request on its own connection.
pub fn http(port: u16, method: &str, path: &str, host: &str, headers: &[&str]) -> Response {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for h in headers {
        req += h;
        req += "\r\n";
    }
    req += "\r\n";
    c.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v == "chunked");
    if chunked {
        let mut out = Vec::new();
        let mut at = 0;
        loop {
            let end = at + body[at..].windows(2).position(|w| w == b"\r\n").unwrap();
            let n = usize::from_str_radix(std::str::from_utf8(&body[at..end]).unwrap().trim(), 16)
                .unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&body[end + 2..end + 2 + n]);
            at = end + 2 + n + 2;
        }
        body = out;
    }
    Response {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// Headless Chromium through its own chromedriver, closed when dropped.
pub struct Browser {
    pub rt: tokio::runtime::Runtime,
    pub client: Option<Client>,
    pub driver: Child,
    pub _profile: tempfile::TempDir,
}

pub fn on_path(bin: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
}

/// A browser, or `None` (said; a failure under CI) without Chromium.
pub fn browser(test: &str) -> Option<Browser> {
    if !on_path("chromium") || !on_path("chromedriver") {
        cannot_run(&format!(
            "{test}: needs chromium and chromedriver on PATH (Debian: apt-get install chromium chromium-driver)"
        ));
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let driver = std::process::Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < DEADLINE, "chromedriver did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    let profile = tempfile::tempdir().unwrap();
    let caps = json!({
        "goog:chromeOptions": {
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--window-size=1200,900",
                format!("--user-data-dir={}", profile.path().display()),
            ]
        }
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = rt
        .block_on(
            fantoccini::ClientBuilder::new(
                hyper_util::client::legacy::connect::HttpConnector::new(),
            )
            .capabilities(caps.as_object().unwrap().clone())
            .connect(&format!("http://127.0.0.1:{port}")),
        )
        .expect("a WebDriver session in Chromium");
    Some(Browser {
        rt,
        client: Some(client),
        driver,
        _profile: profile,
    })
}

impl Browser {
    pub fn c(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    pub fn goto(&self, url: &str) {
        self.rt.block_on(self.c().goto(url)).unwrap();
    }

    /// Run `script` (a function body) in the page and return its value.
    pub fn js(&self, script: &str) -> Value {
        self.rt
            .block_on(self.c().execute(script, vec![]))
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }

    /// Wait until `expr` is truthy in the page; its value.
    pub fn until(&self, expr: &str) -> Value {
        let start = Instant::now();
        loop {
            let v = self
                .rt
                .block_on(self.c().execute(&format!("return ({expr});"), vec![]))
                .unwrap_or(Value::Null);
            if !matches!(v, Value::Null | Value::Bool(false)) && v != json!(0) && v != json!("") {
                return v;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "never true: {expr}\npage: {}",
                self.js("return document.body.innerText")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn click(&self, css: &str) {
        self.rt
            .block_on(async { self.c().find(Locator::Css(css)).await?.click().await })
            .unwrap_or_else(|e| panic!("click {css}: {e}"));
    }

    pub fn keys(&self, css: &str, text: &str) {
        self.rt
            .block_on(async {
                self.c()
                    .find(Locator::Css(css))
                    .await?
                    .send_keys(text)
                    .await
            })
            .unwrap_or_else(|e| panic!("keys into {css}: {e}"));
    }

    pub fn back(&self) {
        self.rt.block_on(self.c().back()).unwrap();
    }

    pub fn url(&self) -> String {
        self.rt
            .block_on(self.c().current_url())
            .unwrap()
            .to_string()
    }

    /// No dialog is open (an `alert` from injected script would be).
    pub fn no_dialog(&self) {
        match self.rt.block_on(self.c().get_alert_text()) {
            Err(e) if e.is_no_such_alert() => {}
            other => panic!("a dialog is open: {other:?}"),
        }
    }

    pub fn screenshot(&self, to: &Path) {
        let png = self.rt.block_on(self.c().screenshot()).unwrap();
        std::fs::write(to, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            let _ = self.rt.block_on(c.close());
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
