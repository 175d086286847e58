//! What Pi spent: the `usage` it records with every model call, read from
//! each entry that carries one.
//!
//! Pi 1.6 records usage (`input`, `output`, `cacheRead`, `cacheWrite`,
//! `totalTokens`, `cost.{input,output,cacheRead,cacheWrite,total}`) on:
//!
//! - assistant messages, with their `provider` and `model`
//!   (`responseModel` where the provider answered with another);
//! - `usage` entries (`kind`, e.g. `cache_warm`; their own `provider` and
//!   `model`);
//! - tool results (LLM work done inside a tool), compactions and branch
//!   summaries, which Pi's breakdown puts under "Tools/summaries".
//!
//! Oh My Pi adds `model_usage` entries (their `provider` and `model`) and
//! a subagent's usage in a `task` tool result's `details.usage`.
//!
//! Pi totals them over every entry of the file, abandoned branches
//! included (`getSessionStats`, `getUsageCostBreakdown`): so does this
//! module, one [`UsageEntry`] per entry, with the key that makes an entry
//! copied into a fork ([`UsageEntry::key`]: its id and time) the same
//! entry. A value that cannot be summed (a cost missing, negative, not a
//! number or over [`MAX_ENTRY_COST`], token counts that are not counts)
//! is kept with its [`Fault`] and never summed; the reader reports it.

use std::sync::Arc;

use super::scan::{skip_value, skip_ws, Nesting};

/// The most one entry is believed to cost, in dollars: a value past it is
/// a fault of the file, not money spent.
pub const MAX_ENTRY_COST: f64 = 1e6;

/// The bucket Pi's breakdown puts tool results' and summaries' usage in.
pub const TOOLS_BUCKET: &str = "Tools/summaries";

/// Token counts and cost of one model call (or of the calls an entry
/// records), as Pi wrote them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens read from the provider's cache.
    pub cache_read: u64,
    /// Tokens written to the provider's cache.
    pub cache_write: u64,
    /// What the call cost in all (`cost.total`, what Pi sums), then the
    /// costs of the input, the output, the cache reads and the cache
    /// writes, in dollars.
    pub costs: [Cost; 5],
}

impl Usage {
    /// The tokens Pi counts for a session: the four counts summed.
    pub fn tokens(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }

    /// What the call cost in all.
    pub fn cost(&self) -> f64 {
        self.costs[0].value()
    }
}

/// A cost as written: a decimal's digits and places (its value is
/// computed when it is read back, as `f64::from_str` computes it: the
/// build does no division), or, for a cost written any other way, the
/// double `f64::from_str` read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// The digits, or the double's bits.
    digits: u64,
    /// The decimal places, or [`NOT_DECIMAL`].
    places: u8,
}

/// [`Cost`]'s places of a cost that is not kept as a decimal.
pub const NOT_DECIMAL: u8 = u8::MAX;

/// The most places [`ratio`] divides by exactly (`5^27` fits in 64 bits).
pub const MAX_PLACES: u8 = 27;

impl Cost {
    /// Nothing.
    pub const ZERO: Cost = Cost {
        digits: 0,
        places: 0,
    };

    /// The decimal `digits / 10^places`, if it has at most
    /// [`MAX_PLACES`] places.
    pub fn decimal(digits: u64, places: u8) -> Option<Cost> {
        (places <= MAX_PLACES).then_some(Cost { digits, places })
    }

    /// The double `x`.
    pub fn double(x: f64) -> Cost {
        Cost {
            digits: x.to_bits(),
            places: NOT_DECIMAL,
        }
    }

    /// Its digits and places, if it is kept as a decimal.
    pub fn as_decimal(self) -> Option<(u64, u8)> {
        (self.places != NOT_DECIMAL).then_some((self.digits, self.places))
    }

    /// Its value: the double `f64::from_str` reads from what was written.
    pub fn value(self) -> f64 {
        match self.as_decimal() {
            Some((m, places)) => ratio(m, places),
            None => f64::from_bits(self.digits),
        }
    }

    /// Whether it is money: a number of 0 or more, not over
    /// [`MAX_ENTRY_COST`]. A decimal is one unless its digits say it may
    /// be over (then its value is computed).
    fn is_money(self) -> bool {
        if let Some((m, places)) = self.as_decimal() {
            // `m <= 10^(6 + places)`: at most a million, whatever the
            // rounding (a million is a double).
            let most = POW10_U64.get(6 + usize::from(places)).copied();
            if most.is_none_or(|most| m <= most) {
                return true;
            }
        }
        let x = self.value();
        x.is_finite() && (0.0..=MAX_ENTRY_COST).contains(&x)
    }
}

/// `m / 10^places`, `places` at most [`MAX_PLACES`]: the double nearest
/// it, ties to even, which is what `f64::from_str` gives for the decimal.
pub fn ratio(m: u64, places: u8) -> f64 {
    let k = usize::from(places.min(MAX_PLACES));
    // Both exact, one correctly rounded division.
    if m < 1 << 53 && k < POW10.len() {
        return m as f64 / POW10[k];
    }
    if m == 0 {
        return 0.0;
    }
    // Digits past 2^53 (JavaScript writes 17 of them): m / 10^k is
    // (m / 5^k) / 2^k. The quotient by 5^k is taken to 64 bits or more,
    // rounded to 53 with its remainder (ties to even), then scaled by a
    // power of two, which is exact.
    let five = POW5[k];
    let s = m.leading_zeros() + 64;
    let n = u128::from(m) << s;
    let q = n / u128::from(five);
    let r = n - q * u128::from(five);
    let shift = (128 - q.leading_zeros()) - 54;
    let t = (q >> shift) as u64;
    let below = q & ((1u128 << shift) - 1) != 0 || r != 0;
    let mut mant = t >> 1;
    if t & 1 == 1 && (below || mant & 1 == 1) {
        mant += 1;
    }
    let e = shift as i32 + 1 - s as i32 - k as i32;
    mant as f64 * f64::from_bits(((1023 + e) as u64) << 52)
}

