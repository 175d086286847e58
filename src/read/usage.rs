//! What Pi cost, as every source reads it ([`super::Source::usage`]):
//! the usage each session's record holds ([`crate::pi::usage`], one row
//! per entry that recorded some), totalled by day, week, month, session,
//! model or project.
//!
//! Every entry of a family is counted once. A fork copies its parent's
//! entries, usage and all, into its own file; an entry's key (its id and
//! time) is the same in every copy, so within a family an entry is
//! counted where it first appears (ancestors first, then older first:
//! [`crate::index::family::Families::age`]). A session's own row keeps
//! both figures: `cost`, everything its file records (what Pi's
//! `/session` shows), and `own_cost`, what it spent beyond the entries
//! copied from its ancestors.
//!
//! A row with a [`Fault`] is never summed; the report counts the faults.
//!
//! A session outside a group (a family, the files of one id) holds no
//! entry another holds, so its rows' sums by quarter hour and model serve
//! a report whose bounds and time zone's days fall on quarter hours
//! ([`Need`]); the local index gives those instead of its rows
//! ([docs/performance.md](../../docs/performance.md#sums-by-quarter-hour)).
//!
//! What one session cost, those two figures and its tokens
//! ([`SessionCost`]), is its row of the report by session: for every
//! session ([`session_costs`], what `sessions --sort cost` orders by,
//! [`by_cost`]), or for one ([`session_cost`], what a session page
//! shows), from the usage of the sessions it is counted with alone.
//!
//! Sessions of the team database come from several hosts
//! ([`SessionSpend::host`]): a family and the copies of a session are a
//! host's own (lineage never crosses hosts, and two machines' files of
//! one id are two machines' spending), so entries are counted once per
//! host, each host's exactly as its own index counts them. Periods,
//! models and projects total every host reported; a session's row says
//! its host, and [`Grouping::Host`] totals each host.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// The hasher of the report's maps, keyed by numbers.
type Fast = foldhash::fast::FixedState;

use serde::Serialize;

use super::session::SessionRow;
use crate::index::spent::{Row, RowIter, Sum, Sums, Value};
use crate::pi::usage::Fault;

/// How rows are grouped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grouping {
    /// By calendar day in the time zone.
    Daily,
    /// By ISO week (Monday first) in the time zone.
    Weekly,
    /// By calendar month in the time zone.
    Monthly,
    /// By session file.
    Session,
    /// By `provider/model` (Pi's breakdown buckets).
    Model,
    /// By working directory.
    Project,
    /// By pushing host (the team database's sessions).
    Host,
}

/// What to total.
#[derive(Clone, Debug)]
pub struct UsageQuery {
    /// The grouping.
    pub grouping: Grouping,
    /// Only entries at or after this time (epoch ms).
    pub since_ms: Option<i64>,
    /// Only entries before this time (epoch ms).
    pub until_ms: Option<i64>,
    /// The time zone periods are counted in.
    pub tz: jiff::tz::TimeZone,
    /// Only sessions at or below this directory (normalized).
    pub cwd: Option<String>,
    /// Only buckets containing one of these fragments (lower case).
    pub models: Vec<String>,
    /// Only sessions whose id starts with this (`session:`).
    pub session: Option<String>,
    /// Only the family of the session whose id starts with this
    /// (`family:`).
    pub family: Option<String>,
    /// Only the sessions of this host (`host:`; the team database's).
    pub host: Option<String>,
}

/// What a report needs of each session's usage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// A session's sums by quarter hour and model where they serve (a
    /// session outside a family or a group of copies, whose entries are
    /// all summed), its rows elsewhere.
    Sums,
    /// Every session's rows: the query's time bounds or time zone are not
    /// on quarter hours ([`crate::index::spent::quarter_exact`]).
    Rows,
}

impl UsageQuery {
    /// Every entry, by `grouping`, in UTC.
    pub fn all(grouping: Grouping) -> UsageQuery {
        UsageQuery {
            grouping,
            since_ms: None,
            until_ms: None,
            tz: jiff::tz::TimeZone::UTC,
            cwd: None,
            models: Vec::new(),
            session: None,
            family: None,
            host: None,
        }
    }

    /// What the query needs of each session's usage: sums serve unless a
    /// bound falls inside a quarter hour or the time zone's days do.
    pub fn need(&self) -> Need {
        let quarter =
            |t: Option<i64>| t.is_none_or(|t| t.rem_euclid(crate::index::spent::QUARTER_MS) == 0);
        if quarter(self.since_ms)
            && quarter(self.until_ms)
            && crate::index::spent::quarter_exact(&self.tz)
        {
            Need::Sums
        } else {
            Need::Rows
        }
    }
}

/// Tokens and money.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Spent {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache read tokens.
    pub cache_read: u64,
    /// Cache write tokens.
    pub cache_write: u64,
    /// The four summed (what Pi counts as a session's tokens).
    pub total_tokens: u64,
    /// Dollars, as recorded.
    pub cost: f64,
}

impl Spent {
    /// Add the four token counts `tokens` and the cost `cost`.
    fn add_counts(&mut self, tokens: &[u64; 4], cost: f64) {
        self.input += tokens[0];
        self.output += tokens[1];
        self.cache_read += tokens[2];
        self.cache_write += tokens[3];
        self.total_tokens += tokens.iter().sum::<u64>();
        self.cost += cost;
    }

    fn merge(&mut self, o: &Spent) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.total_tokens += o.total_tokens;
        self.cost += o.cost;
    }
}

/// One line of a report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UsageRow {
    /// The period (`2026-03-01`, `2026-W09`, `2026-03`), the model, or
    /// the project, as the grouping says; for sessions, the session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    /// Sessions: the host that pushed it (the team database's); hosts:
    /// the host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Sessions: the session's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Sessions: its file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Sessions: its name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Sessions: its working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Models: the bucket.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Projects: the working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Tokens and cost (for a session: everything its file records).
    #[serde(flatten)]
    pub spent: Spent,
    /// Sessions: what it spent beyond the entries copied from its
    /// ancestors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_cost: Option<f64>,
    /// The buckets its entries name.
    pub models: Vec<String>,
    /// Sessions: what its file records, by bucket, as Pi's `/session`
    /// shows it (`getUsageCostBreakdown`: highest cost first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<Vec<Bucket>>,
    /// Sessions: its place in [`UsageData::sessions`].
    #[serde(skip)]
    pub session: Option<usize>,
}

