//! The query language: words, phrases, boolean operators, prefixes and
//! inline filters, turned into a tantivy query.
//!
//! ```text
//! parse error            words are ANDed: both must occur
//! "exact phrase"         a phrase (the tokenizer's positions decide)
//! tokio OR async-std     either
//! -flaky  NOT flaky      must not occur
//! (a OR b) c             grouping
//! pars*                  prefix
//! role:user cwd:~/proj session:019b model:opus after:7d before:2026-03-01 branch:active
//! ```
//!
//! Words go through the index's own analyzer, so `serde_json::from_str`,
//! `parseSessionEntries` or a path become the same tokens (with the same
//! positions) as in the indexed text. A query never fails to parse: what
//! cannot be understood (an unbalanced parenthesis, a dangling operator, an
//! unterminated quote) is repaired or ignored, and each repair is reported
//! as a [`Warning`] with its position. Only a filter with a bad value (an
//! unknown role, a date that is not a date) is an error.

use std::ops::Bound;

use tantivy::query::{
    AllQuery, BooleanQuery, EmptyQuery, Occur, PhrasePrefixQuery, PhraseQuery, Query, RangeQuery,
    TermQuery,
};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DateTime, Term};

use super::column_set::ColumnSetQuery;
use crate::index::schema::model_hash;
use crate::index::Fields;
use crate::pi::time::parse_iso_millis;
use crate::pi::Role;

/// Something in the query that was repaired or ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// 0-based character position in the query.
    pub position: usize,
    /// What was done.
    pub message: String,
}

/// A filter value that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FilterError {
    /// What is wrong and what would be accepted.
    pub message: String,
}

/// Filters, from inline `key:value` terms and from command-line flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filters {
    /// Roles to keep (any of them).
    pub roles: Vec<Role>,
    /// Session directories: the session's cwd or anything below it.
    pub cwds: Vec<String>,
    /// Session id prefixes.
    pub sessions: Vec<String>,
    /// Model name fragments (case-insensitive substring of `provider/model`).
    pub models: Vec<String>,
    /// Only documents at or after this time (epoch ms).
    pub after_ms: Option<i64>,
    /// Only documents before this time (epoch ms).
    pub before_ms: Option<i64>,
    /// Only documents on the active branch.
    pub active_only: bool,
}

