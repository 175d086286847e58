//! One message, one hit: a message copied into forks (the same entry id
//! and the same text, in sessions of one family: see [`super::family`])
//! is found once, at the oldest session holding a copy that matches, with
//! the other matching copies listed.
//!
//! Only documents of sessions with relatives can be copies. A search
//! hands every other match to the usual top-hits collector, and sets
//! aside the matches of those sessions with their copy key; those are
//! grouped, each group's representative joins the candidates, and the
//! page is cut from the merged list in the order the collector uses
//! (score, then recency, then index order), so pages stay stable and the
//! total counts hits after merging. An index without families takes the
//! collector's path unchanged.

use std::collections::HashMap;
use std::sync::Arc;

use tantivy::collector::sort_key::{SortBySimilarityScore, SortByStaticFastValue};
use tantivy::collector::{Collector, Count, SegmentCollector, TopDocs};
use tantivy::columnar::Column;
use tantivy::query::Query;
use tantivy::{DateTime, DocAddress, DocId, Order, Score, Searcher, SegmentReader};

use super::messages::MessageReader;
use super::query::Sort;
use super::reader::Reader;
use super::top::{time_key, ByTime};
use crate::index::family::{Families, KeyMap};
use crate::index::schema::RECENCY;
use crate::index::{tantivy_err, IndexError};
use crate::read::{CopyRef, Hit};

/// A hit before it is read: where, its sort key, and its copies.
#[derive(Clone, Debug)]
pub(crate) struct Ranked {
    pub(crate) score: f32,
    pub(crate) when: Option<DateTime>,
    pub(crate) addr: DocAddress,
    /// The other matching copies: their session keys and addresses.
    pub(crate) copies: Vec<(u64, DocAddress)>,
}

/// A match set aside: a document of a session with relatives.
struct Stashed {
    family: u64,
    copy: u64,
    sess: u64,
    addr: DocAddress,
    score: Score,
}

/// `inner` for the matches of sessions without relatives, and the others
/// set aside.
struct Split<C> {
    inner: C,
    families: Arc<KeyMap<u64, u64>>,
}

struct SplitSegment<S> {
    inner: S,
    sess: Column<u64>,
    copy: Option<Column<u64>>,
    families: Arc<KeyMap<u64, u64>>,
    ord: u32,
    /// The last session seen and its family: a session's documents are
    /// mostly neighbours.
    last: (u64, Option<u64>),
    stash: Vec<Stashed>,
    /// The block handed on, reused.
    block: Vec<DocId>,
}

impl<C: Collector> Collector for Split<C> {
    type Fruit = (C::Fruit, Vec<Stashed>);
    type Child = SplitSegment<C::Child>;

