//! What the index holds: `pi-index stats`.

use std::collections::BTreeMap;

use serde::Serialize;
use tantivy::collector::Count;
use tantivy::Searcher;

use super::hits::all_messages;
use super::reader::SessionRow;
use crate::index::{tantivy_err, IndexError, PiIndex};
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

impl PiIndex {
    /// Gather the statistics.
    pub fn stats(&self, searcher: &Searcher, sessions: &[SessionRow]) -> Result<Stats, IndexError> {
        let f = &self.fields;
        let err = |e| tantivy_err(&self.dir, e);
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
        let info = self.build_info()?;
        let families = self.families(searcher)?;
        let copies = super::copies::copies_in(self, searcher, &families)?;
        let forks = sessions
            .iter()
            .filter(|s| families.parent_of(s.key).is_some() || s.parent_path.is_some())
            .count() as u64;
        Ok(Stats {
            index: self.dir.display().to_string(),
            sessions: sessions.len() as u64,
            messages,
            copies,
            forks,
            messages_by_role: by_role,
            top_projects: top,
            first,
            last,
            index_bytes: dir_size(&self.dir),
            built_at: info.as_ref().map(|i| format_millis(i.built_at_ms)),
            roots: info.as_ref().map(|i| i.roots.clone()).unwrap_or_default(),
            kinds: info.map(|i| i.kinds),
        })
    }
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
