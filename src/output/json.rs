//! Output for programs: JSON Lines, one value per line, with every
//! control character escaped.
//!
//! JSON requires only C0 controls to be escaped, and `serde_json` escapes
//! exactly those (`ESC` is written `\u001b`). DEL and the C1 controls
//! (U+0080-U+009F) are legal raw in JSON, but a person who looks at the
//! output on a terminal would have them acted on, so they are written as
//! `\u007f`, `\u009b`, …: still the same string to every JSON reader.

use std::io::{self, Write};

use serde::Serialize;

/// `serde_json`'s compact output, with DEL and C1 escaped too.
#[derive(Clone, Copy, Debug, Default)]
struct Escaping;

impl serde_json::ser::Formatter for Escaping {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if matches!(c, '\x7f'..='\u{9f}') {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// JSON Lines into a writer.
pub struct JsonLines<W: Write> {
    out: W,
}

impl<W: Write> JsonLines<W> {
    /// JSON Lines into `out`.
    pub fn new(out: W) -> Self {
        JsonLines { out }
    }

    /// Write `value` as one line. A failure to write is the writer's I/O
    /// error (a closed pipe stays recognisable as one).
    pub fn line<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        let mut ser = serde_json::Serializer::with_formatter(&mut self.out, Escaping);
        value.serialize(&mut ser).map_err(io::Error::from)?;
        self.out.write_all(b"\n")
    }

    /// Flush the writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_read_back_the_same() {
        let text = "esc\x1b]0;t\x07 del\x7f c1\u{9b}2J café";
        let mut out = JsonLines::new(Vec::new());
        out.line(&serde_json::json!({ "text": text })).unwrap();
        let bytes = out.out;
        let printed = String::from_utf8(bytes).unwrap();
        assert_eq!(
            printed,
            "{\"text\":\"esc\\u001b]0;t\\u0007 del\\u007f c1\\u009b2J café\"}\n"
        );
        let back: serde_json::Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(back["text"], text);
    }
}
