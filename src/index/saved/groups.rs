//! Copy groups worked out once per state of the index, so that a search
//! merges copies without looking at every match.
//!
//! A message copied into forks is one hit (`crate::search::copies`): every
//! group of documents with the same family and copy key stands behind
//! its oldest member. Grouping at search time means reading the session
//! and copy key of every match of a session with relatives, so nothing
//! can be skipped: a common word costs far more than with `--copies`
//! ([docs/performance.md](../../../docs/performance.md#local-search)). But
//! the groups do not depend on the query. When the query asks only for what
//! every copy of a message shares (its words, role, model and time), a
//! message matches in all its copies or in none, so its hit is the group's
//! oldest member, and "hits after merging" are the matches less the members
//! that stand behind another. Those members are few (the copies themselves),
//! so a search skips them (a bit per document), prunes as without forks, and
//! takes the count from the query less the skipped members that match (one
//! seek each).
//!
//! The build works the groups out after each commit ([`save`]) and
//! writes them beside the index, for the state it committed; a search
//! ([`read`], through the read side's cache) uses them only for that state (the same
//! segments with the same deletions) and otherwise merges at search time
//! as before. The file holds, for the segments of its state, each group
//! of two or more members, oldest first, and whether every group's
//! members agree on role, model and time (which filters may then be
//! asked).

use std::path::{Path, PathBuf};

use tantivy::columnar::Column;
use tantivy::query::{EnableScoring, Query};
use tantivy::{DateTime, DocAddress, DocId, DocSet, Searcher, TERMINATED};

use super::mark::{put_u32, write_whole, Words};
use crate::index::family::{Families, KeyMap};
use crate::index::schema::RECENCY;
use crate::index::{tantivy_err, IndexError, PiIndex};

/// The file's name in the index directory, and the name it is written
/// under before it is whole.
pub const FILE: [&str; 2] = super::mark::GROUPS;

/// Its first bytes. The version went to 3 when the file came to hold the
/// groups alone: a file of version 2 has bytes after them.
const MAGIC: &[u8] = b"pi-index copy groups 3\n";

/// What every group's members agree on, beyond words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uniform {
    /// Their role.
    pub role: bool,
    /// Their model.
    pub model: bool,
    /// Their time.
    pub time: bool,
}

/// The copy groups of one state of the index, as read from the file:
/// only the bits of the copies behind another are built; a hit's copies
/// are looked up in the file's table when the hit is shown.
#[derive(Debug, Default)]
pub struct Groups {
    /// By segment ordinal: a bit for each document that stands behind
    /// another of its group.
    behind: Vec<Vec<u64>>,
    /// Each group's oldest member and where its others are in `members`:
    /// (segment, document, first, count), in address order.
    leads: Vec<[u32; 4]>,
    /// The members behind each lead, group after group, oldest first.
    members: Vec<[u32; 2]>,
    uniform: Uniform,
}

impl Groups {
    /// Whether no message has a copy (a search need not merge).
    pub fn is_empty(&self) -> bool {
        self.leads.is_empty()
    }

    /// Whether `doc` of segment `ord` stands behind another copy.
    #[inline]
    pub(crate) fn is_behind(&self, ord: u32, doc: DocId) -> bool {
        self.behind
            .get(ord as usize)
            .and_then(|b| b.get(doc as usize / 64))
            .is_some_and(|w| w >> (doc % 64) & 1 == 1)
    }

    /// The other copies of the message at `addr` (none unless it leads a
    /// group), oldest first, with their sessions' keys.
    pub(crate) fn copies_of(
        &self,
        searcher: &Searcher,
        addr: DocAddress,
    ) -> tantivy::Result<Vec<(u64, DocAddress)>> {
        let Ok(at) = self
            .leads
            .binary_search_by_key(&(addr.segment_ord, addr.doc_id), |l| (l[0], l[1]))
        else {
            return Ok(Vec::new());
        };
        let [_, _, first, n] = self.leads[at];
        self.members[first as usize..(first + n) as usize]
            .iter()
            .map(|&[ord, doc]| {
                let a = DocAddress::new(ord, doc);
                let sess = searcher
                    .segment_reader(a.segment_ord)
                    .fast_fields()
                    .u64("sess")?;
                Ok((sess.first(a.doc_id).unwrap_or(0), a))
            })
            .collect()
    }

