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
//! places ([`Cost`](crate::pi::usage::Cost)), and the read gives back
//! the double `f64::from_str` reads from the file.
//!
//! Beside the rows the build keeps their [`Sums`] by quarter hour and
//! model (the `usage_sums` column), which a report reads instead of the
//! rows of a session outside a family
//! ([docs/performance.md](../../docs/performance.md#sums-by-quarter-hour)).

use std::collections::HashMap;
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
    /// Its bucket: an index into [`Value::buckets`].
    pub bucket: u32,
    /// What recorded it.
    pub source: u8,
    /// Why it is not summed, if it is not ([`Fault::rank`]).
    pub fault: u8,
    /// Its line.
    pub line: u64,
    /// Input, output, cache read and cache write tokens.
    pub tokens: [u64; 4],
    /// Its total cost (the parts: [`RowIter::next_with_parts`]).
    pub cost: f64,
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

/// A session's stored value, its rows read as they are asked for: a
/// report reads each row once, as it counts it, and nothing holds the
/// rows decoded
/// ([docs/performance.md](../../docs/performance.md#rows-read-as-they-are-counted)).
/// Its bytes may be a part of a buffer that holds many values
/// ([`Slots`]).
#[derive(Clone, Debug, Default)]
pub struct Value {
    /// The buffer its bytes are in.
    store: Arc<Vec<u8>>,
    /// Where its bytes start and end in `store`.
    start: usize,
    end: usize,
    /// The buckets, each once.
    buckets: Vec<String>,
    /// How many rows the value says it holds.
    len: usize,
    /// Where the rows start in `store`.
    at: usize,
}

impl PartialEq for Value {
    fn eq(&self, o: &Value) -> bool {
        self.rows_bytes() == o.rows_bytes() && self.buckets == o.buckets && self.len == o.len
    }
}

impl Value {
    /// The stored value `bytes`, its head read (its version and buckets);
    /// `None` when it is not one (another version, cut short in its
    /// head). An empty value holds no row.
    pub fn read(bytes: Vec<u8>) -> Option<Value> {
        let end = bytes.len();
        Value::read_in(&Arc::new(bytes), 0..end)
    }

    /// The stored value at `range` of `store`, as [`Value::read`] reads
    /// it.
    pub fn read_in(store: &Arc<Vec<u8>>, range: std::ops::Range<usize>) -> Option<Value> {
        let end = range.end;
        let bytes = store.get(range.clone())?;
        if bytes.is_empty() {
            return Some(Value::default());
        }
        let mut r = Reader { b: bytes, at: 0 };
        let buckets = read_head(&mut r, VERSION)?;
        let len = r.varint()? as usize;
        Some(Value {
            store: store.clone(),
            start: range.start,
            end,
            buckets,
            len,
            at: range.start + r.at,
        })
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        self.store.get(self.start..self.end).unwrap_or_default()
    }

    /// The bytes of its rows.
    fn rows_bytes(&self) -> &[u8] {
        self.store.get(self.at..self.end).unwrap_or_default()
    }

    /// The stored value `bytes`, every row of it read once to check it:
    /// `None` unless each row the head counts is there, whole, and
    /// nothing after them.
    pub fn read_whole(bytes: Vec<u8>) -> Option<Value> {
        let value = Value::read(bytes)?;
        value.each_whole(|_| ()).then_some(value)
    }

    /// Call `f` with every row, the costs' parts read too; whether each
    /// row the head counts was there, whole, and nothing after them.
    fn each_whole(&self, mut f: impl FnMut(&Row)) -> bool {
        let mut rows = self.rows();
        for _ in 0..self.len {
            match rows.next_with_parts() {
                Some((row, _)) => f(&row),
                None => return false,
            }
        }
        rows.r.at == rows.r.b.len()
    }

    /// The buckets (`provider/model` names) its rows name, each once.
    pub fn buckets(&self) -> &[String] {
        &self.buckets
    }

