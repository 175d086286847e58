//! What the index holds: `pi-index stats`.

use std::collections::BTreeMap;

use serde::Serialize;
use tantivy::collector::Count;
use tantivy::Searcher;

use super::reader::Reader;
use super::types::SessionRow;
use crate::index::{all_messages, tantivy_err, IndexError};
use crate::pi::time::format_millis;
use crate::pi::Role;

/// Sessions and messages of one project directory.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Project {
    /// The session's working directory.
    pub cwd: String,
    /// Sessions there.
    pub sessions: u64,
    /// Documents there.
    pub messages: u64,
}

/// What `pi-index stats` reports.
#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    /// Where the index is.
    pub index: String,
    /// Sessions indexed.
    pub sessions: u64,
    /// Documents indexed.
    pub messages: u64,
    /// Of those, copies of a message that an older session of their
    /// family holds (forks copy their parent's entries): `messages -
    /// copies` distinct messages.
    pub copies: u64,
    /// Sessions with a parent (stated or inferred: see
    /// [`crate::search::family`]).
    pub forks: u64,
    /// Documents per role (roles with none are left out).
    pub messages_by_role: BTreeMap<String, u64>,
    /// Projects with the most sessions, at most 10.
    pub top_projects: Vec<Project>,
    /// The earliest session start.
    pub first: Option<String>,
    /// The latest document.
    pub last: Option<String>,
    /// Bytes the index takes on disk.
    pub index_bytes: u64,
    /// When the last build committed.
    pub built_at: Option<String>,
    /// The opt-in kinds the last build included.
    pub kinds: Option<String>,
    /// Where the last build read sessions from, and why (each with `read`:
    /// whether it existed and was read).
    pub roots: Vec<crate::discover::Location>,
}

/// Gather the statistics.
pub fn stats(
    r: &Reader,
    searcher: &Searcher,
    sessions: &[SessionRow],
) -> Result<Stats, IndexError> {
    let f = &r.pi.fields;
    let err = |e| tantivy_err(&r.pi.dir, e);
    let messages = searcher.search(&*all_messages(f), &Count).map_err(err)? as u64;
    let mut by_role = BTreeMap::new();
    for role in Role::ALL {
        let q = crate::index::u64_is(f.role, role.rank());
        let n = searcher.search(&q, &Count).map_err(err)? as u64;
        if n > 0 {
            by_role.insert(role.as_str().to_owned(), n);
        }
    }
    let mut projects: BTreeMap<String, Project> = BTreeMap::new();
    for s in sessions {
        let cwd = s.cwd.clone().unwrap_or_else(|| "(unknown)".into());
        let p = projects.entry(cwd.clone()).or_insert(Project {
            cwd,
            sessions: 0,
            messages: 0,
        });
        p.sessions += 1;
        p.messages += s.messages;
    }
    let mut top: Vec<Project> = projects.into_values().collect();
    top.sort_by(|a, b| {
        b.sessions
            .cmp(&a.sessions)
            .then(b.messages.cmp(&a.messages))
            .then(a.cwd.cmp(&b.cwd))
    });
    top.truncate(10);
    let first = sessions.iter().filter_map(|s| s.started.clone()).min();
    let last = sessions
        .iter()
        .filter_map(|s| s.last_ms)
        .max()
        .map(format_millis);
    let info = r.pi.build_info()?;
    let families = r.families(searcher)?;
    let copies = super::copies::copies_in(r, searcher, &families)?;
    let forks = sessions
        .iter()
        .filter(|s| families.parent_of(s.key).is_some() || s.parent_path.is_some())
        .count() as u64;
    Ok(Stats {
        index: r.pi.dir.display().to_string(),
        sessions: sessions.len() as u64,
        messages,
        copies,
        forks,
        messages_by_role: by_role,
        top_projects: top,
        first,
        last,
        index_bytes: dir_size(&r.pi.dir),
        built_at: info.as_ref().map(|i| format_millis(i.built_at_ms)),
        roots: info.as_ref().map(|i| i.roots.clone()).unwrap_or_default(),
        kinds: info.map(|i| i.kinds),
    })
}

