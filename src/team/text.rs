//! Text as PostgreSQL's full-text search sees it, made by pi-index's own
//! tokenizer ([`crate::index::tokenizer`]) rather than PostgreSQL's
//! English parser: the `tsvector` of a message is the literal of its
//! tokens with their positions (`'parse':1 'session':2 'parsesession':1`),
//! and a query's terms become a `tsquery` of the same tokens (`'parse' <->
//! 'session'`), so that the server finds what the local index finds:
//! identifiers by their parts, words folded to ASCII, CJK per character.
//!
//! # PostgreSQL's limits, met on purpose
//!
//! A `tsvector` keeps positions only up to 16,383 (later ones all become
//! 16,383), at most 256 positions per lexeme, and at most 1 MB in all,
//! while one message may index 1 MiB of text (~200,000 tokens). A message
//! within those limits is exact in its row's `tsv`. Any other (more than
//! [`MAX_POSITION`] positions, a lexeme more than [`MAX_POSITIONS`] times,
//! or a literal near the size limit), and every message with a
//! `context_edit` replacement (searched with its text, as locally), is
//! *windowed*: its row's `tsv` is empty, and its tokens go to
//! `pi_windows` in windows of [`WINDOW`] positions that overlap by half,
//! so every phrase of up to [`WINDOW`]/2 tokens lies whole in some window
//! and each lexeme has at most [`WINDOW`] positions in one. A query leaf
//! on a windowed message is "some window matches" ([`super::query`]).

use std::fmt::Write;

use tantivy::tokenizer::TextAnalyzer;

/// The last position a `tsvector` keeps.
pub const MAX_POSITION: usize = 16_383;

/// The most positions a `tsvector` keeps for one lexeme.
pub const MAX_POSITIONS: usize = 256;

/// Bytes of a `tsvector` literal past which a message is windowed (the
/// type's limit is 1 MB of its binary form, which is smaller than the
/// literal: this keeps a margin either way).
pub const MAX_LITERAL: usize = 900_000;

/// Positions in one window of a windowed message (the windows overlap by
/// half).
pub const WINDOW: usize = 256;

/// A message's text as the database indexes it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Indexed {
    /// The row's `tsvector` literal (empty when windowed).
    pub tsv: String,
    /// The windows' `tsvector` literals, when windowed.
    pub windows: Vec<String>,
    /// Whether the message is windowed.
    pub windowed: bool,
}

/// Text as the database keeps it: NUL, which PostgreSQL's text cannot
/// hold, as U+FFFD (the same in rows, in parameters and in filters).
pub fn pg_text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        std::borrow::Cow::Owned(s.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The tokens of `text`: (0-based position, token).
pub fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(t) = stream.next() {
        out.push((t.position, t.text.clone()));
    }
    out
}

/// A lexeme quoted for a `tsvector` or `tsquery` literal.
pub fn quote(out: &mut String, lexeme: &str) {
    out.push('\'');
    for c in lexeme.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// `tokens` as (lexeme, position) pairs sorted: each lexeme's positions
/// together and in order (one sort, where a map of lexemes made a node
/// and a list for each).
fn sorted<'a>(tokens: impl Iterator<Item = &'a (usize, String)>) -> Vec<(&'a str, usize)> {
    let mut out: Vec<(&str, usize)> = tokens.map(|(p, t)| (t.as_str(), *p)).collect();
    out.sort_unstable();
    out
}

/// The lexemes of [`sorted`] pairs, each with its positions.
fn groups<'a, 'b>(
    sorted: &'b [(&'a str, usize)],
) -> impl Iterator<Item = &'b [(&'a str, usize)]> + 'b {
    sorted.chunk_by(|a, b| a.0 == b.0)
}

/// The `tsvector` literal of [`sorted`] pairs, positions shifted by
/// `-from` and counted from 1.
fn literal_of(sorted: &[(&str, usize)], from: usize) -> String {
    let mut out = String::new();
    for group in groups(sorted) {
        if !out.is_empty() {
            out.push(' ');
        }
        quote(&mut out, group[0].0);
        let mut sep = ':';
        let mut last = 0;
        for &(_, p) in group {
            let p = (p - from + 1).min(MAX_POSITION);
            if p == last {
                continue;
            }
            last = p;
            out.push(sep);
            sep = ',';
            let _ = write!(out, "{p}");
        }
    }
    out
}

