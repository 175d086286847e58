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
//! takes the count from the query less the skipped members that match (the
//! matches and the bits walked together).
//!
//! The build works the groups out after each commit ([`save`]) and
//! writes them beside the index, for the state it committed; a search
//! ([`read`], through the read side's cache) uses them only for that state (the same
//! segments with the same deletions) and otherwise merges at search time
//! as before. The file holds, for the segments of its state, whether
//! every group's members agree on role, model and time (which filters
//! may then be asked), each segment's bits of the members behind
//! another and their checksum, each group of two or more members, oldest
//! first, and the id and file of every session a member is in (what a
//! hit prints of its copies, which would otherwise be a read of each
//! copy's session record). It is read in place: most messages may be
//! copies (a backup of the session folder indexed beside it), and a
//! search then reads the bits of its matches and the groups of the hits
//! it shows, where parsing the whole file would cost more than the
//! search. A group whose table names what the index does not hold, what
//! the bits do not mark or a session it does not list, is found when its
//! hit is shown, and that search merges at search time instead.

use std::path::{Path, PathBuf};

use tantivy::columnar::Column;
use tantivy::query::{EnableScoring, Query};
use tantivy::{DateTime, DocAddress, DocId, DocSet, Searcher, TERMINATED};

use super::mark::{put_u32, put_u64, write_whole};
use crate::index::family::{Families, KeyMap};
use crate::index::schema::RECENCY;
use crate::index::{tantivy_err, Fields, IndexError, PiIndex};

/// The file's name in the index directory, and the name it is written
/// under before it is whole.
pub const FILE: [&str; 2] = super::mark::GROUPS;

/// Its first bytes. The version went to 3 when the file came to hold the
/// groups alone (a file of version 2 has bytes after them), and to 4 when
/// it came to be read in place: each segment's bits of the copies behind
/// another, then the groups' table and the sessions' names, looked up per
/// hit.
const MAGIC: &[u8] = b"pi-index copy groups 4\n";

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

/// Where each part of a file lies, for segments of `max_docs` documents
/// and the counts after its header: after the header and [`COUNTS`]
/// bytes of flags and counts, each segment's bits (a word per 64
/// documents), the checksum of all that, the leads (16 bytes each), the
/// members (8 bytes each), the sessions the members are in (24 bytes
/// each) and the bytes of their ids and paths, to the end. `None` when
/// the sizes overflow.
#[derive(Debug)]
struct Layout {
    /// By segment ordinal: where its bits start, and how many words.
    bits: Vec<(usize, usize)>,
    /// Where the checksum is.
    sum: usize,
    leads: usize,
    members: usize,
    sessions: usize,
    names: usize,
    /// The file's length.
    len: usize,
}

/// The bytes after the header: the flags, then the counts of groups,
/// members behind their leads, sessions and bytes of names.
const COUNTS: usize = 17;

/// The counts after the header.
#[derive(Clone, Copy, Debug)]
struct Counts {
    groups: u32,
    members: u32,
    sessions: u32,
    names: u32,
}

impl Layout {
    fn new(head: usize, max_docs: impl Iterator<Item = u32>, c: Counts) -> Option<Layout> {
        let mut at = head.checked_add(COUNTS)?;
        let mut bits = Vec::new();
        for max_doc in max_docs {
            let words = (max_doc as usize).div_ceil(64);
            bits.push((at, words));
            at = at.checked_add(words.checked_mul(8)?)?;
        }
        let sum = at;
        let leads = sum.checked_add(4)?;
        let members = leads.checked_add((c.groups as usize).checked_mul(16)?)?;
        let sessions = members.checked_add((c.members as usize).checked_mul(8)?)?;
        let names = sessions.checked_add((c.sessions as usize).checked_mul(24)?)?;
        let len = names.checked_add(c.names as usize)?;
        Some(Layout {
            bits,
            sum,
            leads,
            members,
            sessions,
            names,
            len,
        })
    }
}

