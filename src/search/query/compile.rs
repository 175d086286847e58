//! The second step: a parsed query ([`super::grammar`]) and the flags'
//! filters into one tantivy query.
//!
//! NOT, OR and parentheses apply to filters exactly as to words: every
//! leaf becomes a query, and the tree's operators combine them. A query
//! made only of negations (`-flaky`, `-role:user`) means every message
//! except those. The flags are ANDed with the whole query. Filters and `*`
//! score 0, so the ranking is the text's BM25 alone (and, with no text,
//! recency alone).
//!
//! The index's analyzer has the last word on text: a word, phrase word or
//! prefix with nothing the analyzer keeps (punctuation, symbols, emoji, a
//! lone `-`) is left out with a warning, and the rest of the query is
//! searched as if it had not been written. A query of nothing but such
//! parts is an error ([`QueryError::NothingToSearch`]); an empty query
//! matches every message, like `*`.
//!
//! Everything that names the schema is in [`FieldMap`].

use std::ops::Bound;

use tantivy::collector::DocSetCollector;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, EmptyQuery, Occur, PhrasePrefixQuery,
    PhraseQuery, Query, RangeQuery, TermQuery,
};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DateTime, Searcher, Term};

use super::error::QueryError;
use super::expand::{alternatives, Dictionary, Typed};
use super::filter_term::FilterTerm;
use super::filters::{Branches, Constraint, Filters, Now};
use super::grammar::{self, Ast, Leaf, Warning};
use crate::index::schema::{model_hash, SESSION_DOC};
use crate::index::{messages_only, tantivy_err, term_query, u64_is, Fields, IndexError};
use crate::search::cache::stamp;
use crate::search::column_set::ColumnSetQuery;
use crate::search::error::SearchError;
use crate::search::reader::Reader;

/// The schema as the compile step sees it: the text field and its
/// analyzer, one query per kind of [`Constraint`], everything, and the
/// exclusion of session summary documents. When the schema changes, this
/// is the one place to re-point.
pub struct FieldMap<'a> {
    reader: &'a Reader,
    searcher: &'a Searcher,
    analyzer: TextAnalyzer,
    /// The fields a word is searched in: a message's text, and what the
    /// model was sent instead of it (only when the index holds any such
    /// replacement, so that every other index runs the queries it ran
    /// before edits existed).
    text_fields: Vec<tantivy::schema::Field>,
    scope: Scope,
    /// Each text field's term dictionaries, for the other ways a word
    /// may be typed ([`super::expand`]); opened when first needed.
    dictionaries: Vec<(tantivy::schema::Field, Dictionary<'a>)>,
    /// The state of the index `searcher` shows ([`crate::search::cache`]).
    stamp: u64,
}

impl Drop for FieldMap<'_> {
    /// The dictionaries' lookups are kept for the next query of this
    /// state of the index.
    fn drop(&mut self) {
        for (field, dict) in self.dictionaries.drain(..) {
            self.reader
                .cache()
                .give_back(self.stamp, field, dict.into_lookups());
        }
    }
}

/// Which documents a compiled query selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Message documents (what `search` finds).
    Messages,
    /// Session documents, whose words are their name or their title
    /// (what `sessions QUERY` ranks besides messages). Filters on
    /// messages (roles, models, times, branches) match no session.
    Sessions,
}

impl<'a> FieldMap<'a> {
    /// The fast column that orders hits by time (and breaks ties of
    /// score).
    pub const RECENCY: &'static str = crate::index::schema::RECENCY;

