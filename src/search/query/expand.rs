//! Identifiers however they are typed: the query side of the parts-only
//! index.
//!
//! The index holds a compound as its parts (`JoinHandle::is_finished` is
//! `join` `handle` `is` `finished` at consecutive positions, plus the
//! hump-split word's whole, `joinhandle`, at its first part's position;
//! `from_utf8` is `from` `utf8`). A query typed as in the text is the
//! phrase of its parts and finds it; typed otherwise it would not:
//! `joinhandle::is_finished` asks for `joinhandle` right before `is`,
//! `fromutf8` and `isfinished` for words that are not there, `LiteMap`
//! for `lite` `map` where the text says `litemap`.
//!
//! So [`alternatives`] gives the other forms a query word or phrase may
//! have in the text, which the compile step ORs with the exact form:
//!
//! - a hump-split word whole (`LiteMap` → `litemap`);
//! - a word cut into terms of the field's dictionary, its
//!   *segmentations* (`isfinished` → `is` `finished`, `joinhandle` →
//!   `join` `handle`), searched as the phrase of the pieces. A word is cut
//!   when the dictionary says the word alone can miss: when it is not a
//!   term, or occurs in no more documents than each piece (a camelCase
//!   whole never occurs in more than its parts, and inside a phrase it
//!   can only be found through them); a word that is the whole query,
//!   only when moreover its rarest piece is in at most a quarter of the
//!   documents (`into` is not also `in to`). `information` (rarer
//!   `formation`) is never cut. A piece that passes the same test is cut
//!   again (`mixedintsunsignedone` → `mixedints` `unsignedone` → `mixed`
//!   `ints` `unsigned` `one`). A word that is a term is not cut through
//!   two or more single characters (`zqphrase01a` is not also `z` `q`
//!   `phrase` `01` `a`: a phrase of common fragments found nowhere).
//!
//! Segmentations are ranked by a unigram model over document
//! frequencies, each piece costing half a rare term more (real words
//! beat common fragments: `ints`, not `in` `ts`), and a single
//! character neither first nor last a whole rare term more: `CCtx` is
//! `c` `ctx` and `clock_t` `clock` `t` at once, `notanumber` `not` `a`
//! `number` when nothing better cuts it.
//!
//! What it costs in precision: a cut word also finds its pieces written
//! apart (`headermap` finds "a header map" in prose, `fromsql` finds
//! `from_sql` and "from SQL"), ranked below the exact form.
//!
//! The work is bounded and scans nothing: for a word of `L` bytes, at
//! most `L` walks of each segment's term dictionary along the word's own
//! bytes (one walk from each place a piece can start, finding every term
//! that starts there by lookups of its prefixes, up to the first that
//! begins no term: `prefix_terms`), then a k-best search over what the
//! walks found; at most [`MAX_ALTERNATIVES`] forms per query word or
//! phrase. Words of more than [`MAX_WORD`] bytes, or with characters
//! other than ASCII letters and digits, are not cut.

use std::collections::HashMap;

use tantivy::schema::Field;
use tantivy::termdict::TermDictionary;
use tantivy::Searcher;

use crate::search::cache::Lookups;

/// Words longer than this (bytes) are not segmented: they are data, or
/// long enough that their humps were typed.
pub const MAX_WORD: usize = 64;

/// Segmentations kept per word, best first.
pub const SEGMENTATIONS: usize = 4;

/// The most pieces a segmentation may have.
const MAX_PIECES: usize = 8;

/// Pieces of a word, as byte ranges.
type Cut = Vec<(usize, usize)>;

/// Terms at their positions relative to the first: a phrase, or one term.
pub type Form = Vec<(usize, String)>;

/// An edge over a query's parts: the part after it, and the ways its
/// text may be written (as is, then segmented).
type Edge = (usize, Vec<Vec<String>>);

/// A path over a query's parts: its changes from the exact form, the sum
/// of the ranks of the ways it took, and its terms.
type Path = (usize, usize, Form);

