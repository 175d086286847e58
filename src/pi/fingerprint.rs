//! The fingerprint: is this file a Pi session? Decided from the header
//! line alone (and the title slot Oh My Pi writes before it), before
//! anything else of the file is read.
//!
//! A Pi session's first line is its header:
//! `{"type":"session","version":3,"id":"…","timestamp":"…","cwd":"…"}`.
//! It must be an object with `type == "session"`, a string `id`, and either
//! a numeric `version` or, for version 1 (which has no `version` key), a
//! string `cwd` and `timestamp`. Everything else, including Codex
//! (`session_meta`), Claude Code and Gemini CLI logs, is rejected.
//!
//! Oh My Pi (since 16.3) writes one line before the header: a fixed-width
//! **title slot**, `{"type":"title","v":1,"title":…,"source"?:…,
//! "updatedAt":…,"pad":"   "}`, which it rewrites in place when the
//! session is renamed. Exactly what its own loader skips is skipped here
//! (`parseTitleSlotLine` in its `session-title-slot.ts`): the file's
//! physical first line (after a byte-order mark), an object with `type`
//! `"title"`, `v` 1, a string `title`, `updatedAt` and `pad`, and a
//! `source` that is absent, `"auto"` or `"user"`. Anything else on that
//! line is the header candidate, judged as above, and a slot must be
//! followed by a header (blank lines between them allowed, as everywhere
//! before a header): a slot and then anything else is rejected.

use std::fmt;
use std::io::{self, Read};

use simd_json::prelude::*;

use super::agent::Agent;
use super::time::parse_iso_millis;

/// The longest header line (or title slot) we are willing to read. A Pi
/// header is a few hundred bytes; a longer line means some other kind of
/// file, and reading it whole would defeat the point of fingerprinting.
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// What the header of an accepted session says.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// The session id (a UUID in practice; any string is legal).
    pub id: String,
    /// Format version: 1 when the header has no `version` key.
    pub version: u64,
    /// Whether the header carried a numeric `version` at all.
    pub has_version: bool,
    /// Session start, epoch milliseconds, when the header's timestamp parses.
    pub started_ms: Option<i64>,
    /// The session's working directory.
    pub cwd: Option<String>,
    /// The parent session file (`parentSession`, or v1 `branchedFrom`).
    pub parent_session: Option<String>,
    /// The model a version-1 header names (`provider/modelId`).
    pub model: Option<String>,
    /// The header's own `title` (Oh My Pi: the session's name in files
    /// without a title slot, and in forks).
    pub title: Option<String>,
    /// Oh My Pi's title slot before the header, when the file has one.
    pub slot: Option<TitleSlot>,
    /// The agent the file itself says wrote it: Oh My Pi when it has a
    /// title slot or a header key only Oh My Pi writes; `None` when it
    /// could be either (see [`super::agent`]).
    pub written_by: Option<Agent>,
}

impl Header {
    /// The session's name before any entry renames it: the title slot's
    /// title when the file has a slot (Oh My Pi shows no name when that
    /// title is empty, whatever the header says), else the header's own
    /// `title`. Blank names are none.
    pub fn name(&self) -> Option<&str> {
        match &self.slot {
            Some(slot) => Some(slot.title.as_str()),
            None => self.title.as_deref(),
        }
        .filter(|n| !n.trim().is_empty())
    }
}

/// Oh My Pi's title slot: the first line of its session files since 16.3,
/// before the header, 256 bytes wide, rewritten in place when the session
/// is named or renamed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TitleSlot {
    /// The session's current title (empty: none).
    pub title: String,
    /// Where the slot's line ends (just past its `\n`, a byte-order mark
    /// before it included): the bytes a rename rewrites in place, which
    /// an incremental build does not count as a change of the file (see
    /// [`crate::index::state`]).
    pub end: u64,
}

/// Why a file is not a Pi session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The file has no non-empty line.
    Empty,
    /// The header's line is still being written (no newline yet).
    Incomplete,
    /// The header's line is longer than [`MAX_HEADER_BYTES`].
    TooLong,
    /// The first line is not a JSON object.
    NotJson,
    /// The first line is JSON, but not a Pi session header; the string says
    /// what was found instead (for example `type "session_meta"`).
    NotPi(String),
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Empty => f.write_str("empty file"),
            Rejection::Incomplete => f.write_str("first line not complete yet"),
            Rejection::TooLong => write!(f, "first line longer than {MAX_HEADER_BYTES} bytes"),
            Rejection::NotJson => f.write_str("first line is not a JSON object"),
            Rejection::NotPi(why) => write!(f, "not a Pi session header ({why})"),
        }
    }
}

