//! Discovery: from the paths a user names (or Pi's default locations) to
//! the candidate session files.
//!
//! Directories are walked recursively for `*.jsonl`; a file named
//! explicitly is taken whatever its name (the fingerprint still decides).
//! Symbolic links to directories are followed, and a link that leads back
//! into a directory being walked is reported once, not looped on. Entries
//! that cannot be read are reported and skipped; the walk goes on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::pi::Agent;

/// The hasher of the maps and sets keyed by files (their paths, or
/// device and inode) that a build fills and compares: foldhash, seeded
/// afresh in each process (the keys are the user's own files, not data a
/// client sends). SipHash was a tenth of a no-change build's user time.
pub type PathHasher = foldhash::fast::RandomState;

/// A file that may be a Pi session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The canonical path.
    pub path: PathBuf,
    /// Its size when discovered.
    pub len: u64,
    /// Its identity, size and time when discovered.
    pub identity: FileIdentity,
    /// The root it was found under (canonical): a directory walked, or
    /// the file itself when it was named.
    pub root: std::sync::Arc<Path>,
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
    /// Candidate files, each once, in the order the walk found them (a
    /// build orders only those it reads, by [`Candidate::read_order`]:
    /// sorting every file found would be a serial step of every build with
    /// nothing changed,
    /// [docs/performance.md](../docs/performance.md#discovery-and-the-plan)).
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

/// A place `build` reads sessions from, and why: the `roots` of its
/// `--json` report, `-v` and `stats`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Location {
    /// The directory (or file).
    pub path: String,
    /// Why it is read: which setting or default names it.
    pub why: String,
    /// Whether it was read (it exists and its setting is usable).
    pub read: bool,
    /// Why not, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The agents whose session directory it is (both, for a setting Pi
    /// and Oh My Pi share; none for a path named on the command line
    /// that is not one of theirs). A file found here that does not say
    /// which agent wrote it is the agent's, when there is one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<Agent>,
}

impl Location {
    /// ` for Pi`, ` for Pi and Oh My Pi`, or nothing: how `build -v` and
    /// `stats` say whose directory it is.
    pub fn for_agents(&self) -> String {
        let names: Vec<&str> = self.agents.iter().map(|a| a.name()).collect();
        if names.is_empty() {
            String::new()
        } else {
            format!(" for {}", names.join(" and "))
        }
    }
}

/// The agent of each root of `locations` that belongs to exactly one
/// (canonical paths, as discovery names the roots it found files under):
/// the agent of a file found there that does not say itself.
pub fn root_agents(locations: &[Location]) -> HashMap<PathBuf, Agent> {
    locations
        .iter()
        .filter_map(|l| match l.agents.as_slice() {
            [one] => {
                let p = PathBuf::from(&l.path);
                Some((std::fs::canonicalize(&p).unwrap_or(p), *one))
            }
            _ => None,
        })
        .collect()
}

/// Where `build` with no PATH looks, in Pi 1.6's precedence then Oh My
/// Pi's (see [`default_locations`]).
#[derive(Clone, Debug, Default)]
pub struct Defaults {
    /// Every place looked at, in precedence order, read or not.
    pub locations: Vec<Location>,
    /// What is worth a warning whatever the verbosity: a settings.json
    /// that cannot be read, a `sessionDir` that cannot be used.
    pub warnings: Vec<String>,
    /// What is worth a note: no settings.json (so no `sessionDir`).
    pub notes: Vec<String>,
}

impl Defaults {
    /// The directories to read.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.locations
            .iter()
            .filter(|l| l.read)
            .map(|l| PathBuf::from(&l.path))
            .collect()
    }
}

