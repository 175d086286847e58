//! What a session spent, as its record stores it: every entry's usage
//! ([`crate::pi::usage`]) in one value of the record (the `usage`
//! column), a few dozen bytes an entry.
//!
//! One value per session, not a column per number: a build writes it
//! with the record at no cost per entry, and a report reads it with the
//! record's other columns
//! ([`docs/performance.md`](../../docs/performance.md#what-pi-cost)).
//! It is text of ASCII bytes, cut into [`chunks`] that a column's
//! dictionary keeps whole.
//!
//! The value: a version, the buckets (`provider/model` names) the rows
//! name, then the rows, each its time as a difference from the row
//! before (zigzagged), its entry key, its bucket, source, fault and line,
//! its four token counts and its five costs. A number is written in
//! groups of six bits, a byte each, `0x40` marking that more follow; the
//! entry key, and a cost's double where it is kept as one, as ten bytes
//! of seven bits. A cost written as a decimal is kept as its digits and
//! places ([`Cost`](crate::pi::usage::Cost)): the build never divides, and the read gives back
//! the double `f64::from_str` reads from the file.

use std::sync::Arc;

use crate::pi::usage::{ratio, Fault, Source, UsageEntry, MAX_PLACES};

/// The version of the stored value. The team database holds it too
/// (`crate::team::schema`'s Usage): a new version is a new schema
/// version there.
pub const VERSION: u8 = 2;

/// A cost's tag when it is stored as its double's bits, not as digits
/// over a power of ten (tags 0 to [`MAX_PLACES`]: its decimal places).
const BITS_TAG: u64 = 31;

/// The bits a byte carries, and the mark that more bytes follow.
const BITS: u32 = 6;
const MORE: u8 = 0x40;

/// The most bytes a row takes: eight numbers of eleven bytes, the key,
/// and five costs of a tag and ten bytes each.
const ROW_MOST: usize = 8 * 11 + 10 + 5 * 11;

/// One entry's usage, as read back.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Row {
    /// Time, epoch ms (`None`: none).
    pub ts_ms: Option<i64>,
    /// The entry key.
    pub key: u64,
    /// Its bucket: an index into [`Rows::buckets`].
    pub bucket: u32,
    /// What recorded it.
    pub source: u8,
    /// Why it is not summed, if it is not ([`Fault::rank`]).
    pub fault: u8,
    /// Its line.
    pub line: u64,
    /// Input, output, cache read and cache write tokens.
    pub tokens: [u64; 4],
    /// Total cost, then the costs of input, output, cache reads and cache
    /// writes.
    pub cost: [f64; 5],
}

impl Row {
    /// What recorded it.
    pub fn source(&self) -> Source {
        Source::from_rank(u64::from(self.source))
    }

    /// Why it is not summed, if it is not.
    pub fn fault(&self) -> Option<Fault> {
        Fault::from_rank(u64::from(self.fault))
    }
}

/// A session's rows and the buckets they name, as read back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    /// The buckets, each once.
    pub buckets: Vec<String>,
    /// The rows, in file order.
    pub rows: Vec<Row>,
}

