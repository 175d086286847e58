//! A filter on an indexed term that scores 0: a `role:` filter as the
//! postings of the role's term.
//!
//! Filters add nothing to a hit's score (see [`mod@super::compile`]). Most are
//! wrapped in tantivy's `ConstScoreQuery`, whose scorer is opaque to
//! tantivy's boolean query: an AND of words and such a filter is
//! intersected document by document. A [`FilterTerm`] hands out the
//! term's own scorer with its BM25 weight multiplied by 0, so an AND of
//! words and filter terms stays an intersection of term scorers, which
//! tantivy prunes by block maxima (the filter's are 0) when a page is
//! taken best first (the read side's private `top` module).

use tantivy::query::{BoostWeight, EnableScoring, Query, TermQuery, Weight};
use tantivy::schema::IndexRecordOption;
use tantivy::Term;

/// Documents holding `term`, every one scored 0.
#[derive(Clone, Debug)]
pub struct FilterTerm(TermQuery);

impl FilterTerm {
    /// The documents holding `term`, which must be indexed with its
    /// frequencies (as block-max pruning needs).
    pub fn new(term: Term) -> FilterTerm {
        FilterTerm(TermQuery::new(term, IndexRecordOption::WithFreqs))
    }
}

impl Query for FilterTerm {
    fn weight(&self, scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        // The boost reaches the term's scorer itself (not a wrapper), so
        // the boolean query still sees a term scorer.
        Ok(Box::new(BoostWeight::new(self.0.weight(scoring)?, 0.0)))
    }

    // No `query_terms`: a filter's term is no word to highlight.
}
