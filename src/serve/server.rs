//! Listening: the addresses, the accept loop every connection passes
//! ([`crate::http`]), the background refresh of the local index, and the
//! one route table, behind the guard.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use axum::Router;

use crate::live::{Options as LiveOptions, RefreshStatus, Served, State};

use super::app::{not_found, App, BOUNDS, CONNECTIONS, REQUEST_TIMEOUT};
use super::{api, assets, pages, session};
use crate::http::guard::{self, Guard};

/// How to serve.
#[derive(Clone, Debug)]
pub struct Options {
    /// The index, where to refresh it from, and whether to.
    pub live: LiveOptions,
    /// The port (0: any free one).
    pub port: u16,
    /// Listen on this address instead of loopback (needs `token`).
    pub bind: Option<IpAddr>,
    /// When set, every request must carry it (`?token=`, then a cookie;
    /// or `Authorization: Bearer`).
    pub token: Option<String>,
    /// The longest time between two background refreshes (they run as
    /// soon as the watch of the session directories sees a change).
    pub refresh_every: Duration,
    /// Serve the team database at this URL instead of the local index.
    pub db: Option<String>,
}

impl Options {
    /// Loopback on `port`, the index at `index_dir` kept fresh from Pi's
    /// session directories as they change (and looked at every 2 seconds).
    pub fn new(index_dir: std::path::PathBuf, port: u16) -> Options {
        Options {
            live: LiveOptions::new(index_dir),
            port,
            bind: None,
            token: None,
            refresh_every: Duration::from_secs(2),
            db: None,
        }
    }
}

/// The server could not start.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ServeError(String);

/// The addresses `opts` listens on, refused when they would expose the
/// sessions to other machines without a token.
pub fn addresses(opts: &Options) -> Result<Vec<IpAddr>, ServeError> {
    match opts.bind {
        None => Ok(vec![
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(Ipv6Addr::LOCALHOST),
        ]),
        Some(ip) if ip.is_loopback() => Ok(vec![ip]),
        Some(ip) if opts.token.as_deref().is_none_or(str::is_empty) => Err(ServeError(format!(
            "--bind {ip} would serve your sessions to other machines: give a --token as well (every request must then carry it), or leave --bind out to serve on loopback only"
        ))),
        Some(ip) => Ok(vec![ip]),
    }
}

/// The addresses other machines reach a server listening on `addr` at:
/// this machine's own addresses (but loopback and link-local ones) when
/// it listens on every one (`0.0.0.0`, `::`), IPv4 first; else `addr`.
/// A URL naming `0.0.0.0` opens nothing on another machine.
pub fn reachable(addr: SocketAddr) -> Vec<SocketAddr> {
    if !addr.ip().is_unspecified() {
        return vec![addr];
    }
    let mut out: Vec<SocketAddr> = interface_addresses()
        .into_iter()
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
        .filter(|ip| match ip {
            IpAddr::V4(v4) => !v4.is_link_local(),
            // Link-local IPv6 needs a zone a URL cannot carry.
            IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) != 0xfe80 && addr.is_ipv6(),
        })
        .map(|ip| SocketAddr::new(ip, addr.port()))
        .collect();
    out.sort_by_key(|a| (a.is_ipv6(), *a));
    out.dedup();
    if out.is_empty() {
        out.push(addr);
    }
    out
}

/// Every address of this machine's network interfaces.
#[cfg(unix)]
fn interface_addresses() -> Vec<IpAddr> {
    let mut out = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list that stays valid
    // until freeifaddrs; each node's ifa_addr is null or points to a
    // sockaddr of the family it names.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return out;
        }
        let mut node = list;
        while !node.is_null() {
            let a = (*node).ifa_addr;
            if !a.is_null() {
                match i32::from((*a).sa_family) {
                    libc::AF_INET => {
                        let v4 = &*(a as *const libc::sockaddr_in);
                        out.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr))));
                    }
                    libc::AF_INET6 => {
                        let v6 = &*(a as *const libc::sockaddr_in6);
                        out.push(IpAddr::V6(Ipv6Addr::from(v6.sin6_addr.s6_addr)));
                    }
                    _ => {}
                }
            }
            node = (*node).ifa_next;
        }
        libc::freeifaddrs(list);
    }
    out
}

/// Elsewhere the addresses are not read: the URL names the address
/// listened on.
#[cfg(not(unix))]
fn interface_addresses() -> Vec<IpAddr> {
    Vec::new()
}

