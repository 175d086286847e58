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
        // DEL is the byte 0x7f, U+0080-U+009F are 0xc2 then 0x80-0x9f (in
        // UTF-8, 0xc2 only ever starts a character): found by memchr, so
        // text with neither is written in one piece.
        let bytes = fragment.as_bytes();
        let mut start = 0;
        for i in memchr::memchr2_iter(0x7f, 0xc2, bytes) {
            let (code, len) = match (bytes[i], bytes.get(i + 1)) {
                (0x7f, _) => (0x7f, 1),
                (_, Some(&b @ 0x80..=0x9f)) => (u32::from(b), 2),
                _ => continue,
            };
            writer.write_all(&bytes[start..i])?;
            write!(writer, "\\u{code:04x}")?;
            start = i + len;
        }
        writer.write_all(&bytes[start..])
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
    use proptest::strategy::Strategy;

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

    proptest::proptest! {
        /// Any text, DEL, C1 controls and their neighbours (U+00A0, `Â`,
        /// which shares their first byte) among others, is written with
        /// exactly DEL and C1 escaped, and reads back the same.
        #[test]
        fn exactly_del_and_c1_are_escaped(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::char::range('\u{7e}', '\u{a1}').prop_map(String::from),
                    "\\PC{0,4}",
                    proptest::prelude::any::<char>().prop_map(String::from),
                ],
                0..24,
            )
        ) {
            let text = pieces.concat();
            let mut expected = String::from("\"");
            for c in text.chars() {
                match c {
                    '\x7f'..='\u{9f}' => expected.push_str(&format!("\\u{:04x}", c as u32)),
                    _ => {
                        let quoted = serde_json::to_string(&c.to_string()).unwrap();
                        expected.push_str(&quoted[1..quoted.len() - 1]);
                    }
                }
            }
            expected.push('"');
            let mut out = JsonLines::new(Vec::new());
            out.line(&text).unwrap();
            let printed = String::from_utf8(out.out).unwrap();
            proptest::prop_assert_eq!(printed.trim_end(), expected.as_str());
            let back: String = serde_json::from_str(&printed).unwrap();
            proptest::prop_assert_eq!(back, text);
        }
    }
}
