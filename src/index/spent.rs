//! What a session spent, as its record stores it: every entry's usage
//! ([`crate::pi::usage`]) in one stored value of the record (the `usage`
//! field), a few dozen bytes an entry.
//!
//! One stored value per session, not a column per number: a build writes
//! it with the record at no cost per entry, and what reads it (a report
//! of what Pi cost) reads the records anyway
//! ([`docs/performance.md`](../../docs/performance.md#what-pi-cost)).
//! It is stored as text of ASCII bytes, which the document store copies
//! whole (it writes and reads a bytes value one byte at a time).
//!
//! The value: a version, the buckets (`provider/model` names) the rows
//! name, then the rows, each its time as a difference from the row
//! before (zigzagged), its entry key, its bucket, source, fault and line,
//! its four token counts and its five costs (their bits, as written);
//! every number in groups of six bits, a byte each, `0x40` marking that
//! more follow.

use crate::pi::usage::{decimal, digits, Fault, Source, UsageEntry, NOT_DECIMAL};

/// The version of the stored value. The team database holds it too
/// (`crate::team::schema`'s Usage): a new version is a new schema
/// version there.
pub const VERSION: u8 = 1;

/// A cost's tag when it is stored as its double's bits, not as digits
/// over a power of ten (tags 0 to 22: its decimal places).
const BITS_TAG: u64 = 31;

/// The bits a byte carries, and the mark that more bytes follow.
const BITS: u32 = 6;
const MORE: u8 = 0x40;

/// One entry's usage.
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
    /// How each was written ([`crate::pi::usage::Usage::places`]).
    pub places: [u8; 5],
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

/// A session's rows and the buckets they name.
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

    /// Add the entries `entries`, after the rows there are.
    pub fn extend(&mut self, entries: &[UsageEntry]) {
        for e in entries {
            let bucket = match self.buckets.iter().position(|b| **b == *e.model) {
                Some(i) => i,
                None => {
                    self.buckets.push(e.model.to_string());
                    self.buckets.len() - 1
                }
            };
            let u = &e.usage;
            self.rows.push(Row {
                ts_ms: e.timestamp_ms,
                key: e.key,
                bucket: bucket as u32,
                source: e.source.rank() as u8,
                fault: e.fault.map_or(0, |f| f.rank() as u8),
                line: e.line,
                tokens: [u.input, u.output, u.cache_read, u.cache_write],
                cost: u.costs(),
                places: u.places,
            });
        }
    }

    /// The stored value (empty when there is no row).
    pub fn encode(&self) -> String {
        if self.rows.is_empty() {
            return String::new();
        }
        let mut out = Vec::with_capacity(16 + self.rows.len() * 64);
        out.push(VERSION);
        varint(&mut out, self.buckets.len() as u64);
        for b in &self.buckets {
            // A name of ASCII as is; any other byte as a number.
            varint(&mut out, b.len() as u64);
            for &c in b.as_bytes() {
                varint(&mut out, u64::from(c));
            }
        }
        varint(&mut out, self.rows.len() as u64);
        let mut last = 0i64;
        for r in &self.rows {
            // A row is put together in a buffer of its most bytes, then
            // copied: no check of the output's room for each byte.
            let mut row = Buf::default();
            // 0: none; else 1 + the zigzagged difference.
            match r.ts_ms {
                None => row.varint(0),
                Some(t) => {
                    let d = t.wrapping_sub(last);
                    row.varint(1 + ((d << 1) ^ (d >> 63)) as u64);
                    last = t;
                }
            }
            row.varint(r.key);
            row.varint(u64::from(r.bucket));
            row.varint(u64::from(r.source) | (u64::from(r.fault) << 4));
            row.varint(r.line);
            for t in r.tokens {
                row.varint(t);
            }
            for (c, places) in r.cost.into_iter().zip(r.places) {
                match digits(c, places) {
                    Some(m) => row.varint(m << 5 | u64::from(places)),
                    None => {
                        row.varint(BITS_TAG);
                        row.varint(c.to_bits());
                    }
                }
            }
            out.extend_from_slice(&row.b[..row.len]);
        }
        // Every byte is below 0x80.
        String::from_utf8(out).unwrap_or_default()
    }

    /// The rows of a stored value; `None` when it is not one (another
    /// version, cut short).
    pub fn decode(text: &str) -> Option<Rows> {
        let bytes = text.as_bytes();
        if bytes.is_empty() {
            return Some(Rows::default());
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
            let key = r.varint()?;
            let bucket = r.varint()? as u32;
            let sf = r.varint()?;
            let line = r.varint()?;
            let mut tokens = [0u64; 4];
            for t in &mut tokens {
                *t = r.varint()?;
            }
            let mut cost = [0f64; 5];
            let mut places = [NOT_DECIMAL; 5];
            for (c, p) in cost.iter_mut().zip(&mut places) {
                let v = r.varint()?;
                (*c, *p) = match v & BITS_TAG {
                    BITS_TAG => (f64::from_bits(r.varint()?), NOT_DECIMAL),
                    tag => (decimal(v >> 5, tag as u8)?, tag as u8),
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
                places,
                cost,
            });
        }
        Some(Rows { buckets, rows })
    }
}

