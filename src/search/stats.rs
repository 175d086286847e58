//! What the index holds: `pi-index stats`.

use std::collections::BTreeMap;

use tantivy::collector::Count;
use tantivy::Searcher;

use super::reader::Reader;
use crate::index::{all_messages, tantivy_err, IndexError};
use crate::pi::time::format_millis;
use crate::pi::Role;
use crate::read::{Activity, Built, Place, Project, SessionRow, Stats};

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
        place: Place::Index(r.pi.dir.display().to_string()),
        sessions: sessions.len() as u64,
        messages,
        copies: Some(copies),
        forks,
        messages_by_role: by_role,
        top_projects: Some(top),
        hosts: None,
        first,
        last,
        build: Some(Built {
            index_bytes: dir_size(&r.pi.dir),
            segments: searcher.segment_readers().len() as u64,
            built_at: info.as_ref().map(|i| format_millis(i.built_at_ms)),
            roots: info.as_ref().map(|i| i.roots.clone()).unwrap_or_default(),
            kinds: info.map(|i| i.kinds),
        }),
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

/// Messages per UTC day over the `days` days ending with the day of
/// `now_ms`, sessions per directory and messages per model (at most
/// `top` of each). Reads the time and model columns of every message
/// (no stored document is loaded), a cost of nanoseconds a message
/// ([docs/performance.md](../../docs/performance.md#local-search)).
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