impl Rows {
    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows of a stored value; `None` when it is not one (another
    /// version, cut short).
    pub fn decode(value: impl AsRef<[u8]>) -> Option<Rows> {
        read(value.as_ref()).map(|(rows, _, _)| rows)
    }
}

/// A session's stored value as the build writes it: each entry's row
/// written as it is added.
#[derive(Clone, Debug, Default)]
pub struct Spent {
    /// The buckets, each once.
    buckets: Vec<Arc<str>>,
    /// The bucket of the row written last (the next one's, nearly always).
    last_bucket: usize,
    /// How many rows.
    rows: u64,
    /// The time of the last row that has one.
    last_ts: i64,
    /// The rows, written.
    bytes: Vec<u8>,
}

impl Spent {
    /// The rows of a stored value, to be added to (a grown file's
    /// record); none when it is not one (a value this release cannot
    /// read is what a rewrite replaces).
    pub fn resume(value: impl AsRef<[u8]>) -> Spent {
        let value = value.as_ref();
        match read(value) {
            Some((rows, at, last_ts)) => Spent {
                buckets: rows.buckets.into_iter().map(Arc::from).collect(),
                last_bucket: 0,
                rows: rows.rows.len() as u64,
                last_ts,
                bytes: value[at..].to_vec(),
            },
            None => Spent::default(),
        }
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The index of `model` among the buckets, added if it is new.
    fn bucket(&mut self, model: &Arc<str>) -> usize {
        // A chunk's entries share their bucket's name.
        if let Some(b) = self.buckets.get(self.last_bucket) {
            if Arc::ptr_eq(b, model) {
                return self.last_bucket;
            }
        }
        let i = match self.buckets.iter().position(|b| **b == **model) {
            Some(i) => {
                self.buckets[i] = model.clone();
                i
            }
            None => {
                self.buckets.push(model.clone());
                self.buckets.len() - 1
            }
        };
        self.last_bucket = i;
        i
    }

    /// Add the entries `entries`, after the rows there are.
    pub fn extend(&mut self, entries: &[UsageEntry]) {
        self.bytes.reserve(entries.len() * 64);
        for e in entries {
            let bucket = self.bucket(&e.model);
            // Written into room for the most a row takes, then copied.
            let mut row = [0u8; ROW_MOST];
            let mut w = Writer { b: &mut row, at: 0 };
            // 0: none; else 1 + the zigzagged difference.
            match e.timestamp_ms {
                None => w.varint(0),
                Some(t) => {
                    let d = t.wrapping_sub(self.last_ts);
                    w.varint((((d << 1) ^ (d >> 63)) as u64).wrapping_add(1));
                    self.last_ts = t;
                }
            }
            w.fixed(e.key);
            w.varint(bucket as u64);
            w.varint(e.source.rank() | e.fault.map_or(0, Fault::rank) << 4);
            w.varint(e.line);
            let u = &e.usage;
            for t in [u.input, u.output, u.cache_read, u.cache_write] {
                w.varint(t);
            }
            for c in u.costs {
                match c.as_decimal() {
                    Some((m, places)) if m < 1 << 59 => w.varint(m << 5 | u64::from(places)),
                    _ => {
                        w.varint(BITS_TAG);
                        w.fixed(c.value().to_bits());
                    }
                }
            }
            let len = w.at;
            self.bytes.extend_from_slice(&row[..len]);
            self.rows += 1;
        }
    }

    /// The stored value (empty when there is no row).
    pub fn encode(&self) -> String {
        if self.rows == 0 {
            return String::new();
        }
        let names: usize = self.buckets.iter().map(|b| b.len() + 2).sum();
        let mut out = Vec::with_capacity(16 + names + self.bytes.len());
        out.push(VERSION);
        varint(&mut out, self.buckets.len() as u64);
        for b in &self.buckets {
            // A name of ASCII as is; any other byte as a number.
            varint(&mut out, b.len() as u64);
            for &c in b.as_bytes() {
                varint(&mut out, u64::from(c));
            }
        }
        varint(&mut out, self.rows);
        out.extend_from_slice(&self.bytes);
        // Every byte is below 0x80.
        String::from_utf8(out).unwrap_or_default()
    }
}

/// The most bytes of a value one chunk carries ([`chunks`]). A column's
/// dictionary keeps at most 65,535 bytes of a value, and a long
/// session's value is longer; and the dictionary's block index keeps its
/// last value whole, at a cost per byte, so chunks are kept short
/// ([docs/performance.md](../../docs/performance.md#what-pi-cost)).
const CHUNK: usize = 4_000;

/// The digits of a chunk's number, which starts it.
const CHUNK_DIGITS: usize = 6;

/// `value` cut into the values the `usage` column holds: each at most
/// `CHUNK` bytes of it after its number, written in `CHUNK_DIGITS`
/// digits so that the column's order (a dictionary's, by bytes) is the
/// value's. Empty for an empty value.
pub fn chunks(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = value;
    while !rest.is_empty() {
        let mut cut = rest.len().min(CHUNK);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (chunk, after) = rest.split_at(cut);
        out.push(format!("{:0w$}{chunk}", out.len(), w = CHUNK_DIGITS));
        rest = after;
    }
    out
}

/// The value [`chunks`] cut, put back together from its chunks in the
/// column's order.
#[derive(Clone, Debug)]
pub struct Join {
    bytes: Vec<u8>,
    /// The number the next chunk must have; `None` once one did not.
    next: Option<usize>,
}

impl Default for Join {
    /// Nothing yet.
    fn default() -> Join {
        Join::for_chunks(0)
    }
}

impl Join {
    /// Nothing yet, with room for a value of `n` chunks.
    pub fn for_chunks(n: usize) -> Join {
        Join {
            bytes: Vec::with_capacity(n.saturating_mul(CHUNK)),
            next: Some(0),
        }
    }

    /// Add the next chunk.
    pub fn push(&mut self, chunk: &[u8]) {
        let Some(n) = self.next else {
            return;
        };
        let number = chunk
            .get(..CHUNK_DIGITS)
            .filter(|digits| digits.iter().all(u8::is_ascii_digit))
            .map(|digits| {
                digits
                    .iter()
                    .fold(0, |at, &d| at * 10 + usize::from(d - b'0'))
            });
        if number == Some(n) {
            self.bytes.extend_from_slice(&chunk[CHUNK_DIGITS..]);
            self.next = Some(n + 1);
        } else {
            self.next = None;
        }
    }