/// A row's bytes: at most 14 numbers of 11 bytes and 5 tags.
struct Buf {
    b: [u8; 160],
    len: usize,
}

impl Default for Buf {
    fn default() -> Buf {
        Buf {
            b: [0; 160],
            len: 0,
        }
    }
}

impl Buf {
    fn varint(&mut self, mut v: u64) {
        while v >= u64::from(MORE) {
            self.b[self.len] = (v as u8 & (MORE - 1)) | MORE;
            self.len += 1;
            v >>= BITS;
        }
        self.b[self.len] = v as u8;
        self.len += 1;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pi::usage::Usage;

    fn entry(line: u64, ts: Option<i64>, model: &str, cost: f64) -> UsageEntry {
        UsageEntry {
            line,
            key: line * 7919,
            timestamp_ms: ts,
            source: Source::Assistant,
            model: model.into(),
            usage: Usage {
                input: line * 1000,
                output: 3,
                cache_read: u64::MAX >> 1,
                cache_write: 0,
                cost_input: cost / 2.0,
                cost_output: cost / 2.0,
                cost_cache_read: 0.0,
                cost_cache_write: 0.0,
                cost,
                // As if read from a file: the first three as decimals
                // (the second's places wrong, so it is stored as bits),
                // the others never were.
                places: match line {
                    2 => [18, 19, 19, NOT_DECIMAL, NOT_DECIMAL],
                    4 => [9, 3, 10, 0, 0],
                    _ => [NOT_DECIMAL; 5],
                },
            },
            fault: (line == 3).then_some(Fault::BadCost),
        }
    }

    #[test]
    fn rows_come_back_as_they_were_stored() {
        let mut rows = Rows::default();
        rows.extend(&[
            entry(
                2,
                Some(1_785_574_801_000),
                "anthropic/claude-sonnet-4-5",
                0.026850000000000002,
            ),
            entry(3, None, "Tools/summaries", 0.0),
            entry(
                4,
                Some(1_785_574_800_000),
                "anthropic/claude-sonnet-4-5",
                1e-9,
            ),
            entry(5, Some(-5), "openai/gpt-5", 0.1),
        ]);
        assert_eq!(rows.buckets.len(), 3);
        let bytes = rows.encode();
        // A cost whose places do not give it back is stored as its bits.
        let mut stored = rows.clone();
        for r in &mut stored.rows {
            for (c, p) in r.cost.iter().zip(&mut r.places) {
                if digits(*c, *p).is_none() {
                    *p = NOT_DECIMAL;
                }
            }
        }
        assert_eq!(stored.rows[0].places, [NOT_DECIMAL; 5]);
        assert_eq!(stored.rows[2].places, [9, NOT_DECIMAL, 10, 0, 0]);
        assert_eq!(Rows::decode(&bytes), Some(stored.clone()));
        for (a, b) in rows.rows.iter().zip(&stored.rows) {
            assert_eq!(a.cost.map(f64::to_bits), b.cost.map(f64::to_bits));
        }
        // Appended to, as a grown file's record is.
        let mut grown = Rows::decode(&bytes).unwrap();
        grown.extend(&[entry(9, Some(1_785_574_900_000), "openai/gpt-5", 0.2)]);
        assert_eq!(grown.buckets.len(), 3);
        assert_eq!(Rows::decode(&grown.encode()).unwrap().rows.len(), 5);
        // Nothing, and what is not a stored value.
        assert!(Rows::default().encode().is_empty());
        assert_eq!(Rows::decode(""), Some(Rows::default()));
        assert_eq!(Rows::decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(Rows::decode("\u{9}\0\0"), None);
        assert!(bytes.is_ascii());
    }
}
