//! The query language on the server: the tree of
//! [`grammar`] compiled to a SQL boolean
//! expression over `pi_messages m` joined with `pi_sessions s`.
//!
//! - A word, phrase or prefix is a `tsquery` of pi-index's own tokens
//!   ([`super::text`]), matched with `@@`: `m.tsv @@ $1::tsquery`, a
//!   phrase with `<->` (or `<N>` where the tokenizer left a gap), a
//!   prefix as `'stem':*`.
//! - NOT, AND, OR and parentheses are SQL's `NOT`, `AND`, `OR`, around
//!   filters too (`-role:user`, `(a OR cwd:~/x)`), exactly as locally.
//! - Filters are `WHERE` conditions on the columns; `host:NAME` keeps one
//!   pushing host.
//! - Every piece of user text is a bind parameter: the SQL text is made
//!   only of this module's own words and parameter numbers.
//!
//! `sessions QUERY` also runs the query over the sessions' names and
//! titles ([`compile_sessions`]): the same tree, its words and phrases on
//! `s.name_tsv` or `s.title_tsv`, its filters on the session's facts.
//!
//! A windowed message ([`super::text`]) has its tokens in `pi_windows`: the
//! tree is compiled twice, once with leaves on the row's `tsv` and once
//! with leaves "some window of the message matches", and the two are
//! joined by the message's `windowed` flag, so that the GIN index on
//! `pi_messages.tsv` serves every ordinary message.

use std::collections::BTreeSet;

use tokio_postgres::types::{ToSql, Type};

use super::text;
use super::text::{pg_text, Tsquery};
use crate::search::query::expand::{alternatives, Dictionary, Known, Typed};
use crate::search::query::filters::{Branches, Constraint, Filters, Key, Now};
use crate::search::query::grammar::{self, Ast, Leaf};
use crate::search::query::{QueryError, Warning};

/// A bind parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// `text` (also a `tsquery` literal, cast in the SQL).
    Text(String),
    /// `text[]`.
    Texts(Vec<String>),
    /// `bigint`.
    Int(i64),
    /// A null `text`.
    NullText,
    /// A null `bigint`.
    NullInt,
}

static NULL_TEXT: Option<String> = None;
static NULL_INT: Option<i64> = None;

impl Param {
    /// The value and its type, as `query_typed` takes them.
    pub fn typed(&self) -> (&(dyn ToSql + Sync), Type) {
        match self {
            Param::Text(s) => (s, Type::TEXT),
            Param::Texts(v) => (v, Type::TEXT_ARRAY),
            Param::Int(n) => (n, Type::INT8),
            Param::NullText => (&NULL_TEXT, Type::TEXT),
            Param::NullInt => (&NULL_INT, Type::INT8),
        }
    }
}

/// A compiled query.
#[derive(Clone, Debug, PartialEq)]
pub struct SqlQuery {
    /// The boolean expression (over `m` and `s`).
    pub condition: String,
    /// The same, as disjoint conditions whose union it is: for a query
    /// with words on messages, one on ordinary rows (`NOT m.windowed`,
    /// its words on the row's `tsv`, where the GIN index serves them
    /// without re-reading the row's `tsv`) and one on windowed rows;
    /// else the condition alone.
    pub branches: Vec<String>,
    /// Its parameters: `$1` is the first.
    pub params: Vec<Param>,
    /// The parameter number of the `tsquery` that ranks hits (every
    /// positive text leaf, any of them), if the query has text.
    pub rank: Option<usize>,
    /// The parameter number of the `tsquery` of the other ways the
    /// positive text leaves may be written ([`expand`](crate::search::query::expand):
    /// `isfinished` as `is <-> finished`), if there are any: a match
    /// through them scores [`OTHER_FORMS`] of one through the exact form.
    pub others: Option<usize>,
    /// The tokens of the positive text leaves, for snippets.
    pub terms: BTreeSet<String>,
    /// Whether a phrase among its text leaves asks for positions:
    /// PostgreSQL keeps no statistics of them and estimates its matches as
    /// its words'. A phrase of two pair words is its pair alone
    /// ([`text::form_query_paired`]) and asks for none.
    pub phrase: bool,
    /// What was repaired or ignored.
    pub warnings: Vec<Warning>,
}

