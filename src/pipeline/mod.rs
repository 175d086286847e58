//! The build pipeline, end to end: discover → fingerprint → map and split
//! → parse in parallel → extract → index.
//!
//! Files run in parallel on a rayon pool, largest first; a file larger than
//! [`crate::source::CHUNK_BYTES`] is itself split into
//! newline-aligned chunks parsed in parallel, so one huge session still uses
//! every core. Each worker thread keeps one
//! [`ChunkParser`](crate::pi::ChunkParser) (simd-json buffers and a tape)
//! for its whole life. Documents are queued to tantivy's own indexing
//! threads as soon as a file is done, so parsing and indexing overlap, and
//! the build commits once at the end.
//!
//! - `report`: the options and what a build reports;
//! - `parse`: one file's entries, parsed in chunks;
//! - `update`: one file's update of the index (new, grown or rewritten);
//! - `moves`: files that moved, and files outside the build's roots;
//! - this module: the build loop over every file.

mod moves;
mod parse;
mod report;
mod update;

pub use parse::{parse_session, read_session};
pub use report::{
    BuildError, BuildOptions, BuildReport, DamageReport, Moved, Rebuild, Skipped, StaleRoot,
    Timings, TruncationReport, DAMAGE_LIST_CAP,
};

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;

use crate::discover::{discover, Candidate, Problem};
use crate::index::writer::{Fresh, IndexStore};
use crate::index::{BuildInfo, IndexError};
use update::{process, How, Outcome, Work};

