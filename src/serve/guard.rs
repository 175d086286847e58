//! What every request passes before a handler sees it, and every
//! response gets.
//!
//! The server serves a person's private conversations, so:
//!
//! - `Host` must name the address the server listens on (DNS rebinding:
//!   another site's name pointed at 127.0.0.1 carries its own Host);
//! - an `Origin`, when sent, must be the server's own, and a request
//!   another site made (`Sec-Fetch-Site: cross-site` or `same-site`) is
//!   refused unless it is a navigation (following a link is harmless, a
//!   page reading the answer is not);
//! - only `GET` and `HEAD`: nothing changes anything;
//! - with a token, every request carries it;
//! - limits: requests in flight at once, per client address and in all,
//!   and a timeout per request;
//! - every response carries a Content-Security-Policy without inline
//!   script, `frame-ancestors 'none'`, nosniff and no-referrer.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

use super::{App, MAX_IN_FLIGHT, MAX_PER_CLIENT, REQUEST_TIMEOUT};

/// The policy: scripts and styles from the server only (no inline
/// script), images also inline (a user message's pasted screenshot),
/// nothing framed, no plugin, forms only to the server.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TOKEN_COOKIE: &str = "pi_index_token";

pub(crate) struct Guard {
    hosts: Vec<String>,
    token: Option<String>,
    in_flight: Arc<Semaphore>,
    per_client: Mutex<HashMap<IpAddr, usize>>,
}

impl Guard {
    pub(crate) fn new(addrs: &[SocketAddr], token: Option<String>) -> Guard {
        let mut hosts = Vec::new();
        for a in addrs {
            let p = a.port();
            if a.ip().is_loopback() {
                hosts.push(format!("localhost:{p}"));
            }
            hosts.push(match a.ip() {
                IpAddr::V4(ip) => format!("{ip}:{p}"),
                IpAddr::V6(ip) => format!("[{ip}]:{p}"),
            });
        }
        Guard {
            hosts,
            token: token.filter(|t| !t.is_empty()),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            per_client: Mutex::new(HashMap::new()),
        }
    }

    /// Why `req` is refused, if it is; else whether the token came in the
    /// query (then it is set as a cookie, so the page's own requests carry
    /// it).
    fn admit(&self, req: &Request) -> Result<bool, Refusal> {
        let h = req.headers();
        if !matches!(*req.method(), Method::GET | Method::HEAD) {
            return Err(Refusal::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "the web view is read-only: only GET and HEAD",
            ));
        }
        let host = text(h, header::HOST).map(str::to_ascii_lowercase);
        if !host.as_ref().is_some_and(|v| self.hosts.contains(v)) {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                &format!(
                    "refused: the Host header ({}) is not this server's address; open {} instead",
                    host.as_deref().unwrap_or("none"),
                    self.hosts
                        .iter()
                        .find(|h| !h.starts_with("localhost"))
                        .map_or(String::new(), |h| format!("http://{h}/"))
                ),
            ));
        }
        if let Some(origin) = text(h, header::ORIGIN) {
            let own = origin
                .strip_prefix("http://")
                .is_some_and(|o| self.hosts.iter().any(|h| h.eq_ignore_ascii_case(o)));
            if !own {
                return Err(Refusal::new(
                    StatusCode::FORBIDDEN,
                    "refused: a request from another site's page (its Origin is not this server)",
                ));
            }
        }
        let site = text(h, "sec-fetch-site");
        let navigate = text(h, "sec-fetch-mode") == Some("navigate");
        if matches!(site, Some("cross-site" | "same-site")) && !navigate {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                "refused: a request another site's page made (Sec-Fetch-Site)",
            ));
        }
        let Some(token) = &self.token else {
            return Ok(false);
        };
        let bearer = text(h, header::AUTHORIZATION).and_then(|a| a.strip_prefix("Bearer "));
        let cookie = h
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().strip_prefix(TOKEN_COOKIE)?.strip_prefix('='))
            .find(|c| same(c, token));
        let query = req.uri().query().and_then(|q| {
            q.split('&')
                .filter_map(|kv| kv.strip_prefix("token="))
                .find(|t| same(t, token))
        });
        if bearer.is_some_and(|b| same(b, token)) || cookie.is_some() {
            Ok(false)
        } else if query.is_some() {
            Ok(true)
        } else {
            Err(Refusal::new(
                StatusCode::UNAUTHORIZED,
                "this server needs its token: open the URL it printed (with ?token=…), or send Authorization: Bearer TOKEN",
            ))
        }
    }
}

fn text<K: header::AsHeaderName>(h: &HeaderMap, key: K) -> Option<&str> {
    h.get(key).and_then(|v| v.to_str().ok())
}

/// Compare without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0, |d, (x, y)| d | (x ^ y)) == 0
}

/// Why a request is not answered.
pub(crate) struct Refusal(StatusCode, String);

impl Refusal {
    fn new(status: StatusCode, message: &str) -> Refusal {
        Refusal(status, message.to_owned())
    }
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, format!("pi-index: {message}\n")).into_response()
}

/// One request in flight from a client: counted until dropped.
struct InFlight<'a> {
    guard: &'a Guard,
    ip: IpAddr,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut map = self
            .guard
            .per_client
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = map.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.ip);
            }
        }
    }
}

/// The middleware: refuse, limit, time out, and set the headers.
pub(crate) async fn check(
    State(app): State<Arc<App>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
    next: Next,
) -> Response {
    let mut resp = match app.guard.admit(&req) {
        Err(Refusal(status, message)) => refuse(status, &message),
        Ok(set_cookie) => {
            let mut resp = limited(&app, peer.ip(), req, next).await;
            if set_cookie {
                if let Some(t) = &app.guard.token {
                    if let Ok(v) = HeaderValue::from_str(&format!(
                        "{TOKEN_COOKIE}={t}; Path=/; HttpOnly; SameSite=Strict"
                    )) {
                        resp.headers_mut().insert(header::SET_COOKIE, v);
                    }
                }
            }
            resp
        }
    };
    let h = resp.headers_mut();
    let set = |h: &mut HeaderMap, k: header::HeaderName, v: &'static str| {
        h.insert(k, HeaderValue::from_static(v));
    };
    set(h, header::CONTENT_SECURITY_POLICY, CSP);
    set(h, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(h, header::REFERRER_POLICY, "no-referrer");
    set(h, header::X_FRAME_OPTIONS, "DENY");
    set(
        h,
        header::HeaderName::from_static("cross-origin-resource-policy"),
        "same-origin",
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        set(h, header::CACHE_CONTROL, "no-store");
    }
    resp
}

async fn limited(app: &Arc<App>, ip: IpAddr, req: Request, next: Next) -> Response {
    let g = &app.guard;
    {
        let mut map = g.per_client.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(ip).or_insert(0);
        if *n >= MAX_PER_CLIENT {
            return refuse(
                StatusCode::TOO_MANY_REQUESTS,
                &format!("too many requests at once from {ip} (at most {MAX_PER_CLIENT}): retry when the others are answered"),
            );
        }
        *n += 1;
    }
    let _counted = InFlight { guard: g, ip };
    let Ok(_permit) = g.in_flight.clone().try_acquire_owned() else {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("the server is answering {MAX_IN_FLIGHT} requests already: retry in a moment"),
        );
    };
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!(
                "the request took longer than {} s and was dropped: narrow the query",
                REQUEST_TIMEOUT.as_secs()
            ),
        ),
    }
}

/// Anything else: 404, said plainly.
pub(crate) async fn not_found() -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        "no such page: the pages are /, /session/ID and /stats, the API is under /api/",
    )
}
