//! The picker (`pi-index pick`): a full-screen search over the index
//! that ends in "take me back there" (Pi resumes the chosen session).
//!
//! This module is the picker without a terminal: everything but reading
//! keys from a real terminal and starting Pi, which the command line
//! does. Tests and the latency bench drive it with ratatui's
//! `TestBackend`.
//!
//! - [`app`]: the state machine: keys in, search and preview jobs out,
//!   their answers in, the choice at the end.
//! - [`view`]: the frame drawn from that state (every string from a
//!   session through [`text`], so through [`crate::output::sanitize()`]).
//! - [`rows`]: a query to one row per session (the library's
//!   session-level search), and the hits inside one session.
//! - [`preview`]: the messages around a hit, read from the index.
//! - [`worker`]: a thread that runs the newest job, so typing never waits
//!   for a search.
//! - [`refresh`]: the index opened, and brought up to date in the
//!   background.
//! - [`source`]: the index as of one commit, what the jobs read.
//! - [`jobs`]: a search, a session's hits or a preview run against it
//!   ([`settle`] runs every job the app asks for, for tests and benches).
//!
//! ```
//! use pi_index::pick::{app::App, settle};
//! use ratatui::{backend::TestBackend, Terminal};
//!
//! let mut app = App::new("tokio", false, false);
//! settle(&mut app, None); // no index: no rows
//! let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
//! terminal.draw(|frame| app.draw(frame)).unwrap();
//! ```

pub mod app;
pub mod input;
pub mod jobs;
pub mod preview;
pub mod refresh;
pub mod rows;
pub mod source;
pub mod text;
pub mod view;
pub mod worker;
pub mod wrapped;

pub use jobs::{run_hits, run_preview, run_search, settle};
pub use source::View;
