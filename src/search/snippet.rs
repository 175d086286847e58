//! Snippets: where in a hit's text the query's words are, shown in a few
//! words of context, from a bounded window of the text.
//!
//! tantivy's [`SnippetGenerator`] tokenizes the whole text it is given and
//! keeps its best fragment. A message's stored text can be up to
//! [`MAX_DOCUMENT_BYTES`] (1 MiB, a pasted log): tokenized whole, that is
//! about 200,000 tokens for one hit, and twenty times that for a page. [`Snippets`] gives texts up to
//! [`WINDOW`] to tantivy whole, as before; in a longer text it finds the
//! first place where one of the query's terms is written (a byte search,
//! ASCII case ignored, a block at a time: memchr's speed, no tokenizing)
//! and gives tantivy only the [`WINDOW`] around it. A place that turns
//! out not to be the term as a word (`error` inside `errors`) moves the
//! search past that window. A term written only in a form the tokenizer
//! folds (`café` for the term `cafe`) is not found by the byte search:
//! the text is then tokenized a window at a time from its start, up to
//! the first window that holds a term, which is the only case where a
//! snippet costs as much as tantivy's whole-text one. A text where no
//! term is found at all gets an empty snippet, as from tantivy.
//!
//! The fragment is chosen as tantivy's [`SnippetGenerator`] chooses it
//! (fragments of at most the snippet's length cut at tokens, scored by
//! the weights of the terms they hold, the first of the best), by our own
//! loop: tantivy's lower-cases a copy of every token to look it up in a
//! map of strings (a fifth of a served search's time went to those
//! copies and lookups), where the analyzer's tokens are lower-cased
//! already and a query has a few terms, compared in place. A test holds
//! the two to the same fragment and highlights.
//!
//! Over 1 MiB texts the window makes a search with such hits several
//! times faster than tantivy's snippet of the whole text, for the same
//! memory (the stored texts are loaded whole either way;
//! [docs/performance.md](../../docs/performance.md#lines-of-hundreds-of-megabytes)).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

use memchr::memmem::Finder;
use tantivy::query::Query;
use tantivy::schema::Field;
use tantivy::tokenizer::{TextAnalyzer, TokenStream};
use tantivy::{Score, Searcher, Term};

#[cfg(doc)]
use tantivy::snippet::SnippetGenerator;

#[cfg(doc)]
use crate::pi::giant::MAX_DOCUMENT_BYTES;

/// Texts up to this many bytes are given to tantivy whole; a longer one
/// only this many bytes of it around the first place a term is written.
/// 64 KiB is ~12,000 tokens (well under a millisecond) and a few hundred
/// snippets' worth of context around the match, so the fragment tantivy
/// picks from it can still gather the query's other words.
pub const WINDOW: usize = 64 << 10;

/// How much of the window lies before the place found: the fragment may
/// start a little before the word.
const BEFORE: usize = 1 << 10;

/// Bytes at each edge of a window where a token may be cut by the window
/// (tokens over 100 bytes are dropped by the tokenizer; compounds are cut
/// into parts): a window searched in vain is passed up to this margin.
const EDGE: usize = 256;

/// The snippet's default length, in bytes (tantivy's).
const DEFAULT_MAX_CHARS: usize = 150;

/// A hit's snippet: a fragment of its text and the ranges of the query's
/// words in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snippet {
    fragment: String,
    highlighted: Vec<Range<usize>>,
}

impl Snippet {
    /// No fragment: no term was found.
    pub fn empty() -> Snippet {
        Snippet::default()
    }

    /// Whether no term was found.
    pub fn is_empty(&self) -> bool {
        self.highlighted.is_empty()
    }

    /// The fragment of the text.
    pub fn fragment(&self) -> &str {
        &self.fragment
    }

    /// Byte ranges of the fragment that are the query's words.
    pub fn highlighted(&self) -> &[Range<usize>] {
        &self.highlighted
    }
}

/// The query's terms and their weights: compared one by one when few (a
/// query's usual handful), through a map when many (a prefix's
/// expansions).
enum Terms {
    Few(Vec<(String, Score)>),
    Many(HashMap<String, Score>),
}

impl Terms {
    fn new(weights: &BTreeMap<String, Score>) -> Terms {
        if weights.len() <= 16 {
            Terms::Few(weights.iter().map(|(t, w)| (t.clone(), *w)).collect())
        } else {
            Terms::Many(weights.iter().map(|(t, w)| (t.clone(), *w)).collect())
        }
    }

    #[inline]
    fn weight(&self, token: &str) -> Option<Score> {
        match self {
            Terms::Few(terms) => terms
                .iter()
                .find(|(t, _)| t.len() == token.len() && t == token)
                .map(|(_, w)| *w),
            Terms::Many(terms) => terms.get(token).copied(),
        }
    }
}