impl Filters {
    /// Apply one `key:value` filter. Returns `Ok(false)` when `key` is not
    /// a filter name (the term is then searched as text).
    pub fn apply(&mut self, key: &str, value: &str, now_ms: i64) -> Result<bool, FilterError> {
        match key {
            "role" => {
                for r in value.split(['|', ',']) {
                    let role = if r == "tools" { "tool" } else { r };
                    self.roles
                        .push(role.parse().map_err(|message| FilterError { message })?);
                }
            }
            "cwd" => self.cwds.push(normalize_dir(value)),
            "session" => self.sessions.push(value.to_owned()),
            "model" => self.models.push(value.to_lowercase()),
            "after" | "since" => self.after_ms = Some(parse_when(value, now_ms)?),
            "before" | "until" => self.before_ms = Some(parse_when(value, now_ms)?),
            "branch" => match value {
                "active" => self.active_only = true,
                "all" | "any" => self.active_only = false,
                _ => {
                    return Err(FilterError {
                        message: format!("branch:{value}: use branch:active or branch:all"),
                    })
                }
            },
            _ => return Ok(false),
        }
        Ok(true)
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

/// Parse a time: `2026-03-01` (UTC midnight), an RFC 3339 timestamp,
/// `today`, `yesterday`, or an age like `7d`, `12h`, `30m`, `2w`, `1y`.
pub fn parse_when(value: &str, now_ms: i64) -> Result<i64, FilterError> {
    const DAY: i64 = 86_400_000;
    let v = value.trim().to_lowercase();
    let bad = || {
        FilterError {
        message: format!(
            "cannot read {value:?} as a date: use 2026-03-01, 2026-03-01T12:00:00Z, today, yesterday, or an age like 7d, 12h, 2w"
        ),
    }
    };
    match v.as_str() {
        "today" => return Ok(now_ms.div_euclid(DAY) * DAY),
        "yesterday" => return Ok(now_ms.div_euclid(DAY) * DAY - DAY),
        "now" => return Ok(now_ms),
        _ => {}
    }
    if let Some(ms) = parse_iso_millis(&v.to_uppercase()) {
        return Ok(ms);
    }
    if v.len() == 10 {
        if let Some(ms) = parse_iso_millis(&format!("{v}T00:00:00Z")) {
            return Ok(ms);
        }
    }
    let split = v.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (n, unit) = v.split_at(split);
    let n: i64 = n.parse().map_err(|_| bad())?;
    let unit_ms = match unit {
        "s" | "sec" | "secs" => 1000,
        "m" | "min" | "mins" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => DAY,
        "w" | "week" | "weeks" => 7 * DAY,
        "mo" | "month" | "months" => 30 * DAY,
        "y" | "year" | "years" => 365 * DAY,
        _ => return Err(bad()),
    };
    Ok(now_ms - n * unit_ms)
}

/// A token of the query string.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String, usize),
    Phrase(String, usize),
    Open(usize),
    Close(usize),
    And,
    Or,
    Not,
}

fn lex(q: &str, warnings: &mut Vec<Warning>) -> Vec<Tok> {
    let chars: Vec<(usize, char)> = q.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let pos = |i: usize| i; // char index
    while i < chars.len() {
        let c = chars[i].1;
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' {
            out.push(Tok::Open(pos(i)));
            i += 1;
        } else if c == ')' {
            out.push(Tok::Close(pos(i)));
            i += 1;
        } else if c == '"' {
            let start = i;
            let mut j = i + 1;
            let mut text = String::new();
            while j < chars.len() && chars[j].1 != '"' {
                text.push(chars[j].1);
                j += 1;
            }
            if j == chars.len() {
                warnings.push(Warning {
                    position: start,
                    message: "unterminated quote: searched the rest as a phrase".into(),
                });
            }
            out.push(Tok::Phrase(text, start));
            i = j + 1;
        } else if (c == '-' || c == '+')
            && i + 1 < chars.len()
            && !chars[i + 1].1.is_whitespace()
            && (i == 0 || chars[i - 1].1.is_whitespace() || chars[i - 1].1 == '(')
        {
            if c == '-' {
                out.push(Tok::Not);
            }
            i += 1;
        } else {
            let start = i;
            let mut word = String::new();
            // A word runs to whitespace or a parenthesis; a quote inside a
            // word (key:"a b") takes the quoted part into the word.
            while i < chars.len() {
                let ch = chars[i].1;
                if ch.is_whitespace() || ch == '(' || ch == ')' {
                    break;
                }
                if ch == '"' {
                    i += 1;
                    while i < chars.len() && chars[i].1 != '"' {
                        word.push(chars[i].1);
                        i += 1;
                    }
                    i += 1;
                    continue;
                }
                word.push(ch);
                i += 1;
            }
            match word.as_str() {
                "AND" | "&&" => out.push(Tok::And),
                "OR" | "||" => out.push(Tok::Or),
                "NOT" => out.push(Tok::Not),
                _ => out.push(Tok::Word(word, start)),
            }
        }
    }
    out
}

/// An expression of the query, before it becomes a tantivy query.
#[derive(Clone, Debug, PartialEq)]
enum Expr {
    Text { text: String },
    Prefix(String),
    Not(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
}

struct Parser<'a> {
    toks: Vec<Tok>,
    at: usize,
    warnings: &'a mut Vec<Warning>,
    filters: &'a mut Filters,
    now_ms: i64,
    error: Option<FilterError>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn warn(&mut self, position: usize, message: &str) {
        self.warnings.push(Warning {
            position,
            message: message.into(),
        });
    }

