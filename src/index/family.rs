//! Families of sessions: which session was forked from which, resolved
//! at read time from what each session record holds (see
//! [`crate::index::lineage`]), so that a build never rewrites a parent
//! when a fork appears, and the next build leaves the same families as a
//! fresh build of the same files.
//!
//! A session's parent is, in this order:
//!
//! 1. **stated**: the file its header names (`parentSession`, v1
//!    `branchedFrom`), found by its path, else (the parent moved) by the
//!    session id in its file name (`<timestamp>_<id>.jsonl`), else kept as
//!    the path alone: a parent that is not indexed still joins its forks
//!    into one family.
//! 2. **inferred**, for a session whose header names none: the oldest
//!    other session that begins with the same first message (the same
//!    entry id and the same text), as older Pi releases forked without
//!    saying so.
//!
//! Resolving reads columns of session records alone, and no stored
//! document: first the parent and head columns of every session, which
//! say which sessions can be relatives at all (most indexes have none,
//! and then nothing else is read), then the other columns of those. It
//! runs once per search, and an index where no session has a relative
//! searches as before.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use tantivy::columnar::{Column, ColumnIndex};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Searcher, Term};

use super::schema::SESSION_DOC;
use super::{tantivy_err, IndexError, PiIndex};

/// A map keyed by session keys (or other hashes already spread over 64
/// bits), with a hasher that only mixes them: the maps of a search are
/// built and probed once per session or per matching document.
pub type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// The hasher of [`KeyMap`]: a multiply per word hashed.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(23) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// How a session's parent is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Link {
    /// The header names it (`parentSession` or `branchedFrom`).
    Stated,
    /// The session begins with the parent's first message.
    Inferred,
}

/// A set of session keys or hashes (see [`KeyMap`]).
type KeySet = std::collections::HashSet<u64, BuildHasherDefault<KeyHasher>>;

/// What can make a session a relative (see `wanted`).
#[derive(Debug, Default)]
struct Wanted {
    /// Keys of the paths sessions name as their parent.
    parent_keys: KeySet,
    /// Hashes of the ids in those paths' file names.
    parent_ids: KeySet,
    /// First messages (copy keys) two or more sessions begin with.
    shared_heads: KeySet,
}

impl Wanted {
    fn is_empty(&self) -> bool {
        self.parent_keys.is_empty() && self.parent_ids.is_empty() && self.shared_heads.is_empty()
    }
}

/// What the families need of one session record.
#[derive(Clone, Debug)]
struct Record {
    key: u64,
    parent_key: Option<u64>,
    /// The id in the parent's file name, hashed.
    parent_id: u64,
    /// The header id, hashed.
    id: u64,
    head: u64,
    started: i64,
}

/// One session with relatives.
#[derive(Clone, Debug)]
struct Member {
    /// The parent's key (a session of the index, or, stated and not
    /// indexed, the key of the named path) and how it is known.
    parent: Option<(u64, Link)>,
    /// Whether the parent is a session of the index.
    parent_indexed: bool,
    /// The family: the smallest key of the connected sessions.
    family: u64,
    started: i64,
    /// How many indexed ancestors it has.
    depth: u32,
    forks: Vec<u64>,
}

/// Every family of an index, for one searcher.
#[derive(Clone, Debug, Default)]
pub struct Families {
    members: KeyMap<u64, Member>,
    /// The families that have at least two indexed sessions.
    shared: KeyMap<u64, usize>,
}