/// A fragment being gathered: its byte range, score and words.
#[derive(Default)]
struct Candidate {
    start: usize,
    stop: usize,
    score: Score,
    highlighted: Vec<Range<usize>>,
}

impl Candidate {
    fn restart(&mut self, start: usize) {
        self.start = start;
        self.stop = start;
        self.score = 0.0;
        self.highlighted.clear();
    }
}

/// Makes the snippets of one search's hits.
pub struct Snippets {
    terms: Terms,
    /// The analyzer (one token stream at a time).
    tokenizer: RefCell<TextAnalyzer>,
    max_chars: usize,
    /// The query's terms on the field, as the index holds them.
    finders: Vec<Finder<'static>>,
}

impl Snippets {
    /// Snippets of `field` for the hits of `query`: the same terms, with
    /// the same weights, as [`SnippetGenerator::create`] takes.
    pub fn create(
        searcher: &Searcher,
        query: &dyn Query,
        field: Field,
    ) -> tantivy::Result<Snippets> {
        let mut terms: BTreeSet<&Term> = BTreeSet::new();
        query.query_terms(&mut |term, _| {
            if term.field() == field {
                terms.insert(term);
            }
        });
        let mut weights: BTreeMap<String, Score> = BTreeMap::new();
        for term in terms {
            let value = term.value();
            let Some(text) = value.as_str() else {
                continue;
            };
            let doc_freq = searcher.doc_freq(term)?;
            if doc_freq > 0 {
                weights.insert(text.to_owned(), 1.0 / (1.0 + doc_freq as Score));
            }
        }
        let tokenizer = searcher.index().tokenizer_for_field(field)?;
        Ok(Snippets::new(weights, tokenizer))
    }

    /// Snippets for the terms of `weights` (as tokens of `tokenizer`,
    /// lower-cased).
    pub fn new(weights: BTreeMap<String, Score>, tokenizer: TextAnalyzer) -> Self {
        let finders = weights
            .keys()
            .filter(|t| !t.is_empty())
            .map(|t| Finder::new(t.to_ascii_lowercase().as_bytes()).into_owned())
            .collect();
        Snippets {
            terms: Terms::new(&weights),
            tokenizer: RefCell::new(tokenizer),
            max_chars: DEFAULT_MAX_CHARS,
            finders,
        }
    }

    /// The most characters a snippet has (tantivy counts bytes).
    pub fn set_max_num_chars(&mut self, max: usize) {
        self.max_chars = max;
    }

    /// The best fragment of `text`: cut where a token would take the
    /// fragment past the snippet's length, scored by the weights of the
    /// terms in it; of equal scores the first.
    fn best(&self, text: &str) -> Snippet {
        let mut tokenizer = self.tokenizer.borrow_mut();
        let mut stream = tokenizer.token_stream(text);
        let mut now = Candidate::default();
        let mut best = Candidate::default();
        let keep = |now: &mut Candidate, best: &mut Candidate| {
            // Scores are positive: the first fragment with a term beats
            // the empty one, and a tie keeps the earlier.
            if now.score > best.score {
                std::mem::swap(now, best);
            }
        };
        while let Some(token) = stream.next() {
            if token.offset_to - now.start > self.max_chars {
                keep(&mut now, &mut best);
                now.restart(token.offset_from);
            }
            now.stop = token.offset_to;
            // The analyzer's tokens are lower-cased already.
            if let Some(w) = self.terms.weight(&token.text) {
                now.score += w;
                now.highlighted
                    .push(token.offset_from - now.start..token.offset_to - now.start);
            }
        }
        keep(&mut now, &mut best);
        if best.score > 0.0 {
            Snippet {
                fragment: text[best.start..best.stop].to_owned(),
                highlighted: best.highlighted,
            }
        } else {
            Snippet::empty()
        }
    }

    /// The snippet of `text`: tantivy's, of the whole text or of the
    /// window around the first place a term is written (see the module
    /// docs). Its fragment and highlights are what to print.
    pub fn snippet(&self, text: &str) -> Snippet {
        if text.len() <= WINDOW {
            return self.best(text);
        }
        if self.finders.is_empty() {
            // No term on the text (a query of filters alone): no fragment
            // can hold one.
            return Snippet::empty();
        }
        let mut from = 0;
        while let Some(at) = self.first_written(text.as_bytes(), from) {
            let start = floor_char(text, at.saturating_sub(BEFORE));
            let end = ceil_char(text, start + WINDOW);
            let snippet = self.best(&text[start..end]);
            if !snippet.is_empty() {
                return snippet;
            }
            if end == text.len() {
                break;
            }
            from = (at + 1).max(end - EDGE);
        }
        // Every term only in a folded form: window after window.
        let mut start = 0;
        while start < text.len() {
            let end = ceil_char(text, start + WINDOW);
            let snippet = self.best(&text[start..end]);
            if !snippet.is_empty() || end == text.len() {
                return snippet;
            }
            start = floor_char(text, end - EDGE);
        }
        Snippet::empty()
    }