/// One bucket of a session's breakdown.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bucket {
    /// `provider/model`, or `Tools/summaries`.
    pub key: String,
    /// Dollars.
    pub cost: f64,
    /// The four token counts summed.
    pub tokens: u64,
}

/// A report: its rows, their total (each entry of a family once) and what
/// could not be summed.
#[derive(Clone, Debug, Default)]
pub struct UsageReport {
    /// The rows, in their order (periods oldest first; sessions, models
    /// and projects by cost, highest first).
    pub rows: Vec<UsageRow>,
    /// Everything the rows hold, each entry once.
    pub total: Spent,
    /// Entries left out of every sum, by why.
    pub faults: Vec<(Fault, u64)>,
}

/// One session's record and usage, as the report needs them.
#[derive(Clone, Debug, Default)]
pub struct SessionSpend {
    /// The session's key.
    pub key: u64,
    /// The host that pushed it (the team database's sessions; `None`:
    /// the local index's): a session is named by its host and path
    /// ([`by_cost`]).
    pub host: Option<String>,
    /// Its id.
    pub session_id: String,
    /// Its file.
    pub path: String,
    /// Its name.
    pub name: Option<String>,
    /// Its working directory.
    pub cwd: Option<String>,
    /// Its family, when it has indexed relatives.
    pub family: Option<u64>,
    /// Its place in its family ([`crate::index::family::Families::age`]).
    pub age: (u32, i64, u64),
    /// Its usage rows, in file order (their buckets index
    /// [`UsageData::buckets`]). Sessions whose stored values are the same
    /// bytes (the files of a copied folder) share them: a report counts
    /// such a copy within its group without reading its rows again.
    pub rows: Arc<Recorded>,
}

/// A session's usage rows as the data holds them: its stored value,
/// each row decoded as a report reads it, and the number the data gives
/// each of its buckets.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    value: Value,
    /// The data's number of each of the value's buckets.
    buckets: Vec<u32>,
    /// Whether the value did not read at all.
    unreadable: bool,
    /// The rows summed, read instead of them ([`Need::Sums`]), their
    /// buckets numbered as the data numbers them.
    sums: Option<Vec<Sum>>,
}

impl Recorded {
    /// How many rows it holds (none when its sums were read instead).
    pub fn len(&self) -> usize {
        self.value.len()
    }

    /// Whether it holds no row.
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// Its sums, when they were read instead of its rows.
    pub fn sums(&self) -> Option<&[Sum]> {
        self.sums.as_deref()
    }

    /// What counting it costs, about: its rows, or its sums.
    fn weight(&self) -> usize {
        self.sums.as_ref().map_or(self.value.len(), Vec::len)
    }

    /// Its rows, in file order, their buckets numbered as the data numbers
    /// them.
    pub fn rows(&self) -> RecordedRows<'_> {
        RecordedRows {
            rows: self.value.rows(),
            buckets: &self.buckets,
            lost: self.unreadable.then_some(1),
        }
    }
}

/// The rows of a [`Recorded`].
pub struct RecordedRows<'a> {
    rows: RowIter<'a>,
    buckets: &'a [u32],
    /// The rows lost where the value stopped reading before its rows
    /// did: its head (at least one), or a row naming no bucket (it and
    /// those after it).
    lost: Option<u64>,
}

impl RecordedRows<'_> {
    /// How many rows did not read.
    pub fn unread(&self) -> u64 {
        match self.lost {
            Some(n) => n,
            // A row that did not read is among those left.
            None if self.rows.cut_short() => self.rows.left() as u64,
            None => 0,
        }
    }
}

impl Iterator for RecordedRows<'_> {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        if self.lost.is_some() {
            return None;
        }
        let mut row = self.rows.next()?;
        match self.buckets.get(row.bucket as usize) {
            Some(&b) => row.bucket = b,
            // A bucket the value does not name: it is damaged from here.
            None => {
                self.lost = Some(self.rows.left() as u64 + 1);
                return None;
            }
        }
        Some(row)
    }
}

/// Every session's usage, and the names of the buckets.
#[derive(Clone, Debug, Default)]
pub struct UsageData {
    /// The sessions.
    pub sessions: Vec<SessionSpend>,
    /// The buckets the rows name.
    pub buckets: Vec<String>,
    /// Sessions held without their usage, by host: rows pushed to the
    /// team database before it held usage, which their host's next push
    /// completes. Empty for the local index.
    pub without_usage: Vec<(String, u64)>,
}

/// [`UsageData`] made a session at a time, each session's buckets
/// numbered as the data numbers them.
#[derive(Default)]
pub struct Collect {
    data: UsageData,
    ids: HashMap<String, u32>,
}

impl Collect {
    /// Add `session` (its rows left empty) with the stored value `stored`
    /// (`None`: one that did not read).
    pub fn add(&mut self, mut session: SessionSpend, stored: Option<Value>) {
        session.rows = self.share(stored);
        self.push(session);
    }

    /// The stored value `stored` (`None`: one that did not read), its
    /// buckets numbered as the data numbers buckets: what
    /// [`Collect::push`] takes, once for every session whose stored value
    /// is the same.
    pub fn share(&mut self, stored: Option<Value>) -> Arc<Recorded> {
        let Some(value) = stored else {
            return Arc::new(Recorded {
                unreadable: true,
                ..Recorded::default()
            });
        };
        let buckets = self.number(value.buckets());
        Arc::new(Recorded {
            value,
            buckets,
            unreadable: false,
            sums: None,
        })
    }

    /// A session's sums, read instead of its rows ([`Need::Sums`]), their
    /// buckets numbered as the data numbers buckets.
    pub fn share_sums(&mut self, stored: &Sums) -> Arc<Recorded> {
        let numbers = self.number(&stored.buckets);
        let sums = stored
            .sums
            .iter()
            .map(|m| Sum {
                bucket: numbers[m.bucket as usize],
                ..*m
            })
            .collect();
        Arc::new(Recorded {
            sums: Some(sums),
            ..Recorded::default()
        })
    }