fn dir_size(dir: &std::path::Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// What the stats page draws: messages per day, sessions per directory,
/// messages per model.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Activity {
    /// Messages per UTC day, oldest first, one entry per day of the
    /// window (days without messages hold 0): `(YYYY-MM-DD, messages)`.
    pub per_day: Vec<(String, u64)>,
    /// Sessions per directory, most first (then by name), at most `top`.
    pub per_directory: Vec<(String, u64)>,
    /// Messages per model (assistant messages; `(none)` for messages
    /// without one is left out), most first, at most `top`.
    pub per_model: Vec<(String, u64)>,
}

impl Activity {
    /// A day, in milliseconds.
    pub const DAY: i64 = 86_400_000;

    /// The first and the last day (days since the epoch, UTC) of the
    /// `days` days ending with the day of `now_ms`.
    pub fn window(now_ms: i64, days: usize) -> (i64, i64) {
        let today = now_ms.div_euclid(Self::DAY);
        (today - days as i64 + 1, today)
    }

    /// The charts from counts: messages per day (days since the epoch;
    /// days outside [`Activity::window`] are left out), sessions per
    /// directory and messages per model, each ranked most first (then by
    /// name) and cut to `top`.
    pub fn new(
        now_ms: i64,
        days: usize,
        top: usize,
        per_day: impl IntoIterator<Item = (i64, u64)>,
        per_directory: Vec<(String, u64)>,
        per_model: Vec<(String, u64)>,
    ) -> Activity {
        use crate::pi::time::civil_from_days;
        let (first, today) = Self::window(now_ms, days);
        let mut counts = vec![0u64; days];
        for (day, n) in per_day {
            if (first..=today).contains(&day) {
                counts[(day - first) as usize] += n;
            }
        }
        let ranked = |mut v: Vec<(String, u64)>| {
            v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            v.truncate(top);
            v
        };
        let day_name = |d: i64| {
            let (y, m, dd) = civil_from_days(d);
            format!("{y:04}-{m:02}-{dd:02}")
        };
        Activity {
            per_day: counts
                .into_iter()
                .enumerate()
                .map(|(i, n)| (day_name(first + i as i64), n))
                .collect(),
            per_directory: ranked(per_directory),
            per_model: ranked(per_model),
        }
    }
}

/// Messages per UTC day over the `days` days ending with the day of
/// `now_ms`, sessions per directory and messages per model (at most
/// `top` of each). Reads the time and model columns of every message
/// (no stored document is loaded): ~1 ns a message.
pub fn activity(
    r: &Reader,
    searcher: &Searcher,
    sessions: &[SessionRow],
    now_ms: i64,
    days: usize,
    top: usize,
) -> Result<Activity, IndexError> {
    let f = &r.pi.fields;
    let err = |e| tantivy_err(&r.pi.dir, e);
    let (first, today) = Activity::window(now_ms, days);
    let mut per_day: BTreeMap<i64, u64> = BTreeMap::new();
    let mut by_model: BTreeMap<u64, u64> = BTreeMap::new();
    let docs = searcher
        .search(&*all_messages(f), &tantivy::collector::DocSetCollector)
        .map_err(err)?;
    let mut by_segment: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for a in docs {
        by_segment.entry(a.segment_ord).or_default().push(a.doc_id);
    }
    for (ord, ids) in by_segment {
        let seg = searcher.segment_reader(ord);
        let times = seg.fast_fields().date("timestamp").map_err(err)?;
        let models = seg.fast_fields().u64("model").map_err(err)?;
        for doc in ids {
            if let Some(t) = times.first(doc) {
                let day = t.into_timestamp_millis().div_euclid(Activity::DAY);
                if (first..=today).contains(&day) {
                    *per_day.entry(day).or_default() += 1;
                }
            }
            if let Some(m) = models.first(doc).filter(|&m| m != 0) {
                *by_model.entry(m).or_default() += 1;
            }
        }
    }
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    let mut dirs: BTreeMap<&str, u64> = BTreeMap::new();
    for s in sessions {
        for m in &s.models {
            names.insert(crate::index::schema::model_hash(Some(m)), m.clone());
        }
        *dirs
            .entry(s.cwd.as_deref().unwrap_or("(unknown)"))
            .or_default() += 1;
    }
    Ok(Activity::new(
        now_ms,
        days,
        top,
        per_day,
        dirs.into_iter().map(|(d, n)| (d.to_owned(), n)).collect(),
        by_model
            .into_iter()
            .map(|(h, n)| {
                (
                    names.get(&h).cloned().unwrap_or_else(|| format!("#{h:x}")),
                    n,
                )
            })
            .collect(),
    ))
}
