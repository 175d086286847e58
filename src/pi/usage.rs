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

use simd_json::prelude::*;
use simd_json::tape::{Object, Value};

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
    /// Cost of the input tokens, in dollars.
    pub cost_input: f64,
    /// Cost of the output tokens.
    pub cost_output: f64,
    /// Cost of the cache reads.
    pub cost_cache_read: f64,
    /// Cost of the cache writes.
    pub cost_cache_write: f64,
    /// What the call cost in all (`cost.total`, what Pi sums).
    pub cost: f64,
}

impl Usage {
    /// The tokens Pi counts for a session: the four counts summed.
    pub fn tokens(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
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
}

impl Fault {
    /// As stored in the index.
    pub fn rank(self) -> u64 {
        match self {
            Fault::NoUsage => 1,
            Fault::NoCost => 2,
            Fault::BadCost => 3,
            Fault::BadTokens => 4,
        }
    }

    /// The fault stored as `rank`, if any.
    pub fn from_rank(rank: u64) -> Option<Fault> {
        match rank {
            1 => Some(Fault::NoUsage),
            2 => Some(Fault::NoCost),
            3 => Some(Fault::BadCost),
            4 => Some(Fault::BadTokens),
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
    pub model: String,
    /// The counts and cost (zeros where a fault left them unread).
    pub usage: Usage,
    /// Why it is not summed, if it is not.
    pub fault: Option<Fault>,
}

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

/// `provider/model`, as Pi's breakdown keys a model's usage.
pub fn model_bucket(provider: Option<&str>, model: Option<&str>) -> String {
    [
        provider.filter(|p| !p.is_empty()).unwrap_or("unknown"),
        "/",
        model.filter(|m| !m.is_empty()).unwrap_or("unknown"),
    ]
    .concat()
}

/// A token count: a whole number of 0 or more (as an integer or a float
/// without a fraction).
fn count(v: Option<Value<'_, '_>>) -> Result<u64, Fault> {
    let Some(v) = v else { return Ok(0) };
    if let Some(u) = v.as_u64() {
        return Ok(u);
    }
    match v.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 && f < 1e18 => Ok(f as u64),
        _ if v.is_null() => Ok(0),
        _ => Err(Fault::BadTokens),
    }
}

/// A cost: a finite number of 0 or more, at most [`MAX_ENTRY_COST`].
fn cost(v: Option<Value<'_, '_>>) -> Result<f64, Fault> {
    let Some(v) = v else { return Ok(0.0) };
    match v.cast_f64() {
        Some(f) if f.is_finite() && (0.0..=MAX_ENTRY_COST).contains(&f) => Ok(f),
        Some(_) => Err(Fault::BadCost),
        None if v.is_null() => Ok(0.0),
        None => Err(Fault::BadCost),
    }
}

/// A `usage` object read, or why it cannot be summed (the counts read so
/// far kept).
pub fn read(usage: &Object<'_, '_>) -> (Usage, Option<Fault>) {
    let mut u = Usage::default();
    let mut fault = None;
    let mut note = |f: Fault| {
        fault.get_or_insert(f);
    };
    for (slot, key) in [
        (&mut u.input, "input"),
        (&mut u.output, "output"),
        (&mut u.cache_read, "cacheRead"),
        (&mut u.cache_write, "cacheWrite"),
    ] {
        match count(usage.get(key)) {
            Ok(n) => *slot = n,
            Err(f) => note(f),
        }
    }
    match usage.get("cost").and_then(|c| c.as_object()) {
        None => note(Fault::NoCost),
        Some(c) => {
            if c.get("total").is_none_or(|t| t.is_null()) {
                note(Fault::NoCost);
            }
            for (slot, key) in [
                (&mut u.cost_input, "input"),
                (&mut u.cost_output, "output"),
                (&mut u.cost_cache_read, "cacheRead"),
                (&mut u.cost_cache_write, "cacheWrite"),
                (&mut u.cost, "total"),
            ] {
                match cost(c.get(key)) {
                    Ok(v) => *slot = v,
                    Err(f) => note(f),
                }
            }
        }
    }
    // A faulty cost is not money: none of it is kept.
    if matches!(fault, Some(Fault::BadCost | Fault::NoCost)) {
        u.cost_input = 0.0;
        u.cost_output = 0.0;
        u.cost_cache_read = 0.0;
        u.cost_cache_write = 0.0;
        u.cost = 0.0;
    }
    (u, fault)
}

/// Where, in a tool result line the prefix scan skipped, its own `usage`
/// object lies: Pi writes it after `content` and `details`, before
/// `isError`, `durationMs` and `timestamp`, so it is near the line's end.
/// `None` when the line's last bytes hold no `usage` of the message (the
/// usual case, found without reading the rest of the line).
pub fn tool_result_usage(line: &[u8]) -> Option<std::ops::Range<usize>> {
    const TAIL: usize = 4096;
    const KEY: &[u8] = b"\"usage\":{";
    let from = line.len().saturating_sub(TAIL);
    let at = from + memchr::memmem::rfind(&line[from..], KEY)?;
    let start = at + KEY.len() - 1;
    let end = super::skim::skip_value_at(line, start)?;
    // What follows closes exactly the message and the entry: the key was
    // the message's own, not one inside its details.
    let mut depth = 0i32;
    let mut i = end;
    while i < line.len() {
        match line[i] {
            b'"' => {
                i = super::skim::skip_value_at(line, i)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    (depth == -2).then_some(start..end)
}

/// Whether a line the prefix scan skipped is a tool result that may
/// record usage: its own (found at its end, [`tool_result_usage`]), or,
/// for Oh My Pi's `task` tool, its subagent's in its details (the line is
/// parsed for it).
pub fn tool_result(line: &[u8]) -> Option<bool> {
    let head = &line[..line.len().min(512)];
    memchr::memmem::find(head, b"\"role\":\"toolResult\"")?;
    Some(memchr::memmem::find(head, b"\"toolName\":\"task\"").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pi::entry::LineParser;

    fn read_str(json: &str) -> (Usage, Option<Fault>) {
        LineParser::new()
            .parse(json.as_bytes(), |v| read(&v.as_object().unwrap()))
            .unwrap()
    }

    #[test]
    fn a_usage_object_is_read_as_pi_writes_it() {
        let (u, f) = read_str(
            r#"{"input":12,"output":34,"cacheRead":5,"cacheWrite":6,"totalTokens":57,"cost":{"input":0.1,"output":0.2,"cacheRead":0.01,"cacheWrite":0.02,"total":0.33}}"#,
        );
        assert_eq!(f, None);
        assert_eq!(
            u,
            Usage {
                input: 12,
                output: 34,
                cache_read: 5,
                cache_write: 6,
                cost_input: 0.1,
                cost_output: 0.2,
                cost_cache_read: 0.01,
                cost_cache_write: 0.02,
                cost: 0.33,
            }
        );
        assert_eq!(u.tokens(), 57);
    }

    #[test]
    fn costs_that_are_not_money_are_faults_and_kept_out() {
        for (json, fault) in [
            (r#"{"input":1,"output":2}"#, Fault::NoCost),
            (r#"{"input":1,"cost":{"input":0.1}}"#, Fault::NoCost),
            (r#"{"input":1,"cost":{"total":-0.5}}"#, Fault::BadCost),
            (r#"{"input":1,"cost":{"total":2e6}}"#, Fault::BadCost),
            (r#"{"input":1,"cost":{"total":"NaN"}}"#, Fault::BadCost),
            (r#"{"input":-1,"cost":{"total":0.5}}"#, Fault::BadTokens),
            (r#"{"input":1.5,"cost":{"total":0.5}}"#, Fault::BadTokens),
        ] {
            let (u, f) = read_str(json);
            assert_eq!(f, Some(fault), "{json}");
            if fault != Fault::BadTokens {
                assert_eq!(u.cost, 0.0, "{json}");
            }
        }
    }

    #[test]
    fn a_tool_result_s_own_usage_is_found_at_its_end_and_only_there() {
        let with = r#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"x","content":[{"type":"text","text":"a \"usage\":{ b"}],"details":{"usage":{"input":9}},"usage":{"input":1,"cost":{"total":0.5}},"isError":false,"timestamp":1}}"#;
        let r = tool_result_usage(with.as_bytes()).unwrap();
        assert_eq!(&with[r], r#"{"input":1,"cost":{"total":0.5}}"#);
        // A usage inside the details only: not the message's.
        let without = r#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"x","content":[],"details":{"usage":{"input":9}},"isError":false,"timestamp":1}}"#;
        assert_eq!(tool_result_usage(without.as_bytes()), None);
        assert_eq!(tool_result_usage(b"{}"), None);
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