    /// How many rows it holds (as its head says: [`RowIter::cut_short`]).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no row.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its rows, in file order.
    pub fn rows(&self) -> RowIter<'_> {
        RowIter {
            r: Reader {
                b: self.rows_bytes(),
                at: 0,
            },
            left: self.len,
            last: 0,
            cut: false,
        }
    }
}

/// The rows of a [`Value`], each decoded as it is asked for. A row that
/// does not read ends them ([`RowIter::cut_short`]).
pub struct RowIter<'a> {
    r: Reader<'a>,
    /// The rows the head says are left.
    left: usize,
    /// The time of the last row that has one.
    last: i64,
    /// Whether a row did not read.
    cut: bool,
}

impl RowIter<'_> {
    /// Whether a row did not read, so that the rows ended before the
    /// value's head said they would: how many were not read is
    /// [`RowIter::left`].
    pub fn cut_short(&self) -> bool {
        self.cut
    }

    /// The rows not read yet.
    pub fn left(&self) -> usize {
        self.left
    }

    /// The next row, and its costs of input, output, cache reads and
    /// cache writes (which [`Iterator::next`] skips).
    pub fn next_with_parts(&mut self) -> Option<(Row, [f64; 4])> {
        let mut parts = [0f64; 4];
        let row = self.step(Some(&mut parts))?;
        Some((row, parts))
    }

    fn step(&mut self, parts: Option<&mut [f64; 4]>) -> Option<Row> {
        if self.left == 0 || self.cut {
            return None;
        }
        let row = self.decode(parts);
        match row {
            Some(_) => self.left -= 1,
            None => self.cut = true,
        }
        row
    }

    fn decode(&mut self, parts: Option<&mut [f64; 4]>) -> Option<Row> {
        let r = &mut self.r;
        let ts_ms = time_of(r.varint()?, &mut self.last);
        let key = r.fixed()?;
        let bucket = r.varint()? as u32;
        let sf = r.varint()?;
        let line = r.varint()?;
        let mut tokens = [0u64; 4];
        for t in &mut tokens {
            *t = r.varint()?;
        }
        let cost = r.cost()?;
        match parts {
            Some(parts) => {
                for p in parts {
                    *p = r.cost()?;
                }
            }
            // A report sums the totals only: the parts are passed over,
            // not divided out.
            None => {
                for _ in 0..4 {
                    // Only a double's bits follow the tag's byte.
                    let tag = u64::from(r.b.get(r.at).copied().unwrap_or(0)) & BITS_TAG;
                    r.varint()?;
                    if tag == BITS_TAG {
                        r.skip(10)?;
                    }
                }
            }
        }
        Some(Row {
            ts_ms,
            key,
            bucket,
            source: (sf & 0xf) as u8,
            fault: ((sf >> 4) & 0xf) as u8,
            line,
            tokens,
            cost,
        })
    }
}

impl Iterator for RowIter<'_> {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        self.step(None)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
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
    /// The rows summed by quarter hour and bucket, in the order first met
    /// ([`Sums`]).
    sums: Vec<Sum>,
    /// Where each quarter hour's and bucket's sum is in `sums` (the
    /// quarter of rows without a time: `i64::MIN`).
    sum_at: HashMap<(i64, usize), usize, foldhash::fast::FixedState>,
    /// Whether a row cannot be summed so (a fault, or a time outside
    /// [`SUMMED_MS`]): the session's report then reads its rows.
    unsummed: bool,
}