/// The copy groups of one state of the index: the file, mapped and read
/// in place. Opening it checks its state, its length and the checksum of
/// its bits (a few bits per document, whatever the copies); a search reads
/// the bits of the matches it looks at, and a hit's copies are looked up
/// in the groups' table (a binary search) when the hit is shown, so that
/// what merging costs follows the matches and the hits, not the number of
/// copies.
#[derive(Debug)]
pub struct Groups {
    /// The file, mapped.
    bytes: memmap2::Mmap,
    layout: Layout,
    /// Each segment's document count (an address past it is not one).
    max_docs: Vec<u32>,
    /// How many groups, members behind their leads, and sessions.
    n: usize,
    m: usize,
    sessions: usize,
    uniform: Uniform,
}

/// The little-endian word of `bytes` at `at`.
#[inline]
fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

#[inline]
fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
}

/// One copy of a hit, as the groups' table has it.
#[derive(Debug)]
pub(crate) struct Copy<'a> {
    /// Its document.
    pub addr: DocAddress,
    /// Its session's id and file, as the session's record has them.
    pub session_id: &'a str,
    pub path: &'a str,
}

/// A hit's copies as the groups' table has them, or `None` when the table
/// is damaged.
pub(crate) type Copies<'a> = Option<Vec<Copy<'a>>>;

impl Groups {
    /// Whether no message has a copy (a search need not merge).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The bits of segment `ord`: `words` words from `at`.
    #[inline]
    fn bits(&self, ord: u32) -> (usize, usize) {
        self.layout
            .bits
            .get(ord as usize)
            .copied()
            .unwrap_or((0, 0))
    }

    /// Whether `doc` of segment `ord` stands behind another copy.
    #[inline]
    pub(crate) fn is_behind(&self, ord: u32, doc: DocId) -> bool {
        let (at, words) = self.bits(ord);
        // A word's bits are its bytes' bits in order (little-endian), so
        // a document's bit is in byte doc / 8.
        (doc as usize / 64) < words && self.bytes[at + doc as usize / 8] >> (doc % 8) & 1 == 1
    }

    /// The first document of segment `ord` from `from` on that stands
    /// behind another copy, or [`TERMINATED`].
    #[inline]
    fn next_behind(&self, ord: u32, from: DocId) -> DocId {
        let (at, words) = self.bits(ord);
        let mut i = from as usize / 64;
        if i >= words {
            return TERMINATED;
        }
        let mut w = u64_at(&self.bytes, at + 8 * i) & (u64::MAX << (from % 64));
        while w == 0 {
            i += 1;
            if i == words {
                return TERMINATED;
            }
            w = u64_at(&self.bytes, at + 8 * i);
        }
        (i * 64) as DocId + w.trailing_zeros()
    }

    /// Group `i`'s lead and where its others are: (segment, document,
    /// first, count).
    #[inline]
    fn lead(&self, i: usize) -> [u32; 4] {
        let at = self.layout.leads + 16 * i;
        std::array::from_fn(|k| u32_at(&self.bytes, at + 4 * k))
    }

    /// Whether `(ord, doc)` is the address of a document.
    fn address(&self, ord: u32, doc: u32) -> bool {
        self.max_docs.get(ord as usize).is_some_and(|&m| doc < m)
    }

