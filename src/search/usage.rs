//! What Pi cost, as the local index holds it: every session's usage
//! ([`crate::index::spent`]) with the facts of its record, read from
//! columns, for the report of [`crate::read::usage`].

use std::collections::HashMap;
use std::sync::Arc;

use tantivy::columnar::StrColumn;
use tantivy::{DocId, Searcher, SegmentReader};

use super::reader::Reader;
use crate::index::spent::{Joined, Slots, Sums, Value};
use crate::index::{tantivy_err, IndexError};
use crate::read::usage::{group_of, Collect, Ids, Need, Recorded, SessionSpend, UsageData};

/// Every session's usage in the state `searcher` shows, with the facts
/// of its record (one value a session, [`crate::index::spent`]).
pub fn usage_data(
    reader: &Reader,
    searcher: &Searcher,
    need: Need,
) -> Result<UsageData, IndexError> {
    let f = &reader.pi.fields;
    let query = tantivy::query::TermQuery::new(
        tantivy::Term::from_field_text(f.doc_type, crate::index::schema::SESSION_DOC),
        tantivy::schema::IndexRecordOption::Basic,
    );
    usage_of(reader, searcher, &query, need)
}

/// The usage of the session with key `key` and id `id`, and of every
/// session a report counts its entries with: its family's sessions
/// (an entry counts at the first of them that holds it) and the files of
/// its id (copies of one session). A report of these alone gives the
/// session the row a report of every session gives it, from a few
/// records read instead of all of them.
pub fn session_usage_data(
    reader: &Reader,
    searcher: &Searcher,
    key: u64,
    id: &str,
) -> Result<UsageData, IndexError> {
    use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
    use tantivy::schema::IndexRecordOption;
    use tantivy::Term;
    let f = &reader.pi.fields;
    let families = reader.families(searcher)?;
    let keys = match families.family_of(key) {
        Some(_) => families.relatives(key),
        None => vec![key],
    };
    let mut any: Vec<(Occur, Box<dyn Query>)> = keys
        .into_iter()
        .map(|k| {
            let q: Box<dyn Query> = Box::new(TermQuery::new(
                Term::from_field_u64(f.session_key, k),
                IndexRecordOption::Basic,
            ));
            (Occur::Should, q)
        })
        .collect();
    if !id.is_empty() {
        any.push((
            Occur::Should,
            Box::new(TermQuery::new(
                Term::from_field_text(f.session_id, id),
                IndexRecordOption::Basic,
            )),
        ));
    }
    let query = BooleanQuery::new(vec![
        (
            Occur::Must,
            Box::new(TermQuery::new(
                Term::from_field_text(f.doc_type, crate::index::schema::SESSION_DOC),
                IndexRecordOption::Basic,
            )),
        ),
        (Occur::Must, Box::new(BooleanQuery::new(any))),
    ]);
    usage_of(reader, searcher, &query, Need::Rows)
}

