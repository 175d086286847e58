//! HTTP, as the web view and the MCP server serve it alike: one accept
//! loop that bounds every connection ([`accept`](mod@accept)), and one guard every
//! request passes ([`guard`]: Host, Origin, token, limits, timeouts).

pub mod accept;
pub mod guard;

pub use accept::{accept, serve, Limits, Watch};
