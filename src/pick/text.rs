//! Text from sessions on its way into the picker's cells: sanitized
//! first ([`crate::output::sanitize()`]), then cut or wrapped to a width
//! in terminal columns.
//!
//! Every string of a session (its name, directory, text, snippets) that
//! the picker draws goes through [`clean`] or [`sanitized_lines`]; only
//! the picker's own words and numbers are drawn as they are.

use std::collections::HashSet;
use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::output::sanitize;

/// `s` sanitized, on one line: whitespace runs (newlines, tabs) become
/// one space, and leading and trailing whitespace goes.
pub fn clean(s: &str) -> String {
    let safe = sanitize(s);
    let mut out = String::with_capacity(safe.len());
    for word in safe.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Display width of `s` in terminal columns.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// At most `cols` columns of `s` (already clean), with `…` when cut.
pub fn fit(s: &str, cols: usize) -> String {
    if width(s) <= cols {
        return s.to_owned();
    }
    if cols == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > cols - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// A snippet on one line as spans: the `ranges` (byte ranges of matched
/// words in `snippet`, as search returns them) in `matched`, the rest in
/// `plain`. The snippet is cut at the ranges first and each piece cleaned
/// on its own, so sanitizing cannot move a highlight.
pub fn snippet_spans(
    snippet: &str,
    ranges: &[Range<usize>],
    plain: Style,
    matched: Style,
) -> Vec<Span<'static>> {
    let pieces = crate::output::text::marked(snippet, ranges);
    let mut spans = Vec::with_capacity(pieces.len());
    // Whitespace is collapsed across pieces, so they join as the text did.
    let mut space = false;
    let mut started = false;
    for (is_match, piece) in pieces {
        let safe = sanitize(piece);
        let mut text = String::with_capacity(safe.len());
        for c in safe.chars() {
            if c.is_whitespace() {
                space = started;
                continue;
            }
            if space {
                if text.is_empty() && is_match {
                    spans.push(Span::styled(" ", plain));
                } else {
                    text.push(' ');
                }
                space = false;
            }
            started = true;
            text.push(c);
        }
        if !text.is_empty() {
            spans.push(Span::styled(text, if is_match { matched } else { plain }));
        }
    }
    spans
}

/// The words of `snippet` inside `ranges`, lower-cased: what the preview
/// highlights in the messages it shows.
pub fn matched_words(snippet: &str, ranges: &[Range<usize>]) -> Vec<String> {
    let mut words: Vec<String> = ranges
        .iter()
        .filter_map(|r| snippet.get(r.clone()))
        .map(|w| clean(w).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    words.sort();
    words.dedup();
    words
}

/// `text` sanitized and wrapped at `cols` columns: its own lines kept,
/// tabs as four spaces, long lines broken at a space when one is near
/// enough, else anywhere.
pub fn sanitized_lines(text: &str, cols: usize) -> Vec<String> {
    let cols = cols.max(1);
    let safe = sanitize(text);
    let mut out = Vec::new();
    for line in safe.split('\n') {
        let line = line.replace('\t', "    ");
        wrap_into(&line, cols, &mut out);
    }
    out
}

fn wrap_into(line: &str, cols: usize, out: &mut Vec<String>) {
    if width(line) <= cols {
        out.push(line.trim_end().to_owned());
        return;
    }
    let mut current = String::new();
    let mut used = 0;
    // Byte index in `current` just after its last space, and the width
    // up to there.
    let mut last_space: Option<(usize, usize)> = None;
    for c in line.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > cols {
            match last_space {
                Some((i, wi)) if wi > cols / 2 => {
                    let rest = current.split_off(i);
                    out.push(current.trim_end().to_owned());
                    used -= wi;
                    current = rest;
                }
                _ => {
                    out.push(std::mem::take(&mut current));
                    used = 0;
                }
            }
            last_space = None;
        }
        current.push(c);
        used += w;
        if c == ' ' {
            last_space = Some((current.len(), used));
        }
    }
    out.push(current.trim_end().to_owned());
}

/// One preview line as spans: words (runs of letters and digits) in
/// `words` (lower case) in `matched`, the rest in `plain`.
pub fn word_line(
    line: String,
    words: &HashSet<String>,
    plain: Style,
    matched: Style,
) -> Line<'static> {
    if words.is_empty() {
        return Line::styled(line, plain);
    }
    let mut spans = Vec::new();
    let mut start = 0;
    let mut word_start: Option<usize> = None;
    let flush = |spans: &mut Vec<Span<'static>>, from: usize, to: usize, style| {
        if from < to {
            spans.push(Span::styled(line[from..to].to_owned(), style));
        }
    };
    let bytes_end = line.len();
    for (i, c) in line.char_indices().chain(std::iter::once((bytes_end, ' '))) {
        let in_word = c.is_alphanumeric() && i < bytes_end;
        match (word_start, in_word) {
            (None, true) => word_start = Some(i),
            (Some(ws), false) => {
                if words.contains(&line[ws..i].to_lowercase()) {
                    flush(&mut spans, start, ws, plain);
                    flush(&mut spans, ws, i, matched);
                    start = i;
                }
                word_start = None;
            }
            _ => {}
        }
    }
    flush(&mut spans, start, bytes_end, plain);
    Line::from(spans)
}

