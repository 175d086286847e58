//! Text on its way out: every byte pi-index prints for a person or a
//! program passes through here.
//!
//! What pi-index prints comes largely from files other programs wrote:
//! a session's text, directory, name and id, file paths, error messages
//! about them. None of it may act on the terminal it is shown on.
//!
//! - [`sanitize`](mod@sanitize): the one function that makes text safe to
//!   show ([`sanitize()`](sanitize::sanitize), and [`Untrusted`] to format
//!   a field with it; [`OneLine`] for a path or name inside a line, its
//!   newlines escaped too). The picker draws with it too.
//! - [`screen`]: [`Screen`], the writer for human output: everything
//!   written through it is sanitized, and its [`Paint`]s are the only
//!   colour. The command line reaches standard output and error only
//!   through a `Screen` or a [`JsonLines`] (clippy's `disallowed-macros`
//!   and `disallowed-methods`, in `clippy.toml`, refuse `println!` and
//!   `std::io::stdout` everywhere else).
//! - [`json`]: [`JsonLines`], JSON with every control character escaped.
//! - [`shell`]: [`shell_quote`], a word quoted so a command pastes and runs.
//! - [`text`]: what every front end cuts and shapes alike: short times,
//!   texts cut to a number of characters, snippets split at their
//!   highlights.
//!
//! Knowing whether the output is a terminal, and whether to colour it, is
//! the command line's business, not this module's.

pub mod json;
pub mod sanitize;
pub mod screen;
pub mod shell;
pub mod text;

pub use json::JsonLines;
pub use sanitize::{sanitize, OneLine, Untrusted};
pub use screen::{Paint, Screen};
pub use shell::shell_quote;
