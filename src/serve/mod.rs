//! `pi-index serve`: the web view. Every session, searched and read in a
//! browser, local and read-only.
//!
//! A front end over [`crate::search`] and the index, beside the picker and
//! the MCP server (it imports neither). Built on axum (over the hyper and
//! tokio the MCP server already uses); pages are drawn by the server with
//! maud, which escapes every value it is given, so text from a session
//! file (messages, names, directories, tool arguments, file names) reaches
//! the page as text by construction. The few scripts and the stylesheet
//! are plain files compiled into the binary ([`assets`]).
//!
//! - [`server`]: options, listening, the one route table, behind the
//!   guard every request passes ([`crate::http::guard`]: Host, Origin and
//!   token checks, the security headers, the limits per request and per
//!   client); [`app`]: what every handler shares;
//! - [`api`]: the JSON API under `/api/`, the same objects as the command
//!   line's `--json`;
//! - [`pages`]: the search and stats pages;
//! - [`session`]: a session file read for the page (its tree, a window of
//!   its entries) and drawn, entry by entry;
//! - [`markdown`]: message text as HTML, raw HTML shown as text;
//! - [`charts`]: bar charts drawn as SVG by the server.
//!
//! Which session was forked from which is the index's own families
//! ([`crate::search::family`]), as `sessions --json` and `show` give them.
//!
//! The index is kept fresh by [`crate::live`]: a background thread runs an
//! incremental build every few seconds (never two at once); requests are
//! answered from the last commit and never wait for a build.
//!
//! With `--db URL` the same pages and API read the team's PostgreSQL
//! database instead, through the same read interface
//! ([`crate::read::Source`]): every pushed host's sessions, each with its
//! host, and no local index at all. What the database cannot give (a
//! session's file: its tree, its tool calls, its raw lines) the pages
//! check for ([`crate::read::Capabilities`]): a session page then shows
//! the session's indexed messages, a page at a time.

pub mod api;
pub mod app;
pub mod assets;
pub mod charts;
pub mod extract;
pub mod markdown;
pub mod pages;
pub mod server;
pub mod session;

pub use app::{
    App, CONNECTIONS, MAX_IN_FLIGHT, MAX_MAPPED, MAX_PAGE, MAX_PER_CLIENT, REQUEST_TIMEOUT,
    RESPONSE_TIMEOUT,
};
pub use server::{addresses, reachable, run, Options, ServeError};