    /// The first offset at or after `from` where a term is written, ASCII
    /// case ignored: the text is lower-cased a block at a time into a
    /// small buffer and searched there.
    fn first_written(&self, text: &[u8], from: usize) -> Option<usize> {
        const BLOCK: usize = 64 << 10;
        let longest = self.finders.iter().map(|f| f.needle().len()).max()?;
        let mut block = Vec::with_capacity(BLOCK + longest);
        let mut start = from;
        while start < text.len() {
            // Blocks overlap by a term's length, so none is missed at an
            // edge.
            let end = (start + BLOCK + longest - 1).min(text.len());
            block.clear();
            block.extend(text[start..end].iter().map(u8::to_ascii_lowercase));
            if let Some(i) = self.finders.iter().filter_map(|f| f.find(&block)).min() {
                return Some(start + i);
            }
            start += BLOCK;
        }
        None
    }
}

/// The start of `text`, at most [`WINDOW`] bytes of it: what a hit's
/// lead (shown when no snippet is) is made from.
pub fn head(text: &str) -> &str {
    &text[..floor_char(text, WINDOW)]
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use tantivy::tokenizer::{BoxTokenStream, Tokenizer};

    use super::*;
    use crate::index::schema::{text_analyzer, Fields};

    /// The text analyzer, counting the bytes it is given.
    #[derive(Clone)]
    struct Counting {
        inner: TextAnalyzer,
        bytes: Arc<AtomicUsize>,
    }

    impl Tokenizer for Counting {
        type TokenStream<'a> = BoxTokenStream<'a>;
        fn token_stream<'a>(&'a mut self, text: &'a str) -> BoxTokenStream<'a> {
            self.bytes.fetch_add(text.len(), Ordering::Relaxed);
            self.inner.token_stream(text)
        }
    }

    fn snippets(terms: &[&str]) -> (Snippets, Arc<AtomicUsize>) {
        let bytes = Arc::new(AtomicUsize::new(0));
        let counting = Counting {
            inner: text_analyzer(),
            bytes: bytes.clone(),
        };
        let weights = terms.iter().map(|t| (t.to_string(), 0.5)).collect();
        let s = Snippets::new(weights, TextAnalyzer::from(counting));
        (s, bytes)
    }

    /// About `len` bytes of words that are not `zq…`, with multi-byte
    /// characters along the way.
    fn filler(len: usize) -> String {
        let words = ["alpha ", "beta ", "caf\u{e9} ", "\u{1F600} ", "errors "];
        let mut s = String::with_capacity(len + 16);
        let mut i = 0;
        while s.len() < len {
            s.push_str(words[i % words.len()]);
            i += 1;
        }
        s
    }

    fn shown(s: &Snippet) -> Vec<&str> {
        s.highlighted()
            .iter()
            .map(|r| &s.fragment()[r.clone()])
            .collect()
    }

    /// tantivy's generator for the same weighted terms.
    fn tantivys(weights: &[(&str, Score)], max: usize) -> tantivy::snippet::SnippetGenerator {
        let weights = weights.iter().map(|(t, w)| (t.to_string(), *w)).collect();
        let mut g = tantivy::snippet::SnippetGenerator::new(
            weights,
            text_analyzer(),
            Fields::get().text,
            150,
        );
        g.set_max_num_chars(max);
        g
    }

    #[test]
    fn a_short_text_is_tantivys_snippet_of_the_whole_text() {
        let (s, _) = snippets(&["notify", "polling"]);
        let text = format!("{} use notify, not polling {}", filler(500), filler(500));
        let ours = s.snippet(&text);
        let theirs = tantivys(&[("notify", 0.5), ("polling", 0.5)], 150).snippet(&text);
        assert_eq!(ours.fragment(), theirs.fragment());
        assert_eq!(ours.highlighted(), theirs.highlighted());
        assert_eq!(shown(&ours), ["notify", "polling"]);
    }

    /// The fragment and highlights tantivy's generator picks, over texts
    /// with ties, weights, compounds, case, folding, multi-byte
    /// characters and several lengths, with few terms and with many.
    #[test]
    fn the_fragment_tantivy_picks() {
        let texts = [
            "error here. ".repeat(40),
            format!(
                "{} error {} Error: ERROR {}",
                filler(700),
                filler(400),
                filler(90)
            ),
            "HashMap::new() and hash_map, then a HashMap again; caf\u{e9} Caf\u{c9} resume"
                .repeat(9),
            format!(
                "\u{1F600} \u{4E2D}\u{6587} error {} \u{e9}t\u{e9} index",
                "\u{20AC}".repeat(300)
            ),
            String::new(),
            "nothing to see".into(),
            format!(
                "{}errors errored error_code errorIndex {}",
                filler(200),
                filler(200)
            ),
        ];
        let mut many: Vec<(String, Score)> =
            (0..40).map(|i| (format!("zqterm{i}"), 0.25)).collect();
        many.push(("error".into(), 0.5));
        many.push(("index".into(), 0.75));
        let sets: Vec<Vec<(String, Score)>> = vec![
            vec![("error".into(), 0.5)],
            vec![("error".into(), 0.5), ("index".into(), 0.25)],
            vec![
                ("hash".into(), 0.3),
                ("map".into(), 0.2),
                ("cafe".into(), 0.9),
                ("resume".into(), 0.1),
            ],
            vec![
                ("ete".into(), 1.0),
                ("\u{4e2d}".into(), 0.5),
                ("code".into(), 0.5),
            ],
            many,
        ];
        for set in &sets {
            let weights: Vec<(&str, Score)> = set.iter().map(|(t, w)| (t.as_str(), *w)).collect();
            for max in [20, 150, 400] {
                let mut ours = Snippets::new(set.iter().cloned().collect(), text_analyzer());
                ours.set_max_num_chars(max);
                let theirs = tantivys(&weights, max);
                for text in &texts {
                    let (a, b) = (ours.snippet(text), theirs.snippet(text));
                    let start: String = text.chars().take(30).collect();
                    let case = format!("{set:?}, {max} chars, {start:?}");
                    assert_eq!(a.fragment(), b.fragment(), "{case}");
                    assert_eq!(a.highlighted(), b.highlighted(), "{case}");
                    assert_eq!(a.is_empty(), b.is_empty(), "{case}");
                }
            }
        }
    }

    #[test]
    fn a_word_deep_in_8_mib_is_shown_from_one_window() {
        let (s, bytes) = snippets(&["zqdeep"]);
        let text = format!("{}Then ZQDeep here. {}", filler(7 << 20), filler(1 << 20));
        let snippet = s.snippet(&text);
        assert_eq!(shown(&snippet), ["ZQDeep"]);
        assert!(snippet.fragment().len() <= 160, "{}", snippet.fragment());
        let tokenized = bytes.load(Ordering::Relaxed);
        assert!(tokenized <= WINDOW + 4, "{tokenized} bytes tokenized");
    }

    #[test]
    fn a_term_inside_longer_words_moves_the_search_on() {
        // `error` is written in every `errors` before the word itself.
        let (s, bytes) = snippets(&["error"]);
        let text = format!("{}an error at last {}", filler(2 << 20), filler(1 << 20));
        let snippet = s.snippet(&text);
        assert_eq!(shown(&snippet), ["error"]);
        // Each window searched in vain is passed whole: the text is
        // tokenized about once up to the word, never more.
        let tokenized = bytes.load(Ordering::Relaxed);
        assert!(tokenized < (2 << 20) + 3 * WINDOW, "{tokenized}");
    }

    #[test]
    fn a_query_without_terms_tokenizes_nothing() {
        let (s, bytes) = snippets(&[]);
        assert!(s.snippet(&filler(1 << 20)).is_empty());
        assert_eq!(bytes.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_term_written_only_folded_is_found_window_by_window() {
        // The term `ete` is only ever written `été`: the byte search finds
        // nothing, the windows do.
        let (s, _) = snippets(&["ete"]);
        let text = format!("{} \u{e9}t\u{e9} {}", filler(300 << 10), filler(100 << 10));
        assert_eq!(shown(&s.snippet(&text)), ["\u{e9}t\u{e9}"]);
        let (s, _) = snippets(&["zqnowhere"]);
        assert!(s.snippet(&filler(300 << 10)).is_empty());
    }

    #[test]
    fn windows_are_cut_on_character_boundaries() {
        let (s, _) = snippets(&["zqx"]);
        // Three-byte characters: the window's edges fall inside them.
        let pad = "\u{20AC}".repeat(WINDOW / 2);
        let text = format!("{pad}zqx{pad}");
        assert_ne!((text.len() - WINDOW) % 3, 0);
        assert_eq!(shown(&s.snippet(&text)), ["zqx"]);
        assert_eq!(head(&text).len(), WINDOW - WINDOW % 3);
    }
}
