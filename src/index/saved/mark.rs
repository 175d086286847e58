//! What every file saved beside the index starts with (its kind and the
//! state of the index it was written for), the words it is written in,
//! and writing it whole.

use std::path::Path;

/// The copy groups' file ([`super::groups`]), and the name it is written
/// under before it is whole.
pub const GROUPS: [&str; 2] = ["copy-groups.bin", "copy-groups.bin.tmp"];

/// The file states' file ([`super::states`]), and the name it is written
/// under before it is whole.
pub const STATES: [&str; 2] = ["file-states.bin", "file-states.bin.tmp"];

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