/// The header's line of a file, as read by [`read_header`] (or the first
/// non-empty line, as read by [`read_first_line`]).
#[derive(Debug)]
pub struct FirstLine {
    /// The line's bytes, without BOM, line terminator or surrounding blanks.
    pub bytes: Vec<u8>,
    /// 1-based number of that line.
    pub number: u64,
    /// Offset just past the line's `\n`: where the entries begin.
    pub end: u64,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The lines at the start of a file, read in small blocks: never more
/// than [`MAX_HEADER_BYTES`] plus one block past the line asked for, so a
/// multi-gigabyte file that is not a session costs one small read.
struct Head<'r, R> {
    reader: &'r mut R,
    buf: Vec<u8>,
    /// Where the next line starts in `buf` (and in the file: `buf` holds
    /// the file from its first byte).
    line_start: usize,
    /// How far `buf` has been searched for a newline.
    scanned: usize,
    /// The number of the line starting at `line_start`.
    number: u64,
}

impl<'r, R: Read> Head<'r, R> {
    fn new(reader: &'r mut R) -> Self {
        Head {
            reader,
            buf: Vec::with_capacity(4096),
            line_start: 0,
            scanned: 0,
            number: 1,
        }
    }

    /// The next line that is not blank (its BOM left out when it is the
    /// file's first), or why there is none.
    fn next_non_empty(&mut self) -> io::Result<Result<FirstLine, Rejection>> {
        let mut block = [0u8; 4096];
        loop {
            while let Some(i) = memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                let end = self.scanned + i;
                let mut line = &self.buf[self.line_start..end];
                if self.line_start == 0 {
                    line = line.strip_prefix(BOM).unwrap_or(line);
                }
                let trimmed = line.trim_ascii();
                let number = self.number;
                self.number += 1;
                self.scanned = end + 1;
                self.line_start = self.scanned;
                if !trimmed.is_empty() {
                    return Ok(Ok(FirstLine {
                        bytes: trimmed.to_vec(),
                        number,
                        end: end as u64 + 1,
                    }));
                }
            }
            self.scanned = self.buf.len();
            if self.buf.len() - self.line_start > MAX_HEADER_BYTES {
                return Ok(Err(Rejection::TooLong));
            }
            let n = loop {
                match self.reader.read(&mut block) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                let mut rest = &self.buf[self.line_start..];
                if self.line_start == 0 {
                    rest = rest.strip_prefix(BOM).unwrap_or(rest);
                }
                return Ok(Err(if rest.trim_ascii().is_empty() {
                    Rejection::Empty
                } else {
                    Rejection::Incomplete
                }));
            }
            self.buf.extend_from_slice(&block[..n]);
        }
    }
}

/// Read just enough of `reader` to find its first non-empty line.
/// Reads in small blocks and never more than [`MAX_HEADER_BYTES`] plus one
/// block, so a multi-gigabyte non-Pi file costs one small read.
pub fn read_first_line(reader: &mut impl Read) -> io::Result<Result<FirstLine, Rejection>> {
    Head::new(reader).next_non_empty()
}