impl Spent {
    /// The rows of a stored value, to be added to (a grown file's
    /// record); none when it is not one (a value this release cannot
    /// read is what a rewrite replaces).
    pub fn resume(value: Vec<u8>) -> Spent {
        let Some(value) = Value::read(value) else {
            return Spent::default();
        };
        let mut spent = Spent {
            buckets: value
                .buckets
                .iter()
                .map(|b| Arc::from(b.as_str()))
                .collect(),
            rows: value.len as u64,
            bytes: value.rows_bytes().to_vec(),
            ..Spent::default()
        };
        let whole = value.each_whole(|r| {
            if let Some(t) = r.ts_ms {
                spent.last_ts = t;
            }
            spent.sum(r.ts_ms, r.bucket as usize, r.tokens, r.cost, r.fault != 0);
        });
        if whole {
            spent
        } else {
            Spent::default()
        }
    }

    /// Add a row to its quarter hour's and bucket's sum.
    fn sum(&mut self, ts: Option<i64>, bucket: usize, tokens: [u64; 4], cost: f64, fault: bool) {
        let quarter = match ts {
            Some(t) if SUMMED_MS.contains(&t) => t.div_euclid(QUARTER_MS),
            None => i64::MIN,
            Some(_) => {
                self.unsummed = true;
                return;
            }
        };
        if fault {
            self.unsummed = true;
            return;
        }
        let next = self.sums.len();
        // A row's sum is the last row's, nearly always.
        let at = match self.sums.last() {
            Some(s) if s.bucket as usize == bucket && s.quarter.unwrap_or(i64::MIN) == quarter => {
                next - 1
            }
            _ => *self.sum_at.entry((quarter, bucket)).or_insert(next),
        };
        if at == next {
            self.sums.push(Sum {
                quarter: (quarter != i64::MIN).then_some(quarter),
                bucket: bucket as u32,
                ..Sum::default()
            });
        }
        let s = &mut self.sums[at];
        for (a, b) in s.tokens.iter_mut().zip(tokens) {
            *a += b;
        }
        s.cost += cost;
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
            w.varint(time_code(e.timestamp_ms, &mut self.last_ts));
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
            self.sum(
                e.timestamp_ms,
                bucket,
                [u.input, u.output, u.cache_read, u.cache_write],
                u.costs[0].value(),
                e.fault.is_some(),
            );
        }
    }

    /// The stored value (empty when there is no row).
    pub fn encode(&self) -> String {
        if self.rows == 0 {
            return String::new();
        }
        let mut out = self.head(VERSION, self.bytes.len());
        varint(&mut out, self.rows);
        out.extend_from_slice(&self.bytes);
        // Every byte is below 0x80.
        String::from_utf8(out).unwrap_or_default()
    }

    /// The stored sums ([`Sums`]; empty when there is no row, or a row
    /// that cannot be summed).
    pub fn encode_sums(&self) -> String {
        if self.rows == 0 || self.unsummed {
            return String::new();
        }
        let mut out = self.head(SUMS_VERSION, self.sums.len() * 32);
        varint(&mut out, self.sums.len() as u64);
        let mut last = 0i64;
        for s in &self.sums {
            varint(&mut out, time_code(s.quarter, &mut last));
            varint(&mut out, u64::from(s.bucket));
            for t in s.tokens {
                varint(&mut out, t);
            }
            let mut bits = [0u8; 10];
            let mut w = Writer {
                b: &mut bits,
                at: 0,
            };
            w.fixed(s.cost.to_bits());
            out.extend_from_slice(&bits);
        }
        String::from_utf8(out).unwrap_or_default()
    }

    /// A value's head: its version and the buckets, with room for `more`
    /// bytes.
    fn head(&self, version: u8, more: usize) -> Vec<u8> {
        let names: usize = self.buckets.iter().map(|b| b.len() + 2).sum();
        let mut out = Vec::with_capacity(16 + names + more);
        out.push(version);
        varint(&mut out, self.buckets.len() as u64);
        for b in &self.buckets {
            // A name of ASCII as is; any other byte as a number.
            varint(&mut out, b.len() as u64);
            for &c in b.as_bytes() {
                varint(&mut out, u64::from(c));
            }
        }
        out
    }
}

