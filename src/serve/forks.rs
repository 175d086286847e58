//! Forks: which indexed session each session was forked from, read from
//! the headers' `parentSession` (Pi's `/fork`, `/clone`, `--fork`; v1's
//! `branchedFrom`), and the reverse.
//!
//! The index does not hold lineage yet (issue 22 adds it); until then the
//! web view reads the first line of every indexed file once per commit
//! of the index (a few ms per thousand sessions), and keeps the map until
//! the next commit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::search::SessionRow;

/// Parents and children, by file path.
#[derive(Debug, Default)]
pub struct Lineage {
    generation: u64,
    parent: HashMap<String, String>,
    children: HashMap<String, Vec<String>>,
}

impl Lineage {
    /// The indexed file `path` was forked from.
    pub fn parent(&self, path: &str) -> Option<&str> {
        self.parent.get(path).map(String::as_str)
    }

    /// The indexed files forked from `path`, in the order of `sessions`
    /// given to [`Forks::get`] (newest first).
    pub fn children(&self, path: &str) -> &[String] {
        self.children.get(path).map_or(&[], Vec::as_slice)
    }

    /// The file a header names as parent, even when the index does not
    /// hold it.
    pub fn named_parent(path: &str) -> Option<String> {
        let f = std::fs::File::open(path).ok()?;
        let mut r = std::io::BufReader::new(f);
        let (_, header) = crate::pi::fingerprint::read_header(&mut r).ok()?.ok()?;
        header.parent_session
    }
}

/// The lineage of the index's sessions, as of the last commit seen.
#[derive(Default)]
pub struct Forks {
    held: Mutex<Option<Arc<Lineage>>>,
}

impl Forks {
    /// The lineage for `sessions` (every indexed session) at index
    /// generation `generation`.
    pub fn get(&self, generation: u64, sessions: &[SessionRow]) -> Arc<Lineage> {
        if let Some(l) = self
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|l| l.generation == generation)
        {
            return l.clone();
        }
        let known: HashMap<&str, ()> = sessions.iter().map(|s| (s.path.as_str(), ())).collect();
        let mut lineage = Lineage {
            generation,
            ..Lineage::default()
        };
        for s in sessions {
            let Some(named) = Lineage::named_parent(&s.path) else {
                continue;
            };
            // Pi writes the absolute path it opened; the index holds the
            // path the build found (canonical when it walked a link).
            let parent = if known.contains_key(named.as_str()) {
                Some(named)
            } else {
                std::fs::canonicalize(&named)
                    .ok()
                    .map(|p| p.to_string_lossy().into_owned())
                    .filter(|p| known.contains_key(p.as_str()))
            };
            if let Some(p) = parent.filter(|p| *p != s.path) {
                lineage
                    .children
                    .entry(p.clone())
                    .or_default()
                    .push(s.path.clone());
                lineage.parent.insert(s.path.clone(), p);
            }
        }
        let lineage = Arc::new(lineage);
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(lineage.clone());
        lineage
    }
}
