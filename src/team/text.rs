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
//!
//! # Pairs of common words
//!
//! A phrase is found through PostgreSQL's GIN index by its words, then
//! every row holding all of them is read again for their positions (the
//! index keeps none): `"error handling"` read 4,449 rows for its 699
//! matches. So every `tsvector` (a row's and each window's) also holds,
//! without positions, the *pair lexeme* (`'error handling'`: the two
//! tokens with a space between, which no token holds) of every two tokens
//! at adjacent positions that are both among the team's [`PairWords`],
//! the commonest words of its messages (`pi_pair_words`, see
//! [`super::schema`]); a phrase of such words asks for its pairs too
//! ([`form_query_paired`]), and the GIN index then gives about its
//! matches alone. Only common words make a phrase's candidates many, and
//! only their pairs are kept: 128 words add a fraction of what every
//! adjacent pair would add to the lexemes
//! ([docs/performance.md](../../docs/performance.md#the-team-database)).
//! Exact either way: a message that holds the phrase holds its pairs.

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
    /// The number of positions the row's `tsvector` keeps: its length
    /// without its pair lexemes, which `ts_rank_cd`'s normalization by
    /// length would count (one each), and the score divides by instead
    /// ([`super::query`]), so that pairs change no score.
    pub len: usize,
    /// The windows' `tsvector` literals, when windowed, each with its
    /// length.
    pub windows: Vec<(String, usize)>,
    /// Whether the message is windowed.
    pub windowed: bool,
}

/// The words whose adjacent pairs a `tsvector` also holds (see the
/// [module documentation](self)), sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairWords(Vec<String>);

impl PairWords {
    /// No words.
    pub const fn empty() -> PairWords {
        PairWords(Vec::new())
    }

    /// The list of `words` (any order, repeats dropped).
    pub fn new(mut words: Vec<String>) -> PairWords {
        words.sort_unstable();
        words.dedup();
        PairWords(words)
    }

    /// Whether `word` is listed.
    pub fn contains(&self, word: &str) -> bool {
        self.0.binary_search_by(|w| w.as_str().cmp(word)).is_ok()
    }

    /// Whether no word is listed (no pairs are made or asked for).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The words, sorted.
    pub fn words(&self) -> &[String] {
        &self.0
    }
}

/// The lexeme of the pair `a` `b` (adjacent, in that order): the two
/// tokens with a space between, which no token holds.
pub fn pair_lexeme(a: &str, b: &str) -> String {
    let mut out = String::with_capacity(a.len() + 1 + b.len());
    out.push_str(a);
    out.push(' ');
    out.push_str(b);
    out
}

/// Whether `lexeme` is a pair lexeme ([`pair_lexeme`]), not a token.
pub fn is_pair(lexeme: &str) -> bool {
    lexeme.contains(' ')
}

/// The pair lexemes of [`sorted`] tokens: for every two tokens at
/// adjacent positions both in `list` (every token at a position, wholes
/// of compounds too), sorted, each once.
fn pairs_of_sorted(sorted: &[(&str, usize)], list: &PairWords) -> Vec<String> {
    if list.is_empty() {
        return Vec::new();
    }
    // The listed tokens, found by walking both sorted lists at once.
    let words = list.words();
    let mut listed: Vec<(usize, &str)> = Vec::new();
    let mut j = 0;
    for &(t, p) in sorted {
        while j < words.len() && words[j].as_str() < t {
            j += 1;
        }
        if words.get(j).is_some_and(|w| w == t) {
            listed.push((p, t));
        }
    }
    listed.sort_unstable();
    listed.dedup();
    let mut out = Vec::new();
    let mut next = 0;
    for &(p, a) in &listed {
        while next < listed.len() && listed[next].0 <= p {
            next += 1;
        }
        out.extend(
            listed[next..]
                .iter()
                .take_while(|(q, _)| *q == p + 1)
                .map(|(_, b)| pair_lexeme(a, b)),
        );
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// `literal` with `pairs` added, without positions.
fn with_pair_lexemes(mut literal: String, pairs: &[String]) -> String {
    for pair in pairs {
        if !literal.is_empty() {
            literal.push(' ');
        }
        quote(&mut literal, pair);
    }
    literal
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
/// `-from` and counted from 1, and the number of positions it keeps (the
/// length `ts_rank_cd` normalizes by, see [`Indexed::len`]).
fn literal_of(sorted: &[(&str, usize)], from: usize) -> (String, usize) {
    let mut out = String::new();
    let mut len = 0;
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
            len += 1;
            out.push(sep);
            sep = ',';
            let _ = write!(out, "{p}");
        }
    }
    (out, len)
}

/// The `tsvector` literal of `tokens`, positions shifted by `-from` and
/// counted from 1, with their pair lexemes of `list`; and its length
/// without them.
fn literal<'a>(
    tokens: impl Iterator<Item = &'a (usize, String)>,
    from: usize,
    list: &PairWords,
) -> (String, usize) {
    paired_literal(&sorted(tokens), from, list)
}