/// Read the start of `reader` and fingerprint it: the header of a Pi
/// session (with Oh My Pi's title slot before it, when the file has one),
/// with the line it came from, or why the file is not one. Reads no more
/// than [`read_first_line`] does past the header's line.
pub fn read_header(reader: &mut impl Read) -> io::Result<Result<(FirstLine, Header), Rejection>> {
    let mut head = Head::new(reader);
    let first = match head.next_non_empty()? {
        Ok(first) => first,
        Err(r) => return Ok(Err(r)),
    };
    // Only the file's physical first line can be a slot: Oh My Pi reads
    // nothing else as one.
    let title = (first.number == 1)
        .then(|| title_slot(&first.bytes))
        .flatten();
    let Some(title) = title else {
        return Ok(fingerprint(&first.bytes).map(|header| (first, header)));
    };
    let slot = TitleSlot {
        title,
        end: first.end,
    };
    let line = match head.next_non_empty()? {
        Ok(line) => line,
        Err(Rejection::Empty) => {
            return Ok(Err(Rejection::NotPi(
                "an Oh My Pi title slot, and no session header after it".into(),
            )))
        }
        Err(r) => return Ok(Err(r)),
    };
    Ok(match fingerprint(&line.bytes) {
        Ok(mut header) => {
            header.slot = Some(slot);
            header.written_by = Some(Agent::Omp);
            Ok((line, header))
        }
        Err(Rejection::NotPi(why)) => Err(Rejection::NotPi(format!(
            "an Oh My Pi title slot, then {why}"
        ))),
        Err(Rejection::NotJson) => Err(Rejection::NotPi(
            "an Oh My Pi title slot, then a line that is not a JSON object".into(),
        )),
        Err(r) => Err(r),
    })
}

/// The title of an Oh My Pi title slot, when `line` is one, exactly as
/// its loader decides (`parseTitleSlotObject` in `session-title-slot.ts`):
/// an object with `type` `"title"`, `v` equal to 1, string `title`,
/// `updatedAt` and `pad`, and a `source` that is absent or one of `"auto"`
/// and `"user"` (`null` is neither).
pub fn title_slot(line: &[u8]) -> Option<String> {
    if line.first() != Some(&b'{') {
        return None;
    }
    let mut copy = line.to_vec();
    let tape = simd_json::to_tape(&mut copy).ok()?;
    let value = tape.as_value();
    let obj = value.as_object()?;
    let str_of = |k: &str| obj.get(k).and_then(|v| v.into_string());
    if str_of("type") != Some("title") {
        return None;
    }
    let v = obj.get("v")?;
    let one = v.as_u64() == Some(1) || v.as_i64() == Some(1) || v.as_f64() == Some(1.0);
    if !one || str_of("updatedAt").is_none() || str_of("pad").is_none() {
        return None;
    }
    match obj.get("source") {
        None => {}
        Some(s) if matches!(s.into_string(), Some("auto" | "user")) => {}
        Some(_) => return None,
    }
    str_of("title").map(str::to_owned)
}

/// Header keys only Oh My Pi writes (`SessionHeader` in its
/// `session-entries.ts`): a header with one of them is Oh My Pi's.
const OMP_HEADER_KEYS: [&str; 5] = [
    "title",
    "titleSource",
    "additionalDirectories",
    "previousSessionFiles",
    "providerPromptCacheKey",
];

