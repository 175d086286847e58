//! Searching: a parsed query plus filters in, ranked hits with snippets out.

use tantivy::collector::sort_key::{SortBySimilarityScore, SortByStaticFastValue};
use tantivy::collector::{Count, TopDocs};
use tantivy::query::Query;
use tantivy::{DateTime, DocAddress, Order, Searcher, TantivyDocument};

use super::error::SearchError;
use super::messages::MessageReader;
use super::query::{compile, Constraint, FieldMap, Sort};
use super::reader::Reader;
use super::snippet::{head, Snippets};
use super::top::{best_first, BestFirst, ByTime};
use crate::index::saved::groups::Groups;
use crate::index::schema::RECENCY;
use crate::index::{tantivy_err, Fields, IndexError};
use crate::output::text::lead;
use crate::read::{Hit, SearchRequest, SearchResult};

/// What the copy groups the build saved do for a search.
enum Saved {
    /// No message has a copy, or every copy is asked for: nothing to
    /// merge.
    NoCopies,
    /// Every copy of a message matches alike: skip those behind each
    /// group's oldest.
    Skip(std::sync::Arc<Groups>),
    /// None saved for this state, or the query asks for what copies may
    /// differ in: merge at search time.
    Unusable,
}

/// `collector`'s fruit for `query`, the copies behind another of their
/// group left out when `skip` has them.
fn collect<C: tantivy::collector::Collector>(
    searcher: &Searcher,
    query: &dyn Query,
    collector: C,
    skip: &Option<std::sync::Arc<Groups>>,
) -> tantivy::Result<C::Fruit> {
    match skip {
        Some(groups) => super::parallel::search(
            searcher,
            query,
            &super::skip::Skip {
                inner: collector,
                groups: groups.clone(),
            },
        ),
        None => super::parallel::search(searcher, query, &collector),
    }
}

/// What the saved copy groups do for a search asking `constraints`
/// (nothing is read when every copy is asked for).
fn saved_groups(
    r: &Reader,
    searcher: &Searcher,
    req: &SearchRequest,
    constraints: &[Constraint],
    map: &FieldMap<'_>,
) -> Saved {
    if req.copies {
        return Saved::NoCopies;
    }
    match r.copy_groups(searcher) {
        Some(g) if g.is_empty() => Saved::NoCopies,
        Some(g) if super::skip::decide(&g, constraints, map) => Saved::Skip(g),
        _ => Saved::Unusable,
    }
}

/// Whether `req` merges copies by the groups the build saved (see
/// [`crate::index::saved::groups`]) rather than at search time: for tests
/// that must know which way a search went.
pub fn merges_by_saved_groups(
    r: &Reader,
    searcher: &Searcher,
    req: &SearchRequest,
) -> Result<bool, SearchError> {
    let mut map = FieldMap::new(r, searcher)?;
    let compiled = compile(&req.query, &req.filters, &req.now, &mut map)?;
    Ok(matches!(
        saved_groups(r, searcher, req, &compiled.constraints, &map),
        Saved::Skip(_)
    ))
}

/// Run a search.
pub fn search(
    r: &Reader,
    searcher: &Searcher,
    req: &SearchRequest,
) -> Result<SearchResult, SearchError> {
    super::query::limits::check(&req.query)?;
    super::query::limits::check_offset(req.offset as u64)?;
    // No page is longer than the index has documents: nothing is
    // allocated for a count a client chose past that.
    let docs = usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX);
    let req = &SearchRequest {
        limit: req.limit.min(docs),
        ..req.clone()
    };
    let mut map = FieldMap::new(r, searcher)?;
    let compiled = compile(&req.query, &req.filters, &req.now, &mut map)?;
    let saved = saved_groups(r, searcher, req, &compiled.constraints, &map);
    match ranked(r, searcher, req, &compiled, saved)? {
        Some(result) => Ok(result),
        // The saved groups named a copy the index does not hold (a
        // damaged file): merged at search time, as without the file.
        None => Ok(ranked(r, searcher, req, &compiled, Saved::Unusable)?
            .expect("merging at search time reads no saved groups")),
    }
}

