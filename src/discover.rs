//! Discovery: from the paths a user names (or Pi's default locations) to
//! the candidate session files.
//!
//! Directories are walked recursively for `*.jsonl`; a file named
//! explicitly is taken whatever its name (the fingerprint still decides).
//! Symbolic links to directories are followed, and a link that leads back
//! into a directory being walked is reported once, not looped on. Entries
//! that cannot be read are reported and skipped; the walk goes on.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

/// A file that may be a Pi session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The canonical path.
    pub path: PathBuf,
    /// Its size when discovered.
    pub len: u64,
    /// Its identity, size and time when discovered.
    pub identity: FileIdentity,
}

/// A file's identity and size, from its metadata.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileIdentity {
    /// Device number (0 where the platform has none).
    pub dev: u64,
    /// Inode number (0 where the platform has none).
    pub ino: u64,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: u64,
}

impl FileIdentity {
    /// Read from metadata.
    pub fn of(m: &std::fs::Metadata) -> FileIdentity {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileIdentity {
                dev: m.dev(),
                ino: m.ino(),
                size: m.len(),
                mtime_ns: (m.mtime() as u64)
                    .wrapping_mul(1_000_000_000)
                    .wrapping_add(m.mtime_nsec() as u64),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as u64);
            FileIdentity {
                dev: 0,
                ino: 0,
                size: m.len(),
                mtime_ns,
            }
        }
    }
}

/// Something discovery could not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where.
    pub path: PathBuf,
    /// What went wrong.
    pub error: String,
}

/// What discovery found.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Candidate files, largest first (so big files start early and the
    /// parallel build ends evenly), each once.
    pub files: Vec<Candidate>,
    /// Entries that could not be read.
    pub problems: Vec<Problem>,
    /// What was left alone, and why: special files (a FIFO would block a
    /// read forever, `/dev/zero` never ends) named or found as `*.jsonl`,
    /// and roots with no `*.jsonl` file below them.
    pub skipped: Vec<Problem>,
}

/// Why a file that is not a regular file is not read, if it is not one.
fn special_file(file_type: std::fs::FileType) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return Some("a named pipe (FIFO), not a regular file: not read");
        }
        if file_type.is_char_device() {
            return Some("a character device, not a regular file: not read");
        }
        if file_type.is_block_device() {
            return Some("a block device, not a regular file: not read");
        }
        if file_type.is_socket() {
            return Some("a socket, not a regular file: not read");
        }
    }
    (!file_type.is_file() && !file_type.is_dir()).then_some("not a regular file: not read")
}

/// Pi's default session directories that exist on this machine:
/// `$PI_CODING_AGENT_DIR/sessions` (else `~/.pi/agent/sessions`), and
/// `~/.config/pi/agent/sessions` when it exists. The second element lists
/// every place looked at, for the error message when none exists.
pub fn default_roots() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let home = directories::BaseDirs::new().map(|b| b.home_dir().to_owned());
    let mut looked = Vec::new();
    let agent = match std::env::var_os("PI_CODING_AGENT_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => expand_tilde(Path::new(&dir), home.as_deref()),
        None => home
            .as_deref()
            .map(|h| h.join(".pi/agent"))
            .unwrap_or_else(|| PathBuf::from(".pi/agent")),
    };
    looked.push(agent.join("sessions"));
    if let Some(h) = &home {
        looked.push(h.join(".config/pi/agent/sessions"));
    }
    let found = looked.iter().filter(|p| p.is_dir()).cloned().collect();
    (found, looked)
}

fn expand_tilde(p: &Path, home: Option<&Path>) -> PathBuf {
    match (p.strip_prefix("~"), home) {
        (Ok(rest), Some(h)) => h.join(rest),
        _ => p.to_owned(),
    }
}

