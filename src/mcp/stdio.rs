//! The stdio transport: JSON-RPC messages, one per line, on stdin and
//! stdout, with every line answered.
//!
//! rmcp's own line transport drops a line that is not JSON, a line over
//! its limit (16 MiB, read whole first), and the calls still running when
//! stdin closes (after 5 s), each without a reply. This one, in front of
//! the same rmcp service:
//!
//! - reads a line in bounded memory: past [`MAX_MESSAGE_BYTES`] the rest
//!   of it is skipped unread and the reply says so;
//! - answers every line that is not a message ([`super::message`]:
//!   `-32700`, `-32600`, `-32602`) and reads on;
//! - at end of input, reports the end to rmcp only once every request
//!   read has been answered (or cancelled by the client), so the calls in
//!   flight are answered before the process exits.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use rmcp::ServiceExt;

use super::message::{self, MAX_MESSAGE_BYTES};
use super::server::{runtime, ServeError, Server};
use crate::live::Served;

/// What the transport owes the client: requests read and not yet
/// answered, and error replies being written.
#[derive(Default)]
struct Owed {
    requests: HashSet<RequestId>,
    replies: usize,
}

struct Shared<W> {
    out: tokio::sync::Mutex<W>,
    owed: Mutex<Owed>,
    settled: tokio::sync::Notify,
}

impl<W: AsyncWrite + Unpin> Shared<W> {
    async fn write_line(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut out = self.out.lock().await;
        out.write_all(bytes).await?;
        out.write_all(b"\n").await?;
        out.flush().await
    }

    fn owed(&self) -> std::sync::MutexGuard<'_, Owed> {
        self.owed.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn settle(&self, f: impl FnOnce(&mut Owed)) {
        f(&mut self.owed());
        self.settled.notify_waiters();
    }
}

/// The transport over `read` and `write` (stdin and stdout).
pub struct Stdio<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Bytes of the current line seen so far (kept, or skipped).
    seen: usize,
    eof: bool,
    shared: Arc<Shared<W>>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Stdio<R, W> {
    /// A transport reading messages from `read` and writing to `write`.
    pub fn new(read: R, write: W) -> Self {
        Stdio {
            read: BufReader::new(read),
            line: Vec::new(),
            seen: 0,
            eof: false,
            shared: Arc::new(Shared {
                out: tokio::sync::Mutex::new(write),
                owed: Mutex::new(Owed::default()),
                settled: tokio::sync::Notify::new(),
            }),
        }
    }
}

/// One line read, in bounded memory.
enum Line {
    /// A whole line is in the buffer.
    Whole,
    /// A line of this many bytes, over the limit, was skipped.
    TooLong(usize),
    /// End of input (an unterminated last line is read as a line).
    Eof,
}

/// Read the next line into `line`, keeping at most [`MAX_MESSAGE_BYTES`]
/// of it. Cancel safe: what was read stays in `line` and `seen`, and the
/// next call goes on from there.
async fn read_line<B: AsyncBufRead + Unpin>(
    read: &mut B,
    line: &mut Vec<u8>,
    seen: &mut usize,
) -> std::io::Result<Line> {
    loop {
        let buf = read.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match *seen {
                0 => Line::Eof,
                n if n > MAX_MESSAGE_BYTES => {
                    *seen = 0;
                    Line::TooLong(n)
                }
                _ => {
                    *seen = 0;
                    Line::Whole
                }
            });
        }
        let (take, end) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let body = if end { &buf[..take - 1] } else { buf };
        if *seen + body.len() <= MAX_MESSAGE_BYTES {
            line.extend_from_slice(body);
        } else {
            line.clear();
        }
        *seen += body.len();
        read.consume(take);
        if end {
            let n = std::mem::take(seen);
            return Ok(if n > MAX_MESSAGE_BYTES {
                Line::TooLong(n)
            } else {
                Line::Whole
            });
        }
    }
}

