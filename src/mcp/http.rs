//! Streamable HTTP on 127.0.0.1: rmcp's service, behind a thin layer that
//! gives every request an answer and bounds what a client can hold.
//!
//! rmcp serves the protocol ([`StreamableHttpService`]); this module adds
//! what the MCP specification asks of a server and rmcp leaves out:
//!
//! - **Host and Origin** are checked first: only loopback hosts
//!   (`127.0.0.1`, `localhost`, `[::1]`, any port) and, when a browser
//!   sends an `Origin`, only a loopback one; anything else is `403` (the
//!   specification: servers MUST validate Origin, against DNS rebinding).
//!   No `Origin` (every non-browser client) is accepted.
//! - **Whole requests, in time**: once the first byte of a request has
//!   come, its headers must follow within [`Limits::request_timeout`]
//!   ([`Watch`], a watchdog per connection, [`crate::http`]'s accept
//!   loop, which also caps connections at [`MAX_CONNECTIONS`]) and a POST body within the
//!   same time again, at most [`MAX_MESSAGE_BYTES`]; else the connection
//!   is closed (a body answered `408` or `413` first). A kept-alive
//!   connection may wait [`KEEP_ALIVE`] for its next request (hyper's
//!   header read timeout), so a client pausing between calls keeps it.
//!   800 half-sent requests once held 810 descriptors for good.
//! - **Bodies that are not a message** get `400` with the JSON-RPC error
//!   ([`super::message`]: not JSON `-32700`, a batch `-32600`, values that
//!   cannot be read `-32602`), where rmcp answered `415`.
//! - **Sessions** ([`Sessions`]) expire after [`Limits::idle`] without a
//!   request, and at most [`Limits::max_sessions`] live at once (a new
//!   one closes the least recently used: a client that never sends
//!   `DELETE` costs a bounded amount; 13,000 `initialize`s once grew the
//!   server to 683 MB). A request for an unknown, expired or deleted
//!   session, a second `DELETE` included, is `404`, as the specification
//!   says; the client then starts a new session.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_core::Stream;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{header, Method, Request, Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::{
    RestoreOutcome, SessionId, SessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::transport::WorkerTransport;

use super::message::{self, MAX_MESSAGE_BYTES};
use super::server::{runtime, ServeError, Server};
use crate::http::Watch;
use crate::live::Served;

/// What one client may hold of the HTTP server.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A session with no request for this long is closed.
    pub idle: Duration,
    /// Most sessions alive at once.
    pub max_sessions: usize,
    /// Time for a request's headers, and again for its body, to arrive.
    pub request_timeout: Duration,
}

impl Default for Limits {
    /// 10 minutes idle, 64 sessions, 5 s per request part.
    fn default() -> Limits {
        Limits {
            idle: Duration::from_secs(600),
            max_sessions: 64,
            request_timeout: Duration::from_secs(5),
        }
    }
}

/// How long a kept-alive connection may wait for its next request.
pub const KEEP_ALIVE: Duration = Duration::from_secs(60);

/// Connections open at once (more are answered `503` and closed).
pub const MAX_CONNECTIONS: usize = 256;

/// rmcp's in-memory sessions, expired when idle and capped in number.
pub struct Sessions {
    inner: LocalSessionManager,
    /// Each live session's last request.
    used: Mutex<HashMap<SessionId, Instant>>,
    limits: Limits,
}

impl Sessions {
    /// No session yet.
    pub fn new(limits: Limits) -> Sessions {
        let mut inner = LocalSessionManager::default();
        // rmcp's worker stops on its own when idle this long too.
        inner.session_config.keep_alive = Some(limits.idle);
        Sessions {
            inner,
            used: Mutex::new(HashMap::new()),
            limits,
        }
    }

