//! Watching Pi's session directories, so that a long-running front end
//! (`mcp`, `pick`, `serve`, `push --watch`) refreshes only what changed.
//!
//! A [`SessionWatch`] asks the operating system (inotify on Linux, through
//! the `notify` crate) for the changes below each root, recursively; a
//! directory created later is watched too. What it saw is taken with
//! [`SessionWatch::take`]:
//!
//! - [`Changes::None`]: nothing changed since the last take: a refresh has
//!   nothing to do and costs nothing (no walk, no `statx` of the files);
//! - [`Changes::Paths`]: the `*.jsonl` files and the directories that
//!   changed: a refresh looks at those alone
//!   ([`crate::pipeline::build_changed`]);
//! - [`Changes::Everything`]: the watch cannot say (the first take, its
//!   queue overflowed, a root appeared, was removed or replaced, the watch
//!   failed or did not answer): a refresh checks every file, as `build`
//!   does, and says why.
//!
//! Events arrive on notify's own thread and are gathered into a set of
//! paths, so a burst of appends to one file is one path.
//!
//! # Every write made before a take is in it: the barrier
//!
//! A file written just before a take (Pi appends, then the agent calls a
//! tool at once) must be in that take, though its event may still be on
//! its way to notify's thread. So a take first sets a barrier: it makes
//! (and removes) a directory named by a new number in a private directory
//! the same watcher watches, and waits until that directory's event came
//! through. This is sound because notify 8 reads one inotify descriptor
//! per watcher, on one thread, and hands its events to the handler in the
//! order it reads them; the kernel queues an event on that descriptor
//! during the system call that causes it, and the queue is first in,
//! first out. So when the mark's event has arrived, every event of a
//! write that returned before the take began arrived before it. Marks
//! carry increasing numbers and are never reused, so they are never
//! merged with an earlier one, and any mark at least as new as the
//! take's own proves the same (marks are numbered after the take began).
//! A mark that does not arrive within [`BARRIER_WAIT`], or a barrier that
//! cannot be set up, makes the take [`Changes::Everything`]: correctness
//! never rests on the barrier, only the fast path does.
//!
//! A directory created (or moved in) below a root is watched by notify
//! only after its handler was given the events read with the creation's.
//! Files written in it before that have no event of their own: the
//! directory's path is in the take, and the refresh walks it. That walk
//! must begin after the directory's watch exists, or a write between the
//! two would be lost; so a take that holds a directory (or answers
//! `Everything`: the walk of every file) first makes a round trip through
//! notify's thread (a request it answers only after it finished handling
//! those events and adding their watches).
//!
//! When the kernel's queue overflows, events are dropped: a barrier's
//! mark (another is made once the overflow was read), and maybe the
//! creation of a directory, whose watch notify then never added. So the
//! take that follows watches the roots again (notify keeps the watches it
//! has and adds those missing) before it answers `Everything`.
//!
//! Each take also looks at each root (one `stat`): a root that appeared
//! is watched from then on, and one that was removed, moved or replaced
//! (its watch went with it) is watched again where it is now; either
//! makes that take [`Changes::Everything`]. A root that does not exist
//! has nothing to check until it appears.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use notify::event::{ModifyKind, RenameMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

/// The longest a take waits for its barrier's event before it falls back
/// to [`Changes::Everything`] (it usually comes within microseconds).
pub const BARRIER_WAIT: Duration = Duration::from_secs(1);

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

/// Where a root's changes come from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Scope {
    /// A directory, watched recursively: everything below it.
    Tree(PathBuf),
    /// A single file, its directory watched alone.
    File(PathBuf),
}

impl Scope {
    fn holds(&self, p: &Path) -> bool {
        match self {
            Scope::Tree(dir) => p.starts_with(dir),
            Scope::File(file) => p == file,
        }
    }

    /// How its directory is watched.
    fn mode(&self) -> RecursiveMode {
        match self {
            Scope::Tree(_) => RecursiveMode::Recursive,
            Scope::File(_) => RecursiveMode::NonRecursive,
        }
    }

    /// The directory whose watch this scope's changes come through.
    fn target(&self) -> &Path {
        match self {
            Scope::Tree(dir) => dir,
            Scope::File(file) => file.parent().unwrap_or(file),
        }
    }
}