    fn position(&self) -> usize {
        match self.toks.get(self.at) {
            Some(Tok::Word(_, p) | Tok::Phrase(_, p) | Tok::Open(p) | Tok::Close(p)) => *p,
            _ => 0,
        }
    }

    /// or := and ("OR" and)*
    fn or(&mut self, depth: usize) -> Option<Expr> {
        let mut parts = Vec::new();
        if let Some(e) = self.and(depth) {
            parts.push(e);
        }
        while let Some(Tok::Or) = self.peek() {
            let p = self.position();
            self.at += 1;
            match self.and(depth) {
                Some(e) => parts.push(e),
                None => self.warn(p, "OR with nothing after it: ignored"),
            }
        }
        match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(Expr::Or(parts)),
        }
    }

    /// and := unary (["AND"] unary)*
    fn and(&mut self, depth: usize) -> Option<Expr> {
        let mut parts = Vec::new();
        loop {
            match self.peek() {
                None | Some(Tok::Or) => break,
                Some(Tok::Close(p)) => {
                    if depth > 0 {
                        break;
                    }
                    let p = *p;
                    self.warn(p, "unmatched ')': ignored");
                    self.at += 1;
                }
                Some(Tok::And) => {
                    self.at += 1;
                }
                _ => {
                    if let Some(e) = self.unary(depth) {
                        parts.push(e);
                    }
                }
            }
        }
        match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(Expr::And(parts)),
        }
    }

    fn unary(&mut self, depth: usize) -> Option<Expr> {
        match self.toks.get(self.at).cloned() {
            Some(Tok::Not) => {
                self.at += 1;
                match self.unary(depth) {
                    Some(e) => Some(Expr::Not(Box::new(e))),
                    None => {
                        self.warn(self.position(), "NOT with nothing after it: ignored");
                        None
                    }
                }
            }
            Some(Tok::Open(p)) => {
                self.at += 1;
                let inner = self.or(depth + 1);
                match self.peek() {
                    Some(Tok::Close(_)) => self.at += 1,
                    _ => self.warn(p, "unclosed '(': closed at the end"),
                }
                inner
            }
            Some(Tok::Phrase(text, _)) => {
                self.at += 1;
                Some(Expr::Text { text })
            }
            Some(Tok::Word(word, p)) => {
                self.at += 1;
                if let Some((key, value)) = word.split_once(':') {
                    if !key.is_empty() && !value.is_empty() && !value.starts_with(':') {
                        match self.filters.apply(key, value, self.now_ms) {
                            Ok(true) => return None,
                            Ok(false) => {}
                            Err(e) => {
                                self.error.get_or_insert(e);
                                return None;
                            }
                        }
                    }
                }
                if let Some(stem) = word.strip_suffix('*') {
                    if stem.is_empty() {
                        self.warn(p, "a lone '*' matches nothing: ignored");
                        return None;
                    }
                    return Some(Expr::Prefix(stem.to_owned()));
                }
                Some(Expr::Text { text: word })
            }
            // Operators in the wrong place.
            Some(Tok::And | Tok::Or | Tok::Close(_)) | None => {
                self.at += 1;
                None
            }
        }
    }
}

/// A parsed query: the text part (if any) and the filters.
pub struct ParsedQuery {
    /// The text part as a tantivy query; `None` when the query has only
    /// filters (then every document passing them matches).
    pub text: Option<Box<dyn Query>>,
    /// Filters found inline (merged with the flags by the caller).
    pub filters: Filters,
    /// What was repaired or ignored.
    pub warnings: Vec<Warning>,
}

