//! Drawing the picker: a frame from the app's state, nothing else.
//!
//! ```text
//! > tokio runtime                                  12 sessions · 345 hits
//! Enter resume in Pi · Tab hits · Ctrl-A active branch · ? keys · Esc quit
//! > Beta planning     ~/src/beta  2026-02-14  4 msgs │ ▶ user 2026-02-14 08:00 · line 3
//!     [user] tokio or async-std for the server?      │   tokio or async-std for the server?
//!   How do I parse… ~/src/alpha  2026-01-10  6 msgs  │
//!     [assistant] The tokio runtime panics when…     │   assistant 2026-02-14 08:00 · line 4
//! ```
//!
//! The prompt and a status line on top; below, one row of two lines per
//! session (name or first user message, directory, date, message count;
//! then the best hit's snippet, matched words highlighted), and on a
//! terminal wider than 80 and taller than 24 columns the preview beside
//! it. Every string from a session passes [`super::text`] (sanitized)
//! before it becomes a cell.

use std::collections::HashSet;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::app::{App, Focus, IndexState, SessionHits};
use super::preview::Preview;
use super::rows::Row;
use super::text::{
    clean, date, directory, fit, sanitized_lines, short_time, snippet_spans, width, word_line,
};
use super::wrapped::PreviewLines;
use crate::output::text::{plural, thousands};
use crate::read::{Hit, Matched};

/// Characters of one message the preview wraps and shows; the rest is
/// said to be there (a tool result can be megabytes).
const PREVIEW_CHARS: usize = 20_000;

/// The picker's styles, with and without colour (`NO_COLOR` leaves bold,
/// underline, dim and reverse).
#[derive(Clone, Copy)]
struct Theme {
    colour: bool,
}

impl Theme {
    fn accent(self) -> Style {
        let s = Style::new().add_modifier(Modifier::BOLD);
        if self.colour {
            s.fg(Color::Magenta)
        } else {
            s
        }
    }
    fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }
    fn matched(self) -> Style {
        if self.colour {
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        }
    }
    fn role(self) -> Style {
        if self.colour {
            Style::new().fg(Color::Green)
        } else {
            Style::new()
        }
    }
    fn warn(self) -> Style {
        if self.colour {
            Style::new().fg(Color::Yellow)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }
    /// The selected row's lines.
    fn selected(self) -> Style {
        if self.colour {
            Style::new().bg(Color::Indexed(236))
        } else {
            Style::new()
        }
    }
    /// The `>` before the selected row.
    fn marker(self) -> Style {
        if self.colour {
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        }
    }
}

/// Whether a terminal of this size shows the preview beside the list.
pub fn shows_preview(area: Rect) -> bool {
    area.width > 80 && area.height > 24
}

