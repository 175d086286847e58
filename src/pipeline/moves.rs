//! Files the index holds that this build did not find where they were:
//! moved to another place (a user who set Pi's `sessionDir` and moved
//! their sessions there), or outside every root this build reads (a
//! session dir no longer configured, or a build over a subset of the
//! directories indexed before).

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::discover::Candidate;
use crate::index::state::{fnv1a, FileStates, HASH_SPAN};
use crate::index::{IndexError, PiIndex};
use crate::pi::fingerprint::read_header;

/// The roots as discovery sees them: canonical where they exist.
pub(super) fn canonical_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.clone()))
        .collect()
}

/// Whether `path` lies under one of `roots` (or is one of them).
pub(super) fn under_roots(roots: &[PathBuf], path: &str) -> bool {
    let p = Path::new(path);
    roots.iter().any(|r| p.starts_with(r))
}

/// Which of the `fresh` candidates (not in the index) are `vanished`
/// files (in the index, gone from their path) at a new place: the same
/// session id in the header, and the bytes the index holds of the old
/// file still there, as hashed (so it is the same file, maybe grown).
/// Each vanished file moves at most once. Returns `(from, to)` pairs.
pub(super) fn find_moves(
    vanished: &[&str],
    fresh: &[&Candidate],
    states: &FileStates,
    pi: &PiIndex,
    searcher: &tantivy::Searcher,
) -> Result<Vec<(String, String)>, IndexError> {
    let mut by_id: HashMap<String, Vec<&str>> = HashMap::new();
    for &v in vanished {
        if let Some(s) = pi.stored_session_at(searcher, v)? {
            by_id.entry(s.session_id).or_default().push(v);
        }
    }
    let mut moves = Vec::new();
    if by_id.is_empty() {
        return Ok(moves);
    }
    for c in fresh {
        let Ok(mut file) = File::open(&c.path) else {
            continue;
        };
        let Ok(Ok((_, header))) = read_header(&mut file) else {
            continue;
        };
        let Some(candidates) = by_id.get_mut(&header.id) else {
            continue;
        };
        let slot_end = header.slot.as_ref().map_or(0, |s| s.end);
        let found = candidates.iter().position(|v| {
            states.get(*v).is_some_and(|st| {
                st.indexed_to <= c.len
                    && window_hashes(&mut file, slot_end, st.indexed_to)
                        .is_ok_and(|h| h == (st.head_hash, st.tail_hash))
            })
        });
        if let Some(i) = found {
            let from = candidates.remove(i);
            moves.push((from.to_owned(), c.path.to_string_lossy().into_owned()));
        }
    }
    Ok(moves)
}

/// The hashes [`FileState`] keeps of a file's first `to` bytes, read
/// from the file: the first and the last [`HASH_SPAN`] bytes of
/// `from..to` (`..from` being its title slot), as
/// [`crate::index::state::hashes`] makes them.
fn window_hashes(file: &mut File, from: u64, to: u64) -> std::io::Result<(u64, u64)> {
    let mut read = |at: u64, end: u64| -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0; end.saturating_sub(at) as usize];
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut buf)?;
        Ok(buf)
    };
    let from = from.min(to);
    let head = read(from, to.min(from + HASH_SPAN))?;
    let tail = read(to.saturating_sub(HASH_SPAN).max(from), to)?;
    Ok((fnv1a(&head), fnv1a(&tail)))
}