impl Families {
    /// Resolve every session's family (see the [module
    /// documentation](self)); the read side keeps them for the state of
    /// the index `searcher` shows.
    pub fn resolve(pi: &PiIndex, searcher: &Searcher) -> Result<Families, IndexError> {
        let wanted = wanted(pi, searcher)?;
        if wanted.is_empty() {
            return Ok(Families::default());
        }
        let records = lineage_records(pi, searcher, &wanted)?;
        let mut f = Families::default();
        if records.is_empty() {
            return Ok(f);
        }
        // Older first; ties by key: the same order for every build.
        let order = |i: usize| (records[i].started, records[i].key);
        // Only stated parents need the sessions by key and by id (most
        // indexes have none).
        let stated = records.iter().any(|r| r.parent_key.is_some());
        let mut by_key: KeyMap<u64, usize> = KeyMap::default();
        // Ids that name one session (a copy kept under its id makes an
        // id ambiguous: which one a fork meant cannot be told).
        let mut by_id: KeyMap<u64, Option<u64>> = KeyMap::default();
        if stated {
            by_key.reserve(records.len());
            by_id.reserve(records.len());
            for (i, r) in records.iter().enumerate() {
                by_key.insert(r.key, i);
                by_id
                    .entry(r.id)
                    .and_modify(|k| *k = None)
                    .or_insert(Some(r.key));
            }
        }
        let mut parent: Vec<Option<(u64, Link, bool)>> = vec![None; records.len()];
        for (i, r) in records.iter().enumerate() {
            let Some(pk) = r.parent_key else { continue };
            if pk != r.key && by_key.contains_key(&pk) {
                parent[i] = Some((pk, Link::Stated, true));
                continue;
            }
            // Moved (or never at that path): by the id in its file name.
            let found = by_id.get(&r.parent_id).copied().flatten();
            parent[i] = Some(match found.filter(|k| *k != r.key && r.parent_id != 0) {
                Some(k) => (k, Link::Stated, true),
                None => (pk, Link::Stated, false),
            });
        }
        // The session a head's forks are inferred from is the oldest that
        // is not the stated fork of an indexed session: such a fork's
        // family is found through its parent, and inferring a parent from
        // it (a fork whose header is as old as its parent's, or older)
        // would make each the other's parent.
        let mut by_head: KeyMap<u64, usize> =
            KeyMap::with_capacity_and_hasher(records.len(), Default::default());
        for (i, r) in records.iter().enumerate() {
            let stated_fork = matches!(parent[i], Some((_, _, true)));
            if r.head != 0 && !stated_fork {
                by_head
                    .entry(r.head)
                    .and_modify(|o| {
                        if order(i) < order(*o) {
                            *o = i
                        }
                    })
                    .or_insert(i);
            }
        }
        for (i, r) in records.iter().enumerate() {
            if parent[i].is_some() || r.head == 0 {
                continue;
            }
            // `i` names no parent, so it is among the head's candidates.
            let oldest = by_head[&r.head];
            if oldest != i {
                parent[i] = Some((records[oldest].key, Link::Inferred, true));
            }
        }

        // Families: sessions joined by their parents (a parent that is not
        // indexed joins its forks too).
        let mut uf = UnionFind::default();
        for (i, r) in records.iter().enumerate() {
            if let Some((pk, _, _)) = parent[i] {
                uf.union(r.key, pk);
            }
        }
        for (i, r) in records.iter().enumerate() {
            let Some((pk, how, indexed)) = parent[i] else {
                if !uf.has(r.key) {
                    continue;
                }
                f.members.insert(r.key, member(&mut uf, r, None, false));
                continue;
            };
            f.members
                .insert(r.key, member(&mut uf, r, Some((pk, how)), indexed));
        }
        let links: Vec<(u64, u64)> = f
            .members
            .iter()
            .filter(|(_, m)| m.parent_indexed)
            .filter_map(|(k, m)| m.parent.map(|(p, _)| (p, *k)))
            .collect();
        for (p, child) in links {
            if let Some(m) = f.members.get_mut(&p) {
                m.forks.push(child);
            }
        }
        let depths: Vec<(u64, u32)> = f
            .members
            .keys()
            .map(|&k| {
                let mut depth = 0;
                let mut at = k;
                // Parents that name each other (edited by hand) end the walk.
                while let Some(p) = f.members.get(&at).filter(|m| m.parent_indexed) {
                    let Some((up, _)) = p.parent else { break };
                    depth += 1;
                    at = up;
                    if depth as usize > f.members.len() {
                        break;
                    }
                }
                (k, depth)
            })
            .collect();
        for (k, d) in depths {
            f.members.get_mut(&k).expect("a member").depth = d;
        }
        let members = f.members.clone();
        for m in f.members.values_mut() {
            m.forks.sort_by_key(|k| (members[k].started, *k));
        }
        for m in f.members.values() {
            *f.shared.entry(m.family).or_default() += 1;
        }
        f.shared.retain(|_, n| *n > 1);
        Ok(f)
    }
}

/// What can make a session a relative, from whole columns: the
/// parents' keys and file-name ids that sessions name, and the first
/// messages two or more sessions share. When there is none, no family
/// has two members and nothing else is read: the heads alone, 8 bytes
/// per session (gathering every record costs each fresh process fresh
/// pages:
/// [docs/performance.md](../../docs/performance.md#against-the-goals)).
/// Deleted records are counted too: they only widen it.
fn wanted(pi: &PiIndex, searcher: &Searcher) -> Result<Wanted, IndexError> {
    let err = |e| tantivy_err(&pi.dir, e);
    let mut w = Wanted::default();
    let mut heads: Vec<u64> = Vec::new();
    for seg in searcher.segment_readers() {
        let ff = seg.fast_fields();
        if let Some(c) = ff.column_opt::<u64>("parent_key").map_err(err)? {
            w.parent_keys.extend(c.values.iter());
        }
        if let Some(c) = ff.column_opt::<u64>("parent_id_hash").map_err(err)? {
            w.parent_ids.extend(c.values.iter().filter(|&id| id != 0));
        }
        if let Some(c) = ff.column_opt::<u64>("head").map_err(err)? {
            let start = heads.len();
            heads.resize(start + c.values.num_vals() as usize, 0);
            c.values.get_range(0, &mut heads[start..]);
        }
    }
    heads.retain(|&h| h != 0);
    heads.sort_unstable();
    w.shared_heads
        .extend(heads.windows(2).filter(|p| p[0] == p[1]).map(|p| p[0]));
    Ok(w)
}

