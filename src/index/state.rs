//! What the index records of each session file it holds: the file's
//! identity on disk when it was read, how far it was indexed, and hashes
//! of the indexed bytes. The build computes it, the index stores it (on the
//! session's record, committed with its documents), and the next build
//! compares it with the file as discovery finds it now:
//!
//! - [`FileState::unchanged`]: same device, inode, size and time: the file
//!   is not even opened;
//! - [`FileState::grown`]: the same file with the bytes indexed before
//!   intact: only the lines after them are read;
//! - anything else: the file was rewritten, and its documents replaced.
//!
//! "The bytes indexed before" leave out Oh My Pi's title slot, the line
//! before the header that it rewrites in place when the session is
//! renamed (see [`crate::pi::fingerprint::TitleSlot`]): a file whose slot
//! changed and whose other bytes only grew is read as grown (the new
//! title taken, only the new lines indexed). The slot's width is the
//! file's current one; a slot of another width moves every byte after
//! it, and the hashes no longer match.

use crate::discover::FileIdentity;

/// What identifies the indexed state of a session file, so the next build
/// can tell an unchanged file (same identity, size and time: not opened)
/// from one that grew (same identity, old bytes intact: only new lines
/// read) and one that was rewritten (everything replaced).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileState {
    /// Device number.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// Size when indexed.
    pub size: u64,
    /// Modification time when indexed, ns since the epoch.
    pub mtime_ns: u64,
    /// Bytes of complete lines indexed (a half-written last line is not).
    pub indexed_to: u64,
    /// Hash of the first [`HASH_SPAN`] bytes (after a title slot).
    pub head_hash: u64,
    /// Hash of the [`HASH_SPAN`] bytes before `indexed_to` (after a title
    /// slot).
    pub tail_hash: u64,
}

/// The indexed state of every session file, by path, as the index holds
/// it (keyed with [`PathHasher`]).
pub type FileStates = std::collections::HashMap<String, FileState, PathHasher>;

pub use crate::discover::PathHasher;

/// How many bytes at each end of the indexed part are hashed.
pub const HASH_SPAN: u64 = 4096;

/// FNV-1a, 64 bits: small, fast on 4 KiB, and stable across releases (the
/// hashes are stored in the index).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl FileState {
    /// The state of a file whose complete lines end at `indexed_to`, given
    /// its bytes (at least `indexed_to` of them) and where its title slot
    /// ends (`slot_end`, 0 when it has none).
    pub fn of(bytes: &[u8], identity: FileIdentity, slot_end: u64, indexed_to: u64) -> FileState {
        let (head, tail) = hashes(bytes, slot_end, indexed_to);
        FileState {
            dev: identity.dev,
            ino: identity.ino,
            size: identity.size,
            mtime_ns: identity.mtime_ns,
            indexed_to,
            head_hash: head,
            tail_hash: tail,
        }
    }
}

impl FileState {
    /// Whether the file is, by its metadata, exactly as it was indexed
    /// (same device, inode, size and time): then it is not even opened.
    pub fn unchanged(&self, now: &FileIdentity) -> bool {
        (self.dev, self.ino, self.size, self.mtime_ns) == (now.dev, now.ino, now.size, now.mtime_ns)
    }

    /// Whether the file whose `bytes` are mapped now (with identity `now`,
    /// its title slot ending at `slot_end`) is the file indexed before,
    /// grown: same device and inode, and the bytes indexed before still
    /// there, as hashed. Then only the lines after
    /// [`FileState::indexed_to`] are new.
    pub fn grown(&self, now: &FileIdentity, bytes: &[u8], slot_end: u64) -> bool {
        (self.dev, self.ino) == (now.dev, now.ino)
            && self.indexed_to > 0
            && (bytes.len() as u64) >= self.indexed_to
            && hashes(bytes, slot_end, self.indexed_to) == (self.head_hash, self.tail_hash)
    }
}

/// Hashes of the first and the last [`HASH_SPAN`] bytes of
/// `bytes[from..to]`: the bytes before `to`, a title slot (`..from`) left
/// out.
pub fn hashes(bytes: &[u8], from: u64, to: u64) -> (u64, u64) {
    let to = (to as usize).min(bytes.len());
    let from = (from as usize).min(to);
    let span = HASH_SPAN as usize;
    let head = fnv1a(&bytes[from..to.min(from + span)]);
    let tail = fnv1a(&bytes[to.saturating_sub(span).max(from)..to]);
    (head, tail)
}
