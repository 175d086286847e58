//! `pi-index usage`: what Pi cost, tokens and money, by day, week, month,
//! session, model, project or (the team database's) host, each entry of
//! a family of forks once.

use std::io::Write;
use std::path::Path;

use clap::{Args, ValueEnum};

use pi_index::output::OneLine;
use pi_index::read::usage::{report, Grouping, UsageData, UsageQuery, UsageReport, UsageRow};
use pi_index::search::query::{normalize_dir, parse_when, Now};

use super::common::{EXIT_NOTHING, EXIT_OK};
use super::output;

/// How to group.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum GroupArg {
    /// One row per day.
    Daily,
    /// One row per ISO week.
    Weekly,
    /// One row per month.
    Monthly,
    /// One row per session file, its own total and what it spent beyond
    /// its parent's copied entries.
    Session,
    /// One row per `provider/model`.
    Model,
    /// One row per working directory.
    Project,
    /// One row per pushing host (the team database, `--db`).
    Host,
}

/// Arguments of `pi-index usage`.
#[derive(Args, Debug)]
pub struct UsageArgs {
    /// How to group the rows: daily (the default), weekly, monthly,
    /// session, model, project or host (with `--db`); then filters, in
    /// the query language's words: `cwd:DIR` (at or below),
    /// `model:FRAGMENT`, `session:ID`, `family:ID` (the session and every
    /// fork of its family), `host:NAME` (with `--db`).
    #[arg(value_name = "GROUP|FILTER")]
    pub words: Vec<String>,

    /// Only what was spent at or after this time (a date, `7d`, …).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Only what was spent before this time.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,

    /// The time zone days, weeks and months are counted in (an IANA
    /// name such as `Europe/Paris`, or `UTC`) [default: the system's].
    #[arg(long, value_name = "TZ")]
    pub timezone: Option<String>,

    /// Print JSON Lines: one object per row, nothing else on stdout.
    #[arg(long)]
    pub json: bool,

    /// List every entry left out of the sums, and why.
    #[arg(short, long)]
    pub verbose: bool,

    /// The team's PostgreSQL database (see `push`) instead of the local
    /// index: every host's sessions as each pushed them, each host's
    /// entries counted as its own index counts them. `--db` alone reads
    /// the URL from $PI_INDEX_DATABASE_URL.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub db: Option<String>,
}

/// Run `usage`.
pub fn run(args: UsageArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    let tz = match &args.timezone {
        None => jiff::tz::TimeZone::system(),
        Some(name) => jiff::tz::TimeZone::get(name).map_err(|e| {
            anyhow::anyhow!(
                "--timezone {}: {e}: give an IANA time zone name (Europe/Paris, America/New_York) or UTC",
                pi_index::search::query::shown(name)
            )
        })?,
    };
    let now = Now::at(jiff::Timestamp::now().to_zoned_datetime(tz.clone()));
    let when = |flag: &str, v: &Option<String>| -> anyhow::Result<Option<i64>> {
        v.as_deref()
            .map(|v| parse_when(v, &now).map_err(|e| anyhow::anyhow!("--{flag}: {e}")))
            .transpose()
    };
    // The grouping, when the first word names one.
    let mut words = args.words.as_slice();
    let group = match words.first().and_then(|w| GroupArg::from_str(w, true).ok()) {
        Some(g) => {
            words = &words[1..];
            g
        }
        None => GroupArg::Daily,
    };
    let mut q = UsageQuery {
        grouping: match group {
            GroupArg::Daily => Grouping::Daily,
            GroupArg::Weekly => Grouping::Weekly,
            GroupArg::Monthly => Grouping::Monthly,
            GroupArg::Session => Grouping::Session,
            GroupArg::Model => Grouping::Model,
            GroupArg::Project => Grouping::Project,
            GroupArg::Host => Grouping::Host,
        },
        since_ms: when("since", &args.since)?,
        until_ms: when("until", &args.until)?,
        tz,
        cwd: None,
        models: Vec::new(),
        session: None,
        family: None,
        host: None,
    };
    for f in words.iter().flat_map(|f| f.split_whitespace()) {
        let Some((key, value)) = f.split_once(':').filter(|(_, v)| !v.is_empty()) else {
            anyhow::bail!(
                "{}: not a grouping nor a filter usage takes: give daily, weekly, monthly, session, model, project or host, then cwd:DIR, model:FRAGMENT, session:ID, family:ID or host:NAME",
                pi_index::search::query::shown(f)
            );
        };
        match key {
            "cwd" => q.cwd = Some(normalize_dir(value)),
            "model" => q.models.push(value.to_lowercase()),
            "session" => q.session = Some(value.to_owned()),
            "family" => q.family = Some(value.to_owned()),
            "host" => q.host = Some(value.to_owned()),
            _ => anyhow::bail!("{key}: usage filters by cwd:, model:, session:, family: and host:"),
        }
    }
    let source = pi_index::read::open(args.db.as_deref(), index_dir)?;
    let hosts = source.capabilities().hosts;
    if !hosts && (q.host.is_some() || q.grouping == Grouping::Host) {
        anyhow::bail!(
            "{}: the local index holds this machine's sessions only; hosts are the team database's (`--db URL`)",
            if q.grouping == Grouping::Host {
                "usage host".to_owned()
            } else {
                format!("host:{}", q.host.as_deref().unwrap_or_default())
            }
        );
    }
    let data = source.usage(q.need())?;
    let r = report(&data, &q);
    warn(&r, args.verbose, &data, q.host.as_deref())?;
    if args.json {
        let mut out = output::json_stdout();
        for row in &r.rows {
            out.line(row)?;
        }
        out.flush()?;
    } else {
        table(&r, q.grouping, hosts)?;
    }
    // The index's caches are dropped with the process, not one by one.
    std::mem::forget(source);
    Ok(if r.rows.is_empty() {
        EXIT_NOTHING
    } else {
        EXIT_OK
    })
}