    fn for_segment(&self, ord: u32, reader: &SegmentReader) -> tantivy::Result<Self::Child> {
        let ff = reader.fast_fields();
        Ok(SplitSegment {
            inner: self.inner.for_segment(ord, reader)?,
            sess: ff.u64("sess")?,
            copy: ff.column_opt("copy")?,
            families: self.families.clone(),
            ord,
            last: (u64::MAX, None),
            stash: Vec::new(),
            block: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.inner.requires_scoring()
    }

    fn merge_fruits(
        &self,
        fruits: Vec<<Self::Child as SegmentCollector>::Fruit>,
    ) -> tantivy::Result<Self::Fruit> {
        let mut inner = Vec::with_capacity(fruits.len());
        let mut stash = Vec::new();
        for (f, s) in fruits {
            inner.push(f);
            stash.extend(s);
        }
        Ok((self.inner.merge_fruits(inner)?, stash))
    }
}

impl<S> SplitSegment<S> {
    /// Set `doc` aside when its session has relatives and it has a copy
    /// key; whether it was.
    #[inline]
    fn stashed(&mut self, doc: DocId, score: Score) -> bool {
        let sess = self.sess.first(doc).unwrap_or(0);
        if self.last.0 != sess {
            self.last = (sess, self.families.get(&sess).copied());
        }
        // The copy key only of a document whose session has relatives:
        // most documents' have none, and a lookup in the column's sparse
        // index is the dearest step here.
        let copy = self
            .last
            .1
            .and_then(|family| Some((family, self.copy.as_ref()?.first(doc)?)));
        match copy {
            Some((family, copy)) => {
                self.stash.push(Stashed {
                    family,
                    copy,
                    sess,
                    addr: DocAddress::new(self.ord, doc),
                    score,
                });
                true
            }
            None => false,
        }
    }
}

impl<S: SegmentCollector> SegmentCollector for SplitSegment<S> {
    type Fruit = (S::Fruit, Vec<Stashed>);

    fn collect(&mut self, doc: DocId, score: Score) {
        if !self.stashed(doc, score) {
            self.inner.collect(doc, score);
        }
    }

    fn collect_block(&mut self, docs: &[DocId]) {
        // The documents of sessions without relatives go on as a block.
        let mut rest = std::mem::take(&mut self.block);
        rest.clear();
        for &doc in docs {
            if !self.stashed(doc, 0.0) {
                rest.push(doc);
            }
        }
        self.inner.collect_block(&rest);
        self.block = rest;
    }

    fn harvest(self) -> Self::Fruit {
        (self.inner.harvest(), self.stash)
    }
}

/// The page `offset..offset + limit` of `query`'s hits with copies
/// merged, and the number of hits after merging.
pub(crate) fn ranked(
    r: &Reader,
    searcher: &Searcher,
    query: &dyn Query,
    sort: Sort,
    limit: usize,
    offset: usize,
    families: &Families,
) -> Result<(Vec<Ranked>, usize), IndexError> {
    let err = |e| tantivy_err(&r.pi.dir, e);
    let map = Arc::new(families.shared_map());
    // Every hit that could be on the page, before merging.
    let top = TopDocs::with_limit(offset.saturating_add(limit).max(1));
    let (mut candidates, count, stash) = match sort {
        Sort::Relevance => {
            let by = (
                (SortBySimilarityScore, Order::Desc),
                (
                    SortByStaticFastValue::<DateTime>::for_field(RECENCY),
                    Order::Desc,
                ),
            );
            let split = Split {
                inner: (top.order_by(by), Count),
                families: map,
            };
            let ((top, count), stash) =
                super::parallel::search(searcher, query, &split).map_err(err)?;
            let v: Vec<Ranked> = top
                .into_iter()
                .map(|((score, when), addr)| Ranked {
                    score,
                    when,
                    addr,
                    copies: Vec::new(),
                })
                .collect();
            (v, count, stash)
        }
        sort => {
            let oldest = sort == Sort::Oldest;
            let split = Split {
                inner: ByTime::new(offset.saturating_add(limit).max(1), oldest)
                    .with_ranks(r.time_ranks(searcher, oldest)?),
                families: map,
            };
            let ((top, count), stash) =
                super::parallel::search(searcher, query, &split).map_err(err)?;
            let v: Vec<Ranked> = top
                .into_iter()
                .map(|(when, addr)| Ranked {
                    score: 0.0,
                    when,
                    addr,
                    copies: Vec::new(),
                })
                .collect();
            (v, count, stash)
        }
    };

    let mut groups: KeyMap<(u64, u64), Vec<Stashed>> = KeyMap::default();
    for s in stash {
        groups.entry((s.family, s.copy)).or_default().push(s);
    }
    let total = count + groups.len();
    let mut times: HashMap<u32, Column<DateTime>> = HashMap::new();
    for (_, mut group) in groups {
        // The oldest session's copy stands for the others.
        group.sort_by_key(|s| (families.age(s.sess), s.addr));
        let rep = &group[0];
        let ord = rep.addr.segment_ord;
        let col = match times.entry(ord) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                searcher
                    .segment_reader(ord)
                    .fast_fields()
                    .date(RECENCY)
                    .map_err(err)?,
            ),
        };
        let when = col.first(rep.addr.doc_id);
        candidates.push(Ranked {
            score: if sort == Sort::Relevance {
                rep.score
            } else {
                0.0
            },
            when,
            addr: rep.addr,
            copies: group[1..].iter().map(|s| (s.sess, s.addr)).collect(),
        });
    }
    // The collector's order: score, then recency, then index order.
    candidates.sort_by(|a, b| {
        let key = match sort {
            Sort::Relevance => b
                .score
                .total_cmp(&a.score)
                .then_with(|| b.when.cmp(&a.when)),
            Sort::Newest | Sort::Oldest => {
                let oldest = sort == Sort::Oldest;
                time_key(b.when, oldest).cmp(&time_key(a.when, oldest))
            }
        };
        key.then_with(|| a.addr.cmp(&b.addr))
    });
    let page: Vec<Ranked> = candidates.into_iter().skip(offset).take(limit).collect();
    Ok((page, total))
}

/// The copies of a hit, as printed: session, file and line of each.
pub(crate) fn read_copies(
    r: &Reader,
    searcher: &Searcher,
    reader: &mut MessageReader<'_>,
    copies: &[(u64, DocAddress)],
) -> Result<Vec<CopyRef>, IndexError> {
    let mut out = Vec::with_capacity(copies.len());
    for &(sess, addr) in copies {
        let line = line_of(r, searcher, addr)?;
        let session = reader.session(sess)?;
        out.push(CopyRef {
            session_id: session
                .as_ref()
                .map(|s| s.session_id.clone())
                .unwrap_or_default(),
            path: session.map(|s| s.path.clone()).unwrap_or_default(),
            line,
        });
    }
    Ok(out)
}