/// Parse `query`, adding inline filters to `filters`. `analyzer` must be
/// the text field's analyzer.
pub fn parse(
    query: &str,
    fields: &Fields,
    analyzer: &mut TextAnalyzer,
    mut filters: Filters,
    now_ms: i64,
) -> Result<ParsedQuery, FilterError> {
    let mut warnings = Vec::new();
    let toks = lex(query, &mut warnings);
    let mut p = Parser {
        toks,
        at: 0,
        warnings: &mut warnings,
        filters: &mut filters,
        now_ms,
        error: None,
    };
    let mut parts = Vec::new();
    while p.at < p.toks.len() {
        if let Some(e) = p.or(0) {
            parts.push(e);
        }
        if let Some(Tok::Close(pos)) = p.peek() {
            let pos = *pos;
            p.warn(pos, "unmatched ')': ignored");
            p.at += 1;
        } else if p.at < p.toks.len() {
            p.at += 1;
        }
    }
    if let Some(e) = p.error.take() {
        return Err(e);
    }
    let expr = match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(Expr::And(parts)),
    };
    let text = expr.map(|e| to_query(&e, fields, analyzer));
    Ok(ParsedQuery {
        text,
        filters,
        warnings,
    })
}

fn to_query(e: &Expr, f: &Fields, analyzer: &mut TextAnalyzer) -> Box<dyn Query> {
    match e {
        Expr::Text { text } => text_query(text, f, analyzer),
        Expr::Prefix(stem) => prefix_query(stem, f, analyzer),
        Expr::Not(inner) => Box::new(BooleanQuery::new(vec![
            (Occur::Must, Box::new(AllQuery) as Box<dyn Query>),
            (Occur::MustNot, to_query(inner, f, analyzer)),
        ])),
        Expr::And(parts) => {
            // `a -b` is "a and not b", not "a and (all but b)".
            let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for p in parts {
                match p {
                    Expr::Not(inner) => {
                        clauses.push((Occur::MustNot, to_query(inner, f, analyzer)))
                    }
                    other => clauses.push((Occur::Must, to_query(other, f, analyzer))),
                }
            }
            if clauses.iter().all(|(o, _)| *o == Occur::MustNot) {
                clauses.push((Occur::Must, Box::new(AllQuery)));
            }
            Box::new(BooleanQuery::new(clauses))
        }
        Expr::Or(parts) => Box::new(BooleanQuery::new(
            parts
                .iter()
                .map(|p| (Occur::Should, to_query(p, f, analyzer)))
                .collect(),
        )),
    }
}

/// A query token: its position and text.
struct QTok {
    position: usize,
    text: String,
}

/// The analyzer's tokens of `text`.
fn tokens(text: &str, analyzer: &mut TextAnalyzer) -> Vec<QTok> {
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(t) = stream.next() {
        out.push(QTok {
            position: t.position,
            text: t.text.clone(),
        });
    }
    out
}

/// Words and phrases: one token is a term; several (a phrase, or one
/// compound such as `serde_json::from_str`, which the tokenizer gives as
/// its parts at consecutive positions) are a phrase of their tokens at
/// their relative positions, which is exactly how the indexed text reads:
/// a compound is found whole, inside a longer one, or written with other
/// joiners.
fn text_query(text: &str, f: &Fields, analyzer: &mut TextAnalyzer) -> Box<dyn Query> {
    let toks = tokens(text, analyzer);
    let mut parts = phrase_terms(&toks, f);
    if parts.is_empty() {
        return Box::new(EmptyQuery);
    }
    if parts.len() == 1 {
        return Box::new(TermQuery::new(
            parts.remove(0).1,
            IndexRecordOption::WithFreqs,
        ));
    }
    Box::new(PhraseQuery::new_with_offset(parts))
}

/// The first token at each position, at its position relative to the
/// first: the parts of words split at humps, not their whole form (which
/// shares its first part's position), since a phrase may start or end
/// inside a word (`sessionEntries` in `parseSessionEntries`).
fn phrase_terms(toks: &[QTok], f: &Fields) -> Vec<(usize, Term)> {
    let base = toks.first().map_or(0, |t| t.position);
    let mut out: Vec<(usize, Term)> = Vec::with_capacity(toks.len());
    for t in toks {
        let at = t.position - base;
        if out.last().is_some_and(|(p, _)| *p == at) {
            continue;
        }
        out.push((at, Term::from_field_text(f.text, &t.text)));
    }
    out
}