/// Run a build: incremental unless `opts.full`, the index is new, or it
/// was built with other kinds or another schema.
pub fn build(
    opts: &BuildOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BuildReport, BuildError> {
    let started = Instant::now();
    let threads = opts.threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("pi-index-parse-{i}"))
        .build()
        .map_err(|source| BuildError::Threads { threads, source })?;

    let store = IndexStore::open_or_create(&opts.index_dir, opts.full)?;
    let kinds_list = opts.kinds.to_list();
    let rebuild = match (&store.fresh, &store.info) {
        (Fresh::New, _) => Some(Rebuild::NewIndex),
        (Fresh::SchemaChanged, _) => Some(Rebuild::SchemaChanged),
        (Fresh::Recovered, _) => Some(Rebuild::Recovered),
        _ if opts.full => Some(Rebuild::Full),
        (_, None) => Some(Rebuild::Unfinished),
        (_, Some(info)) if info.kinds != kinds_list => Some(Rebuild::KindsChanged {
            from: info.kinds.clone(),
            to: kinds_list.clone(),
        }),
        _ => None,
    };
    let states = if rebuild.is_none() {
        store.file_states()?
    } else {
        HashMap::new()
    };

    let found = discover(&opts.roots);
    for c in &found.files {
        crate::failpoint::disturb(crate::failpoint::Disturb::Vanish, &c.path);
    }
    let discovered = Instant::now();
    let mut report = BuildReport {
        files_scanned: found.files.len() as u64,
        kinds: kinds_list.clone(),
        rebuilt: rebuild.clone(),
        ..BuildReport::default()
    };
    for Problem { path, error } in found.problems {
        report.errors.push(Skipped {
            path: path.to_string_lossy().into_owned(),
            reason: error,
        });
    }
    for Problem { path, error } in found.skipped {
        report.skipped.push(Skipped {
            path: path.to_string_lossy().into_owned(),
            reason: error,
        });
    }

    // Files indexed before and not found now: moved, gone, or outside
    // this build's roots (kept, unless --prune).
    let seen: std::collections::HashSet<String> = found
        .files
        .iter()
        .map(|c| c.path.to_string_lossy().into_owned())
        .collect();
    let roots = moves::canonical_roots(&opts.roots);
    let vanished: Vec<&str> = states
        .keys()
        .filter(|p| !seen.contains(*p) && !Path::new(p).exists())
        .map(String::as_str)
        .collect();
    let moved = if vanished.is_empty() {
        Vec::new()
    } else {
        let fresh: Vec<&Candidate> = found
            .files
            .iter()
            .filter(|c| !states.contains_key(c.path.to_string_lossy().as_ref()))
            .collect();
        if fresh.is_empty() {
            Vec::new()
        } else {
            moves::find_moves(&vanished, &fresh, &states, &store.pi, &store.pi.searcher()?)?
        }
    };
    let moved_from: std::collections::HashSet<&str> =
        moved.iter().map(|(from, _)| from.as_str()).collect();
    let deleted: Vec<&str> = vanished
        .iter()
        .copied()
        .filter(|p| !moved_from.contains(p) && moves::under_roots(&roots, p))
        .collect();
    let stale: std::collections::HashSet<&str> = states
        .keys()
        .map(String::as_str)
        .filter(|p| !seen.contains(*p) && !moved_from.contains(p) && !moves::under_roots(&roots, p))
        .collect();
    if !stale.is_empty() {
        let by_root = store.file_roots(&stale)?;
        let mut counts: std::collections::BTreeMap<String, u64> = Default::default();
        for p in &stale {
            let root = by_root
                .get(*p)
                .cloned()
                .unwrap_or_else(|| "(unknown)".into());
            *counts.entry(root).or_default() += 1;
        }
        report.stale_roots = counts
            .into_iter()
            .map(|(root, sessions)| StaleRoot {
                root,
                sessions,
                pruned: opts.prune,
            })
            .collect();
    }
    let pruned: Vec<&str> = if opts.prune {
        stale.iter().copied().collect()
    } else {
        Vec::new()
    };
    report.files_stale = stale.len() as u64;
    report.files_pruned = pruned.len() as u64;
    report.files_moved = moved.len() as u64;
    report.moved = moved
        .iter()
        .map(|(from, to)| Moved {
            from: from.clone(),
            to: to.clone(),
        })
        .collect();
    report.roots = opts.locations.clone();
    let unchanged = |c: &Candidate| {
        states
            .get(c.path.to_string_lossy().as_ref())
            .is_some_and(|st| st.unchanged(&c.identity))
    };
    let work_files: Vec<&Candidate> = found.files.iter().filter(|c| !unchanged(c)).collect();
    report.files_unchanged = (found.files.len() - work_files.len()) as u64;
    report.files_deleted = deleted.len() as u64;
    // Where sessions were read from is recorded for `stats`: a build that
    // reads other places commits even when no file changed.
    let same_roots = store
        .info
        .as_ref()
        .is_some_and(|i| i.roots == opts.locations);

    if rebuild.is_none()
        && work_files.is_empty()
        && deleted.is_empty()
        && moved.is_empty()
        && pruned.is_empty()
        && same_roots
    {
        // Nothing changed: no writer, no lock, no commit.
        report.sessions = states.len() as u64;
        finish_report(&mut report, started, discovered, discovered, None);
        return Ok(report);
    }

    crate::failpoint::point("before-writer");
    let searcher = store.pi.searcher()?;
    let pi = store.pi.clone();
    let index = store.writer(threads, opts.memory_budget, rebuild.is_none())?;
    if rebuild.is_some() {
        index.delete_all()?;
    }
    for p in deleted.iter().chain(&pruned).chain(moved_from.iter()) {
        index.delete_path(p)?;
    }
    let work = Work {
        kinds: opts.kinds,
        index: &index,
        searcher: &searcher,
        pi: &pi,
        states: &states,
    };
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::with_capacity(work_files.len()));
    let first_error: Mutex<Option<IndexError>> = Mutex::new(None);
    pool.install(|| {
        work_files.par_iter().enumerate().for_each(|(i, c)| {
            // A bug in reading one file must not take the build down: the
            // file's queued documents are withdrawn and it is reported.
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| process(c, &work)))
                    .unwrap_or_else(|payload| {
                        work.index.withdraw_path(&c.path.to_string_lossy());
                        let what = payload
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| payload.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "a panic".into());
                        Ok(Outcome::Failed(format!(
                    "internal error while reading this file ({what}): skipped; please report it"
                )))
                    });
            match outcome {
                Ok(o) => {
                    let mut r = results.lock().expect("results lock");
                    r.push((i, o));
                    if r.len() == 1 {
                        crate::failpoint::point("after-first-file");
                    }
                }
                Err(e) => {
                    first_error.lock().expect("error lock").get_or_insert(e);
                }
            }
            progress(c.len);
        });
    });
    let parsed = Instant::now();
    if let Some(e) = first_error.into_inner().expect("error lock") {
        return Err(index.abandon(e).into());
    }
    let mut results = results.into_inner().expect("results lock");
    results.sort_by_key(|(i, _)| *i);

    let mut damaged = Vec::new();
    let mut recovered_lines = Vec::new();
    let mut truncated: Vec<TruncationReport> = Vec::new();
    for (i, outcome) in results {
        let path = work_files[i].path.to_string_lossy().into_owned();
        match outcome {
            Outcome::Indexed {
                how,
                lines,
                bytes,
                bytes_parsed,
                documents,
                damage,
                recovered,
                truncated: cut,
                newer,
            } => {
                report.files_indexed += 1;
                match how {
                    How::Grown => report.files_grown += 1,
                    How::Replaced => report.files_replaced += 1,
                    How::New => {}
                }
                report.lines_read += lines;
                report.bytes_read += bytes;
                report.bytes_parsed += bytes_parsed;
                report.messages_indexed += documents;
                report.lines_damaged += damage.len() as u64;
                damaged.extend(damage);
                report.lines_recovered += recovered.len() as u64;
                recovered_lines.extend(recovered);
                truncated.extend(cut);
                if let Some(v) = newer {
                    report.newer_versions.push(Skipped {
                        path,
                        reason: format!("version {v} is newer than 3: read on a best-effort basis"),
                    });
                }
            }
            Outcome::Rejected(r) => {
                report.files_rejected += 1;
                report.rejected.push(Skipped {
                    path,
                    reason: r.to_string(),
                });
            }
            Outcome::Failed(e) => {
                report.files_failed += 1;
                report.errors.push(Skipped { path, reason: e });
            }
        }
    }
    damaged.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    report.damaged_more = damaged.len().saturating_sub(DAMAGE_LIST_CAP) as u64;
    damaged.truncate(DAMAGE_LIST_CAP);
    report.damaged = damaged;
    recovered_lines.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    report.recovered_more = recovered_lines.len().saturating_sub(DAMAGE_LIST_CAP) as u64;
    recovered_lines.truncate(DAMAGE_LIST_CAP);
    report.recovered = recovered_lines;
    truncated.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    report.messages_truncated_more = truncated.len().saturating_sub(DAMAGE_LIST_CAP) as u64;
    truncated.truncate(DAMAGE_LIST_CAP);
    report.messages_truncated = truncated;
    report.rejected.sort_by(|a, b| a.path.cmp(&b.path));

    crate::failpoint::point("before-commit");
    let committing = Instant::now();
    let info: BuildInfo = index.commit(&kinds_list, now_ms(), &opts.locations)?;
    report.sessions = info.sessions;
    finish_report(&mut report, started, discovered, parsed, Some(committing));
    Ok(report)
}

fn finish_report(
    report: &mut BuildReport,
    started: Instant,
    discovered: Instant,
    parsed: Instant,
    committing: Option<Instant>,
) {
    let elapsed = started.elapsed();
    let ms = |d: std::time::Duration| d.as_millis() as u64;
    report.elapsed_ms = ms(elapsed);
    report.mb_per_s = report.bytes_read as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9);
    report.timings = Timings {
        discover_ms: ms(discovered - started),
        parse_ms: ms(parsed - discovered),
        commit_ms: committing.map_or(0, |c| ms(c.elapsed())),
    };
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
