//! A query's segments searched at once, one thread each (up to the
//! machine's cores), their results merged as tantivy merges them.
//!
//! A full build leaves a few segments of about the same size
//! ([`crate::index::writer`]'s `FewSegments`), so a costly query (a
//! phrase of common words reads positions for every document holding
//! both, and spends most of a fresh search in tantivy's phrase scorer,
//! [docs/performance.md](../../docs/performance.md#local-search)) takes
//! about the time of its largest segment instead of their sum. tantivy can do the same through an executor set on the
//! index, but that starts its thread pool whenever an index is opened;
//! here the threads are started by the search that needs them, and end
//! with it.
//!
//! Only large segments are searched on several threads: on small ones
//! the threads' page faults on the same mappings and the query's serial
//! setup and snippets cost more than they save
//! ([docs/performance.md](../../docs/performance.md#ten-times-the-sessions)).

use std::sync::OnceLock;

use tantivy::collector::Collector;
use tantivy::query::{EnableScoring, Query};
use tantivy::Searcher;

/// The fewest documents a segment holds for a search to give it a thread
/// of its own (see the module documentation).
pub const LARGE_SEGMENT: u32 = 200_000;

/// `searcher.search(query, collector)`, its segments on up to as many
/// threads as there are cores and segments of [`LARGE_SEGMENT`]
/// documents or more: the same fruit, merged in segment order.
pub fn search<C: Collector>(
    searcher: &Searcher,
    query: &dyn Query,
    collector: &C,
) -> tantivy::Result<C::Fruit> {
    search_on(searcher, query, collector, threads(searcher, LARGE_SEGMENT))
}

/// Threads for a search of `searcher`'s segments: one per core, at most
/// one per segment of `large` documents or more. The cores are asked
/// once per process (Rust reads the cgroup's quota files to answer), and
/// only when two segments are large.
fn threads(searcher: &Searcher, large: u32) -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    let large = searcher
        .segment_readers()
        .iter()
        .filter(|r| r.max_doc() >= large)
        .count();
    if large < 2 {
        return 1;
    }
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    cores.min(large).max(1)
}

/// [`search`] on `threads` threads.
fn search_on<C: Collector>(
    searcher: &Searcher,
    query: &dyn Query,
    collector: &C,
    threads: usize,
) -> tantivy::Result<C::Fruit> {
    let readers = searcher.segment_readers();
    let threads = threads.min(readers.len());
    if threads < 2 {
        return searcher.search(query, collector);
    }
    let scoring = if collector.requires_scoring() {
        EnableScoring::enabled_from_searcher(searcher)
    } else {
        EnableScoring::disabled_from_searcher(searcher)
    };
    let weight = query.weight(scoring)?;
    collector.check_schema(searcher.schema())?;
    let weight = &*weight;
    // Thread t takes segments t, t + threads, ...
    let share = |t: usize| -> tantivy::Result<Vec<_>> {
        (t..readers.len())
            .step_by(threads)
            .map(|ord| {
                let fruit = collector.collect_segment(weight, ord as u32, &readers[ord])?;
                Ok((ord, fruit))
            })
            .collect()
    };
    let mut fruits = std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads)
            .map(|t| scope.spawn(move || share(t)))
            .collect();
        let mut all = share(0)?;
        for other in others {
            all.extend(
                other
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))?,
            );
        }
        tantivy::Result::Ok(all)
    })?;
    fruits.sort_by_key(|(ord, _)| *ord);
    collector.merge_fruits(fruits.into_iter().map(|(_, f)| f).collect())
}

#[cfg(test)]
mod tests {
    use tantivy::collector::{Count, TopDocs};
    use tantivy::query::QueryParser;
    use tantivy::schema::{Schema, STORED, TEXT};
    use tantivy::{doc, Index, IndexWriter};

    /// Three segments: the same hits, scores and count as one thread's.
    #[test]
    fn segments_searched_at_once_give_what_one_thread_gives() {
        let mut schema = Schema::builder();
        let body = schema.add_text_field("body", TEXT | STORED);
        let index = Index::create_in_ram(schema.build());
        let mut writer: IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
        for segment in 0..3 {
            for i in 0..200 {
                let text = match (segment + i) % 5 {
                    0 => "the file is here",
                    1 => "the other file",
                    2 => "file the report",
                    _ => "nothing to see",
                };
                writer
                    .add_document(doc!(body => format!("{text} {i} {segment}")))
                    .unwrap();
            }
            writer.commit().unwrap();
        }
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.segment_readers().len(), 3);
        // Every segment is small: one thread, as tantivy's search.
        assert_eq!(super::threads(&searcher, super::LARGE_SEGMENT), 1);
        let cores = std::thread::available_parallelism().unwrap().get();
        assert_eq!(super::threads(&searcher, 200), cores.min(3));
        for q in ["\"the file\"", "file", "the -other"] {
            let query = QueryParser::for_index(&index, vec![body])
                .parse_query(q)
                .unwrap();
            let collector = (TopDocs::with_limit(30).order_by_score(), Count);
            let one = searcher.search(&query, &collector).unwrap();
            for threads in [2, 3] {
                let many = super::search_on(&searcher, &query, &collector, threads).unwrap();
                assert_eq!(one, many, "{q} on {threads} threads");
            }
            assert!(one.1 > 0, "{q}");
        }
    }
}