/// Walk `roots` for candidate files.
pub fn discover(roots: &[PathBuf]) -> Discovered {
    let mut out = Discovered::default();
    let mut seen = HashSet::new();
    for root in roots {
        // Only the root is made canonical: the walk joins names onto it,
        // so files below get stable absolute paths without a `realpath`
        // each (that was most of a no-change build over 10,000 files).
        let root = &std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
        let meta = match std::fs::metadata(root) {
            Ok(m) => m,
            Err(e) => {
                out.problems.push(Problem {
                    path: root.clone(),
                    error: e.to_string(),
                });
                continue;
            }
        };
        if meta.is_file() {
            add(&mut out, &mut seen, root, &meta);
            continue;
        }
        if let Some(why) = special_file(meta.file_type()) {
            out.skipped.push(Problem {
                path: root.clone(),
                error: why.into(),
            });
            continue;
        }
        let before = out.files.len() + out.problems.len() + out.skipped.len();
        for entry in WalkDir::new(root).follow_links(true) {
            match entry {
                Ok(e) => {
                    if !is_jsonl(e.path()) || e.file_type().is_dir() {
                        continue;
                    }
                    if let Some(why) = special_file(e.file_type()) {
                        out.skipped.push(Problem {
                            path: e.path().to_owned(),
                            error: why.into(),
                        });
                        continue;
                    }
                    match e.metadata() {
                        Ok(m) => add(&mut out, &mut seen, e.path(), &m),
                        Err(err) => out.problems.push(Problem {
                            path: e.path().to_owned(),
                            error: err.to_string(),
                        }),
                    }
                }
                Err(err) => {
                    let path = err
                        .path()
                        .map(Path::to_owned)
                        .unwrap_or_else(|| root.clone());
                    let error = if err.loop_ancestor().is_some() {
                        "symbolic link loop, not followed".to_owned()
                    } else {
                        err.io_error()
                            .map_or_else(|| err.to_string(), ToString::to_string)
                    };
                    out.problems.push(Problem { path, error });
                }
            }
        }
        if out.files.len() + out.problems.len() + out.skipped.len() == before {
            out.skipped.push(Problem {
                path: root.clone(),
                error: "a directory with no *.jsonl file below it: nothing to index".into(),
            });
        }
    }
    out.files
        .sort_by(|a, b| b.len.cmp(&a.len).then_with(|| a.path.cmp(&b.path)));
    out
}

fn is_jsonl(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "jsonl")
}

/// Add a file once: a file reached twice (two roots, a symbolic link) is
/// recognised by its device and inode where the platform has them.
fn add(
    out: &mut Discovered,
    seen: &mut HashSet<(u64, u64, PathBuf)>,
    path: &Path,
    meta: &std::fs::Metadata,
) {
    let identity = FileIdentity::of(meta);
    let key = if identity.ino != 0 {
        (identity.dev, identity.ino, PathBuf::new())
    } else {
        (0, 0, path.to_owned())
    };
    if seen.insert(key) {
        out.files.push(Candidate {
            path: path.to_owned(),
            len: meta.len(),
            identity,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_for_jsonl_and_follows_links_without_looping() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("sessions");
        std::fs::create_dir_all(root.join("--a--")).unwrap();
        std::fs::write(root.join("--a--/x.jsonl"), b"{}\n").unwrap();
        std::fs::write(root.join("--a--/y.json"), b"{}\n").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&root, root.join("--a--/loop")).unwrap();
        let d = discover(std::slice::from_ref(&root));
        assert_eq!(d.files.len(), 1);
        assert!(d.files[0].path.ends_with("x.jsonl"));
        #[cfg(unix)]
        assert_eq!(d.problems.len(), 1, "{:?}", d.problems);
        // A file named explicitly is taken whatever its extension, once.
        let d = discover(&[root.join("--a--/y.json"), root.join("--a--/y.json")]);
        assert_eq!(d.files.len(), 1);
        let d = discover(&[t.path().join("missing")]);
        assert!(d.files.is_empty());
        assert_eq!(d.problems.len(), 1);
        // A directory with nothing to index, and a special file, are said.
        let empty = t.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        std::fs::write(empty.join("notes.txt"), b"x").unwrap();
        let d = discover(&[empty, "/dev/null".into()]);
        assert!(d.files.is_empty());
        let why: Vec<&str> = d.skipped.iter().map(|p| p.error.as_str()).collect();
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(why[0].contains("no *.jsonl file"), "{why:?}");
        assert!(why[1].contains("character device"), "{why:?}");
    }
}
