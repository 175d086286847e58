//! What the write side records so that forks can be told apart from
//! their parents at read time (see [`crate::search::family`]).
//!
//! Pi copies entries into forks with their ids, timestamps and text, and
//! names the parent file in the header (`parentSession`). Two facts are
//! kept per document, both cheap to compute while a document is indexed:
//!
//! - on a message with an entry id, its **copy key**: a 64-bit hash of the
//!   entry id and the text. Two documents with the same copy key in one
//!   family are one message; a copy edited after the fork, or an entry id
//!   shared by chance with different text, has another key. Version-1
//!   entries have no id and are never copies (the column stays empty).
//! - on a session, its **head**: the copy key of its first message with an
//!   entry id. Older forks without `parentSession` begin with their
//!   parent's first entries, so they share its head.
//!
//! The hash reads eight bytes at a time (folded 128-bit multiplies, the
//! wyhash construction): a message's text is hashed once, at a fraction
//! of the cost of tokenizing it. Its values are stored in the index, so
//! the function must never change without a [`super::SCHEMA_VERSION`] bump.

const K0: u64 = 0xa076_1d64_78bd_642f;
const K1: u64 = 0xe703_7ed1_a0b4_28db;

#[inline]
fn mix(a: u64, b: u64) -> u64 {
    let m = u128::from(a).wrapping_mul(u128::from(b));
    (m as u64) ^ ((m >> 64) as u64)
}

/// A 64-bit hash of `bytes`, continuing from `seed`.
fn hash(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = seed ^ K0;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let v = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        h = mix(h ^ v, K1);
    }
    let rest = words.remainder();
    let mut tail = [0u8; 8];
    tail[..rest.len()].copy_from_slice(rest);
    h = mix(h ^ u64::from_le_bytes(tail), K1);
    mix(h ^ bytes.len() as u64, K0)
}

/// The copy key of a message: its entry id and text, hashed; never 0
/// (0 is "no key" in the column).
pub fn copy_key(entry_id: &str, text: &str) -> u64 {
    hash(hash(0, entry_id.as_bytes()), text.as_bytes()).max(1)
}

/// The head of a session whose documents are `docs`, in file order: the
/// copy key of the first one with an entry id (0 when none has one).
pub fn head_of(docs: &[crate::pi::Document]) -> u64 {
    docs.iter()
        .find_map(|d| d.entry_id.as_deref().map(|id| copy_key(id, &d.text)))
        .unwrap_or(0)
}

/// The hash by which a session is found from the id in its file's name
/// (a parent that moved: see [`crate::search::family`]).
pub fn id_hash(id: &str) -> u64 {
    super::state::fnv1a(id.as_bytes()).max(1)
}

/// The session id a header's `parentSession` names: the id in the parent
/// file's name (Pi, and Oh My Pi's `/branch`), or the value itself when it
/// is an id rather than a path (Oh My Pi's `fork()` and `forkFrom` name
/// the parent by its session id).
pub fn parent_id(parent: &str) -> Option<&str> {
    id_in_file_name(parent).or_else(|| {
        let bare =
            !parent.is_empty() && !parent.contains(['/', '\\']) && !parent.ends_with(".jsonl");
        bare.then_some(parent)
    })
}

/// The session id in a Pi session file's name: `<timestamp>_<id>.jsonl`.
pub fn id_in_file_name(path: &str) -> Option<&str> {
    let name = path.rsplit(['/', '\\']).next()?;
    let stem = name.strip_suffix(".jsonl")?;
    let (_, id) = stem.split_once('_')?;
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_read_from_a_pi_file_name() {
        assert_eq!(
            id_in_file_name("/s/--p--/2026-01-02T03-04-05-006Z_0193-ab.jsonl"),
            Some("0193-ab")
        );
        assert_eq!(id_in_file_name("/s/notes.jsonl"), None);
        assert_eq!(id_in_file_name("/s/x_y.txt"), None);
        assert_eq!(
            parent_id("/s/--p--/2026-01-02T03-04-05-006Z_0193-ab.jsonl"),
            Some("0193-ab")
        );
        assert_eq!(parent_id("0198c0de-7a11-7000"), Some("0198c0de-7a11-7000"));
        assert_eq!(parent_id("/s/notes.jsonl"), None);
        assert_eq!(parent_id("notes.jsonl"), None);
    }

    #[test]
    fn the_same_id_and_text_is_one_key_and_any_difference_another() {
        let k = copy_key("a1b2c3d4", "fix the flaky socket test");
        assert_eq!(k, copy_key("a1b2c3d4", "fix the flaky socket test"));
        assert_ne!(k, copy_key("a1b2c3d4", "fix the flaky socket test!"));
        assert_ne!(k, copy_key("a1b2c3d5", "fix the flaky socket test"));
        // The id and the text are not simply concatenated.
        assert_ne!(copy_key("ab", "c"), copy_key("a", "bc"));
        assert_ne!(copy_key("", ""), 0);
    }

    #[test]
    fn keys_are_stable_across_releases() {
        // Stored in the index: a change here needs a schema version bump.
        let once = copy_key("00000000", "the same text every release");
        assert_eq!(once, 0x0c04_4158_f239_e9f9, "{once:#x}");
    }
}