impl App {
    /// Draw the whole picker into `frame`.
    pub fn draw(&mut self, frame: &mut Frame) {
        let area = frame.area();
        let t = Theme {
            colour: self.colour,
        };
        if area.width < 20 || area.height < 4 {
            frame.render_widget(
                Paragraph::new("terminal too small for pi-index pick").wrap(Wrap { trim: true }),
                area,
            );
            return;
        }
        let [prompt, status, body] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(1),
        ])
        .areas(area);
        self.draw_prompt(frame, prompt, t);
        self.draw_status(frame, status, t);
        if shows_preview(area) {
            let [list, _, preview] = Layout::horizontal([
                Constraint::Percentage(60),
                Constraint::Length(1),
                Constraint::Fill(1),
            ])
            .areas(body);
            self.draw_list(frame, list, t);
            self.draw_preview(frame, preview, t);
        } else {
            self.draw_list(frame, body, t);
        }
        if self.help {
            // Over the list, or over everything when the list is too
            // short for the keys (60x15).
            let room = if body.height >= HELP_KEYS.len() as u16 + 2 {
                body
            } else {
                area
            };
            draw_help(frame, room, t);
        }
    }

    fn draw_prompt(&self, frame: &mut Frame, area: Rect, t: Theme) {
        let mut right = if self.searching() {
            "searching…".to_owned()
        } else if self.rows.len() < self.total {
            format!(
                "{} of {}",
                thousands(self.rows.len() as u64),
                plural(self.total as u64, "session", "sessions")
            )
        } else {
            plural(self.rows.len() as u64, "session", "sessions")
        };
        if self.active_only {
            right = format!("[active branch] {right}");
        }
        let cols = area.width as usize;
        let right = if width(&right) + 20 > cols {
            String::new()
        } else {
            right
        };
        let room = cols.saturating_sub(2 + width(&right) + 1).max(1);
        // The query, scrolled so that the cursor stays in view.
        let text = crate::output::sanitize(self.input.text()).into_owned();
        let before = crate::output::sanitize(self.input.before_cursor()).into_owned();
        let mut start = 0;
        while width(&before[start..]) >= room {
            start += before[start..].chars().next().map_or(1, char::len_utf8);
        }
        let shown = fit_plain(&text[start..], room);
        let cursor_x = area.x + 2 + width(&before[start..]) as u16;
        let pad = cols.saturating_sub(2 + width(&shown) + width(&right));
        let line = Line::from(vec![
            Span::styled("> ", t.accent()),
            Span::raw(shown),
            Span::raw(" ".repeat(pad)),
            Span::styled(right, t.dim()),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        if !self.help {
            frame.set_cursor_position((cursor_x.min(area.right().saturating_sub(1)), area.y));
        }
    }

    fn draw_status(&self, frame: &mut Frame, area: Rect, t: Theme) {
        let cols = area.width as usize;
        let (text, style) = if let Some(e) = &self.error {
            (clean(e), t.warn())
        } else if let Some(s) = index_status(&self.index) {
            (s, t.warn())
        } else if let Some(w) = self.warnings.first() {
            let more = match self.warnings.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            (
                format!("query position {}: {}{more}", w.position, clean(&w.message)),
                t.dim(),
            )
        } else {
            let wide = cols >= 84;
            // Enter resumes the session in the agent that wrote it.
            let agent = self
                .rows
                .get(self.selected)
                .map_or(crate::pi::Agent::Pi, |r| r.session.agent);
            let hint = match (self.focus, wide) {
                (Focus::Sessions, true) => format!(
                    "Enter resume in {} · Tab hits · Ctrl-A active branch · ? keys · Esc quit",
                    agent.name()
                ),
                (Focus::Hits, true) => {
                    "Enter resume at this hit · Tab sessions · Ctrl-A active branch · ? keys · Esc quit".to_owned()
                }
                (Focus::Sessions, false) => "Enter resume · Tab hits · ? keys · Esc quit".to_owned(),
                (Focus::Hits, false) => {
                    "Enter resume here · Tab sessions · ? keys · Esc quit".to_owned()
                }
            };
            (hint, t.dim())
        };
        frame.render_widget(Paragraph::new(Line::styled(fit(&text, cols), style)), area);
    }

    fn draw_list(&mut self, frame: &mut Frame, area: Rect, t: Theme) {
        let cols = area.width as usize;
        let mut lines: Vec<Line<'static>> = Vec::new();
        let mut height = area.height as usize;
        if self.rows.is_empty() {
            let message = match &self.rows_query {
                _ if self.searching() && self.rows_query.is_none() => "searching…",
                Some(q) if q.is_listing() => {
                    "the index holds no session yet: `pi-index build` indexes Pi's sessions"
                }
                Some(_) => "no session matches",
                None => "",
            };
            lines.push(Line::styled(fit(message, cols), t.dim()));
            frame.render_widget(Paragraph::new(lines), area);
            return;
        }
        self.selected = self.selected.min(self.rows.len() - 1);
        let focus_hits = self.focus == Focus::Hits;
        if focus_hits {
            let row = &self.rows[self.selected];
            let label = clean(row.session.label());
            let found = match &self.hits {
                Some(SessionHits {
                    result: Some(Ok(hits)),
                    ..
                }) => {
                    let n = row.matches.max(hits.len() as u64);
                    format!(" · {}", plural(n, "hit", "hits"))
                }
                _ => String::new(),
            };
            let tail = format!("{found} · Tab: back to sessions");
            let room = cols.saturating_sub(width(&tail));
            lines.push(Line::from(vec![
                Span::styled(fit(&label, room.max(10)), t.accent()),
                Span::styled(tail, t.dim()),
            ]));
            height = height.saturating_sub(1);
            let waiting = match &self.hits {
                Some(SessionHits {
                    result: Some(Err(e)),
                    ..
                }) => Some((clean(e), t.warn())),
                Some(SessionHits {
                    result: Some(Ok(hits)),
                    ..
                }) if hits.is_empty() => Some(("no hit in this session".to_owned(), t.dim())),
                Some(SessionHits { result: None, .. }) | None => Some(("…".to_owned(), t.dim())),
                Some(_) => None,
            };
            if let Some((text, style)) = waiting {
                lines.push(Line::styled(fit(&text, cols), style));
                frame.render_widget(Paragraph::new(lines), area);
                return;
            }
        }
        let visible = (height / 2).max(1);
        self.page = visible;
        let (at, len) = if focus_hits {
            (self.hit, self.session_hits().len())
        } else {
            (self.selected, self.rows.len())
        };
        if at < self.list_top {
            self.list_top = at;
        } else if at >= self.list_top + visible {
            self.list_top = at + 1 - visible;
        }
        self.list_top = self.list_top.min(len.saturating_sub(visible));
        let end = (self.list_top + visible).min(len);
        for i in self.list_top..end {
            let selected = i == at;
            let two = if focus_hits {
                hit_lines(&self.session_hits()[i], selected, cols, t)
            } else {
                self.session_lines(&self.rows[i], selected, cols, t)
            };
            lines.extend(two);
        }
        frame.render_widget(Paragraph::new(lines), area);
    }

    fn session_lines(
        &self,
        row: &Row,
        selected: bool,
        cols: usize,
        t: Theme,
    ) -> [Line<'static>; 2] {
        let s = &row.session;
        let label = clean(s.label());
        // What found it: its name or title is said; a count of matching
        // messages when more than one.
        let found = match row.matched {
            Some(Matched::Name) => "[name]",
            Some(Matched::Title) => "[title]",
            _ => "",
        };
        let hits = match row.matches {
            0 | 1 => String::new(),
            n => format!("{} hits", thousands(n)),
        };
        let msgs = plural(s.messages, "msg", "msgs");
        let when = date(s.last.as_deref().or(s.started.as_deref()));
        let avail = cols.saturating_sub(2);
        // On a narrow terminal the name needs the room: the message count
        // goes first, then the hit count, then what found it.
        let dir = directory(s.cwd.as_deref(), self.home.as_deref());
        // Another host's session (the team database's) says whose.
        let dir = match &s.host {
            Some(host) => format!("{} {dir}", clean(host)),
            None => dir,
        };
        let want = width(&label).min(30) + width(&dir).min(12) + 2;
        let mut parts: Vec<&str> = vec![found, &hits, &when, &msgs];
        let mut tail = String::new();
        for drop in [3, 1, 0, usize::MAX] {
            tail = parts
                .iter()
                .filter(|p| !p.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("  ");
            if avail.saturating_sub(width(&tail) + 2) >= want || drop == usize::MAX {
                break;
            }
            parts[drop] = "";
        }
        let room = avail.saturating_sub(width(&tail) + 2);
        let mut first = vec![gutter(selected, t)];
        let label_style = if selected {
            t.accent()
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        };
        if room < 12 {
            first.push(Span::styled(fit(&label, avail), label_style));
        } else {
            // Both whole when they fit; else the directory keeps its end
            // in up to a third of the room, the name has the rest.
            let (lw, dw) = (width(&label), width(&dir));
            let dir_w = if lw + dw + 2 <= room {
                dw
            } else {
                dw.min((room / 3).max(room.saturating_sub(lw + 2)))
            };
            let label = fit(&label, room.saturating_sub(dir_w + 2));
            let dir = if dir_w >= 6 {
                fit_left(&dir, dir_w)
            } else {
                String::new()
            };
            let pad = avail.saturating_sub(width(&label) + width(&dir) + width(&tail) + 2);
            first.push(Span::styled(label, label_style));
            first.push(Span::raw("  "));
            first.push(Span::styled(dir, t.dim()));
            first.push(Span::raw(" ".repeat(pad)));
            first.push(Span::styled(tail, t.dim()));
        }
        let mut second = vec![Span::raw("    ")];
        match (&row.hit, row.matched) {
            (Some(hit), _) => second.extend(hit_snippet(hit, t)),
            // Found by its name or title: the title, its words marked.
            (None, Some(_)) => second.extend(snippet_spans(
                &row.snippet,
                &row.highlights,
                t.dim(),
                t.matched(),
            )),
            (None, None) => {
                let under = match (&s.session_name, &s.title) {
                    (Some(_), Some(title)) => clean(title),
                    _ => format!("started {}", short_time(s.started.as_deref())),
                };
                second.push(Span::styled(under, t.dim()));
            }
        }
        let style = if selected { t.selected() } else { Style::new() };
        [
            Line::from(pad(first, cols)).style(style),
            Line::from(pad(clip(second, cols), cols)).style(style),
        ]
    }

    fn draw_preview(&mut self, frame: &mut Frame, area: Rect, t: Theme) {
        let block = Block::new().borders(Borders::LEFT).border_style(t.dim());
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.width < 10 || inner.height < 2 {
            return;
        }
        let inner = Rect {
            x: inner.x + 1,
            width: inner.width - 1,
            ..inner
        };
        let Some(key) = self.preview_key() else {
            return;
        };
        let cols = inner.width as usize;
        let name = key.path.rsplit('/').next().unwrap_or(&key.path);
        let title = match self.current_hit() {
            Some(h) => format!("line {} · {}", h.doc.line, clean(name)),
            None => format!("the end · {}", clean(name)),
        };
        let [head, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
        frame.render_widget(
            Paragraph::new(Line::styled(fit(&title, cols), t.dim())),
            head,
        );
        self.preview_page = (body.height as usize).saturating_sub(1).max(1);
        let preview = match &self.preview {
            Some((k, Ok(p))) if *k == key => p,
            Some((k, Err(e))) if *k == key => {
                let e = clean(e);
                frame.render_widget(Paragraph::new(Line::styled(fit(&e, cols), t.warn())), body);
                return;
            }
            _ => {
                frame.render_widget(Paragraph::new(Line::styled("…", t.dim())), body);
                return;
            }
        };
        let fresh = self
            .preview_lines
            .as_ref()
            .is_some_and(|c| c.key == key && c.width == inner.width);
        if !fresh {
            let words: HashSet<String> = self.preview_words().into_iter().collect();
            let (lines, starts, target) = preview_lines(preview, &words, cols, t);
            self.preview_lines = Some(PreviewLines {
                key,
                width: inner.width,
                lines,
                starts,
                target,
            });
        }
        let cached = self.preview_lines.as_ref().expect("built above");
        // Unscrolled, the target message starts at most a third of the
        // way down, after the messages before it that fit whole: what led
        // to it is in view too.
        let from = cached.target.saturating_sub(body.height as usize / 3);
        self.preview_target = cached
            .starts
            .iter()
            .copied()
            .find(|&start| start >= from)
            .unwrap_or(cached.target)
            .min(cached.target);
        let last = cached.lines.len().saturating_sub(1);
        let scroll = self.preview_scroll.unwrap_or(self.preview_target).min(last);
        if self.preview_scroll.is_some() {
            self.preview_scroll = Some(scroll);
        }
        let end = (scroll + body.height as usize).min(cached.lines.len());
        frame.render_widget(Paragraph::new(cached.lines[scroll..end].to_vec()), body);
    }
}

/// The preview's lines at `cols` columns, and the line its target
/// message starts on.
fn preview_lines(
    p: &Preview,
    words: &HashSet<String>,
    cols: usize,
    t: Theme,
) -> (Vec<Line<'static>>, Vec<usize>, usize) {
    let mut lines = Vec::new();
    let mut starts = Vec::with_capacity(p.docs.len());
    let mut target = 0;
    if p.before > 0 {
        lines.push(Line::styled(
            format!("… {} earlier messages", thousands(p.before as u64)),
            t.dim(),
        ));
        lines.push(Line::raw(""));
    }
    for (i, d) in p.docs.iter().enumerate() {
        let is_target = i == p.at;
        if is_target {
            target = lines.len();
        }
        starts.push(lines.len());
        let mut head = vec![
            Span::styled(if is_target { "▶ " } else { "  " }, t.accent()),
            Span::styled(d.role.as_str(), t.role().add_modifier(Modifier::BOLD)),
        ];
        // Before the time, which a narrow pane cuts first.
        if !d.active {
            head.push(Span::styled(" [abandoned branch]", t.warn()));
        }
        head.push(Span::styled(
            format!(" {} · line {}", short_time(d.timestamp.as_deref()), d.line),
            t.dim(),
        ));
        lines.push(Line::from(clip(head, cols)));
        let (text, cut) = match d.text.char_indices().nth(PREVIEW_CHARS) {
            Some((at, _)) => (&d.text[..at], d.text[at..].chars().count()),
            None => (d.text.as_str(), 0),
        };
        for l in sanitized_lines(text, cols.saturating_sub(2)) {
            let mut line = word_line(l, words, Style::new(), t.matched());
            line.spans.insert(0, Span::raw("  "));
            lines.push(line);
        }
        if cut > 0 {
            lines.push(Line::styled(
                format!("  … {} more characters", thousands(cut as u64)),
                t.dim(),
            ));
        }
        lines.push(Line::raw(""));
    }
    if p.after > 0 {
        lines.push(Line::styled(
            format!("… {} more messages", thousands(p.after as u64)),
            t.dim(),
        ));
    }
    (lines, starts, target)
}

/// A hit in the list of one session's hits: where it is, then its
/// snippet.
fn hit_lines(hit: &Hit, selected: bool, cols: usize, t: Theme) -> [Line<'static>; 2] {
    let mut first = vec![
        gutter(selected, t),
        Span::styled(format!("[{}]", hit.doc.role), t.role()),
        Span::raw(format!(
            " {} · line {}",
            short_time(hit.doc.timestamp.as_deref()),
            hit.doc.line
        )),
    ];
    if !hit.doc.active {
        first.push(Span::styled(" [abandoned branch]", t.warn()));
    }
    if let Some(also) = also_in(hit) {
        first.push(Span::styled(format!(" {also}"), t.dim()));
    }
    let mut second = vec![Span::raw("    ")];
    second.extend(snippet_spans(
        &hit.snippet,
        &hit.highlights,
        Style::new(),
        t.matched(),
    ));
    let style = if selected { t.selected() } else { Style::new() };
    [
        Line::from(pad(clip(first, cols), cols)).style(style),
        Line::from(pad(clip(second, cols), cols)).style(style),
    ]
}

/// A hit's snippet line: the abandoned-branch mark, the role, the
/// snippet with its matches.
fn hit_snippet(hit: &Hit, t: Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    if !hit.doc.active {
        spans.push(Span::styled("[abandoned branch] ", t.warn()));
    }
    spans.push(Span::styled(format!("[{}] ", hit.doc.role), t.role()));
    if let Some(also) = also_in(hit) {
        spans.push(Span::styled(format!("{also} "), t.dim()));
    }
    spans.extend(snippet_spans(
        &hit.snippet,
        &hit.highlights,
        Style::new(),
        t.matched(),
    ));
    spans
}

/// "[also in 2 forks]" when other sessions of the hit's family hold the
/// same message.
fn also_in(hit: &Hit) -> Option<String> {
    crate::output::text::also_in(hit.copies.len())
}

fn gutter(selected: bool, t: Theme) -> Span<'static> {
    if selected {
        Span::styled("> ", t.marker())
    } else {
        Span::raw("  ")
    }
}

/// Spans cut at `cols` columns, the last cut one ending in `…`.
fn clip(spans: Vec<Span<'static>>, cols: usize) -> Vec<Span<'static>> {
    let mut out = Vec::with_capacity(spans.len());
    let mut used = 0;
    for s in spans {
        let w = width(&s.content);
        if used + w <= cols {
            used += w;
            out.push(s);
            continue;
        }
        let room = cols - used;
        if room > 0 {
            out.push(Span::styled(fit(&s.content, room), s.style));
        }
        break;
    }
    out
}

/// Spans filled with spaces to `cols` columns, so that a row's
/// background runs to the edge of the list.
fn pad(mut spans: Vec<Span<'static>>, cols: usize) -> Vec<Span<'static>> {
    let used: usize = spans.iter().map(|s| width(&s.content)).sum();
    if used < cols {
        spans.push(Span::raw(" ".repeat(cols - used)));
    }
    spans
}

/// At most `cols` columns of the start of `s`, cut without a mark (the
/// query line, whose end the cursor may be at).
fn fit_plain(s: &str, cols: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = width(c.encode_utf8(&mut [0; 4]));
        if used + w > cols {
            break;
        }
        used += w;
        out.push(c);
    }
    out
}

/// The end of `s` in at most `cols` columns, `…` first when cut (a
/// directory's last parts say the most).
fn fit_left(s: &str, cols: usize) -> String {
    if width(s) <= cols {
        return s.to_owned();
    }
    let mut tail: Vec<char> = Vec::new();
    let mut used = 1;
    for c in s.chars().rev() {
        let w = width(c.encode_utf8(&mut [0; 4]));
        if used + w > cols {
            break;
        }
        used += w;
        tail.push(c);
    }
    let mut out = String::from("…");
    out.extend(tail.into_iter().rev());
    out
}

/// What the status line says about the index, if anything.
fn index_status(state: &IndexState) -> Option<String> {
    match state {
        IndexState::Ready => None,
        IndexState::Refreshing { bytes } => Some(format!(
            "bringing the index up to date: {} MB read… (showing it as it was)",
            thousands(*bytes / 1_000_000),
        )),
        IndexState::Refreshed { messages } => Some(format!(
            "index updated: {} new {}",
            thousands(*messages),
            if *messages == 1 {
                "message"
            } else {
                "messages"
            }
        )),
        IndexState::Note(n) => Some(clean(n)),
    }
}

/// The keys the help lists.
const HELP_KEYS: [(&str, &str); 13] = [
    ("type", "search (the language of pi-index search)"),
    ("↑ ↓  Ctrl-P Ctrl-N", "move"),
    ("PgUp PgDn", "move a page"),
    ("Tab", "sessions / the hits in one session"),
    (
        "Enter",
        "resume in Pi (Oh My Pi's in omp), in its directory",
    ),
    ("Ctrl-A", "active branch only, on or off"),
    ("Shift-↑ ↓", "scroll the preview"),
    ("Shift-PgUp PgDn", "scroll the preview a page"),
    ("← → Home End", "move in the query (Ctrl-B F E)"),
    ("Ctrl-U  Ctrl-W", "delete to the start, delete a word"),
    ("Esc", "quit, nothing chosen (exit 1)"),
    ("Ctrl-C", "quit (exit 130)"),
    ("?", "these keys (any key closes them)"),
];

/// The keys, over `body`.
fn draw_help(frame: &mut Frame, body: Rect, t: Theme) {
    let w = body.width.min(64);
    let h = body.height.min(HELP_KEYS.len() as u16 + 2);
    let area = Rect {
        x: body.x + (body.width - w) / 2,
        y: body.y + (body.height - h) / 2,
        width: w,
        height: h,
    };
    let cols = w.saturating_sub(2) as usize;
    let lines: Vec<Line<'static>> = HELP_KEYS
        .iter()
        .map(|(k, what)| {
            Line::from(clip(
                vec![
                    Span::styled(format!("{k:<19}"), t.accent()),
                    Span::raw(*what),
                ],
                cols,
            ))
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" keys ").border_style(t.dim())),
        area,
    );
}
