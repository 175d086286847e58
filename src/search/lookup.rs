//! Finding sessions and reading their messages back: a `show` argument
//! resolved, a session by its key, path or id, every session listed, a
//! session's messages whole or a page at a time.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, Searcher, TantivyDocument, Term};

use super::error::LookupError;
use super::messages::MessageReader;
use super::reader::Reader;
use crate::index::schema::SESSION_DOC;
use crate::index::stored::StoredSession;
use crate::index::{all_terms, messages_only, sess_query, tantivy_err, IndexError};
use crate::pi::Role;
use crate::read::{SessionKey, SessionRow, StoredDoc};

/// Resolve a `show` argument: a session file path, a session id, or a
/// unique prefix of an id.
pub fn resolve_session(
    r: &Reader,
    searcher: &Searcher,
    arg: &str,
) -> Result<SessionKey, LookupError> {
    let f = &r.pi.fields;
    if arg.trim().is_empty() {
        // Every id starts with "": never a prefix of them all.
        return Err(LookupError::Empty);
    }
    let as_path = Path::new(arg);
    if as_path.exists() {
        let canon = std::fs::canonicalize(as_path)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| arg.to_owned());
        if count_term(r, searcher, f.path, &canon)? > 0 {
            return Ok(SessionKey::Path(canon));
        }
    }
    if count_term(r, searcher, f.path, arg)? > 0 {
        return Ok(SessionKey::Path(arg.to_owned()));
    }
    if count_term(r, searcher, f.session_id, arg)? > 0 {
        return Ok(SessionKey::Id(arg.to_owned()));
    }
    let ids = terms_with_prefix(r, searcher, f.session_id, arg, 6)?;
    match ids.len() {
        0 => Err(LookupError::NotFound(arg.to_owned())),
        1 => Ok(SessionKey::Id(ids.into_iter().next().unwrap_or_default())),
        n => Err(LookupError::Ambiguous {
            prefix: arg.to_owned(),
            count: n,
            examples: ids.into_iter().take(5).collect::<Vec<_>>().join(", "),
        }),
    }
}

fn count_term(
    r: &Reader,
    searcher: &Searcher,
    field: Field,
    value: &str,
) -> Result<u64, IndexError> {
    let term = Term::from_field_text(field, value);
    let mut n = 0;
    for seg in searcher.segment_readers() {
        let inv = seg
            .inverted_index(field)
            .map_err(|e| tantivy_err(&r.pi.dir, e))?;
        n += u64::from(
            inv.doc_freq(&term)
                .map_err(|e| tantivy_err(&r.pi.dir, e.into()))?,
        );
    }
    Ok(n)
}

