//! Terminal output: colour choice and small formatting helpers.

use std::io::IsTerminal;

use clap::ValueEnum;

/// When to colour output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether stdout should be coloured.
    pub fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        }
    }
}

/// ANSI styles, or nothing when colour is off.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    on: bool,
}

impl Style {
    /// Styles for this output.
    pub fn new(on: bool) -> Style {
        Style { on }
    }
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }
    /// A session heading.
    pub fn heading(&self, s: &str) -> String {
        self.wrap("1;35", s)
    }
    /// Secondary details.
    pub fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
    /// A matched word.
    pub fn matched(&self, s: &str) -> String {
        self.wrap("1;31", s)
    }
    /// A role name.
    pub fn role(&self, s: &str) -> String {
        self.wrap("32", s)
    }
    /// A warning mark.
    pub fn warn(&self, s: &str) -> String {
        self.wrap("33", s)
    }
}

/// `text` with `ranges` highlighted, on one line.
pub fn highlight(text: &str, ranges: &[std::ops::Range<usize>], style: Style) -> String {
    let mut out = String::with_capacity(text.len() + ranges.len() * 12);
    let mut at = 0;
    for r in ranges {
        if r.start < at || r.end > text.len() {
            continue;
        }
        out.push_str(&text[at..r.start]);
        out.push_str(&style.matched(&text[r.clone()]));
        at = r.end;
    }
    out.push_str(&text[at..]);
    flatten(&out)
}

/// Whitespace runs (newlines included) become one space.
pub fn flatten(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `2026-03-01T14:02:11.000Z` as `2026-03-01 14:02`.
pub fn short_time(ts: Option<&str>) -> String {
    match ts {
        Some(t) if t.len() >= 16 => format!("{} {}", &t[..10], &t[11..16]),
        Some(t) => t.to_owned(),
        None => "-".into(),
    }
}

/// At most `n` characters of `s`, with an ellipsis when cut.
pub fn cut(s: &str, n: usize) -> String {
    let flat = flatten(s);
    match flat.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// Quote a path for a shell command line when it needs it.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@+=,".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