#[derive(Default)]
struct Seen {
    paths: BTreeSet<PathBuf>,
    everything: Option<String>,
    /// Set when the watch can no longer be trusted (it failed, or could
    /// not be set up): every take is then `Everything`, with this reason.
    broken: Option<String>,
    /// The scopes of the roots watched now (what the handler keeps).
    scopes: Vec<Scope>,
    /// Watched directories that were removed or moved (their watches
    /// went with them).
    lost: Vec<PathBuf>,
    /// The highest barrier mark that arrived.
    mark: u64,
    /// How many times the queue overflowed (a barrier's mark may have
    /// been dropped with the rest).
    overflows: u64,
    /// The queue overflowed since the roots were last watched: the
    /// creation of a directory may have been dropped, and with it its
    /// watch; the roots are watched again (what is watched already is
    /// kept, what is missing is added).
    rewatch: bool,
}

struct Shared {
    seen: Mutex<Seen>,
    arrived: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Seen> {
        // The set is rebuilt by a full check when in doubt: a panic
        // elsewhere must not wedge the watch.
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn note(&self, f: impl FnOnce(&mut Seen)) {
        f(&mut self.lock());
        self.arrived.notify_all();
    }
}

/// A root as watched.
struct Root {
    /// As given.
    given: PathBuf,
    /// Its scope and the identity (device, inode) of the directory
    /// watched, once it exists and is watched.
    watched: Option<(Scope, (u64, u64))>,
}

struct Inner {
    watcher: Option<RecommendedWatcher>,
    roots: Vec<Root>,
}

/// The session directories, watched (see the [module docs](self)).
pub struct SessionWatch {
    roots: Vec<PathBuf>,
    shared: Arc<Shared>,
    inner: Mutex<Inner>,
    /// The private directory the barrier's marks are made in (removed
    /// when the watch is dropped).
    marks: Option<tempfile::TempDir>,
    next_mark: AtomicU64,
}

/// Whether an event's path can matter to the index: a session file, or a
/// directory (one created or moved in may hold sessions; a removed one
/// held them).
fn relevant(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "jsonl") || p.extension().is_none() || p.is_dir()
}

/// The name of a barrier's private directory: this, the process id, `-`,
/// and a random part.
const MARKS_PREFIX: &str = "pi-index-watch-";

/// Remove the private directories of processes that are gone (one killed
/// has no chance to): empty directories named for a process id that no
/// longer exists. One in use by a process this one cannot see (another
/// pid namespace sharing /tmp) is made again by its owner (see
/// [`SessionWatch::barrier`]).
#[cfg(unix)]
fn sweep_marks() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(MARKS_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok())
            .filter(|&pid| pid > 0)
        else {
            continue;
        };
        // SAFETY: kill with signal 0 sends nothing; it only asks whether
        // the process exists.
        let gone = unsafe { libc::kill(pid, 0) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            // Only an empty one: a mark is removed as soon as it is made.
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// Without a portable way to ask whether a process id is alive, the
/// private directories of processes that were killed stay (empty) in the
/// temporary directory.
#[cfg(not(unix))]
fn sweep_marks() {}

/// The identity of a directory (device and inode), if it exists.
#[cfg(unix)]
fn identity(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// The identity of a directory, if it exists: std has no stable file
/// index on Windows, so its creation time stands for it (a directory
/// removed and made again under the same name has another).
#[cfg(not(unix))]
fn identity(p: &Path) -> Option<(u64, u64)> {
    let created = std::fs::metadata(p).ok()?.created().ok()?;
    let d = created.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some((d.as_secs(), u64::from(d.subsec_nanos())))
}

/// The handler notify calls on its thread for each event.
fn handle(shared: &Shared, marks: Option<&Path>, res: notify::Result<Event>) {
    let event = match res {
        Ok(event) => event,
        Err(e) => {
            // A watch that could not be added for a new directory (the
            // limit of watches), or the descriptor could not be read:
            // what it misses from now on cannot be known.
            return shared.note(|s| {
                s.broken
                    .get_or_insert_with(|| format!("the watch failed ({e})"));
            });
        }
    };
    if event.need_rescan() {
        return shared.note(|s| {
            s.everything = Some("the watch's event queue overflowed".into());
            s.overflows += 1;
            s.rewatch = true;
        });
    }
    if let Some(marks) = marks {
        if event.paths.iter().any(|p| p.parent() == Some(marks)) {
            if matches!(event.kind, EventKind::Create(_)) {
                let mark = event
                    .paths
                    .iter()
                    .filter_map(|p| p.file_name()?.to_str()?.parse::<u64>().ok())
                    .max();
                if let Some(mark) = mark {
                    shared.note(|s| s.mark = s.mark.max(mark));
                }
            }
            return;
        }
    }
    // Opening or reading a file changes nothing (our own builds read
    // them); writes come as modifications.
    if matches!(event.kind, EventKind::Access(_)) {
        return;
    }
    let gone = matches!(
        event.kind,
        EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From))
    );
    let mut seen = shared.lock();
    let mut any = false;
    for p in event.paths {
        if gone && seen.scopes.iter().any(|s| s.target() == p) {
            seen.lost.push(p.clone());
            any = true;
        }
        if seen.scopes.iter().any(|s| s.holds(&p)) && relevant(&p) {
            any |= seen.paths.insert(p);
        }
    }
    drop(seen);
    if any {
        shared.arrived.notify_all();
    }
}

