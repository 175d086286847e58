//! What every request passes before a handler sees it, and every
//! response gets: the one guard of the web view and of the MCP server's
//! HTTP transport, an axum middleware ([`check`]) with its own state
//! ([`Guard`]), set for each.
//!
//! Both serve a person's private conversations, so:
//!
//! - `Host` must name the server ([`Hosts`]): for the web view, the
//!   address it listens on (DNS rebinding: another site's name pointed at
//!   127.0.0.1 carries its own Host), unless it listens beyond loopback
//!   with a token (`--bind`): then any name of the machine is served to a
//!   request carrying it; for the MCP server, any loopback name, as the
//!   MCP specification asks (a client names `localhost` or `127.0.0.1`,
//!   with or without the port);
//! - an `Origin`, when sent, must be the server's own (for the MCP
//!   server: a page of this machine);
//! - the web view is read-only: a request a browser marks as another
//!   site's (`Sec-Fetch-Site: cross-site` or `same-site`: a page on
//!   another port of this machine is the same site) is refused, unless it
//!   is a top-level navigation to a page (a link followed in the address
//!   bar): that gets the page, which changes nothing, and the search page
//!   then runs no search ([`CrossSite`]) until the person presses Enter.
//!   A frame, a script, an image or a fetch of another site never
//!   reaches a handler; only `GET` and `HEAD`, with no body: nothing
//!   changes anything;
//! - with a token, every request carries it (the `Bearer` scheme read as
//!   HTTP says, in any case);
//! - limits ([`Bounds`], the web view's): requests in flight at once, per
//!   client address and in all, counted until their answer is sent, a
//!   timeout for the work and another for sending the answer
//!   (connections are bounded below, by [`super::accept`](mod@super::accept); the MCP
//!   server bounds its calls itself, and its event streams last);
//! - every answer of the web view carries a Content-Security-Policy
//!   without inline script, `frame-ancestors 'none'`, nosniff and
//!   no-referrer.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The policy: scripts and styles from the server only (no inline
/// script), images also inline (a user message's pasted screenshot),
/// nothing framed, no plugin, forms only to the server.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TOKEN_COOKIE: &str = "pi_index_token";

/// Marks a request that another site's page navigated to (a link
/// followed): its page is drawn, but nothing is searched on its behalf.
#[derive(Clone, Copy, Debug)]
pub struct CrossSite;

/// Which names a request's `Host` (and a browser's `Origin`) may give.
#[derive(Clone, Debug)]
pub enum Hosts {
    /// The addresses the server listens on, by name and port (the web
    /// view); with `any`, every name (a server listening beyond loopback
    /// with a token, which other machines reach by names and addresses
    /// it cannot know).
    Listening {
        /// `host:port` of each address, `localhost:port` for loopback.
        hosts: Vec<String>,
        /// Whether any `Host` is served.
        any: bool,
    },
    /// Any loopback name, any port (the MCP server).
    Loopback,
}

/// The limits every request of the web view is held to.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// Requests worked on at once, whoever sent them (more: 503).
    pub in_flight: usize,
    /// Requests one client address has in flight at once (more: 429).
    pub per_client: usize,
    /// A request that takes longer is answered 503 (its work dropped).
    pub request_timeout: Duration,
    /// An answer still being sent after this long is cut.
    pub response_timeout: Duration,
}