    /// The map of `reader`'s schema; `searcher` looks up model names.
    pub fn new(reader: &'a Reader, searcher: &'a Searcher) -> Result<FieldMap<'a>, IndexError> {
        let pi = &reader.pi;
        let analyzer = pi
            .index
            .tokenizer_for_field(pi.fields.text)
            .map_err(|e| tantivy_err(&pi.dir, e))?;
        let mut text_fields = vec![pi.fields.text];
        // A replacement is indexed only on a message marked replaced (the
        // `edited` column at its highest), so the column's largest value
        // says whether any segment holds one. Asking the inverted index of
        // a segment without the field would instead make tantivy build an
        // empty term dictionary (once per process: an FST builder's
        // table, a measurable share of a fresh process's search:
        // [docs/performance.md](../../../docs/performance.md#local-search)).
        let stamp = stamp(searcher);
        let replaced = reader.cache().replaced(stamp, || {
            let mut replaced = false;
            for seg in searcher.segment_readers() {
                let edited = seg
                    .fast_fields()
                    .column_opt::<u64>("edited")
                    .map_err(|e| tantivy_err(&pi.dir, e))?;
                replaced |=
                    edited.is_some_and(|c| c.max_value() >= crate::pi::Edited::Replaced.rank());
            }
            Ok::<_, IndexError>(replaced)
        })?;
        if replaced {
            text_fields.push(pi.fields.replacement);
        }
        Ok(FieldMap {
            reader,
            searcher,
            analyzer,
            text_fields,
            scope: Scope::Messages,
            dictionaries: Vec::new(),
            stamp,
        })
    }

    /// Whether words are also searched in replacement texts (some
    /// message of the index has one).
    pub fn searches_replacements(&self) -> bool {
        self.text_fields.len() > 1
    }

    /// The map for session documents whose words are in `field` (the
    /// session's name, or its title).
    pub fn for_sessions(
        reader: &'a Reader,
        searcher: &'a Searcher,
        field: tantivy::schema::Field,
    ) -> Result<FieldMap<'a>, IndexError> {
        let mut map = FieldMap::new(reader, searcher)?;
        map.text_fields = vec![field];
        map.scope = Scope::Sessions;
        Ok(map)
    }

    /// A query for a text leaf: `make` for each text field, any of them.
    fn on_text(
        &mut self,
        make: impl Fn(tantivy::schema::Field, &mut FieldMap<'_>) -> Box<dyn Query>,
    ) -> Box<dyn Query> {
        let fields = self.text_fields.clone();
        any(fields.into_iter().map(|f| make(f, self)).collect())
    }

    fn fields(&self) -> &Fields {
        &self.reader.pi.fields
    }

    /// The text field's analyzer output for `text`.
    fn tokens(&mut self, text: &str) -> Vec<QTok> {
        let mut out = Vec::new();
        let mut stream = self.analyzer.token_stream(text);
        while let Some(t) = stream.next() {
            out.push(QTok {
                position: t.position,
                to: t.offset_to,
                text: t.text.clone(),
            });
        }
        out
    }

    /// The term dictionaries of `field`.
    fn dictionary(&mut self, field: tantivy::schema::Field) -> &mut Dictionary<'a> {
        let at = match self.dictionaries.iter().position(|(f, _)| *f == field) {
            Some(at) => at,
            None => {
                let known = self.reader.cache().take_lookups(self.stamp, field);
                self.dictionaries
                    .push((field, Dictionary::with_lookups(self.searcher, field, known)));
                self.dictionaries.len() - 1
            }
        };
        &mut self.dictionaries[at].1
    }

    /// A token of a text field.
    fn text_term(&self, field: tantivy::schema::Field, token: &str) -> Term {
        Term::from_field_text(field, token)
    }

    /// Every document (summaries included: [`FieldMap::messages_only`]
    /// takes them out at the top).
    fn everything(&self) -> Box<dyn Query> {
        Box::new(AllQuery)
    }

    /// `query` without the session summary documents (or, for
    /// [`Scope::Sessions`], only them).
    fn messages_only(&self, query: Box<dyn Query>) -> Box<dyn Query> {
        match self.scope {
            Scope::Messages => Box::new(messages_only(self.fields(), query)),
            Scope::Sessions => Box::new(BooleanQuery::new(vec![
                (Occur::Must, query),
                (Occur::Must, term_query(self.fields().doc_type, SESSION_DOC)),
            ])),
        }
    }

    /// The documents a constraint keeps, and a note when it can keep
    /// none.
    /// The messages of the sessions whose session documents match
    /// `sessions`: their keys, kept with one scan of the `sess` column.
    fn of_sessions(&self, sessions: Box<dyn Query>) -> Result<Box<dyn Query>, IndexError> {
        let f = self.fields();
        let records = BooleanQuery::new(vec![
            (Occur::Must, sessions),
            (Occur::Must, term_query(f.doc_type, SESSION_DOC)),
        ]);
        let err = |e| tantivy_err(&self.reader.pi.dir, e);
        let addrs = self
            .searcher
            .search(&records, &DocSetCollector)
            .map_err(err)?;
        let mut keys = Vec::with_capacity(addrs.len());
        for a in addrs {
            let col = self
                .searcher
                .segment_reader(a.segment_ord)
                .fast_fields()
                .u64("sess")
                .map_err(err)?;
            keys.extend(col.first(a.doc_id));
        }
        Ok(Box::new(ColumnSetQuery::new("sess", keys)))
    }

    fn constraint(
        &mut self,
        c: &Constraint,
    ) -> Result<(Box<dyn Query>, Option<String>), IndexError> {
        let f = *self.fields();
        let raw = |field, v: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(
                Term::from_field_text(field, v),
                IndexRecordOption::Basic,
            ))
        };
        let date = |ms| Term::from_field_date(f.timestamp, DateTime::from_timestamp_millis(ms));
        if self.scope == Scope::Sessions && c.is_about_messages() {
            return Ok((Box::new(EmptyQuery), None));
        }
        Ok(match c {
            // The role's term: an AND of words and one role is still an
            // intersection of term scorers, which tantivy prunes.
            Constraint::Roles(roles) => (
                any(roles
                    .iter()
                    .map(|r| {
                        let t = Term::from_field_text(f.role_term, r.as_str());
                        Box::new(FilterTerm::new(t)) as Box<dyn Query>
                    })
                    .collect()),
                None,
            ),
            // Session facts live on session documents: find the sessions,
            // then keep the messages by their sessions' keys.
            Constraint::Cwd(dir) => {
                let below = if dir.ends_with('/') {
                    dir.clone()
                } else {
                    format!("{dir}/")
                };
                let sessions = any(vec![
                    raw(f.cwd, dir),
                    term_prefix_range(Term::from_field_text(f.cwd, &below)),
                ]);
                (self.of_sessions(sessions)?, None)
            }
            Constraint::Name(words) => {
                // Every word of the value, in any order.
                let mut seen = std::collections::BTreeSet::new();
                let terms: Vec<(Occur, Box<dyn Query>)> = self
                    .tokens(words)
                    .into_iter()
                    .filter(|t| seen.insert(t.position))
                    .map(|t| {
                        let q: Box<dyn Query> = Box::new(TermQuery::new(
                            Term::from_field_text(f.session_name, &t.text),
                            IndexRecordOption::WithFreqs,
                        ));
                        (Occur::Must, q)
                    })
                    .collect();
                if terms.is_empty() {
                    let note = format!(
                        "name:{words} has nothing the index keeps (letters and digits): it matches nothing"
                    );
                    return Ok((Box::new(EmptyQuery), Some(note)));
                }
                (self.of_sessions(Box::new(BooleanQuery::new(terms)))?, None)
            }
            Constraint::Session(prefix) => {
                let sessions = term_prefix_range(Term::from_field_text(f.session_id, prefix));
                (self.of_sessions(sessions)?, None)
            }
            Constraint::Family(prefix) => of_family(self.reader, self.searcher, prefix)?,
            Constraint::Model(fragment) => {
                let models = crate::search::lookup::matching_models(
                    self.reader,
                    self.searcher,
                    std::slice::from_ref(fragment),
                )?;
                let note = models.is_empty().then(|| {
                    format!("no indexed model name contains {fragment:?}: model:{fragment} matches nothing")
                });
                let hashes = models.iter().map(|m| model_hash(Some(m))).collect();
                (Box::new(ColumnSetQuery::new("model", hashes)), note)
            }
            Constraint::After(ms) => (
                Box::new(RangeQuery::new(
                    Bound::Included(date(*ms)),
                    Bound::Unbounded,
                )),
                None,
            ),
            Constraint::Before(ms) => (
                Box::new(RangeQuery::new(
                    Bound::Unbounded,
                    Bound::Excluded(date(*ms)),
                )),
                None,
            ),
            Constraint::Branch(Branches::Active) => (Box::new(u64_is(f.active, 1)), None),
            Constraint::Branch(Branches::All) => (self.everything(), None),
        })
    }
}