/// The usage of the session records `query` matches, as much as `need`
/// asks: with [`Need::Sums`], the sums of each session a report counts
/// alone and the rows of the others; else every session's rows.
///
/// Everything is read from columns ([`crate::index::schema`]): the doc
/// store's blocks hold messages too, so reading each record from it read
/// most of the store. Each segment's columns are read on a thread of their
/// own, a column's values in its dictionary's order; a stored value met
/// again (in another segment, or another file of a copied folder) is
/// read once and its rows shared
/// ([docs/performance.md](../../docs/performance.md#what-pi-cost)).
fn usage_of(
    reader: &Reader,
    searcher: &Searcher,
    query: &dyn tantivy::query::Query,
    need: Need,
) -> Result<UsageData, IndexError> {
    use rayon::prelude::*;
    let err = |e| tantivy_err(&reader.pi.dir, e);
    let families = reader.families(searcher)?;
    let mut addrs: Vec<tantivy::DocAddress> = searcher
        .search(query, &tantivy::collector::DocSetCollector)
        .map_err(err)?
        .into_iter()
        .collect();
    addrs.sort_unstable();
    let mut by_segment: Vec<(u32, Vec<tantivy::DocId>)> = Vec::new();
    for a in addrs {
        match by_segment.last_mut() {
            Some((ord, docs)) if *ord == a.segment_ord => docs.push(a.doc_id),
            _ => by_segment.push((a.segment_ord, vec![a.doc_id])),
        }
    }
    let mut segments: Vec<Segment> = by_segment
        .par_iter()
        .map(|(ord, docs)| read_meta(searcher.segment_reader(*ord), docs, need == Need::Sums))
        .collect::<tantivy::Result<_>>()
        .map_err(err)?;
    // Whose rows are read: every session's for `Need::Rows`; else those
    // a report counts in a group, and those without sums.
    let ids = Ids::count(
        segments
            .iter()
            .flat_map(|s| &s.sessions)
            .map(|r| (None, r.session_id.as_deref().unwrap_or_default())),
    );
    let rows_for: Vec<Vec<bool>> = segments
        .iter()
        .map(|seg| {
            seg.sessions
                .iter()
                .map(|r| {
                    let id = r.session_id.as_deref().unwrap_or_default();
                    need == Need::Rows
                        || r.sums.is_none()
                        || group_of(families.family_of(r.key), id, ids.shared(None, id)).is_some()
                })
                .collect()
        })
        .collect();
    drop(ids);
    segments
        .par_iter_mut()
        .zip(&by_segment)
        .zip(&rows_for)
        .map(|((seg, (ord, docs)), rows_for)| {
            read_rows(searcher.segment_reader(*ord), docs, rows_for, seg)
        })
        .collect::<tantivy::Result<()>>()
        .map_err(err)?;
    // Each distinct stored value once, in the order first met: where it
    // is (its segment and its place there). A value that did not read is
    // one of its own.
    let mut distinct: Vec<(usize, usize)> = Vec::new();
    let mut numbers: HashMap<Sampled, usize, Fast> = HashMap::default();
    let numbered: Vec<Vec<usize>> = segments
        .iter()
        .enumerate()
        .map(|(s, seg)| {
            seg.values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let mut add = || {
                        distinct.push((s, i));
                        distinct.len() - 1
                    };
                    match v {
                        Some((v, hash)) => *numbers.entry(Sampled(v, *hash)).or_insert_with(add),
                        None => add(),
                    }
                })
                .collect()
        })
        .collect();
    drop(numbers);
    let mut out = Collect::default();
    let shared: Vec<Arc<Recorded>> = distinct
        .into_iter()
        .map(|(s, i)| out.share(segments[s].values[i].as_ref().map(|(v, _)| v.clone())))
        .collect();
    for (seg, numbers) in segments.into_iter().zip(&numbered) {
        for r in seg.sessions {
            let rows = match (r.value, r.sums) {
                (Some(v), _) => shared[numbers[v]].clone(),
                (None, Some(m)) if !r.rows => out.share_sums(&seg.sums[m]),
                _ => Arc::default(),
            };
            out.push(SessionSpend {
                key: r.key,
                host: None,
                family: families.family_of(r.key),
                age: families.age(r.key),
                session_id: r.session_id.unwrap_or_default(),
                name: r.name,
                cwd: r.cwd,
                path: r.path.unwrap_or_default(),
                rows,
            });
        }
    }
    Ok(out.finish())
}

/// A stored value as a key, with the hash of its length and ends
/// ([`sample`]): two values differ there unless one is a copy of the
/// other, which equality (every byte) then tells.
struct Sampled<'a>(&'a Value, u64);

impl PartialEq for Sampled<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.1 == o.1 && self.0.bytes() == o.0.bytes()
    }
}

impl Eq for Sampled<'_> {}

impl std::hash::Hash for Sampled<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.1);
    }
}

/// The hash of a value's length and ends, not of every byte.
fn sample(v: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    const END: usize = 64;
    let mut h = Fast::default().build_hasher();
    h.write_usize(v.len());
    h.write(&v[..v.len().min(END)]);
    h.write(&v[v.len().saturating_sub(END)..]);
    h.finish()
}

/// The hasher of the map of stored values.
type Fast = foldhash::fast::FixedState;

/// What a session's columns give a report.
#[derive(Default)]
struct Read {
    key: u64,
    path: Option<String>,
    session_id: Option<String>,
    name: Option<String>,
    cwd: Option<String>,
    /// Its stored value: an index into [`Segment::values`].
    value: Option<usize>,
    /// Its sums: an index into [`Segment::sums`].
    sums: Option<usize>,
    /// Whether its rows were read.
    rows: bool,
}

/// The sessions of one segment, and its distinct stored values.
#[derive(Default)]
struct Segment {
    sessions: Vec<Read>,
    /// Each distinct value of the sums (read with [`Need::Sums`] only).
    sums: Vec<Sums>,
    /// Each value, its head read, and the hash of its ends ([`sample`]);
    /// `None`: one that did not read.
    values: Vec<Option<(Value, u64)>>,
}

