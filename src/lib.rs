//! # pi-index
//!
//! Index every session the [Pi coding agent](https://github.com/badlogic/pi-mono)
//! has saved, and search them in milliseconds.
//!
//! Pi saves each conversation as a JSON Lines file under
//! `~/.pi/agent/sessions/<encoded cwd>/<timestamp>_<id>.jsonl`. pi-index
//! reads them through a pipeline whose stages are this crate's modules, in
//! the order data flows through them:
//!
//! 1. [`discover`]: paths (or Pi's default locations) to candidate files.
//! 2. [`pi::fingerprint`](mod@pi::fingerprint): the first line of each file decides whether it
//!    is a Pi session; nothing else of a rejected file is read.
//! 3. [`source`]: an accepted file is memory-mapped and split into complete
//!    lines (a half-written last line waits for the next build), and large
//!    files into newline-aligned chunks.
//! 4. [`pi`]: each line is judged by a prefix scan or parsed by simd-json
//!    with reused per-thread buffers, and the format's rules turn entries
//!    into [`pi::Document`]s: one per user or assistant message with text,
//!    plus opt-in kinds ([`pi::Kinds`]), each knowing whether it lies on the
//!    session's active branch.
//! 5. [`index`]: documents go into a tantivy index, committed once per build.
//!
//! The read side, [`search`], answers queries from the committed index;
//! [`output`] makes what it returns safe to print. [`team`] pushes the
//! committed index into a team's PostgreSQL database and searches there
//! with the same query language. The front ends sit side by side over
//! the library: the picker ([`pick`]), the MCP server ([`mcp`]) and the
//! web view ([`serve`]), the long-running ones kept fresh by [`live`].
//! They (and `push --watch`) refresh through [`refresh`], from the
//! session directories [`watch`]ed: a refresh costs what changed.
//!
//! [`pipeline::build`] runs stages 1 to 5 in parallel (rayon), timing
//! each phase's CPU with [`cpu`], and [`index::PiIndex`] reads the
//! result. The `pi-index` binary is a thin
//! command line over these.
//!
//! ```no_run
//! use pi_index::pipeline::{build, BuildOptions};
//! use pi_index::pi::Kinds;
//!
//! let opts = BuildOptions::new(
//!     vec!["fixtures/sessions".into()],
//!     "/tmp/pi-index-example".into(),
//! )
//! .kinds(Kinds::default())
//! .threads(2)
//! .thread_memory(32 << 20);
//! let report = build(&opts, &|_bytes| {}).unwrap();
//! println!("{} messages from {} sessions", report.messages_indexed, report.sessions);
//! ```
#![warn(missing_docs)]

pub mod cpu;
pub mod discover;
mod failpoint;
pub mod http;
pub mod index;
pub mod live;
pub mod mcp;
pub mod output;
pub mod pi;
pub mod pick;
pub mod pipeline;
pub mod read;
pub mod refresh;
pub mod search;
pub mod serve;
pub mod source;
pub mod team;
pub mod watch;
