//! What a build has to do: the files it found compared with what the
//! index holds of them (new, grown, rewritten, moved, gone, outside the
//! build's roots), and whether the whole index is rebuilt.
//!
//! A plan is made from one committed state of the index, and names that
//! state ([`Plan::seen`]). A build first plans without any lock (a build
//! with nothing to do never takes one); one with work takes the writer's
//! lock and, if another build committed since its plan was made, plans
//! again under the lock, so that what it indexes is decided against the
//! state its commit replaces. Two builds at once therefore never both
//! index the same appended lines.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use rayon::prelude::*;

use super::check::CheckReport;
use super::moves;
use super::report::{BuildOptions, Moved, Rebuild, StaleRoot};
use crate::discover::{Candidate, Discovered};
use crate::index::state::{FileStates, PathHasher};
use crate::index::writer::{IndexStore, Opened};
use crate::index::{BuildInfo, IndexError};

/// The fewest files a thread takes at once when a plan compares them.
const PER_TASK: usize = 1024;

/// A build's work, decided against one committed state of the index.
pub(super) struct Plan {
    /// Why the whole index is rebuilt, if it is.
    pub(super) rebuild: Option<Rebuild>,
    /// The opstamp of the commit the plan was made from.
    pub(super) seen: u64,
    /// The indexed state of every file (empty for a rebuild).
    pub(super) states: FileStates,
    /// Indices into the discovered files of those to read.
    pub(super) work: Vec<usize>,
    /// Files found unchanged.
    pub(super) unchanged: u64,
    /// Indexed files gone from under the build's roots.
    pub(super) deleted: Vec<String>,
    /// Indexed files outside every root, removed (`--prune`).
    pub(super) pruned: Vec<String>,
    /// Indexed files outside every root (kept unless pruned).
    pub(super) stale: u64,
    /// Indexed sessions outside every root, by root.
    pub(super) stale_roots: Vec<StaleRoot>,
    /// Files that moved: `(from, to)`.
    pub(super) moved: Vec<(String, String)>,
    /// Whether the index records the same roots as this build's.
    pub(super) same_roots: bool,
    /// Files whose documents are replaced whatever their state says
    /// (`check --repair`), and documents of files no longer indexed.
    pub(super) repair: Vec<String>,
    /// Keys of sessions whose documents have no record (`check --repair`).
    pub(super) orphans: Vec<u64>,
}

/// What the index holds, as one plan compares it: read apart from the
/// files found, so that a build reads it while it walks the roots.
pub(super) struct Indexed {
    /// The opstamp of the commit the states were read from, or an
    /// earlier one (read first).
    seen: u64,
    /// The last build's record.
    info: Option<BuildInfo>,
    /// Why the whole index is rebuilt, if it is.
    rebuild: Option<Rebuild>,
    /// The indexed state of every file (empty for a rebuild).
    states: FileStates,
    /// Whether the copy groups beside the index were saved for the state
    /// the states were read from (false for a rebuild).
    pub(super) groups_held: bool,
    /// The state the states were read from, as the file they are saved in
    /// beside the index names it, when they were read from the index's
    /// columns (that file was not of this state); else `None`.
    pub(super) unsaved: Option<Vec<u8>>,
}

impl Indexed {
    /// Read what the last commit of `store` holds, for a build with
    /// `opts`.
    pub(super) fn read(store: &IndexStore, opts: &BuildOptions) -> Result<Indexed, IndexError> {
        // The commit the states below are read from, or a later one; a
        // build that finds the index at another commit once it holds the
        // lock plans again.
        let seen = store.committed_opstamp()?;
        let info = store.pi.build_info()?;
        let kinds = opts.kinds.to_list();
        let rebuild = match (&store.opened, &info) {
            (Opened::New, None) => Some(Rebuild::NewIndex),
            (Opened::SchemaChanged, None) => Some(Rebuild::SchemaChanged),
            (Opened::Recovered, None) => Some(Rebuild::Recovered),
            _ if opts.full => Some(Rebuild::Full),
            (_, None) => Some(Rebuild::Unfinished),
            (_, Some(info)) if info.kinds != kinds => Some(Rebuild::KindsChanged {
                from: info.kinds.clone(),
                to: kinds,
            }),
            _ => None,
        };
        // The copy groups are checked here, beside the walk, with the
        // states' searcher: a build with nothing to do then saves them
        // only if they are not of this state (opening a searcher again
        // for that would be a serial step after the walk,
        // [docs/performance.md](../../docs/performance.md#discovery-and-the-plan)).
        let (states, groups_held, unsaved) = if rebuild.is_none() {
            let searcher = store.pi.searcher()?;
            let (states, unsaved) = store.pi.file_states_saved_or_read(&searcher)?;
            let groups_held = crate::index::saved::groups::held(&store.pi, &searcher);
            (states, groups_held, unsaved)
        } else {
            (FileStates::default(), false, None)
        };
        Ok(Indexed {
            seen,
            info,
            rebuild,
            states,
            groups_held,
            unsaved,
        })
    }
}

