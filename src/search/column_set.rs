//! A query for documents whose u64 fast column holds one of a set of
//! values: how message documents are kept by their session's key (after a
//! `cwd:`, `session:` or `name:` filter found the sessions) or their
//! model's hash (after a `model:` filter found the names).
//!
//! tantivy runs a range on a fast column as a scan of the column; a set of
//! a few thousand keys would be a few thousand ranges, so this scans the
//! column once per segment and tests each value against the sorted set
//! (nanoseconds a document:
//! [docs/performance.md](../../docs/performance.md#local-search)).

use std::sync::Arc;

use tantivy::query::{
    BitSetDocSet, ConstScorer, EmptyScorer, EnableScoring, Explanation, Query, Scorer, Weight,
};
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED};

/// Documents whose column `field` holds one of `values`.
#[derive(Clone, Debug)]
pub struct ColumnSetQuery {
    field: String,
    values: Arc<Vec<u64>>,
}

impl ColumnSetQuery {
    /// Documents whose u64 fast column `field` holds one of `values`.
    pub fn new(field: &str, mut values: Vec<u64>) -> ColumnSetQuery {
        values.sort_unstable();
        values.dedup();
        ColumnSetQuery {
            field: field.to_owned(),
            values: Arc::new(values),
        }
    }
}

impl Query for ColumnSetQuery {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }
}

impl Weight for ColumnSetQuery {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        if self.values.is_empty() {
            return Ok(Box::new(EmptyScorer));
        }
        let Some(column) = reader.fast_fields().u64_lenient(&self.field)? else {
            return Ok(Box::new(EmptyScorer));
        };
        let column = column.0;
        let max_doc = reader.max_doc();
        let mut bits = tantivy::BitSet::with_max_value(max_doc);
        let (lo, hi) = (self.values[0], self.values[self.values.len() - 1]);
        for doc in 0..max_doc {
            for v in column.values_for_doc(doc) {
                if v >= lo && v <= hi && self.values.binary_search(&v).is_ok() {
                    bits.insert(doc);
                    break;
                }
            }
        }
        Ok(Box::new(ConstScorer::new(BitSetDocSet::from(bits), boost)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut scorer = self.scorer(reader, 1.0)?;
        if scorer.seek(doc) != doc || doc == TERMINATED {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "document {doc} does not match"
            )));
        }
        Ok(Explanation::new("ColumnSetQuery", 1.0))
    }
}