/// Every session directory Pi 1.6 may have written to, first match of
/// Pi's own precedence first (Pi writes only to the first; older sessions
/// stay where earlier settings put them, so all that exist are read):
///
/// 1. `$PI_CODING_AGENT_SESSION_DIR`;
/// 2. the `sessionDir` of `<agent dir>/settings.json` (`~` expanded, a
///    `file://` URL read as its path; a relative path is reported and
///    skipped: Pi resolves it from the directory it runs in, which is not
///    known here);
/// 3. `<agent dir>/sessions`, the agent dir being `$PI_CODING_AGENT_DIR`
///    (`~` expanded) or `~/.pi/agent`;
/// 4. `~/.pi/agent/sessions` when the agent dir is elsewhere;
/// 5. `~/.config/pi/agent/sessions`, where MemPalace's Pi importer looks;
///
/// then every one Oh My Pi may have written to, in its own precedence:
///
/// 1. `$PI_CODING_AGENT_SESSION_DIR` (its `--session-dir` default);
/// 2. its profile's sessions (`$OMP_PROFILE`, else `$PI_PROFILE`), else
///    `$PI_CODING_AGENT_DIR/sessions`, else `$XDG_DATA_HOME/omp/sessions`
///    when that dir exists, else `~/$PI_CONFIG_DIR/agent/sessions`
///    (`~/.omp/agent/sessions`);
/// 3. `~/.omp/agent/sessions` when that was elsewhere.
///
/// A directory named twice is listed once, under its first reason, with
/// every agent that names it. A missing settings.json is a note; one that
/// is not valid JSON, or whose `sessionDir` is not a usable string, is a
/// warning; neither stops a build. Project settings
/// (`<cwd>/.pi/settings.json`, which Pi also reads) are not: a build does
/// not know the directories Pi ran in.
pub fn default_locations() -> Defaults {
    let home = directories::BaseDirs::new().map(|b| b.home_dir().to_owned());
    let home = home.as_deref();
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let mut out = Defaults::default();
    let add = |out: &mut Defaults, path: PathBuf, why: String, note: Option<String>| {
        add_location(out, path, why, note, Agent::Pi);
    };

    let default_agent = home.map_or_else(|| PathBuf::from(".pi/agent"), |h| h.join(".pi/agent"));
    let (agent, agent_why) = match env("PI_CODING_AGENT_DIR") {
        Some(dir) => (
            expand_tilde(Path::new(&dir), home),
            "the agent dir's sessions ($PI_CODING_AGENT_DIR/sessions)",
        ),
        None => (default_agent.clone(), "Pi's default session dir"),
    };

    if let Some(dir) = env("PI_CODING_AGENT_SESSION_DIR") {
        let why = "$PI_CODING_AGENT_SESSION_DIR".to_owned();
        match pi_path(&dir.to_string_lossy(), home) {
            Ok(p) => add(&mut out, p, why, None),
            Err(note) => {
                out.warnings.push(format!(
                    "$PI_CODING_AGENT_SESSION_DIR={}: {note}",
                    dir.to_string_lossy()
                ));
                add(&mut out, PathBuf::from(&dir), why, Some(note));
            }
        }
    }

    let settings = agent.join("settings.json");
    let why = format!("sessionDir in {}", settings.display());
    match std::fs::read(&settings) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => out.notes.push(format!(
            "{}: none, so no sessionDir setting (Pi's default applies)",
            settings.display()
        )),
        Err(e) => out.warnings.push(format!(
            "{}: {e}: its sessionDir (if any) is not read",
            settings.display()
        )),
        Ok(bytes) => {
            let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
            match serde_json::from_slice::<serde_json::Value>(text) {
                Err(e) => out.warnings.push(format!(
                    "{}: not valid JSON ({e}), as Pi also finds: its sessionDir (if any) is not read",
                    settings.display()
                )),
                Ok(v) => match v.get("sessionDir") {
                    None | Some(serde_json::Value::Null) => {}
                    Some(serde_json::Value::String(dir)) if dir.trim().is_empty() => {}
                    Some(serde_json::Value::String(dir)) => match pi_path(dir, home) {
                        Ok(p) => add(&mut out, p, why, None),
                        Err(note) => {
                            out.warnings
                                .push(format!("{}: sessionDir {dir:?}: {note}", settings.display()));
                            add(&mut out, PathBuf::from(dir), why, Some(note));
                        }
                    },
                    Some(other) => out.warnings.push(format!(
                        "{}: sessionDir is {other}, not a string: not read",
                        settings.display()
                    )),
                },
            }
        }
    }

    add(&mut out, agent.join("sessions"), agent_why.to_owned(), None);
    add(
        &mut out,
        default_agent.join("sessions"),
        "Pi's default session dir (~/.pi/agent/sessions)".to_owned(),
        None,
    );
    if let Some(h) = home {
        add(
            &mut out,
            h.join(".config/pi/agent/sessions"),
            "where MemPalace's Pi importer looks (~/.config/pi/agent/sessions)".to_owned(),
            None,
        );
    }
    omp_locations(&mut out, home);
    out
}

