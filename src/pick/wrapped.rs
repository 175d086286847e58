//! The preview wrapped to the pane: lines the view draws, kept between
//! frames while the message and the width stay. The app holds it (and
//! drops it when the index changes); only the view fills and reads it, so
//! the app knows this cache but not the view.

use ratatui::text::Line;

use super::preview::PreviewKey;

/// The preview as drawn lines, kept while its message and width stay.
pub struct PreviewLines {
    /// The message previewed.
    pub(super) key: PreviewKey,
    /// The pane's width they were wrapped to.
    pub(super) width: u16,
    /// The lines.
    pub(super) lines: Vec<Line<'static>>,
    /// The line each message starts on.
    pub(super) starts: Vec<usize>,
    /// The target message's.
    pub(super) target: usize,
}