/// Why an entry's usage is not summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// An assistant message with no `usage` (Pi always writes one).
    NoUsage,
    /// `cost` or `cost.total` missing.
    NoCost,
    /// A cost that is negative, not a number, infinite or over
    /// [`MAX_ENTRY_COST`].
    BadCost,
    /// A token count that is not a whole number of 0 or more.
    BadTokens,
    /// Usage the index holds but cannot read back (a damaged index; a
    /// build never writes it).
    Unreadable,
}

impl Fault {
    /// As stored in the index.
    pub fn rank(self) -> u64 {
        match self {
            Fault::NoUsage => 1,
            Fault::NoCost => 2,
            Fault::BadCost => 3,
            Fault::BadTokens => 4,
            Fault::Unreadable => 15,
        }
    }

    /// The fault stored as `rank`, if any.
    pub fn from_rank(rank: u64) -> Option<Fault> {
        match rank {
            1 => Some(Fault::NoUsage),
            2 => Some(Fault::NoCost),
            3 => Some(Fault::BadCost),
            4 => Some(Fault::BadTokens),
            15 => Some(Fault::Unreadable),
            _ => None,
        }
    }

    /// What it says, for a person.
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::NoUsage => "an assistant message without usage",
            Fault::NoCost => "usage without a cost",
            Fault::BadCost => "a cost that is negative, not a number or absurd (over 1e6)",
            Fault::BadTokens => "token counts that are not whole numbers of 0 or more",
            Fault::Unreadable => {
                "usage the index holds but cannot read (rebuild it: `pi-index build --full`)"
            }
        }
    }
}

/// Which kind of entry recorded the usage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// An assistant message.
    Assistant,
    /// A tool result (LLM work inside a tool).
    ToolResult,
    /// A `usage` entry (Pi 1.6).
    Entry,
    /// A compaction or a branch summary.
    Summary,
    /// Oh My Pi's `model_usage` entry.
    ModelUsage,
    /// Oh My Pi's `task` tool result: its subagent's usage.
    Subagent,
}

impl Source {
    /// As stored in the index.
    pub fn rank(self) -> u64 {
        match self {
            Source::Assistant => 0,
            Source::ToolResult => 1,
            Source::Entry => 2,
            Source::Summary => 3,
            Source::ModelUsage => 4,
            Source::Subagent => 5,
        }
    }

    /// The source stored as `rank`.
    pub fn from_rank(rank: u64) -> Source {
        match rank {
            1 => Source::ToolResult,
            2 => Source::Entry,
            3 => Source::Summary,
            4 => Source::ModelUsage,
            5 => Source::Subagent,
            _ => Source::Assistant,
        }
    }
}

/// One entry's usage.
#[derive(Clone, Debug, PartialEq)]
pub struct UsageEntry {
    /// 1-based line of the entry.
    pub line: u64,
    /// The same for the same entry in every file of a family (a fork
    /// copies its parent's entries with their ids and times): a hash of
    /// the entry's id and timestamp ([`entry_key`]).
    pub key: u64,
    /// The entry's time, epoch milliseconds.
    pub timestamp_ms: Option<i64>,
    /// What recorded it.
    pub source: Source,
    /// Where Pi's breakdown puts it: `provider/model` (the model that
    /// answered), or [`TOOLS_BUCKET`].
    pub model: Arc<str>,
    /// The counts and cost (zeros where a fault left them unread).
    pub usage: Usage,
    /// Why it is not summed, if it is not.
    pub fault: Option<Fault>,
}

/// What to read of the usage of the entry just recorded (the last of its
/// chunk's, its usage left to read), from its line's bytes, and where.
#[derive(Clone, Copy, Debug)]
pub struct Wanted {
    /// The key path of its `usage` object ([`locate`]).
    pub path: &'static [&'static [u8]],
    /// Whether an entry of this kind always records usage (an assistant
    /// message): then none is a fault.
    pub required: bool,
}

/// What the skim met of a message's own `usage` object
/// ([`super::skim::reduce_into`]).
#[derive(Clone, Copy, Debug)]
pub enum Met {
    /// Written as Pi writes it, and read there.
    Read(Usage),
    /// Written some other way: where it starts, to be read later.
    At(usize),
}

impl Wanted {
    /// Read the usage of the last of `entries` from `line` (the bytes of
    /// the object it was parsed from); the entry is taken back out if it
    /// records none. `met`: what the skim met of the message's own
    /// `usage` object, if it met it.
    pub fn read(self, entries: &mut Vec<UsageEntry>, line: &[u8], met: Option<Met>) {
        let Some(e) = entries.last_mut() else {
            return;
        };
        if self.path == MESSAGE_USAGE {
            let read = match met {
                Some(Met::Read(u)) => Some((u, None)),
                Some(Met::At(i)) => parse_at(line, i).map(|(u, f, _)| (u, f)),
                None => read_tail(line),
            };
            if let Some((u, f)) = read {
                (e.usage, e.fault) = (u, f);
                return;
            }
        }
        match locate(line, self.path) {
            Some(r) => (e.usage, e.fault) = parse(&line[r]),
            None if self.required => e.fault = Some(Fault::NoUsage),
            None => {
                entries.pop();
            }
        }
    }
}

/// The path of a message's own usage.
pub const MESSAGE_USAGE: &[&[u8]] = &[b"message", b"usage"];
/// The path of an entry's own usage.
pub const ENTRY_USAGE: &[&[u8]] = &[b"usage"];
/// The path of Oh My Pi's subagent usage in a `task` tool result.
pub const SUBAGENT_USAGE: &[&[u8]] = &[b"message", b"details", b"usage"];

