//! Following a JSON line's structure without parsing it: where a string,
//! a value or whitespace ends, and how deep a walk is (`Nesting`). The
//! skim ([`super::skim`]) copies a line around the values it leaves out
//! with these, the giant-line walk ([`super::giant`]) too, and the usage
//! reader ([`super::usage`]) steps over the keys it does not read; they
//! stop at what they cannot follow, and the line is parsed whole.

/// Where a walk of a line's containers stands: how many are open, which
/// of them are objects, and whether the next string is a key.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Nesting {
    /// Containers open (the entry's object is depth 1).
    pub depth: u32,
    /// Bit d set: the container open at depth d is an object.
    objects: u64,
    /// The next string is a key (right after `{`, or `,` in an object).
    pub expect_key: bool,
}

impl Nesting {
    /// `{` or `[` at `byte`: one more container open. `None` past 63
    /// (the bits of `objects`): such a line is not followed.
    #[inline]
    pub fn open(&mut self, byte: u8) -> Option<()> {
        if self.depth >= 63 {
            return None;
        }
        self.depth += 1;
        let is_object = byte == b'{';
        if is_object {
            self.objects |= 1 << self.depth;
        } else {
            self.objects &= !(1 << self.depth);
        }
        self.expect_key = is_object;
        Some(())
    }

    /// `}` or `]`: one container fewer. `None` when none was open.
    #[inline]
    pub fn close(&mut self) -> Option<()> {
        self.depth = self.depth.checked_sub(1)?;
        self.expect_key = false;
        Some(())
    }

    /// `,`: a key comes next when the container is an object.
    #[inline]
    pub fn comma(&mut self) {
        self.expect_key = self.objects & (1 << self.depth) != 0;
    }
}

/// Index just past the string starting at `line[i] == b'"'`.
///
/// Searches for quotes only, then counts the backslashes before each one:
/// tool arguments are full of `\n` escapes but have far fewer `\"`, so
/// this stops about half as often as searching for both bytes.
#[inline]
pub(super) fn skip_string(line: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let q = j + memchr::memchr(b'"', line.get(j..)?)?;
        let mut backslashes = 0;
        while q - backslashes > i + 1 && line[q - 1 - backslashes] == b'\\' {
            backslashes += 1;
        }
        if backslashes % 2 == 0 {
            return Some(q + 1);
        }
        j = q + 1;
    }
}

/// Index just past the value starting at `line[i]`.
#[inline]
pub(super) fn skip_value(line: &[u8], i: usize) -> Option<usize> {
    match *line.get(i)? {
        b'"' => skip_string(line, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < line.len() {
                match line[j] {
                    b'"' => {
                        j = skip_string(line, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let rest = &line[i..];
            let end = rest.iter().position(|&c| matches!(c, b',' | b'}' | b']'))?;
            Some(i + end)
        }
    }
}

/// Index of the first byte at or after `i` that is not whitespace.
#[inline]
pub(super) fn skip_ws(line: &[u8], mut i: usize) -> usize {
    while i < line.len() && line[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}