/// The condition on a message's windows (`$n` a `tsquery`).
fn in_windows(n: usize) -> String {
    format!(
        "EXISTS (SELECT 1 FROM pi_windows w WHERE w.host = m.host AND w.sid = m.sid \
         AND w.ord = m.ord AND w.tsv @@ ${n}::tsquery)"
    )
}

/// How `ts_rank_cd` is normalized: 1 divides the rank by the natural
/// logarithm of 1 + the text's length (its positions), so that of two texts
/// with the same covers the shorter ranks higher, as BM25's length
/// normalization has it (without it every text with one occurrence scores
/// the same). A row pushed with pairs ([`super::text`]) has that length in
/// `rank_len` (its `tsvector` also holds pair lexemes, which would count
/// one each): it is divided here, the same score as without pairs.
pub const NORMALIZATION: i32 = 1;

/// `ts_rank_cd` of the `tsvector` column `t` (of a row with `rank_len`
/// `len`) for `$n`, normalized by [`NORMALIZATION`].
fn rank_cd(t: &str, len: &str, n: usize) -> String {
    format!(
        "(CASE WHEN {len} > 0 THEN ts_rank_cd({t}, ${n}::tsquery, 0) / ln({len} + 1.0) \
         ELSE ts_rank_cd({t}, ${n}::tsquery, {NORMALIZATION}) END)"
    )
}

/// What a match through another form of a query's words scores,
/// relative to one through the exact form, as locally
/// ([`OTHER_FORMS_BOOST`](crate::search::query::compile::OTHER_FORMS_BOOST)).
pub const OTHER_FORMS: f32 = crate::search::query::compile::OTHER_FORMS_BOOST;

/// The score of a message for the `tsquery` `$n`: `ts_rank_cd` on its
/// row, or its best window's.
fn rank_of(n: usize) -> String {
    format!(
        "(CASE WHEN m.windowed THEN coalesce((SELECT max({}) \
         FROM pi_windows w WHERE w.host = m.host AND w.sid = m.sid AND w.ord = m.ord), 0) \
         ELSE {} END)::real",
        rank_cd("w.tsv", "w.rank_len", n),
        rank_cd("m.tsv", "m.rank_len", n)
    )
}

/// The score of a message for the `tsquery` `$rank` and, at
/// [`OTHER_FORMS`] of it, for the `tsquery` of other forms `$others`.
pub fn score(rank: usize, others: Option<usize>) -> String {
    with_others(rank_of, rank, others)
}

/// `one`'s score for `$rank`, plus [`OTHER_FORMS`] of its score for
/// `$others` when there are other forms.
fn with_others(one: impl Fn(usize) -> String, rank: usize, others: Option<usize>) -> String {
    match others {
        None => one(rank),
        Some(o) => format!("({} + {OTHER_FORMS}::real * {})", one(rank), one(o)),
    }
}

/// The `tsquery` matching any of `queries`.
fn any_of<'a>(queries: impl IntoIterator<Item = &'a String>) -> String {
    queries
        .into_iter()
        .map(|q| format!("({q})"))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// What a query's words are matched against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Messages (`m.tsv`, or their windows).
    Messages,
    /// Sessions' names (`s.name_tsv`).
    Names,
    /// Sessions' titles, their first user message (`s.title_tsv`).
    Titles,
}

impl Scope {
    /// The `tsvector` column of a session scope.
    fn column(self) -> &'static str {
        match self {
            Scope::Messages => "m.tsv",
            Scope::Names => "s.name_tsv",
            Scope::Titles => "s.title_tsv",
        }
    }
}

/// The score of a session's name or title for the `tsquery` `$n` (and
/// the other forms' `$others`, as in [`score`]).
pub fn session_score(scope: Scope, n: usize, others: Option<usize>) -> String {
    let one = |n: usize| {
        format!(
            "ts_rank_cd({}, ${n}::tsquery, {NORMALIZATION})",
            scope.column()
        )
    };
    with_others(one, n, others)
}

/// A compiled subtree: on ordinary rows, on windowed ones.
struct Cond {
    plain: String,
    windowed: String,
}