/// Decide from a header line whether the file is a Pi session, and read
/// its header if it is.
pub fn fingerprint(first_line: &[u8]) -> Result<Header, Rejection> {
    if first_line.first() != Some(&b'{') {
        return Err(Rejection::NotJson);
    }
    let mut copy = first_line.to_vec();
    let tape = simd_json::to_tape(&mut copy).map_err(|_| Rejection::NotJson)?;
    let value = tape.as_value();
    let Some(obj) = value.as_object() else {
        return Err(Rejection::NotJson);
    };
    let str_of = |k: &str| obj.get(k).and_then(|v| v.into_string());
    match str_of("type") {
        Some("session") => {}
        Some(other) => return Err(Rejection::NotPi(format!("type {other:?}"))),
        None => return Err(Rejection::NotPi("no type".into())),
    }
    let Some(id) = str_of("id") else {
        return Err(Rejection::NotPi("no string id".into()));
    };
    let version = obj.get("version");
    let (version, has_version) = match version {
        Some(v) if v.is_number() => {
            let n = v
                .as_u64()
                .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
                .unwrap_or(1);
            (n, true)
        }
        Some(_) => return Err(Rejection::NotPi("version is not a number".into())),
        None => {
            if str_of("cwd").is_none() || str_of("timestamp").is_none() {
                return Err(Rejection::NotPi(
                    "no version, and no cwd and timestamp".into(),
                ));
            }
            (1, false)
        }
    };
    let model = match (str_of("provider"), str_of("modelId")) {
        (Some(p), Some(m)) => Some(format!("{p}/{m}")),
        (None, Some(m)) => Some(m.to_owned()),
        _ => None,
    };
    let omp = OMP_HEADER_KEYS.iter().any(|k| obj.get(k).is_some());
    Ok(Header {
        id: id.to_owned(),
        version,
        has_version,
        started_ms: str_of("timestamp").and_then(parse_iso_millis),
        cwd: str_of("cwd").map(str::to_owned),
        parent_session: str_of("parentSession")
            .or_else(|| str_of("branchedFrom"))
            .map(str::to_owned),
        model,
        title: str_of("title").map(str::to_owned),
        slot: None,
        written_by: omp.then_some(Agent::Omp),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(data: &[u8]) -> Result<FirstLine, Rejection> {
        read_first_line(&mut &data[..]).unwrap()
    }

    #[test]
    fn header_versions() {
        let h = fingerprint(br#"{"type":"session","version":3,"id":"a","timestamp":"2026-04-02T23:48:11.257Z","cwd":"/p"}"#).unwrap();
        assert_eq!((h.version, h.has_version), (3, true));
        assert_eq!(h.cwd.as_deref(), Some("/p"));
        let h = fingerprint(
            br#"{"type":"session","id":"a","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","provider":"anthropic","modelId":"claude"}"#,
        )
        .unwrap();
        assert_eq!((h.version, h.has_version), (1, false));
        assert_eq!(h.model.as_deref(), Some("anthropic/claude"));
    }

    #[test]
    fn decoys_are_rejected() {
        for line in [
            &br#"{"type":"session_meta","payload":{}}"#[..],
            br#"{"type":"user","message":{}}"#,
            br#"{"type":"session","id":"a"}"#,
            br#"{"type":"session","id":7,"version":3}"#,
            br#"{"type":"session_metadata"}"#,
            br#"[{"type":"session"}]"#,
            b"\x00\x01binary",
            br#"{"type":"session","id":"a","version":"3"}"#,
        ] {
            assert!(
                fingerprint(line).is_err(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn first_line_skips_bom_and_blank_lines() {
        let l = first(b"\xEF\xBB\xBF\n  \r\n{\"a\":1}\r\nrest").unwrap();
        assert_eq!(l.bytes, b"{\"a\":1}");
        assert_eq!(l.number, 3);
        assert_eq!(l.end, 17);
        assert_eq!(first(b"").unwrap_err(), Rejection::Empty);
        assert_eq!(first(b"\n\n").unwrap_err(), Rejection::Empty);
        assert_eq!(first(b"{\"half").unwrap_err(), Rejection::Incomplete);
        let long = vec![b'x'; MAX_HEADER_BYTES + 10_000];
        assert_eq!(first(&long).unwrap_err(), Rejection::TooLong);
    }

    /// A slot line as Oh My Pi writes it: 256 bytes with its newline.
    fn slot(fields: &str) -> String {
        let unpadded = format!(
            r#"{{"type":"title","v":1,{fields},"updatedAt":"2026-07-01T10:00:00.000Z","pad":""}}"#
        );
        let pad = 255 - unpadded.len();
        let line = unpadded.replace(r#""pad":"""#, &format!(r#""pad":"{}""#, " ".repeat(pad)));
        assert_eq!(line.len(), 255);
        line + "\n"
    }

    const HEADER: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-07-01T10:00:00.000Z\",\"cwd\":\"/p\"}\n";

    #[test]
    fn an_omp_title_slot_before_the_header_is_skipped_and_read() {
        let file = slot(r#""title":"Fix the socket","source":"user""#)
            + HEADER
            + "{\"type\":\"message\"}\n";
        let (line, header) = read_header(&mut file.as_bytes()).unwrap().unwrap();
        assert_eq!((line.number, line.end), (2, 256 + HEADER.len() as u64));
        assert_eq!(header.id, "s1");
        let slot_read = header.slot.clone().unwrap();
        assert_eq!(
            (slot_read.title.as_str(), slot_read.end),
            ("Fix the socket", 256)
        );
        assert_eq!(header.written_by, Some(Agent::Omp));
        assert_eq!(header.name(), Some("Fix the socket"));
        // An empty title is no name, whatever the header says; blank
        // lines may lie between slot and header; no `source` is fine.
        let file = slot(r#""title":"""#)
            + "\n  \n"
            + &HEADER.replace("\"cwd\"", "\"title\":\"old\",\"cwd\"");
        let (line, header) = read_header(&mut file.as_bytes()).unwrap().unwrap();
        assert_eq!(line.number, 4);
        assert_eq!(header.title.as_deref(), Some("old"));
        assert_eq!(header.name(), None);
        // Without a slot, the header's own title (older Oh My Pi files).
        let header = fingerprint(
            HEADER
                .replace("\"cwd\"", "\"title\":\"old\",\"cwd\"")
                .trim()
                .as_bytes(),
        )
        .unwrap();
        assert_eq!(
            (header.name(), header.written_by),
            (Some("old"), Some(Agent::Omp))
        );
        let header = fingerprint(HEADER.trim().as_bytes()).unwrap();
        assert_eq!((header.name(), header.written_by), (None, None));
    }

    #[test]
    fn only_what_omp_reads_as_a_slot_is_skipped() {
        let reject = |file: String| match read_header(&mut file.as_bytes()).unwrap() {
            Err(r) => r.to_string(),
            Ok((_, h)) => panic!("accepted {file:?}: {h:?}"),
        };
        // A slot with no header after it: the decoy.
        let msg = "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n";
        assert_eq!(
            reject(slot(r#""title":"t""#) + msg),
            "not a Pi session header (an Oh My Pi title slot, then type \"message\")"
        );
        assert_eq!(
            reject(slot(r#""title":"t""#)),
            "not a Pi session header (an Oh My Pi title slot, and no session header after it)"
        );
        assert_eq!(
            reject(slot(r#""title":"t""#) + "not json\n"),
            "not a Pi session header (an Oh My Pi title slot, then a line that is not a JSON object)"
        );
        assert_eq!(
            read_header(&mut (slot(r#""title":"t""#) + "{\"type\":\"sess").as_bytes())
                .unwrap()
                .unwrap_err(),
            Rejection::Incomplete
        );
        // Not a slot to Oh My Pi: another version, a source it does not
        // know (null included), a missing pad or updatedAt, a number for a
        // title; and a slot that is not the file's first line, or a second
        // slot. Each is then the header candidate, and rejected.
        for bad in [
            slot(r#""title":"t""#).replace("\"v\":1", "\"v\":2"),
            slot(r#""title":"t","source":"bot""#),
            slot(r#""title":"t","source":null"#),
            slot(r#""title":"t""#).replace(",\"pad\":", ",\"padding\":"),
            slot(r#""title":"t""#).replace("\"updatedAt\"", "\"updated\""),
            slot(r#""title":7"#),
            "\n".to_owned() + &slot(r#""title":"t""#),
            slot(r#""title":"t""#) + &slot(r#""title":"u""#),
        ] {
            let why = reject(bad.clone() + HEADER);
            assert!(why.contains("type \"title\""), "{bad:?}: {why}");
        }
        // `v` written as 1.0 is 1 to JavaScript; a BOM before the slot is
        // left out as before a header.
        let f = slot(r#""title":"t""#).replace("\"v\":1,", "\"v\":1.0,");
        assert!(read_header(&mut (f + HEADER).as_bytes()).unwrap().is_ok());
        let f = "\u{feff}".to_owned() + &slot(r#""title":"t""#) + HEADER;
        let (line, header) = read_header(&mut f.as_bytes()).unwrap().unwrap();
        assert_eq!((line.number, header.slot.unwrap().end), (2, 259));
    }

    #[test]
    fn read_header_gives_the_line_and_its_header_or_the_rejection() {
        let file = b"\n{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-04-02T23:48:11.257Z\",\"cwd\":\"/p\"}\n{\"type\":\"message\"}\n";
        let (line, header) = read_header(&mut &file[..]).unwrap().unwrap();
        assert_eq!((line.number, line.end), (2, 92));
        assert_eq!((header.id.as_str(), header.version), ("s1", 3));
        let decoy = b"{\"type\":\"session_meta\",\"payload\":{}}\n";
        assert!(matches!(
            read_header(&mut &decoy[..]).unwrap(),
            Err(Rejection::NotPi(_))
        ));
        assert_eq!(
            read_header(&mut &b"{\"half"[..]).unwrap().unwrap_err(),
            Rejection::Incomplete
        );
    }
}
