//! Files saved beside the index for one state of it (its segments and
//! their deletions): what a build or a search would otherwise work out
//! again from the index itself. Each file starts with its kind and the
//! state it was written for ([`mark`]); a reader that finds another state
//! ignores the file, so a file left by an older state, a killed build or
//! another version costs only the work it would have saved.
//!
//! - `copy-groups.bin` (`crate::search::groups`): the copies of forked
//!   messages.
//! - `file-states.bin` ([`super::saved_states`]): the indexed state of
//!   every session file.

use std::path::Path;

/// The first bytes of a file of kind `magic` for the state of `readers`:
/// the magic, then each segment's id and document counts.
pub(crate) fn mark(magic: &[u8], readers: &[tantivy::SegmentReader]) -> Vec<u8> {
    let mut out = Vec::with_capacity(magic.len() + 4 + 40 * readers.len());
    out.extend_from_slice(magic);
    put_u32(&mut out, readers.len() as u32);
    for reader in readers {
        out.extend_from_slice(reader.segment_id().uuid_string().as_bytes());
        put_u32(&mut out, reader.max_doc());
        put_u32(&mut out, reader.num_docs());
    }
    out
}

pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A reader of a file's little-endian words; `None` past its end.
pub(crate) struct Words<'a>(pub(crate) &'a [u8]);

impl<'a> Words<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// Write `bytes` as `dir/name`, whole or not at all: first under `tmp`,
/// then renamed.
pub(crate) fn write_whole(dir: &Path, [name, tmp]: [&str; 2], bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(tmp);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dir.join(name))
}