/// `2026-03-01T14:02:11.000Z` as `2026-03-01 14:02`.
pub fn short_time(ts: Option<&str>) -> String {
    clean(&crate::output::text::short_time(ts))
}

/// `2026-03-01T14:02:11.000Z` as `2026-03-01`.
pub fn date(ts: Option<&str>) -> String {
    match ts {
        Some(t) if t.len() >= 10 && t.is_char_boundary(10) => t[..10].to_owned(),
        Some(t) => clean(t),
        None => "-".into(),
    }
}

/// A directory for a row, cleaned, with the home directory as `~`.
pub fn directory(cwd: Option<&str>, home: Option<&str>) -> String {
    let cwd = clean(cwd.unwrap_or("?"));
    match home.filter(|h| h.len() > 1) {
        Some(h) => match cwd.strip_prefix(h) {
            Some("") => "~".into(),
            Some(rest) if rest.starts_with('/') => format!("~{rest}"),
            _ => cwd,
        },
        None => cwd,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cleaned_cut_and_wrapped_by_columns() {
        assert_eq!(clean(" a\x1b]0;t\x07b \n\tc "), "ab c");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 3), "abc");
        assert_eq!(fit("検索エンジン", 5), "検索…");
        assert_eq!(
            sanitized_lines("one two three four\nx\x1b[2J\ty", 9),
            ["one two", "three", "four", "x    y"]
        );
        assert_eq!(sanitized_lines("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(directory(Some("/home/u/src"), Some("/home/u")), "~/src");
        assert_eq!(directory(Some("/home/uv"), Some("/home/u")), "/home/uv");
        assert_eq!(
            short_time(Some("2026-03-01T14:02:11.000Z")),
            "2026-03-01 14:02"
        );
    }

    #[test]
    fn highlights_survive_sanitizing() {
        let snippet = "a \x1b[31mred\x1b[0m  tokio\nruntime";
        let start = snippet.find("tokio").unwrap();
        let spans = snippet_spans(
            snippet,
            std::slice::from_ref(&(start..start + 5)),
            Style::new(),
            Style::new().bold(),
        );
        let text: Vec<(&str, bool)> = spans
            .iter()
            .map(|s| (s.content.as_ref(), s.style == Style::new().bold()))
            .collect();
        assert_eq!(
            text,
            [
                ("a red", false),
                (" ", false),
                ("tokio", true),
                (" runtime", false)
            ]
        );
        let words: HashSet<String> = ["tokio".to_owned()].into();
        let line = word_line(
            "Tokio, tokios".into(),
            &words,
            Style::new(),
            Style::new().bold(),
        );
        assert_eq!(line.spans.len(), 2);
        assert_eq!(line.spans[0].content, "Tokio");
    }
}