    fn used(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        self.used.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sessions alive.
    pub fn live(&self) -> usize {
        self.used().len()
    }

    /// Whether `id` is alive; a request for it counts as use.
    fn touch(&self, id: &SessionId) -> bool {
        let now = Instant::now();
        match self.used().get_mut(id) {
            Some(at) if now.duration_since(*at) < self.limits.idle => {
                *at = now;
                true
            }
            _ => false,
        }
    }

    /// Close the sessions idle for too long.
    pub async fn expire(&self) {
        let now = Instant::now();
        let idle: Vec<SessionId> = self
            .used()
            .iter()
            .filter(|(_, at)| now.duration_since(**at) >= self.limits.idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in idle {
            self.end(&id).await;
        }
    }

    async fn end(&self, id: &SessionId) {
        self.used().remove(id);
        // An error is a worker already gone: nothing left to free.
        let _ = self.inner.close_session(id).await;
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.expire().await;
        loop {
            let oldest = {
                let used = self.used();
                if used.len() < self.limits.max_sessions.max(1) {
                    break;
                }
                used.iter()
                    .min_by_key(|(_, at)| **at)
                    .map(|(id, _)| id.clone())
            };
            match oldest {
                Some(id) => self.end(&id).await,
                None => break,
            }
        }
        let (id, transport) = self.inner.create_session().await?;
        self.used().insert(id.clone(), Instant::now());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        if self.touch(id) {
            return self.inner.has_session(id).await;
        }
        if self.used().contains_key(id) {
            self.end(id).await;
        }
        Ok(false)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.end(id).await;
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // No session store: a session not in memory is gone.
        Ok(RestoreOutcome::NotSupported)
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(text.to_owned())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn json_error(status: StatusCode, reply: serde_json::Value) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(reply.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    r
}

/// Close the connection after this response (what was sent of the
/// request is not read further).
fn closing(mut r: Response<Body>) -> Response<Body> {
    r.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    r
}

/// Whether `host` (no port) is a loopback name.
fn loopback(host: &str) -> bool {
    matches!(
        host.to_ascii_lowercase().as_str(),
        "127.0.0.1" | "localhost" | "[::1]"
    )
}

/// The host of a `Host` value (`host[:port]`, `[v6][:port]`).
fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(i) => &authority[..=i],
            None => authority,
        };
    }
    authority.split(':').next().unwrap_or(authority)
}

/// Why the request's `Host` or `Origin` is refused, if it is.
fn foreign(req: &Request<Incoming>) -> Option<&'static str> {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    match host {
        Some(h) if loopback(host_of(&h)) => {}
        _ => return Some("Forbidden: the Host is not this machine's loopback address (127.0.0.1, localhost or [::1])"),
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let ok = origin.to_str().ok().is_some_and(|o| {
            let rest = o
                .strip_prefix("http://")
                .or_else(|| o.strip_prefix("https://"));
            rest.is_some_and(|r| !r.contains('/') && loopback(host_of(r)))
        });
        if !ok {
            return Some("Forbidden: the Origin is not a page of this machine (http://localhost, http://127.0.0.1 or http://[::1])");
        }
    }
    None
}

const SESSION_HEADER: &str = "mcp-session-id";

/// Answer one request: the checks above, then rmcp.
async fn answer(
    req: Request<Incoming>,
    rmcp: StreamableHttpService<Server, Sessions>,
    sessions: Arc<Sessions>,
    limits: Limits,
    watch: Arc<Watch>,
) -> Result<Response<Body>, Infallible> {
    // The headers are in: the body has its own timeout.
    watch.served(true);
    let response = checked(req, rmcp, sessions, limits, &watch).await;
    watch.served(false);
    response
}