    /// The other copies of the message at `addr` (none unless it leads a
    /// group), oldest first, with their sessions' ids and files: a binary
    /// search of the leads, then the group's members, each session's names
    /// a binary search of the sessions. `None` when the table names what
    /// the index does not hold or the bits do not agree with (a damaged
    /// file: the search merges at search time instead).
    /// `sess_of` gives a document's session key (from the reader's kept
    /// columns: opening a column for each hit would cost more than the
    /// lookups).
    pub(crate) fn copies_of<E>(
        &self,
        addr: DocAddress,
        mut sess_of: impl FnMut(DocAddress) -> Result<u64, E>,
    ) -> Result<Copies<'_>, E> {
        let key = (addr.segment_ord, addr.doc_id);
        // The first lead at or after `key`.
        let (mut lo, mut hi) = (0, self.n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let l = self.lead(mid);
            if (l[0], l[1]) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == self.n || (self.lead(lo)[0], self.lead(lo)[1]) != key {
            return Ok(Some(Vec::new()));
        }
        let [_, _, first, count] = self.lead(lo);
        let (first, count) = (first as usize, count as usize);
        if count == 0
            || first.checked_add(count).is_none_or(|end| end > self.m)
            || self.is_behind(addr.segment_ord, addr.doc_id)
        {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(count);
        for i in first..first + count {
            let at = self.layout.members + 8 * i;
            let (ord, doc) = (u32_at(&self.bytes, at), u32_at(&self.bytes, at + 4));
            if !self.address(ord, doc) || !self.is_behind(ord, doc) {
                return Ok(None);
            }
            let addr = DocAddress::new(ord, doc);
            let Some((session_id, path)) = self.names(sess_of(addr)?) else {
                return Ok(None);
            };
            out.push(Copy {
                addr,
                session_id,
                path,
            });
        }
        Ok(Some(out))
    }

    /// The id and file of the session with key `sess`, from the sessions'
    /// table (`None` when it has no such session, or names outside the
    /// file or not UTF-8).
    fn names(&self, sess: u64) -> Option<(&str, &str)> {
        let entry = |i: usize| self.layout.sessions + 24 * i;
        let (mut lo, mut hi) = (0, self.sessions);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if u64_at(&self.bytes, entry(mid)) < sess {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == self.sessions || u64_at(&self.bytes, entry(lo)) != sess {
            return None;
        }
        let at = entry(lo) + 8;
        let names = self.bytes.get(self.layout.names..)?;
        let name = |k: usize| {
            let from = u32_at(&self.bytes, at + 8 * k) as usize;
            let len = u32_at(&self.bytes, at + 8 * k + 4) as usize;
            std::str::from_utf8(names.get(from..from.checked_add(len)?)?).ok()
        };
        Some((name(0)?, name(1)?))
    }

    /// How many documents `query` matches that stand behind no other
    /// copy: the total of a search that merges copies. A segment where
    /// most documents stand behind is walked once, each match's bit
    /// looked at; elsewhere the query counts its matches (a word's are
    /// its document frequency) and the members behind that match are
    /// taken off, the matches and the bits walked together, each leaping
    /// to the other's next, so that the steps are about the fewer of the
    /// two ([docs/performance.md](../../../docs/performance.md#copies-at-any-share)).
    pub(crate) fn matching_ahead(
        &self,
        searcher: &Searcher,
        query: &dyn Query,
    ) -> tantivy::Result<usize> {
        let weight = query.weight(EnableScoring::disabled_from_searcher(searcher))?;
        let mut n = 0;
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let ord = ord as u32;
            let behind = self.behind_in(ord);
            if behind > 0 && 2 * behind >= reader.max_doc() as usize {
                let alive = reader.alive_bitset();
                let mut scorer = weight.scorer(reader, 1.0)?;
                let mut at = scorer.doc();
                while at != TERMINATED {
                    if !self.is_behind(ord, at) && alive.is_none_or(|a| a.is_alive(at)) {
                        n += 1;
                    }
                    at = scorer.advance();
                }
            } else {
                n += weight.count(reader)? as usize;
                if behind > 0 {
                    n -= self.matching_behind_in(ord, &mut *weight.scorer(reader, 1.0)?);
                }
            }
        }
        Ok(n)
    }

    /// How many documents of segment `ord` stand behind another copy.
    fn behind_in(&self, ord: u32) -> usize {
        let (at, words) = self.bits(ord);
        (0..words)
            .map(|i| u64_at(&self.bytes, at + 8 * i).count_ones() as usize)
            .sum()
    }

    /// How many of the matches of `scorer` (segment `ord`'s) stand behind
    /// another copy: the two walked together, each leaping to the other's
    /// next.
    fn matching_behind_in(&self, ord: u32, scorer: &mut dyn tantivy::query::Scorer) -> usize {
        let mut behind = self.next_behind(ord, 0);
        let mut n = 0;
        let mut at = scorer.doc();
        while at != TERMINATED && behind != TERMINATED {
            if at < behind {
                // A seek costs more than a step: near, a step or a
                // few reach it.
                at = if behind - at > 64 {
                    scorer.seek(behind)
                } else {
                    scorer.advance()
                };
            } else if at > behind {
                behind = self.next_behind(ord, at);
            } else {
                n += 1;
                at = scorer.advance();
            }
        }
        n
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

/// The counts of a file that starts with `bytes` (at least the header and
/// the [`COUNTS`] bytes after it) when it was written for the state whose
/// header is `head`; `None` for another state.
fn counts(head: &[u8], bytes: &[u8]) -> Option<Counts> {
    let c = bytes.strip_prefix(head)?.get(..COUNTS)?;
    Some(Counts {
        groups: u32_at(c, 1),
        members: u32_at(c, 5),
        sessions: u32_at(c, 9),
        names: u32_at(c, 13),
    })
}

/// The layout of a file that starts with `bytes` (see [`counts`]) when
/// it was written for the state of `readers`, whose header is `head`.
fn layout(head: &[u8], readers: &[tantivy::SegmentReader], bytes: &[u8]) -> Option<Layout> {
    Layout::new(
        head.len(),
        readers.iter().map(|r| r.max_doc()),
        counts(head, bytes)?,
    )
}

/// Whether the checksum in `bytes` (the file up to its groups' table at
/// least) is that of what precedes it.
fn sum_holds(bytes: &[u8], layout: &Layout) -> bool {
    crc32fast::hash(&bytes[..layout.sum]) == u32_at(bytes, layout.sum)
}

/// Whether the file at `file` was written for the state `searcher` shows:
/// its header, a length that its counts of groups and members and the
/// segments' sizes make (a file cut short, or of another version, has
/// another), and its bits' checksum. Reads the header and the bits (a
/// few bits per document), not the groups' table.
fn holds_state(file: &Path, searcher: &Searcher) -> bool {
    use std::io::Read;
    let readers = searcher.segment_readers();
    let head = header(readers);
    let mut read = vec![0u8; head.len() + COUNTS];
    let Ok(mut f) = std::fs::File::open(file) else {
        return false;
    };
    let (Ok(meta), Ok(())) = (f.metadata(), f.read_exact(&mut read)) else {
        return false;
    };
    let Some(layout) = layout(&head, readers, &read) else {
        return false;
    };
    if meta.len() != layout.len as u64 {
        return false;
    }
    read.resize(layout.leads, 0);
    f.read_exact(&mut read[head.len() + COUNTS..]).is_ok() && sum_holds(&read, &layout)
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
    let bytes = encode(searcher, &pi.fields, &families).map_err(|e| tantivy_err(&pi.dir, e))?;
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
fn encode(searcher: &Searcher, fields: &Fields, families: &Families) -> tantivy::Result<Vec<u8>> {
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
    // The sessions the members are in, with their ids and files.
    let mut keys: Vec<u64> = groups
        .iter()
        .flat_map(|g| g[1..].iter().map(|(s, _)| *s))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let names = session_names(searcher, fields, &keys)?;
    let names_len: usize = names.iter().map(|(i, p)| i.len() + p.len()).sum();
    let too_many = |_| tantivy::TantivyError::InvalidArgument("copy groups over 4 GB".into());
    let counts = Counts {
        groups: groups.len() as u32,
        members: members as u32,
        sessions: keys.len() as u32,
        names: u32::try_from(names_len).map_err(too_many)?,
    };
    let mut out = header(readers);
    let head = out.len();
    let layout = Layout::new(head, readers.iter().map(|r| r.max_doc()), counts)
        .expect("the sizes of groups held in memory");
    out.resize(layout.leads, 0);
    out[head] = u8::from(uniform.role) | u8::from(uniform.model) << 1 | u8::from(uniform.time) << 2;
    for (k, v) in [counts.groups, counts.members, counts.sessions, counts.names]
        .into_iter()
        .enumerate()
    {
        out[head + 1 + 4 * k..head + 5 + 4 * k].copy_from_slice(&v.to_le_bytes());
    }
    // Each segment's bits: the members, which stand behind their lead.
    for g in &groups {
        for (_, a) in &g[1..] {
            let (at, _) = layout.bits[a.segment_ord as usize];
            out[at + a.doc_id as usize / 8] |= 1 << (a.doc_id % 8);
        }
    }
    let sum = crc32fast::hash(&out[..layout.sum]);
    out[layout.sum..layout.leads].copy_from_slice(&sum.to_le_bytes());
    out.reserve(layout.len - out.len());
    // The leads, in address order, and where their members are.
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
    // The sessions by key, and where their names are.
    let mut at = 0u32;
    for (key, (id, path)) in keys.iter().zip(&names) {
        put_u64(&mut out, *key);
        for name in [id, path] {
            put_u32(&mut out, at);
            put_u32(&mut out, name.len() as u32);
            at += name.len() as u32;
        }
    }
    for (id, path) in &names {
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(path.as_bytes());
    }
    debug_assert_eq!(out.len(), layout.len);
    Ok(out)
}

/// The id and file of each session of `keys` (sorted), as its record
/// has them (empty when it has none): the record is the first living
/// session document with the key, segment after segment, as
/// [`PiIndex::stored_session`] finds it; its id and file are the terms of
/// the two fields on it (raw terms, the whole value each). Read from the
/// three fields' terms, not from the records, which would be a read of
/// the document store per session.
fn session_names(
    searcher: &Searcher,
    fields: &Fields,
    keys: &[u64],
) -> tantivy::Result<Vec<(String, String)>> {
    use tantivy::schema::IndexRecordOption::Basic;
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = vec![(String::new(), String::new()); keys.len()];
    let mut found = vec![false; keys.len()];
    for reader in searcher.segment_readers() {
        let alive = |doc: DocId| reader.alive_bitset().is_none_or(|a| a.is_alive(doc));
        // Each session document's id and file, by document.
        let mut named: [KeyMap<DocId, String>; 2] = Default::default();
        for (field, names) in [fields.session_id, fields.path].into_iter().zip(&mut named) {
            let inv = reader.inverted_index(field)?;
            let mut terms = inv.terms().stream()?;
            while terms.advance() {
                let Ok(name) = std::str::from_utf8(terms.key()) else {
                    continue;
                };
                let mut postings = inv.read_postings_from_terminfo(terms.value(), Basic)?;
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    names.insert(doc, name.to_owned());
                    doc = postings.advance();
                }
            }
        }
        let inv = reader.inverted_index(fields.session_key)?;
        let mut terms = inv.terms().stream()?;
        while terms.advance() {
            let Ok(key) = <[u8; 8]>::try_from(terms.key()) else {
                continue;
            };
            let Ok(i) = keys.binary_search(&u64::from_be_bytes(key)) else {
                continue;
            };
            if found[i] {
                continue;
            }
            let mut postings = inv.read_postings_from_terminfo(terms.value(), Basic)?;
            let mut doc = postings.doc();
            while doc != TERMINATED && !alive(doc) {
                doc = postings.advance();
            }
            if doc != TERMINATED {
                found[i] = true;
                let [ids, paths] = &mut named;
                out[i] = (
                    ids.remove(&doc).unwrap_or_default(),
                    paths.remove(&doc).unwrap_or_default(),
                );
            }
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
/// shows; `None` for another state, a file cut short or not ours, or
/// bits that are not the ones written. What is checked here is the
/// header, the length and the bits' checksum, not the groups' table: a
/// hit's group is checked when it is looked up ([`Groups::copies_of`]).
fn decode(bytes: memmap2::Mmap, searcher: &Searcher) -> Option<Groups> {
    let readers = searcher.segment_readers();
    let head = header(readers);
    let layout = layout(&head, readers, &bytes)?;
    if bytes.len() != layout.len || !sum_holds(&bytes, &layout) {
        return None;
    }
    let flags = bytes[head.len()];
    let c = counts(&head, &bytes)?;
    let (n, m, sessions) = (c.groups as usize, c.members as usize, c.sessions as usize);
    Some(Groups {
        max_docs: readers.iter().map(|r| r.max_doc()).collect(),
        n,
        m,
        sessions,
        uniform: Uniform {
            role: flags & 1 != 0,
            model: flags & 2 != 0,
            time: flags & 4 != 0,
        },
        layout,
        bytes,
    })
}

/// The copy groups saved beside the index at `dir` for the state
/// `searcher` shows, or `None` when none were saved for that state (a
/// search then merges copies itself).
pub fn read(dir: &Path, searcher: &Searcher) -> Option<Groups> {
    let file = std::fs::File::open(path(dir)).ok()?;
    // Mapped and read in place: a search reads the bits of its matches
    // and the groups of its hits, not the whole file. The file is only
    // ever replaced whole (renamed over), never written in place, so the
    // mapping sees one version of it.
    // SAFETY: see above; a file cut meanwhile by another program could
    // fault the process, as for the index's own mapped files.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    decode(map, searcher)
}
