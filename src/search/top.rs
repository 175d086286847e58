//! The first `k` hits, found with less work than tantivy's general
//! top-by-key collector does, in exactly its order.
//!
//! - [`ByTime`]: time order (`sort=newest|oldest`), and how many match, in
//!   one pass. A message without a timestamp comes last either way; equal
//!   times fall to the document's address, ascending. tantivy's
//!   top-by-field collector reads each document's value on its own and
//!   keeps its candidates in a buffer of twice `k`: a session's messages
//!   match in time order, so for `newest` nearly every match beats the
//!   threshold and the buffer is sorted down every `k` matches (a third of
//!   a common word's sorted search). Here the values are read a block of
//!   matches at a time (the posting lists hand out blocks when nothing is
//!   scored), and the buffer holds [`BUFFER`] candidates before it is cut
//!   to `k`.
//! - [`BestFirst`]: best first (score, then newest, then address: the
//!   order of `search`), through the query's own pruning (block-max WAND
//!   over a word, or over the words of an AND or an OR), which skips the
//!   blocks of postings that cannot reach the page. With a count beside
//!   it no document can be skipped, so the count is the query's own
//!   (a word's document frequency; an intersection walked without
//!   scores). [`BestFirst::prunes`] says which queries gain.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery, Weight};
use tantivy::{DateTime, DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

use super::query::filter_term::FilterTerm;
use crate::index::saved::groups::Groups;
use crate::index::schema::RECENCY;

/// Candidates kept before the buffer is cut to `k` (at least `2k`).
const BUFFER: usize = 4096;

/// A match's place in the order: larger comes first. A timestamp in the
/// top bit set; none, zero.
type Key = u128;

/// A timestamp's key, newest first (or oldest first): larger comes
/// first, and no timestamp last either way.
pub(crate) fn time_key(when: Option<DateTime>, oldest: bool) -> Key {
    match when {
        // i64 nanoseconds to an order-keeping u64, reversed for oldest.
        Some(when) => {
            let v = (when.into_timestamp_nanos() as u64) ^ (1 << 63);
            let v = if oldest { !v } else { v };
            (1 << 64) | Key::from(v)
        }
        None => 0,
    }
}

/// The timestamp a key was made of.
fn key_time(key: Key, oldest: bool) -> Option<DateTime> {
    (key >> 64 != 0).then(|| {
        let v = key as u64;
        let v = if oldest { !v } else { v };
        DateTime::from_timestamp_nanos((v ^ (1 << 63)) as i64)
    })
}

/// The first `k` matches newest first (or oldest first), with their
/// timestamps, and the number of matches.
pub(crate) struct ByTime {
    k: usize,
    oldest: bool,
    /// Each segment's [`Ranks`] in this order, by segment ordinal, when
    /// the caller keeps them.
    ranks: Option<Vec<Ranks>>,
}

impl ByTime {
    pub(crate) fn new(k: usize, oldest: bool) -> ByTime {
        ByTime {
            k,
            oldest,
            ranks: None,
        }
    }

    /// Order each segment's matches by `ranks` (its [`ranks`] in this
    /// order, by segment ordinal) instead of reading their timestamps.
    pub(crate) fn with_ranks(mut self, ranks: Option<Vec<Ranks>>) -> ByTime {
        self.ranks = ranks;
        self
    }

    fn key(&self, when: DateTime) -> Key {
        time_key(Some(when), self.oldest)
    }
}

/// A segment's documents in one time order: `ranks[doc]` is the place of
/// document `doc` in it (0 first), the order of [`ByTime`] (time, none
/// last, then address). A long-running front end keeps them
/// ([`super::cache`]), so that a search in time order compares one
/// integer per match instead of reading its timestamp from the column
/// (an optional column: a rank lookup, then the value).
pub(crate) type Ranks = std::sync::Arc<[u32]>;

/// The [`Ranks`] of `reader`'s documents newest first (or oldest first).
pub(crate) fn ranks(reader: &SegmentReader, oldest: bool) -> tantivy::Result<Ranks> {
    let col = reader.fast_fields().column_opt::<DateTime>(RECENCY)?;
    let mut order: Vec<u128> = (0..reader.max_doc())
        .map(|doc| {
            let when = col.as_ref().and_then(|c| c.first(doc));
            pack(time_key(when, oldest), doc)
        })
        .collect();
    order.sort_unstable_by(|a, b| b.cmp(a));
    let mut ranks = vec![0u32; order.len()];
    for (at, &packed) in order.iter().enumerate() {
        ranks[unpack(packed).1 as usize] = at as u32;
    }
    Ok(ranks.into())
}

/// A candidate of [`ByTime`] as one integer, larger first: its key above
/// its document's complement, so that of equal keys the lower address is
/// larger. One comparison orders two, and the buffer moves 16 bytes each.
fn pack(key: Key, doc: DocId) -> u128 {
    (key << 32) | u128::from(DocId::MAX - doc)
}

fn unpack(packed: u128) -> (Key, DocId) {
    (packed >> 32, DocId::MAX - packed as u32)
}

pub(crate) struct ByTimeSegment {
    by: ByTime,
    ord: SegmentOrdinal,
    col: Option<Column<DateTime>>,
    /// The segment's [`Ranks`]: candidates are packed by rank, and get
    /// their timestamps' keys when harvested.
    ranks: Option<Ranks>,
    count: usize,
    /// Once `k` are kept: the packed candidate a match must beat to get
    /// in.
    threshold: Option<u128>,
    /// Packed candidates.
    buf: Vec<u128>,
    docs: Vec<DocId>,
    rows: Vec<u32>,
    vals: Vec<DateTime>,
}

impl ByTimeSegment {
    #[inline]
    fn push(&mut self, key: Key, doc: DocId) {
        // Matches come in ascending doc order: one with the threshold's
        // key comes after the kept one that set it (and packs smaller).
        let packed = pack(key, doc);
        if self.threshold.is_some_and(|t| packed <= t) {
            return;
        }
        self.buf.push(packed);
        if self.buf.len() >= BUFFER.max(2 * self.by.k) {
            self.cut();
        }
    }

    /// Keep the best `k`; the worst of them is the new threshold.
    fn cut(&mut self) {
        let k = self.by.k;
        if k == 0 {
            self.buf.clear();
            self.threshold = Some(u128::MAX);
            return;
        }
        if self.buf.len() >= k {
            self.buf.select_nth_unstable_by(k - 1, |a, b| b.cmp(a));
            self.buf.truncate(k);
            self.threshold = Some(self.buf[k - 1]);
        }
    }
}

impl Collector for ByTime {
    /// The best `k` (timestamp and address), best first, and the count.
    type Fruit = (Vec<(Option<DateTime>, DocAddress)>, usize);
    type Child = ByTimeSegment;

    fn for_segment(
        &self,
        ord: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<ByTimeSegment> {
        let ranks = self
            .ranks
            .as_ref()
            .and_then(|r| r.get(ord as usize))
            .filter(|r| r.len() == reader.max_doc() as usize)
            .cloned();
        Ok(ByTimeSegment {
            by: ByTime::new(self.k, self.oldest),
            ord,
            col: reader.fast_fields().column_opt(RECENCY)?,
            ranks,
            count: 0,
            threshold: None,
            buf: Vec::new(),
            docs: Vec::new(),
            rows: Vec::new(),
            vals: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(
        &self,
        fruits: Vec<(Vec<(Key, DocAddress)>, usize)>,
    ) -> tantivy::Result<Self::Fruit> {
        let mut count = 0;
        let mut all = Vec::new();
        for (top, n) in fruits {
            count += n;
            all.extend(top);
        }
        all.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        all.truncate(self.k);
        let top = all.into_iter().map(|(k, a)| (key_time(k, self.oldest), a));
        Ok((top.collect(), count))
    }
}

impl SegmentCollector for ByTimeSegment {
    type Fruit = (Vec<(Key, DocAddress)>, usize);

    fn collect(&mut self, doc: DocId, _score: Score) {
        self.collect_block(&[doc]);
    }

    fn collect_block(&mut self, docs: &[DocId]) {
        self.count += docs.len();
        if let Some(ranks) = self.ranks.take() {
            // Larger first: the first in the order packs largest.
            for &doc in docs {
                self.push(Key::from(u32::MAX - ranks[doc as usize]), doc);
            }
            self.ranks = Some(ranks);
            return;
        }
        let Some(col) = &self.col else {
            for &doc in docs {
                self.push(0, doc);
            }
            return;
        };
        let (mut with, mut rows, mut vals) = (
            std::mem::take(&mut self.docs),
            std::mem::take(&mut self.rows),
            std::mem::take(&mut self.vals),
        );
        with.clear();
        rows.clear();
        col.row_ids_for_docs(docs, &mut with, &mut rows);
        vals.clear();
        vals.resize(rows.len(), DateTime::MIN);
        col.values.get_vals(&rows, &mut vals);
        if with.len() == docs.len() {
            for (&doc, &when) in with.iter().zip(&vals) {
                let key = self.by.key(when);
                self.push(key, doc);
            }
        } else {
            // Some have no timestamp: they keep their place in doc order.
            let mut at = 0;
            for &doc in docs {
                if with.get(at) == Some(&doc) {
                    let key = self.by.key(vals[at]);
                    at += 1;
                    self.push(key, doc);
                } else {
                    self.push(0, doc);
                }
            }
        }
        (self.docs, self.rows, self.vals) = (with, rows, vals);
    }

    fn harvest(mut self) -> Self::Fruit {
        self.cut();
        let ord = self.ord;
        let by_rank = self.ranks.is_some();
        let top = self
            .buf
            .into_iter()
            .map(|packed| {
                let (key, doc) = unpack(packed);
                // Ranks order one segment; the segments' pages are merged
                // by their timestamps' keys.
                let key = if by_rank {
                    let when = self.col.as_ref().and_then(|c| c.first(doc));
                    time_key(when, self.by.oldest)
                } else {
                    key
                };
                (key, DocAddress::new(ord, doc))
            })
            .collect();
        (top, self.count)
    }
}

/// A candidate of [`BestFirst`]: the greater comes first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Best {
    score: Score,
    when: Key,
    doc: DocId,
}

impl Ord for Best {
    fn cmp(&self, other: &Best) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then(self.when.cmp(&other.when))
            .then(other.doc.cmp(&self.doc))
    }
}

impl PartialOrd for Best {
    fn partial_cmp(&self, other: &Best) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Best {
    fn eq(&self, other: &Best) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Best {}

/// The first `k` matches best first: by score, then newest, then address
/// (tantivy's order for score and the timestamp, both descending), with
/// their scores and timestamps.
pub(crate) struct BestFirst {
    k: usize,
    /// Filters every match must pass, checked only for the matches the
    /// words' pruning offers (see [`best_first`]).
    filters: Vec<Box<dyn Weight>>,
    /// Copies left out: they stand behind another of their group.
    skip: Option<std::sync::Arc<Groups>>,
}

/// The first `k` matches of `query` best first (see [`BestFirst`]). An
/// AND of words and filter terms (`error role:user`) is pruned over its
/// words alone, and a match the words offer is then looked up in the
/// filters' postings: tantivy's intersection of the two would lead with
/// the shorter posting list, often the filter's, whose scores are 0, so
/// that nearly every block is opened.
pub(crate) fn best_first(
    searcher: &tantivy::Searcher,
    query: &dyn Query,
    k: usize,
    skip: Option<std::sync::Arc<Groups>>,
) -> tantivy::Result<Vec<(Score, Option<DateTime>, DocAddress)>> {
    let (words, filters) = match split_filters(query) {
        Some(WordsAndFilters { words, filters }) => {
            let scoring = tantivy::query::EnableScoring::disabled_from_searcher(searcher);
            let filters = filters
                .iter()
                .map(|f| f.weight(scoring))
                .collect::<tantivy::Result<_>>()?;
            (words, filters)
        }
        None => (query.box_clone(), Vec::new()),
    };
    searcher.search(&*words, &BestFirst { k, filters, skip })
}

/// A query's words (one, or their AND) and its filter terms.
struct WordsAndFilters {
    words: Box<dyn Query>,
    filters: Vec<Box<dyn Query>>,
}

/// An AND of words and filter terms, split; `None` for anything else.
fn split_filters(query: &dyn Query) -> Option<WordsAndFilters> {
    let b = query.downcast_ref::<BooleanQuery>()?;
    let mut words = Vec::new();
    let mut filters = Vec::new();
    for (occur, q) in b.clauses() {
        if *occur != Occur::Must {
            return None;
        }
        if q.is::<TermQuery>() {
            words.push((Occur::Must, q.box_clone()));
        } else if q.is::<FilterTerm>() {
            filters.push(q.box_clone());
        } else {
            return None;
        }
    }
    if words.is_empty() || filters.is_empty() {
        return None;
    }
    let words: Box<dyn Query> = if words.len() == 1 {
        words.remove(0).1
    } else {
        Box::new(BooleanQuery::new(words))
    };
    Some(WordsAndFilters { words, filters })
}

impl BestFirst {
    #[cfg(test)]
    pub(crate) fn new(k: usize) -> BestFirst {
        BestFirst {
            k,
            filters: Vec::new(),
            skip: None,
        }
    }

    /// Whether `query` skips blocks of postings under this collector: one
    /// word, or an AND or an OR of words and filter terms (`role:`,
    /// scoring 0) alone, read with their frequencies. Any other query
    /// would score every match anyway, and the separate count would be a
    /// second pass for nothing.
    pub(crate) fn prunes(query: &dyn Query) -> bool {
        if query.downcast_ref::<TermQuery>().is_some() {
            return true;
        }
        let Some(b) = query.downcast_ref::<BooleanQuery>() else {
            return false;
        };
        let clauses = b.clauses();
        clauses.len() >= 2
            && clauses.iter().all(|(occur, q)| {
                *occur == clauses[0].0
                    && matches!(occur, Occur::Must | Occur::Should)
                    && (q.is::<TermQuery>() || q.is::<FilterTerm>())
            })
    }
}

/// A segment's candidates: the best `k` seen, the worst on top.
pub(crate) struct BestInSegment {
    k: usize,
    ord: SegmentOrdinal,
    col: Option<Column<DateTime>>,
    heap: BinaryHeap<std::cmp::Reverse<Best>>,
}

impl BestInSegment {
    /// Take `doc` if it is among the best `k` so far; the score a match
    /// must now exceed to be offered (one below the worst kept, so that a
    /// newer match of the same score still is).
    #[inline]
    fn offer(&mut self, doc: DocId, score: Score) -> Score {
        let when = time_key(self.col.as_ref().and_then(|c| c.first(doc)), false);
        let b = Best { score, when, doc };
        if self.heap.len() < self.k {
            self.heap.push(std::cmp::Reverse(b));
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if b > worst.0 {
                *worst = std::cmp::Reverse(b);
            }
        }
        match self.heap.peek() {
            Some(worst) if self.heap.len() >= self.k => worst.0.score.next_down(),
            _ => Score::MIN,
        }
    }
}

impl Collector for BestFirst {
    /// The best `k` (score, timestamp and address), best first.
    type Fruit = Vec<(Score, Option<DateTime>, DocAddress)>;
    type Child = BestInSegment;

    fn for_segment(
        &self,
        ord: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<BestInSegment> {
        Ok(BestInSegment {
            k: self.k,
            ord,
            col: reader.fast_fields().column_opt(RECENCY)?,
            heap: BinaryHeap::with_capacity(self.k + 1),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    /// The weight's own pruning: matches that cannot beat the worst of
    /// the best `k` are skipped a block at a time.
    fn collect_segment(
        &self,
        weight: &dyn Weight,
        ord: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<Vec<(Best, SegmentOrdinal)>> {
        let mut seg = self.for_segment(ord, reader)?;
        if self.k > 0 {
            let mut filters = self
                .filters
                .iter()
                .map(|f| f.scorer(reader, 0.0))
                .collect::<tantivy::Result<Vec<_>>>()?;
            // Matches come in ascending order: each filter's postings are
            // only ever moved forward.
            let mut passes = |doc: DocId| {
                filters.iter_mut().all(|f| {
                    let at = f.doc();
                    at == doc || (at < doc && f.seek(doc) == doc)
                })
            };
            let alive = reader.alive_bitset();
            let skip = self.skip.as_deref();
            let mut threshold = Score::MIN;
            weight.for_each_pruning(Score::MIN, reader, &mut |doc, score| {
                if alive.is_none_or(|a| a.is_alive(doc))
                    && !skip.is_some_and(|g| g.is_behind(ord, doc))
                    && passes(doc)
                {
                    threshold = seg.offer(doc, score);
                }
                threshold
            })?;
        }
        Ok(seg.harvest())
    }

    fn merge_fruits(
        &self,
        fruits: Vec<Vec<(Best, SegmentOrdinal)>>,
    ) -> tantivy::Result<Self::Fruit> {
        let mut all: Vec<(Best, SegmentOrdinal)> = fruits.into_iter().flatten().collect();
        // Best first; across segments equal keys fall to the lower segment.
        all.sort_unstable_by(|a, b| {
            b.0.score
                .total_cmp(&a.0.score)
                .then(b.0.when.cmp(&a.0.when))
                .then((a.1, a.0.doc).cmp(&(b.1, b.0.doc)))
        });
        all.truncate(self.k);
        Ok(all
            .into_iter()
            .map(|(b, ord)| {
                (
                    b.score,
                    key_time(b.when, false),
                    DocAddress::new(ord, b.doc),
                )
            })
            .collect())
    }
}

impl SegmentCollector for BestInSegment {
    type Fruit = Vec<(Best, SegmentOrdinal)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        self.offer(doc, score);
    }

    fn harvest(self) -> Self::Fruit {
        let ord = self.ord;
        self.heap.into_iter().map(|b| (b.0, ord)).collect()
    }
}

#[cfg(test)]
mod tests {
    use tantivy::collector::{Count, TopDocs};
    use tantivy::query::{AllQuery, Query, TermQuery};
    use tantivy::schema::{IndexRecordOption, Schema, FAST, INDEXED, STRING};
    use tantivy::{doc, DateTime, Index, Order, Term};

    use super::ByTime;

    /// Exactly tantivy's order and count, through cuts of the buffer,
    /// ties, missing timestamps, segments and offsets.
    #[test]
    fn the_same_page_as_tantivys_collector() {
        let mut b = Schema::builder();
        let ts = b.add_date_field("timestamp", INDEXED | FAST);
        let word = b.add_text_field("word", STRING);
        let index = Index::create_in_ram(b.build());
        let mut w: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
        // 3 segments of 5,000 documents: times rising (as a session's
        // messages do), falling, and repeating; every 7th without one.
        let mut n = 0u64;
        for seg in 0..3 {
            for i in 0..5000i64 {
                n += 1;
                let t = match seg {
                    0 => i,
                    1 => 10_000 - i,
                    _ => i % 13,
                } * 1_000_000_000;
                let word_of = if n.is_multiple_of(3) {
                    "three"
                } else {
                    "other"
                };
                if n.is_multiple_of(7) {
                    w.add_document(doc!(word => word_of)).unwrap();
                } else {
                    w.add_document(doc!(ts => DateTime::from_timestamp_nanos(t), word => word_of))
                        .unwrap();
                }
            }
            w.commit().unwrap();
        }
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.segment_readers().len(), 3);
        let three = TermQuery::new(
            Term::from_field_text(word, "three"),
            IndexRecordOption::Basic,
        );
        let queries: [&dyn Query; 2] = [&AllQuery, &three];
        for q in queries {
            for oldest in [false, true] {
                for (limit, offset) in [
                    (1, 0),
                    (20, 0),
                    (20, 40),
                    (100, 4990),
                    (3000, 0),
                    (20, 14_990),
                ] {
                    let order = if oldest { Order::Asc } else { Order::Desc };
                    let top = TopDocs::with_limit(limit)
                        .and_offset(offset)
                        .order_by_fast_field::<DateTime>("timestamp", order);
                    let (want, want_count) = searcher.search(q, &(top, Count)).unwrap();
                    // Timestamps read from the column, and the
                    // segments' ranks kept.
                    let ranks = searcher
                        .segment_readers()
                        .iter()
                        .map(|r| super::ranks(r, oldest).unwrap())
                        .collect();
                    for by in [
                        ByTime::new(offset + limit, oldest),
                        ByTime::new(offset + limit, oldest).with_ranks(Some(ranks)),
                    ] {
                        let ranked = by.ranks.is_some();
                        let (got, count) = searcher.search(q, &by).unwrap();
                        let got: Vec<_> = got.into_iter().skip(offset).collect();
                        let case =
                            format!("{limit} from {offset}, oldest {oldest}, ranks {ranked}");
                        assert_eq!(count, want_count, "{case}");
                        assert_eq!(got.len(), want.len(), "{case}");
                        assert_eq!(got, want, "{case}");
                    }
                }
            }
        }
    }

    /// Exactly the page of tantivy's collector by score and then
    /// timestamp, through pruning: one word, AND and OR of words, with
    /// deleted documents, ties of score and time, and offsets.
    #[test]
    fn best_first_is_tantivys_order_by_score_then_time() {
        use tantivy::collector::sort_key::{SortBySimilarityScore, SortByStaticFastValue};
        use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur};
        use tantivy::schema::TEXT;

        use super::{BestFirst, FilterTerm};

        let mut b = Schema::builder();
        let ts = b.add_date_field("timestamp", INDEXED | FAST);
        let text = b.add_text_field("text", TEXT);
        // As the index's `role_term`: one term, frequencies, no norms.
        let role = b.add_text_field(
            "role",
            tantivy::schema::TextOptions::default().set_indexing_options(
                tantivy::schema::TextFieldIndexing::default()
                    .set_tokenizer("raw")
                    .set_index_option(IndexRecordOption::WithFreqs)
                    .set_fieldnorms(false),
            ),
        );
        let index = Index::create_in_ram(b.build());
        let mut w: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
        let words = ["alpha", "beta", "gamma", "delta", "filler"];
        let mut n = 0u64;
        for _seg in 0..3 {
            for i in 0..6000u64 {
                n += 1;
                // Lengths and counts repeat, so many documents tie.
                let mut body = String::new();
                for (j, word) in words.iter().enumerate() {
                    let times = (n * (j as u64 + 3) / 7) % 4;
                    for _ in 0..times {
                        body.push_str(word);
                        body.push(' ');
                    }
                }
                body.push_str(&"filler ".repeat((n % 5) as usize));
                let t = DateTime::from_timestamp_nanos(((n * 7919) % 50) as i64 * 1_000_000_000);
                let r = if n % 3 == 1 { "user" } else { "assistant" };
                if n.is_multiple_of(11) {
                    w.add_document(doc!(text => body, role => r)).unwrap();
                } else {
                    w.add_document(doc!(ts => t, text => body, role => r))
                        .unwrap();
                }
                if i == 5999 {
                    w.commit().unwrap();
                }
            }
        }
        // Deletes in one segment.
        w.delete_term(Term::from_field_text(text, "delta"));
        w.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let term = |t: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(
                Term::from_field_text(text, t),
                IndexRecordOption::WithFreqs,
            ))
        };
        let of = |occur: Occur, ts: &[&str]| -> Box<dyn Query> {
            Box::new(BooleanQuery::new(
                ts.iter().map(|t| (occur, term(t))).collect(),
            ))
        };
        // A filter term beside words, and the same filter as an opaque
        // constant-0 clause (which does not prune): the same page.
        let user = || Term::from_field_text(role, "user");
        let filtered = |occur: Occur, ts: &[&str], filter: Box<dyn Query>| -> Box<dyn Query> {
            let mut clauses: Vec<(Occur, Box<dyn Query>)> =
                ts.iter().map(|t| (occur, term(t))).collect();
            clauses.push((occur, filter));
            Box::new(BooleanQuery::new(clauses))
        };
        let as_term = || -> Box<dyn Query> { Box::new(FilterTerm::new(user())) };
        let as_constant = || -> Box<dyn Query> {
            Box::new(ConstScoreQuery::new(
                Box::new(TermQuery::new(user(), IndexRecordOption::Basic)),
                0.0,
            ))
        };
        let queries = [
            (term("alpha"), term("alpha")),
            (term("gamma"), term("gamma")),
            (
                of(Occur::Must, &["alpha", "beta"]),
                of(Occur::Must, &["alpha", "beta"]),
            ),
            (
                of(Occur::Must, &["alpha", "beta", "gamma"]),
                of(Occur::Must, &["alpha", "beta", "gamma"]),
            ),
            (
                of(Occur::Should, &["beta", "gamma"]),
                of(Occur::Should, &["beta", "gamma"]),
            ),
            (
                filtered(Occur::Must, &["alpha"], as_term()),
                filtered(Occur::Must, &["alpha"], as_constant()),
            ),
            (
                filtered(Occur::Must, &["alpha", "gamma"], as_term()),
                filtered(Occur::Must, &["alpha", "gamma"], as_constant()),
            ),
            (
                filtered(Occur::Should, &["beta"], as_term()),
                filtered(Occur::Should, &["beta"], as_constant()),
            ),
        ];
        assert!(!BestFirst::prunes(&*queries[5].1));
        for (q, plain) in &queries {
            assert!(BestFirst::prunes(&**q));
            for (limit, offset) in [(1, 0), (20, 0), (20, 100), (500, 0)] {
                let by = (
                    (SortBySimilarityScore, Order::Desc),
                    (
                        SortByStaticFastValue::<DateTime>::for_field("timestamp"),
                        Order::Desc,
                    ),
                );
                let top = TopDocs::with_limit(limit).and_offset(offset).order_by(by);
                let (want, want_count) = searcher.search(&**plain, &(top, Count)).unwrap();
                let got = super::best_first(&searcher, &**q, offset + limit, None).unwrap();
                // The same through tantivy's own pruning of the whole
                // query (filter terms and all).
                let whole = searcher
                    .search(&**q, &BestFirst::new(offset + limit))
                    .unwrap();
                assert_eq!(got, whole, "{q:?} {limit} from {offset}");
                let got: Vec<_> = got
                    .into_iter()
                    .skip(offset)
                    .map(|(s, t, a)| ((s, t), a))
                    .collect();
                assert_eq!(got, want, "{q:?} {limit} from {offset}");
                assert_eq!(q.count(&searcher).unwrap(), want_count);
            }
        }
        assert!(!BestFirst::prunes(&*of(Occur::Must, &[])));
    }
}
