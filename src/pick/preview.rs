//! The preview: the messages around a hit, in file order, as
//! `pi-index show --around` prints them (every branch, so a hit on an
//! abandoned branch is seen where it was said), read by the source
//! ([`crate::read::Source::preview`]).

pub use crate::read::{Preview, Target};

/// Messages shown before and after the target (as `show --around`).
pub const CONTEXT: usize = 3;

/// Which preview: a session file and a place in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewKey {
    /// The session's key (see [`crate::index::schema::session_key`]).
    pub sess: u64,
    /// Its host (the team database's sessions).
    pub host: Option<String>,
    /// The session file, as stored.
    pub path: String,
    /// The place.
    pub target: Target,
}
