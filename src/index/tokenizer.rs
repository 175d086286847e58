//! A tantivy tokenizer for text that mixes prose and code.
//!
//! [`CodeTokenizer`] splits text into *words*: runs of alphanumeric
//! characters (Unicode-aware); everything else separates words, so the
//! joiners of identifiers and paths (`_`, `::`, `.`, `-`, `/`) do too. A
//! word is further split at its camelCase / PascalCase humps, and its
//! pieces (its *parts*) are tokens at consecutive positions: an identifier
//! or a path is the run of its parts, and the query side finds it as that
//! run (a phrase of its parts; see [Compounds](#compounds)). Han,
//! Hiragana, Katakana, Bopomofo and Hangul characters are emitted one per
//! token at consecutive positions, so a phrase query finds any substring.
//!
//! A token's text is the text of its byte range (`offset_from` to
//! `offset_to`: byte offsets into the input, correct for every token, for
//! snippets), lower-cased, folded to ASCII where a folding exists (`Café`
//! → `cafe`, `straße` → `strasse`, by tantivy's [`AsciiFoldingFilter`]),
//! and without combining accents (U+0300 to U+036F and the other combining
//! diacritical blocks), which decomposed text carries separately. A token
//! longer than [`MAX_TOKEN_LEN`] bytes (base64, hashes, minified blobs) is
//! dropped but still takes its position.
//!
//! The tokenizer does all of this itself, in one pass with no filter: it
//! needs the case to find humps, ASCII tokens (nearly all of them) are
//! lower-cased as they are copied, and only tokens with other characters
//! go through the folding. [`analyzer`] wraps it for registration.
//!
//! # Humps
//!
//! A word is split into parts before an upper-case letter that follows a
//! lower-case one (`parse|Session`), before the last capital of a run of
//! capitals followed by lower case (`HTTP|Server`, `IO|Error`; but a run
//! followed by a lone `s` is a plural: `URLs`, `IDs`), and before a capital
//! after digits when the digits follow a lower-case letter (`utf8|String`)
//! or the capital starts a capitalised word (`HTTP2|Server`,
//! `404|Not|Found`). Letters and digits are never split otherwise (`utf8`,
//! `x86`, `A1B2C3`, `3F2504E0`). A word longer than [`MAX_TOKEN_LEN`] bytes
//! is not split: it is data, not an identifier, and is dropped as one
//! token. A word split at humps is also emitted whole, at the position of
//! its first part (`parseSessionEntries` gives `parse`,
//! `parsesessionentries`, `session`, `entries`), so that a query typed
//! without the humps, all in lower case, still finds it.
//!
//! # Compounds
//!
//! `serde_json::from_str` gives `serde`, `json`, `from`, `str` at four
//! consecutive positions, and nothing else: a query for the compound (or
//! any piece of it, `json::from_str`, `session-manager.ts`) is the phrase
//! of its parts, which finds exactly the texts that contain those parts in
//! a row, whatever joined them. Emitting the whole compound as one more
//! token, as this tokenizer once did, added no match the phrase does not
//! find (a query for a compound was already "the whole, or its parts in a
//! row"), and made every identifier and path its own term: on text with a
//! real vocabulary that was most of the distinct terms and much of a
//! build's indexing CPU, and emitting every run of parts had cost more
//! again
//! ([docs/performance.md](../../docs/performance.md#indexing)).

use tantivy::tokenizer::{
    AsciiFoldingFilter, RawTokenizer, TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer,
};

/// Longest token kept, in bytes: longer ones are dropped (they still take
/// their position).
pub const MAX_TOKEN_LEN: usize = 100;

// Character classes.
const SEP: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 3;
/// A letter without case (Thai, Arabic, …).
const OTHER: u8 = 4;
/// A combining mark: part of the word, left out of the token text.
const MARK: u8 = 5;
const CJK: u8 = 6;
/// Only in [`ASCII_CLASS`]: the byte starts a multi-byte character.
const NON_ASCII: u8 = 7;
/// No previous character in the word.
const NONE: u8 = 8;