/// The `tsvector` literal of `tokens`, positions shifted by `-from` and
/// counted from 1.
fn literal<'a>(tokens: impl Iterator<Item = &'a (usize, String)>, from: usize) -> String {
    literal_of(&sorted(tokens), from)
}

/// Index a message: its text and, when the model was sent another text
/// instead, that replacement.
pub fn index(analyzer: &mut TextAnalyzer, text: &str, replacement: Option<&str>) -> Indexed {
    let toks = tokens(analyzer, text);
    let replaced = replacement.map(|r| tokens(analyzer, r));
    index_tokens(&toks, replaced.as_deref(), &mut |_| {})
}

/// [`index`] of a text's tokens, and of its replacement's; `term` is
/// called once for each distinct lexeme of either (what the message
/// adds to `pi_terms`).
pub fn index_tokens(
    toks: &[(usize, String)],
    replacement: Option<&[(usize, String)]>,
    term: &mut dyn FnMut(&str),
) -> Indexed {
    let pairs = sorted(toks.iter());
    match replacement {
        None => groups(&pairs).for_each(|g| term(g[0].0)),
        Some(r) => {
            let mut all: Vec<&str> = toks.iter().chain(r).map(|(_, t)| t.as_str()).collect();
            all.sort_unstable();
            all.dedup();
            all.into_iter().for_each(&mut *term);
        }
    }
    let fits = replacement.is_none()
        && toks.last().is_none_or(|(p, _)| *p < MAX_POSITION)
        && groups(&pairs).all(|g| g.len() <= MAX_POSITIONS);
    if fits {
        let tsv = literal_of(&pairs, 0);
        if tsv.len() <= MAX_LITERAL {
            return Indexed {
                tsv,
                windows: Vec::new(),
                windowed: false,
            };
        }
    }
    let mut windows = windows(toks);
    if let Some(r) = replacement {
        windows.extend(self::windows(r));
    }
    Indexed {
        tsv: String::new(),
        windows,
        windowed: true,
    }
}

/// The windows of `toks`: [`WINDOW`] positions each, starting every
/// [`WINDOW`]/2 positions.
fn windows(toks: &[(usize, String)]) -> Vec<String> {
    let step = WINDOW / 2;
    let Some(last) = toks.last().map(|(p, _)| *p) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    loop {
        while i < toks.len() && toks[i].0 < start {
            i += 1;
        }
        let end = start + WINDOW;
        let inside = toks[i..].iter().take_while(|(p, _)| *p < end);
        let lit = literal(inside, start);
        if !lit.is_empty() {
            out.push(lit);
        }
        if end > last {
            break;
        }
        start += step;
    }
    out
}

/// The `tsvector` of a session's name or title: its tokens with their
/// positions, as a message's (a `name:` filter asks for the name's words
/// in any order; `sessions QUERY` ranks names and titles by the query's
/// words and phrases). A name too long for positions (more than a
/// `tsvector` keeps) has its words without them.
pub fn name_tsv(analyzer: &mut TextAnalyzer, name: Option<&str>) -> String {
    let Some(name) = name else {
        return String::new();
    };
    let toks = tokens(analyzer, name);
    let indexed = index_tokens(&toks, None, &mut |_| {});
    if !indexed.windowed {
        return indexed.tsv;
    }
    let mut lexemes: Vec<String> = toks.into_iter().map(|(_, t)| t).collect();
    lexemes.sort();
    lexemes.dedup();
    let mut out = String::new();
    for l in lexemes {
        if !out.is_empty() {
            out.push(' ');
        }
        quote(&mut out, &l);
    }
    out
}