/// Say what was left out of the sums (with `-v`, each entry), and the
/// team database's sessions whose usage their host has not pushed yet
/// (of the host `host:` keeps).
fn warn(
    r: &UsageReport,
    verbose: bool,
    data: &UsageData,
    host: Option<&str>,
) -> anyhow::Result<()> {
    let mut err = output::stderr();
    for (h, n) in &data.without_usage {
        if host.is_some_and(|want| want != h) {
            continue;
        }
        writeln!(
            err,
            "pi-index: warning: {n} session{} of {h} {} pushed before the team database held usage and {} not counted: the next `pi-index push` on {h} sends it",
            if *n == 1 { "" } else { "s" },
            if *n == 1 { "was" } else { "were" },
            if *n == 1 { "is" } else { "are" },
        )?;
    }
    for (fault, n) in &r.faults {
        writeln!(
            err,
            "pi-index: warning: {n} entr{} left out of every sum: {}",
            if *n == 1 { "y" } else { "ies" },
            fault.as_str()
        )?;
    }
    if verbose {
        for s in &data.sessions {
            if host.is_some_and(|want| s.host.as_deref() != Some(want)) {
                continue;
            }
            for u in s.rows.rows().filter(|u| u.fault().is_some()) {
                let what = u.fault().map_or("", |f| f.as_str());
                writeln!(err, "left out {}:{}: {what}", OneLine(&s.path), u.line)?;
            }
        }
    }
    Ok(())
}

/// The table, as ccusage prints it: the row's key, the models, the token
/// counts, the cost; a total under it. Sessions of several hosts (`hosts`)
/// are named by their host too, in a column before.
fn table(r: &UsageReport, grouping: Grouping, hosts: bool) -> anyhow::Result<()> {
    let head = match grouping {
        Grouping::Daily => "Date",
        Grouping::Weekly => "Week",
        Grouping::Monthly => "Month",
        Grouping::Session => "Session",
        Grouping::Model => "Model",
        Grouping::Project => "Project",
        Grouping::Host => "Host",
    };
    let key = |row: &UsageRow| -> String {
        let k = row
            .period
            .as_deref()
            .or(row.host.as_deref().filter(|_| grouping == Grouping::Host))
            .or(row.model.as_deref())
            .or(row.project.as_deref())
            .or(row.name.as_deref())
            .or(row.session_id.as_deref())
            .unwrap_or("");
        super::output::cut(&OneLine(k).to_string(), 40)
    };
    let mut out = output::stdout(false);
    let own = grouping == Grouping::Session;
    // The host column: 24 characters, as many as most `user@hostname`.
    let host_column = own && hosts;
    if host_column {
        write!(out, "{:<24}  ", "Host")?;
    }
    write!(
        out,
        "{head:<40}  {:<28}  {:>12}  {:>12}  {:>13}  {:>13}  {:>13}  {:>10}",
        "Models", "Input", "Output", "Cache Create", "Cache Read", "Total Tokens", "Cost (USD)"
    )?;
    if own {
        write!(out, "  {:>10}", "Own (USD)")?;
    }
    writeln!(out)?;
    for row in &r.rows {
        let s = &row.spent;
        let models = super::output::cut(&row.models.join(", "), 28);
        if host_column {
            let host = OneLine(row.host.as_deref().unwrap_or("")).to_string();
            write!(out, "{:<24}  ", super::output::cut(&host, 24))?;
        }
        write!(
            out,
            "{:<40}  {models:<28}  {:>12}  {:>12}  {:>13}  {:>13}  {:>13}  {:>10.2}",
            key(row),
            s.input,
            s.output,
            s.cache_write,
            s.cache_read,
            s.total_tokens,
            s.cost
        )?;
        if let Some(o) = row.own_cost {
            write!(out, "  {o:>10.2}")?;
        }
        writeln!(out)?;
    }
    let t = &r.total;
    if host_column {
        write!(out, "{:<24}  ", "")?;
    }
    writeln!(
        out,
        "{:<40}  {:<28}  {:>12}  {:>12}  {:>13}  {:>13}  {:>13}  {:>10.2}",
        "Total (each entry once)",
        "",
        t.input,
        t.output,
        t.cache_write,
        t.cache_read,
        t.total_tokens,
        t.cost
    )?;
    out.flush()?;
    Ok(())
}