/// A query ready to run.
pub struct Compiled {
    /// The message documents that match.
    pub query: Box<dyn Query>,
    /// What was repaired or ignored, grammar first, then the rest in
    /// query order.
    pub warnings: Vec<Warning>,
    /// Every filter the query asks, from its text and from `flags`.
    pub constraints: Vec<Constraint>,
}

/// Parse `query`, compile it, and AND it with `flags`. `now` anchors
/// relative dates and gives the time zone of civil ones.
pub fn compile(
    query: &str,
    flags: &Filters,
    now: &Now,
    map: &mut FieldMap<'_>,
) -> Result<Compiled, SearchError> {
    let parsed = grammar::parse(query).map_err(QueryError::from)?;
    let mut c = Compiler {
        map,
        now,
        warnings: parsed.warnings,
        constraints: flags.constraints.clone(),
    };
    let top = match &parsed.ast {
        Some(ast) => match c.node(ast)? {
            Some(part) => Some(part),
            None => return Err(QueryError::NothingToSearch(c.warnings).into()),
        },
        // Nothing but ignored operators and parentheses; an empty query
        // (only spaces) is every message.
        None if !c.warnings.is_empty() => {
            return Err(QueryError::NothingToSearch(c.warnings).into())
        }
        None => None,
    };
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for f in &flags.constraints {
        let (q, _) = c.map.constraint(f)?;
        clauses.push((Occur::Must, unscored(q)));
    }
    // Whether a required part matches messages alone (words and phrases:
    // session documents have no text), so that excluding the session
    // documents is a clause the query can do without.
    let mut messages = false;
    match top {
        Some(Part::Pos(q, m)) => {
            clauses.push((Occur::Must, q));
            messages = m;
        }
        Some(Part::Neg(q, _)) => clauses.push((Occur::MustNot, q)),
        None => {}
    }
    if !clauses.iter().any(|(o, _)| *o == Occur::Must) {
        clauses.push((Occur::Must, unscored(c.map.everything())));
    }
    let inner: Box<dyn Query> = if clauses.len() == 1 && clauses[0].0 == Occur::Must {
        clauses.remove(0).1
    } else {
        Box::new(BooleanQuery::new(clauses))
    };
    Ok(Compiled {
        query: if messages && c.map.scope == Scope::Messages {
            inner
        } else {
            c.map.messages_only(inner)
        },
        warnings: c.warnings,
        constraints: c.constraints,
    })
}