impl Cond {
    fn same(s: String) -> Cond {
        Cond {
            windowed: s.clone(),
            plain: s,
        }
    }
}

struct Compiler<'a> {
    analyzer: tantivy::tokenizer::TextAnalyzer,
    /// The team's terms the query's words may be cut into.
    dict: Dictionary<'a>,
    /// The words whose pairs the messages' `tsvector`s hold, when every
    /// row holds them (else empty): a phrase of them asks for its pairs.
    pairs: &'a text::PairWords,
    now: &'a Now,
    scope: Scope,
    params: Vec<Param>,
    warnings: Vec<Warning>,
    /// The positive text leaves' `tsquery` literals.
    ranked: Vec<String>,
    /// Their other forms' `tsquery` literals.
    others: Vec<String>,
    terms: BTreeSet<String>,
    has_text: bool,
    phrase: bool,
}

fn nothing_kept(word: &str) -> String {
    format!(
        "'{word}' has nothing the index keeps (letters and digits, words up to 100 bytes): ignored"
    )
}

impl<'a> Compiler<'a> {
    fn param(&mut self, p: Param) -> usize {
        self.params.push(p);
        self.params.len()
    }

    /// The pair words a text leaf's `tsquery` may ask pairs of: none but
    /// on messages (names and titles hold no pairs).
    fn pair_words(&self) -> &'a text::PairWords {
        static NONE: text::PairWords = text::PairWords::empty();
        if self.scope == Scope::Messages {
            self.pairs
        } else {
            &NONE
        }
    }

    fn text(&mut self, s: &str) -> usize {
        self.param(Param::Text(pg_text(s).into_owned()))
    }

    fn warn(&mut self, position: usize, message: String) {
        self.warnings.push(Warning { position, message });
    }

    fn node(&mut self, ast: &Ast, negated: bool) -> Result<Option<Cond>, QueryError> {
        Ok(match ast {
            Ast::Leaf { leaf, at } => self.leaf(leaf, *at, negated)?,
            Ast::Not(inner) => self.node(inner, !negated)?.map(|c| Cond {
                plain: format!("NOT {}", c.plain),
                windowed: format!("NOT {}", c.windowed),
            }),
            Ast::And(children) | Ast::Or(children) => {
                let op = if matches!(ast, Ast::And(_)) {
                    " AND "
                } else {
                    " OR "
                };
                let mut parts = Vec::new();
                for child in children {
                    if let Some(c) = self.node(child, negated)? {
                        parts.push(c);
                    }
                }
                match parts.len() {
                    0 => None,
                    1 => parts.pop(),
                    _ => Some(Cond {
                        plain: format!(
                            "({})",
                            parts
                                .iter()
                                .map(|c| c.plain.as_str())
                                .collect::<Vec<_>>()
                                .join(op)
                        ),
                        windowed: format!(
                            "({})",
                            parts
                                .iter()
                                .map(|c| c.windowed.as_str())
                                .collect::<Vec<_>>()
                                .join(op)
                        ),
                    }),
                }
            }
        })
    }

    /// A word or phrase: its exact `tsquery` OR'd with the other ways
    /// `text` may be written in the messages, as the local index's
    /// compile step finds them ([`alternatives`]), from the team's terms.
    fn forms_leaf(&mut self, text: &str, exact: Tsquery, negated: bool) -> Cond {
        let typed = self.typed(text);
        let forms = alternatives(&typed, &mut self.dict);
        // Every token of the text (its parts and their wholes), for
        // snippets.
        let mut tokens: Vec<String> = typed.parts.into_iter().map(|(_, t)| t).collect();
        tokens.extend(typed.wholes.into_iter().map(|(_, _, t)| t));
        let list = self.pair_words();
        let mut alts = Vec::with_capacity(forms.len());
        for form in &forms {
            let terms: Vec<(usize, &str)> = form.iter().map(|(p, t)| (*p, t.as_str())).collect();
            alts.push(text::form_query_paired(&terms, false, list));
            tokens.extend(form.iter().map(|(_, t)| t.clone()));
        }
        self.text_leaf(exact, alts, tokens, negated)
    }

    /// The `tsquery` of a word, phrase or prefix `text`, if it keeps
    /// anything.
    fn leaf_query(&mut self, text: &str, prefix: bool) -> Option<Tsquery> {
        let list = self.pair_words();
        text::phrase_query(&mut self.analyzer, text, prefix, list)
    }

    /// A text leaf: `tsquery`, or any of it and `alts`.
    fn text_leaf(
        &mut self,
        tsquery: Tsquery,
        alts: Vec<Tsquery>,
        tokens: Vec<String>,
        negated: bool,
    ) -> Cond {
        self.has_text = true;
        let matched = if alts.is_empty() {
            tsquery.matched.clone()
        } else {
            any_of(std::iter::once(&tsquery.matched).chain(alts.iter().map(|a| &a.matched)))
        };
        if !negated {
            self.ranked.push(tsquery.ranked);
            self.others.extend(alts.into_iter().map(|a| a.ranked));
            self.terms.extend(tokens);
        }
        let n = self.param(Param::Text(matched));
        if self.scope != Scope::Messages {
            return Cond::same(format!("{} @@ ${n}::tsquery", self.scope.column()));
        }
        Cond {
            plain: format!("m.tsv @@ ${n}::tsquery"),
            windowed: in_windows(n),
        }
    }

    fn leaf(&mut self, leaf: &Leaf, at: usize, negated: bool) -> Result<Option<Cond>, QueryError> {
        Ok(match leaf {
            Leaf::All => Some(Cond::same("TRUE".into())),
            Leaf::Filter { key, value } => {
                if *key == Key::Host && !value.trim().is_empty() {
                    let n = self.text(value);
                    let table = if self.scope == Scope::Messages {
                        "m"
                    } else {
                        "s"
                    };
                    return Ok(Some(Cond::same(format!("{table}.host = ${n}"))));
                }
                let c = Constraint::parse(*key, value, self.now)?;
                let (sql, note) = self.constraint(&c);
                if let Some(note) = note {
                    self.warn(at, note);
                }
                Some(Cond::same(sql))
            }
            Leaf::Word(word) | Leaf::Prefix(word) => {
                let prefix = matches!(leaf, Leaf::Prefix(_));
                match self.leaf_query(word, prefix) {
                    None => {
                        let shown = if prefix {
                            format!("{word}*")
                        } else {
                            word.clone()
                        };
                        self.warn(at, nothing_kept(&shown));
                        None
                    }
                    Some(q) if prefix => Some(self.text_leaf(q, Vec::new(), Vec::new(), negated)),
                    Some(q) => Some(self.forms_leaf(word, q, negated)),
                }
            }
            Leaf::Phrase(phrase) => {
                let Some(q) = self.leaf_query(phrase, false) else {
                    self.warn(
                        at,
                        format!("the phrase \"{phrase}\" has nothing to search for: ignored"),
                    );
                    return Ok(None);
                };
                let mut prev_space = true;
                for (n, (i, c)) in phrase.char_indices().enumerate() {
                    if prev_space && !c.is_whitespace() {
                        let word: String = phrase[i..]
                            .chars()
                            .take_while(|c| !c.is_whitespace())
                            .collect();
                        if self.tokens(&word).is_empty() {
                            let message = format!("in a phrase: {}", nothing_kept(&word));
                            self.warn(at + 1 + n, message);
                        }
                    }
                    prev_space = c.is_whitespace();
                }
                // Positions asked for (tokens are letters and digits, so `<`
                // is only ever an operator's): not by a pair alone.
                self.phrase |= q.matched.contains('<');
                Some(self.forms_leaf(phrase, q, negated))
            }
        })
    }

    /// `s` as the analyzer gives it, parts and wholes.
    fn typed(&mut self, s: &str) -> Typed {
        let mut toks = Vec::new();
        let mut stream = self.analyzer.token_stream(s);
        while let Some(t) = stream.next() {
            toks.push((t.position, t.offset_to, t.text.clone()));
        }
        Typed::of(&toks)
    }

    fn tokens(&mut self, s: &str) -> Vec<String> {
        text::tokens(&mut self.analyzer, s)
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    }

    /// The condition of a filter, and a note when it can match nothing.
    fn constraint(&mut self, c: &Constraint) -> (String, Option<String>) {
        // A session's name or title matches no filter on messages (and
        // `sessions QUERY` ranks none for such a query).
        if self.scope != Scope::Messages && c.is_about_messages() {
            return ("FALSE".into(), None);
        }
        match c {
            // The sessions whose id starts with the value, and every
            // session of their families (of the same host: lineage never
            // crosses hosts).
            Constraint::Family(prefix) => {
                let n = self.text(prefix);
                (
                    format!(
                        "(s.host, s.sid) IN (SELECT r.host, r.sid FROM pi_sessions f \
                         JOIN pi_sessions r ON r.host = f.host AND (r.sid = f.sid OR r.family = f.family) \
                         WHERE starts_with(f.session_id, ${n}))"
                    ),
                    None,
                )
            }
            Constraint::Roles(roles) => {
                let names = roles.iter().map(|r| r.as_str().to_owned()).collect();
                let n = self.param(Param::Texts(names));
                (format!("m.role = ANY(${n})"), None)
            }
            Constraint::Cwd(dir) => {
                let below = if dir.ends_with('/') {
                    dir.clone()
                } else {
                    format!("{dir}/")
                };
                let a = self.text(dir);
                let b = self.text(&below);
                (format!("(s.cwd = ${a} OR starts_with(s.cwd, ${b}))"), None)
            }
            Constraint::Session(prefix) => {
                let n = self.text(prefix);
                (format!("starts_with(s.session_id, ${n})"), None)
            }
            Constraint::Name(words) => match text::all_words_query(&mut self.analyzer, words) {
                Some(q) => {
                    let n = self.param(Param::Text(q));
                    (format!("s.name_tsv @@ ${n}::tsquery"), None)
                }
                None => (
                    "FALSE".into(),
                    Some(format!(
                        "name:{words} has nothing the index keeps (letters and digits): it matches nothing"
                    )),
                ),
            },
            Constraint::Model(fragment) => {
                let n = self.text(fragment);
                (format!("strpos(lower(m.model), ${n}) > 0"), None)
            }
            Constraint::After(ms) => {
                let n = self.param(Param::Int(*ms));
                (format!("m.ts_ms >= ${n}"), None)
            }
            Constraint::Before(ms) => {
                let n = self.param(Param::Int(*ms));
                (format!("m.ts_ms < ${n}"), None)
            }
            Constraint::Branch(Branches::Active) => ("m.active".into(), None),
            Constraint::Branch(Branches::All) => ("TRUE".into(), None),
        }
    }
}

