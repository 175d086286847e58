//! Filters: a `key:value` term of the query, or a command-line flag, read
//! into a typed [`Constraint`]. Nothing here knows of the index;
//! [`compile`](mod@super::compile) turns a constraint into a query on the schema's
//! fields.
//!
//! Times are read with `jiff` in the time zone of the `now` passed in (the
//! command line passes the system's, which honours `TZ`):
//!
//! | value | means |
//! |---|---|
//! | `2026-03-01` | local midnight starting that day |
//! | `2026-03-01T12:00` or `2026-03-01 12:00:00` | that local time |
//! | `2026-03-01T12:00:00Z`, `2026-03-01T12:00:00+01:00` (RFC 3339) | that instant |
//! | `now`, `today`, `yesterday` | now; local midnight today; local midnight yesterday |
//! | `7d`, `12h`, `30m`, `90s`, `2w`, `1mo`, `1y`, `1 week`, `2h30m` | that long before now, in calendar units (a month back from March 31 is the end of February) |
//!
//! A date that does not exist (`2026-02-30`, `2026-13-01`) is an error.

use jiff::civil::{Date, DateTime};
use jiff::{Span, Timestamp, ZonedDateTime};

/// The moment relative times are read against, in its time zone: a fixed
/// one (tests, callers that know it), or the system's, looked up only when
/// a filter needs it. Finding the system's time zone has jiff read the
/// time zone database's directory, most of a fresh `search`'s system time,
/// and most queries name no time.
#[derive(Clone, Debug, Default)]
pub struct Now {
    at: std::sync::OnceLock<ZonedDateTime>,
}

impl Now {
    /// The system's clock and time zone, read when first needed.
    pub fn system() -> Now {
        Now::default()
    }

    /// A fixed moment.
    pub fn at(zoned: ZonedDateTime) -> Now {
        let at = std::sync::OnceLock::new();
        let _ = at.set(zoned);
        Now { at }
    }

    /// The moment.
    pub fn get(&self) -> &ZonedDateTime {
        self.at.get_or_init(ZonedDateTime::now)
    }
}

use super::limits::shown;
use crate::pi::Role;

/// A filter's name in the query language.
///
/// The filter keys are part of the grammar: `key:` followed by a single
/// colon is a filter only for these names (`serde_json::from_str` and
/// `http://x` stay words). A new filter is one more variant here, one in
/// [`Constraint`], and one arm in the compile step's field map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// `role:user|assistant`
    Role,
    /// `cwd:~/src/app` (the directory and below)
    Cwd,
    /// `session:019b8e` (an id prefix)
    Session,
    /// `model:opus` (a fragment of the model's name)
    Model,
    /// `after:7d`, also `since:`
    After,
    /// `before:2026-03-01`, also `until:`
    Before,
    /// `branch:active` or `branch:all`
    Branch,
    /// `name:flaky` (words of the session's name)
    Name,
    /// `family:019b8e` (a session, by id or id prefix, and every session
    /// forked from it or it from)
    Family,
    /// `host:alice@laptop`: the machine that pushed the session, only in
    /// the team database (`--db`); the local index holds one machine's
    /// sessions, and refuses it.
    Host,
}

impl Key {
    /// Every key, in the order docs/guide.md lists them.
    pub const ALL: [Key; 9] = [
        Key::Role,
        Key::Cwd,
        Key::Session,
        Key::Family,
        Key::Name,
        Key::Model,
        Key::After,
        Key::Before,
        Key::Branch,
    ];