/// A compiled subtree: the documents it matches, or (`Neg`) the documents
/// it excludes, so that `a -b` is "a, not b" without a scan of everything,
/// and only a query of negations alone pays for "everything except".
///
/// With each, whether the query matches message documents alone (it
/// searches the text), which its parent combines.
enum Part {
    Pos(Box<dyn Query>, bool),
    Neg(Box<dyn Query>, bool),
}

struct Compiler<'m, 'a> {
    map: &'m mut FieldMap<'a>,
    now: &'m Now,
    warnings: Vec<Warning>,
    /// The filters compiled so far.
    constraints: Vec<Constraint>,
}

impl Compiler<'_, '_> {
    fn warn(&mut self, position: usize, message: String) {
        self.warnings.push(Warning { position, message });
    }

    /// `None`: the subtree was ignored entirely (its warnings say why).
    fn node(&mut self, ast: &Ast) -> Result<Option<Part>, SearchError> {
        Ok(match ast {
            Ast::Leaf { leaf, at } => {
                let text = matches!(leaf, Leaf::Word(_) | Leaf::Prefix(_) | Leaf::Phrase(_));
                self.leaf(leaf, *at)?.map(|q| Part::Pos(q, text))
            }
            Ast::Not(inner) => self.node(inner)?.map(|p| match p {
                Part::Pos(q, m) => Part::Neg(q, m),
                Part::Neg(q, m) => Part::Pos(q, m),
            }),
            Ast::And(children) => {
                let mut clauses = Vec::new();
                // Messages alone when any required part is.
                let mut messages = false;
                let mut all = true;
                for child in children {
                    match self.node(child)? {
                        Some(Part::Pos(q, m)) => {
                            clauses.push((Occur::Must, q));
                            messages |= m;
                            all &= m;
                        }
                        Some(Part::Neg(q, m)) => {
                            clauses.push((Occur::MustNot, q));
                            all &= m;
                        }
                        None => {}
                    }
                }
                let positives = clauses.iter().filter(|(o, _)| *o == Occur::Must).count();
                match (clauses.len(), positives) {
                    (0, _) => None,
                    (1, 1) => clauses.pop().map(|(_, q)| Part::Pos(q, messages)),
                    (1, 0) => clauses.pop().map(|(_, q)| Part::Neg(q, all)),
                    // Only exclusions: NOT (a OR b), so that a parent can
                    // still subtract it without a scan of everything.
                    (_, 0) => Some(Part::Neg(
                        any(clauses.into_iter().map(|(_, q)| q).collect()),
                        all,
                    )),
                    _ => Some(Part::Pos(Box::new(BooleanQuery::new(clauses)), messages)),
                }
            }
            Ast::Or(children) => {
                let mut alternatives = Vec::new();
                // Messages alone when every alternative is.
                let mut messages = true;
                for child in children {
                    match self.node(child)? {
                        Some(Part::Pos(q, m)) => {
                            alternatives.push(q);
                            messages &= m;
                        }
                        Some(Part::Neg(q, _)) => {
                            alternatives.push(Box::new(BooleanQuery::new(vec![
                                (Occur::Must, unscored(self.map.everything())),
                                (Occur::MustNot, q),
                            ])));
                            messages = false;
                        }
                        None => {}
                    }
                }
                match alternatives.len() {
                    0 => None,
                    _ => Some(Part::Pos(any(alternatives), messages)),
                }
            }
        })
    }