/// Add a place to `out` for `agent`: a directory already there (by its
/// path, or the same directory by another path) only gains the agent.
fn add_location(
    out: &mut Defaults,
    path: PathBuf,
    why: String,
    note: Option<String>,
    agent: Agent,
) {
    let path_s = path.to_string_lossy().into_owned();
    let canon = std::fs::canonicalize(&path).ok();
    let same = out.locations.iter_mut().find(|l| {
        l.path == path_s || (canon.is_some() && std::fs::canonicalize(&l.path).ok() == canon)
    });
    if let Some(l) = same {
        if !l.agents.contains(&agent) {
            l.agents.push(agent);
        }
        return;
    }
    let (read, note) = match note {
        Some(n) => (false, Some(n)),
        None if path.is_dir() => (true, None),
        None if path.exists() => (false, Some("not a directory".to_owned())),
        None => (false, Some("does not exist".to_owned())),
    };
    out.locations.push(Location {
        path: path_s,
        why,
        read,
        note,
        agents: vec![agent],
    });
}

/// Every session directory Oh My Pi may have written to, in its own
/// precedence (`getSessionsDir` in `@oh-my-pi/pi-utils`' `dirs.ts`, and
/// its CLI's `--session-dir`), added to `out` after Pi's:
///
/// 1. `$PI_CODING_AGENT_SESSION_DIR`, the default of its `--session-dir`
///    (Pi's too);
/// 2. the sessions of its active profile and agent dir:
///    - a named profile (`$OMP_PROFILE`, else `$PI_PROFILE`; empty or
///      `default` is the default one): `<config dir>/profiles/<name>/agent/sessions`,
///      or `$XDG_DATA_HOME/omp/profiles/<name>/sessions` when that
///      directory exists (Linux and macOS);
///    - else `$PI_CODING_AGENT_DIR/sessions` (Pi's agent dir too; `~`
///      expanded as Pi does);
///    - else `$XDG_DATA_HOME/omp/sessions` when `$XDG_DATA_HOME/omp`
///      exists (Linux and macOS: `omp config migrate` moved its data
///      there), else `<config dir>/agent/sessions`,
///
///    the config dir being `~/$PI_CONFIG_DIR`, or `~/.omp`;
/// 3. `~/.omp/agent/sessions`, its default, when the active one is
///    elsewhere (older sessions stay where they were written).
///
/// An invalid profile name (Oh My Pi refuses to start with one) is a
/// warning, and the default profile's directories are read. The `.env`
/// files Oh My Pi loads into its environment (`~/.env`,
/// `~/.omp/agent/.env`, ...) are not read.
fn omp_locations(out: &mut Defaults, home: Option<&Path>) {
    let omp = Agent::Omp;
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = env("PI_CODING_AGENT_SESSION_DIR") {
        // Pi's list named it already (and warned when it cannot be read).
        let why = "$PI_CODING_AGENT_SESSION_DIR".to_owned();
        match pi_path(&dir.to_string_lossy(), home) {
            Ok(p) => add_location(out, p, why, None, omp),
            Err(note) => add_location(out, PathBuf::from(&dir), why, Some(note), omp),
        }
    }
    let Some(home) = home else {
        return;
    };
    // `path.join(home, name)`: an absolute name stays below home.
    let config_name = env("PI_CONFIG_DIR").map(PathBuf::from);
    let config_root = match &config_name {
        Some(name) => home.join(name.strip_prefix("/").unwrap_or(name)),
        None => home.join(".omp"),
    };
    let xdg_data = env("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|_| cfg!(any(target_os = "linux", target_os = "macos")));
    // OMP_PROFILE when set at all (empty: the default profile), else
    // PI_PROFILE.
    let (profile_var, profile) = match std::env::var_os("OMP_PROFILE") {
        Some(v) => ("OMP_PROFILE", Some(v)),
        None => ("PI_PROFILE", std::env::var_os("PI_PROFILE")),
    };
    let profile = match profile.map(|p| p.to_string_lossy().into_owned()) {
        None => None,
        Some(p) => match omp_profile(&p) {
            Ok(p) => p,
            Err(why) => {
                out.warnings.push(format!(
                    "${profile_var}={p}: {why} (Oh My Pi refuses to start with it): its default profile's sessions are read"
                ));
                None
            }
        },
    };
    let default_sessions = config_root.join("agent/sessions");
    let config_shown = match &config_name {
        Some(n) => format!("~/{}", n.to_string_lossy().trim_start_matches('/')),
        None => "~/.omp".to_owned(),
    };
    if let Some(p) = profile {
        let xdg = xdg_data
            .map(|x| x.join("omp/profiles").join(&p))
            .filter(|d| d.exists());
        match xdg {
            Some(dir) => add_location(
                out,
                dir.join("sessions"),
                format!("Oh My Pi's profile {p} (${profile_var}), under $XDG_DATA_HOME"),
                None,
                omp,
            ),
            None => add_location(
                out,
                config_root.join("profiles").join(&p).join("agent/sessions"),
                format!("Oh My Pi's profile {p} (${profile_var})"),
                None,
                omp,
            ),
        }
    } else if let Some(dir) = env("PI_CODING_AGENT_DIR").filter(|d| {
        // A value a parent's profile put there is that profile's, which
        // the default profile does not use.
        let derived = std::env::var_os("PI_PROFILE")
            .and_then(|p| omp_profile(&p.to_string_lossy()).ok().flatten())
            .map(|p| config_root.join("profiles").join(p).join("agent"));
        derived.as_deref() != Some(Path::new(d))
    }) {
        let agent = expand_tilde(Path::new(&dir), Some(home));
        add_location(
            out,
            agent.join("sessions"),
            "the agent dir's sessions ($PI_CODING_AGENT_DIR/sessions)".into(),
            None,
            omp,
        );
    } else {
        match xdg_data.map(|x| x.join("omp")).filter(|d| d.exists()) {
            Some(dir) => add_location(
                out,
                dir.join("sessions"),
                "Oh My Pi's session dir under $XDG_DATA_HOME ($XDG_DATA_HOME/omp/sessions)".into(),
                None,
                omp,
            ),
            None => add_location(
                out,
                default_sessions,
                format!("Oh My Pi's default session dir ({config_shown}/agent/sessions)"),
                None,
                omp,
            ),
        }
    }
    add_location(
        out,
        home.join(".omp/agent/sessions"),
        "Oh My Pi's default session dir (~/.omp/agent/sessions)".into(),
        None,
        omp,
    );
}

/// A profile name as Oh My Pi reads one (`normalizeProfileName`):
/// trimmed; empty or `default` is the default profile (`None`); else
/// lowercase letters, digits, `.`, `_` and `-`, at most 64, starting with
/// a letter or digit, not ending with `.`, and no Windows device name.
fn omp_profile(name: &str) -> Result<Option<String>, String> {
    let name = name.trim();
    if name.is_empty() || name == "default" {
        return Ok(None);
    }
    let b = name.as_bytes();
    let allowed = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(c);
    let first_ok = b[0].is_ascii_lowercase() || b[0].is_ascii_digit();
    let stem = name.split('.').next().unwrap_or("").to_ascii_uppercase();
    let device = matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || (stem.len() == 4
            && (stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.as_bytes()[3].is_ascii_digit());
    if b.len() > 64 || !first_ok || !b.iter().all(allowed) || name.ends_with('.') || device {
        return Err("not a profile name Oh My Pi accepts".into());
    }
    Ok(Some(name.to_owned()))
}

/// A session dir as Pi 1.6 reads one (its `normalizePath`): `~` and a
/// `~/` prefix expanded, a `file://` URL turned into its path. A relative
/// path is an error: Pi resolves it from the directory it runs in.
fn pi_path(value: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    let value = match value.strip_prefix("file://") {
        Some(rest) => percent_decode(rest),
        None => value.to_owned(),
    };
    let p = if value == "~" || value.starts_with("~/") {
        match home {
            Some(h) => h.join(value.trim_start_matches('~').trim_start_matches('/')),
            None => return Err("~ cannot be expanded: no home directory".into()),
        }
    } else {
        PathBuf::from(&value)
    };
    if p.is_relative() {
        return Err(
            "a relative path, which Pi resolves from the directory it runs in: not read (pass the directory to `pi-index build`)"
                .into(),
        );
    }
    Ok(p)
}

/// `%XX` escapes of a `file://` URL's path decoded (invalid ones kept).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The [`Location`]s of paths named on a command line (canonical where
/// they exist), as a build records them: each with the agents of the
/// default session directory it lies in, if any (see
/// [`default_locations`]).
pub fn named_locations(paths: &[PathBuf]) -> Vec<Location> {
    let defaults: Vec<(PathBuf, Vec<Agent>)> = default_locations()
        .locations
        .into_iter()
        .map(|l| {
            let p = PathBuf::from(&l.path);
            (std::fs::canonicalize(&p).unwrap_or(p), l.agents)
        })
        .collect();
    paths
        .iter()
        .map(|p| {
            let path = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            // The deepest default directory the path lies in.
            let agents = defaults
                .iter()
                .filter(|(d, _)| path.starts_with(d))
                .max_by_key(|(d, _)| d.components().count())
                .map(|(_, a)| a.clone())
                .unwrap_or_default();
            Location {
                path: path.to_string_lossy().into_owned(),
                why: "named on the command line".into(),
                read: true,
                note: None,
                agents,
            }
        })
        .collect()
}

/// Pi's default session directories that exist on this machine, and every
/// place looked at (see [`default_locations`]).
pub fn default_roots() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let d = default_locations();
    let looked = d.locations.iter().map(|l| PathBuf::from(&l.path)).collect();
    (d.roots(), looked)
}

fn expand_tilde(p: &Path, home: Option<&Path>) -> PathBuf {
    match (p.strip_prefix("~"), home) {
        (Ok(rest), Some(h)) => h.join(rest),
        _ => p.to_owned(),
    }
}

/// Walk `roots` for candidate files.
pub fn discover(roots: &[PathBuf]) -> Discovered {
    walk(roots, true)
}

/// Walk `roots` for candidate files; `canonical`: each root made
/// canonical first (else taken as named: paths a watch saw below a
/// canonical root, named as this walk names them).
fn walk(roots: &[PathBuf], canonical: bool) -> Discovered {
    let mut out = Discovered::default();
    // Where each file of `out` is, by identity: made when files come from
    // a second place (another root, a named file) or a walk reached one
    // file twice; the usual build (one root, every file once) needs none.
    let mut seen: Option<Seen> = None;
    for root in roots {
        // Only the root is made canonical: the walk joins names onto it,
        // so files below get stable absolute paths without a `realpath`
        // each (that was most of a no-change build over 10,000 files).
        let root = &if canonical {
            std::fs::canonicalize(root).unwrap_or_else(|_| root.clone())
        } else {
            root.clone()
        };
        let shared: std::sync::Arc<Path> = std::sync::Arc::from(root.as_path());
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
            let seen = seen.get_or_insert_with(|| seen_of(&out.files));
            let identity = FileIdentity::of(&meta);
            let file = Candidate {
                path: root.clone(),
                len: identity.size,
                identity,
                root: shared,
            };
            add(&mut out, seen, file);
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
        let mut tree = Tree::walk(&shared, id_of(&meta));
        if out.files.is_empty() && tree.each_file_once() {
            // Taken as the walk's threads left them: going over every
            // file again on one thread is a serial step after the walk
            // ([docs/performance.md](../docs/performance.md#discovery-and-the-plan)).
            out.files = std::mem::take(&mut tree.files);
        } else {
            let seen = seen.get_or_insert_with(|| seen_of(&out.files));
            seen.reserve(tree.files.len());
            out.files.reserve(tree.files.len());
            for file in std::mem::take(&mut tree.files) {
                add(&mut out, seen, file);
            }
        }
        out.problems.extend(tree.problems);
        out.skipped.extend(tree.skipped);
        if out.files.len() + out.problems.len() + out.skipped.len() == before {
            out.skipped.push(Problem {
                path: root.clone(),
                error: "a directory with no *.jsonl file below it: nothing to index".into(),
            });
        }
    }
    out
}

impl Candidate {
    /// The order files are read in: largest first (so big files start
    /// early and a parallel build ends evenly), ties by the path's bytes
    /// (comparing paths component by component was a tenth of a build
    /// with nothing changed over 21,000 files).
    pub fn read_order(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
        b.len
            .cmp(&a.len)
            .then_with(|| a.path.as_os_str().cmp(b.path.as_os_str()))
    }
}

/// A directory's device and inode (a link that leads back to one of the
/// directories being walked is not followed).
fn id_of(meta: &std::fs::Metadata) -> (u64, u64) {
    let id = FileIdentity::of(meta);
    (id.dev, id.ino)
}

/// What a directory tree holds: its `*.jsonl` files with their identity
/// (in the order the walk's threads found them), and what could not be
/// read or was left alone (each in path order).
struct Tree {
    files: Vec<Candidate>,
    /// The device and inode of each file of `files` that has them, in no
    /// order; `None` once a file without them is found.
    ids: Option<Vec<(u64, u64)>>,
    problems: Vec<Problem>,
    skipped: Vec<Problem>,
}

impl Default for Tree {
    fn default() -> Tree {
        Tree {
            files: Vec::new(),
            ids: Some(Vec::new()),
            problems: Vec::new(),
            skipped: Vec::new(),
        }
    }
}

impl Tree {
    /// Walk `root` (a directory whose device and inode are `id`), its
    /// subdirectories in parallel. Each file's metadata is read relative
    /// to its open directory, without a lookup of its whole path (that
    /// lookup was a third of a no-change build's `statx` time over 22,000
    /// files), and symbolic links are followed.
    fn walk(root: &std::sync::Arc<Path>, id: (u64, u64)) -> Tree {
        let found = std::sync::Mutex::new(Tree::default());
        rayon::scope(|scope| visit(scope, root.to_path_buf(), vec![id], root, &found));
        let mut tree = found.into_inner().unwrap_or_else(|e| e.into_inner());
        // The files are left in the threads' order: a file reached by two
        // names is found under the first in path order by `add`, and
        // `walk` orders them all. Sorting every path here would be a
        // serial step of every no-change build
        // ([docs/performance.md](../docs/performance.md#discovery-and-the-plan)).
        // By the paths' bytes: `Path`'s own order compares component by
        // component.
        fn bytes(p: &Path) -> &[u8] {
            p.as_os_str().as_encoded_bytes()
        }
        tree.problems
            .sort_by(|a, b| bytes(&a.path).cmp(bytes(&b.path)));
        tree.skipped
            .sort_by(|a, b| bytes(&a.path).cmp(bytes(&b.path)));
        tree
    }

    /// Whether no file was reached twice (a hard link, or a symbolic link
    /// to a file or directory also walked): every file's device and inode
    /// are known and distinct.
    fn each_file_once(&mut self) -> bool {
        use rayon::slice::ParallelSliceMut;
        let Some(ids) = self.ids.as_mut() else {
            return false;
        };
        ids.par_sort_unstable();
        ids.windows(2).all(|w| w[0] != w[1])
    }
}

/// The files of a [`Discovered`] by identity (device and inode where the
/// platform has them, else the path): where each is in its list.
type Seen = HashMap<(u64, u64, PathBuf), usize, PathHasher>;

/// The [`Seen`] of `files`.
fn seen_of(files: &[Candidate]) -> Seen {
    let mut seen = Seen::with_capacity_and_hasher(files.len(), PathHasher::default());
    for (i, c) in files.iter().enumerate() {
        seen.insert(key_of(&c.path, &c.identity), i);
    }
    seen
}

/// A file's key in [`Seen`].
fn key_of(path: &Path, identity: &FileIdentity) -> (u64, u64, PathBuf) {
    if identity.ino != 0 {
        (identity.dev, identity.ino, PathBuf::new())
    } else {
        (0, 0, path.to_owned())
    }
}

/// Read one directory (its chain of directories from the root is
/// `ancestors`, itself last) into `found`, and spawn a walk of each of its
/// subdirectories (spawned, not recursed into: a deep tree does not grow
/// a thread's stack).
fn visit<'s>(
    scope: &rayon::Scope<'s>,
    dir: PathBuf,
    ancestors: Vec<(u64, u64)>,
    root: &'s std::sync::Arc<Path>,
    found: &'s std::sync::Mutex<Tree>,
) {
    use rayon::prelude::*;
    let mut here = Tree::default();
    let problem = |path: PathBuf, error: &dyn std::fmt::Display| Problem {
        path,
        error: error.to_string(),
    };
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    match std::fs::read_dir(&dir) {
        Err(e) => here.problems.push(problem(dir.clone(), &e)),
        Ok(entries) => {
            for entry in entries {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) => {
                        here.problems.push(problem(dir.clone(), &e));
                        continue;
                    }
                };
                let kind = match entry.file_type() {
                    Ok(kind) => kind,
                    Err(e) => {
                        here.problems.push(problem(entry.path(), &e));
                        continue;
                    }
                };
                if kind.is_symlink() {
                    // Followed: to a directory (walked unless it is one
                    // of this walk's own), or to a file.
                    let path = entry.path();
                    match std::fs::metadata(&path) {
                        Err(e) => here.problems.push(problem(path, &e)),
                        Ok(m) if m.is_dir() => {
                            if ancestors.contains(&id_of(&m)) {
                                here.problems
                                    .push(problem(path, &"symbolic link loop, not followed"));
                            } else {
                                dirs.push((path, id_of(&m)));
                            }
                        }
                        Ok(m) if is_jsonl(&path) => match special_file(m.file_type()) {
                            Some(why) => here.skipped.push(problem(path, &why)),
                            None => here.push(path, FileIdentity::of(&m), root),
                        },
                        Ok(_) => {}
                    }
                } else if kind.is_dir() {
                    match entry.metadata() {
                        Ok(m) => dirs.push((entry.path(), id_of(&m))),
                        Err(e) => here.problems.push(problem(entry.path(), &e)),
                    }
                } else {
                    let path = entry.path();
                    if is_jsonl(&path) {
                        match special_file(kind) {
                            Some(why) => here.skipped.push(problem(path, &why)),
                            None => files.push((path, entry)),
                        }
                    }
                }
            }
        }
    }
    // The files' metadata, in parallel, each relative to the directory
    // still open; the directory is closed before its subdirectories are
    // read, so open directories stay few however wide the tree.
    let metas: Vec<(PathBuf, std::io::Result<FileIdentity>)> = files
        .into_par_iter()
        .with_min_len(64)
        .map(|(path, entry)| {
            let identity = entry.metadata().map(|m| FileIdentity::of(&m));
            (path, identity)
        })
        .collect();
    for (path, meta) in metas {
        match meta {
            Ok(identity) => here.push(path, identity, root),
            Err(e) => here.problems.push(problem(path, &e)),
        }
    }
    {
        let mut all = found.lock().unwrap_or_else(|e| e.into_inner());
        all.files.append(&mut here.files);
        match (&mut all.ids, &mut here.ids) {
            (Some(ids), Some(more)) => ids.append(more),
            (ids, _) => *ids = None,
        }
        all.problems.append(&mut here.problems);
        all.skipped.append(&mut here.skipped);
    }
    for (sub, id) in dirs {
        let mut chain = ancestors.clone();
        chain.push(id);
        scope.spawn(move |scope| visit(scope, sub, chain, root, found));
    }
}