/// A time as written, `last` the one written before it (then this one):
/// 0 for none, else 1 + its difference from `last`, zigzagged.
fn time_code(t: Option<i64>, last: &mut i64) -> u64 {
    match t {
        None => 0,
        Some(t) => {
            let d = t.wrapping_sub(*last);
            *last = t;
            (((d << 1) ^ (d >> 63)) as u64).wrapping_add(1)
        }
    }
}

/// The time [`time_code`] wrote as `code`, `last` the one read before it
/// (then this one).
fn time_of(code: u64, last: &mut i64) -> Option<i64> {
    let z = code.checked_sub(1)?;
    *last = last.wrapping_add(((z >> 1) as i64) ^ -((z & 1) as i64));
    Some(*last)
}

/// The version of the stored sums.
pub const SUMS_VERSION: u8 = 1;

/// The length of a quarter hour, in ms: every time zone in use changes
/// its offset, and starts its days, on a quarter hour
/// ([`quarter_exact`]), so a quarter hour's rows fall in one day.
pub const QUARTER_MS: i64 = 900_000;

/// The times rows are summed by quarter hour within (2000 to 2200, UTC;
/// [`quarter_exact`] checks a time zone over them).
pub const SUMMED_MS: std::ops::Range<i64> = 946_684_800_000..7_258_118_400_000;

/// Whether every day of `tz` within [`SUMMED_MS`] starts on a quarter
/// hour and holds whole quarter hours: its offsets and the times it
/// changes them are whole quarter hours.
pub fn quarter_exact(tz: &jiff::tz::TimeZone) -> bool {
    let quarter = |secs: i64| secs % (QUARTER_MS / 1000) == 0;
    let (Ok(from), Ok(to)) = (
        jiff::Timestamp::from_millisecond(SUMMED_MS.start),
        jiff::Timestamp::from_millisecond(SUMMED_MS.end),
    ) else {
        return false;
    };
    let mut offset = tz.to_offset(from);
    if !quarter(i64::from(offset.seconds())) {
        return false;
    }
    for t in tz.following(from) {
        if t.timestamp() >= to {
            break;
        }
        // A transition that keeps the offset (a new abbreviation, or the
        // end of a table) changes no clock.
        if t.offset() == offset {
            continue;
        }
        offset = t.offset();
        if !quarter(t.timestamp().as_second()) || !quarter(i64::from(offset.seconds())) {
            return false;
        }
    }
    true
}

/// A quarter hour's rows of one bucket, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sum {
    /// The quarter hour (its first millisecond over [`QUARTER_MS`]);
    /// `None`: the rows without a time.
    pub quarter: Option<i64>,
    /// The bucket: an index into [`Sums::buckets`].
    pub bucket: u32,
    /// Input, output, cache read and cache write tokens.
    pub tokens: [u64; 4],
    /// The total costs, added in file order.
    pub cost: f64,
}

impl Sum {
    /// The quarter hour's first millisecond.
    pub fn start_ms(&self) -> Option<i64> {
        self.quarter.map(|q| q * QUARTER_MS)
    }
}

/// A session's rows summed by quarter hour and bucket, as the build
/// stores them beside the rows: what a report of a session outside a
/// family reads instead of its rows, for a time zone and bounds on
/// quarter hours ([docs/performance.md](../../docs/performance.md#sums-by-quarter-hour)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sums {
    /// The buckets, each once.
    pub buckets: Vec<String>,
    /// The sums, in the order their first rows were written.
    pub sums: Vec<Sum>,
}

