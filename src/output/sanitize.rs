//! Text from a session made safe to print on a terminal.
//!
//! Session files are written by other programs (Pi, its tools, whatever a
//! tool's output captured), so their text, directory, name and id may hold
//! control characters: `ESC ] 0 ; … BEL` retitles a terminal, OSC 52
//! writes the user's clipboard, `ESC [ 2 J` clears the screen, and C1
//! controls (U+0080-U+009F) do the same in one character on terminals that
//! read them. [`sanitize`] neutralises all of them:
//!
//! - newline and tab are kept; a carriage return is dropped (CRLF text
//!   reads as LF, and a lone CR cannot overwrite what was printed);
//! - an escape sequence (ESC or its C1 form: CSI, OSC, DCS, SOS, PM, APC,
//!   and the two- and three-character ESC sequences) is removed whole, up
//!   to its final byte or terminator (BEL or ST), so a tool's coloured
//!   output reads as its plain text. A string sequence (OSC, DCS, …) also
//!   ends at a newline or another control character, so an unterminated
//!   one hides at most the rest of its line;
//! - every other C0 control, DEL and C1 control becomes U+FFFD, visibly.
//!
//! Nothing here knows about terminals beyond which characters they act
//! on: the command line and the picker draw through it alike.

use std::borrow::Cow;
use std::fmt;

/// What a removed or replaced control character becomes when shown.
const REPLACEMENT: char = '\u{FFFD}';

/// Whether `c` is a control character a terminal acts on, other than
/// newline and tab.
#[inline]
fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}')
}

/// Whether `bytes` (UTF-8) holds a character [`is_control`] rejects, or
/// a carriage return: a quick test that lets clean text through uncopied.
/// C1 controls are `C2 80` to `C2 9F` in UTF-8.
#[inline]
fn needs_work(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().any(|(i, &b)| {
        (b < 0x20 && b != b'\n' && b != b'\t')
            || b == 0x7f
            || (b == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..0xa0).contains(n)))
    })
}

/// `input` with every control character and escape sequence neutralised
/// (see the module docs); borrowed when there was nothing to do.
pub fn sanitize(input: &str) -> Cow<'_, str> {
    if !needs_work(input.as_bytes()) {
        return Cow::Borrowed(input);
    }
    let mut out = String::with_capacity(input.len());
    sanitize_into(input, &mut out);
    Cow::Owned(out)
}

/// Append `input` to `out`, sanitized. `input` is taken as a whole: an
/// escape sequence left open at its end is removed, and does not reach
/// into what is appended next.
pub fn sanitize_into(input: &str, out: &mut String) {
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {}
            '\x1b' => match chars.peek().copied() {
                Some('[') => {
                    chars.next();
                    skip_csi(&mut chars);
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    skip_string(&mut chars);
                }
                Some(' '..='/') => {
                    // nF: intermediates, then one final byte.
                    while chars.next_if(|c| matches!(c, ' '..='/')).is_some() {}
                    chars.next_if(|c| matches!(c, '0'..='~'));
                }
                Some('0'..='~') => {
                    chars.next();
                }
                // A lone ESC: dropped.
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if is_control(c) => out.push(REPLACEMENT),
            c => out.push(c),
        }
    }
}

/// Skip a control sequence's parameters, intermediates and final byte.
/// Anything else ends it and is read normally.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars.next_if(|c| matches!(c, '0'..='?')).is_some() {}
    while chars.next_if(|c| matches!(c, ' '..='/')).is_some() {}
    chars.next_if(|c| matches!(c, '@'..='~'));
}

/// Skip a string sequence's payload and its terminator (BEL, ESC \ or
/// ST). A newline or another control character ends it unterminated and
/// is read normally.
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(&c) = chars.peek() {
        match c {
            '\x07' | '\u{9c}' => {
                chars.next();
                return;
            }
            '\x1b' => {
                chars.next();
                chars.next_if_eq(&'\\');
                return;
            }
            c if c == '\n' || c == '\t' || is_control(c) => return,
            _ => {
                chars.next();
            }
        }
    }
}

/// Text from a session (or any other program), shown sanitized: its only
/// `Display` is [`sanitize`]'s.
#[derive(Clone, Copy, Debug)]
pub struct Untrusted<'a>(pub &'a str);

