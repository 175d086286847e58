//! Human output: a writer through which every byte is sanitized, and the
//! only way to colour text.

use std::io::{self, Write};

use super::sanitize::sanitize;

/// What a piece of human output is, for its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paint {
    /// A session heading.
    Heading,
    /// Secondary details.
    Dim,
    /// A matched word.
    Matched,
    /// A role name.
    Role,
    /// A warning mark.
    Warn,
}

impl Paint {
    /// The SGR parameters of this paint.
    fn sgr(self) -> &'static str {
        match self {
            Paint::Heading => "1;35",
            Paint::Dim => "2",
            Paint::Matched => "1;31",
            Paint::Role => "32",
            Paint::Warn => "33",
        }
    }
}

/// A writer for people: everything written through its [`Write`]
/// implementation is sanitized ([`sanitize()`](super::sanitize::sanitize)), each write on its
/// own (an escape sequence left open at the end of one write is removed,
/// so one field cannot reach into the next: `write!` hands each argument
/// over in its own write). Colour, when it is on, comes only from
/// [`Screen::paint`], whose escape sequences are this module's own.
pub struct Screen<W: Write> {
    inner: W,
    colour: bool,
}

impl<W: Write> Screen<W> {
    /// Human output into `inner`, coloured or not.
    pub fn new(inner: W, colour: bool) -> Self {
        Screen { inner, colour }
    }

    /// Whether [`Screen::paint`] colours.
    pub fn colour(&self) -> bool {
        self.colour
    }

    /// Write `text`, sanitized, in the colour of `paint`.
    pub fn paint(&mut self, paint: Paint, text: &str) -> io::Result<()> {
        let text = sanitize(text);
        if self.colour {
            write!(self.inner, "\x1b[{}m{}\x1b[0m", paint.sgr(), text)
        } else {
            self.inner.write_all(text.as_bytes())
        }
    }

    /// [`Screen::paint`], then a newline.
    pub fn paint_line(&mut self, paint: Paint, text: &str) -> io::Result<()> {
        self.paint(paint, text)?;
        self.inner.write_all(b"\n")
    }

    /// The writer underneath.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for Screen<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.inner.write_all(sanitize(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_is_sanitized_and_colour_is_ours() {
        let mut s = Screen::new(Vec::new(), true);
        let (a, b) = ("a\x1b]0;t", "b\x07");
        write!(s, "{a} and {b}").unwrap();
        s.paint(Paint::Matched, "w\x1b[2J").unwrap();
        assert_eq!(
            String::from_utf8(s.into_inner()).unwrap(),
            "a and b\u{FFFD}\x1b[1;31mw\x1b[0m"
        );
        let mut s = Screen::new(Vec::new(), false);
        s.paint_line(Paint::Heading, "h").unwrap();
        assert_eq!(s.into_inner(), b"h\n");
    }
}