async fn checked(
    req: Request<Incoming>,
    rmcp: StreamableHttpService<Server, Sessions>,
    sessions: Arc<Sessions>,
    limits: Limits,
    watch: &Watch,
) -> Result<Response<Body>, Infallible> {
    if let Some(why) = foreign(&req) {
        return Ok(closing(plain(StatusCode::FORBIDDEN, why)));
    }
    let session = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(SessionId::from);
    if req.method() == Method::DELETE {
        // rmcp says 202 to a DELETE of any id, a deleted one included.
        if let Some(id) = &session {
            if !sessions.has_session(id).await.unwrap_or(false) {
                return Ok(plain(
                    StatusCode::NOT_FOUND,
                    "Not Found: no such session (it ended, expired or never was)",
                ));
            }
        }
    }
    let (parts, body) = req.into_parts();
    let bytes = if parts.method == Method::POST {
        let read = Limited::new(body, MAX_MESSAGE_BYTES).collect();
        match tokio::time::timeout(limits.request_timeout, read).await {
            Err(_) => {
                return Ok(closing(plain(
                    StatusCode::REQUEST_TIMEOUT,
                    &format!(
                        "Request Timeout: the body did not arrive whole within {} s",
                        limits.request_timeout.as_secs_f64()
                    ),
                )))
            }
            Ok(Err(e))
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some() =>
            {
                return Ok(closing(json_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    message::too_long(None),
                )))
            }
            Ok(Err(_)) => {
                return Ok(closing(plain(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: the body could not be read",
                )))
            }
            Ok(Ok(body)) => body.to_bytes(),
        }
    } else {
        Bytes::new()
    };
    // Read whole: the call may take its time.
    watch.served(false);
    if parts.method == Method::POST {
        match message::parse(&bytes) {
            Ok(_) => {}
            Err(reply) => {
                let reply = reply.unwrap_or_else(|| {
                    message::error(
                        None,
                        message::INVALID_REQUEST,
                        "Invalid Request: the notification could not be read",
                    )
                });
                return Ok(json_error(StatusCode::BAD_REQUEST, reply));
            }
        }
    }
    let req = Request::from_parts(parts, Full::new(bytes));
    Ok(rmcp.handle(req).await)
}

/// Serve `server` on `listener` with `limits` until the process ends.
pub async fn serve(
    server: Server,
    listener: tokio::net::TcpListener,
    limits: Limits,
) -> Result<(), ServeError> {
    let sessions = Arc::new(Sessions::new(limits));
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
        .with_allowed_origins([
            "http://localhost:*",
            "http://127.0.0.1:*",
            "http://[::1]:*",
            "https://localhost:*",
            "https://127.0.0.1:*",
            "https://[::1]:*",
        ])
        .with_max_request_body_bytes(MAX_MESSAGE_BYTES);
    let rmcp = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
    // Idle sessions are closed even when no request comes to notice them.
    let sweep = sessions.clone();
    tokio::spawn(async move {
        let every = (limits.idle / 2).max(Duration::from_millis(100));
        loop {
            tokio::time::sleep(every).await;
            sweep.expire().await;
        }
    });
    let accepting = crate::http::Limits {
        max_connections: MAX_CONNECTIONS,
        head_timeout: limits.request_timeout,
        keep_alive: KEEP_ALIVE,
    };
    crate::http::accept(listener, accepting, move |_peer, watch| {
        let (rmcp, sessions) = (rmcp.clone(), sessions.clone());
        hyper::service::service_fn(move |req| {
            answer(req, rmcp.clone(), sessions.clone(), limits, watch.clone())
        })
    })
    .await;
    Ok(())
}

/// Serve MCP over streamable HTTP on `127.0.0.1:port` (0: any free port)
/// until the process is stopped; `listening` is told the address once
/// bound. Every request is answered and no client holds more than
/// `limits` allow (this module). Every connection shares the one index state.
pub async fn serve_http(
    served: Served,
    port: u16,
    limits: Limits,
    listening: impl FnOnce(std::net::SocketAddr),
) -> Result<(), ServeError> {
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))
        .await
        .map_err(|e| ServeError(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    listening(
        listener
            .local_addr()
            .map_err(|e| ServeError(e.to_string()))?,
    );
    serve(Server::new(served), listener, limits).await
}

/// Serve MCP over streamable HTTP on a runtime of our own (see
/// [`serve_http`]).
pub fn run_http(
    served: Served,
    port: u16,
    limits: Limits,
    listening: impl FnOnce(std::net::SocketAddr),
) -> Result<(), ServeError> {
    runtime()?.block_on(serve_http(served, port, limits, listening))
}
