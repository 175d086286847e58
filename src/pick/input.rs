//! The query line: text and a cursor, edited with the keys of a shell's
//! line editor (and fzf's).

/// A line of text with a cursor (a byte index on a character boundary).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Input {
    text: String,
    cursor: usize,
}

impl Input {
    /// `text`, with the cursor at its end.
    pub fn new(text: &str) -> Input {
        Input {
            text: text.to_owned(),
            cursor: text.len(),
        }
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor, in characters from the start.
    pub fn cursor_chars(&self) -> usize {
        self.text[..self.cursor].chars().count()
    }

    /// The text before the cursor.
    pub fn before_cursor(&self) -> &str {
        &self.text[..self.cursor]
    }

    /// Insert `c` at the cursor.
    pub fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// Insert `s` at the cursor, line breaks and other controls as
    /// spaces (a pasted block is one query).
    pub fn insert_str(&mut self, s: &str) {
        for c in s.chars() {
            self.insert(if c.is_control() { ' ' } else { c });
        }
    }

    /// Delete the character before the cursor.
    pub fn backspace(&mut self) -> bool {
        match self.text[..self.cursor].chars().next_back() {
            Some(c) => {
                self.cursor -= c.len_utf8();
                self.text.remove(self.cursor);
                true
            }
            None => false,
        }
    }

    /// Delete the character under the cursor.
    pub fn delete(&mut self) -> bool {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
            true
        } else {
            false
        }
    }

    /// Move one character left.
    pub fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    /// Move one character right.
    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    /// Move to the start of the line.
    pub fn home(&mut self) {
        self.cursor = 0;
    }

    /// Move to the end of the line.
    pub fn end(&mut self) {
        self.cursor = self.text.len();
    }

    /// Where the word before the cursor starts (spaces before it skipped).
    fn word_start(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches(' ');
        trimmed.rfind(' ').map_or(0, |i| i + 1)
    }

    /// Move to the start of the word before the cursor.
    pub fn word_left(&mut self) {
        self.cursor = self.word_start();
    }

    /// Move past the end of the word after the cursor.
    pub fn word_right(&mut self) {
        let rest = &self.text[self.cursor..];
        let skipped = rest.len() - rest.trim_start_matches(' ').len();
        let word = rest[skipped..].find(' ').unwrap_or(rest.len() - skipped);
        self.cursor += skipped + word;
    }

    /// Delete the word before the cursor (Ctrl-W).
    pub fn delete_word(&mut self) -> bool {
        let start = self.word_start();
        let changed = start < self.cursor;
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
        changed
    }

    /// Delete everything before the cursor (Ctrl-U).
    pub fn delete_to_start(&mut self) -> bool {
        let changed = self.cursor > 0;
        self.text.replace_range(..self.cursor, "");
        self.cursor = 0;
        changed
    }

    /// Delete everything from the cursor on (Ctrl-K in a shell).
    pub fn delete_to_end(&mut self) -> bool {
        let changed = self.cursor < self.text.len();
        self.text.truncate(self.cursor);
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_move_the_cursor_by_characters() {
        let mut i = Input::new("café");
        assert!(i.backspace());
        assert_eq!((i.text(), i.cursor_chars()), ("caf", 3));
        i.insert('é');
        i.left();
        i.left();
        i.insert('x');
        assert_eq!((i.text(), i.cursor_chars()), ("caxfé", 3));
        assert!(i.delete());
        assert_eq!(i.text(), "caxé");
        i.end();
        i.insert_str(" tokio\nruntime");
        assert_eq!(i.text(), "caxé tokio runtime");
        assert!(i.delete_word());
        assert_eq!(i.text(), "caxé tokio ");
        i.word_left();
        assert_eq!(i.before_cursor(), "caxé ");
        i.word_right();
        assert_eq!(i.before_cursor(), "caxé tokio");
        assert!(i.delete_to_start());
        assert_eq!((i.text(), i.cursor_chars()), (" ", 0));
        assert!(!i.backspace());
        assert!(i.delete_to_end());
        assert_eq!(i.text(), "");
    }
}