    /// The data's number of each of `buckets`, new ones added.
    fn number(&mut self, buckets: &[String]) -> Vec<u32> {
        let out = &mut self.data;
        buckets
            .iter()
            .map(|b| {
                if let Some(&i) = self.ids.get(b.as_str()) {
                    return i;
                }
                let next = out.buckets.len() as u32;
                out.buckets.push(b.clone());
                self.ids.insert(b.clone(), next);
                next
            })
            .collect()
    }

    /// Add `session` with its rows ([`Collect::share`]).
    pub fn push(&mut self, session: SessionSpend) {
        self.data.sessions.push(session);
    }

    /// The data.
    pub fn finish(self) -> UsageData {
        self.data
    }
}

/// The civil date of `ms` in `tz`, remembering the last day's bounds:
/// rows come mostly in time order, so most are answered without a time
/// zone lookup.
struct Days {
    tz: jiff::tz::TimeZone,
    /// The last day found: its first and first-after millisecond, and it.
    last: Option<(i64, i64, jiff::civil::Date)>,
}

impl Days {
    fn date(&mut self, ms: i64) -> jiff::civil::Date {
        if let Some((start, end, d)) = self.last {
            if (start..end).contains(&ms) {
                return d;
            }
        }
        let Ok(t) = jiff::Timestamp::from_millisecond(ms) else {
            return jiff::civil::date(1970, 1, 1);
        };
        let z = t.to_zoned_datetime(self.tz.clone());
        let d = z.date();
        let bounds = (|| {
            let start = z.start_of_day().ok()?;
            let next = start.tomorrow().ok()?.start_of_day().ok()?;
            Some((
                start.timestamp().as_millisecond(),
                next.timestamp().as_millisecond(),
            ))
        })();
        if let Some((start, end)) = bounds {
            self.last = Some((start, end, d));
        }
        d
    }
}

/// A row's group: a period as a number that sorts as its name does (a
/// row is grouped by it, and only each group's name is written), or a
/// name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Key {
    Period(i32),
    Bucket(u32),
    Name(String),
}

fn period(grouping: Grouping, d: jiff::civil::Date) -> i32 {
    match grouping {
        Grouping::Weekly => {
            let w = d.iso_week_date();
            i32::from(w.year()) * 100 + i32::from(w.week())
        }
        Grouping::Monthly => i32::from(d.year()) * 100 + i32::from(d.month()),
        _ => (i32::from(d.year()) * 100 + i32::from(d.month())) * 100 + i32::from(d.day()),
    }
}

/// The name of a group.
fn key_name(grouping: Grouping, key: Key, bucket: &dyn Fn(u32) -> String) -> String {
    match key {
        Key::Name(n) => n,
        Key::Bucket(b) => bucket(b),
        Key::Period(p) => match grouping {
            Grouping::Weekly => format!("{:04}-W{:02}", p / 100, p % 100),
            Grouping::Monthly => format!("{:04}-{:02}", p / 100, p % 100),
            _ => format!("{:04}-{:02}-{:02}", p / 10000, p / 100 % 100, p % 100),
        },
    }
}

/// Whether `cwd` is `dir` or below it.
fn below(cwd: Option<&str>, dir: &str) -> bool {
    cwd.unwrap_or("")
        .strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || dir == "/")
}