    /// How many of the members that stand behind another match `query`:
    /// what a count of matches less them leaves is the hits after
    /// merging.
    pub(crate) fn matching_behind(
        &self,
        searcher: &Searcher,
        query: &dyn Query,
    ) -> tantivy::Result<usize> {
        if self.is_empty() {
            return Ok(0);
        }
        let weight = query.weight(EnableScoring::disabled_from_searcher(searcher))?;
        let mut n = 0;
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let bits = &self.behind[ord];
            if bits.iter().all(|&w| w == 0) {
                continue;
            }
            let mut scorer = weight.scorer(reader, 1.0)?;
            // The set bits, ascending: each a seek forward.
            'words: for (i, &word) in bits.iter().enumerate() {
                let mut w = word;
                while w != 0 {
                    let doc = (i * 64) as DocId + w.trailing_zeros();
                    w &= w - 1;
                    let mut at = scorer.doc();
                    if at < doc {
                        at = scorer.seek(doc);
                    }
                    if at == TERMINATED {
                        break 'words;
                    }
                    n += usize::from(at == doc);
                }
            }
        }
        Ok(n)
    }

    /// What every group's members agree on.
    pub fn uniform(&self) -> Uniform {
        self.uniform
    }
}

/// The file's first bytes for the state of `readers`.
fn header(readers: &[tantivy::SegmentReader]) -> Vec<u8> {
    super::mark::mark(MAGIC, readers)
}

/// Whether the file at `file` was written for the state `searcher` shows:
/// its header, and a length that its counts of groups and members make
/// (a file cut short, or of another version, has another). Reads the
/// header alone, whatever the groups weigh.
fn holds_state(file: &Path, searcher: &Searcher) -> bool {
    use std::io::Read;
    let head = header(searcher.segment_readers());
    let mut read = vec![0u8; head.len() + 9];
    let Ok(mut f) = std::fs::File::open(file) else {
        return false;
    };
    let (Ok(meta), Ok(())) = (f.metadata(), f.read_exact(&mut read)) else {
        return false;
    };
    let count = |at: usize| u32::from_le_bytes(read[at..at + 4].try_into().unwrap()) as u64;
    let (n, m) = (count(head.len() + 1), count(head.len() + 5));
    read.starts_with(&head) && meta.len() == read.len() as u64 + 16 * n + 8 * m
}

/// Whether the file beside `pi` was written for the state `searcher`
/// shows (else [`ensure`] saves it again).
pub fn held(pi: &PiIndex, searcher: &Searcher) -> bool {
    holds_state(&path(&pi.dir), searcher)
}

/// Save the copy groups again when the file beside the index was not
/// written for the state it shows: a build killed between its commit and
/// the save, a file of another version or cut short. A build with nothing
/// to index calls it: searches would otherwise merge copies themselves,
/// a cost on each
/// ([docs/performance.md](../../../docs/performance.md#local-search)), until
/// the next build that commits. Another build may commit meanwhile: the file
/// is then of the state before, which searches ignore and the next build
/// saves again.
pub fn ensure(pi: &PiIndex) {
    let Ok(searcher) = pi.searcher() else {
        return;
    };
    if !holds_state(&path(&pi.dir), &searcher) && save(pi, &searcher).is_err() {
        remove(&pi.dir);
    }
}

fn path(dir: &Path) -> PathBuf {
    dir.join(FILE[0])
}

/// Work out the copy groups of the state `searcher` shows and write them
/// beside the index (replacing the file atomically).
pub fn save(pi: &PiIndex, searcher: &Searcher) -> Result<(), IndexError> {
    let families = Families::resolve(pi, searcher)?;
    let bytes = encode(searcher, &families).map_err(|e| tantivy_err(&pi.dir, e))?;
    write_whole(&pi.dir, FILE, &bytes).map_err(|error| IndexError::Io {
        path: pi.dir.clone(),
        error,
    })
}

/// Remove the file (a build that could not write it leaves none, rather
/// than one of an older state: that one would only be ignored).
pub fn remove(dir: &Path) {
    let _ = std::fs::remove_file(path(dir));
}

/// The file's bytes for the state `searcher` shows.
fn encode(searcher: &Searcher, families: &Families) -> tantivy::Result<Vec<u8>> {
    let readers = searcher.segment_readers();
    // Every member of a family with relatives, by family and copy key.
    let mut groups: KeyMap<(u64, u64), Vec<(u64, DocAddress)>> = KeyMap::default();
    if families.any() {
        let map = families.shared_map();
        for (ord, reader) in readers.iter().enumerate() {
            let ff = reader.fast_fields();
            let Some(copy) = ff.column_opt::<u64>("copy")? else {
                continue;
            };
            let sess = ff.u64("sess")?;
            let alive = reader.alive_bitset();
            let mut last = (u64::MAX, None);
            for doc in 0..reader.max_doc() {
                if alive.is_some_and(|a| !a.is_alive(doc)) {
                    continue;
                }
                let s = sess.first(doc).unwrap_or(0);
                if last.0 != s {
                    last = (s, map.get(&s).copied());
                }
                let Some(family) = last.1 else { continue };
                if let Some(c) = copy.first(doc) {
                    groups
                        .entry((family, c))
                        .or_default()
                        .push((s, DocAddress::new(ord as u32, doc)));
                }
            }
        }
    }
    let mut groups: Vec<Vec<(u64, DocAddress)>> =
        groups.into_values().filter(|g| g.len() > 1).collect();
    for g in &mut groups {
        g.sort_by_key(|(s, a)| (families.age(*s), *a));
    }
    // The same order for the same state.
    groups.sort_by_key(|g| g[0].1);
    let uniform = uniform(searcher, &groups)?;

    let members: usize = groups.iter().map(|g| g.len() - 1).sum();
    let mut out = header(readers);
    out.reserve(9 + 16 * groups.len() + 8 * members);
    out.push(u8::from(uniform.role) | u8::from(uniform.model) << 1 | u8::from(uniform.time) << 2);
    // The leads, in address order, and where their members are.
    put_u32(&mut out, groups.len() as u32);
    put_u32(&mut out, members as u32);
    let mut first = 0u32;
    for g in &groups {
        let lead = g[0].1;
        for v in [lead.segment_ord, lead.doc_id, first, g.len() as u32 - 1] {
            put_u32(&mut out, v);
        }
        first += g.len() as u32 - 1;
    }
    // The members, group after group.
    for g in &groups {
        for (_, a) in &g[1..] {
            put_u32(&mut out, a.segment_ord);
            put_u32(&mut out, a.doc_id);
        }
    }
    Ok(out)
}