static ASCII_CLASS: [u8; 256] = {
    let mut table = [SEP; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            0x80..=0xFF => NON_ASCII,
            _ => SEP,
        };
        b += 1;
    }
    table
};

/// Combining diacritical marks (not alphanumeric, but part of a word).
#[inline]
fn is_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF
        | 0x3099..=0x309A // combining kana voicing marks
        | 0xFE20..=0xFE2F)
}

/// Han, Hiragana, Katakana, Bopomofo and Hangul letters (the blocks,
/// without their few punctuation characters and marks; unassigned code
/// points in them count too, which is harmless and saves a lookup).
#[inline]
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF       // Hangul Jamo
        | 0x3005..=0x3007     // 々 〆 〇
        | 0x3021..=0x3029     // Hangzhou numerals
        | 0x3041..=0x3098     // Hiragana
        | 0x309D..=0x309F     // Hiragana iteration marks, ゟ
        | 0x30A1..=0x30FA     // Katakana, without ゠ and the middle dot ・
        | 0x30FC..=0x30FF     // ー, iteration marks, ヿ
        | 0x3100..=0x318F     // Bopomofo, Hangul compatibility Jamo
        | 0x31A0..=0x31BF     // Bopomofo extended
        | 0x31F0..=0x31FF     // Katakana phonetic extensions
        | 0x3400..=0x4DBF     // CJK extension A
        | 0x4E00..=0x9FFF     // CJK unified ideographs
        | 0xA960..=0xA97F     // Hangul Jamo extended A
        | 0xAC00..=0xD7FF     // Hangul syllables, Jamo extended B
        | 0xF900..=0xFAFF     // CJK compatibility ideographs
        | 0xFF66..=0xFFDC     // half-width Katakana and Hangul
        | 0x1B000..=0x1B16F   // Kana supplement and extensions
        | 0x20000..=0x3FFFF) // CJK extensions B and later
}

/// The class of a non-ASCII character.
#[inline]
fn classify(c: char) -> u8 {
    if is_mark(c) {
        MARK
    } else if is_cjk(c) {
        CJK
    } else if !c.is_alphanumeric() {
        SEP
    } else if c.is_lowercase() {
        LOWER
    } else if c.is_uppercase() {
        UPPER
    } else if c.is_numeric() {
        DIGIT
    } else {
        OTHER
    }
}

/// The character starting at byte `p` of `text` (a character boundary).
#[inline]
fn char_at(text: &str, p: usize) -> char {
    text[p..].chars().next().unwrap_or('\0')
}

/// One part of a word: a byte range of the text.
#[derive(Clone, Copy, Debug)]
struct Part {
    start: usize,
    end: usize,
    /// The range is ASCII, so its token text is the range itself.
    ascii: bool,
    /// The whole of a word split at humps, at its first part's position.
    whole: bool,
}

/// tantivy's ASCII folding, run on one token at a time.
type Folder = <AsciiFoldingFilter as TokenFilter>::Tokenizer<RawTokenizer>;

/// A tokenizer for prose and code: words split at camelCase humps, and
/// CJK characters one by one, lower-cased and folded to ASCII (see the
/// [module documentation](self)).
#[derive(Clone, Default)]
pub struct CodeTokenizer {
    token: Token,
    parts: Vec<Part>,
    /// Created on first use (the folding wrapper has no `Default`).
    folder: Option<Folder>,
    scratch: String,
}

/// The [`TokenStream`] of a [`CodeTokenizer`].
pub struct CodeTokenStream<'a> {
    text: &'a str,
    token: &'a mut Token,
    /// The current word's parts, emitted from `next_part` on.
    parts: &'a mut Vec<Part>,
    next_part: usize,
    folder: &'a mut Folder,
    /// Scratch for folding.
    scratch: &'a mut String,
    /// Where scanning resumes.
    cursor: usize,
    /// Position of the next part or CJK character.
    next_position: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        self.token.reset();
        self.parts.clear();
        CodeTokenStream {
            text,
            token: &mut self.token,
            parts: &mut self.parts,
            next_part: 0,
            folder: self
                .folder
                .get_or_insert_with(|| AsciiFoldingFilter.transform(RawTokenizer::default())),
            scratch: &mut self.scratch,
            cursor: 0,
            next_position: 0,
        }
    }
}

