//! What Pi cost, as the local index holds it: every session's usage,
//! read with its record ([`crate::index::spent`]), for the report of
//! [`crate::read::usage`].

use tantivy::Searcher;

use super::reader::Reader;
use crate::index::{tantivy_err, IndexError};
use crate::read::usage::{Collect, SessionSpend, UsageData};

/// What a session's record gives a report.
struct Read {
    path: String,
    session_id: String,
    name: Option<String>,
    cwd: Option<String>,
    stored: crate::index::spent::Rows,
}

/// Every session's usage in the state `searcher` shows, read with its
/// record (one stored value a session, [`crate::index::spent`]).
pub fn usage_data(reader: &Reader, searcher: &Searcher) -> Result<UsageData, IndexError> {
    let f = &reader.pi.fields;
    let query = tantivy::query::TermQuery::new(
        tantivy::Term::from_field_text(f.doc_type, crate::index::schema::SESSION_DOC),
        tantivy::schema::IndexRecordOption::Basic,
    );
    usage_of(reader, searcher, &query)
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
    usage_of(reader, searcher, &query)
}

/// The usage of the session records `query` matches.
fn usage_of(
    reader: &Reader,
    searcher: &Searcher,
    query: &dyn tantivy::query::Query,
) -> Result<UsageData, IndexError> {
    use tantivy::schema::Value;
    let err = |e| tantivy_err(&reader.pi.dir, e);
    let f = &reader.pi.fields;
    let families = reader.families(searcher)?;
    let mut addrs: Vec<tantivy::DocAddress> = searcher
        .search(query, &tantivy::collector::DocSetCollector)
        .map_err(err)?
        .into_iter()
        .collect();
    addrs.sort_unstable();
    // Each segment's records read on a thread of their own (a record is
    // a read of the document store, the most of a report's time), then
    // numbered in address order.
    let mut by_segment: Vec<Vec<tantivy::DocAddress>> = Vec::new();
    for a in addrs {
        match by_segment.last_mut() {
            Some(run) if run[0].segment_ord == a.segment_ord => run.push(a),
            _ => by_segment.push(vec![a]),
        }
    }
    let read = |a: tantivy::DocAddress| -> Result<Read, IndexError> {
        let d: tantivy::TantivyDocument = searcher.doc(a).map_err(err)?;
        let text = |field| {
            d.get_first(field)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        Ok(Read {
            path: text(f.path).unwrap_or_default(),
            session_id: text(f.session_id).unwrap_or_default(),
            name: text(f.session_name),
            cwd: text(f.cwd),
            stored: d
                .get_first(f.usage)
                .and_then(|v| v.as_str())
                .and_then(crate::index::spent::Rows::decode)
                .unwrap_or_default(),
        })
    };
    let segments: Vec<Result<Vec<Read>, IndexError>> = {
        use rayon::prelude::*;
        by_segment
            .into_par_iter()
            .map(|run| run.into_iter().map(read).collect())
            .collect()
    };
    let mut out = Collect::default();
    for segment in segments {
        for r in segment? {
            let key = crate::index::schema::session_key(&r.path);
            out.add(
                SessionSpend {
                    key,
                    host: None,
                    family: families.family_of(key),
                    age: families.age(key),
                    session_id: r.session_id,
                    name: r.name,
                    cwd: r.cwd,
                    path: r.path,
                    rows: Vec::new(),
                },
                r.stored,
            );
        }
    }
    Ok(out.finish())
}