/// Total `data` as `q` asks.
///
/// A family's sessions hold copies of each other's entries, so each
/// family is counted on one thread; the families are cut into batches of
/// whole groups of about the same number of rows, counted in parallel
/// and added up in order. The batches follow the data, not the threads,
/// so a report sums the same numbers in the same order on any machine
/// ([docs/performance.md](../../docs/performance.md#rows-read-as-they-are-counted)).
pub fn report(data: &UsageData, q: &UsageQuery) -> UsageReport {
    use rayon::prelude::*;
    let name = |b: u32| {
        data.buckets
            .get(b as usize)
            .cloned()
            .unwrap_or_else(|| "unknown".to_owned())
    };
    // Which families `family:` keeps (a family is its host's).
    let families: Option<HashSet<(Option<&str>, u64)>> = q.family.as_ref().map(|id| {
        data.sessions
            .iter()
            .filter(|s| s.session_id.starts_with(id.as_str()))
            .map(|s| (s.host.as_deref(), s.family.unwrap_or(s.key)))
            .collect()
    });
    // Which buckets `model:` keeps, each named once.
    let models: Vec<bool> = data
        .buckets
        .iter()
        .map(|b| {
            let n = b.to_lowercase();
            q.models.is_empty() || q.models.iter().any(|m| n.contains(m.as_str()))
        })
        .collect();
    // Each family's sessions in family order; an entry counts at the
    // first that holds it.
    // Files of one session id are copies of one session (a backup, a
    // moved folder): Pi never gives two sessions one id. Where no family
    // joins them (a version 1 session has no entry ids to infer one
    // from), they are a group of their own, so that each entry counts
    // once. Both are a host's own: its sessions are sorted together.
    let ids = Ids::count(
        data.sessions
            .iter()
            .map(|s| (s.host.as_deref(), s.session_id.as_str())),
    );
    let group = |s: &SessionSpend| {
        let id = s.session_id.as_str();
        group_of(s.family, id, ids.shared(s.host.as_deref(), id))
    };
    let mut order: Vec<Counted> = data
        .sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (group(s), i, s))
        .collect();
    order.sort_by(|(ga, _, a), (gb, _, b)| {
        (&a.host, ga.unwrap_or(a.key), a.age, &a.path).cmp(&(
            &b.host,
            gb.unwrap_or(b.key),
            b.age,
            &b.path,
        ))
    });
    let count = Count {
        q,
        models: &models,
        families: families.as_ref(),
        buckets: data.buckets.len(),
    };
    let tallies: Vec<Tally> = batches(&order)
        .into_par_iter()
        .map(|batch| count.tally(batch))
        .collect();
    // Added up in the batches' order.
    let mut faults: BTreeMap<u64, u64> = BTreeMap::new();
    let mut total = Spent::default();
    let mut groups: HashMap<Key, (Spent, Bits), Fast> = HashMap::default();
    let mut sessions: Vec<(usize, Own)> = Vec::new();
    for t in tallies {
        total.merge(&t.total);
        for (rank, n) in t.faults {
            *faults.entry(rank).or_default() += n;
        }
        for (key, spent, bits) in t.groups.list {
            let g = groups
                .entry(key)
                .or_insert_with(|| (Spent::default(), Bits::new(count.buckets)));
            g.0.merge(&spent);
            g.1.union(&bits);
        }
        sessions.extend(t.sessions);
    }
    let mut rows: Vec<UsageRow> = if q.grouping == Grouping::Session {
        sessions
            .into_iter()
            .map(|(at, s)| {
                let d = &data.sessions[at];
                let mut models: Vec<String> = s.buckets.iter().map(name).collect();
                models.sort();
                let mut breakdown: Vec<Bucket> = s
                    .by_bucket
                    .into_iter()
                    .filter(|(_, b)| b.cost > 0.0 || b.total_tokens > 0)
                    .map(|(m, b)| Bucket {
                        key: name(m),
                        cost: b.cost,
                        tokens: b.total_tokens,
                    })
                    .collect();
                // Highest cost first, as Pi sorts (a stable sort: ties stay
                // in the order they first appeared, as in Pi's map).
                breakdown.sort_by(|a, b| b.cost.total_cmp(&a.cost));
                UsageRow {
                    period: None,
                    host: d.host.clone(),
                    session_id: Some(d.session_id.clone()),
                    path: Some(d.path.clone()),
                    name: d.name.clone(),
                    cwd: d.cwd.clone(),
                    model: None,
                    project: None,
                    spent: s.whole,
                    own_cost: Some(s.own),
                    models,
                    breakdown: Some(breakdown),
                    session: Some(at),
                }
            })
            .collect()
    } else {
        let mut groups: Vec<_> = groups.into_iter().collect();
        groups.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        groups
            .into_iter()
            .map(|(key, (spent, buckets))| {
                let key = key_name(q.grouping, key, &name);
                let mut models: Vec<String> = buckets.iter().map(name).collect();
                models.sort();
                let mut row = UsageRow {
                    period: None,
                    host: None,
                    session_id: None,
                    path: None,
                    name: None,
                    cwd: None,
                    model: None,
                    project: None,
                    spent,
                    own_cost: None,
                    models,
                    breakdown: None,
                    session: None,
                };
                match q.grouping {
                    Grouping::Model => row.model = Some(key),
                    Grouping::Project => row.project = Some(key),
                    Grouping::Host => row.host = Some(key),
                    _ => row.period = Some(key),
                }
                row
            })
            .collect()
    };
    if matches!(
        q.grouping,
        Grouping::Session | Grouping::Model | Grouping::Project | Grouping::Host
    ) {
        rows.sort_by(|a, b| {
            b.spent
                .cost
                .total_cmp(&a.spent.cost)
                .then_with(|| b.spent.total_tokens.cmp(&a.spent.total_tokens))
                .then_with(|| a.model.cmp(&b.model))
        });
    }
    UsageReport {
        rows,
        total,
        faults: faults
            .into_iter()
            .filter_map(|(r, n)| Some((Fault::from_rank(r)?, n)))
            .collect(),
    }
}

/// How many sessions hold each id, by host: files of one id are copies
/// of one session ([`group_of`]).
pub(crate) struct Ids<'a>(HashMap<(Option<&'a str>, &'a str), u32, Fast>);

impl<'a> Ids<'a> {
    /// The ids of `sessions` (host, id), counted.
    pub(crate) fn count(sessions: impl Iterator<Item = (Option<&'a str>, &'a str)>) -> Ids<'a> {
        let mut n: HashMap<(Option<&str>, &str), u32, Fast> = HashMap::default();
        for s in sessions {
            *n.entry(s).or_default() += 1;
        }
        Ids(n)
    }

    /// Whether another session of `host` holds `id`.
    pub(crate) fn shared(&self, host: Option<&str>, id: &str) -> bool {
        self.0.get(&(host, id)).is_some_and(|&n| n > 1)
    }
}

/// The group a report counts a session in, each entry once across it:
/// its family, else, when it shares its id with other files, the files
/// of its id; `None`: it is counted alone (and may be read as sums,
/// [`Need`]).
pub(crate) fn group_of(family: Option<u64>, id: &str, shares_id: bool) -> Option<u64> {
    family.or_else(|| shares_id.then(|| crate::index::schema::session_key(&format!("id:{id}"))))
}

/// A session in the order a report counts it: its group (family, or
/// files of one id), its place in [`UsageData::sessions`], and it.
type Counted<'a> = (Option<u64>, usize, &'a SessionSpend);

/// About how many rows a batch of a report holds: enough that a batch
/// costs far more than starting it, few enough that a large index has
/// many more batches than threads.
const BATCH_ROWS: usize = 1 << 16;

/// `order` cut into batches of whole groups, each of about
/// [`BATCH_ROWS`] rows or one group.
fn batches<'o, 'a>(order: &'o [Counted<'a>]) -> Vec<&'o [Counted<'a>]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut rows = 0;
    for (i, (g, _, s)) in order.iter().enumerate() {
        // A new group starts here unless this session is in the group of
        // the one before.
        let joined = i > 0 && g.is_some() && {
            let (pg, _, p) = &order[i - 1];
            pg == g && p.host == s.host
        };
        if !joined && rows >= BATCH_ROWS {
            out.push(&order[start..i]);
            start = i;
            rows = 0;
        }
        rows += s.rows.weight();
    }
    if start < order.len() {
        out.push(&order[start..]);
    }
    out
}

