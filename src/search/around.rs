//! The messages around a line of a session, as `show --around` and the
//! MCP `show` tool give them: the same window, and the same error for a
//! line past the session's end, from both.

use crate::read::StoredDoc;

/// A line after the session's last message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line} is past the session's last message (line {last}): give a line up to {last}")]
pub struct PastEnd {
    /// The line asked for.
    pub line: u64,
    /// The line of the session's last message.
    pub last: u64,
}

/// Which of `docs` (a session's messages in file order, every branch) are
/// shown around `line`: the first at or after it and `context` on each
/// side. An empty session gives an empty window.
pub fn around(
    docs: &[StoredDoc],
    line: u64,
    context: usize,
) -> Result<std::ops::Range<usize>, PastEnd> {
    let Some(last) = docs.last().map(|d| d.line) else {
        return Ok(0..0);
    };
    if line > last {
        return Err(PastEnd { line, last });
    }
    let at = docs.partition_point(|d| d.line < line);
    let from = at.saturating_sub(context);
    let to = at.saturating_add(context).saturating_add(1).min(docs.len());
    Ok(from..to)
}