impl fmt::Display for Untrusted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&sanitize(self.0))
    }
}

/// A name printed inside a line for a person: a path, a directory, a
/// host or an id. Every control character is shown escaped, a newline
/// as `\n` and a tab as `\t` too, so a file name cannot forge lines of
/// output nor act on the terminal.
#[derive(Clone, Copy, Debug)]
pub struct OneLine<'a>(pub &'a str);

impl fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        let plain = !s.chars().any(|c| c.is_control());
        if plain {
            return f.pad(s);
        }
        let mut out = String::with_capacity(s.len() + 8);
        for c in s.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    use fmt::Write;
                    let _ = write!(out, "\\u{{{:x}}}", c as u32);
                }
                c => out.push(c),
            }
        }
        f.pad(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_on_one_line_escapes_every_control_newlines_included() {
        let shown = |s: &str| OneLine(s).to_string();
        assert_eq!(shown("/home/u/a.jsonl"), "/home/u/a.jsonl");
        assert_eq!(
            shown("/s/evil\nline: forged.jsonl"),
            "/s/evil\\nline: forged.jsonl"
        );
        assert_eq!(shown("a\tb\rc"), "a\\tb\\rc");
        assert_eq!(shown("\x1b]0;t\x07x\u{85}"), "\\u{1b}]0;t\\u{7}x\\u{85}");
        assert!(!shown("\x1b[2J\n").chars().any(char::is_control));
    }

    fn s(input: &str) -> String {
        sanitize(input).into_owned()
    }

    #[test]
    fn escape_sequences_are_removed_whole() {
        assert_eq!(s("a\x1b]0;title\x07b"), "ab");
        assert_eq!(s("a\x1b]52;c;cHduZWQ=\x1b\\b"), "ab");
        assert_eq!(s("\x1b[2J\x1b[Hclear"), "clear");
        assert_eq!(s("\x1b[1;31mred\x1b[0m"), "red");
        assert_eq!(s("\x1b[?25lhidden"), "hidden");
        assert_eq!(s("\x1b(Bcharset \x1b7saved\x1b8"), "charset saved");
        assert_eq!(s("\x1bPdcs payload\x1b\\after"), "after");
        assert_eq!(s("\u{9b}2Jc1 \u{9d}0;t\u{9c}osc"), "c1 osc");
    }

    #[test]
    fn unterminated_sequences_end_at_the_line_or_the_text() {
        assert_eq!(s("a\x1b]0;title\nnext"), "a\nnext");
        assert_eq!(s("a\x1b]0;title"), "a");
        assert_eq!(s("a\x1b"), "a");
        assert_eq!(s("a\x1b[12"), "a");
        // A control inside a sequence ends it and is shown.
        assert_eq!(s("\x1b[1\x08x"), "\u{FFFD}x");
        assert_eq!(s("\x1b]0;t\x08x"), "\u{FFFD}x");
    }

    #[test]
    fn other_controls_are_visible_and_text_is_kept() {
        assert_eq!(
            s("bell\x07 bs\x08 del\x7f nel\u{85}"),
            "bell\u{FFFD} bs\u{FFFD} del\u{FFFD} nel\u{FFFD}"
        );
        assert_eq!(s("crlf\r\nline\ttab"), "crlf\nline\ttab");
        assert_eq!(s("\0"), "\u{FFFD}");
        let clean = "plain text, café, 検索, \u{a0}nbsp, ©";
        assert!(matches!(sanitize(clean), Cow::Borrowed(_)));
        assert_eq!(s(clean), clean);
        assert_eq!(format!("[{:<6}]", Untrusted("a\x1b[2Jb")), "[ab    ]");
    }

    #[test]
    fn nothing_a_terminal_acts_on_survives_any_input() {
        // Every pair and triple of interesting characters.
        let alphabet = [
            '\x1b', '[', ']', '\\', '\x07', '\u{9b}', '\u{9c}', '\u{9d}', 'P', '0', ';', 'm', '\n',
            '\x7f', '\u{85}', 'x', '(', ' ',
        ];
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    let input: String = [a, b, c].iter().collect();
                    let out = s(&input);
                    assert!(
                        !out.chars().any(|c| is_control(c) || c == '\r'),
                        "{input:?} -> {out:?}"
                    );
                }
            }
        }
    }
}
