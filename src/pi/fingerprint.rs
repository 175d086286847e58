//! The fingerprint: is this file a Pi session? Decided from the first
//! non-empty line alone, before anything else of the file is read.
//!
//! A Pi session's first line is its header:
//! `{"type":"session","version":3,"id":"…","timestamp":"…","cwd":"…"}`.
//! It must be an object with `type == "session"`, a string `id`, and either
//! a numeric `version` or, for version 1 (which has no `version` key), a
//! string `cwd` and `timestamp`. Everything else, including Codex
//! (`session_meta`), Claude Code and Gemini CLI logs, is rejected.

use std::fmt;
use std::io::{self, Read};

use simd_json::prelude::*;

use super::time::parse_iso_millis;

/// The longest first line we are willing to read. A Pi header is a few
/// hundred bytes; a longer first line means some other kind of file, and
/// reading it whole would defeat the point of fingerprinting.
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
}

/// Why a file is not a Pi session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The file has no non-empty line.
    Empty,
    /// The first non-empty line is still being written (no newline yet).
    Incomplete,
    /// The first line is longer than [`MAX_HEADER_BYTES`].
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

/// The first non-empty line of a file, as read by [`read_first_line`].
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

/// Read just enough of `reader` to find its first non-empty line.
/// Reads in small blocks and never more than [`MAX_HEADER_BYTES`] plus one
/// block, so a multi-gigabyte non-Pi file costs one small read.
pub fn read_first_line(reader: &mut impl Read) -> io::Result<Result<FirstLine, Rejection>> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut block = [0u8; 4096];
    let mut scanned = 0;
    let mut line_start = 0;
    let mut number = 1;
    let mut bom_checked = false;
    loop {
        // Look for complete lines in what we have.
        while let Some(i) = memchr::memchr(b'\n', &buf[scanned..]) {
            let end = scanned + i;
            let mut line = &buf[line_start..end];
            if !bom_checked {
                line = line.strip_prefix(BOM).unwrap_or(line);
                bom_checked = true;
            }
            let trimmed = line.trim_ascii();
            if !trimmed.is_empty() {
                return Ok(Ok(FirstLine {
                    bytes: trimmed.to_vec(),
                    number,
                    end: end as u64 + 1,
                }));
            }
            number += 1;
            scanned = end + 1;
            line_start = scanned;
        }
        scanned = buf.len();
        if buf.len() - line_start > MAX_HEADER_BYTES {
            return Ok(Err(Rejection::TooLong));
        }
        let n = loop {
            match reader.read(&mut block) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if n == 0 {
            let rest = buf[line_start..]
                .strip_prefix(BOM)
                .unwrap_or(&buf[line_start..]);
            return Ok(Err(if rest.trim_ascii().is_empty() {
                Rejection::Empty
            } else {
                Rejection::Incomplete
            }));
        }
        buf.extend_from_slice(&block[..n]);
    }
}

/// Read the first line of `reader` and fingerprint it: the header of a Pi
/// session, with the line it came from, or why the file is not one. Reads
/// no more than [`read_first_line`] does.
pub fn read_header(reader: &mut impl Read) -> io::Result<Result<(FirstLine, Header), Rejection>> {
    Ok(read_first_line(reader)?
        .and_then(|first| fingerprint(&first.bytes).map(|header| (first, header))))
}

/// Decide from a first line whether the file is a Pi session, and read its
/// header if it is.
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