impl<R, W> Stdio<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Write an error reply without holding up the reading: replies go
    /// out as soon as stdout takes them, and end of input waits for them.
    fn reply(&self, reply: serde_json::Value) {
        let shared = self.shared.clone();
        shared.owed().replies += 1;
        tokio::spawn(async move {
            let _ = shared.write_line(reply.to_string().as_bytes()).await;
            shared.settle(|o| o.replies -= 1);
        });
    }

    /// At end of input: wait until every request read was answered.
    async fn drain(shared: Arc<Shared<W>>) {
        loop {
            let settled = shared.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            {
                let owed = shared.owed();
                if owed.requests.is_empty() && owed.replies == 0 {
                    return;
                }
            }
            settled.await;
        }
    }
}

impl<R, W> Transport<RoleServer> for Stdio<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let shared = self.shared.clone();
        async move {
            let answered = match &item {
                JsonRpcMessage::Response(r) => Some(r.id.clone()),
                JsonRpcMessage::Error(e) => e.id.clone(),
                _ => None,
            };
            let json = serde_json::to_vec(&item).map_err(std::io::Error::other);
            let written = match json {
                Ok(json) => shared.write_line(&json).await,
                Err(e) => Err(e),
            };
            if let Some(id) = answered {
                shared.settle(|o| {
                    o.requests.remove(&id);
                });
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.eof {
                Self::drain(self.shared.clone()).await;
                return None;
            }
            match read_line(&mut self.read, &mut self.line, &mut self.seen).await {
                Ok(Line::Eof) | Err(_) => {
                    self.eof = true;
                    continue;
                }
                Ok(Line::TooLong(n)) => {
                    self.line.clear();
                    self.reply(message::too_long(Some(n)));
                    continue;
                }
                Ok(Line::Whole) => {}
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\r").unwrap_or(&line);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match message::parse(text) {
                Ok(m) => {
                    self.track(&m);
                    return Some(m);
                }
                Err(Some(reply)) => self.reply(reply),
                Err(None) => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.shared.out.lock().await.flush().await
    }
}

impl<R, W> Stdio<R, W> {
    /// Note a request read (it is owed an answer), or a cancellation (the
    /// cancelled request is owed none: rmcp drops its answer).
    fn track(&self, m: &ClientJsonRpcMessage) {
        let mut owed = self.shared.owed.lock().unwrap_or_else(|p| p.into_inner());
        match m {
            JsonRpcMessage::Request(r) => {
                owed.requests.insert(r.id.clone());
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification {
                    if let Some(id) = &c.params.request_id {
                        owed.requests.remove(id);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Serve MCP over stdin and stdout until the client closes stdin, every
/// line answered ([`Stdio`]); the calls still running then are answered
/// before this returns. Nothing else is written to stdout.
pub async fn serve_stdio(served: Served) -> Result<(), ServeError> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    let running = Server::new(served)
        .serve(Stdio::new(read, write))
        .await
        .map_err(|e| ServeError(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError(e.to_string()))?;
    Ok(())
}

/// Serve MCP over stdio on a runtime of our own; returns when the client
/// closes stdin.
pub fn run_stdio(served: Served) -> Result<(), ServeError> {
    let rt = runtime()?;
    let result = rt.block_on(serve_stdio(served));
    // A refresh still running when the client left is not waited for: an
    // interrupted build leaves the last committed index.
    rt.shutdown_timeout(std::time::Duration::from_millis(100));
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_whole_or_skipped_past_the_limit() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(lines());
    }

    async fn lines() {
        let long = vec![b'x'; MAX_MESSAGE_BYTES + 10];
        let mut input = Vec::new();
        input.extend_from_slice(b"one\n");
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\ntwo\nlast");
        let mut r = BufReader::with_capacity(4096, &input[..]);
        let (mut line, mut seen) = (Vec::new(), 0);
        let mut got = Vec::new();
        loop {
            match read_line(&mut r, &mut line, &mut seen).await.unwrap() {
                Line::Eof => break,
                Line::TooLong(n) => got.push(format!("too long {n}")),
                Line::Whole => got.push(String::from_utf8(std::mem::take(&mut line)).unwrap()),
            }
        }
        assert_eq!(
            got,
            [
                "one",
                &format!("too long {}", MAX_MESSAGE_BYTES + 10),
                "two",
                "last"
            ]
        );
    }
}
