//! Watching Pi's session directories, so that a long-running front end
//! (`mcp`, `pick`, `serve`, `push --watch`) refreshes only what changed.
//!
//! A [`SessionWatch`] asks the operating system (inotify on Linux, through
//! the `notify` crate) for the changes below each root, recursively; a
//! directory created later is watched too. What it saw is taken with
//! [`SessionWatch::take`]:
//!
//! - [`Changes::None`]: nothing changed since the last take: a refresh has
//!   nothing to do and costs nothing (no walk, no `statx`);
//! - [`Changes::Paths`]: the `*.jsonl` files and the directories that
//!   changed: a refresh looks at those alone
//!   ([`crate::pipeline::build_changed`]);
//! - [`Changes::Everything`]: the watch cannot say (its queue overflowed,
//!   a root could not be watched or did not exist yet, the first take):
//!   a refresh checks every file, as `build` does, and says why in `-v`.
//!
//! Events are gathered as they come (on notify's own thread) into a set
//! of paths, so a burst of appends to one file is one path.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

/// What changed since the last [`SessionWatch::take`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Changes {
    /// Nothing.
    None,
    /// These files and directories (sorted), and nothing else.
    Paths(Vec<PathBuf>),
    /// Anything may have: check every file. The reason, for `-v`.
    Everything(String),
}

#[derive(Default)]
struct Seen {
    paths: BTreeSet<PathBuf>,
    everything: Option<String>,
}

struct Shared {
    seen: Mutex<Seen>,
    arrived: Condvar,
}

impl Shared {
    fn note(&self, f: impl FnOnce(&mut Seen)) {
        let mut seen = self.seen.lock().expect("watch lock");
        f(&mut seen);
        self.arrived.notify_all();
    }
}

/// The session directories, watched (see the [module docs](self)).
pub struct SessionWatch {
    roots: Vec<PathBuf>,
    shared: Arc<Shared>,
    /// The watcher; `None` when none could be started (then every take
    /// says why).
    watcher: Mutex<Option<RecommendedWatcher>>,
    /// Roots not watched yet (missing, or the watch failed), and why.
    unwatched: Mutex<Vec<(PathBuf, String)>>,
}

/// Whether an event's path can matter to the index: a session file, or a
/// directory (one created or moved in may hold sessions).
fn relevant(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "jsonl") || p.is_dir() || p.extension().is_none()
}

impl SessionWatch {
    /// Start watching `roots` (directories, or single files: a file's
    /// directory is watched). Never fails: what cannot be watched makes
    /// every [`SessionWatch::take`] answer [`Changes::Everything`] with the
    /// reason, until it can be. The first take is always `Everything`
    /// (the index was not compared with the files before the watch began).
    pub fn start(roots: &[PathBuf]) -> SessionWatch {
        let shared = Arc::new(Shared {
            seen: Mutex::new(Seen {
                paths: BTreeSet::new(),
                everything: Some("the first check since the watch began".into()),
            }),
            arrived: Condvar::new(),
        });
        let events = shared.clone();
        let watcher = notify::recommended_watcher(move |res: notify::Result<Event>| match res {
            Ok(event) => {
                if event.need_rescan() {
                    events
                        .note(|s| s.everything = Some("the watch's event queue overflowed".into()));
                    return;
                }
                // Opening or reading a file changes nothing (our own
                // builds read them); writes come as modifications.
                if matches!(event.kind, EventKind::Access(_)) {
                    return;
                }
                let paths: Vec<PathBuf> = event.paths.into_iter().filter(|p| relevant(p)).collect();
                if !paths.is_empty() {
                    events.note(|s| s.paths.extend(paths));
                }
            }
            Err(e) => events.note(|s| s.everything = Some(format!("the watch failed: {e}"))),
        });
        let (watcher, unwatched) = match watcher {
            Ok(w) => (
                Some(w),
                roots.iter().map(|r| (r.clone(), String::new())).collect(),
            ),
            Err(e) => (
                None,
                roots
                    .iter()
                    .map(|r| (r.clone(), format!("no watch could be started: {e}")))
                    .collect(),
            ),
        };
        let watch = SessionWatch {
            roots: roots.to_vec(),
            shared,
            watcher: Mutex::new(watcher),
            unwatched: Mutex::new(unwatched),
        };
        watch.watch_missing();
        watch
    }

    /// The roots watched.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Add the watches that are still missing (a root that appeared since);
    /// returns why the first one still cannot be watched, if one cannot.
    fn watch_missing(&self) -> Option<String> {
        let mut watcher = self.watcher.lock().expect("watcher lock");
        let mut unwatched = self.unwatched.lock().expect("watch lock");
        let Some(w) = watcher.as_mut() else {
            return unwatched.first().map(|(_, why)| why.clone());
        };
        let mut added = false;
        unwatched.retain_mut(|(root, why)| {
            let target = if root.is_file() {
                root.parent()
                    .map(Path::to_owned)
                    .unwrap_or_else(|| root.clone())
            } else {
                root.clone()
            };
            if !target.exists() {
                *why = format!("{} does not exist yet", root.display());
                return true;
            }
            match w.watch(&target, RecursiveMode::Recursive) {
                Ok(()) => {
                    added = true;
                    false
                }
                Err(e) => {
                    *why = format!("{} cannot be watched: {e}", root.display());
                    true
                }
            }
        });
        if added {
            // What changed before the watch began is not known.
            self.shared.note(|s| {
                s.everything
                    .get_or_insert_with(|| "a session directory is watched from now on".into());
            });
        }
        unwatched.first().map(|(_, why)| why.clone())
    }