impl SessionWatch {
    /// Start watching `roots` (directories, or single files: a file's
    /// directory is watched, alone). Never fails: a watch that cannot be
    /// set up makes every [`SessionWatch::take`] answer
    /// [`Changes::Everything`] with the reason. The first take is always
    /// `Everything` (the index was not compared with the files before the
    /// watch began).
    pub fn start(roots: &[PathBuf]) -> SessionWatch {
        let shared = Arc::new(Shared {
            seen: Mutex::new(Seen {
                everything: Some("the first check since the watch began".into()),
                ..Seen::default()
            }),
            arrived: Condvar::new(),
        });
        sweep_marks();
        let marks = tempfile::Builder::new()
            .prefix(&format!("{MARKS_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|e| {
                shared.note(|s| {
                    s.broken = Some(format!(
                        "no private directory for the watch's barrier ({e})"
                    ));
                })
            })
            .ok();
        let events = shared.clone();
        let marks_path = marks.as_ref().map(|m| m.path().to_owned());
        let watcher = notify::recommended_watcher(move |res: notify::Result<Event>| {
            handle(&events, marks_path.as_deref(), res)
        });
        let watcher = match watcher {
            Ok(mut w) => {
                if let Some(m) = &marks {
                    if let Err(e) = w.watch(m.path(), RecursiveMode::NonRecursive) {
                        shared.note(|s| {
                            s.broken = Some(format!("the watch's barrier cannot be watched ({e})"));
                        });
                    }
                }
                Some(w)
            }
            Err(e) => {
                shared.note(|s| s.broken = Some(format!("no watch could be started ({e})")));
                None
            }
        };
        let watch = SessionWatch {
            roots: roots.to_vec(),
            shared,
            inner: Mutex::new(Inner {
                watcher,
                roots: roots
                    .iter()
                    .map(|r| Root {
                        given: r.clone(),
                        watched: None,
                    })
                    .collect(),
            }),
            marks,
            next_mark: AtomicU64::new(0),
        };
        // A barrier that does not come through now (a private directory
        // on a file system without events) never will: every take is a
        // full check rather than a wait.
        if watch.marks.is_some() && watch.shared.lock().broken.is_none() {
            if let Err(why) = watch.barrier() {
                watch.shared.note(|s| {
                    s.broken.get_or_insert(why);
                });
            }
        }
        watch.look_at_roots(&mut watch.lock_inner());
        watch
    }

    /// The roots watched, as given.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    fn lock_inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Watch the roots that appeared, watch again those that were
    /// removed, moved or replaced; returns why everything must be
    /// checked, when something changed.
    fn look_at_roots(&self, inner: &mut Inner) -> Option<String> {
        let (lost, broken, rewatch) = {
            let mut seen = self.shared.lock();
            (
                std::mem::take(&mut seen.lost),
                seen.broken.is_some(),
                std::mem::take(&mut seen.rewatch),
            )
        };
        if broken {
            // Every take checks everything anyway.
            return None;
        }
        let Inner { watcher, roots } = inner;
        let watcher = watcher.as_mut()?;
        // Watched again after an overflow: what the directories it adds
        // hold is checked too.
        let mut why = rewatch.then(|| "the watch's event queue overflowed".to_owned());
        let mut failed = None;
        for root in roots.iter_mut() {
            if let Some((scope, id)) = &root.watched {
                let target = scope.target();
                if !lost.iter().any(|l| l == target) && identity(target) == Some(*id) {
                    if rewatch {
                        if let Err(e) = watcher.watch(target, scope.mode()) {
                            failed.get_or_insert_with(|| {
                                format!("{} cannot be watched ({e})", root.given.display())
                            });
                        }
                    }
                    continue;
                }
                let _ = watcher.unwatch(target);
                root.watched = None;
                why.get_or_insert_with(|| {
                    format!("{} was removed, moved or replaced", root.given.display())
                });
            }
            // Watched as the walk of a build names its files: from the
            // canonical root.
            let Ok(path) = std::fs::canonicalize(&root.given) else {
                continue;
            };
            let scope = if path.is_dir() {
                Scope::Tree(path)
            } else {
                Scope::File(path)
            };
            let target = scope.target().to_owned();
            let mode = scope.mode();
            // The identity first: a directory replaced while its watch is
            // added is seen at the next take.
            let Some(id) = identity(&target) else {
                continue;
            };
            match watcher.watch(&target, mode) {
                Ok(()) => {
                    root.watched = Some((scope, id));
                    why.get_or_insert_with(|| {
                        format!("{} is watched from now on", root.given.display())
                    });
                }
                Err(e) => {
                    failed.get_or_insert_with(|| {
                        format!("{} cannot be watched ({e})", root.given.display())
                    });
                }
            }
        }
        let scopes: Vec<Scope> = roots
            .iter()
            .filter_map(|r| r.watched.as_ref().map(|(s, _)| s.clone()))
            .collect();
        let mut seen = self.shared.lock();
        seen.scopes = scopes;
        if let Some(f) = failed {
            seen.broken.get_or_insert(f);
        }
        why
    }