    /// The key written `name` (`since` and `until` are aliases).
    pub fn from_name(name: &str) -> Option<Key> {
        Some(match name {
            "role" => Key::Role,
            "cwd" => Key::Cwd,
            "session" => Key::Session,
            "model" => Key::Model,
            "after" | "since" => Key::After,
            "before" | "until" => Key::Before,
            "branch" => Key::Branch,
            "name" => Key::Name,
            "family" => Key::Family,
            "host" => Key::Host,
            _ => return None,
        })
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Key::Role => "role",
            Key::Cwd => "cwd",
            Key::Session => "session",
            Key::Model => "model",
            Key::After => "after",
            Key::Before => "before",
            Key::Branch => "branch",
            Key::Name => "name",
            Key::Family => "family",
            Key::Host => "host",
        }
    }

    /// Whether the filter is on a message's own facts (role, model,
    /// time, branch) rather than on its session's (directory, id, name).
    pub fn is_about_messages(self) -> bool {
        !matches!(
            self,
            Key::Cwd | Key::Session | Key::Name | Key::Family | Key::Host
        )
    }

    fn example(self) -> &'static str {
        match self {
            Key::Role => "role:user or role:user|assistant",
            Key::Cwd => "cwd:~/src/app",
            Key::Session => "session:019b8e",
            Key::Model => "model:opus",
            Key::After => "after:7d or after:2026-03-01",
            Key::Before => "before:2026-03-01",
            Key::Branch => "branch:active or branch:all",
            Key::Name => "name:flaky or name:\"socket test\"",
            Key::Family => "family:019b8e",
            Key::Host => "host:alice@laptop",
        }
    }
}

/// Which branches of a session a `branch:` filter keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Branches {
    /// Only the active branch.
    Active,
    /// Every branch (the filter keeps everything).
    All,
}

/// What one filter asks of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Constraint {
    /// Its role is one of these.
    Roles(Vec<Role>),
    /// Its session's directory is this one or below it (normalised by
    /// [`normalize_dir`]).
    Cwd(String),
    /// Its session id starts with this.
    Session(String),
    /// Its model's `provider/model` name contains this (lower-cased).
    Model(String),
    /// Its time is at or after this (epoch ms).
    After(i64),
    /// Its time is before this (epoch ms).
    Before(i64),
    /// It lies on these branches.
    Branch(Branches),
    /// Its session's name holds every one of these words (any order).
    Name(String),
    /// Its session is the one with this id (or id prefix), or one of its
    /// relatives (see [`crate::search::family`]).
    Family(String),
}

/// A filter value that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FilterError {
    /// What is wrong and what would be accepted.
    pub message: String,
}

impl Constraint {
    /// Read `key:value`. An empty value is an error (a filter with nothing
    /// to filter by is a typo, never the bare word), as is any value the
    /// key cannot use. `now` anchors relative times and gives the time
    /// zone of civil dates.
    pub fn parse(key: Key, value: &str, now: &Now) -> Result<Constraint, FilterError> {
        if value.trim().is_empty() {
            return Err(FilterError {
                message: format!(
                    "{}: needs a value, e.g. {} (quote a value with spaces: {}:\"…\")",
                    key.name(),
                    key.example(),
                    key.name()
                ),
            });
        }
        Ok(match key {
            Key::Role => {
                let mut roles = Vec::new();
                for r in value.split(['|', ',']) {
                    let r = if r == "tools" { "tool" } else { r };
                    roles.push(r.parse().map_err(|_| {
                        let names: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
                        FilterError {
                            message: format!(
                                "unknown role {} (expected {} or {})",
                                shown(r),
                                names[..names.len() - 1].join(", "),
                                names[names.len() - 1]
                            ),
                        }
                    })?);
                }
                Constraint::Roles(roles)
            }
            Key::Cwd => Constraint::Cwd(normalize_dir(value)),
            Key::Session => Constraint::Session(value.to_owned()),
            Key::Name => Constraint::Name(value.to_owned()),
            Key::Family => Constraint::Family(value.to_owned()),
            Key::Host => {
                return Err(FilterError {
                    message: format!(
                        "host:{value}: the local index holds this machine's sessions only; \
                         host: filters the team database's (`--db URL`)"
                    ),
                })
            }
            Key::Model => Constraint::Model(value.to_lowercase()),
            Key::After => Constraint::After(parse_when(value, now)?),
            Key::Before => Constraint::Before(parse_when(value, now)?),
            Key::Branch => match value {
                "active" => Constraint::Branch(Branches::Active),
                "all" | "any" => Constraint::Branch(Branches::All),
                _ => {
                    return Err(FilterError {
                        message: format!(
                            "branch:{}: use branch:active or branch:all",
                            if value.chars().count() > super::limits::SHOWN_CHARS {
                                shown(value)
                            } else {
                                value.to_owned()
                            }
                        ),
                    })
                }
            },
        })
    }
}

