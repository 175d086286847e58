//! `pi-index usage`: what Pi cost, tokens and money, by day, week, month,
//! session, model or project, each entry of a family of forks once.

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
}

/// Arguments of `pi-index usage`.
#[derive(Args, Debug)]
pub struct UsageArgs {
    /// How to group the rows: daily (the default), weekly, monthly,
    /// session, model or project; then filters, in the query language's
    /// words: `cwd:DIR` (at or below), `model:FRAGMENT`, `session:ID`,
    /// `family:ID` (the session and every fork of its family).
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
    /// index: it holds no usage yet, which is said. `--db` alone reads
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
        },
        since_ms: when("since", &args.since)?,
        until_ms: when("until", &args.until)?,
        tz,
        cwd: None,
        models: Vec::new(),
        session: None,
        family: None,
    };
    for f in words.iter().flat_map(|f| f.split_whitespace()) {
        let Some((key, value)) = f.split_once(':').filter(|(_, v)| !v.is_empty()) else {
            anyhow::bail!(
                "{}: not a grouping nor a filter usage takes: give daily, weekly, monthly, session, model or project, then cwd:DIR, model:FRAGMENT, session:ID or family:ID",
                pi_index::search::query::shown(f)
            );
        };
        match key {
            "cwd" => q.cwd = Some(normalize_dir(value)),
            "model" => q.models.push(value.to_lowercase()),
            "session" => q.session = Some(value.to_owned()),
            "family" => q.family = Some(value.to_owned()),
            _ => anyhow::bail!("{key}: usage filters by cwd:, model:, session: and family:"),
        }
    }
    let source = pi_index::read::open(args.db.as_deref(), index_dir)?;
    let data = source.usage()?;
    let r = report(&data, &q);
    warn(&r, args.verbose, &data)?;
    if args.json {
        let mut out = output::json_stdout();
        for row in &r.rows {
            out.line(row)?;
        }
        out.flush()?;
    } else {
        table(&r, q.grouping)?;
    }
    // The index's caches are dropped with the process, not one by one.
    std::mem::forget(source);
    Ok(if r.rows.is_empty() {
        EXIT_NOTHING
    } else {
        EXIT_OK
    })
}

/// Say what was left out of the sums; with `-v`, each entry.
fn warn(r: &UsageReport, verbose: bool, data: &UsageData) -> anyhow::Result<()> {
    let mut err = output::stderr();
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
            for u in s.rows.iter().filter(|u| u.fault().is_some()) {
                let what = u.fault().map_or("", |f| f.as_str());
                writeln!(err, "left out {}:{}: {what}", OneLine(&s.path), u.line)?;
            }
        }
    }
    Ok(())
}

/// The table, as ccusage prints it: the row's key, the models, the token
/// counts, the cost; a total under it.
fn table(r: &UsageReport, grouping: Grouping) -> anyhow::Result<()> {
    let head = match grouping {
        Grouping::Daily => "Date",
        Grouping::Weekly => "Week",
        Grouping::Monthly => "Month",
        Grouping::Session => "Session",
        Grouping::Model => "Model",
        Grouping::Project => "Project",
    };
    let key = |row: &UsageRow| -> String {
        let k = row
            .period
            .as_deref()
            .or(row.model.as_deref())
            .or(row.project.as_deref())
            .or(row.name.as_deref())
            .or(row.session_id.as_deref())
            .unwrap_or("");
        super::output::cut(&OneLine(k).to_string(), 40)
    };
    let mut out = output::stdout(false);
    let own = grouping == Grouping::Session;
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