    /// Wait until every event of a write that returned before this call
    /// has reached the set (see the [module docs](self)).
    fn barrier(&self) -> Result<(), String> {
        let deadline = std::time::Instant::now() + BARRIER_WAIT;
        let mut mark = self.mark()?;
        let mut seen = self.shared.lock();
        let mut overflows = seen.overflows;
        loop {
            if seen.mark >= mark || seen.broken.is_some() {
                return Ok(());
            }
            if seen.overflows != overflows {
                // The mark may have been dropped with the queue: another,
                // made after the overflow was read.
                overflows = seen.overflows;
                drop(seen);
                mark = self.mark()?;
                seen = self.shared.lock();
                continue;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "the watch did not answer within {} s",
                    BARRIER_WAIT.as_secs_f64()
                ));
            }
            seen = self
                .shared
                .arrived
                .wait_timeout(seen, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Make (and remove) the next mark; its number.
    fn mark(&self) -> Result<u64, String> {
        let Some(marks) = &self.marks else {
            return Err("the watch has no barrier".into());
        };
        let mark = self.next_mark.fetch_add(1, Ordering::SeqCst) + 1;
        let dir = marks.path().join(mark.to_string());
        let made = match std::fs::create_dir(&dir) {
            // The private directory was removed (a cleaner of /tmp, after
            // days without a call): made again, and watched again.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => self
                .restore_marks(marks.path())
                .and_then(|()| std::fs::create_dir(&dir)),
            made => made,
        };
        made.map_err(|e| format!("the watch's barrier could not be set ({e})"))?;
        let _ = std::fs::remove_dir(&dir);
        Ok(mark)
    }

    /// Make the barrier's directory again where it was (only if nothing
    /// else took its name), and watch it.
    fn restore_marks(&self, path: &Path) -> std::io::Result<()> {
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(path)?;
        #[cfg(not(unix))]
        std::fs::create_dir(path)?;
        match &mut self.lock_inner().watcher {
            Some(w) => w
                .watch(path, RecursiveMode::NonRecursive)
                .map_err(std::io::Error::other),
            None => Ok(()),
        }
    }

    /// What changed since the last take (see [`Changes`]): every write
    /// that returned before this call is in it (or the answer is
    /// `Everything`).
    pub fn take(&self) -> Changes {
        let barrier = self.barrier();
        let mut inner = self.lock_inner();
        let roots = self.look_at_roots(&mut inner);
        let mut seen = self.shared.lock();
        if crate::failpoint::watch_overflow() {
            // As the kernel does when its queue is full: the events are
            // lost, and the handler is told.
            seen.paths.clear();
            seen.everything = Some("the watch's event queue overflowed".into());
        }
        let paths = std::mem::take(&mut seen.paths);
        let why = seen
            .everything
            .take()
            .or_else(|| seen.broken.clone())
            .or(roots)
            .or(barrier.err());
        let broken = seen.broken.is_some();
        drop(seen);
        let changes = match why {
            Some(why) => Changes::Everything(why),
            None if paths.is_empty() => return Changes::None,
            None => Changes::Paths(paths.into_iter().collect()),
        };
        // The walk of a new directory (or of everything) must begin
        // after its watch was added.
        let walks_dirs = match &changes {
            Changes::Paths(p) => p.iter().any(|p| p.extension().is_none_or(|e| e != "jsonl")),
            _ => !broken,
        };
        if walks_dirs {
            if let Err(why) = self.round_trip(&mut inner) {
                return Changes::Everything(why);
            }
        }
        changes
    }

    /// A request notify's thread answers once it has handled the events
    /// it read before (and added the watches of the directories they
    /// created): the barrier's directory watched again.
    fn round_trip(&self, inner: &mut Inner) -> Result<(), String> {
        match (&mut inner.watcher, &self.marks) {
            (Some(w), Some(m)) => w
                .watch(m.path(), RecursiveMode::NonRecursive)
                .map_err(|e| format!("the watch did not answer ({e})")),
            _ => Err("the watch has no barrier".into()),
        }
    }

    /// Put back what a take returned, for a refresh that took it and then
    /// could not finish (another build held the lock, or it failed): the
    /// next take returns it again, with whatever came since.
    pub fn give_back(&self, changes: Changes) {
        match changes {
            Changes::None => {}
            Changes::Paths(paths) => self.shared.note(|s| s.paths.extend(paths)),
            Changes::Everything(why) => self.shared.note(|s| {
                s.everything.get_or_insert(why);
            }),
        }
    }

    /// Wait until an event is there to take, or `timeout` passes (for a
    /// refresh loop that follows Pi as it writes); returns whether one
    /// is. A watch that cannot say (broken) never wakes this early: such
    /// a loop checks every file once per `timeout`.
    pub fn wait(&self, timeout: Duration) -> bool {
        let seen = self.shared.lock();
        let (seen, _) = self
            .shared
            .arrived
            .wait_timeout_while(seen, timeout, |s| {
                s.paths.is_empty() && s.everything.is_none() && s.lost.is_empty()
            })
            .unwrap_or_else(|p| p.into_inner());
        !seen.paths.is_empty() || seen.everything.is_some() || !seen.lost.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes until `want` holds for what was taken (for the tests that do
    /// not rely on the barrier; never a fixed sleep).
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

    /// The barrier: what was written before a take is in it, with no
    /// wait of any kind between the write and the take, every time.
    #[test]
    fn a_take_right_after_a_write_holds_it() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap().join("sessions");
        std::fs::create_dir_all(root.join("--a--")).unwrap();
        let f = root.join("--a--/one.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        let w = SessionWatch::start(std::slice::from_ref(&root));
        assert!(matches!(w.take(), Changes::Everything(_)), "first take");
        use std::io::Write;
        for i in 0..300 {
            let mut file = std::fs::OpenOptions::new().append(true).open(&f).unwrap();
            file.write_all(b"{}\n").unwrap();
            drop(file);
            assert_eq!(w.take(), Changes::Paths(vec![f.clone()]), "append {i}");
            assert_eq!(w.take(), Changes::None, "nothing after append {i}");
        }
        // A new directory, and a session in it written before its watch
        // could exist: the directory is taken (its walk finds the file).
        // (Many directories inside it: notify adds their watches one by
        // one, after it handed the events on.)
        for i in 0..10 {
            let dir = root.join(format!("--new{i}--"));
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("s.jsonl"), b"{}\n").unwrap();
            for j in 0..200 {
                std::fs::create_dir(dir.join(j.to_string())).unwrap();
            }
            let Changes::Paths(p) = w.take() else {
                panic!("directory {i}")
            };
            assert!(p.contains(&dir), "directory {i}: {p:?}");
            // Their watches exist once the take returned: a write now is
            // seen by the next take.
            let last = dir.join("199/t.jsonl");
            std::fs::write(&last, b"{}\n").unwrap();
            assert_eq!(
                w.take(),
                Changes::Paths(vec![last]),
                "a file in directory {i}"
            );
        }
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
        // Nothing to check while it does not exist.
        assert_eq!(w.take(), Changes::None);
        std::fs::create_dir_all(&root).unwrap();
        let Changes::Everything(why) = w.take() else {
            panic!("the root appeared")
        };
        assert!(why.contains("watched from now on"), "{why}");
        assert_eq!(w.take(), Changes::None);
        let f = root.join("x.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        assert_eq!(w.take(), Changes::Paths(vec![f.clone()]));
    }

    #[test]
    fn a_root_removed_and_made_again_is_watched_again() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap().join("sessions");
        std::fs::create_dir_all(&root).unwrap();
        let w = SessionWatch::start(std::slice::from_ref(&root));
        assert!(matches!(w.take(), Changes::Everything(_)), "first take");
        std::fs::remove_dir(&root).unwrap();
        let Changes::Everything(why) = w.take() else {
            panic!("the root went")
        };
        assert!(why.contains("removed, moved or replaced"), "{why}");
        assert_eq!(w.take(), Changes::None);
        std::fs::create_dir(&root).unwrap();
        let Changes::Everything(why) = w.take() else {
            panic!("the root is back")
        };
        assert!(why.contains("watched from now on"), "{why}");
        let f = root.join("x.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        assert_eq!(w.take(), Changes::Paths(vec![f]));
        // Moved away, and another directory put in its place.
        std::fs::rename(&root, t.path().join("elsewhere")).unwrap();
        std::fs::create_dir(&root).unwrap();
        assert!(matches!(w.take(), Changes::Everything(_)));
        let g = root.join("y.jsonl");
        std::fs::write(&g, b"{}\n").unwrap();
        assert_eq!(w.take(), Changes::Paths(vec![g]));
    }

    #[test]
    fn a_file_root_watches_its_directory_for_that_file_alone() {
        let t = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(t.path()).unwrap();
        let f = dir.join("one.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        let w = SessionWatch::start(std::slice::from_ref(&f));
        assert!(matches!(w.take(), Changes::Everything(_)), "first take");
        std::fs::write(dir.join("other.jsonl"), b"{}\n").unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        assert_eq!(w.take(), Changes::None);
        std::fs::write(&f, b"{}\n{}\n").unwrap();
        assert_eq!(w.take(), Changes::Paths(vec![f]));
    }

    #[test]
    fn a_barrier_directory_removed_by_a_cleaner_is_made_again() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let w = SessionWatch::start(std::slice::from_ref(&root));
        assert!(matches!(w.take(), Changes::Everything(_)), "first take");
        let marks = w.marks.as_ref().unwrap().path().to_owned();
        std::fs::remove_dir(&marks).unwrap();
        let f = root.join("x.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        assert_eq!(w.take(), Changes::Paths(vec![f.clone()]));
        std::fs::write(&f, b"{}\n{}\n").unwrap();
        assert_eq!(w.take(), Changes::Paths(vec![f]));
        assert!(marks.is_dir());
    }

    #[test]
    fn an_overflow_is_a_full_check_once_with_the_roots_watched_again() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let w = SessionWatch::start(std::slice::from_ref(&root));
        assert!(matches!(w.take(), Changes::Everything(_)), "first take");
        // What notify hands on when the kernel's queue overflowed.
        let overflow = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        handle(&w.shared, None, Ok(overflow));
        assert_eq!(
            w.take(),
            Changes::Everything("the watch's event queue overflowed".into())
        );
        assert!(!w.shared.lock().rewatch, "the roots were watched again");
        assert_eq!(w.take(), Changes::None);
        let f = root.join("x.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        assert_eq!(w.take(), Changes::Paths(vec![f]));
    }

    #[test]
    fn the_barrier_directories_of_processes_gone_are_removed() {
        // A process that is gone: a child that exited.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let stale = std::env::temp_dir().join(format!("{MARKS_PREFIX}{pid}-test"));
        let _ = std::fs::create_dir(&stale);
        let mine = std::env::temp_dir().join(format!("{MARKS_PREFIX}{}-test", std::process::id()));
        std::fs::create_dir(&mine).unwrap();
        let w = SessionWatch::start(&[]);
        assert!(!stale.exists(), "{}", stale.display());
        assert!(mine.exists(), "a live process's directory was removed");
        std::fs::remove_dir(&mine).unwrap();
        let marks = w.marks.as_ref().unwrap().path().to_owned();
        assert!(marks
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(&format!("{MARKS_PREFIX}{}-", std::process::id())));
        drop(w);
        assert!(!marks.exists(), "removed with the watch");
    }

    #[test]
    fn what_a_refresh_gives_back_is_taken_again() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let w = SessionWatch::start(std::slice::from_ref(&root));
        let first = w.take();
        assert!(matches!(first, Changes::Everything(_)));
        w.give_back(first.clone());
        assert_eq!(w.take(), first);
        let f = root.join("x.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        let c = w.take();
        assert_eq!(c, Changes::Paths(vec![f.clone()]));
        w.give_back(c.clone());
        assert!(w.wait(Duration::ZERO));
        assert_eq!(w.take(), c);
        assert!(!w.wait(Duration::ZERO));
    }
}