    fn leaf(&mut self, leaf: &Leaf, at: usize) -> Result<Option<Box<dyn Query>>, SearchError> {
        Ok(match leaf {
            Leaf::All => Some(unscored(self.map.everything())),
            Leaf::Filter { key, value } => {
                let c = Constraint::parse(*key, value, self.now).map_err(QueryError::from)?;
                let (q, note) = self.map.constraint(&c)?;
                if let Some(message) = note {
                    self.warn(at, message);
                }
                self.constraints.push(c);
                Some(unscored(q))
            }
            Leaf::Word(word) => {
                if self.map.tokens(word).is_empty() {
                    self.warn(at, nothing_kept(word));
                    None
                } else {
                    Some(self.map.on_text(|f, m| text_query(word, f, m)))
                }
            }
            Leaf::Prefix(stem) => {
                if self.map.tokens(stem).is_empty() {
                    self.warn(at, nothing_kept(&format!("{stem}*")));
                    None
                } else {
                    Some(self.map.on_text(|f, m| prefix_query(stem, f, m)))
                }
            }
            Leaf::Phrase(text) => {
                if self.map.tokens(text).is_empty() {
                    self.warn(
                        at,
                        format!("the phrase \"{text}\" has nothing to search for: ignored"),
                    );
                    return Ok(None);
                }
                // Each word of the phrase the analyzer drops is said, at
                // its position (after the opening quote).
                let mut prev_space = true;
                for (n, (i, c)) in text.char_indices().enumerate() {
                    if prev_space && !c.is_whitespace() {
                        let word: String = text[i..]
                            .chars()
                            .take_while(|c| !c.is_whitespace())
                            .collect();
                        if self.map.tokens(&word).is_empty() {
                            let message = format!("in a phrase: {}", nothing_kept(&word));
                            self.warn(at + 1 + n, message);
                        }
                    }
                    prev_space = c.is_whitespace();
                }
                Some(self.map.on_text(|f, m| text_query(text, f, m)))
            }
        })
    }
}

fn nothing_kept(word: &str) -> String {
    format!(
        "'{word}' has nothing the index keeps (letters and digits, words up to 100 bytes): ignored"
    )
}

/// A filter or `*` adds nothing to the score (a [`FilterTerm`] already
/// scores 0, and stays itself so that tantivy can prune around it).
fn unscored(q: Box<dyn Query>) -> Box<dyn Query> {
    if q.is::<FilterTerm>() {
        return q;
    }
    Box::new(ConstScoreQuery::new(q, 0.0))
}

/// Any of `qs` (nothing when empty).
fn any(mut qs: Vec<Box<dyn Query>>) -> Box<dyn Query> {
    match qs.len() {
        0 => Box::new(EmptyQuery),
        1 => qs.remove(0),
        _ => Box::new(BooleanQuery::new(
            qs.into_iter().map(|q| (Occur::Should, q)).collect(),
        )),
    }
}

/// A query token: its position, where it ends in the query text, and
/// its text.
struct QTok {
    position: usize,
    to: usize,
    text: String,
}

/// Words and phrases: one token is a term; several (a phrase, or one
/// compound such as `serde_json::from_str`, which the tokenizer gives as
/// its parts at consecutive positions) are a phrase of their tokens at
/// their relative positions, which is exactly how the indexed text reads:
/// a compound is found whole, inside a longer one, or written with other
/// joiners.
///
/// The other ways the text may be typed ([`super::expand`]: a hump-split
/// word whole, a word cut into the terms it is made of) are OR'd with it,
/// each scoring [`OTHER_FORMS_BOOST`] of what one word of it would, so
/// that the exact form ranks first.
fn text_query(text: &str, field: tantivy::schema::Field, map: &mut FieldMap<'_>) -> Box<dyn Query> {
    let toks = map.tokens(text);
    let exact = terms_query(phrase_terms(&toks, field, map));
    let typed = Typed::of(
        &toks
            .iter()
            .map(|t| (t.position, t.to, t.text.clone()))
            .collect::<Vec<_>>(),
    );
    let others = alternatives(&typed, map.dictionary(field));
    if others.is_empty() {
        return exact;
    }
    let mut clauses = vec![(Occur::Should, exact)];
    for alt in others {
        // A phrase scores about the sum of its terms' weights: divided by
        // their number, it weighs as one word does.
        let boost = OTHER_FORMS_BOOST / alt.len() as f32;
        let terms = alt
            .into_iter()
            .map(|(at, t)| (at, map.text_term(field, &t)))
            .collect();
        let q: Box<dyn Query> = Box::new(BoostQuery::new(terms_query(terms), boost));
        clauses.push((Occur::Should, q));
    }
    Box::new(BooleanQuery::new(clauses))
}