/// The analyzer for indexed text and queries alike: a [`CodeTokenizer`],
/// which needs no filter (it lower-cases, folds and drops long tokens
/// itself).
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::from(CodeTokenizer::default())
}

impl CodeTokenStream<'_> {
    /// The class of the character at byte `p`, and its length; `SEP` past
    /// the end.
    #[inline]
    fn class_at(&self, p: usize) -> (u8, usize) {
        match self.text.as_bytes().get(p) {
            None => (SEP, 0),
            Some(&b) => match ASCII_CLASS[b as usize] {
                NON_ASCII => {
                    let c = char_at(self.text, p);
                    (classify(c), c.len_utf8())
                }
                class => (class, 1),
            },
        }
    }

    /// Is the character at `p` lower-case, and not a plural `s` (an `s`
    /// not followed by another lower-case letter)?
    #[inline]
    fn lower_not_plural_at(&self, p: usize) -> bool {
        let (class, len) = self.class_at(p);
        class == LOWER && (self.text.as_bytes()[p] != b's' || self.class_at(p + len).0 == LOWER)
    }

    /// Scan the word starting at `start` (a word character), pushing its
    /// parts. Returns the end.
    fn scan_word(&mut self, start: usize) -> usize {
        let bytes = self.text.as_bytes();
        let first_part = self.parts.len();
        let mut part = Part {
            start,
            end: start,
            ascii: true,
            whole: false,
        };
        let mut word_ascii = true;
        let mut prev = NONE;
        let mut last_letter = NONE;
        let mut p = start;
        while p < bytes.len() {
            let b = bytes[p];
            let (class, len) = match ASCII_CLASS[b as usize] {
                SEP => break,
                // The common case: lower case and digits never start a part.
                class @ (LOWER | DIGIT) => {
                    if class == LOWER {
                        last_letter = LOWER;
                    }
                    prev = class;
                    p += 1;
                    continue;
                }
                NON_ASCII => {
                    let c = char_at(self.text, p);
                    match classify(c) {
                        SEP | CJK => break,
                        class => {
                            part.ascii = false;
                            word_ascii = false;
                            (class, c.len_utf8())
                        }
                    }
                }
                class => (class, 1),
            };
            match class {
                MARK => {}
                UPPER => {
                    let split = match prev {
                        LOWER => true,
                        DIGIT => last_letter == LOWER || self.lower_not_plural_at(p + len),
                        UPPER => self.lower_not_plural_at(p + len),
                        _ => false,
                    };
                    if split {
                        part.end = p;
                        self.parts.push(part);
                        part = Part {
                            start: p,
                            end: p,
                            ascii: len == 1,
                            whole: false,
                        };
                    }
                    prev = UPPER;
                    last_letter = UPPER;
                }
                _ => {
                    prev = class;
                    if class != DIGIT {
                        last_letter = class;
                    }
                }
            }
            p += len;
        }
        part.end = p;
        if p - start > MAX_TOKEN_LEN && self.parts.len() > first_part {
            // Too long for an identifier: one part, to be dropped.
            self.parts.truncate(first_part);
            part = Part {
                start,
                end: p,
                ascii: word_ascii,
                whole: false,
            };
        }
        self.parts.push(part);
        if self.parts.len() - first_part >= 2 {
            // A word split at humps is also its whole self, so a query
            // written without the humps (`parsesessionentries`) finds it.
            self.parts.insert(
                first_part + 1,
                Part {
                    start,
                    end: p,
                    ascii: word_ascii,
                    whole: true,
                },
            );
        }
        p
    }

    /// Make the ASCII range `start..end` the current token; false if too
    /// long.
    #[inline]
    fn emit_ascii(&mut self, start: usize, end: usize, position: usize, length: usize) -> bool {
        if end - start > MAX_TOKEN_LEN {
            return false;
        }
        let text = &mut self.token.text;
        text.clear();
        text.push_str(&self.text[start..end]);
        text.make_ascii_lowercase();
        self.token.offset_from = start;
        self.token.offset_to = end;
        self.token.position = position;
        self.token.position_length = length;
        true
    }

    /// Make `part` the current token, at `position`; false if too long.
    fn emit(&mut self, part: Part, position: usize) -> bool {
        let Part {
            start, end, ascii, ..
        } = part;
        let length = 1;
        if ascii {
            return self.emit_ascii(start, end, position, length);
        }
        let text = &mut self.token.text;
        text.clear();
        for c in self.text[start..end].chars() {
            if c.is_ascii() {
                text.push(c.to_ascii_lowercase());
            } else if !is_mark(c) {
                // Lower-casing can add a mark (`İ` → `i` + U+0307).
                text.extend(c.to_lowercase().filter(|&c| !is_mark(c)));
            }
        }
        if !text.is_ascii() {
            std::mem::swap(text, self.scratch);
            text.clear();
            let mut folded = self.folder.token_stream(self.scratch);
            if folded.advance() {
                text.push_str(&folded.token().text);
            }
            // Folding turns small capitals (`ᴀ`) into capitals.
            text.make_ascii_lowercase();
        }
        if text.len() > MAX_TOKEN_LEN {
            return false;
        }
        self.token.offset_from = start;
        self.token.offset_to = end;
        self.token.position = position;
        self.token.position_length = length;
        true
    }
}