    /// What changed since the last take (see [`Changes`]).
    pub fn take(&self) -> Changes {
        let missing = self.watch_missing();
        let mut seen = self.shared.seen.lock().expect("watch lock");
        let paths = std::mem::take(&mut seen.paths);
        if let Some(why) = seen.everything.take().or(missing) {
            return Changes::Everything(why);
        }
        if paths.is_empty() {
            Changes::None
        } else {
            Changes::Paths(paths.into_iter().collect())
        }
    }

    /// Ask the next take for a check of every file (a refresh that took
    /// changes and then could not finish: another build held the lock, or
    /// it failed).
    pub fn recheck(&self, why: &str) {
        self.shared.note(|s| {
            s.everything.get_or_insert_with(|| why.to_owned());
        });
    }

    /// Wait until something is there to take, or `timeout` passes (for a
    /// refresh loop that follows Pi as it writes); returns whether
    /// something is.
    pub fn wait(&self, timeout: Duration) -> bool {
        let seen = self.shared.seen.lock().expect("watch lock");
        let (seen, _) = self
            .shared
            .arrived
            .wait_timeout_while(seen, timeout, |s| {
                s.paths.is_empty() && s.everything.is_none()
            })
            .expect("watch lock");
        !seen.paths.is_empty() || seen.everything.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes until `want` holds for what was taken (events arrive on
    /// notify's thread: poll with a deadline, never a fixed sleep).
    fn eventually(w: &SessionWatch, want: impl Fn(&Changes) -> bool) -> Changes {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let mut all = Vec::new();
        loop {
            w.wait(Duration::from_millis(200));
            let c = w.take();
            if want(&c) {
                return c;
            }
            all.push(c);
            assert!(
                std::time::Instant::now() < deadline,
                "never seen; took {all:?}"
            );
        }
    }

    fn has(c: &Changes, p: &Path) -> bool {
        matches!(c, Changes::Paths(v) if v.iter().any(|x| x == p))
    }

    #[test]
    fn sees_new_files_appends_new_directories_deletions_and_moves() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap().join("sessions");
        std::fs::create_dir_all(root.join("--a--")).unwrap();
        let w = SessionWatch::start(std::slice::from_ref(&root));
        assert!(matches!(w.take(), Changes::Everything(_)), "first take");
        assert_eq!(w.take(), Changes::None);

        let f = root.join("--a--/one.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        eventually(&w, |c| has(c, &f));
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().append(true).open(&f).unwrap();
        file.write_all(b"{}\n").unwrap();
        drop(file);
        eventually(&w, |c| has(c, &f));

        // A directory created later is watched too.
        let dir = root.join("--b--");
        std::fs::create_dir(&dir).unwrap();
        eventually(&w, |c| has(c, &dir));
        let g = dir.join("two.jsonl");
        std::fs::write(&g, b"{}\n").unwrap();
        eventually(&w, |c| has(c, &g));

        let moved = dir.join("moved.jsonl");
        std::fs::rename(&f, &moved).unwrap();
        let c = eventually(&w, |c| has(c, &moved) || has(c, &f));
        if !(has(&c, &moved) && has(&c, &f)) {
            let other = if has(&c, &moved) { &f } else { &moved };
            eventually(&w, |c| has(c, other));
        }
        std::fs::remove_file(&g).unwrap();
        eventually(&w, |c| has(c, &g));
        // Other files are no change.
        std::fs::write(dir.join("notes.txt"), b"x").unwrap();
        std::fs::write(&g, b"{}\n").unwrap();
        let c = eventually(&w, |c| has(c, &g));
        assert!(
            matches!(&c, Changes::Paths(v) if v.iter().all(|p| !p.ends_with("notes.txt"))),
            "{c:?}"
        );
    }

    #[test]
    fn a_root_that_appears_later_is_watched_and_everything_is_checked_once() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap().join("later");
        let w = SessionWatch::start(std::slice::from_ref(&root));
        let Changes::Everything(why) = w.take() else {
            panic!("first take")
        };
        assert!(why.contains("first check"), "{why}");
        let Changes::Everything(why) = w.take() else {
            panic!("a missing root")
        };
        assert!(why.contains("does not exist yet"), "{why}");
        std::fs::create_dir_all(&root).unwrap();
        let Changes::Everything(why) = w.take() else {
            panic!("the root appeared")
        };
        assert!(why.contains("watched from now on"), "{why}");
        assert_eq!(w.take(), Changes::None);
        let f = root.join("x.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        eventually(&w, |c| has(c, &f));
    }
}
