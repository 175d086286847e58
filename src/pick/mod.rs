//! The picker (`pi-index pick`): a full-screen search over the index
//! that ends in "take me back there" (Pi resumes the chosen session).
//!
//! This module is the picker without a terminal: everything but reading
//! keys from a real terminal and starting Pi, which the command line
//! does. Tests and the latency bench drive it with ratatui's
//! `TestBackend`.
//!
//! - [`app`]: the state machine: keys in, search and preview jobs out,
//!   their answers in, the choice at the end.
//! - [`view`]: the frame drawn from that state (every string from a
//!   session through [`text`], so through [`crate::output::sanitize()`]).
//! - [`rows`]: a query to one row per session (the library's
//!   session-level search), and the hits inside one session.
//! - [`preview`]: the messages around a hit, read from the index.
//! - [`worker`]: a thread that runs the newest job, so typing never waits
//!   for a search.
//! - [`refresh`]: the index opened, and brought up to date in the
//!   background.
//!
//! ```
//! use pi_index::pick::{app::App, settle};
//! use ratatui::{backend::TestBackend, Terminal};
//!
//! let mut app = App::new("tokio", false, false);
//! settle(&mut app, None); // no index: no rows
//! let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
//! terminal.draw(|frame| app.draw(frame)).unwrap();
//! ```

pub mod app;
pub mod input;
pub mod preview;
pub mod refresh;
pub mod rows;
pub mod text;
pub mod view;
pub mod worker;
pub mod wrapped;

use std::sync::{Arc, OnceLock};

use tantivy::Searcher;

use crate::index::{IndexError, PiIndex};
use crate::search::query::Now;
use crate::search::SessionRow;
use app::{App, HitsDone, HitsJob, PreviewDone, PreviewJob, SearchDone, SearchJob};

/// The index as of one commit: what a search or a preview reads.
#[derive(Clone)]
pub struct View {
    /// The index.
    pub pi: PiIndex,
    /// A searcher over one committed state of it.
    pub searcher: Searcher,
    /// Every session, newest first, once read (the listing of an empty
    /// query: 2,118 sessions take ~8 ms to read, and they only change
    /// with the commit).
    listing: Arc<OnceLock<Vec<Arc<SessionRow>>>>,
}

impl View {
    /// A view of `pi` through `searcher`.
    pub fn new(pi: PiIndex, searcher: Searcher) -> View {
        View {
            pi,
            searcher,
            listing: Arc::default(),
        }
    }

    /// The index at `dir`, as of its last commit.
    pub fn open(dir: &std::path::Path) -> Result<View, IndexError> {
        let pi = PiIndex::open(dir)?;
        let searcher = pi.searcher()?;
        Ok(View::new(pi, searcher))
    }

    /// Every session, newest first ([`PiIndex::sessions`]), read once.
    pub fn listing(&self) -> Result<&[Arc<SessionRow>], IndexError> {
        if let Some(l) = self.listing.get() {
            return Ok(l);
        }
        let read: Vec<Arc<SessionRow>> = self
            .pi
            .sessions(&self.searcher)?
            .into_iter()
            .map(Arc::new)
            .collect();
        Ok(self.listing.get_or_init(|| read))
    }
}

/// Run a search job on `view` (no index yet: no rows).
pub fn run_search(view: Option<&View>, job: &SearchJob) -> SearchDone {
    crate::failpoint::pick_panic("worker", &job.query.text);
    let result = match view {
        Some(v) => rows::rows(v, &job.query, job.limit, Now::system()).map_err(|e| e.to_string()),
        None => Ok(rows::Rows::default()),
    };
    SearchDone {
        generation: job.generation,
        result,
    }
}

/// Run a hits-in-a-session job on `view`.
pub fn run_hits(view: Option<&View>, job: &HitsJob) -> HitsDone {
    let result = match view {
        Some(v) => rows::session_hits(&v.pi, &v.searcher, &job.query, &job.session, Now::system())
            .map_err(|e| e.to_string()),
        None => Ok(Vec::new()),
    };
    HitsDone {
        generation: job.generation,
        result,
    }
}

/// Run a preview job on `view`.
pub fn run_preview(view: Option<&View>, job: &PreviewJob) -> PreviewDone {
    let result = match view {
        Some(v) => {
            preview::read(&v.pi, &v.searcher, &job.key, preview::CONTEXT).map_err(|e| e.to_string())
        }
        None => Err("no index yet".into()),
    };
    PreviewDone {
        generation: job.generation,
        key: job.key.clone(),
        result,
    }
}

/// Run every job the app asks for, here and now, until it asks for
/// none: what the event loop does on its worker threads, for tests and
/// benches.
pub fn settle(app: &mut App, view: Option<&View>) {
    loop {
        let mut ran = false;
        if let Some(job) = app.take_search() {
            app.searched(run_search(view, &job));
            ran = true;
        }
        if let Some(job) = app.take_hits() {
            app.hits_found(run_hits(view, &job));
            ran = true;
        }
        if let Some(job) = app.take_preview() {
            app.previewed(run_preview(view, &job));
            ran = true;
        }
        if !ran {
            return;
        }
    }
}