/// What a match through another form of the words scores, relative to
/// a match of the exact form (per term of the other form).
pub const OTHER_FORMS_BOOST: f32 = 0.5;

/// One term, or the phrase of several at their relative positions.
fn terms_query(mut parts: Vec<(usize, Term)>) -> Box<dyn Query> {
    match parts.len() {
        0 => Box::new(EmptyQuery),
        1 => Box::new(TermQuery::new(
            parts.remove(0).1,
            IndexRecordOption::WithFreqs,
        )),
        _ => Box::new(PhraseQuery::new_with_offset(parts)),
    }
}

/// The first token at each position, at its position relative to the
/// first: the parts of words split at humps, not their whole form (which
/// shares its first part's position), since a phrase may start or end
/// inside a word (`sessionEntries` in `parseSessionEntries`).
fn phrase_terms(
    toks: &[QTok],
    field: tantivy::schema::Field,
    map: &FieldMap<'_>,
) -> Vec<(usize, Term)> {
    let base = toks.first().map_or(0, |t| t.position);
    let mut out: Vec<(usize, Term)> = Vec::with_capacity(toks.len());
    for t in toks {
        let at = t.position - base;
        if out.last().is_some_and(|(p, _)| *p == at) {
            continue;
        }
        out.push((at, map.text_term(field, &t.text)));
    }
    out
}

/// How many terms the prefix of a phrase (`serde_js*`) may stand for.
const PREFIX_EXPANSIONS: u32 = 200;

fn prefix_query(
    stem: &str,
    field: tantivy::schema::Field,
    map: &mut FieldMap<'_>,
) -> Box<dyn Query> {
    let toks = map.tokens(stem);
    match toks.len() {
        0 => Box::new(EmptyQuery),
        // One word: every term that begins with it.
        1 => term_prefix_range(map.text_term(field, &toks[0].text)),
        // Several parts (`serde_js*`, `parseSess*`): the parts in a row,
        // the last one as a prefix (the index holds a compound as its
        // parts).
        _ => {
            let mut q = PhrasePrefixQuery::new_with_offset(phrase_terms(&toks, field, map));
            q.set_max_expansions(PREFIX_EXPANSIONS);
            Box::new(q)
        }
    }
}

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

/// What a `family:ID` filter keeps: the messages (and session records)
/// of every session whose id starts with `prefix`, and of all their
/// relatives; with a note when no session has such an id.
fn of_family(
    reader: &Reader,
    searcher: &Searcher,
    prefix: &str,
) -> Result<(Box<dyn tantivy::query::Query>, Option<String>), IndexError> {
    let f = &reader.pi.fields;
    let sessions = tantivy::query::BooleanQuery::new(vec![
        (
            tantivy::query::Occur::Must,
            term_prefix_range(Term::from_field_text(f.session_id, prefix)),
        ),
        (
            tantivy::query::Occur::Must,
            crate::index::term_query(f.doc_type, crate::index::schema::SESSION_DOC),
        ),
    ]);
    let err = |e| tantivy_err(&reader.pi.dir, e);
    let found = searcher
        .search(&sessions, &tantivy::collector::DocSetCollector)
        .map_err(err)?;
    let mut keys = Vec::new();
    for a in found {
        let col = searcher
            .segment_reader(a.segment_ord)
            .fast_fields()
            .u64("sess")
            .map_err(err)?;
        keys.extend(col.first(a.doc_id));
    }
    let note = keys.is_empty().then(|| {
        format!("no indexed session id starts with {prefix:?}: family:{prefix} matches nothing")
    });
    if !keys.is_empty() {
        let families = reader.families(searcher)?;
        let mut all = Vec::new();
        for k in keys {
            all.extend(families.relatives(k));
        }
        keys = all;
    }
    Ok((
        Box::new(crate::search::column_set::ColumnSetQuery::new("sess", keys)),
        note,
    ))
}