fn prefix_query(stem: &str, f: &Fields, analyzer: &mut TextAnalyzer) -> Box<dyn Query> {
    let toks = tokens(stem, analyzer);
    let Some(first) = toks.first() else {
        return Box::new(EmptyQuery);
    };
    // One word: every term that begins with it.
    if toks.len() == 1 {
        return term_prefix_range(Term::from_field_text(f.text, &first.text));
    }
    // Several parts (`serde_js*`, `parse sess*`): the parts in a row, the
    // last one as a prefix (the index holds a compound as its parts).
    let mut q = PhrasePrefixQuery::new_with_offset(phrase_terms(&toks, f));
    q.set_max_expansions(PREFIX_EXPANSIONS);
    Box::new(q)
}

/// How many terms the prefix of a phrase (`serde_js*`) may stand for.
const PREFIX_EXPANSIONS: u32 = 200;

/// Every term of `start`'s field that begins with `start`'s text.
pub fn term_prefix_range(start: Term) -> Box<dyn Query> {
    let field = start.field();
    let text = start.value().as_str().unwrap_or("").to_owned();
    let mut upper = text.clone();
    upper.push(char::MAX);
    Box::new(RangeQuery::new(
        Bound::Included(start),
        Bound::Excluded(Term::from_field_text(field, &upper)),
    ))
}

/// The filters on session facts (`cwd:`, `session:`) as clauses on
/// session documents; empty when there are none. The messages of the
/// sessions they match are then kept by their key ([`filter_clauses`]).
pub fn session_clauses(filters: &Filters, f: &Fields) -> Vec<(Occur, Box<dyn Query>)> {
    let mut out: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    let term = |field, v: &str| -> Box<dyn Query> {
        Box::new(TermQuery::new(
            Term::from_field_text(field, v),
            IndexRecordOption::Basic,
        ))
    };
    if !filters.cwds.is_empty() {
        let mut qs = Vec::new();
        for dir in &filters.cwds {
            qs.push(term(f.cwd, dir));
            let below = if dir.ends_with('/') {
                dir.clone()
            } else {
                format!("{dir}/")
            };
            qs.push(term_prefix_range(Term::from_field_text(f.cwd, &below)));
        }
        out.push((Occur::Must, any(qs)));
    }
    if !filters.sessions.is_empty() {
        out.push((
            Occur::Must,
            any(filters
                .sessions
                .iter()
                .map(|s| term_prefix_range(Term::from_field_text(f.session_id, s)))
                .collect()),
        ));
    }
    out
}

/// One of `qs` (none: nothing).
fn any(qs: Vec<Box<dyn Query>>) -> Box<dyn Query> {
    match qs.len() {
        0 => Box::new(EmptyQuery),
        1 => qs
            .into_iter()
            .next()
            .unwrap_or_else(|| Box::new(EmptyQuery)),
        _ => Box::new(BooleanQuery::new(
            qs.into_iter().map(|q| (Occur::Should, q)).collect(),
        )),
    }
}

