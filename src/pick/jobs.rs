//! The picker's jobs run against a [`View`] of the index: a search, the
//! hits inside one session, a preview.

use super::app::{App, HitsDone, HitsJob, PreviewDone, PreviewJob, SearchDone, SearchJob};
use super::source::View;
use super::{preview, rows};
use crate::search::query::Now;

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
        Some(v) => rows::session_hits(v.source.as_ref(), &job.query, &job.session, Now::system())
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
        Some(v) => v
            .source
            .preview(&job.session, &job.key.target, preview::CONTEXT)
            .map_err(|e| e.to_string()),
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
