//! Streamable HTTP on 127.0.0.1: rmcp's service (a tower service) mounted
//! in axum, behind the guard the web view passes too, and a thin layer
//! that gives every request an answer and bounds what a client can hold.
//!
//! rmcp serves the protocol ([`StreamableHttpService`]); this module adds
//! what the MCP specification asks of a server and rmcp leaves out:
//!
//! - **Host and Origin** are checked first, by the shared guard
//!   ([`crate::http::guard`], its loopback rule): only loopback hosts
//!   (`127.0.0.1`, `localhost`, `[::1]`, any port) and, when a browser
//!   sends an `Origin`, only a loopback one; anything else is `403` (the
//!   specification: servers MUST validate Origin, against DNS rebinding).
//!   No `Origin` (every non-browser client) is accepted.
//! - **Whole requests, in time**: once the first byte of a request has
//!   come, its headers must follow within [`Limits::request_timeout`]
//!   ([`Watch`], a watchdog per connection, [`crate::http`]'s accept
//!   loop, which also caps connections at [`MAX_CONNECTIONS`]) and a POST
//!   body within the
//!   same time again, at most [`MAX_MESSAGE_BYTES`]; else the connection
//!   is closed (a body answered `408` or `413` first). A kept-alive
//!   connection may wait [`KEEP_ALIVE`] for its next request (hyper's
//!   header read timeout), so a client pausing between calls keeps it.
//!   800 half-sent requests once held 810 descriptors for good.
//! - **Bodies that are not a message** get `400` with the JSON-RPC error
//!   ([`super::message`]: not JSON `-32700`, a batch `-32600`, values that
//!   cannot be read `-32602`), where rmcp answered `415`.
//! - **Sessions** ([`super::sessions::Sessions`]) expire after
//!   [`Limits::idle`] without a
//!   request, and at most [`Limits::max_sessions`] live at once (a new
//!   one closes the least recently used: a client that never sends
//!   `DELETE` costs a bounded amount,
//!   [docs/performance.md](../../docs/performance.md#hostile-input)). A
//!   request for an unknown, expired or deleted session, a second `DELETE`
//!   included, is `404`, as the specification says; the client then starts a
//!   new session.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use http_body_util::{BodyExt, Limited};
use rmcp::transport::streamable_http_server::{
    SessionId, SessionManager, StreamableHttpServerConfig, StreamableHttpService,
};

use super::message::{self, MAX_MESSAGE_BYTES};
use super::server::{runtime, ServeError, Server};
use super::sessions::Sessions;
use crate::http::guard::{self, Guard};
use crate::http::Watch;
use crate::live::Served;

pub use super::sessions::Limits;

/// How long a kept-alive connection may wait for its next request.
pub const KEEP_ALIVE: Duration = Duration::from_secs(60);

/// Connections open at once (more are answered `503` and closed).
pub const MAX_CONNECTIONS: usize = 256;

/// What the layer in front of rmcp holds: the sessions and the limits.
struct Front {
    sessions: Arc<Sessions>,
    limits: Limits,
}

fn plain(status: StatusCode, text: &str) -> Response {
    (status, text.to_owned()).into_response()
}

fn json_error(status: StatusCode, reply: serde_json::Value) -> Response {
    let mut r = (status, reply.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Close the connection after this response (what was sent of the
/// request is not read further).
fn closing(mut r: Response) -> Response {
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

const SESSION_HEADER: &str = "mcp-session-id";

/// The layer in front of rmcp: a `DELETE` of an unknown session is `404`;
/// a POST's body is read whole within the limits (else `408`, `413`, or
/// the JSON-RPC error of what is not a message), then handed on.
async fn front(State(front): State<Arc<Front>>, req: Request, next: Next) -> Response {
    let watch = req.extensions().get::<Arc<Watch>>().cloned();
    let session = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(SessionId::from);
    if req.method() == Method::DELETE {
        // rmcp says 202 to a DELETE of any id, a deleted one included.
        if let Some(id) = &session {
            if !front.sessions.has_session(id).await.unwrap_or(false) {
                return plain(
                    StatusCode::NOT_FOUND,
                    "Not Found: no such session (it ended, expired or never was)",
                );
            }
        }
    }
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    // The head is in: the body has its own timeout.
    if let Some(w) = &watch {
        w.served(true);
    }
    let read = Limited::new(body, MAX_MESSAGE_BYTES).collect();
    let read = tokio::time::timeout(front.limits.request_timeout, read).await;
    // Read whole (or given up): the call may take its time.
    if let Some(w) = &watch {
        w.served(false);
    }
    let bytes = match read {
        Err(_) => {
            return closing(plain(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "Request Timeout: the body did not arrive whole within {} s",
                    front.limits.request_timeout.as_secs_f64()
                ),
            ))
        }
        Ok(Err(e))
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return closing(json_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                message::too_long(None),
            ))
        }
        Ok(Err(_)) => {
            return closing(plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: the body could not be read",
            ))
        }
        Ok(Ok(body)) => body.to_bytes(),
    };
    if let Err(reply) = message::parse(&bytes) {
        let reply = reply.unwrap_or_else(|| {
            message::error(
                None,
                message::INVALID_REQUEST,
                "Invalid Request: the notification could not be read",
            )
        });
        return json_error(StatusCode::BAD_REQUEST, reply);
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Anything but `/mcp`.
async fn elsewhere() -> Response {
    plain(StatusCode::NOT_FOUND, "Not Found: the MCP endpoint is /mcp")
}

/// The routes: rmcp's service at `/mcp`, behind the layer above and the
/// guard.
fn router(server: Server, sessions: Arc<Sessions>, limits: Limits) -> Router {
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
    Router::new()
        .route_service("/mcp", rmcp)
        .fallback(elsewhere)
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(Front { sessions, limits }),
            front,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(Guard::loopback()),
            guard::check,
        ))
}

/// Serve `server` on `listener` with `limits` until the process ends.
pub async fn serve(
    server: Server,
    listener: tokio::net::TcpListener,
    limits: Limits,
) -> Result<(), ServeError> {
    let sessions = Arc::new(Sessions::new(limits));
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
    crate::http::serve(listener, accepting, router(server, sessions, limits)).await;
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