/// Whether the members of every group agree on role, model and time.
fn uniform(searcher: &Searcher, groups: &[Vec<(u64, DocAddress)>]) -> tantivy::Result<Uniform> {
    struct Cols {
        role: Option<Column<u64>>,
        model: Option<Column<u64>>,
        time: Option<Column<DateTime>>,
    }
    let cols = searcher
        .segment_readers()
        .iter()
        .map(|r| {
            let ff = r.fast_fields();
            Ok(Cols {
                role: ff.column_opt("role")?,
                model: ff.column_opt("model")?,
                time: ff.column_opt(RECENCY)?,
            })
        })
        .collect::<tantivy::Result<Vec<_>>>()?;
    let of = |a: &DocAddress| {
        let c = &cols[a.segment_ord as usize];
        let d = a.doc_id;
        (
            c.role.as_ref().and_then(|c| c.first(d)),
            c.model.as_ref().and_then(|c| c.first(d)),
            c.time.as_ref().and_then(|c| c.first(d)),
        )
    };
    let mut u = Uniform {
        role: true,
        model: true,
        time: true,
    };
    for g in groups {
        let lead = of(&g[0].1);
        for (_, a) in &g[1..] {
            let m = of(a);
            u.role &= m.0 == lead.0;
            u.model &= m.1 == lead.1;
            u.time &= m.2 == lead.2;
        }
    }
    Ok(u)
}

/// The groups in `bytes` if they were written for the state `searcher`
/// shows; `None` for another state, or a file cut short or not ours.
fn decode(bytes: &[u8], searcher: &Searcher) -> Option<Groups> {
    let readers = searcher.segment_readers();
    let mut w = Words(bytes.strip_prefix(header(readers).as_slice())?);
    let flags = w.take(1)?[0];
    let (n, m) = (w.u32()? as usize, w.u32()? as usize);
    // Every count is checked against what is left before anything is
    // allocated for it.
    if n > w.0.len() / 16 || m > w.0.len() / 8 {
        return None;
    }
    let address = |ord: u32, doc: u32| readers.get(ord as usize).is_some_and(|r| doc < r.max_doc());
    let mut leads = Vec::with_capacity(n);
    for _ in 0..n {
        let l = [w.u32()?, w.u32()?, w.u32()?, w.u32()?];
        let in_members = (l[2] as usize).checked_add(l[3] as usize)? <= m;
        if !address(l[0], l[1])
            || !in_members
            || leads
                .last()
                .is_some_and(|p: &[u32; 4]| (p[0], p[1]) >= (l[0], l[1]))
        {
            return None;
        }
        leads.push(l);
    }
    let mut behind: Vec<Vec<u64>> = readers
        .iter()
        .map(|r| vec![0u64; (r.max_doc() as usize).div_ceil(64)])
        .collect();
    let mut members = Vec::with_capacity(m);
    for _ in 0..m {
        let [ord, doc] = [w.u32()?, w.u32()?];
        if !address(ord, doc) {
            return None;
        }
        behind[ord as usize][doc as usize / 64] |= 1 << (doc % 64);
        members.push([ord, doc]);
    }
    if !w.0.is_empty() {
        return None;
    }
    Some(Groups {
        behind,
        leads,
        members,
        uniform: Uniform {
            role: flags & 1 != 0,
            model: flags & 2 != 0,
            time: flags & 4 != 0,
        },
    })
}

/// The copy groups saved beside the index at `dir` for the state
/// `searcher` shows, or `None` when none were saved for that state (a
/// search then merges copies itself).
pub fn read(dir: &Path, searcher: &Searcher) -> Option<Groups> {
    let bytes = std::fs::read(path(dir)).ok()?;
    decode(&bytes, searcher)
}