/// The key of an entry with this id and this timestamp (as written); an
/// entry without an id (version 1, never copied into a fork by Pi) is
/// keyed by where its line starts instead.
pub fn entry_key(id: Option<&str>, timestamp: Option<&str>, offset: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    match id {
        Some(id) => eat(id.as_bytes()),
        None => eat(&offset.to_le_bytes()),
    }
    eat(timestamp.unwrap_or("").as_bytes());
    h
}

/// `provider/model`, as Pi's breakdown keys a model's usage: the one in
/// `last` when it is that (a chunk's entries nearly all name one model, so
/// an entry costs no allocation), else a new one left in `last`.
pub fn model_bucket(
    last: &mut Option<Arc<str>>,
    provider: Option<&str>,
    model: Option<&str>,
) -> Arc<str> {
    let p = provider.filter(|p| !p.is_empty()).unwrap_or("unknown");
    let m = model.filter(|m| !m.is_empty()).unwrap_or("unknown");
    if let Some(b) = last {
        if b.len() == p.len() + 1 + m.len()
            && b.starts_with(p)
            && b.as_bytes()[p.len()] == b'/'
            && b.ends_with(m)
        {
            return b.clone();
        }
    }
    let b: Arc<str> = [p, "/", m].concat().into();
    *last = Some(b.clone());
    b
}

/// [`TOOLS_BUCKET`], shared.
pub fn tools_bucket() -> Arc<str> {
    static TOOLS: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| TOOLS_BUCKET.into());
    TOOLS.clone()
}

/// Where an entry's `usage` object lies in its line: the value of the key
/// at `path` (the entry's own keys first: `["usage"]` for a usage entry,
/// `["message", "usage"]` for a message's, `["message", "details",
/// "usage"]` for Oh My Pi's subagent). A message's usage is looked for in
/// the line's last bytes first (Pi writes it after the content, which is
/// most of the line); then, and for the others, the line is walked.
pub fn locate(line: &[u8], path: &[&[u8]]) -> Option<std::ops::Range<usize>> {
    walk(line, path)
}

