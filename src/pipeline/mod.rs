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
//! - `plan`: what changed since the last commit, decided under the
//!   writer's lock when another build committed meanwhile;
//! - `update`: one file's update of the index (new, grown or rewritten);
//! - `moves`: files that moved, and files outside the build's roots;
//! - this module: the build loop over every file.

mod check;
mod moves;
mod parse;
mod plan;
mod report;
mod update;

pub use check::{check, CheckReport, FileDefects, CHECK_LIST_CAP};
pub use parse::{parse_session, read_session};
pub use report::{
    BuildError, BuildOptions, BuildReport, DamageReport, Moved, NotIndexed, Rebuild, StaleRoot,
    Timings, TruncationReport, DAMAGE_LIST_CAP, DEFAULT_THREAD_MEMORY_MB,
};

use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;

use crate::discover::{discover, Candidate, Discovered, Problem};
use crate::index::writer::{IndexBuilder, IndexStore};
use crate::index::{BuildInfo, IndexError};
use plan::{Indexed, Plan};
use update::{process, How, Outcome, Work};

/// Run a build: incremental unless `opts.full`, the index is new, or it
/// was built with other kinds or another schema.
///
/// The stages, in order: open the index, discover the files, plan what
/// changed, take the writer (and plan again if another build committed
/// meanwhile), parse and index, commit, report.
pub fn build(
    opts: &BuildOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BuildReport, BuildError> {
    run(opts, None, &CheckReport::default(), progress)
}

/// An incremental build that looks only at `changed`: session files and
/// directories below `opts.roots` that a watcher saw change
/// ([`crate::watch`]). Those that exist are read as `build` reads them
/// (new, grown, rewritten; a directory is walked); those indexed that no
/// longer exist are removed, or moved when a file of the same session
/// appeared among `changed`. Nothing else is walked or stat'ed, so its
/// cost is what changed, not the corpus. A rebuild (a new index, other
/// kinds) still reads every file.
pub fn build_changed(
    opts: &BuildOptions,
    changed: &[std::path::PathBuf],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BuildReport, BuildError> {
    run(opts, Some(changed), &CheckReport::default(), progress)
}

/// An incremental build that also mends what [`check`] found: the files
/// with defects are read again from their first byte (whatever the index
/// held of them is replaced), and documents without a session record are
/// removed (`pi-index check --repair`). Everything else is left as an
/// incremental build leaves it.
pub fn repair(
    opts: &BuildOptions,
    found: &CheckReport,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BuildReport, BuildError> {
    run(opts, None, found, progress)
}

fn run(
    opts: &BuildOptions,
    changed: Option<&[std::path::PathBuf]>,
    repair: &CheckReport,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BuildReport, BuildError> {
    let started = Instant::now();
    let cpu_started = crate::cpu::process();
    let pool = parse_pool(opts.threads)?;
    let store = IndexStore::open_or_create(&opts.index_dir, opts.full)?;
    // A partial build of a new index, or of one built otherwise, would
    // leave most files out: it reads them all.
    let changed = changed.filter(|_| {
        !opts.full
            && store.opened == crate::index::writer::Opened::Existing
            && store
                .info
                .as_ref()
                .is_some_and(|i| i.kinds == opts.kinds.to_list())
    });
    // The files found and what the index holds of them, read side by
    // side (a walk waits on the kernel, the states on the index's
    // columns).
    let (found, indexed) = rayon::join(
        || match changed {
            Some(paths) => crate::discover::discover_changed(&opts.roots, paths),
            None => discover_files(&opts.roots),
        },
        || Indexed::read(&store, opts),
    );
    let discovered = Instant::now();
    let cpu_discovered = crate::cpu::process();
    let indexed = indexed?;
    let groups_held = indexed.groups_held;
    let unsaved = indexed.unsaved.clone();
    let mut plan = Plan::make(&store, opts, indexed, &found, changed, repair)?;
    if plan.is_empty() {
        // Nothing changed: no writer, no lock, no commit. What the plan
        // compared (a path and a state of every file) is freed on another
        // thread, off the caller's time
        // ([docs/performance.md](../../docs/performance.md#discovery-and-the-plan)).
        let report = unchanged_report(opts, &found, &plan, started, discovered);
        // The states as read, for the next build with nothing to do (a
        // file that cannot be written is only work the next one does
        // again).
        if let Some(mark) = unsaved {
            let _ = crate::index::saved::states::save(&store.pi.dir, &mark, &plan.states);
        }
        rayon::spawn(move || drop((found, plan)));
        // The copy groups of this commit, if its build did not leave them.
        if !groups_held {
            crate::index::saved::groups::ensure(&store.pi);
        }
        return Ok(report);
    }

    crate::failpoint::point("before-writer");
    let index = store.writer(opts.threads.max(1), opts.thread_memory)?;
    if store.committed_opstamp()? != plan.seen && !crate::failpoint::no_replan() {
        // Another build committed between our plan and our lock: what it
        // indexed must not be indexed again, so decide again, under the
        // lock, against the commit ours will replace.
        let indexed = Indexed::read(&store, opts)?;
        plan = Plan::make(&store, opts, indexed, &found, changed, repair)?;
        if plan.is_empty() {
            drop(index);
            return Ok(unchanged_report(opts, &found, &plan, started, discovered));
        }
    }
    if plan.rebuild.is_none() {
        index.merge_in_tiers();
    }
    let workers_before = pool.broadcast(|_| crate::cpu::thread());
    let outcomes = match parse_and_index(&pool, &store, &index, &plan, &found, opts, progress) {
        Ok(outcomes) => outcomes,
        Err(e) => return Err(index.abandon(e).into()),
    };
    let parsed = Instant::now();
    let cpu_parsed = crate::cpu::process();
    let workers_after = pool.broadcast(|_| crate::cpu::thread());
    let mut report = planned_report(opts, &found, &plan);
    add_outcomes(&mut report, &found, outcomes);

    crate::failpoint::point("before-commit");
    let committing = Instant::now();
    // The copy groups of the committed state: only a search's shortcut
    // (without them a search merges copies itself), so failing to save
    // them fails nothing.
    let save_groups = |pi: &crate::index::PiIndex, searcher: &tantivy::Searcher| {
        if crate::index::saved::groups::save(pi, searcher).is_err() {
            crate::index::saved::groups::remove(&pi.dir);
        }
    };
    let (info, phases): (BuildInfo, _) = index.commit(
        &opts.kinds.to_list(),
        now_ms(),
        &opts.locations,
        &save_groups,
    )?;
    report.sessions = info.sessions;
    report.segments = Some(phases.segments as u64);
    finish_report(&mut report, started, discovered, parsed, Some(committing));
    let t = &mut report.timings;
    t.discover_cpu_ms = crate::cpu::ms_between(cpu_started, cpu_discovered);
    t.parse_cpu_ms = crate::cpu::ms_between(cpu_discovered, cpu_parsed);
    t.commit_cpu_ms = crate::cpu::ms_between(cpu_parsed, crate::cpu::process());
    t.flush_ms = Some(phases.flush_ms);
    t.merge_ms = Some(phases.merge_ms);
    t.merge_cpu_ms = phases.merge_cpu_ms;
    t.groups_ms = Some(phases.after_ms);
    t.writers = Some(phases.writers);
    t.workers_cpu_ms = workers_before
        .into_iter()
        .zip(workers_after)
        .filter_map(|(a, b)| crate::cpu::ms_between(a, b))
        .collect();
    Ok(report)
}

/// The pool the files are parsed (and indexed) on.
fn parse_pool(threads: usize) -> Result<rayon::ThreadPool, BuildError> {
    let threads = threads.max(1);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("pi-index-parse-{i}"))
        .build()
        .map_err(|source| BuildError::Threads { threads, source })
}

/// The candidate files below `roots` (disturbed by fault injection in
/// tests).
fn discover_files(roots: &[std::path::PathBuf]) -> Discovered {
    let found = discover(roots);
    for c in &found.files {
        crate::failpoint::disturb(crate::failpoint::Disturb::Vanish, &c.path);
    }
    found
}

/// What the plan alone says: the counts known before any file is read.
fn planned_report(opts: &BuildOptions, found: &Discovered, plan: &Plan) -> BuildReport {
    let not_indexed = |problems: &[Problem]| {
        problems
            .iter()
            .map(|Problem { path, error }| NotIndexed {
                path: path.to_string_lossy().into_owned(),
                reason: error.clone(),
            })
            .collect()
    };
    BuildReport {
        files_scanned: found.files.len() as u64,
        kinds: opts.kinds.to_list(),
        rebuilt: plan.rebuild.clone(),
        errors: not_indexed(&found.problems),
        skipped: not_indexed(&found.skipped),
        stale_roots: plan.stale_roots.clone(),
        files_stale: plan.stale,
        files_pruned: plan.pruned.len() as u64,
        files_moved: plan.moved.len() as u64,
        moved: plan.moves(),
        roots: opts.locations.clone(),
        files_unchanged: plan.unchanged,
        files_deleted: plan.deleted.len() as u64,
        ..BuildReport::default()
    }
}

/// The report of a build that found nothing to write.
fn unchanged_report(
    opts: &BuildOptions,
    found: &Discovered,
    plan: &Plan,
    started: Instant,
    discovered: Instant,
) -> BuildReport {
    let mut report = planned_report(opts, found, plan);
    report.sessions = plan.states.len() as u64;
    finish_report(&mut report, started, discovered, discovered, None);
    report
}

/// Remove what the plan removes, then read every file of its work on the
/// pool, largest first, queueing documents as each file is done. A file
/// whose reading panics is withdrawn and reported; an error of the index
/// itself abandons the build.
fn parse_and_index(
    pool: &rayon::ThreadPool,
    store: &IndexStore,
    index: &IndexBuilder,
    plan: &Plan,
    found: &Discovered,
    opts: &BuildOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<(usize, Outcome)>, IndexError> {
    let searcher = store.pi.searcher()?;
    if plan.rebuild.is_some() {
        index.delete_all()?;
    }
    for p in plan.removed() {
        index.delete_path(p)?;
    }
    for &key in &plan.orphans {
        index.delete_session_key(key)?;
    }
    let agents = crate::discover::root_agents(&opts.locations);
    let work = Work {
        kinds: opts.kinds,
        index,
        searcher: &searcher,
        pi: &store.pi,
        states: &plan.states,
        agents: &agents,
    };
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::with_capacity(plan.work.len()));
    let first_error: Mutex<Option<IndexError>> = Mutex::new(None);
    // Largest files first, each its own job: a thread left without work
    // takes the next file, however the sizes fall (rayon otherwise hands
    // each thread runs of neighbouring files, and a run of one project's
    // big files ended a build on one core,
    // [docs/performance.md](../../docs/performance.md#discovery-and-the-plan)).
    let read_order =
        |&a: &usize, &b: &usize| Candidate::read_order(&found.files[a], &found.files[b]);
    let mut order = plan.work.clone();
    order.sort_unstable_by(read_order);
    index.plan_bytes(order.iter().map(|&i| found.files[i].len).sum());
    pool.install(|| {
        order.par_iter().with_max_len(1).for_each(|&i| {
            let c = &found.files[i];
            // An error of the index (a full disk) ends the build: the
            // files not yet read are left for the next one.
            if first_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_some()
            {
                return;
            }
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
                    let mut r = results.lock().unwrap_or_else(|p| p.into_inner());
                    r.push((i, o));
                    if r.len() == 1 {
                        crate::failpoint::point("after-first-file");
                    }
                }
                Err(e) => {
                    first_error
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get_or_insert(e);
                }
            }
            index.file_read(c.len);
            progress(c.len);
        });
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_unstable_by(|(a, _), (b, _)| read_order(a, b));
    Ok(results)
}

/// Count what each file's reading did into the report, and list its
/// damage, recoveries and truncations (each list in path and line order,
/// capped).
fn add_outcomes(report: &mut BuildReport, found: &Discovered, outcomes: Vec<(usize, Outcome)>) {
    let mut damaged = Vec::new();
    let mut recovered_lines = Vec::new();
    let mut truncated: Vec<TruncationReport> = Vec::new();
    for (i, outcome) in outcomes {
        let path = found.files[i].path.to_string_lossy().into_owned();
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
                    report.newer_versions.push(NotIndexed {
                        path,
                        reason: format!("version {v} is newer than 3: read on a best-effort basis"),
                    });
                }
            }
            Outcome::Rejected(r) => {
                report.files_rejected += 1;
                report.rejected.push(NotIndexed {
                    path,
                    reason: r.to_string(),
                });
            }
            Outcome::Failed(e) => {
                report.files_failed += 1;
                report.errors.push(NotIndexed { path, reason: e });
            }
        }
    }
    report.damaged_more = capped(&mut damaged, |a, b| {
        (&a.path, a.line).cmp(&(&b.path, b.line))
    });
    report.damaged = damaged;
    report.recovered_more = capped(&mut recovered_lines, |a, b| {
        (&a.path, a.line).cmp(&(&b.path, b.line))
    });
    report.recovered = recovered_lines;
    report.messages_truncated_more = capped(&mut truncated, |a, b| {
        (&a.path, a.line).cmp(&(&b.path, b.line))
    });
    report.messages_truncated = truncated;
    report.rejected.sort_by(|a, b| a.path.cmp(&b.path));
}