/// The columns of the session documents `docs` (ascending) of `seg`
/// but their rows ([`read_rows`]); their sums too with `sums`.
fn read_meta(seg: &SegmentReader, docs: &[DocId], sums: bool) -> tantivy::Result<Segment> {
    let ff = seg.fast_fields();
    let keys = ff.u64("session_key")?;
    let mut sessions: Vec<Read> = docs
        .iter()
        .map(|&d| Read {
            key: keys.first(d).unwrap_or(0),
            ..Read::default()
        })
        .collect();
    let text = |b: &[u8]| Some(String::from_utf8_lossy(b).into_owned());
    each_value(ff.str("file")?, docs, |i, b| sessions[i].path = text(b))?;
    each_value(ff.str("session_id")?, docs, |i, b| {
        sessions[i].session_id = text(b)
    })?;
    each_value(ff.str("session_name")?, docs, |i, b| {
        sessions[i].name = text(b)
    })?;
    each_value(ff.str("cwd")?, docs, |i, b| sessions[i].cwd = text(b))?;
    let mut out = Segment {
        sessions,
        ..Segment::default()
    };
    if sums {
        if let Some(column) = ff.str("usage_sums")? {
            let (store, ranges) = join(&column, docs, |i, v| out.sessions[i].sums = Some(v))?;
            // A value that does not read is no sums: the rows are read.
            let read: Vec<Option<Sums>> = ranges
                .into_iter()
                .map(|r| Sums::read(store.get(r?)?))
                .collect();
            for s in &mut out.sessions {
                s.sums = s.sums.filter(|&v| read[v].is_some());
            }
            out.sums = read.into_iter().map(Option::unwrap_or_default).collect();
        }
    }
    Ok(out)
}

/// The rows of the documents of `docs` (ascending) of `seg` that
/// `rows_for` names, into `out` ([`read_meta`]'s).
fn read_rows(
    seg: &SegmentReader,
    docs: &[DocId],
    rows_for: &[bool],
    out: &mut Segment,
) -> tantivy::Result<()> {
    let Some(column) = seg.fast_fields().str("usage")? else {
        return Ok(());
    };
    let mut picked: Vec<DocId> = Vec::new();
    let mut at: Vec<usize> = Vec::new();
    for (i, (&d, &want)) in docs.iter().zip(rows_for).enumerate() {
        out.sessions[i].rows = want;
        if want {
            picked.push(d);
            at.push(i);
        }
    }
    let sessions = &mut out.sessions;
    let (store, ranges) = join(&column, &picked, |i, v| sessions[at[i]].value = Some(v))?;
    out.values = ranges
        .into_iter()
        .map(|r| {
            let r = r?;
            let hash = sample(store.get(r.clone())?);
            Some((Value::read_in(&store, r)?, hash))
        })
        .collect();
    Ok(())
}

/// The values of the documents `docs` (ascending) in `column` (each cut
/// into chunks, [`crate::index::spent::chunks`]), each distinct value
/// once: `f` is called with each document's place in `docs` and its
/// value's number; the buffer and where each value is in it.
///
/// A value's chunks are the document's ordinals in order; documents with
/// the same ordinals hold the same value, read once.
fn join(
    column: &StrColumn,
    docs: &[DocId],
    mut f: impl FnMut(usize, usize),
) -> tantivy::Result<Joined> {
    let mut numbers: HashMap<Vec<u64>, usize, Fast> = HashMap::default();
    let mut wanted: Vec<(u64, usize)> = Vec::new();
    // Each value's number of chunks.
    let mut sizes: Vec<usize> = Vec::new();
    for (i, &d) in docs.iter().enumerate() {
        let ords: Vec<u64> = column.term_ords(d).collect();
        if ords.is_empty() {
            continue;
        }
        let next = numbers.len();
        let v = *numbers.entry(ords).or_insert_with_key(|ords| {
            wanted.extend(ords.iter().map(|&o| (o, next)));
            sizes.push(ords.len());
            next
        });
        f(i, v);
    }
    let mut slots = Slots::new(&sizes);
    each_term(column, wanted, |v, b| slots.push(v, b))?;
    Ok(slots.finish())
}

/// Call `f` with the place in `docs` and the value of every document of
/// `docs` that has one in `column` (a column of one value a document).
fn each_value(
    column: Option<StrColumn>,
    docs: &[DocId],
    f: impl FnMut(usize, &[u8]),
) -> tantivy::Result<()> {
    let Some(column) = column else {
        return Ok(());
    };
    let wanted = docs
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| column.term_ords(d).next().map(|ord| (ord, i)))
        .collect();
    each_term(&column, wanted, f)
}

/// Call `f` with the number and the term of every (term ordinal, number)
/// pair of `wanted`, in the order of the column's dictionary: one pass
/// over it, a term read once however many pairs name it, and the terms of
/// one number in ordinal order.
fn each_term(
    column: &StrColumn,
    mut wanted: Vec<(u64, usize)>,
    mut f: impl FnMut(usize, &[u8]),
) -> tantivy::Result<()> {
    wanted.sort_unstable();
    let ords: Vec<u64> = wanted.iter().map(|&(ord, _)| ord).collect();
    let mut at = wanted.iter();
    column.dictionary().sorted_ords_to_term_cb(&ords, |b| {
        if let Some(&(_, i)) = at.next() {
            f(i, b);
        }
    })?;
    Ok(())
}
