//! Files saved beside the index for one state of it (its segments and
//! their deletions): what a build or a search would otherwise work out
//! again from the index itself. Each file starts with its kind and the
//! state it was written for ([`mark`]); a reader that finds another state
//! ignores the file, so a file left by an older state, a killed build or
//! another version costs only the work it would have saved.
//!
//! - `copy-groups.bin` ([`groups`]): the copies of forked messages, the
//!   groups a search merges them by.
//! - `file-states.bin` ([`states`]): the indexed state of every session
//!   file.
//!
//! A build writes them after its commit (or, with nothing to do, for the
//! state it read); [`mark`] is what they share.

pub mod groups;
pub mod mark;
pub mod states;