/// The value at `path` in the line's object, walked: strings skipped
/// whole, the keys of the open objects kept.
fn walk(line: &[u8], path: &[&[u8]]) -> Option<std::ops::Range<usize>> {
    if line.first() != Some(&b'{') {
        return None;
    }
    // The keys of the objects open, the outermost (the entry) first; how
    // many of them match `path` so far.
    let mut keys: Vec<&[u8]> = Vec::with_capacity(4);
    let mut nest = Nesting::default();
    let mut matched = 0usize;
    let mut i = 0;
    let mut pending: Option<&[u8]> = None;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let end = skip_value(line, i)?;
                if !nest.expect_key {
                    i = end;
                    continue;
                }
                nest.expect_key = false;
                let key = &line[i + 1..end - 1];
                let colon = skip_ws(line, end);
                if line.get(colon) != Some(&b':') {
                    return None;
                }
                let value = skip_ws(line, colon + 1);
                if nest.depth as usize == matched + 1
                    && matched < path.len()
                    && key == path[matched]
                {
                    if matched + 1 == path.len() {
                        return Some(value..skip_value(line, value)?);
                    }
                    // Descend into it, if it is an object.
                    if line.get(value) == Some(&b'{') {
                        pending = Some(key);
                        i = value;
                        continue;
                    }
                }
                // Any other value is skipped whole.
                i = skip_value(line, value)?;
                continue;
            }
            b'{' | b'[' => {
                nest.open(line[i])?;
                match pending.take() {
                    Some(k) => {
                        keys.push(k);
                        matched += 1;
                    }
                    None if nest.depth > 1 => return None,
                    None => {}
                }
                i += 1;
            }
            b'}' | b']' => {
                let depth = nest.depth as usize;
                if depth > 1 && keys.len() == depth - 1 {
                    keys.pop();
                    matched = matched.min(keys.len());
                }
                nest.close()?;
                i += 1;
            }
            b',' => {
                nest.comma();
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// How far from a line's end a message's `usage` object begins: Pi
/// writes only `stopReason`, `timestamp` and a few short keys after it.
const TAIL: usize = 768;

/// The message's own `usage` among the line's last bytes, read: the last
/// object there under the key `usage` whose end leaves exactly the
/// message and the entry to close (not one inside its details or a tool
/// call's arguments). A key's quotes are never escaped, so the bytes
/// `"usage":{` are a key wherever they are; each `{` of the tail is
/// looked at from the end, no more.
pub fn read_tail(line: &[u8]) -> Option<(Usage, Option<Fault>)> {
    let from = line.len().saturating_sub(TAIL);
    let mut end = line.len();
    while let Some(at) = memchr::memrchr(b'{', &line[from..end]) {
        let at = from + at;
        if line[..at].ends_with(b"\"usage\":") {
            let (u, fault, next) = parse_at(line, at)?;
            return closes(line, next, 2).then_some((u, fault));
        }
        end = at;
    }
    None
}

/// Whether what follows `from` in `line` closes exactly `levels` of the
/// objects open there (short keys and values, then braces).
fn closes(line: &[u8], mut i: usize, levels: i32) -> bool {
    let mut depth = 0i32;
    while i < line.len() {
        match line[i] {
            b'"' => match skip_value(line, i) {
                Some(j) => {
                    i = j;
                    continue;
                }
                None => return false,
            },
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    depth == -levels
}

/// Powers of ten a double holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Powers of ten that fit in 64 bits.
const POW10_U64: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// Powers of five up to [`MAX_PLACES`].
const POW5: [u64; MAX_PLACES as usize + 1] = {
    let mut p = [1u64; MAX_PLACES as usize + 1];
    let mut i = 1;
    while i < p.len() {
        p[i] = p[i - 1] * 5;
        i += 1;
    }
    p
};

/// How many of the eight bytes `w` (the first in its low byte) are
/// digits before the first that is not, and their value: a few
/// multiplications for the eight instead of one for each.
#[inline]
fn eight_digits(w: u64) -> (usize, u64) {
    const LOW: u64 = 0x0101_0101_0101_0101;
    // A digit's byte becomes its value 0-9; any other byte is flagged
    // (a carry out of a flagged byte only disturbs bytes after it).
    let t = w ^ (0x30 * LOW);
    let bad = (t | t.wrapping_add(0x06 * LOW)) & (0xf0 * LOW);
    let n = (bad.trailing_zeros() / 8) as usize;
    if n == 0 {
        return (0, 0);
    }
    // The n digits moved to the top bytes, the others cleared: the value
    // of an eight-digit number with leading zeros.
    let mut v = t << (64 - 8 * n as u32);
    v = (v & (0x0f * LOW)).wrapping_mul(2561) >> 8;
    v = (v & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601) >> 16;
    v = (v & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001) >> 32;
    (n, v)
}

/// A number as [`number`] read it.
#[derive(Clone, Copy)]
struct Num {
    /// Its value, exactly as the standard library reads it.
    x: f64,
    /// The number, if it was written as a plain whole number.
    count: Option<u64>,
    /// As a cost.
    cost: Cost,
    /// Where it ends.
    end: usize,
}

/// The number at `b[i]`: a decimal [`decimal_at`] reads, else what
/// `f64::from_str` reads.
fn number(b: &[u8], i: usize) -> Option<Num> {
    if let Some((cost, plain, end)) = decimal_at(b, i) {
        return Some(Num {
            x: cost.value(),
            count: plain.then_some(cost.digits),
            cost,
            end,
        });
    }
    let end = b[i..]
        .iter()
        .position(|&c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        .map_or(b.len(), |n| i + n);
    let x: f64 = std::str::from_utf8(&b[i..end]).ok()?.parse().ok()?;
    Some(Num {
        x,
        count: None,
        cost: Cost::double(x),
        end,
    })
}

/// The decimal at `b[i]`, read a digit at a time: digits, then maybe a
/// point and digits, then maybe an exponent of one to three digits. Its
/// [`Cost`] (at most 19 digits past leading zeros, places 0 to
/// [`MAX_PLACES`] after the exponent), whether it was a plain whole
/// number, and where it ends. `None` for anything else (a sign, more
/// digits, other places), which `f64::from_str` reads.
#[inline]
fn decimal_at(b: &[u8], i: usize) -> Option<(Cost, bool, usize)> {
    #[inline(always)]
    fn digits(b: &[u8], j: &mut usize, m: &mut u64) {
        while let Some(&c) = b.get(*j) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            *m = m.wrapping_mul(10).wrapping_add(u64::from(d));
            *j += 1;
        }
    }
    // The digits after the point, most of a cost: eight at a time while
    // eight bytes are there.
    #[inline(always)]
    fn many_digits(b: &[u8], j: &mut usize, m: &mut u64) {
        while let Some(run) = b.get(*j..*j + 8) {
            let (n, v) = eight_digits(u64::from_le_bytes(run.try_into().unwrap_or_default()));
            *m = m.wrapping_mul(POW10_U64[n]).wrapping_add(v);
            *j += n;
            if n < 8 {
                return;
            }
        }
        digits(b, j, m);
    }
    let mut m = 0u64;
    let mut j = i;
    digits(b, &mut j, &mut m);
    let whole = j - i;
    if whole == 0 {
        return None;
    }
    let mut frac = 0;
    let mut plain = true;
    if b.get(j) == Some(&b'.') {
        plain = false;
        j += 1;
        let from = j;
        many_digits(b, &mut j, &mut m);
        frac = j - from;
        if frac == 0 {
            return None;
        }
    }
    let written = j;
    let mut places = frac as i64;
    if matches!(b.get(j), Some(b'e' | b'E')) {
        plain = false;
        j += 1;
        let negative = b.get(j) == Some(&b'-');
        if matches!(b.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        let from = j;
        let mut e = 0u64;
        digits(b, &mut j, &mut e);
        if j == from || j - from > 3 {
            return None;
        }
        places += if negative { e as i64 } else { -(e as i64) };
    }
    if matches!(b.get(j), Some(b'.' | b'e' | b'E' | b'-' | b'+')) {
        return None;
    }
    // Past 19 digits the digits may have wrapped: only leading zeros may
    // make up the difference.
    if whole + frac > 19 {
        let zeros = b[i..written]
            .iter()
            .take_while(|&&c| c == b'0' || c == b'.')
            .filter(|&&c| c == b'0')
            .count();
        if whole + frac - zeros > 19 {
            return None;
        }
    }
    Some((Cost::decimal(m, u8::try_from(places).ok()?)?, plain, j))
}

/// The usage object at `line[i]` if Pi wrote it, as [`parse`] reads it
/// (with no fault), and where it ends; `None` for any other layout.
pub fn read_pi(line: &[u8], i: usize) -> Option<(Usage, usize)> {
    pi_written(line, i)
}

/// A count as [`pi_written`] reads it: a few digits, up to seven read at
/// once (a count that is not plain digits fails the key after it and
/// goes to [`parse_at`]).
#[inline(always)]
fn pi_count(b: &[u8], i: usize) -> Option<(u64, usize)> {
    if let Some(w) = b.get(i..i + 8) {
        let (n, v) = eight_digits(u64::from_le_bytes(w.try_into().unwrap_or_default()));
        if n < 8 {
            return (n > 0).then_some((v, i + n));
        }
    }
    let mut m = 0u64;
    let mut j = i;
    while let Some(&c) = b.get(j) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if j - i == 19 {
            return None;
        }
        m = m * 10 + u64::from(d);
        j += 1;
    }
    (j > i).then_some((m, j))
}

/// A cost as JavaScript writes most of them, `0.` and a few digits: up
/// to fifteen read at once, no exponent to look for, and below a dollar
/// (money); `None` for any other form, which [`decimal_at`] reads (the
/// same way).
#[inline(always)]
fn short_cost(b: &[u8], i: usize) -> Option<(Cost, usize)> {
    let w = b.get(i..i + 18)?;
    if w[..2] != *b"0." {
        return None;
    }
    let word = |at: usize| u64::from_le_bytes(w[at..at + 8].try_into().unwrap_or_default());
    let (n, v) = eight_digits(word(2));
    let (places, m) = if n < 8 {
        (n, v)
    } else {
        let (n2, v2) = eight_digits(word(10));
        if n2 == 8 {
            return None;
        }
        (8 + n2, v * POW10_U64[n2] + v2)
    };
    let end = i + 2 + places;
    if places == 0 || matches!(b.get(end), Some(b'.' | b'e' | b'E' | b'-' | b'+')) {
        return None;
    }
    Some((Cost::decimal(m, places as u8)?, end))
}

/// A cost as [`pi_written`] reads it, into `u`'s `slot`; `None` if it
/// is not money.
#[inline(always)]
fn pi_cost(b: &[u8], i: usize, u: &mut Usage, slot: usize) -> Option<usize> {
    let (c, end) = match short_cost(b, i) {
        Some(read) => read,
        None => any_cost(b, i)?,
    };
    u.costs[slot] = c;
    Some(end)
}

/// [`pi_cost`] of a cost written any other way: `None` if it is not
/// money.
#[inline(never)]
fn any_cost(b: &[u8], i: usize) -> Option<(Cost, usize)> {
    let (c, end) = match decimal_at(b, i) {
        Some((c, _, end)) => (c, end),
        None => {
            let n = number(b, i)?;
            (n.cost, n.end)
        }
    };
    c.is_money().then_some((c, end))
}

/// The usage object at `b[i]` if it is written exactly as Pi writes it
/// (its keys in Pi's order, plain counts, costs that are decimals),
/// read with no search: nearly every one is. `None` sends it to
/// [`parse_at`], which reads any usage object.
fn pi_written(b: &[u8], i: usize) -> Option<(Usage, usize)> {
    // Keys compared as arrays of known length, not through memcmp.
    fn lit<const N: usize>(b: &[u8], i: usize, s: &[u8; N]) -> Option<usize> {
        let w: &[u8; N] = b.get(i..i + N)?.try_into().ok()?;
        (w == s).then_some(i + N)
    }
    let mut u = Usage::default();
    let i = lit(b, i, b"{\"input\":")?;
    let (v, i) = pi_count(b, i)?;
    u.input = v;
    let i = lit(b, i, b",\"output\":")?;
    let (v, i) = pi_count(b, i)?;
    u.output = v;
    let i = lit(b, i, b",\"cacheRead\":")?;
    let (v, i) = pi_count(b, i)?;
    u.cache_read = v;
    let i = lit(b, i, b",\"cacheWrite\":")?;
    let (v, i) = pi_count(b, i)?;
    u.cache_write = v;
    let i = lit(b, i, b",\"totalTokens\":")?;
    let (_, i) = pi_count(b, i)?;
    let i = lit(b, i, b",\"cost\":{\"input\":")?;
    let i = pi_cost(b, i, &mut u, 1)?;
    let i = lit(b, i, b",\"output\":")?;
    let i = pi_cost(b, i, &mut u, 2)?;
    let i = lit(b, i, b",\"cacheRead\":")?;
    let i = pi_cost(b, i, &mut u, 3)?;
    let i = lit(b, i, b",\"cacheWrite\":")?;
    let i = pi_cost(b, i, &mut u, 4)?;
    let i = lit(b, i, b",\"total\":")?;
    let i = pi_cost(b, i, &mut u, 0)?;
    let i = lit(b, i, b"}}")?;
    Some((u, i))
}

/// What a value at `b[i]` is worth as a count or a cost, and where it
/// ends: a number, `null` (nothing) or anything else (a fault).
enum Val {
    Num(Num),
    Null,
    Other,
}

fn value(b: &[u8], i: usize) -> Option<(Val, usize)> {
    match *b.get(i)? {
        b'-' | b'0'..=b'9' => {
            let n = number(b, i)?;
            Some((Val::Num(n), n.end))
        }
        b'n' if b[i..].starts_with(b"null") => Some((Val::Null, i + 4)),
        _ => Some((Val::Other, skip_value(b, i)?)),
    }
}

/// The keys of the object at `b[i]`, each handed to `each` with where
/// its value starts; `each` returns where the value ends. Returns where
/// the object ends.
fn object(
    b: &[u8],
    i: usize,
    mut each: impl FnMut(&[u8], usize) -> Option<usize>,
) -> Option<usize> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let close = i + 1 + b[i + 1..].iter().position(|&c| c == b'"' || c == b'\\')?;
        if b[close] == b'\\' {
            return None;
        }
        let key = &b[i + 1..close];
        i = skip_ws(b, close + 1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = each(key, skip_ws(b, i + 1))?;
        i = skip_ws(b, i);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The `usage` object at `b[i]` read in one pass: its counts and costs,
/// or why they cannot be summed (what was read kept), and where it ends.
fn parse_at(b: &[u8], i: usize) -> Option<(Usage, Option<Fault>, usize)> {
    if let Some((u, end)) = pi_written(b, i) {
        return Some((u, None, end));
    }
    parse_any(b, i)
}

/// [`parse_at`] for a usage object written any way.
fn parse_any(b: &[u8], i: usize) -> Option<(Usage, Option<Fault>, usize)> {
    let mut u = Usage::default();
    let mut fault = None;
    let mut total = false;
    let mut costs = false;
    let end = object(b, i, |k, at| {
        let slot = match k {
            b"input" => &mut u.input,
            b"output" => &mut u.output,
            b"cacheRead" => &mut u.cache_read,
            b"cacheWrite" => &mut u.cache_write,
            b"cost" if b.get(at) == Some(&b'{') => {
                costs = true;
                return object(b, at, |k, at| {
                    let slot = match k {
                        b"total" => 0,
                        b"input" => 1,
                        b"output" => 2,
                        b"cacheRead" => 3,
                        b"cacheWrite" => 4,
                        _ => return skip_value(b, at),
                    };
                    let (v, end) = value(b, at)?;
                    match v {
                        Val::Num(n) if n.x.is_finite() && (0.0..=MAX_ENTRY_COST).contains(&n.x) => {
                            u.costs[slot] = n.cost;
                            total |= k == b"total";
                        }
                        Val::Null => {}
                        _ => {
                            total |= k == b"total";
                            fault.get_or_insert(Fault::BadCost);
                        }
                    }
                    Some(end)
                });
            }
            _ => return skip_value(b, at),
        };
        let (v, end) = value(b, at)?;
        match v {
            Val::Num(Num { count: Some(n), .. }) => *slot = n,
            Val::Num(Num { x, .. }) if x >= 0.0 && x.fract() == 0.0 && x < 1e18 => *slot = x as u64,
            Val::Null => {}
            _ => {
                fault.get_or_insert(Fault::BadTokens);
            }
        }
        Some(end)
    })?;
    if !costs || !total {
        fault.get_or_insert(Fault::NoCost);
    }
    // A faulty cost is not money: none of it is kept.
    if matches!(fault, Some(Fault::BadCost | Fault::NoCost)) {
        u.costs = [Cost::ZERO; 5];
    }
    Some((u, fault, end))
}

/// The `usage` object `b` (its bytes, as written) read, or why it cannot
/// be summed; a value that is not an object is an entry without usage.
pub fn parse(b: &[u8]) -> (Usage, Option<Fault>) {
    match parse_at(b, skip_ws(b, 0)) {
        Some((u, f, _)) => (u, f),
        None => (Usage::default(), Some(Fault::NoUsage)),
    }
}

/// Whether a tool result line is Oh My Pi's `task` tool's, whose
/// subagent's usage is in its details: its `toolName`, which Pi and Oh My
/// Pi write among the message's first keys.
pub fn is_task_result(line: &[u8]) -> bool {
    use memchr::memmem::Finder;
    static TASK: std::sync::LazyLock<Finder<'static>> =
        std::sync::LazyLock::new(|| Finder::new(b"\"toolName\":\"task\""));
    TASK.find(&line[..line.len().min(TASK_HEAD)]).is_some()
}

/// How many of a tool result's first bytes [`is_task_result`] looks at.
pub const TASK_HEAD: usize = 384;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_usage_object_is_read_as_pi_writes_it() {
        let (u, f) = parse(
            br#"{"input":12,"output":34,"cacheRead":5,"cacheWrite":6,"totalTokens":57,"cost":{"input":0.1,"output":0.2,"cacheRead":0.01,"cacheWrite":0.02,"total":0.33}}"#,
        );
        assert_eq!(f, None);
        assert_eq!(
            u,
            Usage {
                input: 12,
                output: 34,
                cache_read: 5,
                cache_write: 6,
                // total, input, output, cache read, cache write
                costs: [(33, 2), (1, 1), (2, 1), (1, 2), (2, 2)]
                    .map(|(m, p)| Cost::decimal(m, p).unwrap()),
            }
        );
        assert_eq!(u.tokens(), 57);
        assert_eq!(
            u.costs.map(|c| c.value().to_bits()),
            [0.33, 0.1, 0.2, 0.01, 0.02].map(f64::to_bits)
        );
        // Whitespace, keys in any order, keys it does not know.
        let (v, f) = parse(
            br#"{ "cost" : { "total" : 0.33, "totalFromProvider": true, "output":0.2, "input":0.1, "cacheRead":0.01, "cacheWrite":0.02 }, "reasoning": 3, "cacheWrite":6, "cacheRead":5, "output":34, "input":12 }"#,
        );
        assert_eq!((v, f), (u, None));
    }

    #[test]
    fn costs_that_are_not_money_are_faults_and_kept_out() {
        for (json, fault) in [
            (r#"{"input":1,"output":2}"#, Fault::NoCost),
            (r#"{"input":1,"cost":{"input":0.1}}"#, Fault::NoCost),
            (r#"{"input":1,"cost":{"total":null}}"#, Fault::NoCost),
            (r#"{"input":1,"cost":{"total":-0.5}}"#, Fault::BadCost),
            (r#"{"input":1,"cost":{"total":2e6}}"#, Fault::BadCost),
            (r#"{"input":1,"cost":{"total":"NaN"}}"#, Fault::BadCost),
            (r#"{"input":-1,"cost":{"total":0.5}}"#, Fault::BadTokens),
            (r#"{"input":1.5,"cost":{"total":0.5}}"#, Fault::BadTokens),
            (r#"null"#, Fault::NoUsage),
        ] {
            let (u, f) = parse(json.as_bytes());
            assert_eq!(f, Some(fault), "{json}");
            if fault != Fault::BadTokens {
                assert_eq!(u.cost(), 0.0, "{json}");
            }
        }
        // Read exactly, to the last bit.
        let (u, _) = parse(br#"{"cost":{"total":0.026850000000000002}}"#);
        assert_eq!(u.cost(), 0.026850000000000002);
        // A million is money; the least over it is not, however written.
        for (total, fault) in [
            ("1000000", None),
            ("1000000.0000000000", None),
            ("1e6", None),
            // Rounds to a million.
            ("1000000.00000000001", None),
            ("1000000.0000000001", Some(Fault::BadCost)),
            ("1000000.001", Some(Fault::BadCost)),
            ("1000001", Some(Fault::BadCost)),
            ("10000000000000000000000", Some(Fault::BadCost)),
        ] {
            let json = format!(r#"{{"input":1,"cost":{{"total":{total}}}}}"#);
            let (_, f) = parse(json.as_bytes());
            // As the double read from it says.
            let x: f64 = total.parse().unwrap();
            assert_eq!(x > MAX_ENTRY_COST, fault.is_some(), "{total}");
            assert_eq!(f, fault, "{total}");
            let pi = format!(
                r#"{{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{total}}}}}"#
            );
            assert_eq!(
                pi_written(pi.as_bytes(), 0).is_some(),
                fault.is_none(),
                "{total}"
            );
        }
    }

    #[test]
    fn a_message_s_own_usage_is_found_at_its_end_and_only_there() {
        let with = r#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"x","content":[{"type":"text","text":"a \"usage\":{ b"}],"details":{"usage":{"input":9}},"usage":{"input":1,"cost":{"total":0.5}},"isError":false,"timestamp":1}}"#;
        let path: &[&[u8]] = &[b"message", b"usage"];
        let r = locate(with.as_bytes(), path).unwrap();
        assert_eq!(&with[r], r#"{"input":1,"cost":{"total":0.5}}"#);
        // A usage inside the details only: not the message's.
        let without = r#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"x","content":[],"details":{"usage":{"input":9}},"isError":false,"timestamp":1}}"#;
        assert_eq!(locate(without.as_bytes(), path), None);
        // Oh My Pi's subagent, in the details.
        let details: &[&[u8]] = &[b"message", b"details", b"usage"];
        let r = locate(without.as_bytes(), details).unwrap();
        assert_eq!(&without[r], r#"{"input":9}"#);
        // Far from the end (a long value after it): walked.
        let long = format!(
            r#"{{"type":"message","message":{{"role":"assistant","usage":{{"input":2}},"errorMessage":"{}"}}}}"#,
            "e".repeat(5000)
        );
        let r = locate(long.as_bytes(), path).unwrap();
        assert_eq!(&long[r], r#"{"input":2}"#);
        // An entry's own.
        let entry = r#"{"type":"compaction","id":"c","usage":{"input":3},"systemMessage":{"usage":{"input":4}}}"#;
        let r = locate(entry.as_bytes(), &[b"usage"]).unwrap();
        assert_eq!(&entry[r], r#"{"input":3}"#);
        assert_eq!(locate(b"{}", path), None);
        assert_eq!(locate(b"[1]", path), None);
        // Read from the tail: the message's own, not the details'.
        assert_eq!(read_tail(with.as_bytes()).unwrap().0.input, 1);
        assert_eq!(read_tail(without.as_bytes()), None);
        assert_eq!(read_tail(long.as_bytes()), None);
    }

    #[test]
    fn eight_bytes_are_read_as_the_digits_they_start_with() {
        for (text, n, v) in [
            ("12345678", 8, 12_345_678),
            ("00000001", 8, 1),
            ("0.016361", 1, 0),
            ("2122,\"ca", 4, 2122),
            ("9/999999", 1, 9),
            (":1234567", 0, 0),
            ("\u{ff}9999999", 0, 0),
            ("7\u{fa}999999", 1, 7),
        ] {
            let mut w = [0u8; 8];
            w.copy_from_slice(&text.as_bytes()[..8]);
            assert_eq!(eight_digits(u64::from_le_bytes(w)), (n, v), "{text:?}");
        }
    }

    #[test]
    fn a_number_is_the_double_the_standard_library_reads() {
        // The text, the count it is, the cost it is kept as.
        type Case = (&'static str, Option<u64>, Option<(u64, u8)>);
        let cases: [Case; 20] = [
            ("0", Some(0), Some((0, 0))),
            ("17", Some(17), Some((17, 0))),
            ("0017", Some(17), Some((17, 0))),
            ("18446744073709551615", None, None),
            ("0.1", None, Some((1, 1))),
            ("0.01636185", None, Some((1_636_185, 8))),
            ("3.9e-05", None, Some((39, 6))),
            ("1.5E-7", None, Some((15, 8))),
            ("2e6", None, None),
            ("1.25e+1", None, Some((125, 1))),
            // JavaScript's 17 digits, past 2^53.
            (
                "0.026850000000000002",
                None,
                Some((26_850_000_000_000_002, 18)),
            ),
            (
                "0.0013268999999999998",
                None,
                Some((13_268_999_999_999_998, 19)),
            ),
            ("123456.789012345", None, Some((123_456_789_012_345, 9))),
            (
                "9007199254740993.5",
                None,
                Some((90_071_992_547_409_935, 1)),
            ),
            ("1e-23", None, Some((1, 23))),
            ("1e-28", None, None),
            ("1e-1000", None, None),
            ("4.5e1000", None, None),
            ("-0.5", None, None),
            ("1.", None, None),
        ];
        for (text, count, cost) in cases {
            let b = format!("{text},");
            let n = number(b.as_bytes(), 0).unwrap();
            let exact: f64 = text.parse().unwrap();
            assert_eq!(n.x.to_bits(), exact.to_bits(), "{text}");
            assert_eq!(n.cost.value().to_bits(), exact.to_bits(), "{text}");
            assert_eq!(
                (n.count, n.cost.as_decimal(), n.end),
                (count, cost, text.len()),
                "{text}"
            );
        }
        // Digits of every length, either side of the point.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let whole = seed >> (1 + seed % 63);
            let frac = (seed >> 7) % 10u64.pow((seed % 13) as u32);
            let places = 1 + (seed >> 40) as usize % 12;
            for text in [
                format!("{whole}"),
                format!("{}.{frac:0places$}", whole % 1000),
            ] {
                let b = format!("{text}}}");
                let n = number(b.as_bytes(), 0).unwrap();
                let exact: f64 = text.parse().unwrap();
                assert_eq!(n.x.to_bits(), exact.to_bits(), "{text}");
                assert_eq!(n.cost.value().to_bits(), exact.to_bits(), "{text}");
                assert_eq!(n.end, text.len(), "{text}");
                if !text.contains('.') && text.len() < 20 {
                    assert_eq!(n.count, Some(whole), "{text}");
                }
            }
        }
    }

    #[test]
    fn a_decimal_s_digits_give_the_double_the_standard_library_reads() {
        // Costs as JavaScript writes them: up to 17 significant digits,
        // most of them past 2^53, behind up to ten zeros, or after a
        // whole number.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut long = 0;
        for _ in 0..200_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let digits = 1 + (seed >> 20) as u32 % 17;
            let m = (seed >> 7) % 10u64.pow(digits);
            let text = if seed.is_multiple_of(5) {
                format!("{}.{m}", 1 + (seed >> 30) % 99)
            } else {
                format!("0.{}{m}", "0".repeat((seed >> 50) as usize % 11))
            };
            let b = format!("{text},");
            let (c, plain, end) = decimal_at(b.as_bytes(), 0).unwrap();
            let exact: f64 = text.parse().unwrap();
            assert_eq!(c.value().to_bits(), exact.to_bits(), "{text}");
            assert_eq!((plain, end), (false, text.len()), "{text}");
            long += usize::from(c.as_decimal().unwrap().0 >= 1 << 53);
        }
        assert!(long > 10_000, "{long}");
        // Every number of places, digits at the edges: 2^53 either side,
        // ties between two doubles, the most 19 digits hold.
        let edges = [
            1,
            9,
            (1 << 53) - 1,
            1 << 53,
            (1 << 53) + 1,
            (1 << 54) + 2,
            (1 << 54) + 6,
            9_007_199_254_740_993,
            12_345_678_901_234_567,
            99_999_999_999_999_999,
            1 << 63,
            u64::MAX / 10 * 10,
            9_999_999_999_999_999_999,
            u64::MAX,
        ];
        for m in edges {
            for places in 0..=MAX_PLACES {
                let text = format!("{m}e-{places}");
                let exact: f64 = text.parse().unwrap();
                assert_eq!(ratio(m, places).to_bits(), exact.to_bits(), "{text}");
            }
        }
        // Random digits and places, against the standard library.
        for _ in 0..200_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let m = seed >> (seed % 64);
            let places = (seed >> 58) as u8 % (MAX_PLACES + 1);
            let exact: f64 = format!("{m}e-{places}").parse().unwrap();
            assert_eq!(ratio(m, places).to_bits(), exact.to_bits(), "{m}e-{places}");
        }
    }

    #[test]
    fn a_cost_read_at_once_is_what_decimal_at_reads() {
        let mut seed = 0x5851_f42d_4c95_7f2du64;
        let mut n = 0;
        for _ in 0..50_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let digits = (seed >> 20) as usize % 21;
            let frac: String = (0..digits)
                .map(|k| char::from(b'0' + ((seed >> (k % 60)) % 10) as u8))
                .collect();
            let after = [",", "}", "e-5", "E2", ".5", "-", "+"][(seed >> 3) as usize % 7];
            let text = format!("0.{frac}{after},\"output\":0.5,\"cacheRead\":0");
            let json = format!(
                r#"{{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{{"input":{text}"#
            );
            let b = json.as_bytes();
            let at = json.find("0.").unwrap();
            let slow = decimal_at(b, at).map(|(c, _, end)| (c, end));
            if let Some(fast) = short_cost(b, at) {
                n += 1;
                assert_eq!(Some(fast), slow, "{text}");
                assert!(fast.0.is_money());
            } else if digits > 0 && digits < 16 && matches!(after, "," | "}") {
                panic!("{text}");
            }
        }
        assert!(n > 10_000, "{n}");
        for (text, v) in [
            ("7,", 7),
            ("1234567,", 1_234_567),
            ("12345678,", 12_345_678),
        ] {
            assert_eq!(
                pi_count(format!("{text}\"").as_bytes(), 0),
                Some((v, text.len() - 1))
            );
        }
        assert_eq!(pi_count(b",1", 0), None);
        assert_eq!(pi_count(b"12345678901234567890,", 0), None);
    }

    #[test]
    fn pi_s_own_layout_is_read_as_any_layout_is() {
        let mut n = 0u64;
        for input in [0u64, 7, 1234, 98_765_432] {
            for cost in [
                "0",
                "0.1",
                "0.003",
                "0.026850000000000002",
                "0.0013268999999999998",
                "1.5e-7",
                "1e-28",
                "123456.789012345",
                "0.0000001",
                "999999.99999999999999",
                "1000000.0000000001",
                "2e6",
                "-0.5",
            ] {
                n += 1;
                let json = format!(
                    r#"{{"input":{input},"output":{n},"cacheRead":0,"cacheWrite":3,"totalTokens":9,"cost":{{"input":{cost},"output":0.5,"cacheRead":0,"cacheWrite":0.25,"total":{cost}}}}}"#
                );
                let b = json.as_bytes();
                let any = parse_any(b, 0).unwrap();
                assert_eq!(parse_at(b, 0).unwrap(), any, "{json}");
                if let Some((u, end)) = pi_written(b, 0) {
                    assert_eq!((u, None, end), any, "{json}");
                    let exact: f64 = cost.parse().unwrap();
                    assert_eq!(u.cost().to_bits(), exact.to_bits(), "{json}");
                }
            }
        }
    }

    #[test]
    fn an_entry_is_the_same_entry_in_every_copy_and_no_other() {
        let a = entry_key(Some("ab12cd34"), Some("2026-01-01T00:00:00.000Z"), 5);
        assert_eq!(
            a,
            entry_key(Some("ab12cd34"), Some("2026-01-01T00:00:00.000Z"), 9)
        );
        assert_ne!(
            a,
            entry_key(Some("ab12cd34"), Some("2026-01-01T00:00:00.001Z"), 5)
        );
        assert_ne!(entry_key(None, Some("t"), 1), entry_key(None, Some("t"), 2));
    }
}