/// Serve until the process is stopped. `listening` is told the
/// addresses once bound (the first is the one to print). With a
/// database, it is connected to (and its tables checked) before anything
/// listens.
pub fn run(opts: Options, listening: impl FnOnce(&[SocketAddr])) -> Result<(), ServeError> {
    let ips = addresses(&opts)?;
    // Made, and dropped, outside the server's runtime: the database's
    // connections each hold a runtime of their own.
    let served = match &opts.db {
        Some(url) => Served::Database(
            crate::read::serving(url, REQUEST_TIMEOUT).map_err(|e| ServeError(e.to_string()))?,
        ),
        None => Served::Index(Box::new(State::new(opts.live.clone()))),
    };
    let app = Arc::new(App {
        served,
        trees: Default::default(),
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("pi-index-serve")
        .enable_all()
        .build()
        .map_err(|e| ServeError(format!("cannot start the server's threads: {e}")))?;
    let done = rt.block_on(serve(opts, ips, app.clone(), listening));
    drop(rt);
    drop(app);
    done
}

async fn serve(
    opts: Options,
    ips: Vec<IpAddr>,
    app: Arc<App>,
    listening: impl FnOnce(&[SocketAddr]),
) -> Result<(), ServeError> {
    let mut listeners = Vec::new();
    let mut port = opts.port;
    for (i, ip) in ips.iter().enumerate() {
        match tokio::net::TcpListener::bind((*ip, port)).await {
            Ok(l) => {
                if port == 0 {
                    // ::1 on the same port as 127.0.0.1.
                    port = l.local_addr().map_or(0, |a| a.port());
                }
                listeners.push(l);
            }
            // No IPv6 loopback on this machine: 127.0.0.1 is enough.
            Err(_) if i > 0 => {}
            Err(e) => {
                return Err(ServeError(format!(
                    "cannot listen on {}: {e}{}",
                    SocketAddr::new(*ip, port),
                    if e.kind() == std::io::ErrorKind::AddrInUse {
                        " (another program has that port: pass --port N, or --port 0 for any free one)"
                    } else {
                        ""
                    }
                )))
            }
        }
    }
    let addrs: Vec<SocketAddr> = listeners
        .iter()
        .filter_map(|l| l.local_addr().ok())
        .collect();
    let guard = Arc::new(Guard::web(
        &addrs,
        opts.token.clone(),
        opts.bind.is_some(),
        BOUNDS,
    ));
    if opts.live.refresh && app.served.index().is_some() {
        refresher(app.clone(), opts.refresh_every);
    }
    listening(&addrs);
    let router = router(app, guard);
    let mut tasks = Vec::new();
    for l in listeners {
        let router = router.clone();
        // A request with a body is refused (by the guard) without reading
        // it.
        tasks.push(tokio::spawn(crate::http::serve(l, CONNECTIONS, router)));
    }
    for t in tasks {
        if let Err(e) = t.await {
            return Err(ServeError(format!("the server stopped: {e}")));
        }
    }
    Ok(())
}

/// The background refresh: now, then as soon as the watch of the
/// session directories sees a change (so that a page polling
/// `/api/status` learns of a message Pi appended within its next poll),
/// and at least every `every` (when the watch cannot say what changed,
/// that is a full check). One that another build kept out, or that
/// failed, is tried again after `every`, not at once. Never two at once.
fn refresher(app: Arc<App>, every: Duration) {
    let _ = std::thread::Builder::new()
        .name("pi-index-refresh".into())
        .spawn(move || {
            let Some(state) = app.served.index() else {
                return;
            };
            loop {
                let done = state.refresh_now();
                if matches!(done.status, RefreshStatus::Busy | RefreshStatus::Failed) {
                    std::thread::sleep(every);
                }
                state.wait_for_change(every);
            }
        });
}

/// Every route, behind the guard: one table, whatever the source.
pub(crate) fn router(app: Arc<App>, guard: Arc<Guard>) -> Router {
    Router::new()
        .route("/session/", get(session::by_query))
        .route("/session/{id}", get(session::page))
        .route("/session/{id}/raw", get(session::raw))
        .route("/api/search", get(api::search))
        .route("/api/sessions", get(api::sessions))
        .route("/api/session/{id}", get(api::session))
        .route("/api/stats", get(api::stats))
        .route("/api/status", get(api::status))
        .route("/", get(pages::search))
        .route("/stats", get(pages::stats))
        .route("/assets/{name}", get(assets::serve))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(guard, guard::check))
        .with_state(app)
}
