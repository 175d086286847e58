//! What a source holds: `stats --json`'s object (the local index's, or
//! the team database's with each host's), and what the stats page
//! charts.

use std::collections::BTreeMap;

use serde::Serialize;

/// Where the sessions are read from.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Place {
    /// The local index, by its directory.
    Index(String),
    /// The team database (`user@host:port/db`, never the password).
    Database(String),
}

/// What `pi-index stats` reports: the same object for the local index
/// and the team database, each with what it knows (the index its size,
/// build and projects; the database its hosts).
#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    /// Where the sessions are: `index` (the directory) or `database`.
    #[serde(flatten)]
    pub place: Place,
    /// Sessions indexed.
    pub sessions: u64,
    /// Documents indexed.
    pub messages: u64,
    /// Of those, copies of a message that an older session of their
    /// family holds (forks copy their parent's entries): `messages -
    /// copies` distinct messages (the local index).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copies: Option<u64>,
    /// Sessions with a parent (stated or inferred: see
    /// [`crate::index::family`]).
    pub forks: u64,
    /// Documents per role (roles with none are left out).
    pub messages_by_role: BTreeMap<String, u64>,
    /// Projects with the most sessions, at most 10 (the local index).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_projects: Option<Vec<Project>>,
    /// Each host, most sessions first (the team database).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<HostStats>>,
    /// The earliest session start.
    pub first: Option<String>,
    /// The latest document.
    pub last: Option<String>,
    /// The index on disk and its last build (the local index).
    #[serde(flatten)]
    pub build: Option<Built>,
}

/// The local index on disk, and what its last build recorded.
#[derive(Clone, Debug, Serialize)]
pub struct Built {
    /// Bytes the index takes on disk.
    pub index_bytes: u64,
    /// Its segments, each of which a search opens: a fresh build leaves a
    /// few, incremental builds add some.
    pub segments: u64,
    /// When the last build committed.
    pub built_at: Option<String>,
    /// The opt-in kinds the last build included.
    pub kinds: Option<String>,
    /// Where the last build read sessions from, and why (each with `read`:
    /// whether it existed and was read).
    pub roots: Vec<crate::discover::Location>,
}

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

/// A host of the team database.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostStats {
    /// Its name (`push --as`).
    pub host: String,
    /// Its sessions.
    pub sessions: u64,
    /// Their messages.
    pub messages: u64,
    /// Its latest message.
    pub last: Option<String>,
    /// When it last pushed.
    pub pushed_at: Option<String>,
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