/// The buckets a group's rows name, as bits.
#[derive(Clone, Debug, Default)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(buckets: usize) -> Bits {
        Bits(vec![0; buckets.div_ceil(64)])
    }

    fn insert(&mut self, b: u32) {
        if let Some(w) = self.0.get_mut(b as usize / 64) {
            *w |= 1 << (b % 64);
        }
    }

    fn union(&mut self, o: &Bits) {
        for (w, o) in self.0.iter_mut().zip(&o.0) {
            *w |= o;
        }
    }

    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &w)| {
            (0..64u32)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| i as u32 * 64 + b)
        })
    }
}

/// The groups of one batch, in the order first met, and the one the last
/// row went to.
#[derive(Default)]
struct Groups {
    at: HashMap<Key, usize, Fast>,
    list: Vec<(Key, Spent, Bits)>,
}

impl Groups {
    fn slot(&mut self, key: Key, buckets: usize) -> usize {
        let list = &mut self.list;
        *self.at.entry(key).or_insert_with_key(|key| {
            list.push((key.clone(), Spent::default(), Bits::new(buckets)));
            list.len() - 1
        })
    }
}

/// What a batch counted.
#[derive(Default)]
struct Tally {
    groups: Groups,
    total: Spent,
    faults: BTreeMap<u64, u64>,
    /// Each session's own row, by its place in [`UsageData::sessions`].
    sessions: Vec<(usize, Own)>,
}

/// What a report counts, the same for every batch.
struct Count<'a> {
    q: &'a UsageQuery,
    /// Whether `model:` keeps each bucket.
    models: &'a [bool],
    /// The families `family:` keeps.
    families: Option<&'a HashSet<(Option<&'a str>, u64)>>,
    /// How many buckets there are.
    buckets: usize,
}

impl Count<'_> {
    fn keeps_session(&self, s: &SessionSpend) -> bool {
        let q = self.q;
        q.cwd.as_deref().is_none_or(|d| below(s.cwd.as_deref(), d))
            && q.session
                .as_deref()
                .is_none_or(|id| s.session_id.starts_with(id))
            && q.host
                .as_deref()
                .is_none_or(|h| s.host.as_deref() == Some(h))
            && self
                .families
                .is_none_or(|f| f.contains(&(s.host.as_deref(), s.family.unwrap_or(s.key))))
    }

    /// Whether the report counts a row, or a sum of rows (its bounds on
    /// quarter hours: a quarter hour is in them or out whole), at `time`
    /// of `bucket`.
    fn keeps(&self, time: Option<i64>, bucket: u32) -> bool {
        let q = self.q;
        (q.since_ms.is_none_or(|s| time.is_some_and(|t| t >= s)))
            && (q.until_ms.is_none_or(|e| time.is_some_and(|t| t < e)))
            && self.models.get(bucket as usize).copied().unwrap_or(false)
    }

    /// Count `item` of session `s`: in the session's own row (by
    /// session), and, when it is the first of its entries in its group,
    /// in what it spent itself, the total and its group.
    fn count(
        &self,
        out: &mut Tally,
        places: &mut Places,
        s: &SessionSpend,
        mine: &mut Own,
        item: Item<'_>,
        first: bool,
    ) {
        if self.q.grouping == Grouping::Session {
            mine.add(item.bucket, item.tokens, item.cost);
        }
        if !first {
            return;
        }
        mine.own += item.cost;
        out.total.add_counts(item.tokens, item.cost);
        if let Some(grp) = self.group(&mut out.groups, places, s, item.time, item.bucket) {
            grp.1.add_counts(item.tokens, item.cost);
            grp.2.insert(item.bucket);
        }
    }

    /// The group a count of `bucket` at `time` of session `s` goes to
    /// (`None` by session: a session's row is its own).
    fn group<'g>(
        &self,
        groups: &'g mut Groups,
        places: &mut Places,
        s: &SessionSpend,
        time: Option<i64>,
        bucket: u32,
    ) -> Option<&'g mut (Key, Spent, Bits)> {
        let q = self.q;
        let slot = match q.grouping {
            Grouping::Session => return None,
            Grouping::Daily | Grouping::Weekly | Grouping::Monthly => {
                let p = time.map(|t| period(q.grouping, places.days.date(t)));
                let key = || p.map_or_else(|| Key::Name("unknown".to_owned()), Key::Period);
                self.cached(groups, &mut places.last, p, key)
            }
            Grouping::Model => self.cached(groups, &mut places.last, Some(bucket as i32), || {
                Key::Bucket(bucket)
            }),
            Grouping::Project | Grouping::Host => match places.session {
                Some(slot) => slot,
                None => {
                    let name = if q.grouping == Grouping::Project {
                        s.cwd.clone().unwrap_or_else(|| "(unknown)".into())
                    } else {
                        s.host.clone().unwrap_or_else(|| "(local)".into())
                    };
                    let slot = groups.slot(Key::Name(name), self.buckets);
                    places.session = Some(slot);
                    slot
                }
            },
        };
        groups.list.get_mut(slot)
    }

    /// The group `k` (a period or a bucket) names, by way of `last`, the
    /// one the last count went to: counts come mostly in time order.
    fn cached(
        &self,
        groups: &mut Groups,
        last: &mut Option<(Option<i32>, usize)>,
        k: Option<i32>,
        key: impl FnOnce() -> Key,
    ) -> usize {
        match *last {
            Some((lk, slot)) if lk == k => slot,
            _ => {
                let slot = groups.slot(key(), self.buckets);
                *last = Some((k, slot));
                slot
            }
        }
    }

    /// Count the sessions of `batch`, whole groups in family order.
    fn tally(&self, batch: &[Counted<'_>]) -> Tally {
        let q = self.q;
        let by_session = q.grouping == Grouping::Session;
        let mut out = Tally::default();
        let mut places = Places {
            days: Days {
                tz: q.tz.clone(),
                last: None,
            },
            last: None,
            session: None,
        };
        let mut seen: HashSet<u64, Fast> = HashSet::default();
        // The rows already counted in this group, by their shared value: a
        // copy of them holds no entry that is counted first.
        let mut seen_values: HashSet<*const Recorded, Fast> = HashSet::default();
        let mut family = None;
        // Sums are read only for a query on quarter hours (checked once,
        // in debug builds).
        let sums_serve = cfg!(debug_assertions) && q.need() == Need::Sums;
        for &(g, at, s) in batch {
            let here = g.map(|g| (s.host.as_deref(), g));
            if here != family || g.is_none() {
                seen.clear();
                seen_values.clear();
                family = here;
            }
            // Every entry of a copy was counted where its rows were first
            // met; only a session's own row reads them again.
            if g.is_some() && !seen_values.insert(Arc::as_ptr(&s.rows)) && !by_session {
                continue;
            }
            let kept = self.keeps_session(s);
            // Outside a group, a session left out holds nothing another
            // counts.
            if !kept && g.is_none() {
                continue;
            }
            places.session = None;
            let mut mine = Own {
                buckets: Bits::new(if by_session { self.buckets } else { 0 }),
                ..Own::default()
            };
            if let Some(sums) = s.rows.sums() {
                // Sums are read only for a session outside a group.
                debug_assert!(g.is_none() && sums_serve);
                for m in sums {
                    // A quarter hour is in one day ([`Need`]).
                    let time = m.start_ms();
                    if self.keeps(time, m.bucket) {
                        let item = Item {
                            time,
                            bucket: m.bucket,
                            tokens: &m.tokens,
                            cost: m.cost,
                        };
                        self.count(&mut out, &mut places, s, &mut mine, item, true);
                    }
                }
            } else {
                let mut rows = s.rows.rows();
                for u in rows.by_ref() {
                    // Only a group's sessions hold copies of each other's
                    // entries.
                    let first = g.is_none() || seen.insert(u.key);
                    if !kept || !self.keeps(u.ts_ms, u.bucket) {
                        continue;
                    }
                    if let Some(f) = u.fault() {
                        if first {
                            *out.faults.entry(f.rank()).or_default() += 1;
                        }
                        continue;
                    }
                    let item = Item {
                        time: u.ts_ms,
                        bucket: u.bucket,
                        tokens: &u.tokens,
                        cost: u.cost,
                    };
                    self.count(&mut out, &mut places, s, &mut mine, item, first);
                }
                let unread = rows.unread();
                if kept && unread > 0 {
                    *out.faults.entry(Fault::Unreadable.rank()).or_default() += unread;
                }
            }
            if by_session && kept && mine.buckets.iter().next().is_some() {
                out.sessions.push((at, mine));
            }
        }
        out
    }
}