/// The end of the run of ASCII lower-case letters and digits starting at
/// byte `q`: eight bytes at a time while they last, then byte by byte.
#[inline]
fn lower_or_digit_run(bytes: &[u8], mut q: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = bytes.get(q..q + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // Per byte, on its low seven bits (no carry crosses a byte): the
        // high bit of `y + (0x80 - lo)` says `y >= lo`.
        let y = x & !HIGH;
        let at_least = |lo: u64| y + ONES * (0x80 - lo);
        let lower = at_least(0x61) & !at_least(0x7b);
        let digit = at_least(0x30) & !at_least(0x3a);
        let stops = !((lower | digit) & !x) & HIGH;
        if stops != 0 {
            return q + (stops.trailing_zeros() / 8) as usize;
        }
        q += 8;
    }
    while q < bytes.len() && matches!(ASCII_CLASS[bytes[q] as usize], LOWER | DIGIT) {
        q += 1;
    }
    q
}

impl CodeTokenStream<'_> {
    /// The next token when the fast path of [`TokenStream::advance`]
    /// cannot give it: the rest of a word's parts, non-ASCII text, CJK
    /// characters and words with humps.
    #[inline(never)]
    fn advance_general(&mut self) -> bool {
        loop {
            if let Some(&part) = self.parts.get(self.next_part) {
                self.next_part += 1;
                let position = if part.whole {
                    self.next_position - 1
                } else {
                    self.next_position += 1;
                    self.next_position - 1
                };
                if self.emit(part, position) {
                    return true;
                }
                continue;
            }
            // Skip separators up to a word or a CJK character.
            let bytes = self.text.as_bytes();
            let mut p = self.cursor;
            loop {
                let Some(&b) = bytes.get(p) else {
                    self.cursor = p;
                    return false;
                };
                match ASCII_CLASS[b as usize] {
                    SEP => p += 1,
                    NON_ASCII => {
                        let c = char_at(self.text, p);
                        let len = c.len_utf8();
                        match classify(c) {
                            SEP | MARK => p += len,
                            CJK => {
                                self.cursor = p + len;
                                self.token.text.clear();
                                self.token.text.push_str(&self.text[p..p + len]);
                                self.token.offset_from = p;
                                self.token.offset_to = p + len;
                                self.token.position = self.next_position;
                                self.token.position_length = 1;
                                self.next_position += 1;
                                return true;
                            }
                            _ => break,
                        }
                    }
                    _ => break,
                }
            }
            // Fast path: a plain ASCII word (lower case and digits after its
            // first character), one part.
            let mut q = p + 1;
            while bytes[p] < 0x80
                && q < bytes.len()
                && matches!(ASCII_CLASS[bytes[q] as usize], LOWER | DIGIT)
            {
                q += 1;
            }
            if q == bytes.len() || ASCII_CLASS[bytes[q] as usize] == SEP {
                let position = self.next_position;
                self.next_position += 1;
                self.cursor = q;
                if self.emit_ascii(p, q, position, 1) {
                    return true;
                }
                continue;
            }
            self.parts.clear();
            self.next_part = 0;
            self.cursor = self.scan_word(p);
        }
    }
}