/// Calls `found` with the length and document frequency of each term of
/// `dict` that is a prefix of `text`, shortest first. One lookup per
/// prefix; past a prefix that is not a term, a seek to the first term
/// after it says how much more of the text begins a term (what that term
/// shares with the text), and the walk ends where nothing does. A stream
/// driven by an automaton that accepts only the prefixes walks the same
/// path but decodes every child of every node on it (all the terms'
/// first bytes at the root), which made the walks a large share of a
/// fresh search of a rare word, the larger the more segments
/// ([docs/performance.md](../../../docs/performance.md#the-dictionary-walk)).
fn prefix_terms(dict: &TermDictionary, text: &[u8], mut found: impl FnMut(usize, u64)) {
    // The prefixes up to this length begin a term (the last seek's).
    let mut begin_a_term = 0;
    for len in 1..=text.len() {
        let prefix = &text[..len];
        match dict.get(prefix) {
            Ok(Some(info)) => found(len, u64::from(info.doc_freq)),
            Ok(None) if len <= begin_a_term => {}
            Ok(None) => {
                let Ok(mut next) = dict.range().ge(prefix).into_stream() else {
                    return;
                };
                if !next.advance() {
                    return;
                }
                begin_a_term = next
                    .key()
                    .iter()
                    .zip(text)
                    .take_while(|(a, b)| a == b)
                    .count();
                if begin_a_term < len {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}

/// Where a [`Dictionary`] finds its terms.
enum Source<'a> {
    /// One field's term dictionaries in a searcher's segments.
    Index {
        searcher: &'a Searcher,
        field: Field,
    },
    /// Terms looked up beforehand, with their document frequencies: the
    /// team database's ([`Known`]).
    Known(&'a Known),
}

/// Terms and their document frequencies fetched before a query is
/// compiled, from a dictionary that cannot be walked where the query is
/// compiled (the team database's `pi_terms`): every term that
/// [`Known::wanted`] asks for and the dictionary holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Known {
    /// Documents in all.
    pub docs: u64,
    /// Document frequency of each term found (a term absent is in none).
    pub freq: HashMap<String, u64>,
}

impl Known {
    /// What the segmentation of the token `token` may look up: the token
    /// itself and, when it may be cut (ASCII letters and digits, at most
    /// [`MAX_WORD`] bytes), every piece of it.
    pub fn wanted(token: &str, out: &mut Vec<String>) {
        out.push(token.to_owned());
        if !segmentable(token) {
            return;
        }
        for start in 0..token.len() {
            for end in start + 1..=token.len() {
                if (start, end) != (0, token.len()) {
                    out.push(token[start..end].to_owned());
                }
            }
        }
    }
}

/// Whether `word` may be cut into pieces (see [`Dictionary::segmentations`]).
fn segmentable(word: &str) -> bool {
    word.len() >= 2 && word.len() <= MAX_WORD && word.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A field's term dictionary, as the segmentation reads it (a searcher's
/// segments', or terms known beforehand), with what was already looked
/// up.
pub struct Dictionary<'a> {
    source: Source<'a>,
    /// Documents in the index (for the pieces' probabilities).
    docs: f64,
    /// Document frequency (summed over segments) of terms seen.
    freq: HashMap<String, u64>,
    /// Words already segmented.
    done: HashMap<String, Vec<Vec<String>>>,
    /// Every text whose prefixes were looked up in the dictionaries, with
    /// the lengths of those that are terms and their document frequency:
    /// a word's pieces, segmented again, and their tails are prefixes of
    /// a text walked before, so they cost no walk of their own.
    walked: Vec<(String, Vec<(usize, u64)>)>,
}

impl<'a> Dictionary<'a> {
    /// The dictionaries of `field` in `searcher`'s segments.
    pub fn new(searcher: &'a Searcher, field: Field) -> Dictionary<'a> {
        Dictionary::with_lookups(searcher, field, Lookups::default())
    }

    /// The dictionaries of `field` in `searcher`'s segments, knowing
    /// `lookups` (made over the same segments) already.
    pub fn with_lookups(searcher: &'a Searcher, field: Field, lookups: Lookups) -> Dictionary<'a> {
        Dictionary {
            source: Source::Index { searcher, field },
            docs: searcher.num_docs().max(1) as f64,
            freq: lookups.freq,
            done: lookups.done,
            walked: Vec::new(),
        }
    }

    /// The terms of `known`.
    pub fn of_known(known: &'a Known) -> Dictionary<'a> {
        Dictionary {
            source: Source::Known(known),
            docs: known.docs.max(1) as f64,
            freq: HashMap::new(),
            done: HashMap::new(),
            walked: Vec::new(),
        }
    }

    /// What was looked up, to be given to the next search of the same
    /// segments ([`crate::search::cache`]).
    pub fn into_lookups(self) -> Lookups {
        Lookups {
            freq: self.freq,
            done: self.done,
        }
    }

    /// In how many documents `term` occurs (0: not a term).
    pub fn doc_freq(&mut self, term: &str) -> u64 {
        if let Some(&n) = self.freq.get(term) {
            return n;
        }
        let n = match self.source {
            Source::Index { searcher, field } => {
                let mut n = 0;
                for seg in searcher.segment_readers() {
                    if let Ok(inv) = seg.inverted_index(field) {
                        if let Ok(Some(info)) = inv.terms().get(term.as_bytes()) {
                            n += u64::from(info.doc_freq);
                        }
                    }
                }
                n
            }
            Source::Known(known) => known.freq.get(term).copied().unwrap_or(0),
        };
        self.freq.insert(term.to_owned(), n);
        n
    }

    /// The terms that are prefixes of `text` (their lengths) and their
    /// document frequencies summed over the segments, from an earlier
    /// walk of a text that `text` begins when there is one.
    fn prefixes(&mut self, text: &str) -> Vec<(usize, u64)> {
        if let Some((_, terms)) = self.walked.iter().find(|(t, _)| t.starts_with(text)) {
            return terms
                .iter()
                .copied()
                .filter(|&(len, _)| len <= text.len())
                .collect();
        }
        let mut freq: HashMap<usize, u64> = HashMap::new();
        match self.source {
            Source::Index { searcher, field } => {
                for seg in searcher.segment_readers() {
                    let Ok(inv) = seg.inverted_index(field) else {
                        continue;
                    };
                    prefix_terms(inv.terms(), text.as_bytes(), |len, df| {
                        *freq.entry(len).or_default() += df;
                    });
                }
            }
            Source::Known(known) => {
                for len in 1..=text.len() {
                    if let Some(&n) = text.get(..len).and_then(|p| known.freq.get(p)) {
                        if n > 0 {
                            freq.insert(len, n);
                        }
                    }
                }
            }
        }
        let terms: Vec<(usize, u64)> = freq.into_iter().collect();
        self.walked.push((text.to_owned(), terms.clone()));
        terms
    }

    /// For each byte offset of `word`, the ends of the terms that start
    /// there (only offsets some cut can reach from the start are walked).
    fn lattice(&mut self, word: &str) -> Vec<Vec<usize>> {
        let bytes = word.as_bytes();
        let mut ends: Vec<Vec<usize>> = vec![Vec::new(); bytes.len()];
        let mut reachable = vec![false; bytes.len() + 1];
        reachable[0] = true;
        for start in 0..bytes.len() {
            if !reachable[start] {
                continue;
            }
            let terms = self.prefixes(&word[start..]);
            let mut here: Vec<usize> = terms.iter().map(|&(len, _)| start + len).collect();
            here.sort_unstable();
            for &(len, df) in &terms {
                let piece = &word[start..start + len];
                self.freq.entry(piece.to_owned()).or_insert(df);
            }
            for &end in &here {
                reachable[end] = true;
            }
            ends[start] = here;
        }
        ends
    }

    /// The best ways (at most `k`) to cut `word` into two or more terms of
    /// the dictionary, best first: the pieces' probabilities multiplied
    /// (a unigram model over document frequencies), so common words beat
    /// rare fragments.
    pub fn segmentations(&mut self, word: &str, k: usize) -> Vec<Vec<String>> {
        if !segmentable(word) {
            return Vec::new();
        }
        if let Some(found) = self.done.get(word) {
            return found.iter().take(k).cloned().collect();
        }
        let ends = self.lattice(word);
        // The best cuts of each prefix (a k-best Viterbi over the
        // lattice): score, pieces' ranges.
        let keep = SEGMENTATIONS.max(k) + 1;
        let n = word.len();
        let mut best: Vec<Vec<(f64, Cut)>> = vec![Vec::new(); n + 1];
        best[0].push((0.0, Vec::new()));
        for start in 0..n {
            if best[start].is_empty() {
                continue;
            }
            let from = std::mem::take(&mut best[start]);
            for &end in &ends[start] {
                let df = self.freq.get(&word[start..end]).copied().unwrap_or(0);
                // Each piece also costs half a rare term, so that real
                // words beat common fragments (`ints`, not `in` `ts`); a
                // single character not first or last a whole rare term
                // more (single letters are common in any dictionary of
                // code, and would cut real words to nonsense; `CCtx` is
                // `c` `ctx`, `clock_t` `clock` `t`, `not-a-number` `not`
                // `a` `number`).
                let inner = end - start == 1 && start > 0 && end < n;
                let p = ((df as f64 + 0.5) / self.docs).ln()
                    - if inner { 1.5 } else { 0.5 } * self.docs.ln();
                for (score, cut) in &from {
                    if cut.len() == MAX_PIECES {
                        continue;
                    }
                    let mut cut = cut.clone();
                    cut.push((start, end));
                    best[end].push((score + p, cut));
                }
                best[end].sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
                best[end].truncate(keep);
            }
            best[start] = from;
        }
        let found: Vec<Vec<String>> = best[n]
            .iter()
            .filter(|(_, cut)| cut.len() >= 2)
            .take(SEGMENTATIONS.max(k))
            .map(|(_, cut)| cut.iter().map(|&(s, e)| word[s..e].to_owned()).collect())
            .collect();
        self.done.insert(word.to_owned(), found.clone());
        found.into_iter().take(k).collect()
    }
}

/// Alternatives looked at per query word or phrase, at most (the
/// ways its pieces can be typed multiply).
pub const MAX_ALTERNATIVES: usize = 16;

/// A query word or phrase as the analyzer gave it: its parts (at their
/// positions), and the wholes of its hump-split words.
#[derive(Debug, Default)]
pub struct Typed {
    /// Each part's position (relative to the first) and text.
    pub parts: Vec<(usize, String)>,
    /// Each whole: the first part it covers, the part after its last, and
    /// its text (`litemap` of `LiteMap`, covering parts 0..2).
    pub wholes: Vec<(usize, usize, String)>,
}

impl Typed {
    /// Parts and wholes from the analyzer's tokens (position, end of its
    /// byte range, text), in the order it gives them: a whole follows its
    /// first part, at the same position, and ends where its last part
    /// ends.
    pub fn of(tokens: &[(usize, usize, String)]) -> Typed {
        let mut t = Typed::default();
        let base = tokens.first().map_or(0, |x| x.0);
        let mut ends: Vec<usize> = Vec::new();
        let mut pending: Vec<(usize, usize, String)> = Vec::new();
        for (position, to, text) in tokens {
            if t.parts.last().is_some_and(|(p, _)| *p == position - base) {
                pending.push((t.parts.len() - 1, *to, text.clone()));
                continue;
            }
            t.parts.push((position - base, text.clone()));
            ends.push(*to);
        }
        for (first, to, text) in pending {
            if let Some(last) = ends.iter().rposition(|&e| e == to) {
                if last > first {
                    t.wholes.push((first, last + 1, text));
                }
            }
        }
        t
    }
}

/// The other ways `typed` may be written in the text, each as terms at
/// their relative positions (a phrase, or one term), fewest changes
/// first: wholes for their parts (`LiteMap` → `litemap`), and words for
/// their segmentations (`joinhandle` → `join` `handle`). The exact form,
/// `typed`'s parts as they are, is not among them.
pub fn alternatives(typed: &Typed, dict: &mut Dictionary<'_>) -> Vec<Form> {
    let n = typed.parts.len();
    if n == 0 {
        return Vec::new();
    }
    // Edges over the parts: (from, to, the ways its text may be written:
    // as is, then segmented).
    let mut edges: Vec<Vec<Edge>> = vec![Vec::new(); n];
    let mut spans: Vec<(usize, usize, String)> = (0..n)
        .map(|i| (i, i + 1, typed.parts[i].1.clone()))
        .collect();
    spans.extend(typed.wholes.iter().cloned());
    for (from, to, text) in spans {
        let alone = from == 0 && to == n;
        let mut ways = vec![vec![text.clone()]];
        ways.extend(segmented(&text, alone, dict));
        edges[from].push((to, ways));
    }
    // Every path, with how far it is from the exact form (changes made).
    let mut found: Vec<Path> = Vec::new();
    let mut path: Form = Vec::new();
    walk(typed, &edges, 0, 0, 0, 0, &mut path, &mut found);
    found.sort_by_key(|a| (a.0, a.1));
    let exact: Form = typed.parts.clone();
    let mut out: Vec<Form> = Vec::new();
    for (_, _, alt) in found {
        if alt != exact && !out.contains(&alt) {
            out.push(alt);
            if out.len() == MAX_ALTERNATIVES {
                break;
            }
        }
    }
    out
}

/// `text`'s segmentations worth searching: when it is not a term, or is
/// no more frequent than each piece (a camelCase whole never is more
/// frequent than its parts); `alone` (the whole query), when moreover
/// its rarest piece is in at most a quarter of the documents, so that
/// `into` is not also searched as `in to`. Each is followed by its
/// refinement, whose pieces are segmented again by the same rule
/// (`mixedints unsignedone` → `mixed ints unsigned one`).
fn segmented(text: &str, alone: bool, dict: &mut Dictionary<'_>) -> Vec<Vec<String>> {
    let df = dict.doc_freq(text);
    // No piece occurs in more documents than there are.
    if df > 0 && alone && df.saturating_mul(4) as f64 > dict.docs {
        return Vec::new();
    }
    let mut out: Vec<Vec<String>> = Vec::new();
    for seg in dict.segmentations(text, SEGMENTATIONS) {
        let rarest = seg.iter().map(|p| dict.doc_freq(p)).min().unwrap_or(0);
        let common = alone && rarest.saturating_mul(4) as f64 > dict.docs;
        if (df == 0 || df <= rarest && plausible(&seg)) && !common {
            let mut finer = Vec::new();
            for piece in &seg {
                refine(piece, dict, 2, &mut finer);
            }
            for s in [seg, finer] {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
    }
    out
}

/// Whether a word that is a term may also be written as `seg`: only
/// when at most one piece is a single character (`topncomputer` →
/// `top` `n` `computer`, `ctrlc` → `ctrl` `c`). A word found whole in the
/// text is a real token; cuts through two or more single characters are
/// what a rare word of letters and digits leaves when nothing better
/// cuts it (`zqphrase01a`, in 2 documents of the 1 GB corpus, would
/// also be searched as `z` `q` `phrase` `01` `a`, a phrase of common
/// fragments found nowhere, at the cost of a phrase query over them). A
/// word that is not a term is cut however the dictionary allows: without
/// a cut it finds nothing.
fn plausible(seg: &[String]) -> bool {
    seg.iter().filter(|p| p.len() == 1).count() <= 1
}

/// `piece`, or its best segmentation when it is no more frequent than
/// each of its own pieces, refined again `depth` times, onto `out`.
fn refine(piece: &str, dict: &mut Dictionary<'_>, depth: usize, out: &mut Vec<String>) {
    if depth > 0 && out.len() < 2 * MAX_PIECES {
        let df = dict.doc_freq(piece);
        let best = dict
            .segmentations(piece, SEGMENTATIONS)
            .into_iter()
            .find(|seg| seg.iter().all(|p| p.len() > 1));
        if let Some(seg) = best {
            let rarest = seg.iter().map(|p| dict.doc_freq(p)).min().unwrap_or(0);
            if df <= rarest {
                for p in &seg {
                    refine(p, dict, depth - 1, out);
                }
                return;
            }
        }
    }
    out.push(piece.to_owned());
}

/// Depth-first over the edges from part `at`, the text position being
/// `pos`; paths end in `found` with their count of changes and of ranks.
#[allow(clippy::too_many_arguments)]
fn walk(
    typed: &Typed,
    edges: &[Vec<Edge>],
    at: usize,
    pos: usize,
    changes: usize,
    ranks: usize,
    path: &mut Form,
    found: &mut Vec<Path>,
) {
    const MAX_PATHS: usize = 256;
    if found.len() >= MAX_PATHS {
        return;
    }
    let n = typed.parts.len();
    if at == n {
        found.push((changes, ranks, path.clone()));
        return;
    }
    for (to, ways) in &edges[at] {
        // A gap in the parts (a dropped token) stays a gap.
        let gap = if *to < n {
            typed.parts[*to].0 - typed.parts[*to - 1].0 - 1
        } else {
            0
        };
        for (rank, terms) in ways.iter().enumerate() {
            let len = path.len();
            for (i, term) in terms.iter().enumerate() {
                path.push((pos + i, term.clone()));
            }
            let change = usize::from(rank > 0 || *to != at + 1);
            walk(
                typed,
                edges,
                *to,
                pos + terms.len() + gap,
                changes + change,
                ranks + rank,
                path,
                found,
            );
            path.truncate(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The terms [`prefix_terms`] finds in a dictionary of `terms`, with
    /// their document frequencies (each term's place in `terms`, plus one).
    fn prefixes(terms: &[&str], word: &str) -> Vec<(String, u64)> {
        let mut sorted: Vec<(&str, u32)> = terms.iter().zip(1..).map(|(t, n)| (*t, n)).collect();
        sorted.sort_unstable();
        sorted.dedup_by(|a, b| a.0 == b.0);
        let mut b = tantivy::termdict::TermDictionaryBuilder::create(Vec::new()).unwrap();
        for (term, df) in sorted {
            let info = tantivy::postings::TermInfo {
                doc_freq: df,
                postings_range: 0..0,
                positions_range: 0..0,
            };
            b.insert(term, &info).unwrap();
        }
        let bytes = b.finish().unwrap();
        let dict = TermDictionary::open(tantivy::directory::FileSlice::from(bytes)).unwrap();
        let mut out = Vec::new();
        prefix_terms(&dict, word.as_bytes(), |len, df| {
            out.push((word[..len].to_owned(), df))
        });
        out
    }

    use tantivy::schema::{Schema, TextFieldIndexing, TextOptions};
    use tantivy::{doc, Index};

    /// A searcher over one document per text, tokenized as pi-index does.
    fn index_of(texts: &[&str]) -> (Index, Field) {
        let mut b = Schema::builder();
        let opts = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("code")
                .set_index_option(tantivy::schema::IndexRecordOption::WithFreqsAndPositions),
        );
        let field = b.add_text_field("text", opts);
        let index = Index::create_in_ram(b.build());
        index
            .tokenizers()
            .register("code", crate::index::tokenizer::analyzer());
        let mut w = index.writer_with_num_threads(1, 15_000_000).unwrap();
        for t in texts {
            w.add_document(doc!(field => *t)).unwrap();
        }
        w.commit().unwrap();
        (index, field)
    }

    fn forms(texts: &[&str], query: &[(usize, usize, &str)]) -> Vec<Vec<String>> {
        let (index, field) = index_of(texts);
        let searcher = index.reader().unwrap().searcher();
        let mut dict = Dictionary::new(&searcher, field);
        let toks: Vec<(usize, usize, String)> = query
            .iter()
            .map(|(p, e, t)| (*p, *e, t.to_string()))
            .collect();
        alternatives(&Typed::of(&toks), &mut dict)
            .into_iter()
            .map(|f| f.into_iter().map(|(_, t)| t).collect())
            .collect()
    }

    /// Filler documents, so that no word of a test is in a quarter of them.
    fn with_filler<'a>(texts: &[&'a str]) -> Vec<&'a str> {
        let mut all = texts.to_vec();
        all.extend(std::iter::repeat_n("nothing else here", 40));
        all
    }

    #[test]
    fn a_word_that_is_not_a_term_is_cut_into_terms() {
        let texts = with_filler(&["Call JoinHandle::is_finished first", "from_utf8 works"]);
        assert_eq!(
            forms(&texts, &[(0, 10, "isfinished")]),
            [["is", "finished"]]
        );
        assert_eq!(forms(&texts, &[(0, 8, "fromutf8")]), [["from", "utf8"]]);
        // A camelCase whole inside a phrase is cut too: its next part is
        // one position further than the phrase of the whole would look.
        assert_eq!(
            forms(
                &texts,
                &[(0, 10, "joinhandle"), (1, 13, "is"), (2, 22, "finished")]
            ),
            [["join", "handle", "is", "finished"]]
        );
        // Nothing to cut into: nothing else to search.
        assert!(forms(&texts, &[(0, 9, "zzzzqqqqq")]).is_empty());
    }

    #[test]
    fn a_common_word_is_not_cut_into_common_ones() {
        // `into` occurs in fewer documents than `in` and `to`, but those
        // are in more than a quarter of them.
        let mut texts = vec!["go in to it"; 30];
        texts.extend(["read into it"; 5]);
        texts.extend(["nothing else here"; 20]);
        assert!(forms(&texts, &[(0, 4, "into")]).is_empty());
        // A word more frequent than a piece is a word, not a compound.
        let texts = with_filler(&["information", "information", "formation in"]);
        assert!(forms(&texts, &[(0, 11, "information")]).is_empty());
    }

    #[test]
    fn a_word_that_is_a_term_is_not_cut_through_two_single_letters() {
        let texts = with_filler(&[
            "zqphrase01a is planted",
            "z and q and phrase 01 a",
            "TopNComputer::new",
        ]);
        // A term: its only cuts go through `z` and `q`.
        assert!(forms(&texts, &[(0, 11, "zqphrase01a")]).is_empty());
        // Not a term: cut however the dictionary allows.
        assert_eq!(
            forms(&texts, &[(0, 10, "zqphrase01")]),
            [["z", "q", "phrase", "01"]]
        );
        // A term cut through one single letter still is.
        assert_eq!(
            forms(&texts, &[(0, 12, "topncomputer")]),
            [["top", "n", "computer"]]
        );
    }

    #[test]
    fn single_letters_are_pieces_at_the_ends_before_the_middle() {
        let texts = with_filler(&["CCtx::load and clock_t and a_b_c", "ab", "not a number"]);
        assert_eq!(forms(&texts, &[(0, 4, "cctx")]), [["c", "ctx"]]);
        assert_eq!(forms(&texts, &[(0, 6, "clockt")]), [["clock", "t"]]);
        // `abc`: `a` `b` `c`, with a letter in the middle, comes last.
        assert_eq!(
            forms(&texts, &[(0, 3, "abc")]),
            [vec!["ab", "c"], vec!["a", "b", "c"]]
        );
        assert_eq!(
            forms(&texts, &[(0, 11, "notanumber")]),
            [["not", "a", "number"]]
        );
    }

    #[test]
    fn parts_and_wholes_of_what_the_analyzer_gives() {
        let mut analyzer = crate::index::tokenizer::analyzer();
        let mut toks = Vec::new();
        analyzer
            .token_stream("JoinHandle::is_finished")
            .process(&mut |t| toks.push((t.position, t.offset_to, t.text.clone())));
        let typed = Typed::of(&toks);
        let parts: Vec<(usize, &str)> = typed.parts.iter().map(|(p, t)| (*p, t.as_str())).collect();
        assert_eq!(
            parts,
            [(0, "join"), (1, "handle"), (2, "is"), (3, "finished")]
        );
        assert_eq!(typed.wholes, [(0, 2, "joinhandle".to_owned())]);
        let lower = Typed::of(&[(0, 10, "joinhandle".to_owned())]);
        assert!(lower.wholes.is_empty());
        assert_eq!(lower.parts, [(0, "joinhandle".to_owned())]);
    }

    #[test]
    fn known_terms_give_the_forms_the_index_gives() {
        let texts = with_filler(&[
            "Call JoinHandle::is_finished first",
            "from_utf8 works",
            "CCtx::load and clock_t and a_b_c",
            "information formation in into",
            "TopNComputer::new and z and q",
        ]);
        let (index, field) = index_of(&texts);
        let searcher = index.reader().unwrap().searcher();
        // Every term of the index, with its document frequency, as the
        // team database's `pi_terms` holds them.
        let mut known = Known {
            docs: searcher.num_docs(),
            ..Known::default()
        };
        for seg in searcher.segment_readers() {
            let inv = seg.inverted_index(field).unwrap();
            let mut stream = inv.terms().stream().unwrap();
            while stream.advance() {
                let term = String::from_utf8(stream.key().to_vec()).unwrap();
                *known.freq.entry(term).or_default() += u64::from(stream.value().doc_freq);
            }
        }
        for query in [
            vec![(0, 10, "isfinished")],
            vec![(0, 8, "fromutf8")],
            vec![(0, 10, "joinhandle"), (1, 13, "is"), (2, 22, "finished")],
            vec![(0, 4, "cctx")],
            vec![(0, 6, "clockt")],
            vec![(0, 4, "into")],
            vec![(0, 11, "information")],
            vec![(0, 12, "topncomputer")],
            vec![(0, 9, "zzzzqqqqq")],
        ] {
            let toks: Vec<(usize, usize, String)> = query
                .iter()
                .map(|(p, e, t)| (*p, *e, t.to_string()))
                .collect();
            let typed = Typed::of(&toks);
            let by_index = alternatives(&typed, &mut Dictionary::new(&searcher, field));
            // Only what `Known::wanted` asks for is known.
            let mut wanted = Vec::new();
            for (_, _, t) in &toks {
                Known::wanted(t, &mut wanted);
            }
            let fetched = Known {
                docs: known.docs,
                freq: wanted
                    .iter()
                    .filter_map(|w| known.freq.get(w).map(|n| (w.clone(), *n)))
                    .collect(),
            };
            let by_known = alternatives(&typed, &mut Dictionary::of_known(&fetched));
            assert_eq!(by_known, by_index, "{query:?}");
        }
        let mut wanted = Vec::new();
        Known::wanted("abc", &mut wanted);
        assert_eq!(wanted, ["abc", "a", "ab", "b", "bc", "c"]);
        let mut wanted = Vec::new();
        Known::wanted("a-b", &mut wanted);
        assert_eq!(wanted, ["a-b"]);
    }

    #[test]
    fn the_walk_finds_exactly_the_terms_that_start_the_word() {
        let terms = [
            "is",
            "isfinished",
            "i",
            "finished",
            "fin",
            "island",
            "s",
            "zz",
        ];
        let found = |word| -> Vec<(String, u64)> { prefixes(&terms, word) };
        let is = |t: &str, df| (t.to_owned(), df);
        assert_eq!(
            found("isfinished"),
            [is("i", 3), is("is", 1), is("isfinished", 2)]
        );
        assert_eq!(found("finished"), [is("fin", 5), is("finished", 4)]);
        // `zz` is a term and begins the word; `zzz` begins no term.
        assert_eq!(found("zzzfin"), [is("zz", 8)]);
        // A prefix that is no term but begins one (`isl`) goes on.
        assert_eq!(found("islands"), [is("i", 3), is("is", 1), is("island", 6)]);
        // Past the term a seek found (`isfinished` for `isf`), a seek
        // again: `isfinishedx` begins no term, `isfinishedxs` is one.
        let more = ["isfinished", "isfinishedxs", "isf"];
        assert_eq!(
            prefixes(&more, "isfinishedxsy"),
            [is("isf", 3), is("isfinished", 1), is("isfinishedxs", 2)]
        );
        assert!(found("q").is_empty());
        assert!(found("").is_empty());
    }

    proptest::proptest! {
        /// Over dictionaries of words of a small alphabet (so that terms
        /// share long prefixes and the walk seeks often), the walk finds
        /// every term that begins the word and nothing else.
        #[test]
        fn the_walk_finds_what_a_scan_of_every_term_finds(
            terms in proptest::collection::vec("[abc]{1,7}", 0..60),
            word in "[abc]{0,9}",
        ) {
            let refs: Vec<&str> = terms.iter().map(String::as_str).collect();
            let walked: Vec<String> = prefixes(&refs, &word).into_iter().map(|(t, _)| t).collect();
            let mut scanned: Vec<String> = terms
                .iter()
                .filter(|t| word.starts_with(t.as_str()))
                .cloned()
                .collect();
            scanned.sort_unstable_by_key(String::len);
            scanned.dedup();
            proptest::prop_assert_eq!(walked, scanned);
        }
    }
}