impl Constraint {
    /// Whether the constraint is on a message's own facts (role, model,
    /// time, branch) rather than on its session's (directory, id, name).
    pub fn is_about_messages(&self) -> bool {
        !matches!(
            self,
            Constraint::Cwd(_)
                | Constraint::Session(_)
                | Constraint::Name(_)
                | Constraint::Family(_)
        )
    }
}

/// Filters from command-line flags: all of them must hold, whatever the
/// query says (they are ANDed with the whole query).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    /// The constraints, each of which must hold.
    pub constraints: Vec<Constraint>,
}

impl Filters {
    /// Add the filter `key:value` (see [`Constraint::parse`]).
    pub fn add(&mut self, key: Key, value: &str, now: &Now) -> Result<(), FilterError> {
        self.constraints.push(Constraint::parse(key, value, now)?);
        Ok(())
    }
}

/// A directory as stored in `cwd`: `~` expanded, relative paths made
/// absolute, no trailing slash.
pub fn normalize_dir(value: &str) -> String {
    let mut p = std::path::PathBuf::from(value);
    if let Some(rest) = value.strip_prefix('~') {
        if let Some(home) = directories::BaseDirs::new() {
            p = home.home_dir().join(rest.trim_start_matches('/'));
        }
    } else if p.is_relative() {
        if let Ok(cwd) = std::env::current_dir() {
            p = cwd.join(p);
        }
    }
    let mut s = p.to_string_lossy().into_owned();
    // Clean `.` and `..` without touching the file system: the directory
    // may no longer exist.
    let mut parts: Vec<&str> = Vec::new();
    for part in s.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if s.starts_with('/') {
        s = format!("/{}", parts.join("/"));
    } else {
        s = parts.join("/");
    }
    s
}

/// Read a time (the forms are in the module docs) as epoch milliseconds,
/// relative to `now` and in `now`'s time zone.
pub fn parse_when(value: &str, now: &Now) -> Result<i64, FilterError> {
    let now = now.get();
    let v = value.trim();
    let lower = v.to_lowercase();
    let bad = |why: Option<String>| {
        FilterError {
        message: format!(
            "cannot read {} as a date{}: use a date (2026-03-01, local midnight), a local time \
             (2026-03-01T12:00), an RFC 3339 timestamp (2026-03-01T12:00:00Z), today, yesterday, now, \
             or an age (7d, 12h, 30m, 2w, 1mo, 1y)",
            shown(value),
            why.map(|w| format!(" ({w})")).unwrap_or_default()
        ),
    }
    };
    let zoned = |r: Result<ZonedDateTime, jiff::Error>| r.map_err(|e| bad(Some(e.to_string())));
    let at = match lower.as_str() {
        "now" => now.clone(),
        "today" => zoned(now.start_of_day())?,
        "yesterday" => zoned(now.yesterday().and_then(|d| d.start_of_day()))?,
        _ => {
            if let Ok(ts) = v.parse::<Timestamp>().or_else(|_| lower.parse()) {
                return Ok(ts.as_millisecond());
            }
            let tz = now.time_zone().clone();
            if looks_like_a_date(v) {
                // jiff reads a date out of a date and time too: only a
                // bare date is a whole day.
                let with_time = v.len() > 10;
                match (with_time, v.parse::<DateTime>(), v.parse::<Date>()) {
                    (true, Ok(dt), _) => zoned(dt.to_zoned_datetime(tz))?,
                    (false, _, Ok(d)) => {
                        zoned(d.to_zoned_datetime(tz).and_then(|z| z.start_of_day()))?
                    }
                    (true, Err(e), _) | (false, _, Err(e)) => return Err(bad(Some(e.to_string()))),
                }
            } else {
                match lower.parse::<Span>() {
                    // An age is how long ago (`7d`, `"7 days ago"`): a
                    // sign (`-5d`) reads as a time to come or a typo.
                    Ok(_) if v.starts_with(['-', '+']) => {
                        return Err(bad(Some(
                            "an age is how long ago, written without a sign".into(),
                        )))
                    }
                    Ok(span) => zoned(now.checked_sub(span.abs()))?,
                    Err(_) => return Err(bad(None)),
                }
            }
        }
    };
    Ok(at.timestamp().as_millisecond())
}

