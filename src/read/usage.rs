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
use crate::index::spent::{Row, Rows};
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
    fn add(&mut self, u: &Row) {
        self.input += u.tokens[0];
        self.output += u.tokens[1];
        self.cache_read += u.tokens[2];
        self.cache_write += u.tokens[3];
        self.total_tokens += u.tokens.iter().sum::<u64>();
        self.cost += u.cost[0];
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
    pub rows: Arc<Vec<Row>>,
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
    /// Add `session` (its rows left empty) with the rows `stored`, whose
    /// buckets index `stored.buckets`.
    pub fn add(&mut self, mut session: SessionSpend, stored: Rows) {
        session.rows = self.share(stored);
        self.push(session);
    }

    /// The rows `stored`, whose buckets index `stored.buckets`, numbered
    /// as the data numbers buckets: what [`Collect::push`] takes, once
    /// for every session whose stored value is the same.
    pub fn share(&mut self, stored: Rows) -> Arc<Vec<Row>> {
        let out = &mut self.data;
        let global: Vec<u32> = stored
            .buckets
            .into_iter()
            .map(|b| {
                let next = out.buckets.len() as u32;
                *self.ids.entry(b).or_insert_with_key(|b| {
                    out.buckets.push(b.clone());
                    next
                })
            })
            .collect();
        let mut rows = stored.rows;
        for row in &mut rows {
            row.bucket = global.get(row.bucket as usize).copied().unwrap_or(0);
        }
        Arc::new(rows)
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

fn period(grouping: Grouping, d: jiff::civil::Date) -> Key {
    Key::Period(match grouping {
        Grouping::Weekly => {
            let w = d.iso_week_date();
            i32::from(w.year()) * 100 + i32::from(w.week())
        }
        Grouping::Monthly => i32::from(d.year()) * 100 + i32::from(d.month()),
        _ => (i32::from(d.year()) * 100 + i32::from(d.month())) * 100 + i32::from(d.day()),
    })
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
pub fn report(data: &UsageData, q: &UsageQuery) -> UsageReport {
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
    let keep_session = |s: &SessionSpend| {
        q.cwd.as_deref().is_none_or(|d| below(s.cwd.as_deref(), d))
            && q.session
                .as_deref()
                .is_none_or(|id| s.session_id.starts_with(id))
            && q.host
                .as_deref()
                .is_none_or(|h| s.host.as_deref() == Some(h))
            && families
                .as_ref()
                .is_none_or(|f| f.contains(&(s.host.as_deref(), s.family.unwrap_or(s.key))))
    };
    let keep_row = |u: &Row| {
        (q.since_ms.is_none_or(|s| u.ts_ms.is_some_and(|t| t >= s)))
            && (q.until_ms.is_none_or(|e| u.ts_ms.is_some_and(|t| t < e)))
            && (q.models.is_empty() || {
                let n = name(u.bucket).to_lowercase();
                q.models.iter().any(|m| n.contains(m.as_str()))
            })
    };
    // Each family's sessions in family order; an entry counts at the
    // first that holds it.
    // Files of one session id are copies of one session (a backup, a
    // moved folder): Pi never gives two sessions one id. Where no family
    // joins them (a version 1 session has no entry ids to infer one
    // from), they are a group of their own, so that each entry counts
    // once. Both are a host's own: its sessions are sorted together.
    let mut ids: HashMap<(Option<&str>, &str), u32> = HashMap::new();
    for s in &data.sessions {
        *ids.entry((s.host.as_deref(), s.session_id.as_str()))
            .or_default() += 1;
    }
    let group = |s: &SessionSpend| -> Option<u64> {
        s.family.or_else(|| {
            (ids.get(&(s.host.as_deref(), s.session_id.as_str()))
                .copied()
                .unwrap_or(0)
                > 1)
            .then(|| crate::index::schema::session_key(&format!("id:{}", s.session_id)))
        })
    };
    let mut order: Vec<(Option<u64>, usize, &SessionSpend)> = data
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
    let mut faults: BTreeMap<u64, u64> = BTreeMap::new();
    let mut total = Spent::default();
    // Maps touched for every row hash with foldhash, not SipHash, and
    // the groups are sorted once at the end
    // ([docs/performance.md](../../docs/performance.md#what-pi-cost)).
    let mut groups: HashMap<Key, (Spent, HashSet<u32, Fast>), Fast> = HashMap::default();
    let mut sessions: Vec<UsageRow> = Vec::new();
    let mut days = Days {
        tz: q.tz.clone(),
        last: None,
    };
    let mut seen: HashSet<u64, Fast> = HashSet::default();
    // The rows already counted in this group, by their shared value: a
    // copy of them holds no entry that is counted first.
    let mut seen_values: HashSet<*const Vec<Row>, Fast> = HashSet::default();
    let mut family = None;
    for (g, at, s) in order {
        let here = g.map(|g| (s.host.as_deref(), g));
        if here != family || g.is_none() {
            seen.clear();
            seen_values.clear();
            family = here;
        }
        // Every entry of a copy was counted where its rows were first
        // met; only a session's own row reads them again.
        if g.is_some()
            && !seen_values.insert(Arc::as_ptr(&s.rows))
            && q.grouping != Grouping::Session
        {
            continue;
        }
        let mut whole = Spent::default();
        let mut own = 0.0;
        let mut buckets: HashSet<u32, Fast> = HashSet::default();
        // The session's breakdown, in the order its buckets first appear.
        let mut by_bucket: Vec<(u32, Spent)> = Vec::new();
        let kept = keep_session(s);
        for u in s.rows.iter() {
            // Only a group's sessions hold copies of each other's entries.
            let first = g.is_none() || seen.insert(u.key);
            if !kept || !keep_row(u) {
                continue;
            }
            if let Some(f) = u.fault() {
                if first {
                    *faults.entry(f.rank()).or_default() += 1;
                }
                continue;
            }
            whole.add(u);
            buckets.insert(u.bucket);
            if q.grouping == Grouping::Session {
                match by_bucket.iter_mut().find(|(m, _)| *m == u.bucket) {
                    Some((_, b)) => b.add(u),
                    None => {
                        let mut b = Spent::default();
                        b.add(u);
                        by_bucket.push((u.bucket, b));
                    }
                }
            }
            if !first {
                continue;
            }
            own += u.cost[0];
            total.add(u);
            let key = match q.grouping {
                Grouping::Daily | Grouping::Weekly | Grouping::Monthly => match u.ts_ms {
                    None => Key::Name("unknown".to_owned()),
                    Some(t) => period(q.grouping, days.date(t)),
                },
                Grouping::Model => Key::Bucket(u.bucket),
                Grouping::Project => Key::Name(s.cwd.clone().unwrap_or_else(|| "(unknown)".into())),
                Grouping::Host => Key::Name(s.host.clone().unwrap_or_else(|| "(local)".into())),
                Grouping::Session => continue,
            };
            let g = groups.entry(key).or_default();
            g.0.add(u);
            g.1.insert(u.bucket);
        }
        if q.grouping == Grouping::Session && kept && !buckets.is_empty() {
            let mut models: Vec<String> = buckets.into_iter().map(name).collect();
            models.sort();
            let mut breakdown: Vec<Bucket> = by_bucket
                .into_iter()
                .filter(|(_, b)| b.cost > 0.0 || b.total_tokens > 0)
                .map(|(m, b)| Bucket {
                    key: name(m),
                    cost: b.cost,
                    tokens: b.total_tokens,
                })
                .collect();
            // Highest cost first, as Pi sorts (a stable sort: ties stay in
            // the order they first appeared, as in Pi's map).
            breakdown.sort_by(|a, b| b.cost.total_cmp(&a.cost));
            sessions.push(UsageRow {
                period: None,
                host: s.host.clone(),
                session_id: Some(s.session_id.clone()),
                path: Some(s.path.clone()),
                name: s.name.clone(),
                cwd: s.cwd.clone(),
                model: None,
                project: None,
                spent: whole,
                own_cost: Some(own),
                models,
                breakdown: Some(breakdown),
                session: Some(at),
            });
        }
    }
    let mut rows: Vec<UsageRow> = if q.grouping == Grouping::Session {
        sessions
    } else {
        let mut groups: Vec<_> = groups.into_iter().collect();
        groups.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        groups
            .into_iter()
            .map(|(key, (spent, buckets))| {
                let key = key_name(q.grouping, key, &name);
                let mut models: Vec<String> = buckets.into_iter().map(name).collect();
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
    let q = UsageQuery {
        grouping: Grouping::Session,
        since_ms: None,
        until_ms: None,
        tz: jiff::tz::TimeZone::UTC,
        cwd: None,
        models: Vec::new(),
        session: None,
        family: None,
        host: None,
    };
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
