//! What Pi cost, as the local index holds it: every session's usage,
//! read with its record ([`crate::index::spent`]), for the report of
//! [`crate::read::usage`].

use std::collections::HashMap;

use tantivy::Searcher;

use super::reader::Reader;
use crate::index::{tantivy_err, IndexError};
use crate::read::usage::{SessionSpend, UsageData};

/// Every session's usage in the state `searcher` shows, read with its
/// record (one stored value a session, [`crate::index::spent`]).
pub fn usage_data(reader: &Reader, searcher: &Searcher) -> Result<UsageData, IndexError> {
    use tantivy::schema::Value;
    let err = |e| tantivy_err(&reader.pi.dir, e);
    let f = &reader.pi.fields;
    let families = reader.families(searcher)?;
    let query = tantivy::query::TermQuery::new(
        tantivy::Term::from_field_text(f.doc_type, crate::index::schema::SESSION_DOC),
        tantivy::schema::IndexRecordOption::Basic,
    );
    let mut addrs: Vec<tantivy::DocAddress> = searcher
        .search(&query, &tantivy::collector::DocSetCollector)
        .map_err(err)?
        .into_iter()
        .collect();
    addrs.sort_unstable();
    let mut out = UsageData::default();
    let mut ids: HashMap<String, u32> = HashMap::new();
    for a in addrs {
        let d: tantivy::TantivyDocument = searcher.doc(a).map_err(err)?;
        let text = |field| {
            d.get_first(field)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        let path = text(f.path).unwrap_or_default();
        let key = crate::index::schema::session_key(&path);
        let stored = d
            .get_first(f.usage)
            .and_then(|v| v.as_str())
            .and_then(crate::index::spent::Rows::decode)
            .unwrap_or_default();
        // The session's buckets, as the report numbers them.
        let global: Vec<u32> = stored
            .buckets
            .iter()
            .map(|b| {
                let next = out.buckets.len() as u32;
                *ids.entry(b.clone()).or_insert_with(|| {
                    out.buckets.push(b.clone());
                    next
                })
            })
            .collect();
        let mut rows = stored.rows;
        for r in &mut rows {
            r.bucket = global.get(r.bucket as usize).copied().unwrap_or(0);
        }
        out.sessions.push(SessionSpend {
            key,
            family: families.family_of(key),
            age: families.age(key),
            session_id: text(f.session_id).unwrap_or_default(),
            name: text(f.session_name),
            cwd: text(f.cwd),
            path,
            rows,
        });
    }
    Ok(out)
}