/// What [`compile`] of `query` may look up in the team's terms
/// ([`Known::wanted`] of each token of its words and phrases), without
/// repeats; empty for a query without them (or that does not parse).
pub fn wanted(query: &str) -> Vec<String> {
    fn leaves(ast: &Ast, analyzer: &mut tantivy::tokenizer::TextAnalyzer, out: &mut Vec<String>) {
        match ast {
            Ast::Leaf {
                leaf: Leaf::Word(t) | Leaf::Phrase(t),
                ..
            } => {
                for (_, token) in text::tokens(analyzer, t) {
                    Known::wanted(&token, out);
                }
            }
            Ast::Leaf { .. } => {}
            Ast::Not(inner) => leaves(inner, analyzer, out),
            Ast::And(children) | Ast::Or(children) => {
                for c in children {
                    leaves(c, analyzer, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    if let Ok(grammar::Parsed { ast: Some(ast), .. }) = grammar::parse(query) {
        leaves(&ast, &mut crate::index::tokenizer::analyzer(), &mut out);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Compile `query` with the flags' `filters` (ANDed with it) into a SQL
/// condition on messages, its words also in the other forms the team's
/// terms `known` allow. The errors and warnings are the local search's.
pub fn compile(
    query: &str,
    filters: &Filters,
    now: &Now,
    known: &Known,
    pairs: &text::PairWords,
) -> Result<SqlQuery, QueryError> {
    compile_sessions(
        query,
        filters,
        now,
        Scope::Messages,
        Vec::new(),
        known,
        pairs,
    )
}

/// Compile `query` with the flags' `filters` into a SQL condition for
/// `scope`: on messages ([`compile`]), or on sessions (`s`), its words
/// matched against the sessions' names or titles; its parameters
/// numbered after `params` (those of a statement it joins), which it
/// returns with its own.
pub fn compile_sessions(
    query: &str,
    filters: &Filters,
    now: &Now,
    scope: Scope,
    params: Vec<Param>,
    known: &Known,
    pairs: &text::PairWords,
) -> Result<SqlQuery, QueryError> {
    let parsed = grammar::parse(query)?;
    let mut c = Compiler {
        analyzer: crate::index::tokenizer::analyzer(),
        dict: Dictionary::of_known(known),
        pairs,
        now,
        scope,
        params,
        warnings: parsed.warnings,
        ranked: Vec::new(),
        others: Vec::new(),
        terms: BTreeSet::new(),
        has_text: false,
        phrase: false,
    };
    let top = match &parsed.ast {
        Some(ast) => match c.node(ast, false)? {
            Some(cond) => Some(cond),
            None => return Err(QueryError::NothingToSearch(c.warnings)),
        },
        None if !c.warnings.is_empty() => return Err(QueryError::NothingToSearch(c.warnings)),
        None => None,
    };
    let mut parts = Vec::new();
    for f in &filters.constraints {
        let (sql, _) = c.constraint(f);
        parts.push(sql);
    }
    let and = |parts: &[String]| {
        if parts.is_empty() {
            "TRUE".to_owned()
        } else {
            parts.join(" AND ")
        }
    };
    let mut branches = Vec::new();
    match top {
        Some(cond) if c.has_text && scope == Scope::Messages => {
            for (flag, cond) in [
                ("NOT m.windowed", &cond.plain),
                ("m.windowed", &cond.windowed),
            ] {
                let mut b = vec![flag.to_owned()];
                b.extend(parts.iter().cloned());
                b.push(cond.clone());
                branches.push(and(&b));
            }
            parts.push(format!(
                "((NOT m.windowed AND {}) OR (m.windowed AND {}))",
                cond.plain, cond.windowed
            ));
        }
        Some(cond) => parts.push(cond.plain),
        None => {}
    }
    let condition = and(&parts);
    if branches.is_empty() {
        branches.push(condition.clone());
    }
    let rank = (!c.ranked.is_empty()).then(|| {
        let q = any_of(&c.ranked);
        c.param(Param::Text(q))
    });
    let others = (!c.others.is_empty()).then(|| {
        let q = any_of(&c.others);
        c.param(Param::Text(q))
    });
    Ok(SqlQuery {
        condition,
        branches,
        params: c.params,
        rank,
        others,
        phrase: c.phrase,
        terms: c.terms,
        warnings: c.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> SqlQuery {
        compile(
            s,
            &Filters::default(),
            &Now::system(),
            &Known::default(),
            &text::PairWords::default(),
        )
        .unwrap()
    }

    #[test]
    fn operators_filters_and_phrases_become_sql_with_every_value_bound() {
        let c = q(r#""socket test" -flaky OR (role:user host:bob)"#);
        assert_eq!(
            c.condition,
            "((NOT m.windowed AND ((m.tsv @@ $1::tsquery AND NOT m.tsv @@ $2::tsquery) OR (m.role = ANY($3) AND m.host = $4))) \
             OR (m.windowed AND ((".to_owned()
                + &in_windows(1)
                + " AND NOT "
                + &in_windows(2)
                + ") OR (m.role = ANY($3) AND m.host = $4))))"
        );
        assert_eq!(
            c.params,
            vec![
                Param::Text("'socket' <-> 'test'".into()),
                Param::Text("'flaky'".into()),
                Param::Texts(vec!["user".into()]),
                Param::Text("bob".into()),
                Param::Text("('socket' <-> 'test')".into()),
            ]
        );
        assert_eq!(c.rank, Some(5));
        assert_eq!(
            c.branches,
            vec![
                "NOT m.windowed AND ((m.tsv @@ $1::tsquery AND NOT m.tsv @@ $2::tsquery) OR (m.role = ANY($3) AND m.host = $4))".to_owned(),
                "m.windowed AND (("
                    .to_owned()
                    + &in_windows(1)
                    + " AND NOT "
                    + &in_windows(2)
                    + ") OR (m.role = ANY($3) AND m.host = $4))"
            ]
        );
        assert_eq!(
            c.terms.into_iter().collect::<Vec<_>>(),
            vec!["socket".to_owned(), "test".to_owned()]
        );
    }

    #[test]
    fn names_and_titles_take_the_words_and_the_session_filters_numbered_after_others() {
        let c = compile_sessions(
            r#""flaky test" host:bob family:019b role:user"#,
            &Filters::default(),
            &Now::system(),
            Scope::Titles,
            vec![Param::Int(7)],
            &Known::default(),
            &text::PairWords::default(),
        )
        .unwrap();
        assert_eq!(
            c.condition,
            "(s.title_tsv @@ $2::tsquery AND s.host = $3 AND (s.host, s.sid) IN \
             (SELECT r.host, r.sid FROM pi_sessions f JOIN pi_sessions r ON r.host = f.host \
             AND (r.sid = f.sid OR r.family = f.family) WHERE starts_with(f.session_id, $4)) \
             AND FALSE)"
        );
        assert_eq!(
            c.params,
            vec![
                Param::Int(7),
                Param::Text("'flaky' <-> 'test'".into()),
                Param::Text("bob".into()),
                Param::Text("019b".into()),
                Param::Text("('flaky' <-> 'test')".into()),
            ]
        );
        assert_eq!(c.rank, Some(5));
        assert_eq!(
            session_score(Scope::Titles, 5, None),
            "ts_rank_cd(s.title_tsv, $5::tsquery, 1)"
        );
    }

    #[test]
    fn a_query_asks_for_positions_unless_its_phrase_is_a_pair() {
        let words = text::PairWords::new(vec!["error".into(), "handling".into(), "the".into()]);
        let with = |s: &str, list: &text::PairWords| {
            compile(
                s,
                &Filters::default(),
                &Now::system(),
                &Known::default(),
                list,
            )
            .unwrap()
        };
        // Two pair words in a row: the pair lexeme alone, no positions.
        let c = with(r#""error handling""#, &words);
        assert_eq!(c.params[0], Param::Text("'error handling'".into()));
        assert!(!c.phrase);
        // The same phrase without pair words, a longer one and a phrase
        // under NOT: positions.
        assert!(with(r#""error handling""#, &text::PairWords::default()).phrase);
        assert!(with(r#""the error handling""#, &words).phrase);
        // A compound's parts in a row are not taken for a phrase: its
        // estimate (the whole's and the parts') keeps the window, which
        // is far cheaper than every GIN match re-read
        // ([docs/performance.md](../../docs/performance.md#the-team-database)).
        assert!(!with("HashMap", &words).phrase);
        assert!(with(r#"error -"socket test""#, &words).phrase);
        // Words alone ask for none.
        assert!(!with("error handling", &words).phrase);
    }

    #[test]
    fn hostile_text_is_only_ever_a_parameter() {
        let c = q(r#"x'); DROP TABLE pi_messages; -- "a\"b" cwd:"/t'; DROP""#);
        assert!(!c.condition.contains("DROP"), "{}", c.condition);
        assert!(!c.condition.contains('\''), "{}", c.condition);
        assert!(c
            .params
            .iter()
            .any(|p| matches!(p, Param::Text(t) if t.contains("DROP"))));
    }

    #[test]
    fn nothing_to_search_is_the_local_error() {
        assert!(matches!(
            compile(
                "-- ...",
                &Filters::default(),
                &Now::system(),
                &Known::default(),
                &text::PairWords::default()
            ),
            Err(QueryError::NothingToSearch(_))
        ));
        assert_eq!(q("").condition, "TRUE");
        assert_eq!(q("*").condition, "TRUE");
        assert_eq!(q("*").branches, vec!["TRUE".to_owned()]);
        // Filters are in both branches of a query with words.
        let c = compile(
            "zq",
            &Filters::default(),
            &Now::system(),
            &Known::default(),
            &text::PairWords::default(),
        )
        .unwrap();
        assert_eq!(c.branches.len(), 2);
    }
}
