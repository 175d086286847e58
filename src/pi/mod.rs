//! The Pi session format: everything pi-index knows about what Pi writes.
//!
//! - [`fingerprint`](mod@fingerprint): is a file a Pi session at all (its
//!   header line only, after Oh My Pi's title slot when there is one)?
//! - [`agent`]: which agent of the family wrote it (Pi or Oh My Pi).
//! - [`entry`]: one line of a session, seen without allocating: a cheap
//!   prefix scan for lines that carry nothing to index, and a simd-json tape
//!   parse (with reused buffers) for the rest.
//! - [`chunk`]: the loop over a chunk's lines, with damage recovered and
//!   counted.
//! - [`extract`]: from entries to documents, following the rules of the
//!   format page exactly, plus the session facts (model, name) they carry.
//! - [`parsed`]: what the loop gathers and the rules fill, below both.
//! - [`session`]: a file's chunks put back together: line numbers, the
//!   active branch, the model in effect, the final name.
//! - [`repair`]: a line cut short, closed so what was written is read.
//! - [`glued`]: a line of several entries glued together, split.
//! - [`giant`]: a line of many megabytes, read in bounded memory (its
//!   text indexed up to [`giant::MAX_DOCUMENT_BYTES`], the cut reported).
//! - [`branch`]: which entries lie on the active branch.
//! - [`time`]: Pi's timestamps.
//! - [`tree`]: a session file's entry tree (each entry's place, none of
//!   its text), as Pi's export reads it.
//! - [`kinds`]: the roles of indexed text and the opt-in kinds.
//! - [`usage`]: what each model call cost, from every entry that records
//!   it.
//!
//! This module knows nothing of files, threads or the index: it turns bytes
//! into [`Document`]s and [`Session`]s (with the facts they carry: model,
//! name).

pub mod agent;
pub mod branch;
pub mod chunk;
pub mod document;
pub mod entry;
pub mod extract;
pub mod fingerprint;
pub mod giant;
pub mod glued;
pub mod kinds;
pub mod parsed;
pub mod repair;
pub mod scan;
pub mod session;
pub mod skim;
pub mod time;
pub mod tree;
pub mod usage;

pub use agent::Agent;
pub use chunk::ChunkParser;
pub use document::{Damage, Document, Edited, Truncation};
pub use fingerprint::{fingerprint, Header, Rejection};
pub use kinds::{Kinds, Role};
pub use parsed::ParsedChunk;
pub use session::Session;
