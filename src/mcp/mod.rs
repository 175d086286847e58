//! `pi-index mcp`: a [Model Context Protocol](https://modelcontextprotocol.io)
//! server, so a coding agent (Pi, Claude Code, Codex, ...) can search its own
//! past sessions through the index instead of re-reading files.
//!
//! Built on [`rmcp`], the official Rust SDK; this module owns only what is
//! pi-index's:
//!
//! - [`state`] (the crate's [`live`](crate::live), shared with the web
//!   view): the index as the server holds it, brought up to date before
//!   every call from the watched session directories (nothing runs when
//!   nothing changed; what changed is built; a message Pi appended before
//!   the call is found by it), its reader kept open and reloaded after a
//!   commit; or the team database (`--db`), read as it is at each call,
//!   through the same read interface;
//! - [`tools`]: the four tools' arguments, results and work, bounded
//!   whatever the corpus;
//! - [`stdio`] and [`http`]: the transports, in front of rmcp's, so that
//!   every request gets an answer and none can exhaust the server
//!   ([`message`]: what an unreadable message is answered), and serving
//!   over each (streamable HTTP on 127.0.0.1 only);
//! - [`server`]: the tools as the protocol sees them (names, descriptions,
//!   schemas), and one call run off the async runtime.
//!
//! Every failure a caller can cause (arguments that do not fit the schema,
//! an unknown session, a filter that does not parse, a limit over 50, a
//! missing index) is a tool error (`isError: true`) whose text says what to
//! do; no call panics the server or waits on a lock.
//!
//! ```no_run
//! use pi_index::mcp::{call, Options, Served, State};
//!
//! let opts = Options::new("/tmp/pi-index-example".into());
//! let served = Served::Index(Box::new(State::new(opts)));
//! let hits = call(&served, "search", serde_json::json!({"query": "tokio"})).unwrap();
//! println!("{hits}");
//! ```

pub mod http;
pub mod message;
pub mod server;
pub mod sessions;
pub mod stdio;
pub mod tools;

pub use crate::live as state;
pub use crate::live::{Options, Refresh, RefreshStatus, Served, State};
pub use http::{run_http, serve_http};
pub use server::{call, ServeError, Server, MAX_CONCURRENT_CALLS};
pub use stdio::{run_stdio, serve_stdio};