/// One row, or one sum of rows, as a report counts it.
struct Item<'r> {
    time: Option<i64>,
    bucket: u32,
    tokens: &'r [u64; 4],
    cost: f64,
}

/// Where a batch's counts go, found fast.
struct Places {
    days: Days,
    /// The group the last count went to, by its period (`None`: no
    /// time) or bucket.
    last: Option<(Option<i32>, usize)>,
    /// The group of the session being counted (projects, hosts).
    session: Option<usize>,
}

/// What a session's own row counts.
#[derive(Default)]
struct Own {
    /// Everything its file records.
    whole: Spent,
    /// What it spent beyond the entries copied from its ancestors.
    own: f64,
    /// The buckets its entries name.
    buckets: Bits,
    /// What its file records, by bucket, in the order first met.
    by_bucket: Vec<(u32, Spent)>,
}

impl Own {
    fn add(&mut self, bucket: u32, tokens: &[u64; 4], cost: f64) {
        self.whole.add_counts(tokens, cost);
        self.buckets.insert(bucket);
        match self.by_bucket.iter_mut().find(|(b, _)| *b == bucket) {
            Some((_, b)) => b.add_counts(tokens, cost),
            None => {
                let mut b = Spent::default();
                b.add_counts(tokens, cost);
                self.by_bucket.push((bucket, b));
            }
        }
    }
}

/// What one session cost: its row of a report by session.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SessionCost {
    /// Dollars: everything its file records (what Pi's `/session`
    /// shows).
    pub cost: f64,
    /// Dollars: what it spent beyond the entries copied from its
    /// ancestors (each entry of a family counted once).
    pub own_cost: f64,
    /// The tokens its file records, the four counts summed.
    pub total_tokens: u64,
}

/// What each session of `data` cost, by its place in
/// [`UsageData::sessions`]; `None` for a session that recorded no usage
/// that could be summed.
pub fn session_costs(data: &UsageData) -> Vec<Option<SessionCost>> {
    let q = UsageQuery::all(Grouping::Session);
    let mut out = vec![None; data.sessions.len()];
    for row in report(data, &q).rows {
        if let Some(at) = row.session {
            out[at] = Some(SessionCost {
                cost: row.spent.cost,
                own_cost: row.own_cost.unwrap_or(0.0),
                total_tokens: row.spent.total_tokens,
            });
        }
    }
    out
}

/// What `session` cost, from `data`: the usage of every session it is
/// counted with (its family, the files of its id) or more; `None` when it
/// recorded none, or `data` does not hold it.
pub fn session_cost(data: &UsageData, session: &SessionRow) -> Option<SessionCost> {
    let at = data
        .sessions
        .iter()
        .position(|s| s.path == session.path && s.host.as_deref() == session.host.as_deref())?;
    session_costs(data).swap_remove(at)
}

