//! The indexed state of every session file, saved beside the index for
//! one state of it ([`super`]), so that a build with nothing to
//! do reads one small file instead of the index's columns.
//!
//! Reading the states from the columns takes the `file` column's
//! dictionary, whose blocks are compressed (a decompressor made for each
//! block), and a lookup of seven columns per file: most of a no-change
//! build's time on one core, beside the walk of the session directories
//! that wants both cores
//! ([docs/performance.md](../../../docs/performance.md#discovery-and-the-plan)).
//! This file holds the same map, mapped and read at once. A build with
//! nothing to do writes it when it is not of the state it read (the first
//! such build after a commit); a build that commits leaves it to that one,
//! and every reader checks its state, its length and its checksum before
//! trusting a byte of it.

use std::path::Path;

use super::mark::{put_u32, put_u64, write_whole, Words};
use crate::index::state::{FileState, FileStates, PathHasher};

/// The file's name in the index directory, and the name it is written
/// under before it is whole.
pub const FILE: [&str; 2] = super::mark::STATES;

/// Its first bytes.
const MAGIC: &[u8] = b"pi-index file states 1\n";

/// The bytes a file for the state of `readers` starts with.
pub(crate) fn mark(readers: &[tantivy::SegmentReader]) -> Vec<u8> {
    super::mark::mark(MAGIC, readers)
}

/// The states saved in `dir` for the state `mark` names, or `None` (no
/// file, another state, a file cut short, altered or not ours).
pub(crate) fn read(dir: &Path, mark: &[u8]) -> Option<FileStates> {
    // Mapped, not read into a buffer, which would be new memory, a fault
    // a page (docs/performance.md, as above). The file is only ever
    // replaced whole (renamed over), never written in place, so the
    // mapping sees one version of it.
    let file = std::fs::File::open(dir.join(FILE[0])).ok()?;
    // SAFETY: see above; a file truncated meanwhile by another program
    // could fault the process, as for the index's own mapped files.
    let bytes = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    decode(&bytes, mark)
}

/// Save `states` in `dir` for the state `mark` names (replacing the file
/// whole).
pub(crate) fn save(dir: &Path, mark: &[u8], states: &FileStates) -> std::io::Result<()> {
    write_whole(dir, FILE, &encode(mark, states))
}

/// Each state: its path's length and bytes, then its seven words.
fn encode(mark: &[u8], states: &FileStates) -> Vec<u8> {
    let body: usize = states.keys().map(|p| 4 + p.len() + 56).sum();
    let mut out = Vec::with_capacity(mark.len() + 8 + body + 4);
    out.extend_from_slice(mark);
    put_u64(&mut out, states.len() as u64);
    for (path, s) in states {
        put_u32(&mut out, path.len() as u32);
        out.extend_from_slice(path.as_bytes());
        for v in [
            s.dev,
            s.ino,
            s.size,
            s.mtime_ns,
            s.indexed_to,
            s.head_hash,
            s.tail_hash,
        ] {
            put_u64(&mut out, v);
        }
    }
    let sum = crc32fast::hash(&out);
    put_u32(&mut out, sum);
    out
}

fn decode(bytes: &[u8], mark: &[u8]) -> Option<FileStates> {
    let (body, sum) = bytes.split_last_chunk::<4>()?;
    if crc32fast::hash(body) != u32::from_le_bytes(*sum) {
        return None;
    }
    let mut w = Words(body.strip_prefix(mark)?);
    let n = usize::try_from(w.u64()?).ok()?;
    // Checked against what is left before anything is allocated for it.
    if n > w.0.len() / 60 {
        return None;
    }
    let mut states = FileStates::with_capacity_and_hasher(n, PathHasher::default());
    for _ in 0..n {
        let len = w.u32()? as usize;
        let path = std::str::from_utf8(w.take(len)?).ok()?;
        let state = FileState {
            dev: w.u64()?,
            ino: w.u64()?,
            size: w.u64()?,
            mtime_ns: w.u64()?,
            indexed_to: w.u64()?,
            head_hash: w.u64()?,
            tail_hash: w.u64()?,
        };
        if states.insert(path.to_owned(), state).is_some() {
            return None;
        }
    }
    w.0.is_empty().then_some(states)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states() -> FileStates {
        let mut states = FileStates::default();
        for i in 0..50u64 {
            states.insert(
                format!("/home/u/.pi/agent/sessions/--p--/s{i:03}-é.jsonl"),
                FileState {
                    dev: 1,
                    ino: 1000 + i,
                    size: 10 * i,
                    mtime_ns: 1_700_000_000_000_000_000 + i,
                    indexed_to: 9 * i,
                    head_hash: i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                    tail_hash: !i,
                },
            );
        }
        states
    }

    /// What is saved reads back exactly, for its state only; a file cut
    /// short, with a byte changed or one more, reads as none.
    #[test]
    fn saved_states_read_back_for_their_state_only() {
        let mark = b"pi-index file states 1\nSTATE-A".to_vec();
        let bytes = encode(&mark, &states());
        assert_eq!(decode(&bytes, &mark), Some(states()));
        assert_eq!(decode(&bytes, b"pi-index file states 1\nSTATE-B"), None);
        assert_eq!(decode(&bytes[..bytes.len() - 1], &mark), None);
        let mut more = bytes.clone();
        more.push(0);
        assert_eq!(decode(&more, &mark), None);
        for at in [mark.len() + 3, bytes.len() / 2, bytes.len() - 2] {
            let mut changed = bytes.clone();
            changed[at] ^= 1;
            assert_eq!(decode(&changed, &mark), None, "byte {at} changed");
        }
        assert_eq!(decode(&[], &mark), None);
        let empty = encode(&mark, &FileStates::default());
        assert_eq!(decode(&empty, &mark), Some(FileStates::default()));
    }
}
