//! Fuzz the line parser and extractor: any bytes, as a session body after a
//! valid header, through every stage that reads untrusted lines. The first
//! input byte picks the version and kinds, so both tree and linear
//! sessions, and every opt-in kind, are explored.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_index::pi::entry::{peek, peek_links, LineParser};
use pi_index::pi::fingerprint::{fingerprint, read_first_line};
use pi_index::pi::skim::reduce_into;
use pi_index::pi::{ChunkParser, Kinds, Session};

const HEADER: &[u8] = br#"{"type":"session","version":3,"id":"f","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/f"}"#;

fuzz_target!(|data: &[u8]| {
    let (mode, body) = data.split_first().unwrap_or((&0, &[]));
    let version = if mode & 1 == 0 { 3 } else { 1 };
    let kinds = if mode & 2 == 0 { Kinds::default() } else { Kinds::ALL };

    let _ = fingerprint(body);
    let _ = read_first_line(&mut &body[..]);
    let _ = peek(body, kinds, version >= 2);
    let _ = peek_links(body, version >= 2);
    let mut out = Vec::new();
    let _ = reduce_into(body, kinds, &mut out);
    let mut p = LineParser::new();
    let _ = p.parse_skimmed(body, kinds, |_| ());
    let _ = p.parse_lossy(body, |_| ());

    let mut header = fingerprint(HEADER).expect("valid header");
    header.version = version;
    let mut parser = ChunkParser::new();
    let split = body.len() / 2;
    let cut = memchr_last_newline(&body[..split]);
    let chunk = parser.parse_chunk(body, 0, version, kinds);
    let session = Session::finish(header.clone(), vec![chunk], 2);
    for d in &session.documents {
        assert!(!d.text.is_empty() && d.text.trim() == d.text);
    }
    // The same bytes read as an old part and an appended part.
    let old = parser.parse_links(&body[..cut], 0, version);
    let new = parser.parse_chunk(&body[cut..], cut as u64, version, kinds);
    let _ = Session::finish_grown(header, vec![old], vec![new], 2);
});

fn memchr_last_newline(b: &[u8]) -> usize {
    b.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1)
}