/// The rules a server's requests pass (see the module documentation).
pub struct Guard {
    hosts: Hosts,
    token: Option<String>,
    /// The web view's: GET and HEAD only, no body, another site's requests
    /// refused, the security headers on every answer.
    read_only: bool,
    bounds: Option<Bounds>,
    in_flight: Arc<Semaphore>,
    per_client: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// What a request that passed may do.
struct Admitted {
    /// The token came in the query: set it as a cookie, so the page's own
    /// requests carry it.
    set_cookie: bool,
    /// Another site's page navigated here ([`CrossSite`]).
    cross_site: bool,
}

impl Guard {
    /// The web view's rules for a server listening on `addrs`; `bound`
    /// when the person chose the address (`--bind`).
    pub fn web(addrs: &[SocketAddr], token: Option<String>, bound: bool, bounds: Bounds) -> Guard {
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
        let token = token.filter(|t| !t.is_empty());
        Guard {
            hosts: Hosts::Listening {
                hosts,
                any: bound && token.is_some() && addrs.iter().any(|a| !a.ip().is_loopback()),
            },
            token,
            read_only: true,
            in_flight: Arc::new(Semaphore::new(bounds.in_flight)),
            bounds: Some(bounds),
            per_client: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// The MCP server's rules: loopback names only, no token, no bounds
    /// here (the server bounds its calls, and a session's event stream
    /// lasts as long as the session).
    pub fn loopback() -> Guard {
        Guard {
            hosts: Hosts::Loopback,
            token: None,
            read_only: false,
            bounds: None,
            in_flight: Arc::new(Semaphore::new(1)),
            per_client: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Why `req` is refused, if it is; else what it may do.
    fn admit(&self, req: &Request) -> Result<Admitted, Refusal> {
        let h = req.headers();
        if self.read_only {
            if !matches!(*req.method(), Method::GET | Method::HEAD) {
                return Err(Refusal::new(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "the web view is read-only: only GET and HEAD",
                ));
            }
            let sized = text(h, header::CONTENT_LENGTH).is_some_and(|n| n.trim() != "0");
            if sized || h.contains_key(header::TRANSFER_ENCODING) {
                return Err(Refusal::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "the web view takes no request body",
                ));
            }
        }
        self.hosts.admit(req)?;
        let cross_site = matches!(text(h, "sec-fetch-site"), Some("cross-site" | "same-site"));
        if self.read_only && cross_site && !(top_level(h) && page(req.uri())) {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                "refused: a request another site's page made (Sec-Fetch-Site); only a link to a page may be followed from another site",
            ));
        }
        let Some(token) = &self.token else {
            return Ok(Admitted {
                set_cookie: false,
                cross_site,
            });
        };
        let bearer = text(h, header::AUTHORIZATION).and_then(|a| {
            let (scheme, value) = a.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| value.trim())
        });
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
            Ok(Admitted {
                set_cookie: false,
                cross_site,
            })
        } else if query.is_some() {
            Ok(Admitted {
                set_cookie: true,
                cross_site,
            })
        } else {
            Err(Refusal::new(
                StatusCode::UNAUTHORIZED,
                "this server needs its token: open the URL it printed (with ?token=…), or send Authorization: Bearer TOKEN",
            ))
        }
    }
}

impl Hosts {
    /// Why `req`'s `Host` or `Origin` is refused, if it is.
    fn admit(&self, req: &Request) -> Result<(), Refusal> {
        let h = req.headers();
        let (hosts, any) = match self {
            Hosts::Listening { hosts, any } => (hosts, *any),
            Hosts::Loopback => return loopback_only(req),
        };
        let host = text(h, header::HOST).map(str::to_ascii_lowercase);
        if !any && !host.as_ref().is_some_and(|v| hosts.contains(v)) {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                &format!(
                    "refused: the Host header ({}) is not this server's address; open {} instead",
                    host.as_deref().unwrap_or("none"),
                    hosts
                        .iter()
                        .find(|h| !h.starts_with("localhost"))
                        .map_or(String::new(), |h| format!("http://{h}/"))
                ),
            ));
        }
        if let Some(origin) = text(h, header::ORIGIN) {
            let own = origin.strip_prefix("http://").is_some_and(|o| {
                hosts.iter().any(|h| h.eq_ignore_ascii_case(o))
                    || (any && host.as_deref() == Some(o.to_ascii_lowercase().as_str()))
            });
            if !own {
                return Err(Refusal::new(
                    StatusCode::FORBIDDEN,
                    "refused: a request from another site's page (its Origin is not this server)",
                ));
            }
        }
        Ok(())
    }
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

/// The MCP server's rule: a loopback `Host` (any port), and a loopback
/// `Origin` when a browser sends one; no `Origin` (every non-browser
/// client) is accepted.
fn loopback_only(req: &Request) -> Result<(), Refusal> {
    let host = text(req.headers(), header::HOST)
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    if !host.is_some_and(|h| loopback(host_of(&h))) {
        return Err(Refusal::said(
            StatusCode::FORBIDDEN,
            "Forbidden: the Host is not this machine's loopback address (127.0.0.1, localhost or [::1])",
        ));
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let ok = origin.to_str().ok().is_some_and(|o| {
            let rest = o
                .strip_prefix("http://")
                .or_else(|| o.strip_prefix("https://"));
            rest.is_some_and(|r| !r.contains('/') && loopback(host_of(r)))
        });
        if !ok {
            return Err(Refusal::said(
                StatusCode::FORBIDDEN,
                "Forbidden: the Origin is not a page of this machine (http://localhost, http://127.0.0.1 or http://[::1])",
            ));
        }
    }
    Ok(())
}