impl TokenStream for CodeTokenStream<'_> {
    /// Nearly every token of prose and code is a plain ASCII word (lower
    /// case and digits after its first character) after ASCII separators:
    /// that case is taken here with the fewest steps (the word copied once,
    /// its first byte lower-cased), everything else by
    /// `CodeTokenStream::advance_general`, which gives the same tokens.
    /// It makes the tokenizer's run markedly cheaper
    /// ([docs/performance.md](../../docs/performance.md#indexing)).
    #[inline]
    fn advance(&mut self) -> bool {
        if self.next_part < self.parts.len() {
            return self.advance_general();
        }
        let bytes = self.text.as_bytes();
        let mut p = self.cursor;
        loop {
            while p < bytes.len() && ASCII_CLASS[bytes[p] as usize] == SEP {
                p += 1;
            }
            if p >= bytes.len() || bytes[p] >= 0x80 {
                self.cursor = p;
                return self.advance_general();
            }
            let q = lower_or_digit_run(bytes, p + 1);
            if q < bytes.len() && ASCII_CLASS[bytes[q] as usize] != SEP {
                // Humps, or non-ASCII letters: the general path.
                self.cursor = p;
                return self.advance_general();
            }
            let position = self.next_position;
            self.next_position += 1;
            if q - p > MAX_TOKEN_LEN {
                // Dropped, but it took its position.
                p = q;
                continue;
            }
            self.cursor = q;
            // SAFETY: the bytes `p..q` are ASCII (checked above), and
            // whatever else is copied is cut off before the String is
            // read again.
            let text = unsafe { self.token.text.as_mut_vec() };
            text.clear();
            if q - p <= 16 && p + 16 <= bytes.len() {
                // A copy of known length compiles to two moves, not a
                // call; most words are shorter than 16 bytes.
                text.extend_from_slice(&bytes[p..p + 16]);
                text.truncate(q - p);
            } else {
                text.extend_from_slice(&bytes[p..q]);
            }
            // Only the first byte can be upper case.
            text[0].make_ascii_lowercase();
            self.token.offset_from = p;
            self.token.offset_to = q;
            self.token.position = position;
            self.token.position_length = 1;
            return true;
        }
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop, prop_oneof, Just, Strategy};
    use tantivy::tokenizer::{LowerCaser, RemoveLongFilter, SimpleTokenizer};

    /// (text, position, offset_from, offset_to) of every token.
    fn tokens(text: &str) -> Vec<(String, usize, usize, usize)> {
        let mut analyzer = analyzer();
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        stream.process(&mut |t| {
            out.push((t.text.clone(), t.position, t.offset_from, t.offset_to));
        });
        out
    }

    /// Token texts only.
    fn texts(text: &str) -> Vec<String> {
        tokens(text).into_iter().map(|t| t.0).collect()
    }

    fn t(text: &str, position: usize, from: usize, to: usize) -> (String, usize, usize, usize) {
        (text.to_string(), position, from, to)
    }

    #[test]
    fn empty_and_punctuation_only() {
        assert!(tokens("").is_empty());
        assert!(tokens("  \n\t ").is_empty());
        assert!(tokens("!?, ... -- :: // __ 🎉🚀 ✓ → «»").is_empty());
    }

    #[test]
    fn prose_like_simple_tokenizer() {
        assert_eq!(
            tokens("Hello, World!"),
            vec![t("hello", 0, 0, 5), t("world", 1, 7, 12)]
        );
        assert_eq!(
            texts("It's a 2nd test — ok? 🎉 yes."),
            ["it", "s", "a", "2nd", "test", "ok", "yes"]
        );
    }

    #[test]
    fn rust_path() {
        assert_eq!(
            tokens("serde_json::from_str"),
            vec![
                t("serde", 0, 0, 5),
                t("json", 1, 6, 10),
                t("from", 2, 12, 16),
                t("str", 3, 17, 20),
            ]
        );
    }

    #[test]
    fn camel_case() {
        assert_eq!(
            tokens("parseSessionEntries"),
            vec![
                t("parse", 0, 0, 5),
                t("parsesessionentries", 0, 0, 19),
                t("session", 1, 5, 12),
                t("entries", 2, 12, 19),
            ]
        );
        assert_eq!(texts("HTTPServer"), ["http", "httpserver", "server"]);
        assert_eq!(texts("IOError"), ["io", "ioerror", "error"]);
        assert_eq!(texts("utf8"), ["utf8"]);
        assert_eq!(texts("utf8String"), ["utf8", "utf8string", "string"]);
        assert_eq!(texts("HTTP2Server"), ["http2", "http2server", "server"]);
        assert_eq!(texts("404NotFound")[0], "404");
        assert_eq!(texts("URLs IDs"), ["urls", "ids"]);
        assert_eq!(texts("URLsToFetch"), ["urls", "urlstofetch", "to", "fetch"]);
        assert_eq!(
            texts("A1B2C3 x86 deadBEEF0"),
            ["a1b2c3", "x86", "dead", "deadbeef0", "beef0"]
        );
        assert_eq!(texts("ÉCOLE École"), ["ecole", "ecole"]);
        assert_eq!(texts("straßeNeu"), ["strasse", "strasseneu", "neu"]);
    }

    #[test]
    fn file_path() {
        assert_eq!(
            tokens("see src/core/session-manager.ts."),
            vec![
                t("see", 0, 0, 3),
                t("src", 1, 4, 7),
                t("core", 2, 8, 12),
                t("session", 3, 13, 20),
                t("manager", 4, 21, 28),
                t("ts", 5, 29, 31),
            ]
        );
        // Joiners and other punctuation separate words alike.
        assert_eq!(
            texts("./a.b/ __c_d__ -e- x..y a:b"),
            ["a", "b", "c", "d", "e", "x", "y", "a", "b"]
        );
    }

    #[test]
    fn a_long_path_is_its_parts() {
        let all = texts("/home/u/w/pi-index/src/index/tokenizer.rs");
        assert_eq!(
            all,
            [
                "home",
                "u",
                "w",
                "pi",
                "index",
                "src",
                "index",
                "tokenizer",
                "rs"
            ]
        );
    }

    #[test]
    fn accents() {
        assert_eq!(
            tokens("Café ÉCOLE naïve"),
            vec![
                t("cafe", 0, 0, 5),
                t("ecole", 1, 6, 12),
                t("naive", 2, 13, 19)
            ]
        );
        // Decomposed: e + U+0301.
        assert_eq!(tokens("Cafe\u{301}s"), vec![t("cafes", 0, 0, 7)]);
        // Lower-cased, but no ASCII folding exists for Greek or Cyrillic.
        assert_eq!(texts("Ελληνικά ДОМ"), ["ελληνικά", "дом"]);
    }

    #[test]
    fn folding_and_lower_casing_edge_cases() {
        // Small capitals fold to capitals, then are lower-cased; `İ`
        // lower-cases to `i` plus a combining dot, which is dropped.
        assert_eq!(
            texts("ᴀʙᴄ İstanbul ǅemal Æsir ＡＢＣ１２"),
            ["abc", "istanbul", "dzemal", "aesir", "abc12"]
        );
    }

    #[test]
    fn prose_matches_simple_tokenizer() {
        let prose = "Résumé of the 3rd day: nothing broke, 42 tests passed (all of \
                     them!). Ça marche — très bien; Über naïve façades, ok?";
        let mut simple = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(AsciiFoldingFilter)
            .filter(LowerCaser)
            .build();
        let mut expected = Vec::new();
        simple.token_stream(prose).process(&mut |t| {
            expected.push((t.text.clone(), t.position, t.offset_from, t.offset_to));
        });
        assert_eq!(tokens(prose), expected);
    }

    /// Any piece of a compound, analyzed as a query on its own, yields
    /// tokens that the compound has at the same relative positions: so a
    /// phrase query for any piece of an identifier or path finds it.
    #[test]
    fn every_emitted_token_is_findable_as_a_query() {
        for text in [
            "serde_json::from_str",
            "parseSessionEntries",
            "src/core/session-manager.ts",
            "/home/u/w/pi-index/src/index/tokenizer.rs",
            "HTTPServer::new_with_config",
            "std::io::BufReader<File>.read_line",
            "x86_64-unknown-linux-gnu",
            "AbstractSingletonProxyFactoryBean.getObjectType",
            "https://github.com/org/repo_name/blob/main/README.md",
            "ÉcoleNormale_supérieure.fr",
        ] {
            let all = tokens(text);
            for (token_text, position, from, to) in &all {
                for (q_text, q_position, _, _) in tokens(&text[*from..*to]) {
                    assert!(
                        all.iter()
                            .any(|t| t.0 == q_text && t.1 == position + q_position),
                        "{text}: query {token_text} yields {q_text}@{q_position}, \
                         missing at {}",
                        position + q_position
                    );
                }
            }
        }
    }

    #[test]
    fn cjk_one_token_per_character() {
        assert_eq!(
            tokens("検索エンジン"),
            vec![
                t("検", 0, 0, 3),
                t("索", 1, 3, 6),
                t("エ", 2, 6, 9),
                t("ン", 3, 9, 12),
                t("ジ", 4, 12, 15),
                t("ン", 5, 15, 18),
            ]
        );
        assert_eq!(
            tokens("検索API、한국"),
            vec![
                t("検", 0, 0, 3),
                t("索", 1, 3, 6),
                t("api", 2, 6, 9),
                t("한", 3, 12, 15),
                t("국", 4, 15, 18),
            ]
        );
    }

    #[test]
    fn cjk_punctuation_is_not_a_token() {
        assert_eq!(
            texts("ジョン・スミス「テスト」。"),
            ["ジ", "ョ", "ン", "ス", "ミ", "ス", "テ", "ス", "ト"]
        );
        assert_eq!(
            texts("中文，한국어 텍스트"),
            ["中", "文", "한", "국", "어", "텍", "스", "트"]
        );
    }

    #[test]
    fn a_very_long_compound_is_its_parts_in_a_row() {
        let text = "a.".repeat(100) + "z";
        let all = tokens(&text);
        assert_eq!(all.len(), 101);
        assert!(all
            .iter()
            .enumerate()
            .all(|(i, t)| t.1 == i && t.2 + 1 == t.3));
    }

    #[test]
    fn over_long_tokens_are_dropped_but_take_a_position() {
        let blob = "A".repeat(150);
        let text = format!("before {blob} after");
        assert_eq!(
            tokens(&text),
            vec![t("before", 0, 0, 6), t("after", 2, 158, 163)]
        );
        // Exactly 100 bytes is kept.
        let hundred = "b".repeat(100);
        assert_eq!(texts(&hundred), [hundred.as_str()]);
        // A long camelCase-looking word is data: not split, dropped.
        let mixed = "aB".repeat(60);
        assert_eq!(tokens(&format!("x {mixed} y")).len(), 2);
        // A long path yields its parts.
        let dirs = "directory/".repeat(12);
        let all = tokens(&format!("{dirs}file.rs"));
        assert!(all.iter().all(|t| t.0.len() <= MAX_TOKEN_LEN));
        assert!(all.contains(&t("file", 12, 120, 124)));
        assert!(all.contains(&t("rs", 13, 125, 127)));
        assert_eq!(all.iter().filter(|t| t.0 == "directory").count(), 12);
    }

    #[test]
    fn offsets_and_positions_are_consistent() {
        let text = "Ça va? let v = serde_json::from_str(&line)?; HTTPServer::new(utf8Bytes) \
                    /home/u/src/core/session-manager.ts 検索エンジン Cafe\u{301} ДОМ_Ёлка 🎉 \
                    x::y::z a--b 1.2.3 https://github.com/org/repo_name/blob/main/README.md";
        let mut last_position = 0;
        for (token_text, position, from, to) in tokens(text) {
            assert!(position >= last_position, "{token_text} at {position}");
            last_position = position;
            let source = &text[from..to];
            let expected: String = source
                .chars()
                .filter(|&c| !is_mark(c))
                .flat_map(char::to_lowercase)
                .collect();
            if source.is_ascii() {
                assert_eq!(token_text, expected);
            } else {
                assert!(!token_text.is_empty());
            }
        }
    }

    /// Every token of `text` as the general path alone gives it (the fast
    /// path of `advance` never taken).
    fn general_tokens(text: &str) -> Vec<(String, usize, usize, usize)> {
        let mut tokenizer = CodeTokenizer::default();
        let mut stream = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance_general() {
            let t = stream.token();
            out.push((t.text.clone(), t.position, t.offset_from, t.offset_to));
        }
        out
    }

    /// Text made of what the fast path decides on: ASCII words of every
    /// case shape and length (around 8- and 16-byte boundaries, and past
    /// [`MAX_TOKEN_LEN`]), separators, and the non-ASCII, CJK and
    /// combining characters it hands to the general path.
    fn mixed_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z0-9]{1,20}",
            "[A-Z][a-z0-9]{0,20}",
            "[a-zA-Z0-9]{1,24}",
            "[a-z]{95,110}",
            "[ _.:/()\\n,-]{1,3}",
            Just("é".to_string()),
            Just("ÉCOLE".to_string()),
            Just("検索".to_string()),
            Just("e\u{301}".to_string()),
            Just("URLs".to_string()),
            Just("utf8String".to_string()),
            any::<char>().prop_map(String::from),
        ];
        prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// The fast path is only a shortcut: the same tokens, positions and
        /// offsets as the general path, whatever the text.
        #[test]
        fn the_fast_path_gives_the_general_path_s_tokens(text in mixed_text()) {
            proptest::prop_assert_eq!(tokens(&text), general_tokens(&text));
        }
    }

    /// Throughput in release mode (best of 5 passes over 4 MB):
    /// `cargo test --release --lib index::tokenizer -- --ignored --nocapture`.
    #[test]
    #[ignore]
    #[allow(clippy::disallowed_macros)]
    fn bench_throughput() {
        let mixed = "The session manager loads entries lazily; see \
            src/core/session-manager.ts (line 42) and call parseSessionEntries(v) \
            once. let v = serde_json::from_str::<Value>(&line)?; if v.is_null() { \
            return Err(anyhow!(\"bad line\")); } Café, naïve résumé. 検索エンジンの\
            テスト。 HTTPServer::new(utf8Bytes).await?; 1.2.3 x86_64-unknown-linux-gnu \
            https://github.com/org/repo/blob/main/README.md Plain prose follows here, \
            as most messages are sentences with a few words of code among them.\n";
        let prose = "Plain prose follows here, as most messages are sentences: the \
            agent explains what it will do next, and why. It reads a file, then \
            edits it; the user answers with a short remark or a new question.\n";
        let simple = || {
            TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(LowerCaser)
                .filter(AsciiFoldingFilter)
                .filter(RemoveLongFilter::limit(MAX_TOKEN_LEN + 1))
                .build()
        };
        for (sample_name, sample) in [("mixed", mixed), ("prose", prose)] {
            let text = sample.repeat(4 * 1024 * 1024 / sample.len());
            let run = |name: &str, mut analyzer: TextAnalyzer| {
                let mut best = f64::MAX;
                let mut count = 0usize;
                for _ in 0..5 {
                    let start = std::time::Instant::now();
                    count = 0;
                    let mut stream = analyzer.token_stream(&text);
                    while stream.advance() {
                        count += 1;
                    }
                    best = best.min(start.elapsed().as_secs_f64());
                }
                println!(
                    "{sample_name:>5} {name:<40} {:>4.0} MB/s {:>8} tokens",
                    text.len() as f64 / best / 1e6,
                    count
                );
            };
            run("analyzer()", analyzer());
            run("CodeTokenizer alone", CodeTokenizer::default().into());
            run("simple + lower + folding + remove long", simple());
            run("SimpleTokenizer alone", SimpleTokenizer::default().into());
        }
    }
}