/// `YYYY-`: a date or date and time, whose error says more than a span's.
fn looks_like_a_date(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() >= 5 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-'
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::tz::TimeZone;

    /// 2025-11-30 00:30 in UTC+9 (2025-11-29T15:30:00Z), a fixed zone so
    /// the tests do not depend on the machine's.
    fn tokyo() -> Now {
        Now::at(
            "2025-11-29T15:30:00Z"
                .parse::<Timestamp>()
                .unwrap()
                .to_zoned_datetime(TimeZone::fixed(jiff::tz::offset(9))),
        )
    }

    fn ms(rfc3339: &str) -> i64 {
        rfc3339.parse::<Timestamp>().unwrap().as_millisecond()
    }

    #[test]
    fn civil_dates_and_today_are_local_midnight() {
        let now = tokyo();
        assert_eq!(
            parse_when("2026-03-01", &now).unwrap(),
            ms("2026-02-28T15:00:00Z")
        );
        assert_eq!(
            parse_when("today", &now).unwrap(),
            ms("2025-11-29T15:00:00Z")
        );
        assert_eq!(
            parse_when("Yesterday", &now).unwrap(),
            ms("2025-11-28T15:00:00Z")
        );
        assert_eq!(parse_when("now", &now).unwrap(), ms("2025-11-29T15:30:00Z"));
        for v in ["2026-03-01T12:00", "2026-03-01 12:00:00"] {
            assert_eq!(
                parse_when(v, &now).unwrap(),
                ms("2026-03-01T03:00:00Z"),
                "{v}"
            );
        }
        // The same date elsewhere is another instant.
        let utc = Now::at(now.get().with_time_zone(TimeZone::UTC));
        assert_eq!(
            parse_when("2026-03-01", &utc).unwrap(),
            ms("2026-03-01T00:00:00Z")
        );
        assert_eq!(
            parse_when("today", &utc).unwrap(),
            ms("2025-11-29T00:00:00Z")
        );
    }

    #[test]
    fn timestamps_are_exact() {
        let now = tokyo();
        for (v, want) in [
            ("2026-03-01T12:00:00Z", "2026-03-01T12:00:00Z"),
            ("2026-03-01t12:00:00z", "2026-03-01T12:00:00Z"),
            ("2026-03-01T12:00:00.250+01:00", "2026-03-01T11:00:00.250Z"),
        ] {
            assert_eq!(parse_when(v, &now).unwrap(), ms(want), "{v}");
        }
    }

    #[test]
    fn ages_are_calendar_spans_back_from_now() {
        let now: ZonedDateTime = "2026-03-31T10:00:00Z"
            .parse::<Timestamp>()
            .unwrap()
            .to_zoned_datetime(TimeZone::UTC);
        let now = Now::at(now);
        for (v, want) in [
            ("7d", "2026-03-24T10:00:00Z"),
            ("12h", "2026-03-30T22:00:00Z"),
            ("30m", "2026-03-31T09:30:00Z"),
            ("90s", "2026-03-31T09:58:30Z"),
            ("2w", "2026-03-17T10:00:00Z"),
            ("1mo", "2026-02-28T10:00:00Z"),
            ("1y", "2025-03-31T10:00:00Z"),
            ("1 week", "2026-03-24T10:00:00Z"),
            ("2h30m", "2026-03-31T07:30:00Z"),
            ("7D", "2026-03-24T10:00:00Z"),
        ] {
            assert_eq!(parse_when(v, &now).unwrap(), ms(want), "{v}");
        }
    }

    #[test]
    fn a_day_back_across_a_daylight_saving_change_is_a_calendar_day() {
        // New York's rules without a time zone database: 2026-03-08 has 23 hours.
        let ny = TimeZone::posix("EST5EDT,M3.2.0,M11.1.0").unwrap();
        let now = "2026-03-09T12:00:00-04:00"
            .parse::<Timestamp>()
            .unwrap()
            .to_zoned_datetime(ny);
        let now = Now::at(now);
        assert_eq!(
            parse_when("1d", &now).unwrap(),
            ms("2026-03-08T12:00:00-04:00")
        );
        assert_eq!(
            parse_when("2d", &now).unwrap(),
            ms("2026-03-07T12:00:00-05:00")
        );
        assert_eq!(
            parse_when("2026-03-08", &now).unwrap(),
            ms("2026-03-08T00:00:00-05:00")
        );
    }

    #[test]
    fn dates_that_do_not_exist_are_errors_that_say_what_is_accepted() {
        let now = tokyo();
        for v in [
            "2026-02-30",
            "2026-13-01",
            "2026-02-29",
            "soon",
            "7",
            "2026",
            "",
        ] {
            let e = parse_when(v, &now).unwrap_err().message;
            assert!(
                e.starts_with(&format!("cannot read {v:?} as a date")),
                "{e}"
            );
            assert!(
                e.contains("2026-03-01T12:00:00Z") && e.contains("7d"),
                "{e}"
            );
        }
        assert!(parse_when("2028-02-29", &now).is_ok());
    }

    #[test]
    fn constraints() {
        let now = tokyo();
        let c = |k, v| Constraint::parse(k, v, &now);
        assert_eq!(
            c(Key::Role, "user|assistant").unwrap(),
            Constraint::Roles(vec![Role::User, Role::Assistant])
        );
        assert_eq!(
            c(Key::Role, "tools").unwrap(),
            Constraint::Roles(vec![Role::Tool])
        );
        assert!(c(Key::Role, "robot")
            .unwrap_err()
            .message
            .contains("unknown role"));
        assert_eq!(
            c(Key::Cwd, "/a/b/../c/").unwrap(),
            Constraint::Cwd("/a/c".into())
        );
        assert_eq!(
            c(Key::Model, "OPUS").unwrap(),
            Constraint::Model("opus".into())
        );
        assert_eq!(
            c(Key::Branch, "active").unwrap(),
            Constraint::Branch(Branches::Active)
        );
        assert!(c(Key::Branch, "maybe").is_err());
        for key in Key::ALL {
            let e = c(key, "").unwrap_err().message;
            assert!(
                e.starts_with(&format!("{}: needs a value", key.name())),
                "{e}"
            );
            assert_eq!(Key::from_name(key.name()), Some(key));
        }
        assert_eq!(Key::from_name("since"), Some(Key::After));
        assert_eq!(Key::from_name("until"), Some(Key::Before));
        assert_eq!(Key::from_name("name"), Some(Key::Name));
        assert_eq!(
            c(Key::Name, "Flaky socket").unwrap(),
            Constraint::Name("Flaky socket".into())
        );
        assert!(!Constraint::Name("x".into()).is_about_messages());
        assert!(Constraint::Model("x".into()).is_about_messages());
        assert_eq!(Key::from_name("title"), None);
        assert_eq!(Key::from_name("host"), Some(Key::Host));
        assert!(c(Key::Host, "alice@laptop")
            .unwrap_err()
            .message
            .contains("--db"));
    }

    #[test]
    fn dirs_are_normalised() {
        assert_eq!(normalize_dir("/a/b/../c/"), "/a/c");
        assert_eq!(normalize_dir("/"), "/");
    }

    #[test]
    fn a_signed_age_is_an_error_and_an_age_ago_is_not() {
        let now = tokyo();
        let e = parse_when("-5d", &now).unwrap_err().message;
        assert!(
            e.starts_with("cannot read \"-5d\" as a date (an age is how long ago, written without a sign): use a date"),
            "{e}"
        );
        assert!(parse_when("+5d", &now).is_err());
        assert_eq!(parse_when("5 days ago", &now), parse_when("5d", &now));
    }

    #[test]
    fn long_values_are_cut_in_errors() {
        let now = tokyo();
        let long = "x".repeat(100_000);
        for key in [Key::Role, Key::Branch, Key::After] {
            let e = Constraint::parse(key, &long, &now).unwrap_err().message;
            assert!(e.contains("(100000 characters)"), "{e:.200}");
            assert!(e.len() < 500, "{e:.200}");
        }
        let e = Constraint::parse(Key::Branch, "robot", &now)
            .unwrap_err()
            .message;
        assert_eq!(e, "branch:robot: use branch:active or branch:all");
    }
}