impl Tree {
    /// A file found below `root`.
    fn push(&mut self, path: PathBuf, identity: FileIdentity, root: &std::sync::Arc<Path>) {
        match &mut self.ids {
            Some(ids) if identity.ino != 0 => ids.push((identity.dev, identity.ino)),
            ids => *ids = None,
        }
        self.files.push(Candidate {
            path,
            len: identity.size,
            identity,
            root: root.clone(),
        });
    }
}

/// Discovery of what changed below `roots`: the `*.jsonl` files among
/// `changed` and below the directories among them, each with the root it
/// lies under (what a watcher saw change; a path that no longer exists is
/// left out, and a directory with no session in it is no problem here).
pub fn discover_changed(roots: &[PathBuf], changed: &[PathBuf]) -> Discovered {
    let roots: Vec<PathBuf> = roots
        .iter()
        .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.clone()))
        .collect();
    // Named as the watch named them (below a canonical root, through
    // any symbolic link as the walk of a build goes): made canonical, a
    // file reached through a link would be a second path to it.
    let named: Vec<PathBuf> = changed
        .iter()
        .filter(|p| is_jsonl(p) || p.is_dir())
        .filter(|p| p.exists())
        .cloned()
        .collect();
    let mut found = walk(&named, false);
    found
        .skipped
        .retain(|p| !p.error.starts_with("a directory with no *.jsonl file"));
    let mut shared: Vec<std::sync::Arc<Path>> = roots
        .iter()
        .map(|r| std::sync::Arc::from(r.as_path()))
        .collect();
    // The deepest root first: a root inside another is its own.
    shared.sort_by_key(|r| std::cmp::Reverse(r.components().count()));
    found
        .files
        .retain_mut(|c| match shared.iter().find(|r| c.path.starts_with(r)) {
            Some(r) => {
                c.root = r.clone();
                true
            }
            None => false,
        });
    found
}