/// Distinct terms of a raw field that start with `prefix`, up to `limit`
/// (plus one, so callers can tell "more").
pub fn terms_with_prefix(
    r: &Reader,
    searcher: &Searcher,
    field: Field,
    prefix: &str,
    limit: usize,
) -> Result<BTreeSet<String>, IndexError> {
    let mut out = BTreeSet::new();
    for seg in searcher.segment_readers() {
        let inv = seg
            .inverted_index(field)
            .map_err(|e| tantivy_err(&r.pi.dir, e))?;
        let mut stream = inv
            .terms()
            .range()
            .ge(prefix.as_bytes())
            .into_stream()
            .map_err(|e| tantivy_err(&r.pi.dir, e.into()))?;
        while stream.advance() {
            let key = stream.key();
            if !key.starts_with(prefix.as_bytes()) {
                break;
            }
            out.insert(String::from_utf8_lossy(key).into_owned());
            if out.len() > limit {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// Every document matching `query`, read from the doc store and
/// turned into `T` by `read`.
fn matching<T>(
    r: &Reader,
    searcher: &Searcher,
    query: &dyn tantivy::query::Query,
    mut read: impl FnMut(DocAddress, &TantivyDocument) -> Result<T, IndexError>,
) -> Result<Vec<T>, IndexError> {
    let err = |e| tantivy_err(&r.pi.dir, e);
    let mut addrs: Vec<DocAddress> = searcher
        .search(query, &DocSetCollector)
        .map_err(err)?
        .into_iter()
        .collect();
    addrs.sort_unstable();
    addrs
        .into_iter()
        .map(|a| read(a, &searcher.doc::<TantivyDocument>(a).map_err(err)?))
        .collect()
}

/// The session records `key` names (a session id may name several
/// files: a copy, a fork kept under its id).
fn sessions_named(
    r: &Reader,
    searcher: &Searcher,
    key: &SessionKey,
) -> Result<Vec<SessionRow>, IndexError> {
    let f = &r.pi.fields;
    let records = all_terms(&[
        (f.doc_type, SESSION_DOC),
        match key {
            SessionKey::Path(p) => (f.path, p.as_str()),
            SessionKey::Id(id) => (f.session_id, id.as_str()),
        },
    ]);
    matching(r, searcher, &records, |_, d| {
        Ok(SessionRow::from(StoredSession::of(&r.pi.fields, d)))
    })
}

/// Every message of a session, in file order (then role order within
/// a line). A session id may name several files (a copy, a fork kept
/// under its id): all of them, by path.
pub fn session_documents(
    r: &Reader,
    searcher: &Searcher,
    key: &SessionKey,
) -> Result<Vec<StoredDoc>, IndexError> {
    let sessions = sessions_named(r, searcher, key)?;
    let keys: Vec<u64> = sessions.iter().map(|s| s.key).collect();
    let addrs = message_addresses(r, searcher, &keys)?;
    documents_at(r, searcher, addrs.into_iter().flatten())
}

/// The addresses of the messages of each session of `keys` (session
/// keys), in index order, found in one pass over the sessions' column:
/// a query for one session's key scans that whole column, so a push of
/// every session asked it once per session (a tenth of the push's CPU
/// at 2,118 sessions).
pub fn message_addresses(
    r: &Reader,
    searcher: &Searcher,
    keys: &[u64],
) -> Result<Vec<Vec<DocAddress>>, IndexError> {
    let err = |e| tantivy_err(&r.pi.dir, e);
    // Looked up once for every message of the index: foldhash, not
    // SipHash (the keys are the index's own session keys).
    let at: HashMap<u64, usize, foldhash::fast::RandomState> =
        keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let mut addrs: Vec<Vec<DocAddress>> = vec![Vec::new(); keys.len()];
    let query = messages_only(&r.pi.fields, Box::new(tantivy::query::AllQuery));
    let weight = tantivy::query::Query::weight(
        &query,
        tantivy::query::EnableScoring::disabled_from_searcher(searcher),
    )
    .map_err(err)?;
    for (ord, seg) in searcher.segment_readers().iter().enumerate() {
        let sess = seg.fast_fields().u64("sess").map_err(err)?;
        // A weight's own walk includes deleted documents (a collector
        // leaves them out).
        let alive = seg.alive_bitset();
        weight
            .for_each_no_score(seg, &mut |docs| {
                for &doc in docs {
                    if alive.is_some_and(|a| !a.is_alive(doc)) {
                        continue;
                    }
                    if let Some(&i) = sess.first(doc).and_then(|k| at.get(&k)) {
                        addrs[i].push(DocAddress::new(ord as u32, doc));
                    }
                }
            })
            .map_err(err)?;
    }
    Ok(addrs)
}

/// The messages at `addrs` (in index order), in file order (then role
/// order within a line): [`session_documents`]'
/// list of the sessions they belong to.
pub fn documents_at(
    r: &Reader,
    searcher: &Searcher,
    addrs: impl IntoIterator<Item = DocAddress>,
) -> Result<Vec<StoredDoc>, IndexError> {
    let err = |e| tantivy_err(&r.pi.dir, e);
    let mut reader = MessageReader::new(r, searcher);
    let mut docs = addrs
        .into_iter()
        .map(|a| reader.read(a, &searcher.doc::<TantivyDocument>(a).map_err(err)?))
        .collect::<Result<Vec<StoredDoc>, IndexError>>()?;
    docs.sort_by(|a, b| (&a.path, a.line, a.role).cmp(&(&b.path, b.line, b.role)));
    Ok(docs)
}

/// `limit` messages after `offset` of [`session_documents`]'s list
/// (only those on the active branch with `active_only`), and how many
/// the whole list holds. The order is found from the columns (a line's
/// offset orders it as its number does), and only the page's
/// documents are read from the store: a session of 50,000 messages
/// costs its columns and one page, not 50,000 stored texts.
pub fn session_documents_page(
    r: &Reader,
    searcher: &Searcher,
    key: &SessionKey,
    active_only: bool,
    offset: usize,
    limit: usize,
) -> Result<(usize, Vec<StoredDoc>), IndexError> {
    let f = &r.pi.fields;
    let sessions = sessions_named(r, searcher, key)?;
    let err = |e| tantivy_err(&r.pi.dir, e);
    let mut reader = MessageReader::new(r, searcher);
    // (the session's path, the line's offset, the role, the address):
    // in address order within a session, so that the stable sort keeps
    // the order `session_documents` gives messages that tie.
    let mut order: Vec<(usize, u64, Role, DocAddress)> = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        let query = messages_only(f, Box::new(sess_query(f, s.key)));
        let mut addrs: Vec<DocAddress> = searcher
            .search(&query, &DocSetCollector)
            .map_err(err)?
            .into_iter()
            .collect();
        addrs.sort_unstable();
        for a in addrs {
            let c = reader.columns(a.segment_ord)?;
            let doc = a.doc_id;
            if active_only && c.active.first(doc).is_some_and(|x| x == 0) {
                continue;
            }
            let role = c
                .role
                .first(doc)
                .and_then(Role::from_rank)
                .unwrap_or(Role::User);
            order.push((i, c.offset.first(doc).unwrap_or(0), role, a));
        }
    }
    order.sort_by(|a, b| (&sessions[a.0].path, a.1, a.2).cmp(&(&sessions[b.0].path, b.1, b.2)));
    let total = order.len();
    let page = order
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(_, _, _, a)| reader.read(a, &searcher.doc::<TantivyDocument>(a).map_err(err)?))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((total, page))
}

/// The session with key `sess`, if the index holds it.
pub fn session_by_key(
    r: &Reader,
    searcher: &Searcher,
    sess: u64,
) -> Result<Option<SessionRow>, IndexError> {
    Ok(r.pi.stored_session(searcher, sess)?.map(SessionRow::from))
}

/// Every session, newest activity first.
pub fn sessions(r: &Reader, searcher: &Searcher) -> Result<Vec<SessionRow>, IndexError> {
    let f = &r.pi.fields;
    let query = TermQuery::new(
        Term::from_field_text(f.doc_type, SESSION_DOC),
        IndexRecordOption::Basic,
    );
    let mut out = matching(r, searcher, &query, |_, d| {
        Ok(SessionRow::from(StoredSession::of(&r.pi.fields, d)))
    })?;
    out.sort_by(|a, b| b.last_ms.cmp(&a.last_ms).then_with(|| a.path.cmp(&b.path)));
    Ok(out)
}

/// The sessions whose header id is exactly `id` (a copy of a file
/// keeps its id: possibly several, by path), newest activity first.
/// Unlike [`resolve_session`], nothing of `id` is read as a
/// path or a prefix: what a web address may name.
pub fn sessions_with_id(
    r: &Reader,
    searcher: &Searcher,
    id: &str,
) -> Result<Vec<SessionRow>, IndexError> {
    let mut out = sessions_named(r, searcher, &SessionKey::Id(id.to_owned()))?;
    out.sort_by(|a, b| b.last_ms.cmp(&a.last_ms).then_with(|| a.path.cmp(&b.path)));
    Ok(out)
}

/// The summary of the session stored at `path`.
pub fn session_by_path(
    r: &Reader,
    searcher: &Searcher,
    path: &str,
) -> Result<Option<SessionRow>, IndexError> {
    Ok(r.pi
        .stored_session_at(searcher, path)?
        .map(SessionRow::from))
}

/// Indexed model names containing any of `fragments` (case-insensitive).
pub fn matching_models(
    r: &Reader,
    searcher: &Searcher,
    fragments: &[String],
) -> Result<Vec<String>, IndexError> {
    if fragments.is_empty() {
        return Ok(Vec::new());
    }
    let all: BTreeSet<String> =
        terms_with_prefix(r, searcher, r.pi.fields.models, "", usize::MAX - 1)?;
    Ok(all
        .into_iter()
        .filter(|m| {
            let lower = m.to_lowercase();
            fragments.iter().any(|frag| lower.contains(frag.as_str()))
        })
        .collect())
}
