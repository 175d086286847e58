//! Hits in time order (`sort=newest|oldest`): the first `k` matches by
//! their timestamp, and how many match, in one pass.
//!
//! The order is tantivy's for a fast field (a message without a
//! timestamp comes last either way; equal times fall to the document's
//! address, ascending), so a page is the same page as before; what
//! differs is the work. tantivy's top-by-field collector reads each
//! document's value on its own and keeps its candidates in a buffer of
//! twice `k`: a session's messages match in time order, so for `newest`
//! nearly every match beats the threshold and the buffer is sorted down
//! every `k` matches (a third of a common word's sorted search). Here the
//! values are read a block of matches at a time (the posting lists hand
//! out blocks when nothing is scored), and the buffer holds
//! [`BUFFER`] candidates before it is cut to `k`.

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DateTime, DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

use super::query::FieldMap;

/// Candidates kept before the buffer is cut to `k` (at least `2k`).
const BUFFER: usize = 4096;

/// A match's place in the order: larger comes first. A timestamp in the
/// top bit set; none, zero.
type Key = u128;

/// The first `k` matches newest first (or oldest first), with their
/// timestamps, and the number of matches.
pub(crate) struct ByTime {
    k: usize,
    oldest: bool,
}

impl ByTime {
    pub(crate) fn new(k: usize, oldest: bool) -> ByTime {
        ByTime { k, oldest }
    }

    fn key(&self, when: DateTime) -> Key {
        // i64 nanoseconds to an order-keeping u64, reversed for oldest.
        let v = (when.into_timestamp_nanos() as u64) ^ (1 << 63);
        let v = if self.oldest { !v } else { v };
        (1 << 64) | Key::from(v)
    }
}

/// Larger key first, then the lower address.
fn first(a: &(Key, DocId), b: &(Key, DocId)) -> std::cmp::Ordering {
    b.0.cmp(&a.0).then(a.1.cmp(&b.1))
}

pub(crate) struct ByTimeSegment {
    by: ByTime,
    ord: SegmentOrdinal,
    col: Option<Column<DateTime>>,
    count: usize,
    /// Once `k` are kept: the key a match must beat to get in.
    threshold: Option<Key>,
    buf: Vec<(Key, DocId)>,
    docs: Vec<DocId>,
    rows: Vec<u32>,
    vals: Vec<DateTime>,
}

impl ByTimeSegment {
    #[inline]
    fn push(&mut self, key: Key, doc: DocId) {
        // Matches come in ascending doc order: one equal to the threshold
        // comes after the kept one that set it.
        if self.threshold.is_some_and(|t| key <= t) {
            return;
        }
        self.buf.push((key, doc));
        if self.buf.len() >= BUFFER.max(2 * self.by.k) {
            self.cut();
        }
    }

    /// Keep the best `k`; the worst of them is the new threshold.
    fn cut(&mut self) {
        let k = self.by.k;
        if k == 0 {
            self.buf.clear();
            self.threshold = Some(Key::MAX);
            return;
        }
        if self.buf.len() >= k {
            self.buf.select_nth_unstable_by(k - 1, first);
            self.buf.truncate(k);
            self.threshold = Some(self.buf[k - 1].0);
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
        Ok(ByTimeSegment {
            by: ByTime {
                k: self.k,
                oldest: self.oldest,
            },
            ord,
            col: reader.fast_fields().column_opt(FieldMap::RECENCY)?,
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
        let when = |key: Key| {
            (key >> 64 != 0).then(|| {
                let v = key as u64;
                let v = if self.oldest { !v } else { v };
                DateTime::from_timestamp_nanos((v ^ (1 << 63)) as i64)
            })
        };
        Ok((all.into_iter().map(|(k, a)| (when(k), a)).collect(), count))
    }
}

impl SegmentCollector for ByTimeSegment {
    type Fruit = (Vec<(Key, DocAddress)>, usize);

    fn collect(&mut self, doc: DocId, _score: Score) {
        self.collect_block(&[doc]);
    }

    fn collect_block(&mut self, docs: &[DocId]) {
        self.count += docs.len();
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
        let top = self
            .buf
            .into_iter()
            .map(|(key, doc)| (key, DocAddress::new(ord, doc)))
            .collect();
        (top, self.count)
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
                let word_of = if n.is_multiple_of(3) { "three" } else { "other" };
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
                    let (got, count) = searcher
                        .search(q, &ByTime::new(offset + limit, oldest))
                        .unwrap();
                    let got: Vec<_> = got.into_iter().skip(offset).collect();
                    assert_eq!(count, want_count);
                    assert_eq!(
                        got.len(),
                        want.len(),
                        "{limit} from {offset}, oldest {oldest}"
                    );
                    assert_eq!(got, want, "{limit} from {offset}, oldest {oldest}");
                }
            }
        }
    }
}
