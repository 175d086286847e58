//! What every handler of the web view shares: what it reads (the local
//! index kept fresh, or the team database), the trees of the sessions
//! read last, and the limits every request is held to.

use std::fs::File;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;

use crate::live::{Reading, Served};
use crate::pi::tree::Skeleton;
use crate::read::{Kind, ReadError};

/// The most results one request returns (`limit` past it: 400).
pub const MAX_PAGE: usize = 100;
/// Requests worked on at once, whoever sent them (more: 503).
pub const MAX_IN_FLIGHT: usize = 16;
/// Requests one client address has in flight at once (more: 429).
pub const MAX_PER_CLIENT: usize = 8;
/// The bytes of the index's files the server keeps mapped in its memory
/// between requests, at most: past it, their pages are dropped (they stay
/// in the page cache; see [`crate::live::State::release_if_over`]). It
/// is sized to hold what the usual searches and the session list read of
/// a typical index
/// ([docs/performance.md](../../docs/performance.md#the-servers)).
pub const MAX_MAPPED: u64 = 64 << 20;
/// A request that takes longer is answered 503 (its work is dropped).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// An answer still being sent after this long is cut (the raw download
/// of a session file is the only long one).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(120);
/// Connections open at once, and how long a connection may take to send
/// a request's head or stay idle ([`crate::http`]).
pub const CONNECTIONS: crate::http::Limits = crate::http::Limits {
    max_connections: 256,
    head_timeout: Duration::from_secs(5),
    keep_alive: Duration::from_secs(30),
};

/// Why a request cannot be answered.
#[derive(Debug)]
pub enum Failure {
    /// The request is wrong (400).
    Bad(String),
    /// No such session (404).
    NotFound(String),
    /// No index to answer from (503).
    Unavailable(String),
}

impl Failure {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            Failure::Bad(_) => StatusCode::BAD_REQUEST,
            Failure::NotFound(_) => StatusCode::NOT_FOUND,
            Failure::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// What to tell the person.
    pub fn message(&self) -> &str {
        match self {
            Failure::Bad(m) | Failure::NotFound(m) | Failure::Unavailable(m) => m,
        }
    }
}

impl From<ReadError> for Failure {
    fn from(e: ReadError) -> Failure {
        let message = e.to_string();
        match e.kind() {
            Kind::Bad => Failure::Bad(message),
            Kind::NotFound => Failure::NotFound(message),
            Kind::Unavailable => Failure::Unavailable(message),
        }
    }
}

/// Sessions whose tree is kept.
const CACHED: usize = 4;

/// What every handler shares.
pub struct App {
    /// What the pages and the API read.
    pub served: Served,
    /// Sessions' trees, read once per file version.
    pub trees: Trees,
}

impl App {
    /// What a request reads: the index as of its last commit (no
    /// refresh: a background thread keeps it fresh), or the database.
    pub fn reading(&self) -> Result<Reading<'_>, Failure> {
        self.served.current().map_err(Failure::Unavailable)
    }

    /// Run `work` on the blocking pool (searches and file reads block).
    pub(crate) async fn blocking<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&App) -> T + Send + 'static,
    ) -> Result<T, String> {
        let app = self.clone();
        tokio::task::spawn_blocking(move || {
            let out = work(&app);
            if let Some(state) = app.served.index() {
                state.release_if_over(MAX_MAPPED);
            }
            out
        })
        .await
        .map_err(|e| format!("internal error ({e}); please report it: the server goes on"))
    }
}

/// A tree kept: the file's path, size and time when it was read.
type Held = (String, u64, std::time::SystemTime, Arc<Skeleton>);

/// The trees of the last few sessions read, by file version.
#[derive(Default)]
pub struct Trees {
    held: Mutex<Vec<Held>>,
}

impl Trees {
    /// The tree of the file at `path`, opened as `file`, as it is now.
    pub fn get(&self, path: &str, file: &File) -> std::io::Result<Arc<Skeleton>> {
        let meta = file.metadata()?;
        let (len, mtime) = (meta.len(), meta.modified()?);
        {
            let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(s) = held
                .iter()
                .find(|h| h.0 == path && h.1 == len && h.2 == mtime)
            {
                return Ok(s.3.clone());
            }
        }
        let sk = Arc::new(Skeleton::read(file)?);
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.retain(|h| h.0 != path);
        held.insert(0, (path.to_owned(), len, mtime, sk.clone()));
        held.truncate(CACHED);
        Ok(sk)
    }
}

/// The limits every request of the web view is held to.
pub const BOUNDS: crate::http::guard::Bounds = crate::http::guard::Bounds {
    in_flight: MAX_IN_FLIGHT,
    per_client: MAX_PER_CLIENT,
    request_timeout: REQUEST_TIMEOUT,
    response_timeout: RESPONSE_TIMEOUT,
};

/// Anything else: 404, said plainly.
pub(crate) async fn not_found() -> axum::response::Response {
    crate::http::guard::refuse(
        StatusCode::NOT_FOUND,
        "no such page: the pages are /, /session/ID and /stats, the API is under /api/",
    )
}