/// [`literal_of`] with the pair lexemes of `list` added, and its length
/// without them.
fn paired_literal(sorted: &[(&str, usize)], from: usize, list: &PairWords) -> (String, usize) {
    let (lit, len) = literal_of(sorted, from);
    (with_pair_lexemes(lit, &pairs_of_sorted(sorted, list)), len)
}

/// Index a message: its text and, when the model was sent another text
/// instead, that replacement.
pub fn index(
    analyzer: &mut TextAnalyzer,
    text: &str,
    replacement: Option<&str>,
    list: &PairWords,
) -> Indexed {
    let toks = tokens(analyzer, text);
    let replaced = replacement.map(|r| tokens(analyzer, r));
    index_tokens(&toks, replaced.as_deref(), &mut |_| {}, list)
}

/// [`index`] of a text's tokens, and of its replacement's; `term` is
/// called once for each distinct lexeme of either (what the message
/// adds to `pi_terms`; pair lexemes are not terms).
pub fn index_tokens(
    toks: &[(usize, String)],
    replacement: Option<&[(usize, String)]>,
    term: &mut dyn FnMut(&str),
    list: &PairWords,
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
        let (tsv, len) = paired_literal(&pairs, 0, list);
        if tsv.len() <= MAX_LITERAL {
            return Indexed {
                tsv,
                len,
                windows: Vec::new(),
                windowed: false,
            };
        }
    }
    let mut windows = windows(toks, list);
    if let Some(r) = replacement {
        windows.extend(self::windows(r, list));
    }
    Indexed {
        tsv: String::new(),
        len: 0,
        windows,
        windowed: true,
    }
}