/// The copies of a hit as the copy groups the build saved name them
/// (their sessions' ids and files from the file, not from the sessions'
/// records), as printed.
pub(crate) fn saved_copies(
    r: &Reader,
    searcher: &Searcher,
    copies: &[crate::index::saved::groups::Copy<'_>],
) -> Result<Vec<CopyRef>, IndexError> {
    copies
        .iter()
        .map(|c| {
            Ok(CopyRef {
                session_id: c.session_id.to_owned(),
                path: c.path.to_owned(),
                line: line_of(r, searcher, c.addr)?,
            })
        })
        .collect()
}

/// The line of the message at `addr`.
fn line_of(r: &Reader, searcher: &Searcher, addr: DocAddress) -> Result<u64, IndexError> {
    use tantivy::schema::Value;
    let d: tantivy::TantivyDocument = searcher.doc(addr).map_err(|e| tantivy_err(&r.pi.dir, e))?;
    Ok(d.get_first(r.pi.fields.line)
        .and_then(|v| v.as_u64())
        .unwrap_or(0))
}

/// How many message documents are copies of a message an older session
/// of their family holds (what `stats` reports beside the messages).
pub(crate) fn copies_in(
    r: &Reader,
    searcher: &Searcher,
    families: &Families,
) -> Result<u64, IndexError> {
    if !families.any() {
        return Ok(0);
    }
    let split = Split {
        inner: Count,
        families: Arc::new(families.shared_map()),
    };
    let (_, stash) = searcher
        .search(&*crate::index::all_messages(&r.pi.fields), &split)
        .map_err(|e| tantivy_err(&r.pi.dir, e))?;
    let groups: std::collections::HashSet<(u64, u64)> =
        stash.iter().map(|s| (s.family, s.copy)).collect();
    Ok((stash.len() - groups.len()) as u64)
}

/// Fill in each hit's `copies`: the other sessions of its family
/// holding the same message (the same entry id and text), whatever
/// they matched. For lists that show one hit per session (the
/// picker, `sessions QUERY`), where a search's own merging does not
/// apply. One scan of the copy column for all the hits; nothing when
/// the index has no families.
pub fn fill_copies(
    r: &Reader,
    searcher: &Searcher,
    hits: &mut [&mut Hit],
) -> Result<(), IndexError> {
    use crate::index::lineage::copy_key;
    let families = r.families(searcher)?;
    if !families.any() {
        return Ok(());
    }
    let mut want = Vec::new();
    for (i, h) in hits.iter().enumerate() {
        let sess = crate::index::schema::session_key(&h.doc.path);
        let (Some(family), Some(id)) = (families.family_of(sess), h.doc.entry_id.as_deref()) else {
            continue;
        };
        want.push((i, family, copy_key(id, &h.doc.text), sess));
    }
    if want.is_empty() {
        return Ok(());
    }
    let err = |e| tantivy_err(&r.pi.dir, e);
    let query = super::column_set::ColumnSetQuery::new("copy", want.iter().map(|w| w.2).collect());
    let mut addrs: Vec<DocAddress> = searcher
        .search(&query, &tantivy::collector::DocSetCollector)
        .map_err(err)?
        .into_iter()
        .collect();
    addrs.sort_unstable();
    let mut found: KeyMap<u64, Vec<(u64, DocAddress)>> = KeyMap::default();
    let mut columns: Option<(u32, Column<u64>, Column<u64>)> = None;
    for a in addrs {
        if columns.as_ref().is_none_or(|c| c.0 != a.segment_ord) {
            let ff = searcher.segment_reader(a.segment_ord).fast_fields();
            columns = Some((
                a.segment_ord,
                ff.u64("sess").map_err(err)?,
                ff.u64("copy").map_err(err)?,
            ));
        }
        let (_, sess, copy) = columns.as_ref().expect("opened above");
        if let (Some(s), Some(c)) = (sess.first(a.doc_id), copy.first(a.doc_id)) {
            found.entry(c).or_default().push((s, a));
        }
    }
    let mut reader = MessageReader::new(r, searcher);
    for (i, family, copy, sess) in want {
        let mut others: Vec<(u64, DocAddress)> = found
            .get(&copy)
            .into_iter()
            .flatten()
            .filter(|(s, _)| *s != sess && families.family_of(*s) == Some(family))
            .copied()
            .collect();
        others.sort_by_key(|(s, a)| (families.age(*s), *a));
        hits[i].copies = read_copies(r, searcher, &mut reader, &others)?;
    }
    Ok(())
}
