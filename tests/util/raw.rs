//! `pi-index mcp` over stdio as a raw JSON-RPC conversation, for the
//! tests that need no MCP client library (`tests/mcp_limits.rs`, and
//! `tests/failpoints.rs`, a test binary of its own).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::Scratch;

/// `pi-index mcp` over stdio, written to and read line by line.
pub struct Raw {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Replies read while waiting for another.
    pub unread: Vec<Value>,
}

impl Raw {
    pub fn start(s: &Scratch, args: &[String], env: &[(&str, &Path)]) -> Raw {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi-index"));
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

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// A tool call with `id`.
    pub fn call(&mut self, id: u64, tool: &str, args: Value) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": tool, "arguments": args}})
            .to_string(),
        );
    }

    /// The reply whose id is `id` (null: the next reply without one).
    pub fn reply(&mut self, id: &Value) -> Value {
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
    pub fn close(&mut self) -> std::process::ExitStatus {
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