/// The filters as clauses on message documents (all must hold).
/// `models` are the indexed model names that matched the `model:`
/// fragments; `sessions`, the keys of the sessions that matched
/// [`session_clauses`] (`None` when there are no such filters).
pub fn filter_clauses(
    filters: &Filters,
    f: &Fields,
    models: &[String],
    sessions: Option<Vec<u64>>,
) -> Vec<(Occur, Box<dyn Query>)> {
    let mut out: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    if !filters.roles.is_empty() {
        out.push((
            Occur::Must,
            any(filters
                .roles
                .iter()
                .map(|r| Box::new(crate::index::u64_is(f.role, r.rank())) as Box<dyn Query>)
                .collect()),
        ));
    }
    if let Some(keys) = sessions {
        out.push((Occur::Must, Box::new(ColumnSetQuery::new("sess", keys))));
    }
    if !filters.models.is_empty() {
        let hashes = models.iter().map(|m| model_hash(Some(m))).collect();
        out.push((Occur::Must, Box::new(ColumnSetQuery::new("model", hashes))));
    }
    if filters.after_ms.is_some() || filters.before_ms.is_some() {
        let lower = filters.after_ms.map_or(Bound::Unbounded, |ms| {
            Bound::Included(Term::from_field_date(
                f.timestamp,
                DateTime::from_timestamp_millis(ms),
            ))
        });
        let upper = filters.before_ms.map_or(Bound::Unbounded, |ms| {
            Bound::Excluded(Term::from_field_date(
                f.timestamp,
                DateTime::from_timestamp_millis(ms),
            ))
        });
        out.push((Occur::Must, Box::new(RangeQuery::new(lower, upper))));
    }
    if filters.active_only {
        out.push((Occur::Must, Box::new(crate::index::u64_is(f.active, 1))));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_764_460_800_000; // 2025-11-30T00:00:00Z

    fn parsed(q: &str) -> (Filters, Vec<Warning>, String) {
        let (_, fields) = Fields::build();
        let mut a = crate::index::schema::text_analyzer();
        let p = parse(q, &fields, &mut a, Filters::default(), NOW).unwrap();
        (p.filters, p.warnings, format!("{:?}", p.text))
    }

    #[test]
    fn inline_filters_are_taken_out_of_the_text() {
        let (f, w, text) =
            parsed("tokio role:user|assistant cwd:/home/u/proj after:7d branch:active");
        assert!(w.is_empty());
        assert_eq!(f.roles, vec![Role::User, Role::Assistant]);
        assert_eq!(f.cwds, vec!["/home/u/proj".to_string()]);
        assert_eq!(f.after_ms, Some(NOW - 7 * 86_400_000));
        assert!(f.active_only);
        assert!(text.contains("tokio"));
        assert!(!text.contains("role"));
    }

    #[test]
    fn dates() {
        assert_eq!(parse_when("2026-03-01", NOW).unwrap(), 1_772_323_200_000);
        assert_eq!(parse_when("yesterday", NOW).unwrap(), NOW - 86_400_000);
        assert_eq!(parse_when("today", NOW + 5000).unwrap(), NOW);
        assert_eq!(parse_when("12h", NOW).unwrap(), NOW - 12 * 3_600_000);
        assert!(parse_when("soon", NOW).is_err());
    }

    #[test]
    fn broken_queries_are_repaired_with_warnings() {
        let (_, w, text) = parsed("(tokio OR async");
        assert_eq!(w.len(), 1);
        assert!(w[0].message.contains("unclosed"));
        assert!(text.contains("tokio") && text.contains("async"));
        let (_, w, _) = parsed("tokio)");
        assert!(w[0].message.contains("unmatched ')'"));
        assert_eq!(w[0].position, 5);
        let (_, w, _) = parsed("\"half phrase");
        assert!(w[0].message.contains("unterminated"));
        let (_, w, _) = parsed("tokio OR");
        assert!(w[0].message.contains("OR with nothing"));
    }

    #[test]
    fn bad_filter_values_are_errors() {
        let (_, fields) = Fields::build();
        let mut a = crate::index::schema::text_analyzer();
        for q in ["role:robot", "after:soon", "branch:maybe"] {
            assert!(
                parse(q, &fields, &mut a, Filters::default(), NOW).is_err(),
                "{q}"
            );
        }
        // Not a filter name: searched as text.
        let p = parse(
            "serde_json::from_str",
            &fields,
            &mut a,
            Filters::default(),
            NOW,
        )
        .unwrap();
        assert!(p.text.is_some());
    }

    #[test]
    fn dirs_are_normalised() {
        assert_eq!(normalize_dir("/a/b/../c/"), "/a/c");
        assert_eq!(normalize_dir("/"), "/");
    }
}