/// The windows of `toks`: [`WINDOW`] positions each, starting every
/// [`WINDOW`]/2 positions, each with its pair lexemes of `list`.
fn windows(toks: &[(usize, String)], list: &PairWords) -> Vec<(String, usize)> {
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
        let (lit, len) = literal(inside, start, list);
        if !lit.is_empty() {
            out.push((lit, len));
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
    let indexed = index_tokens(&toks, None, &mut |_| {}, &PairWords::default());
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
/// With a non-empty `list` (a query on messages whose rows all hold their
/// pairs), the phrase also asks for its pair lexemes as it matches
/// ([`form_query_paired`]).
pub fn phrase_query(
    analyzer: &mut TextAnalyzer,
    text: &str,
    prefix: bool,
    list: &PairWords,
) -> Option<Tsquery> {
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
    Some(form_query_paired(&terms, prefix, list))
}

/// A word's or phrase's `tsquery` as it matches and as it ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tsquery {
    /// With the pair lexemes its terms imply ([`form_query_paired`]).
    pub matched: String,
    /// Without them ([`form_query`]): `ts_rank_cd` scores the words'
    /// covers, as before pairs.
    pub ranked: String,
}

/// [`form_query`], and as it matches, with each pair lexeme its terms
/// imply: two terms in a row (one position apart) both in `list`, the
/// last one not a prefix. Every message the phrase matches holds those
/// pairs, so asking for them changes no match; it lets the GIN index
/// leave out the rows that hold the words apart. A phrase of just two
/// such words is its pair alone: a message holds the pair exactly when
/// the two words stand in a row in it (pairs are made of every two
/// listed tokens one position apart, in a row's `tsvector` and in each
/// window), and a pair, unlike a phrase, is matched by the GIN index
/// without reading the row again.
pub fn form_query_paired(terms: &[(usize, &str)], prefix: bool, list: &PairWords) -> Tsquery {
    let ranked = form_query(terms, prefix);
    let complete = if prefix {
        terms.len().saturating_sub(1)
    } else {
        terms.len()
    };
    let mut pairs: Vec<String> = terms[..complete]
        .windows(2)
        .filter(|w| w[1].0 == w[0].0 + 1 && list.contains(w[0].1) && list.contains(w[1].1))
        .map(|w| pair_lexeme(w[0].1, w[1].1))
        .collect();
    if pairs.is_empty() {
        return Tsquery {
            matched: ranked.clone(),
            ranked,
        };
    }
    if !prefix && terms.len() == 2 {
        // Two words in a row (their pair is the only one): a message holds
        // the pair exactly when it holds the phrase, and the pair alone
        // needs no row read again for positions
        // ([docs/performance.md](../../docs/performance.md#the-team-database)).
        let mut matched = String::new();
        quote(&mut matched, &pairs[0]);
        return Tsquery { matched, ranked };
    }
    pairs.sort_unstable();
    pairs.dedup();
    let mut matched = format!("({ranked})");
    for p in &pairs {
        matched.push_str(" & ");
        quote(&mut matched, p);
    }
    Tsquery { matched, ranked }
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
        let i = index(
            &mut analyzer(),
            "parseSession failed, parse again",
            None,
            &PairWords::default(),
        );
        assert_eq!(
            i.tsv,
            "'again':5 'failed':3 'parse':1,4 'parsesession':1 'session':2"
        );
        assert!(!i.windowed);
        assert_eq!(
            phrase_query(
                &mut analyzer(),
                "serde_json::from_str",
                false,
                &PairWords::default()
            )
            .map(|q| q.matched)
            .as_deref(),
            Some("'serde' <-> 'json' <-> 'from' <-> 'str'")
        );
        assert_eq!(
            phrase_query(&mut analyzer(), "parseSess", true, &PairWords::default())
                .map(|q| q.matched)
                .as_deref(),
            Some("'parse' <-> 'sess':*")
        );
        assert_eq!(
            phrase_query(&mut analyzer(), "--", false, &PairWords::default()),
            None
        );
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

    fn listed(words: &[&str]) -> PairWords {
        PairWords::new(words.iter().map(|w| w.to_string()).collect())
    }

    #[test]
    fn a_tsvector_holds_the_pairs_of_listed_words_at_adjacent_positions() {
        let list = listed(&["the", "file", "parse", "session", "error"]);
        let mut terms = Vec::new();
        let toks = tokens(
            &mut analyzer(),
            "The file parseSession failed; the error the file",
        );
        let i = index_tokens(&toks, None, &mut |t| terms.push(t.to_owned()), &list);
        // Pairs of listed tokens one position apart, each once, without
        // positions; not across an unlisted word (`failed`), and not of
        // a compound's whole (`parsesession`, unlisted).
        assert_eq!(
            i.tsv,
            "'error':7 'failed':5 'file':2,9 'parse':3 'parsesession':3 'session':4 'the':1,6,8 \
             'error the' 'file parse' 'parse session' 'the error' 'the file'"
        );
        // Pair lexemes are not terms (`pi_terms` counts none).
        assert!(terms.iter().all(|t| !is_pair(t)), "{terms:?}");
        assert_eq!(terms.len(), 7);
        // Without a list, no pairs.
        let plain = index_tokens(&toks, None, &mut |_| {}, &PairWords::default());
        assert_eq!(
            plain.tsv,
            "'error':7 'failed':5 'file':2,9 'parse':3 'parsesession':3 'session':4 'the':1,6,8"
        );
    }

    #[test]
    fn a_phrase_of_listed_words_asks_for_its_pairs() {
        let list = listed(&["the", "file", "parse", "error"]);
        let both =
            |text: &str, prefix: bool| phrase_query(&mut analyzer(), text, prefix, &list).unwrap();
        let q = |text: &str, prefix: bool| both(text, prefix).matched;
        assert_eq!(
            q("the file parse", false),
            "('the' <-> 'file' <-> 'parse') & 'file parse' & 'the file'"
        );
        // It ranks as the phrase alone.
        assert_eq!(
            both("the file parse", false).ranked,
            "'the' <-> 'file' <-> 'parse'"
        );
        // Only listed neighbours; a prefix's last term is no pair.
        assert_eq!(q("the big file", false), "'the' <-> 'big' <-> 'file'");
        assert_eq!(q("the fil", true), "'the' <-> 'fil':*");
        assert_eq!(
            q("error the fi", true),
            "('error' <-> 'the' <-> 'fi':*) & 'error the'"
        );
        // A gap the tokenizer left (a word over 100 bytes) is no pair.
        let long = "x".repeat(101);
        assert_eq!(q(&format!("the {long} file"), false), "'the' <2> 'file'");
        // One word: nothing to pair.
        assert_eq!(q("error", false), "'error'");
        // Two words in a row: the pair is the phrase.
        assert_eq!(q("the file", false), "'the file'");
        assert_eq!(both("the file", false).ranked, "'the' <-> 'file'");
        assert_eq!(q("the fil", false), "'the' <-> 'fil'");
    }

    #[test]
    fn a_window_holds_the_pairs_inside_it() {
        let words: Vec<String> = (0..20_000).map(|i| format!("w{i}")).collect();
        let list = listed(&["w127", "w128", "w19998", "w19999"]);
        let i = index(&mut analyzer(), &words.join(" "), None, &list);
        assert!(i.windowed);
        // w127 and w128 (positions 127 and 128) are both in the first
        // window only; the second starts at 128.
        assert!(i.windows[0].0.contains("'w127 w128'"), "{}", i.windows[0].0);
        assert!(!i.windows[1].0.contains("'w127 w128'"));
        assert!(&i.windows.last().unwrap().0.ends_with("'w19998 w19999'"));
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
        let i = index(
            &mut analyzer(),
            &words.join(" "),
            None,
            &PairWords::default(),
        );
        assert!(i.windowed);
        assert!(i.tsv.is_empty());
        // Windows start every 128 positions; the last holds the last word
        // at its position relative to the window's start.
        assert_eq!(i.windows.len(), 20_000 / 128);
        let last = &i.windows.last().unwrap().0;
        assert!(last.contains("'w19999':"), "{last}");
        assert!(i.windows[0].0.starts_with("'w0':1 'w1':2 "));
        assert!(i.windows[1].0.contains("'w128':1 "));
    }

    #[test]
    fn a_word_repeated_past_256_times_is_windowed() {
        let text = "ok ".repeat(300);
        assert!(index(&mut analyzer(), &text, None, &PairWords::default()).windowed);
        assert!(
            !index(
                &mut analyzer(),
                &"ok ".repeat(200),
                None,
                &PairWords::default()
            )
            .windowed
        );
    }
}
