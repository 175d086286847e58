//! Text cut and shaped for every front end alike: a time shortened, a
//! text cut to a number of characters, a snippet split at its
//! highlights, how many forks hold a copy, dollars and token counts. What they return is not yet
//! safe to print: that is [`super::sanitize()`]'s, or the page's
//! escaping.

use std::ops::Range;

/// `2026-03-01T14:02:11.000Z` as `2026-03-01 14:02` (anything shorter
/// as it is; none as `-`).
pub fn short_time(ts: Option<&str>) -> String {
    match ts.map(|t| (t, t.get(..10), t.get(11..16))) {
        Some((_, Some(day), Some(time))) => format!("{day} {time}"),
        Some((t, _, _)) => t.to_owned(),
        None => "-".into(),
    }
}

/// Whitespace runs (newlines included) become one space; leading and
/// trailing whitespace goes.
pub fn flatten(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` characters of `s`, and whether it was cut.
pub fn cut(s: &str, max: usize) -> (String, bool) {
    match s.char_indices().nth(max) {
        Some((i, _)) => (s[..i].to_owned(), true),
        None => (s.to_owned(), false),
    }
}

/// At most `max` characters of `s`, with `…` after them when it was
/// cut.
pub fn ellipsized(s: &str, max: usize) -> String {
    match cut(s, max) {
        (c, true) => format!("{c}…"),
        (c, false) => c,
    }
}

/// The start of `text`, at most `chars` characters, on one line: what a
/// hit with no highlighted word shows.
pub fn lead(text: &str, chars: usize) -> String {
    ellipsized(&flatten(text), chars)
}

/// `text` cut at `ranges` (byte ranges of matched words, in order), as
/// pieces marked `true` when matched. A range that overlaps the one
/// before it, ends past the text or cuts a character is left out.
pub fn marked<'a>(text: &'a str, ranges: &[Range<usize>]) -> Vec<(bool, &'a str)> {
    let mut pieces: Vec<(bool, &str)> = Vec::with_capacity(ranges.len() * 2 + 1);
    let mut at = 0;
    for r in ranges {
        if r.start < at
            || r.end > text.len()
            || !text.is_char_boundary(r.start)
            || !text.is_char_boundary(r.end)
        {
            continue;
        }
        pieces.push((false, &text[at..r.start]));
        pieces.push((true, &text[r.clone()]));
        at = r.end;
    }
    pieces.push((false, &text[at..]));
    pieces
}

/// "[also in 3 forks]": how a hit with `copies` copies says that other
/// sessions of its family hold the same message (text output, the
/// picker).
pub fn also_in(copies: usize) -> Option<String> {
    match copies {
        0 => None,
        1 => Some("[also in 1 fork]".into()),
        n => Some(format!("[also in {n} forks]")),
    }
}

/// Dollars to the cent (`$12.34`); a cost above nothing that rounds to
/// no cent is `<$0.01`, not `$0.00`, which says it cost nothing.
pub fn dollars(cost: f64) -> String {
    let cents = format!("{cost:.2}");
    if cost > 0.0 && cents == "0.00" {
        "<$0.01".into()
    } else {
        format!("${cents}")
    }
}

/// A count and its noun, singular or plural: `1 session`, `2,118
/// sessions`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), noun(n, one, many))
}

/// The noun for a count of `n`: `one` for one, else `many`.
pub fn noun<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// A count with its thousands apart: `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_texts_and_snippets_are_cut_alike() {
        assert_eq!(
            short_time(Some("2026-03-01T14:02:11.000Z")),
            "2026-03-01 14:02"
        );
        assert_eq!(short_time(Some("2026")), "2026");
        assert_eq!(short_time(None), "-");
        assert_eq!(lead("  a\n b  c ", 3), "a b…");
        assert_eq!(lead("é", 3), "é");
        assert_eq!(cut("héllo", 2), ("hé".to_owned(), true));
        assert_eq!(
            marked("one two", &[4..7, 2..3, 5..9]),
            [(false, "one "), (true, "two"), (false, "")]
        );
        assert_eq!(also_in(0), None);
        assert_eq!(also_in(2).as_deref(), Some("[also in 2 forks]"));
        assert_eq!(dollars(12.344), "$12.34");
        assert_eq!(dollars(0.0), "$0.00");
        assert_eq!(dollars(0.0006), "<$0.01");
        assert_eq!(dollars(0.006), "$0.01");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(plural(1, "session", "sessions"), "1 session");
        assert_eq!(plural(0, "session", "sessions"), "0 sessions");
        assert_eq!(plural(2118, "session", "sessions"), "2,118 sessions");
    }
}