    /// The value; `None` when the chunks were not a value's, all of them
    /// in order.
    pub fn finish(self) -> Option<Vec<u8>> {
        self.next.map(|_| self.bytes)
    }
}

/// The rows of a stored value, where they start in it, and the time of
/// the last that has one.
fn read(bytes: &[u8]) -> Option<(Rows, usize, i64)> {
    if bytes.is_empty() {
        return Some((Rows::default(), 0, 0));
    }
    let mut r = Reader { b: bytes, at: 0 };
    if r.byte()? != VERSION {
        return None;
    }
    let n = r.varint()? as usize;
    let mut buckets = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let len = r.varint()? as usize;
        let mut name = Vec::with_capacity(len.min(256));
        for _ in 0..len {
            name.push(u8::try_from(r.varint()?).ok()?);
        }
        buckets.push(String::from_utf8_lossy(&name).into_owned());
    }
    let n = r.varint()? as usize;
    let at = r.at;
    let mut rows = Vec::with_capacity(n.min(1 << 20));
    let mut last = 0i64;
    for _ in 0..n {
        let ts = r.varint()?;
        let ts_ms = (ts != 0).then(|| {
            let z = ts - 1;
            let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
            last = last.wrapping_add(d);
            last
        });
        let key = r.fixed()?;
        let bucket = r.varint()? as u32;
        let sf = r.varint()?;
        let line = r.varint()?;
        let mut tokens = [0u64; 4];
        for t in &mut tokens {
            *t = r.varint()?;
        }
        let mut cost = [0f64; 5];
        for c in &mut cost {
            let v = r.varint()?;
            *c = match v & BITS_TAG {
                BITS_TAG => f64::from_bits(r.fixed()?),
                tag if tag <= u64::from(MAX_PLACES) => ratio(v >> 5, tag as u8),
                _ => return None,
            };
        }
        rows.push(Row {
            ts_ms,
            key,
            bucket,
            source: (sf & 0xf) as u8,
            fault: ((sf >> 4) & 0xf) as u8,
            line,
            tokens,
            cost,
        });
    }
    Some((Rows { buckets, rows }, at, last))
}

/// A row being written, into room for the most bytes it takes (no check
/// of the room for each byte).
struct Writer<'a> {
    b: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    #[inline]
    fn varint(&mut self, mut v: u64) {
        while v >= u64::from(MORE) {
            self.b[self.at] = (v as u8 & (MORE - 1)) | MORE;
            self.at += 1;
            v >>= BITS;
        }
        self.b[self.at] = v as u8;
        self.at += 1;
    }

