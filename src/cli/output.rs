//! Terminal output: colour choice, the writers every command prints
//! through, and small formatting helpers.

use std::io::{BufWriter, IsTerminal, StderrLock, StdoutLock, Write};

use clap::ValueEnum;

use pi_index::output::text::{ellipsized, flatten, marked};
use pi_index::output::{sanitize, JsonLines, Paint, Screen};

/// When to colour output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    /// On a terminal that can show colour (not `TERM=dumb`), unless
    /// `NO_COLOR` is set.
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
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && !dumb_terminal() && {
                    #[allow(clippy::disallowed_methods)]
                    std::io::stdout().is_terminal()
                }
            }
        }
    }
}

/// Standard output for people: sanitized, coloured when `colour`.
/// With [`stderr`] and [`json_stdout`], the only way the command line
/// reaches the terminal (clippy refuses `println!` and `io::stdout`
/// elsewhere: see `clippy.toml`).
#[allow(clippy::disallowed_methods)]
pub fn stdout(colour: bool) -> Screen<BufWriter<StdoutLock<'static>>> {
    Screen::new(BufWriter::new(std::io::stdout().lock()), colour)
}

/// Standard error for people: sanitized, never coloured.
#[allow(clippy::disallowed_methods)]
pub fn stderr() -> Screen<StderrLock<'static>> {
    Screen::new(std::io::stderr().lock(), false)
}

/// Whether `TERM` says the terminal understands no escape sequence at
/// all (Emacs' shell, some CI logs).
pub fn dumb_terminal() -> bool {
    std::env::var_os("TERM").is_some_and(|t| t == "dumb")
}

/// Whether standard error is a terminal that can draw a progress bar
/// (which moves the cursor: not a dumb one).
#[allow(clippy::disallowed_methods)]
pub fn can_draw_progress() -> bool {
    std::io::stderr().is_terminal() && !dumb_terminal()
}

/// Standard output for programs: JSON Lines with controls escaped.
#[allow(clippy::disallowed_methods)]
pub fn json_stdout() -> JsonLines<BufWriter<StdoutLock<'static>>> {
    JsonLines::new(BufWriter::new(std::io::stdout().lock()))
}

/// Standard output for what pi-index itself generates and a shell reads
/// (completion scripts): nothing in it comes from a file.
#[allow(clippy::disallowed_methods)]
pub fn own_stdout() -> StdoutLock<'static> {
    std::io::stdout().lock()
}

/// Write `text` on one line (whitespace runs become one space) with
/// `ranges` painted as matches.
pub fn highlight<W: Write>(
    out: &mut Screen<W>,
    text: &str,
    ranges: &[std::ops::Range<usize>],
) -> std::io::Result<()> {
    // Cut into plain and matched pieces first, then collapse whitespace
    // across the whole line, so pieces join as the text did.
    let pieces = marked(text, ranges);
    let mut space = false;
    let mut started = false;
    let mut piece = String::new();
    for (matched, s) in pieces {
        piece.clear();
        for c in s.chars() {
            if c.is_whitespace() {
                space = started;
            } else {
                if space {
                    // A space before a match is not part of it.
                    if piece.is_empty() {
                        out.write_all(b" ")?;
                    } else {
                        piece.push(' ');
                    }
                    space = false;
                }
                started = true;
                piece.push(c);
            }
        }
        if matched {
            out.paint(Paint::Matched, &piece)?;
        } else {
            out.write_all(piece.as_bytes())?;
        }
    }
    Ok(())
}

/// At most `n` characters of `s` (sanitized), on one line, with an
/// ellipsis when cut.
pub fn cut(s: &str, n: usize) -> String {
    ellipsized(&flatten(&sanitize(s)), n)
}

pub use pi_index::output::shell_quote;
pub use pi_index::output::text::short_time;

/// The `pi-index show` command that shows line `line` of session `id` in
/// context, for pasting: the index named when it is not where `pi-index`
/// looks by default, an id that starts with `-` after `--`.
pub fn show_command(id: &str, line: u64, index: Option<&std::path::Path>) -> String {
    let index = index.map_or_else(String::new, |dir| {
        format!(" --index {}", shell_quote(&dir.to_string_lossy()))
    });
    if id.starts_with('-') {
        format!(
            "pi-index show --around {line}{index} -- {}",
            shell_quote(id)
        )
    } else {
        format!("pi-index show {} --around {line}{index}", shell_quote(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("/a/b-c_d.jsonl"), "/a/b-c_d.jsonl");
        assert_eq!(shell_quote("it's here"), r"'it'\''s here'");
        assert_eq!(shell_quote("$HOME `x`"), "'$HOME `x`'");
        assert_eq!(shell_quote("=cmd"), "'=cmd'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a\x1b]0;t\x07'\\"), r"$'a\x1b]0;t\x07\'\\'");
        assert_eq!(shell_quote("c1\u{9b}"), r"$'c1\xc2\x9b'");
        assert_eq!(
            show_command("-x y", 3, None),
            "pi-index show --around 3 -- '-x y'"
        );
        assert_eq!(
            show_command("abc", 3, Some(std::path::Path::new("/i x"))),
            "pi-index show abc --around 3 --index '/i x'"
        );
    }
}