/// The records of the sessions that can be relatives (see
/// [`Wanted`]), with the fields families are made of, from the
/// columns: every session the resolution could join to another, and
/// no other (they would only be looked up and left alone).
fn lineage_records(
    pi: &PiIndex,
    searcher: &Searcher,
    wanted: &Wanted,
) -> Result<Vec<Record>, IndexError> {
    let err = |e| tantivy_err(&pi.dir, e);
    let f = &pi.fields;
    let term = Term::from_field_text(f.doc_type, SESSION_DOC);
    let mut out = Vec::new();
    for seg in searcher.segment_readers() {
        let inv = seg.inverted_index(f.doc_type).map_err(err)?;
        let Some(mut postings) = inv
            .read_postings(&term, IndexRecordOption::Basic)
            .map_err(|e| err(e.into()))?
        else {
            continue;
        };
        let mut docs = Vec::with_capacity(postings.doc_freq() as usize);
        let mut doc = postings.doc();
        while doc != tantivy::TERMINATED {
            docs.push(doc);
            doc = postings.advance();
        }
        let ff = seg.fast_fields();
        let n = docs.len();
        let mut key = by_rank(ff.column_opt::<u64>("session_key").map_err(err)?, n);
        let mut parent = by_rank(ff.column_opt::<u64>("parent_key").map_err(err)?, n);
        let mut head = by_rank(ff.column_opt::<u64>("head").map_err(err)?, n);
        let mut id = by_rank(ff.column_opt::<u64>("id_hash").map_err(err)?, n);
        let mut parent_id = by_rank(ff.column_opt::<u64>("parent_id_hash").map_err(err)?, n);
        let mut started = by_rank(
            ff.column_opt::<tantivy::DateTime>("started").map_err(err)?,
            n,
        );
        for (rank, &doc) in docs.iter().enumerate() {
            if seg.alive_bitset().is_some_and(|a| !a.is_alive(doc)) {
                continue;
            }
            let Some(key) = key.get(rank, doc) else {
                continue;
            };
            let parent_key = parent.get(rank, doc);
            let id = id.get(rank, doc).unwrap_or(0);
            let head = head.get(rank, doc).unwrap_or(0);
            if parent_key.is_none()
                && !wanted.parent_keys.contains(&key)
                && !wanted.parent_ids.contains(&id)
                && !wanted.shared_heads.contains(&head)
            {
                continue;
            }
            out.push(Record {
                key,
                parent_key,
                parent_id: parent_id.get(rank, doc).unwrap_or(0),
                id,
                head,
                started: started
                    .get(rank, doc)
                    .map_or(i64::MAX, |t| t.into_timestamp_millis()),
            });
        }
    }
    Ok(out)
}

/// A column of session-only values read for the session documents of a
/// segment in doc order, without the column's per-document rank lookup
/// (a search in its sparse index). Most such columns hold a value for
/// every session document (and only those: the schema puts them on
/// sessions alone), so the value of the `rank`-th session document is
/// the `rank`-th value; a column that only some hold (a parent) is
/// walked beside them, its documents in order.
enum ByRank<T> {
    None,
    Zipped(Column<T>),
    Sparse {
        column: Column<T>,
        docs: Vec<DocId>,
        next: usize,
    },
    ByDoc(Column<T>),
}

fn by_rank<T>(column: Option<Column<T>>, sessions: usize) -> ByRank<T>
where
    T: PartialOrd + Copy + std::fmt::Debug + Send + Sync + 'static,
{
    let Some(c) = column else {
        return ByRank::None;
    };
    let vals = c.values.num_vals() as usize;
    if vals == 0 {
        return ByRank::None;
    }
    let ColumnIndex::Optional(index) = &c.index else {
        return ByRank::ByDoc(c);
    };
    if vals == sessions {
        return ByRank::Zipped(c);
    }
    let docs: Vec<DocId> = index.iter_non_null_docs().collect();
    ByRank::Sparse {
        column: c,
        docs,
        next: 0,
    }
}