/// `sessions` (newest first), with what each cost, most first: by what
/// each spent itself (`own_cost`: a fork's copies of its parent's entries
/// are its parent's spending, so a family's money is ranked once), ties
/// in the order given; the sessions that recorded no usage last. A
/// session is found in `data` by its host and path.
pub fn by_cost(
    sessions: Vec<SessionRow>,
    data: &UsageData,
) -> Vec<(SessionRow, Option<SessionCost>)> {
    let costs = session_costs(data);
    let at: HashMap<(Option<&str>, &str), usize> = data
        .sessions
        .iter()
        .enumerate()
        .map(|(i, s)| ((s.host.as_deref(), s.path.as_str()), i))
        .collect();
    let mut out: Vec<(SessionRow, Option<SessionCost>)> = sessions
        .into_iter()
        .map(|row| {
            let cost = at
                .get(&(row.host.as_deref(), row.path.as_str()))
                .and_then(|&i| costs[i]);
            (row, cost)
        })
        .collect();
    // A stable sort: ties keep the order given.
    out.sort_by(|(_, a), (_, b)| match (a, b) {
        (Some(a), Some(b)) => b.own_cost.total_cmp(&a.own_cost),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::spent::{Spent as Stored, Sums};
    use crate::pi::usage::{Cost, Source, Usage, UsageEntry};

    const DAY_MS: i64 = 86_400_000;

    /// `n` entries with keys from `first`, an hour apart from `start`,
    /// each `first + i` input tokens and that many thousandths of a
    /// dollar.
    fn entries(first: u64, n: u64, start: i64) -> Vec<UsageEntry> {
        let model: Arc<str> = Arc::from("anthropic/claude-sonnet-4-5");
        (0..n)
            .map(|i| UsageEntry {
                line: i + 1,
                key: first + i,
                timestamp_ms: Some(start + i as i64 * 3_600_000),
                source: Source::Assistant,
                model: model.clone(),
                usage: Usage {
                    input: first + i,
                    output: 1,
                    cache_read: 0,
                    cache_write: 0,
                    costs: [Cost::decimal(first + i, 3).unwrap(); 5],
                },
                fault: None,
            })
            .collect()
    }

    fn value(entries: &[UsageEntry]) -> Vec<u8> {
        let mut s = Stored::default();
        s.extend(entries);
        s.encode().into_bytes()
    }

    fn session(key: u64, family: Option<u64>, depth: u32) -> SessionSpend {
        SessionSpend {
            key,
            session_id: format!("s{key}"),
            path: format!("/s/{key}.jsonl"),
            family,
            age: match family {
                Some(_) => (depth, i64::from(depth), key),
                None => (u32::MAX, i64::MAX, key),
            },
            ..SessionSpend::default()
        }
    }

    fn query(grouping: Grouping) -> UsageQuery {
        UsageQuery::all(grouping)
    }

    fn on_threads(n: usize, f: impl FnOnce() -> UsageReport + Send) -> UsageReport {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
            .install(f)
    }

    #[test]
    fn a_report_adds_up_the_same_on_any_number_of_threads_and_a_family_once_across_batches() {
        let start = 1_767_225_600_000; // 2026-01-01
        let mut c = Collect::default();
        // Plain sessions, then a family larger than a batch: a parent and
        // a fork that copies all of its entries and adds its own.
        let mut distinct: Vec<UsageEntry> = Vec::new();
        for k in 0..3u64 {
            let e = entries(k * 100_000, 30_000, start + k as i64 * DAY_MS);
            c.add(session(k, None, 0), Value::read(value(&e)));
            distinct.extend(e);
        }
        let parent = entries(1_000_000, 70_000, start);
        let mut fork = parent.clone();
        fork.extend(entries(2_000_000, 2_000, start + 70_000 * 3_600_000));
        c.add(session(10, Some(7), 0), Value::read(value(&parent)));
        c.add(session(11, Some(7), 1), Value::read(value(&fork)));
        distinct.extend(fork);
        let data = c.finish();
        let rows: usize = data.sessions.iter().map(|s| s.rows.len()).sum();
        assert!(rows > 2 * BATCH_ROWS, "{rows} rows: too few for batches");

        let daily = query(Grouping::Daily);
        let one = on_threads(1, || report(&data, &daily));
        let four = on_threads(4, || report(&data, &daily));
        // To the last bit, row by row.
        assert_eq!(one.rows, four.rows);
        assert_eq!(one.total, four.total);
        // Every entry once: the fork's copies of its parent's are not
        // counted again, though the family is larger than a batch.
        let input: u64 = distinct.iter().map(|e| e.usage.input).sum();
        assert_eq!(one.total.input, input);
        assert_eq!(one.total.output, distinct.len() as u64);
        assert_eq!(one.rows.iter().map(|r| r.spent.input).sum::<u64>(), input);
        let dollars = input as f64 / 1000.0;
        assert!((one.total.cost - dollars).abs() < 1e-6 * dollars);
        // Days: each entry in its own, an hour apart.
        let days: HashSet<i64> = distinct
            .iter()
            .map(|e| e.timestamp_ms.unwrap().div_euclid(DAY_MS))
            .collect();
        assert_eq!(one.rows.len(), days.len());

        // By session: the fork's own cost is its own entries', its cost
        // everything its file records.
        let sessions = on_threads(3, || report(&data, &query(Grouping::Session)));
        let fork = sessions
            .rows
            .iter()
            .find(|r| r.session_id.as_deref() == Some("s11"))
            .unwrap();
        let own: u64 = (2_000_000..2_002_000).sum();
        assert!((fork.own_cost.unwrap() - own as f64 / 1000.0).abs() < 1e-6);
        assert_eq!(fork.spent.output, 72_000);
    }

    #[test]
    fn a_damaged_value_counts_the_rows_before_the_damage_and_reports_the_rest() {
        let e = entries(1, 10, 1_767_225_600_000);
        let mut bytes = value(&e);
        bytes.pop();
        let mut c = Collect::default();
        c.add(session(1, None, 0), Value::read(bytes));
        // A value whose head does not read at all.
        c.add(session(2, None, 0), None);
        let r = report(&c.finish(), &query(Grouping::Daily));
        assert_eq!(r.total.output, 9);
        assert_eq!(r.total.input, (1..10).sum::<u64>());
        assert_eq!(r.faults, [(Fault::Unreadable, 2)]);
    }

    #[test]
    fn a_row_naming_no_bucket_loses_it_and_the_rows_after_it() {
        let mut e = entries(1, 3, 1_767_225_600_000);
        for x in &mut e {
            // A name of bytes under 0x40, one byte each in the head.
            x.model = Arc::from("1/2");
            x.timestamp_ms = None;
        }
        let mut bytes = value(&e);
        // The head (version, one bucket, its name's length and three
        // bytes, three rows), the first row's time and key: its bucket.
        let at = 7 + 1 + 10;
        assert_eq!(bytes[at], 0);
        bytes[at] = 5;
        let mut c = Collect::default();
        c.add(session(1, None, 0), Value::read(bytes));
        let r = report(&c.finish(), &query(Grouping::Daily));
        assert_eq!(r.total.output, 0);
        assert_eq!(r.faults, [(Fault::Unreadable, 3)]);
    }

    /// Entries of three models at uneven times over several days, some
    /// without a time.
    fn mixed(first: u64, n: u64, start: i64) -> Vec<UsageEntry> {
        let models: [Arc<str>; 3] = [
            Arc::from("anthropic/claude-sonnet-4-5"),
            Arc::from("openai/gpt-5"),
            Arc::from("Tools/summaries"),
        ];
        let mut t = start;
        (0..n)
            .map(|i| {
                t += (i as i64 * 7_919 % 3_600_000) + 61_000;
                UsageEntry {
                    line: i + 1,
                    key: first + i,
                    timestamp_ms: (i % 17 != 0).then_some(t),
                    source: Source::Assistant,
                    model: models[(i % 3) as usize].clone(),
                    usage: Usage {
                        input: i * 3,
                        output: i + 1,
                        cache_read: i * 101,
                        cache_write: i % 7,
                        // Seventeen digits, as JavaScript writes them.
                        costs: [Cost::decimal(10_000_000_000_000_000 + i * 37_123, 18).unwrap(); 5],
                    },
                    fault: None,
                }
            })
            .collect()
    }

    /// The same sessions with their rows, and with their sums.
    fn both(sessions: &[Vec<UsageEntry>]) -> (UsageData, UsageData) {
        let (mut rows, mut sums) = (Collect::default(), Collect::default());
        for (k, e) in sessions.iter().enumerate() {
            let mut s = Stored::default();
            s.extend(e);
            let mut with_rows = session(k as u64, None, 0);
            with_rows.cwd = Some(format!("/p/{}", k % 2));
            let mut with_sums = with_rows.clone();
            with_rows.rows = rows.share(Value::read(s.encode().into_bytes()));
            with_sums.rows = sums.share_sums(&Sums::read(s.encode_sums().as_bytes()).unwrap());
            rows.push(with_rows);
            sums.push(with_sums);
        }
        (rows.finish(), sums.finish())
    }

    fn same(a: &UsageReport, b: &UsageReport, what: &str) {
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(1.0);
        assert_eq!(a.rows.len(), b.rows.len(), "{what}");
        for (x, y) in a.rows.iter().zip(&b.rows) {
            let mut y2 = y.clone();
            assert!(close(x.spent.cost, y.spent.cost), "{what}: {x:?} {y:?}");
            y2.spent.cost = x.spent.cost;
            y2.own_cost = x.own_cost;
            if let (Some(bx), Some(by)) = (&x.breakdown, &mut y2.breakdown) {
                for (p, q) in bx.iter().zip(by.iter_mut()) {
                    assert!(close(p.cost, q.cost), "{what}");
                    q.cost = p.cost;
                }
            }
            assert_eq!(x, &y2, "{what}");
        }
        let mut t = b.total;
        assert!(close(a.total.cost, t.cost), "{what}");
        t.cost = a.total.cost;
        assert_eq!(a.total, t, "{what}");
    }

    #[test]
    fn sums_by_quarter_hour_give_every_report_the_rows_give() {
        let start = 1_767_225_600_000 - 5 * 3_600_000;
        let sessions: Vec<Vec<UsageEntry>> = (0..6)
            .map(|k| mixed(k * 10_000, 400, start + k as i64 * 29 * 3_600_000))
            .collect();
        let (rows, sums) = both(&sessions);
        assert!(sums.sessions.iter().all(|s| s.rows.sums().is_some()));
        let zones = [
            "UTC",
            "Asia/Kathmandu",
            "America/New_York",
            "Australia/Lord_Howe",
        ];
        for zone in zones {
            let tz = jiff::tz::TimeZone::get(zone).unwrap();
            for grouping in [
                Grouping::Daily,
                Grouping::Weekly,
                Grouping::Monthly,
                Grouping::Session,
                Grouping::Model,
                Grouping::Project,
            ] {
                let mut q = query(grouping);
                q.tz = tz.clone();
                assert_eq!(q.need(), Need::Sums, "{zone}");
                same(
                    &report(&rows, &q),
                    &report(&sums, &q),
                    &format!("{zone} {grouping:?}"),
                );
                // Bounds on quarter hours, and a model.
                q.since_ms = Some(start + 24 * 3_600_000);
                q.until_ms = Some(start + 24 * 3_600_000 * 5 + 45 * 60_000);
                q.models = vec!["gpt".into()];
                assert_eq!(q.need(), Need::Sums);
                let r = report(&rows, &q);
                assert!(
                    r.total.output > 0
                        && r.total.output < report(&rows, &query(grouping)).total.output
                );
                same(
                    &r,
                    &report(&sums, &q),
                    &format!("{zone} {grouping:?} bounded"),
                );
            }
        }
        // A bound inside a quarter hour, or a time zone whose days do not
        // start on one: the rows are needed.
        let mut q = query(Grouping::Daily);
        q.since_ms = Some(start + 60_000);
        assert_eq!(q.need(), Need::Rows);
        let mut q = query(Grouping::Daily);
        q.tz = jiff::tz::TimeZone::get("America/St_Johns").unwrap();
        assert_eq!(q.need(), Need::Rows);
    }

    #[test]
    fn rows_that_cannot_be_summed_leave_no_sums() {
        let ok = mixed(1, 50, 1_767_225_600_000);
        let mut faulted = ok.clone();
        faulted[7].fault = Some(Fault::BadCost);
        let mut old = ok.clone();
        old[3].timestamp_ms = Some(-5);
        for (e, summed) in [(&ok, true), (&faulted, false), (&old, false)] {
            let mut s = Stored::default();
            s.extend(e);
            assert_eq!(!s.encode_sums().is_empty(), summed);
            // A grown file's record: resumed from its rows, then added to.
            let mut grown = Stored::resume(s.encode().into_bytes());
            grown.extend(&ok[..5]);
            let mut whole = Stored::default();
            whole.extend(e);
            whole.extend(&ok[..5]);
            assert_eq!(grown.encode_sums(), whole.encode_sums());
        }
    }
}
