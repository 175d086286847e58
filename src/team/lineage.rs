//! Lineage in the team database: each session row's place in its family,
//! as the pushing host's local index resolves it
//! ([`crate::search::family`]), and back into the objects `sessions
//! --json` prints.
//!
//! A family lives on one host (a fork's `parentSession` names a file of
//! the machine it was written on), so the local index, which holds every
//! session of its host, resolves it at push time exactly as it does for
//! its own searches: a parent stated by the header or inferred from the
//! shared first entries, a parent that moved found by its id, a parent
//! that is not indexed kept as a path. The push writes the result on the
//! session rows and compares it with every row at every push (one parent
//! gaining a fork changes the parent's row, though its file did not
//! change), so the rows always say what a fresh push of the index would.

use std::collections::HashMap;

use tantivy::Searcher;

use super::text::pg_text;
use crate::index::IndexError;
use crate::read::{Lineage, Link, ParentRef, SessionRef};
use crate::search::family::{annotate, refs_of};
use crate::search::{lookup, Reader};

/// What a session row holds of its family (every field empty when it
/// has no relative).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowLineage {
    /// The parent's session id, when the parent is indexed.
    pub parent_session: Option<String>,
    /// The parent's file: where it is indexed, else the path its header
    /// names.
    pub parent_path: Option<String>,
    /// `stated` or `inferred`.
    pub parent_how: Option<String>,
    /// The forks' session ids, oldest first.
    pub fork_ids: Vec<String>,
    /// The forks' files, in the same order.
    pub fork_paths: Vec<String>,
    /// The family's key (the local index's), when the family has at least
    /// two indexed sessions: copies of a message are merged within it.
    pub family: Option<i64>,
    /// Its place in the family's order (ancestors first, then older
    /// first): a message is shown at the first session in this order.
    pub family_age: Option<i32>,
}

/// The name of `how` in the `parent_how` column (as `--json` spells it).
fn how_name(how: Link) -> &'static str {
    match how {
        Link::Stated => "stated",
        Link::Inferred => "inferred",
    }
}

impl RowLineage {
    /// The lineage of a session as `sessions --json` prints it.
    pub fn to_lineage(&self) -> Lineage {
        let parent = self.parent_path.as_ref().map(|path| ParentRef {
            session: self.parent_session.clone(),
            path: path.clone(),
            how: if self.parent_how.as_deref() == Some("inferred") {
                Link::Inferred
            } else {
                Link::Stated
            },
        });
        let forks = self
            .fork_ids
            .iter()
            .zip(&self.fork_paths)
            .map(|(session, path)| SessionRef {
                session: session.clone(),
                path: path.clone(),
            })
            .collect();
        Lineage { parent, forks }
    }

    fn of(lineage: &Lineage, family: Option<(u64, i32)>) -> RowLineage {
        let t = |s: &str| pg_text(s).into_owned();
        let p = lineage.parent.as_ref();
        RowLineage {
            parent_session: p.and_then(|p| p.session.as_deref()).map(t),
            parent_path: p.map(|p| t(&p.path)),
            parent_how: p.map(|p| how_name(p.how).to_owned()),
            fork_ids: lineage.forks.iter().map(|f| t(&f.session)).collect(),
            fork_paths: lineage.forks.iter().map(|f| t(&f.path)).collect(),
            family: family.map(|(f, _)| f as i64),
            family_age: family.map(|(_, a)| a),
        }
    }
}

/// The lineage of every session of the local index that has a relative,
/// by path (as the database keeps paths); every other session's is
/// empty. Reads the families from the index's columns and the stored
/// record of each session with a relative (none for an index without
/// forks).
pub fn local(r: &Reader, searcher: &Searcher) -> Result<HashMap<String, RowLineage>, IndexError> {
    let families = r.families(searcher)?;
    let mut rows = Vec::new();
    for key in families.members() {
        rows.extend(lookup::session_by_key(r, searcher, key)?);
    }
    let known = refs_of(&rows);
    // Each family's sessions in its order: a session's age is its rank.
    let shared = families.shared_map();
    let mut by_family: HashMap<u64, Vec<u64>> = HashMap::new();
    for (&k, &f) in &shared {
        by_family.entry(f).or_default().push(k);
    }
    let mut age: HashMap<u64, i32> = HashMap::new();
    for keys in by_family.values_mut() {
        keys.sort_by_key(|k| families.age(*k));
        for (i, k) in keys.iter().enumerate() {
            age.insert(*k, i32::try_from(i).unwrap_or(i32::MAX));
        }
    }
    let mut out = HashMap::with_capacity(rows.len());
    for mut row in rows {
        annotate(&families, r, searcher, &mut row, &known)?;
        let family = shared.get(&row.key).map(|f| (*f, age[&row.key]));
        let lineage = row.family.take().unwrap_or_default();
        out.insert(
            pg_text(&row.path).into_owned(),
            RowLineage::of(&lineage, family),
        );
    }
    Ok(out)
}