/// Sort `list` in `order` and keep its first [`DAMAGE_LIST_CAP`]; returns
/// how many were left out.
fn capped<T>(list: &mut Vec<T>, order: impl Fn(&T, &T) -> std::cmp::Ordering) -> u64 {
    list.sort_by(order);
    let more = list.len().saturating_sub(DAMAGE_LIST_CAP) as u64;
    list.truncate(DAMAGE_LIST_CAP);
    more
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
        ..Timings::default()
    };
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::saved::states as saved_states;
    use crate::index::PiIndex;

    /// The file states a build with nothing to do saves beside the index
    /// are those of the index's columns; the next such build plans from
    /// them (a state altered in the file makes its file read again); a
    /// commit, or a byte changed, makes them ignored and saved again.
    #[test]
    fn saved_file_states_are_the_columns_and_plan_the_next_build() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("sessions");
        std::fs::create_dir_all(&root).unwrap();
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions");
        for name in [
            "assistant-text-thinking-toolcall.jsonl",
            "branch-abandoned.jsonl",
            "complete-last-line-no-newline.jsonl",
        ] {
            std::fs::copy(fixtures.join(name), root.join(name)).unwrap();
        }
        let index = t.path().join("index");
        let opts = BuildOptions::new(vec![root.clone()], index.clone())
            .threads(2)
            .thread_memory(32 << 20);
        let file = index.join(saved_states::FILE[0]);
        let build = || build(&opts, &|_| {}).unwrap();
        // What the columns say, and the file for the current state.
        let columns = || PiIndex::open(&index).unwrap().file_states().unwrap();
        let mark = || {
            let pi = PiIndex::open(&index).unwrap();
            saved_states::mark(pi.searcher().unwrap().segment_readers())
        };

        assert_eq!(build().files_indexed, 3);
        assert!(!file.exists(), "a build that commits leaves it");
        let report = build();
        assert_eq!((report.files_indexed, report.files_unchanged), (0, 3));
        let saved = saved_states::read(&index, &mark()).expect("saved for this state");
        assert_eq!(saved.len(), 3);
        assert_eq!(saved, columns());

        // Planned from the file: a size it says changed is a file to read.
        let mut altered = saved.clone();
        let (path, state) = altered.iter_mut().next().unwrap();
        let path = path.clone();
        state.size += 1;
        saved_states::save(&index, &mark(), &altered).unwrap();
        let report = build();
        assert_eq!(report.files_indexed, 1, "{path} read again");
        // That build committed: the file is of the state before.
        assert_eq!(saved_states::read(&index, &mark()), None);
        let report = build();
        assert_eq!((report.files_indexed, report.files_unchanged), (0, 3));
        assert_eq!(saved_states::read(&index, &mark()), Some(columns()));

        // A byte changed: ignored, and saved again.
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x20;
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(saved_states::read(&index, &mark()), None);
        let report = build();
        assert_eq!((report.files_indexed, report.files_unchanged), (0, 3));
        assert_eq!(saved_states::read(&index, &mark()), Some(columns()));
    }
}