    /// All 64 bits of `v` in ten bytes of seven: the low 56 spread into
    /// eight bytes at once, then the rest.
    #[inline]
    fn fixed(&mut self, v: u64) {
        let x = v & ((1 << 56) - 1);
        let x = (x & 0x0fff_ffff) | ((x & 0x00ff_ffff_f000_0000) << 4);
        let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x0fff_c000_0fff_c000) << 2);
        let x = (x & 0x007f_007f_007f_007f) | ((x & 0x3f80_3f80_3f80_3f80) << 1);
        self.b[self.at..self.at + 8].copy_from_slice(&x.to_le_bytes());
        self.b[self.at + 8] = (v >> 56) as u8 & 0x7f;
        self.b[self.at + 9] = (v >> 63) as u8;
        self.at += 10;
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= u64::from(MORE) {
        out.push((v as u8 & (MORE - 1)) | MORE);
        v >>= BITS;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let v = *self.b.get(self.at)?;
        self.at += 1;
        Some(v)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if b >= 0x80 || shift >= 64 {
                return None;
            }
            v |= u64::from(b & (MORE - 1)) << shift;
            if b & MORE == 0 {
                return Some(v);
            }
            shift += BITS;
        }
    }

    /// What [`Writer::fixed`] wrote.
    fn fixed(&mut self) -> Option<u64> {
        let b = self.b.get(self.at..self.at + 10)?;
        self.at += 10;
        let x = u64::from_le_bytes(b[..8].try_into().ok()?);
        if x & 0x8080_8080_8080_8080 != 0 || b[8] >= 0x80 || b[9] > 1 {
            return None;
        }
        let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
        let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
        let x = (x & 0x0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
        Some(x | u64::from(b[8]) << 56 | u64::from(b[9]) << 63)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pi::usage::{Cost, Usage};

    fn entry(line: u64, ts: Option<i64>, model: &str, costs: [Cost; 5]) -> UsageEntry {
        UsageEntry {
            line,
            key: match line {
                2 => u64::MAX,
                3 => 0,
                _ => line.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            },
            timestamp_ms: ts,
            source: if line == 4 {
                Source::Subagent
            } else {
                Source::Assistant
            },
            model: model.into(),
            usage: Usage {
                input: line * 1000,
                output: 3,
                cache_read: u64::MAX >> 1,
                cache_write: 0,
                costs,
            },
            fault: (line == 3).then_some(Fault::BadTokens),
        }
    }

    fn decimal(m: u64, places: u8) -> Cost {
        Cost::decimal(m, places).unwrap()
    }

    #[test]
    fn rows_come_back_as_they_were_stored() {
        let entries = [
            entry(
                2,
                Some(1_785_574_801_000),
                "anthropic/claude-sonnet-4-5",
                // Short decimals, JavaScript's 17 digits, the most places.
                [
                    decimal(1_636_185, 8),
                    decimal(13_268_999_999_999_998, 19),
                    decimal(26_850_000_000_000_002, 18),
                    decimal(0, 0),
                    decimal(1, MAX_PLACES),
                ],
            ),
            entry(3, None, "Tools/summaries", [Cost::ZERO; 5]),
            entry(
                4,
                Some(1_785_574_800_000),
                "anthropic/claude-sonnet-4-5",
                // Digits past 2^59 (kept as the double), doubles.
                [
                    decimal(9_999_999_999_999_999_999, 19),
                    decimal(u64::MAX, 0),
                    Cost::double(2e6),
                    Cost::double(-0.0),
                    Cost::double(f64::NAN),
                ],
            ),
            entry(5, Some(-5), "openai/gpt-5", [decimal(1, 1); 5]),
        ];
        let mut spent = Spent::default();
        spent.extend(&entries);
        let text = spent.encode();
        assert!(text.is_ascii());
        let rows = Rows::decode(&text).unwrap();
        assert_eq!(
            rows.buckets,
            [
                "anthropic/claude-sonnet-4-5",
                "Tools/summaries",
                "openai/gpt-5"
            ]
        );
        assert_eq!(rows.rows.len(), entries.len());
        for (r, e) in rows.rows.iter().zip(&entries) {
            let u = &e.usage;
            assert_eq!(
                (r.ts_ms, r.key, r.line, r.source(), r.fault()),
                (e.timestamp_ms, e.key, e.line, e.source, e.fault)
            );
            assert_eq!(&*rows.buckets[r.bucket as usize], &*e.model);
            assert_eq!(r.tokens, [u.input, u.output, u.cache_read, u.cache_write]);
            // To the last bit.
            assert_eq!(
                r.cost.map(f64::to_bits),
                u.costs.map(|c| c.value().to_bits())
            );
        }
        // Appended to, as a grown file's record is: as if written at once.
        let mut first = Spent::default();
        first.extend(&entries[..2]);
        let mut grown = Spent::resume(first.encode());
        grown.extend(&entries[2..]);
        assert_eq!(grown.encode(), text);
        // Nothing, and what is not a stored value.
        assert!(Spent::default().encode().is_empty());
        assert!(Spent::resume("").is_empty());
        assert_eq!(Rows::decode(""), Some(Rows::default()));
        assert_eq!(Rows::decode(&text[..text.len() - 1]), None);
        assert_eq!(Rows::decode("\u{1}\0\0"), None);
        assert!(Spent::resume("\u{1}\0\0").is_empty());
    }

    #[test]
    fn a_value_cut_into_chunks_comes_back_whole_in_the_column_s_order() {
        for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5] {
            let value: String = (0..len)
                .map(|i| char::from(b'!' + (i % 90) as u8))
                .collect();
            let chunks = chunks(&value);
            assert_eq!(chunks.len(), len.div_ceil(CHUNK), "{len}");
            assert!(chunks.iter().all(|c| c.len() <= CHUNK_DIGITS + CHUNK));
            // A dictionary orders them by their bytes: as they were cut.
            let mut sorted = chunks.clone();
            sorted.sort();
            assert_eq!(sorted, chunks);
            let mut join = Join::default();
            for c in &chunks {
                join.push(c.as_bytes());
            }
            assert_eq!(join.finish(), Some(value.into_bytes()), "{len}");
        }
    }

    #[test]
    fn chunks_missing_or_out_of_order_are_no_value() {
        let value = "x".repeat(2 * CHUNK + 1);
        let chunks = chunks(&value);
        for order in [[0, 2].as_slice(), &[1, 2], &[1, 0, 2], &[0, 0, 1, 2]] {
            let mut join = Join::default();
            for &i in order {
                join.push(chunks[i].as_bytes());
            }
            assert_eq!(join.finish(), None, "{order:?}");
        }
        let mut join = Join::default();
        join.push(b"12");
        assert_eq!(join.finish(), None);
    }
}