impl Plan {
    /// Compare what `found` holds with what `indexed` read of the last
    /// commit of `store`. With `changed`, `found` holds only what a
    /// watcher saw change, and only the indexed files among `changed` (or
    /// below a directory of it) can be gone. The files with defects of
    /// `check` are read again from their first byte, and its orphans
    /// removed.
    pub(super) fn make(
        store: &IndexStore,
        opts: &BuildOptions,
        indexed: Indexed,
        found: &Discovered,
        changed: Option<&[std::path::PathBuf]>,
        check: &CheckReport,
    ) -> Result<Plan, IndexError> {
        let Indexed {
            seen,
            info,
            rebuild,
            mut states,
            groups_held: _,
            unsaved: _,
        } = indexed;
        // Each candidate's path as the index keys it, made once (checked
        // as UTF-8 the fast way; only a path that is not is copied). This
        // and the comparison below run on every thread: each looks up a
        // path of every file found, its key's bytes far apart in memory
        // (on one thread, the longest serial step of a no-change build
        // after the walk:
        // [docs/performance.md](../../docs/performance.md#discovery-and-the-plan)).
        let found_paths: Vec<std::borrow::Cow<'_, str>> = found
            .files
            .par_iter()
            .with_min_len(PER_TASK)
            .map(|c| match c.path.to_str() {
                Some(path) => std::borrow::Cow::Borrowed(path),
                None => c.path.to_string_lossy(),
            })
            .collect();
        // The set of the paths found, made only when it is asked.
        let seen_set = || {
            let mut set: HashSet<&str, PathHasher> =
                HashSet::with_capacity_and_hasher(found_paths.len(), PathHasher::default());
            set.extend(found_paths.iter().map(|p| p.as_ref()));
            set
        };
        let mut seen_paths = None;
        // A file repaired is read as if new: its old documents go first.
        // (A rebuild reads every file anyway.)
        let (mut repair, orphans) = if rebuild.is_none() {
            (check.defective_paths.clone(), check.orphan_keys.clone())
        } else {
            (Vec::new(), Vec::new())
        };
        // Only what this build reads again, or what is gone: a session
        // kept from a directory it does not read is not lost to a repair.
        if !repair.is_empty() {
            let seen = seen_paths.get_or_insert_with(seen_set);
            repair.retain(|p| seen.contains(p.as_str()) || !Path::new(p).exists());
        }
        let forced: HashSet<&str> = repair.iter().map(String::as_str).collect();
        for p in &repair {
            states.remove(p);
        }
        // The files to read (new, or changed since they were indexed),
        // and how many of the found ones the index holds.
        // Of each file found: whether the index holds it, and whether it
        // is read.
        let looked: Vec<(bool, bool)> = (0..found.files.len())
            .into_par_iter()
            .with_min_len(PER_TASK)
            .map(|i| {
                let path = found_paths[i].as_ref();
                let state = states.get(path);
                let read = forced.contains(path)
                    || !state.is_some_and(|st| st.unchanged(&found.files[i].identity));
                (state.is_some(), read)
            })
            .collect();
        let found_states = looked.iter().filter(|(held, _)| *held).count();
        let work: Vec<usize> = (0..found.files.len()).filter(|&i| looked[i].1).collect();
        // When every indexed file was found (the paths found are
        // distinct), none is gone, moved or outside the roots: the usual
        // build, whose two scans of every state need no set of the paths
        // found.
        let seen_paths =
            (found_states != states.len()).then(|| seen_paths.unwrap_or_else(seen_set));
        let is_seen = |p: &str| seen_paths.as_ref().is_none_or(|seen| seen.contains(p));

        // Files indexed before and not found now: moved, gone, or outside
        // this build's roots (kept, unless --prune).
        let roots = moves::canonical_roots(&opts.roots);
        let in_scope =
            |p: &str| changed.is_none_or(|c| c.iter().any(|x| Path::new(p).starts_with(x)));
        let vanished: Vec<&str> = states
            .keys()
            .filter(|p| in_scope(p) && !is_seen(p) && !Path::new(p).exists())
            .map(String::as_str)
            .collect();
        let moved = if vanished.is_empty() {
            Vec::new()
        } else {
            // In the order files are read: of two new files that both hold
            // a vanished one's bytes, the same one is its new place at
            // every build.
            let mut fresh: Vec<&Candidate> = found
                .files
                .iter()
                .zip(&found_paths)
                .filter(|(_, path)| !states.contains_key(path.as_ref()))
                .map(|(c, _)| c)
                .collect();
            fresh.sort_unstable_by(|a, b| Candidate::read_order(a, b));
            if fresh.is_empty() {
                Vec::new()
            } else {
                moves::find_moves(&vanished, &fresh, &states, &store.pi, &store.pi.searcher()?)?
            }
        };
        let moved_from: HashSet<&str> = moved.iter().map(|(from, _)| from.as_str()).collect();
        let deleted: Vec<String> = vanished
            .iter()
            .copied()
            .filter(|p| !moved_from.contains(p) && moves::under_roots(&roots, p))
            .map(str::to_owned)
            .collect();
        let stale: HashSet<&str> = states
            .keys()
            .map(String::as_str)
            .filter(|p| !is_seen(p) && !moved_from.contains(p) && !moves::under_roots(&roots, p))
            .collect();
        let mut stale_roots = Vec::new();
        if !stale.is_empty() {
            let by_root = store.file_roots(&stale)?;
            let mut counts: BTreeMap<String, u64> = BTreeMap::new();
            for p in &stale {
                let root = by_root
                    .get(*p)
                    .cloned()
                    .unwrap_or_else(|| "(unknown)".into());
                *counts.entry(root).or_default() += 1;
            }
            stale_roots = counts
                .into_iter()
                .map(|(root, sessions)| StaleRoot {
                    root,
                    sessions,
                    pruned: opts.prune,
                })
                .collect();
        }
        let pruned: Vec<String> = if opts.prune {
            stale.iter().map(|p| (*p).to_owned()).collect()
        } else {
            Vec::new()
        };
        // Where sessions were read from is recorded for `stats`: a build
        // that reads other places commits even when no file changed.
        let same_roots = info.as_ref().is_some_and(|i| i.roots == opts.locations);
        Ok(Plan {
            rebuild,
            seen,
            unchanged: (found.files.len() - work.len()) as u64,
            work,
            deleted,
            pruned,
            stale: stale.len() as u64,
            stale_roots,
            moved,
            same_roots,
            states,
            repair,
            orphans,
        })
    }

    /// Whether the build has nothing to write.
    pub(super) fn is_empty(&self) -> bool {
        self.rebuild.is_none()
            && self.work.is_empty()
            && self.deleted.is_empty()
            && self.moved.is_empty()
            && self.pruned.is_empty()
            && self.repair.is_empty()
            && self.orphans.is_empty()
            && self.same_roots
    }

    /// Every indexed file whose documents go before anything is added:
    /// deleted, pruned, moved away from, or repaired.
    pub(super) fn removed(&self) -> impl Iterator<Item = &str> {
        self.deleted
            .iter()
            .chain(&self.pruned)
            .chain(&self.repair)
            .map(String::as_str)
            .chain(self.moved.iter().map(|(from, _)| from.as_str()))
    }

    /// The moves, as reported.
    pub(super) fn moves(&self) -> Vec<Moved> {
        self.moved
            .iter()
            .map(|(from, to)| Moved {
                from: from.clone(),
                to: to.clone(),
            })
            .collect()
    }
}
