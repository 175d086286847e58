//! A session's place in its family as printed: its parent and forks
//! filled in from the index's [`Families`], and where a fork left its
//! parent.

use std::collections::HashMap;

use tantivy::Searcher;

use super::lookup::{session_by_key, session_by_path, session_documents};
use super::reader::Reader;
pub use crate::index::family::Families;
use crate::index::family::Link;
use crate::index::IndexError;
use crate::read::{Lineage, ParentRef, SessionRef};
use crate::read::{SessionKey, SessionRow};

/// Fill in `row.family` (its parent and forks) from `families`, reading
/// the relatives' records from `known` when there, else from the index.
pub fn annotate(
    families: &Families,
    r: &Reader,
    searcher: &Searcher,
    row: &mut SessionRow,
    known: &HashMap<u64, SessionRef>,
) -> Result<(), IndexError> {
    let name = |k: u64| -> Result<Option<SessionRef>, IndexError> {
        if let Some(r) = known.get(&k) {
            return Ok(Some(r.clone()));
        }
        Ok(session_by_key(r, searcher, k)?.map(|s| SessionRef {
            session: s.session_id,
            path: s.path,
        }))
    };
    let parent = match families.parent_of(row.key) {
        Some((Some(p), how)) => name(p)?.map(|r| ParentRef {
            session: Some(r.session),
            path: r.path,
            how,
        }),
        Some((None, how)) => row.parent_path.clone().map(|path| ParentRef {
            session: None,
            path,
            how,
        }),
        None => row.parent_path.clone().map(|path| ParentRef {
            session: None,
            path,
            how: Link::Stated,
        }),
    };
    let mut forks = Vec::new();
    for &k in families.forks_of(row.key) {
        forks.extend(name(k)?);
    }
    row.family = Some(Lineage { parent, forks });
    Ok(())
}

/// The ids and paths of `rows`, by key (what [`annotate`] reads
/// relatives from before asking the index).
pub fn refs_of(rows: &[SessionRow]) -> HashMap<u64, SessionRef> {
    rows.iter()
        .map(|r| {
            (
                r.key,
                SessionRef {
                    session: r.session_id.clone(),
                    path: r.path.clone(),
                },
            )
        })
        .collect()
}

/// The parent and forks of the session stored at `path` (`None` when no
/// such session is indexed).
pub fn lineage(r: &Reader, searcher: &Searcher, path: &str) -> Result<Option<Lineage>, IndexError> {
    let Some(mut row) = session_by_path(r, searcher, path)? else {
        return Ok(None);
    };
    annotate(
        &*r.families(searcher)?,
        r,
        searcher,
        &mut row,
        &HashMap::new(),
    )?;
    Ok(row.family)
}

/// Where the session at `path` left its parent at `parent`: the entry id
/// of its last message that the parent holds too (the same id and text).
/// `None` when they share none.
pub fn fork_point(
    r: &Reader,
    searcher: &Searcher,
    path: &str,
    parent: &str,
) -> Result<Option<String>, IndexError> {
    use crate::index::lineage::copy_key;
    let theirs: std::collections::HashSet<u64> =
        session_documents(r, searcher, &SessionKey::Path(parent.to_owned()))?
            .iter()
            .filter_map(|d| d.entry_id.as_deref().map(|id| copy_key(id, &d.text)))
            .collect();
    Ok(
        session_documents(r, searcher, &SessionKey::Path(path.to_owned()))?
            .into_iter()
            .rev()
            .find(|d| {
                d.entry_id
                    .as_deref()
                    .is_some_and(|id| theirs.contains(&copy_key(id, &d.text)))
            })
            .and_then(|d| d.entry_id),
    )
}