impl Sums {
    /// The stored sums `bytes`; `None` when they are not ones this
    /// release writes, whole.
    pub fn read(bytes: &[u8]) -> Option<Sums> {
        let mut r = Reader { b: bytes, at: 0 };
        let buckets = read_head(&mut r, SUMS_VERSION)?;
        let n = r.varint()? as usize;
        let mut sums = Vec::with_capacity(n.min(1 << 16));
        let mut last = 0i64;
        for _ in 0..n {
            let quarter = time_of(r.varint()?, &mut last);
            let bucket = u32::try_from(r.varint()?).ok()?;
            if bucket as usize >= buckets.len() {
                return None;
            }
            let mut tokens = [0u64; 4];
            for t in &mut tokens {
                *t = r.varint()?;
            }
            let cost = f64::from_bits(r.fixed()?);
            sums.push(Sum {
                quarter,
                bucket,
                tokens,
                cost,
            });
        }
        (r.at == bytes.len()).then_some(Sums { buckets, sums })
    }
}

/// A value's head ([`Spent::head`]): its buckets, if its version is
/// `version`.
fn read_head(r: &mut Reader, version: u8) -> Option<Vec<String>> {
    if r.byte()? != version {
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
    Some(buckets)
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

/// The values of many documents put back together from their chunks
/// ([`chunks`]) in one buffer, each in a slot with room for its chunks,
/// as a column's dictionary gives the chunks: a value's in order, the
/// values' interleaved. One buffer, not one a value: the allocations, and
/// the system calls that grow a thread's heap for them, cost more than
/// reading the values
/// ([docs/performance.md](../../docs/performance.md#rows-read-as-they-are-counted)).
pub struct Slots {
    /// The values, each where its first chunk came; never grown past
    /// the room it was made with, so never moved.
    bytes: Vec<u8>,
    /// Each value's slot: where it starts, its room in chunks, its length
    /// so far, and the number its next chunk must have (`None` once one
    /// did not).
    slots: Vec<Slot>,
}

#[derive(Clone, Copy)]
struct Slot {
    start: usize,
    chunks: usize,
    len: usize,
    next: Option<usize>,
}

impl Slots {
    /// Room for values of `chunks` chunks each.
    pub fn new(chunks: &[usize]) -> Slots {
        let room = chunks.iter().map(|&n| n.saturating_mul(CHUNK)).sum();
        let slots = chunks
            .iter()
            .map(|&n| Slot {
                start: 0,
                chunks: n,
                len: 0,
                next: Some(0),
            })
            .collect();
        let bytes = Vec::with_capacity(room);
        huge_pages(bytes.as_ptr() as usize, room);
        Slots { bytes, slots }
    }

    /// Add value `v`'s next chunk. A value's first chunk comes before
    /// every value's second (the number leads each): a value of one chunk
    /// is put where the last one ended, one of more is given room for all
    /// of its chunks there, which only its last leaves part unused.
    pub fn push(&mut self, v: usize, chunk: &[u8]) {
        let Some(slot) = self.slots.get_mut(v) else {
            return;
        };
        let Some(n) = slot.next else {
            return;
        };
        let body = chunk.get(CHUNK_DIGITS..).unwrap_or_default();
        // Every chunk but a value's last is `CHUNK` bytes long.
        let last = n + 1 == slot.chunks;
        let fits = chunk_number(chunk) == Some(n)
            && n < slot.chunks
            && (body.len() == CHUNK || last && body.len() < CHUNK);
        if !fits {
            slot.next = None;
            return;
        }
        if n == 0 {
            slot.start = self.bytes.len();
            if last {
                self.bytes.extend_from_slice(body);
            } else {
                self.bytes.resize(slot.start + slot.chunks * CHUNK, 0);
            }
        }
        let at = slot.start + n * CHUNK;
        if let Some(to) = self.bytes.get_mut(at..at + body.len()) {
            to.copy_from_slice(body);
        }
        slot.len = n * CHUNK + body.len();
        slot.next = Some(n + 1);
    }

    /// The buffer, and where each value is in it; `None` for a value whose
    /// chunks were not a value's, all of them in order.
    pub fn finish(self) -> Joined {
        let ranges = self
            .slots
            .iter()
            .map(|s| (s.next == Some(s.chunks)).then_some(s.start..s.start + s.len))
            .collect();
        (Arc::new(self.bytes), ranges)
    }
}

/// The value whose chunks are `chunks`, all of them in the column's
/// order; `None` when they are not a value's.
pub fn join<B: AsRef<[u8]>>(chunks: &[B]) -> Option<Vec<u8>> {
    let mut slots = Slots::new(&[chunks.len()]);
    for c in chunks {
        slots.push(0, c.as_ref());
    }
    let (store, ranges) = slots.finish();
    Some(store.get(ranges.first()?.clone()?)?.to_vec())
}

/// Values put back together ([`Slots::finish`]): the buffer, and where
/// each value is in it (`None`: one whose chunks were not a value's).
pub type Joined = (Arc<Vec<u8>>, Vec<Option<std::ops::Range<usize>>>);

/// Ask the system to back the 2 MiB pages that lie wholly within the
/// `len` bytes allocated at `at` with huge pages (where it does so on
/// request only): the values are written once, each page's fault and
/// zeroing is then one for 512 pages
/// ([docs/performance.md](../../docs/performance.md#rows-read-as-they-are-counted)).
fn huge_pages(at: usize, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 1 << 21;
        let start = at.next_multiple_of(HUGE);
        let end = (at + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies within the allocation, and the
            // advice changes how its pages are backed, not what they hold.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (at, len);
}

/// The number a chunk starts with.
fn chunk_number(chunk: &[u8]) -> Option<usize> {
    chunk
        .get(..CHUNK_DIGITS)
        .filter(|digits| digits.iter().all(u8::is_ascii_digit))
        .map(|digits| {
            digits
                .iter()
                .fold(0, |at, &d| at * 10 + usize::from(d - b'0'))
        })
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

/// The first `n` bytes of `x` (1 to 8), the rest cleared.
#[inline(always)]
fn keep(x: u64, n: u32) -> u64 {
    if n >= 8 {
        x
    } else {
        x & ((1 << (n * 8)) - 1)
    }
}

/// The six-bit groups of up to eight bytes, first byte lowest, packed
/// into one number.
#[inline]
fn pack(x: u64) -> u64 {
    let x = x & 0x3f3f_3f3f_3f3f_3f3f;
    let x = (x & 0x003f_003f_003f_003f) | ((x & 0x3f00_3f00_3f00_3f00) >> 2);
    let x = (x & 0x0000_0fff_0000_0fff) | ((x & 0x0fff_0000_0fff_0000) >> 4);
    (x & 0x00ff_ffff) | ((x & 0x00ff_ffff_0000_0000) >> 8)
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

    /// A number, read a word at a time where sixteen bytes are left (a
    /// number takes at most eleven), else a byte at a time.
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        let (v, n) = self.number()?;
        self.at += n;
        Some(v)
    }

    /// The number at `at`, and how many bytes it takes.
    #[inline(always)]
    fn number(&self) -> Option<(u64, usize)> {
        let Some(w) = self.b.get(self.at..self.at + 16) else {
            let mut r = Reader {
                b: self.b,
                at: self.at,
            };
            let v = r.varint_bytes()?;
            return Some((v, r.at - self.at));
        };
        let lo = u64::from_le_bytes(w[..8].try_into().ok()?);
        let hi = u64::from_le_bytes(w[8..].try_into().ok()?);
        // The bytes that end a number: those without `MORE`.
        let ends = !lo & 0x4040_4040_4040_4040;
        let (lo, hi, n) = if ends != 0 {
            let n = ends.trailing_zeros() / 8 + 1;
            (keep(lo, n), 0, n)
        } else {
            let ends = !hi & 0x4040_4040_4040_4040;
            let n = ends.trailing_zeros() / 8 + 1;
            // Eleven bytes at most.
            if n > 3 {
                return None;
            }
            (lo, keep(hi, n), 8 + n)
        };
        if (lo | hi) & 0x8080_8080_8080_8080 != 0 {
            return None;
        }
        Some((pack(lo) | pack(hi) << 48, n as usize))
    }

    /// What [`Reader::varint`] reads, a byte at a time.
    #[cold]
    fn varint_bytes(&mut self) -> Option<u64> {
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

    fn skip(&mut self, n: usize) -> Option<()> {
        self.b.get(self.at..self.at + n)?;
        self.at += n;
        Some(())
    }

    /// A cost: digits over a power of ten, or a double's bits.
    fn cost(&mut self) -> Option<f64> {
        let v = self.varint()?;
        match v & BITS_TAG {
            BITS_TAG => Some(f64::from_bits(self.fixed()?)),
            tag if tag <= u64::from(MAX_PLACES) => Some(ratio(v >> 5, tag as u8)),
            _ => None,
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
        let value = Value::read_whole(text.clone().into_bytes()).unwrap();
        assert_eq!(
            value.buckets(),
            [
                "anthropic/claude-sonnet-4-5",
                "Tools/summaries",
                "openai/gpt-5"
            ]
        );
        assert_eq!(value.len(), entries.len());
        let mut rows = value.rows();
        for e in &entries {
            let (r, parts) = rows.next_with_parts().unwrap();
            let u = &e.usage;
            assert_eq!(
                (r.ts_ms, r.key, r.line, r.source(), r.fault()),
                (e.timestamp_ms, e.key, e.line, e.source, e.fault)
            );
            assert_eq!(&*value.buckets()[r.bucket as usize], &*e.model);
            assert_eq!(r.tokens, [u.input, u.output, u.cache_read, u.cache_write]);
            // To the last bit.
            assert_eq!(
                [r.cost, parts[0], parts[1], parts[2], parts[3]].map(f64::to_bits),
                u.costs.map(|c| c.value().to_bits())
            );
        }
        assert_eq!(rows.next_with_parts(), None);
        assert!(!rows.cut_short());
        // Read without their parts, the rows are the same.
        let plain: Vec<Row> = value.rows().collect();
        let mut with = value.rows();
        let full: Vec<Row> =
            std::iter::from_fn(|| with.next_with_parts().map(|(r, _)| r)).collect();
        assert_eq!(plain.len(), entries.len());
        assert_eq!(
            plain.iter().map(|r| r.cost.to_bits()).collect::<Vec<_>>(),
            full.iter().map(|r| r.cost.to_bits()).collect::<Vec<_>>()
        );
        // Appended to, as a grown file's record is: as if written at once.
        let mut first = Spent::default();
        first.extend(&entries[..2]);
        let mut grown = Spent::resume(first.encode().into_bytes());
        grown.extend(&entries[2..]);
        assert_eq!(grown.encode(), text);
        // Nothing, and what is not a stored value.
        assert!(Spent::default().encode().is_empty());
        assert!(Spent::resume(Vec::new()).is_empty());
        assert_eq!(Value::read(Vec::new()), Some(Value::default()));
        assert_eq!(Value::read_whole(Vec::new()).map(|v| v.len()), Some(0));
        assert_eq!(Value::read(b"\x01\0\0".to_vec()), None);
        // Cut short: the head reads, the last row does not; a report
        // counts the rows before it and knows how many it lost.
        let cut = text.as_bytes()[..text.len() - 1].to_vec();
        assert_eq!(Value::read_whole(cut.clone()), None);
        let cut = Value::read(cut).unwrap();
        let mut rows = cut.rows();
        assert_eq!(rows.by_ref().count(), entries.len() - 1);
        assert!(rows.cut_short());
        assert_eq!(rows.left(), 1);
        assert!(Spent::resume(b"\x01\0\0".to_vec()).is_empty());
    }

    #[test]
    fn numbers_read_eight_bytes_at_a_time_are_those_read_a_byte_at_a_time() {
        let mut numbers: Vec<u64> = vec![0, 1, 63, 64, u64::MAX, u64::MAX >> 1, 1 << 63];
        for bits in 0..64 {
            numbers.extend([(1u64 << bits) - 1, 1 << bits, (1 << bits) + 1]);
        }
        // Each at the start, the middle and the very end of the bytes, so
        // that both ways of reading meet each.
        for &v in &numbers {
            for pad in [0, 3, 20] {
                let mut b = vec![b'!'; pad];
                varint(&mut b, v);
                let len = b.len() - pad;
                for tail in [0, 1, 7, 8, 16] {
                    let mut bytes = b.clone();
                    bytes.extend(std::iter::repeat_n(b'!', tail));
                    let mut r = Reader { b: &bytes, at: pad };
                    assert_eq!(r.varint(), Some(v), "{v} {pad} {tail}");
                    assert_eq!(r.at, pad + len);
                    let mut r = Reader { b: &bytes, at: pad };
                    assert_eq!(r.varint_bytes(), Some(v));
                }
            }
        }
        // Not a number: a byte over 0x7f, more than eleven bytes, or cut
        // short; read either way.
        for bad in [
            &[0x80u8, 0, 0, 0, 0, 0, 0, 0, 0][..],
            &[0x41, 0x41, 0x41, 0xc1, 1, 0, 0, 0, 0],
            &[0x40; 12],
            &[0x40; 3],
        ] {
            let mut r = Reader { b: bad, at: 0 };
            assert_eq!(r.varint(), None, "{bad:?}");
            let mut r = Reader { b: bad, at: 0 };
            assert_eq!(r.varint_bytes(), None, "{bad:?}");
        }
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
            assert_eq!(join(&chunks), Some(value.into_bytes()), "{len}");
        }
    }

    #[test]
    fn values_come_back_whole_from_their_chunks_in_a_dictionary_s_order() {
        let values: Vec<String> = [5, CHUNK, 2 * CHUNK + 7, 3 * CHUNK, 1]
            .iter()
            .enumerate()
            .map(|(v, &len)| {
                (0..len)
                    .map(|i| char::from(b'a' + ((i + v) % 26) as u8))
                    .collect()
            })
            .collect();
        let cut: Vec<Vec<String>> = values.iter().map(|v| chunks(v)).collect();
        let sizes: Vec<usize> = cut.iter().map(Vec::len).collect();
        // The dictionary's order: every value's first chunk, then every
        // second one, and so on; the last value's third chunk lost.
        let mut slots = Slots::new(&[&sizes[..], &[3]].concat());
        let lost = chunks(&"z".repeat(2 * CHUNK + 1));
        for n in 0..3 {
            for (v, c) in cut.iter().enumerate() {
                if let Some(c) = c.get(n) {
                    slots.push(v, c.as_bytes());
                }
            }
            if let Some(c) = lost.get(n).filter(|_| n < 2) {
                slots.push(values.len(), c.as_bytes());
            }
        }
        let (store, ranges) = slots.finish();
        for (v, value) in values.iter().enumerate() {
            let r = ranges[v].clone().unwrap();
            assert_eq!(&store[r], value.as_bytes(), "{v}");
        }
        assert_eq!(ranges[values.len()], None);
        // Packed: a value of one chunk takes its length, one of several
        // the room of all of its chunks.
        assert_eq!(
            store.len(),
            5 + CHUNK + 3 * CHUNK + 3 * CHUNK + 1 + 3 * CHUNK
        );
    }

    #[test]
    fn chunks_missing_or_out_of_order_are_no_value() {
        let value = "x".repeat(2 * CHUNK + 1);
        let chunks = chunks(&value);
        for order in [[0, 2].as_slice(), &[1, 2], &[1, 0, 2], &[0, 0, 1, 2]] {
            let picked: Vec<&String> = order.iter().map(|&i| &chunks[i]).collect();
            assert_eq!(join(&picked), None, "{order:?}");
        }
        assert_eq!(join(&[b"12"]), None);
    }
}
