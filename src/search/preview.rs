//! The messages around a place in a session, in file order, as `pi-index
//! show --around` prints them (every branch, so a hit on an abandoned
//! branch is seen where it was said): what the picker previews.
//!
//! Only the messages shown are read from the doc store: the session's
//! documents are found by its key, put in file order by their `offset`
//! and `role` columns, and the window around the target is read whole. A
//! session of 100 MB costs its column values, not its text.

use tantivy::collector::DocSetCollector;
use tantivy::{DocAddress, Searcher};

use super::messages::MessageReader;
use super::reader::Reader;
use crate::index::{messages_only, sess_query, tantivy_err, IndexError};
use crate::read::{Preview, Target};

/// The window of `context` messages either side of `target` in the
/// session with key `sess`.
pub fn preview(
    r: &Reader,
    searcher: &Searcher,
    sess: u64,
    target: &Target,
    context: usize,
) -> Result<Preview, IndexError> {
    let pi = &r.pi;
    let err = |e| tantivy_err(&pi.dir, e);
    let query = messages_only(&pi.fields, Box::new(sess_query(&pi.fields, sess)));
    let found = searcher.search(&query, &DocSetCollector).map_err(err)?;
    // (offset, role, address) of every message: file order, then role
    // order within a line, as `show` sorts.
    let mut order: Vec<(u64, u64, DocAddress)> = Vec::with_capacity(found.len());
    let mut columns = None;
    let mut segment = u32::MAX;
    let mut addrs: Vec<DocAddress> = found.into_iter().collect();
    addrs.sort_unstable();
    for a in addrs {
        if a.segment_ord != segment {
            let ff = searcher.segment_reader(a.segment_ord).fast_fields();
            columns = Some((ff.u64("offset").map_err(err)?, ff.u64("role").map_err(err)?));
            segment = a.segment_ord;
        }
        let (offset, role) = columns.as_ref().expect("read above");
        order.push((
            offset.first(a.doc_id).unwrap_or(0),
            role.first(a.doc_id).unwrap_or(0),
            a,
        ));
    }
    order.sort_unstable();
    if order.is_empty() {
        return Ok(Preview::default());
    }
    let at = match *target {
        Target::Message { offset, role } => order
            .partition_point(|&(o, r, _)| (o, r) < (offset, role))
            .min(order.len() - 1),
        Target::Start => 0,
        Target::End => order.len() - 1,
    };
    let from = at.saturating_sub(context);
    let to = at
        .saturating_add(context)
        .saturating_add(1)
        .min(order.len());
    let mut reader = MessageReader::new(r, searcher);
    let mut docs = Vec::with_capacity(to - from);
    for &(_, _, a) in &order[from..to] {
        docs.push(reader.read_at(a)?);
    }
    Ok(Preview {
        docs,
        at: at - from,
        before: from,
        after: order.len() - to,
    })
}