/// The page `req` asks for, its copies merged as `saved` says: `None`
/// when the saved groups turn out damaged.
fn ranked(
    r: &Reader,
    searcher: &Searcher,
    req: &SearchRequest,
    compiled: &super::query::Compiled,
    saved: Saved,
) -> Result<Option<SearchResult>, SearchError> {
    let query: &dyn Query = &*compiled.query;
    let err = |e| SearchError::Index(tantivy_err(&r.pi.dir, e));

    // The cut at offset + limit is made in the final order, by the
    // collector: sorting after a cut by score alone would page through
    // a group of equal scores (the same text in many sessions) in a
    // different order at every offset. Ties of the whole key fall to
    // the document's address, ascending, which tantivy always applies.
    // Forks hold copies of their parent's messages: merged into one
    // hit each, unless every copy is asked for.
    // With the copy groups the build saved, a query that every copy of
    // a message matches alike skips the copies behind each group's
    // oldest: the usual path, pruning and all (see super::groups).
    let mut skip = None;
    let families = match saved {
        Saved::NoCopies => None,
        Saved::Skip(g) => {
            skip = Some(g);
            None
        }
        Saved::Unusable => Some(r.families(searcher)?).filter(|f| f.any()),
    };
    if let Some(families) = families {
        let (ranked, total) = super::copies::ranked(
            r, searcher, query, req.sort, req.limit, req.offset, &families,
        )?;
        let mut snippets = HitMaker::new(r, searcher, query, req.snippet_chars)?;
        let mut reader = MessageReader::new(r, searcher);
        let mut hits = Vec::with_capacity(ranked.len());
        for one in ranked {
            let mut hit = snippets.hit(r, &mut reader, one.addr, one.score)?;
            hit.copies = super::copies::read_copies(r, searcher, &mut reader, &one.copies)?;
            hits.push(hit);
        }
        return Ok(Some(SearchResult {
            hits,
            total,
            more: false,
            warnings: compiled.warnings.clone(),
        }));
    }
    let top = TopDocs::with_limit(req.limit.max(1)).and_offset(req.offset);
    // The top hits and the total: in one pass over the matches, or,
    // for words that prune, the page through pruning and the count
    // from the query.
    let (mut ranked, total): (Vec<(f32, DocAddress)>, usize) = match req.sort {
        Sort::Relevance if BestFirst::prunes(query) => {
            let k = req.offset.saturating_add(req.limit.max(1));
            let top = best_first(searcher, query, k, skip.clone()).map_err(err)?;
            let total = match &skip {
                Some(g) => g.matching_ahead(searcher, query),
                None => query.count(searcher),
            }
            .map_err(err)?;
            let page = top.into_iter().skip(req.offset);
            (page.map(|(s, _, a)| (s, a)).collect(), total)
        }
        Sort::Relevance => {
            let by = (
                (SortBySimilarityScore, Order::Desc),
                (
                    SortByStaticFastValue::<DateTime>::for_field(RECENCY),
                    Order::Desc,
                ),
            );
            let (top, total) =
                collect(searcher, query, (top.order_by(by), Count), &skip).map_err(err)?;
            let v = top.into_iter().map(|((s, _), a)| (s, a)).collect();
            (v, total)
        }
        sort => {
            let oldest = sort == Sort::Oldest;
            let by = ByTime::new(req.offset.saturating_add(req.limit.max(1)), oldest)
                .with_ranks(r.time_ranks(searcher, oldest)?);
            let (top, total) = collect(searcher, query, by, &skip).map_err(err)?;
            let page = top.into_iter().skip(req.offset);
            (page.map(|(_, a)| (0.0, a)).collect(), total)
        }
    };
    ranked.truncate(req.limit);

    let mut snippets = HitMaker::new(r, searcher, query, req.snippet_chars)?;
    let mut reader = MessageReader::new(r, searcher);
    let mut hits = Vec::with_capacity(ranked.len());
    for (score, addr) in ranked {
        let mut hit = snippets.hit(r, &mut reader, addr, score)?;
        if let Some(g) = &skip {
            let sess_of = |a: DocAddress| -> Result<u64, IndexError> {
                Ok(reader
                    .columns(a.segment_ord)?
                    .sess
                    .first(a.doc_id)
                    .unwrap_or(0))
            };
            let Some(copies) = g.copies_of(addr, sess_of)? else {
                return Ok(None);
            };
            hit.copies = super::copies::saved_copies(r, searcher, &copies)?;
        }
        hits.push(hit);
    }
    Ok(Some(SearchResult {
        hits,
        total,
        more: false,
        warnings: compiled.warnings.clone(),
    }))
}

/// Hits made from document addresses: the stored message and a snippet of
/// what the query matched in it.
pub(crate) struct HitMaker<'a> {
    searcher: &'a Searcher,
    query: &'a dyn Query,
    chars: usize,
    fields: Fields,
    text: Snippets,
    /// For a message found by the text the model was sent instead of it
    /// (a `context_edit` replacement): made when first needed.
    replaced: Option<Snippets>,
}

impl<'a> HitMaker<'a> {
    pub(crate) fn new(
        r: &Reader,
        searcher: &'a Searcher,
        query: &'a dyn Query,
        chars: usize,
    ) -> Result<HitMaker<'a>, IndexError> {
        let fields = &r.pi.fields;
        let mut text = Snippets::create(searcher, query, fields.text)
            .map_err(|e| tantivy_err(&r.pi.dir, e))?;
        text.set_max_num_chars(chars);
        Ok(HitMaker {
            searcher,
            query,
            chars,
            fields: *fields,
            text,
            replaced: None,
        })
    }

    /// The hit at `addr`, with `score`.
    pub(crate) fn hit(
        &mut self,
        r: &Reader,
        reader: &mut MessageReader<'_>,
        addr: DocAddress,
        score: f32,
    ) -> Result<Hit, IndexError> {
        let err = |e| tantivy_err(&r.pi.dir, e);
        let d: TantivyDocument = self.searcher.doc(addr).map_err(err)?;
        let doc = reader.read(addr, &d)?;
        let mut snippet = self.text.snippet(&doc.text);
        if let (true, Some(r)) = (snippet.fragment().is_empty(), &doc.replacement) {
            if self.replaced.is_none() {
                let mut g = Snippets::create(self.searcher, self.query, self.fields.replacement)
                    .map_err(err)?;
                g.set_max_num_chars(self.chars);
                self.replaced = Some(g);
            }
            snippet = self.replaced.as_ref().expect("made above").snippet(r);
        }
        let (text, highlights) = if snippet.fragment().is_empty() {
            (lead(head(&doc.text), self.chars), Vec::new())
        } else {
            (
                snippet.fragment().to_owned(),
                snippet.highlighted().to_vec(),
            )
        };
        let session = reader.session_of(addr)?;
        Ok(Hit {
            doc,
            score,
            snippet: text,
            highlights,
            session,
            copies: Vec::new(),
        })
    }
}