/// Whether the browser says the request is a top-level navigation (the
/// address bar's, not a frame's).
fn top_level(h: &HeaderMap) -> bool {
    text(h, "sec-fetch-mode") == Some("navigate") && text(h, "sec-fetch-dest") == Some("document")
}

/// Whether `path` is a page a person may be sent to by a link: not the
/// API, an asset or a download.
fn page(uri: &axum::http::Uri) -> bool {
    let path = uri.path();
    let raw = path.ends_with("/raw")
        || uri
            .query()
            .is_some_and(|q| q.split('&').any(|kv| kv.starts_with("raw=")));
    !path.starts_with("/api/") && !path.starts_with("/assets/") && !raw
}

fn text<K: header::AsHeaderName>(h: &HeaderMap, key: K) -> Option<&str> {
    h.get(key).and_then(|v| v.to_str().ok())
}

/// Compare without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0, |d, (x, y)| d | (x ^ y)) == 0
}

/// Why a request is not answered: its status and the whole body.
struct Refusal(StatusCode, String);

impl Refusal {
    /// Said as pi-index says a refusal (`pi-index: MESSAGE`).
    fn new(status: StatusCode, message: &str) -> Refusal {
        Refusal(status, format!("pi-index: {message}\n"))
    }

    /// Said as `body`, whole.
    fn said(status: StatusCode, body: &str) -> Refusal {
        Refusal(status, body.to_owned())
    }
}

/// A refusal said as pi-index says one.
pub fn refuse(status: StatusCode, message: &str) -> Response {
    (status, format!("pi-index: {message}\n")).into_response()
}

/// One request in flight from a client: counted until dropped.
struct InFlight {
    per_client: Arc<Mutex<HashMap<IpAddr, usize>>>,
    ip: IpAddr,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut map = self.per_client.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = map.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.ip);
            }
        }
    }
}

/// An answer's body, holding its request's places in the limits until
/// it is sent whole (or dropped), and cut once [`Bounds::response_timeout`]
/// has passed.
struct Counted {
    inner: Body,
    deadline: Pin<Box<tokio::time::Sleep>>,
    _held: (InFlight, OwnedSemaphorePermit),
}

impl HttpBody for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, axum::Error>>> {
        if self.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(axum::Error::new(
                "the answer took too long to send: cut",
            ))));
        }
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// The middleware: refuse, limit, time out, and set the headers.
pub async fn check(
    State(guard): State<Arc<Guard>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut req: Request,
    next: Next,
) -> Response {
    let mut resp = match guard.admit(&req) {
        Err(Refusal(status, body)) => {
            let mut r = (status, body).into_response();
            // What was sent of the request is not read further.
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            r
        }
        Ok(admitted) => {
            if admitted.cross_site {
                req.extensions_mut().insert(CrossSite);
            }
            let mut resp = match guard.bounds {
                Some(bounds) => limited(&guard, bounds, peer.ip(), req, next).await,
                None => next.run(req).await,
            };
            if admitted.set_cookie {
                if let Some(t) = &guard.token {
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
    if !guard.read_only {
        return resp;
    }
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

async fn limited(g: &Guard, bounds: Bounds, ip: IpAddr, req: Request, next: Next) -> Response {
    {
        let mut map = g.per_client.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(ip).or_insert(0);
        if *n >= bounds.per_client {
            return refuse(
                StatusCode::TOO_MANY_REQUESTS,
                &format!(
                    "too many requests at once from {ip} (at most {}): retry when the others are answered",
                    bounds.per_client
                ),
            );
        }
        *n += 1;
    }
    let counted = InFlight {
        per_client: g.per_client.clone(),
        ip,
    };
    let Ok(permit) = g.in_flight.clone().try_acquire_owned() else {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!(
                "the server is answering {} requests already: retry in a moment",
                bounds.in_flight
            ),
        );
    };
    match tokio::time::timeout(bounds.request_timeout, next.run(req)).await {
        Ok(resp) => resp.map(|inner| {
            Body::new(Counted {
                inner,
                deadline: Box::pin(tokio::time::sleep(bounds.response_timeout)),
                _held: (counted, permit),
            })
        }),
        Err(_) => refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!(
                "the request took longer than {} s and was dropped: narrow the query",
                bounds.request_timeout.as_secs()
            ),
        ),
    }
}
