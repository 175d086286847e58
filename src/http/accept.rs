//! Serving HTTP/1 on a listener with every connection bounded: the one
//! accept loop of the web view ([`crate::serve`]) and the MCP server's
//! HTTP transport ([`crate::mcp::http`]), each an axum router.
//!
//! A server on a person's machine is reachable by any local program and,
//! through the browser, by any web page, so what a client can hold is
//! bounded here, below every route:
//!
//! - **connections**: at most [`Limits::max_connections`] at once; one
//!   more is answered `503` and closed at once, so descriptors never run
//!   out (1,000 half-open connections once starved a server of them);
//! - **a request's head in time**: once its first byte has come, the rest
//!   of the head must follow within [`Limits::head_timeout`] ([`Watch`],
//!   a watchdog per connection), or the connection is closed;
//! - **an idle connection** may wait [`Limits::keep_alive`] for its next
//!   request (hyper's header read timeout), then it is closed.
//!
//! What a service does with a request (its body, its own time limit, its
//! answer's) is the service's: the head is in when it is called, and a
//! service that reads a body says so through the connection's [`Watch`]
//! (in the request's extensions, beside the peer's address).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper::{Request, Response};
use tokio::sync::Semaphore;

/// What the accept loop allows every client together.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once.
    pub max_connections: usize,
    /// Time from a request's first byte to the end of its head.
    pub head_timeout: Duration,
    /// Time a kept-alive connection may wait for its next request.
    pub keep_alive: Duration,
}

/// Where a connection is in its request: whether bytes of a request have
/// come that were not served yet, and since when.
#[derive(Default)]
pub struct Watch {
    /// Since when bytes of a request not yet served have come, and
    /// whether its body is being read (timed by the service itself).
    state: Mutex<(Option<Instant>, bool)>,
}

impl Watch {
    fn state(&self) -> std::sync::MutexGuard<'_, (Option<Instant>, bool)> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes came: a request has begun, if none had.
    fn read(&self) {
        let mut s = self.state();
        if !s.1 {
            s.0.get_or_insert_with(Instant::now);
        }
    }

    /// The head is in; the service reads the body (`true`) or has read it
    /// whole, or it has none (`false`).
    pub fn served(&self, body: bool) {
        *self.state() = (None, body);
    }

    /// Resolves once a request has been arriving for longer than `limit`.
    async fn overdue(&self, limit: Duration) {
        loop {
            let since = self.state().0;
            let wait = match since {
                Some(since) if since.elapsed() >= limit => return,
                Some(since) => limit - since.elapsed(),
                None => limit,
            };
            tokio::time::sleep(wait.max(Duration::from_millis(10))).await;
        }
    }
}

/// A connection's stream, telling its [`Watch`] when bytes come.
struct Watched<S> {
    io: S,
    watch: Arc<Watch>,
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Watched<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = std::pin::Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.watch.read();
        }
        poll
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// What a connection over the limit is told before it is closed.
const FULL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: 67\r\n\r\npi-index: too many connections at once: retry when others are done\n";

/// Serve every connection `listener` accepts, within `limits`, until the
/// process ends: each with the service `service` makes of the peer's
/// address and the connection's [`Watch`].
pub async fn accept<F, S, B>(listener: tokio::net::TcpListener, limits: Limits, service: F)
where
    F: Fn(SocketAddr, Arc<Watch>) -> S,
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use hyper_util::rt::{TokioIo, TokioTimer};

    let open = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(s) => s,
            // A connection that failed before it was accepted (reset, too
            // many open files) costs only itself.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            // Said without waiting on the client, then closed; what it
            // sent already is read first, or the close would reset the
            // connection before the answer is read.
            let _ = stream.try_write(FULL);
            let mut sink = [0u8; 4096];
            while matches!(stream.try_read(&mut sink), Ok(n) if n > 0) {}
            continue;
        };
        let watch = Arc::new(Watch::default());
        let svc = service(peer, watch.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let io = Watched {
                io: stream,
                watch: watch.clone(),
            };
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.keep_alive.max(limits.head_timeout))
                .serve_connection(TokioIo::new(io), svc);
            // A request begun and not whole in time: the connection is
            // dropped, and its descriptor with it.
            tokio::select! {
                _ = conn => {}
                _ = watch.overdue(limits.head_timeout) => {}
            }
        });
    }
}

/// Serve `router` on `listener` within `limits` until the process ends:
/// each request with the peer's address (axum's `ConnectInfo`) and its
/// connection's [`Watch`] in its extensions.
pub async fn serve(listener: tokio::net::TcpListener, limits: Limits, router: axum::Router) {
    accept(listener, limits, move |peer, watch| {
        let router = router.clone();
        hyper::service::service_fn(move |mut req: Request<Incoming>| {
            // The head is in; a service that reads the body says so.
            watch.served(false);
            req.extensions_mut()
                .insert(axum::extract::ConnectInfo(peer));
            req.extensions_mut().insert(watch.clone());
            let mut router = router.clone();
            tower_service::Service::call(&mut router, req)
        })
    })
    .await
}