fn is_jsonl(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "jsonl")
}

/// Add a file once: a file reached twice (two roots, a symbolic link) is
/// recognised by its device and inode where the platform has them.
fn add(out: &mut Discovered, seen: &mut Seen, file: Candidate) {
    use std::collections::hash_map::Entry;
    match seen.entry(key_of(&file.path, &file.identity)) {
        Entry::Vacant(v) => {
            v.insert(out.files.len());
            out.files.push(file);
        }
        // A file reached by two names (links) is found under the first
        // root's, and within one root's walk under the first in the
        // order of the paths' bytes, whatever order the walk's threads
        // found them in.
        Entry::Occupied(o) => {
            let c = &mut out.files[*o.get()];
            if std::sync::Arc::ptr_eq(&c.root, &file.root)
                && file.path.as_os_str().as_encoded_bytes() < c.path.as_os_str().as_encoded_bytes()
            {
                c.path = file.path;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walk with no file reached twice hands its files over as found;
    /// a hard link (two names of one file in one tree) and a root inside
    /// another still give each file once, under its first name.
    #[cfg(unix)]
    #[test]
    fn each_file_once_with_a_hard_link_and_a_root_inside_another() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("sessions");
        let sub = root.join("--p--");
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..100 {
            std::fs::write(sub.join(format!("s{f:03}.jsonl")), vec![b'x'; f + 1]).unwrap();
        }
        let canonical = std::fs::canonicalize(&root).unwrap();
        let d = discover(std::slice::from_ref(&root));
        assert_eq!(d.files.len(), 100);
        let d = discover(&[root.clone(), sub.clone()]);
        assert_eq!(d.files.len(), 100);
        assert!(d.files.iter().all(|c| *c.root == *canonical));
        std::fs::hard_link(sub.join("s050.jsonl"), sub.join("a-link.jsonl")).unwrap();
        let d = discover(std::slice::from_ref(&root));
        assert_eq!(d.files.len(), 100);
        assert!(d
            .files
            .iter()
            .any(|c| c.path.ends_with("--p--/a-link.jsonl")));
        assert!(!d.files.iter().any(|c| c.path.ends_with("s050.jsonl")));
    }

    /// The parallel walk finds every file of a wide and deep tree once,
    /// follows links to directories and files, and reports a broken link
    /// and a loop, each list in path order.
    #[cfg(unix)]
    #[test]
    fn walks_wide_deep_and_linked_trees_exactly() {
        use std::os::unix::fs::symlink;
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("sessions");
        let mut want = Vec::new();
        for d in 0..40 {
            let dir = root.join(format!("--p{d:02}--"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..(d % 7) * 20 {
                let path = dir.join(format!("s{f:03}.jsonl"));
                std::fs::write(&path, vec![b'x'; f + 1]).unwrap();
                want.push(path);
            }
            std::fs::write(dir.join("notes.txt"), b"x").unwrap();
        }
        // Deeper than any stack would like to recurse through.
        let mut deep = root.join("deep");
        for _ in 0..300 {
            deep = deep.join("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("bottom.jsonl"), b"{}\n").unwrap();
        want.push(deep.join("bottom.jsonl"));
        // Outside the root, reached through links: a directory and a file.
        let outside = t.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("far.jsonl"), b"{}\n").unwrap();
        std::fs::write(outside.join("single.jsonl"), b"{}\n").unwrap();
        symlink(&outside, root.join("linked")).unwrap();
        want.push(root.join("linked/far.jsonl"));
        want.push(root.join("linked/single.jsonl"));
        // A second name for a file already found: found once, under the
        // first of its names in the order of the paths' bytes, whichever
        // the walk's threads reach first.
        symlink(root.join("--p01--/s000.jsonl"), root.join("again.jsonl")).unwrap();
        symlink(
            root.join("--p03--/s000.jsonl"),
            root.join("--a-first.jsonl"),
        )
        .unwrap();
        want.retain(|p| *p != root.join("--p03--/s000.jsonl"));
        want.push(root.join("--a-first.jsonl"));
        symlink(t.path().join("nowhere"), root.join("broken.jsonl")).unwrap();
        symlink(&root, root.join("--p02--/up")).unwrap();

        let d = discover(std::slice::from_ref(&root));
        let canonical = std::fs::canonicalize(&root).unwrap();
        let rebase = |p: &Path| canonical.join(p.strip_prefix(&root).unwrap());
        let mut found: Vec<PathBuf> = d.files.iter().map(|c| c.path.clone()).collect();
        found.sort();
        let mut want: Vec<PathBuf> = want.iter().map(|p| rebase(p)).collect();
        want.sort();
        assert_eq!(found, want);
        let problems: Vec<(PathBuf, bool)> = d
            .problems
            .iter()
            .map(|p| (p.path.clone(), p.error.contains("loop")))
            .collect();
        assert_eq!(
            problems,
            vec![
                (rebase(&root.join("--p02--/up")), true),
                (rebase(&root.join("broken.jsonl")), false),
            ],
            "{:?}",
            d.problems
        );
        // Read largest first, then by path.
        let mut order: Vec<&Candidate> = d.files.iter().collect();
        order.sort_by(|a, b| Candidate::read_order(a, b));
        assert!(order
            .windows(2)
            .all(|w| w[0].len > w[1].len || (w[0].len == w[1].len && w[0].path < w[1].path)));
        assert!(order.first().unwrap().len > order.last().unwrap().len);
    }

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