impl<T> ByRank<T>
where
    T: PartialOrd + Copy + std::fmt::Debug + Send + Sync + 'static,
{
    /// The value of session document `doc`, the `rank`-th; called in
    /// doc order.
    fn get(&mut self, rank: usize, doc: DocId) -> Option<T> {
        match self {
            ByRank::None => None,
            ByRank::Zipped(c) => Some(c.values.get_val(rank as u32)),
            ByRank::Sparse { column, docs, next } => {
                while docs.get(*next).is_some_and(|&d| d < doc) {
                    *next += 1;
                }
                (docs.get(*next) == Some(&doc)).then(|| column.values.get_val(*next as u32))
            }
            ByRank::ByDoc(c) => c.first(doc),
        }
    }
}

fn member(uf: &mut UnionFind, r: &Record, parent: Option<(u64, Link)>, indexed: bool) -> Member {
    Member {
        parent,
        parent_indexed: indexed,
        family: uf.find(r.key),
        started: r.started,
        depth: 0,
        forks: Vec::new(),
    }
}

/// Union-find over session keys; a set is named by its smallest key.
#[derive(Default)]
struct UnionFind {
    up: KeyMap<u64, u64>,
}

impl UnionFind {
    fn has(&self, k: u64) -> bool {
        self.up.contains_key(&k)
    }

    fn find(&mut self, k: u64) -> u64 {
        let mut root = k;
        while let Some(&p) = self.up.get(&root) {
            if p == root {
                break;
            }
            root = p;
        }
        let mut at = k;
        while let Some(&p) = self.up.get(&at) {
            if p == root {
                break;
            }
            self.up.insert(at, root);
            at = p;
        }
        self.up.entry(root).or_insert(root);
        root
    }

    fn union(&mut self, a: u64, b: u64) {
        let (ra, rb) = (self.find(a), self.find(b));
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        self.up.insert(hi, lo);
    }
}

impl Families {
    /// Whether any family has two indexed sessions (when none has, no
    /// message can have a copy, and searches run as before).
    pub fn any(&self) -> bool {
        !self.shared.is_empty()
    }

    /// The family of the session with key `sess`, if it has indexed
    /// relatives (a family is named by a key of one of its sessions).
    pub fn family_of(&self, sess: u64) -> Option<u64> {
        let m = self.members.get(&sess)?;
        self.shared.contains_key(&m.family).then_some(m.family)
    }

    /// Every session with a relative, indexed or not (a parent named
    /// but not indexed counts): the sessions whose `parent` or `forks`
    /// say something.
    pub fn members(&self) -> impl Iterator<Item = u64> + '_ {
        self.members.keys().copied()
    }

    /// For every session with indexed relatives: its family.
    pub fn shared_map(&self) -> KeyMap<u64, u64> {
        self.members
            .iter()
            .filter(|(_, m)| self.shared.contains_key(&m.family))
            .map(|(k, m)| (*k, m.family))
            .collect()
    }

    /// Every session of the family of `sess` (itself included), oldest
    /// first.
    pub fn relatives(&self, sess: u64) -> Vec<u64> {
        let Some(m) = self.members.get(&sess) else {
            return vec![sess];
        };
        let mut all: Vec<(i64, u64)> = self
            .members
            .iter()
            .filter(|(_, o)| o.family == m.family)
            .map(|(k, o)| (o.started, *k))
            .collect();
        all.sort_unstable();
        all.into_iter().map(|(_, k)| k).collect()
    }

    /// The order of sessions within a family: ancestors first, then
    /// older first (ties by key). A message is shown at the first session
    /// in this order that holds a matching copy.
    pub fn age(&self, sess: u64) -> (u32, i64, u64) {
        self.members
            .get(&sess)
            .map_or((u32::MAX, i64::MAX, sess), |m| (m.depth, m.started, sess))
    }

    /// The parent of `sess`: its key when indexed, and how it is known.
    pub fn parent_of(&self, sess: u64) -> Option<(Option<u64>, Link)> {
        let m = self.members.get(&sess)?;
        let (p, how) = m.parent?;
        Some((m.parent_indexed.then_some(p), how))
    }

    /// The forks of `sess`, oldest first.
    pub fn forks_of(&self, sess: u64) -> &[u64] {
        self.members.get(&sess).map_or(&[], |m| &m.forks)
    }

    /// Whether `sess` has no indexed parent (a tree of threads starts
    /// from such sessions).
    pub fn is_root(&self, sess: u64) -> bool {
        self.parent_of(sess).is_none_or(|(p, _)| p.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_find_names_a_set_by_its_smallest_key() {
        let mut uf = UnionFind::default();
        uf.union(5, 3);
        uf.union(9, 5);
        assert_eq!(uf.find(9), 3);
        assert_eq!(uf.find(3), 3);
        assert!(!uf.has(7));
    }
}