/// The `tsquery` of a word or phrase: one token is the term; several (a
/// phrase, or a compound the tokenizer splits into parts) are the first
/// token at each position, in a row at their relative distances, the way
/// the local index's phrase queries read them. With `prefix`, the last
/// term matches any lexeme it begins. `None` when nothing is kept.
pub fn phrase_query(analyzer: &mut TextAnalyzer, text: &str, prefix: bool) -> Option<String> {
    let toks = tokens(analyzer, text);
    let base = toks.first()?.0;
    let mut terms: Vec<(usize, &str)> = Vec::with_capacity(toks.len());
    for (p, t) in &toks {
        let at = p - base;
        if terms.last().is_some_and(|(q, _)| *q == at) {
            continue;
        }
        terms.push((at, t));
    }
    Some(form_query(&terms, prefix))
}

/// The `tsquery` of terms at their relative positions (in order): one
/// term, or the phrase of them at those distances; with `prefix`, the
/// last term matches any lexeme it begins.
pub fn form_query(terms: &[(usize, &str)], prefix: bool) -> String {
    let mut out = String::new();
    let mut prev = 0;
    let last = terms.len().saturating_sub(1);
    for (i, (at, t)) in terms.iter().enumerate() {
        if i > 0 {
            match at - prev {
                1 => out.push_str(" <-> "),
                d => {
                    let _ = write!(out, " <{d}> ");
                }
            }
        }
        quote(&mut out, t);
        if prefix && i == last {
            out.push_str(":*");
        }
        prev = *at;
    }
    out
}

/// The `tsquery` of a `name:` value: every token, in any order.
pub fn all_words_query(analyzer: &mut TextAnalyzer, text: &str) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = String::new();
    for (p, t) in tokens(analyzer, text) {
        if !seen.insert(p) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(" & ");
        }
        quote(&mut out, &t);
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyzer() -> TextAnalyzer {
        crate::index::tokenizer::analyzer()
    }

    #[test]
    fn a_tsvector_literal_holds_the_tokenizer_s_tokens_and_positions() {
        let i = index(&mut analyzer(), "parseSession failed, parse again", None);
        assert_eq!(
            i.tsv,
            "'again':5 'failed':3 'parse':1,4 'parsesession':1 'session':2"
        );
        assert!(!i.windowed);
        assert_eq!(
            phrase_query(&mut analyzer(), "serde_json::from_str", false).as_deref(),
            Some("'serde' <-> 'json' <-> 'from' <-> 'str'")
        );
        assert_eq!(
            phrase_query(&mut analyzer(), "parseSess", true).as_deref(),
            Some("'parse' <-> 'sess':*")
        );
        assert_eq!(phrase_query(&mut analyzer(), "--", false), None);
        assert_eq!(
            all_words_query(&mut analyzer(), "Socket test").as_deref(),
            Some("'socket' & 'test'")
        );
        // Names and titles keep positions, for phrases.
        assert_eq!(
            name_tsv(&mut analyzer(), Some("Flaky socket test, socket")),
            "'flaky':1 'socket':2,4 'test':3"
        );
        assert_eq!(name_tsv(&mut analyzer(), None), "");
    }

    #[test]
    fn quotes_and_backslashes_are_quoted() {
        let mut s = String::new();
        quote(&mut s, r"it's\");
        assert_eq!(s, r"'it''s\\'");
    }

    #[test]
    fn a_long_message_is_windowed_so_every_position_is_kept() {
        let words: Vec<String> = (0..20_000).map(|i| format!("w{i}")).collect();
        let i = index(&mut analyzer(), &words.join(" "), None);
        assert!(i.windowed);
        assert!(i.tsv.is_empty());
        // Windows start every 128 positions; the last holds the last word
        // at its position relative to the window's start.
        assert_eq!(i.windows.len(), 20_000 / 128);
        let last = i.windows.last().unwrap();
        assert!(last.contains("'w19999':"), "{last}");
        assert!(i.windows[0].starts_with("'w0':1 'w1':2 "));
        assert!(i.windows[1].contains("'w128':1 "));
    }

    #[test]
    fn a_word_repeated_past_256_times_is_windowed() {
        let text = "ok ".repeat(300);
        assert!(index(&mut analyzer(), &text, None).windowed);
        assert!(!index(&mut analyzer(), &"ok ".repeat(200), None).windowed);
    }
}
