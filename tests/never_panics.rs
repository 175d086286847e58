//! Property tests: no byte string makes the format stages panic. Each stage
//! is fed arbitrary bytes and bytes shaped like Pi lines with damage.

use pi_index::pi::entry::{peek, peek_links, LineParser};
use pi_index::pi::fingerprint::{fingerprint, read_first_line};
use pi_index::pi::skim::reduce_into;
use pi_index::pi::{ChunkParser, Kinds, Session};
use proptest::prelude::*;

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"p","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// Pi-like lines, then cut, spliced and sprinkled with bytes.
fn damaged_lines() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        Just(r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi \"there\"\n","timestamp":1}}"#.to_owned()),
        Just(r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"ok"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"ls \\\"x\\\""}}],"usage":{"input":1},"provider":"p","model":"m"}}"#.to_owned()),
        Just(r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"out"}]}}"#.to_owned()),
        Just(r#"{"type":"session_info","id":"a4","parentId":"a3","name":"n"}"#.to_owned()),
        Just(r#"{"type":"compaction","id":"a5","parentId":"a4","summary":"s","firstKeptEntryId":"a1","tokensBefore":3}"#.to_owned()),
        Just(r#"{"type":"model_change","id":"a6","parentId":"a5","provider":"p","modelId":"m"}"#.to_owned()),
    ];
    (
        prop::collection::vec((line, any::<u16>(), any::<u8>(), any::<bool>()), 0..12),
        prop::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(lines, noise)| {
            let mut out = Vec::new();
            for (i, (l, cut, byte, mangle)) in lines.into_iter().enumerate() {
                let mut b = l.into_bytes();
                if mangle {
                    let at = cut as usize % (b.len() + 1);
                    b.truncate(at);
                    b.push(byte);
                    if let Some(&n) = noise.get(i) {
                        b.push(n);
                    }
                }
                out.extend_from_slice(&b);
                out.push(b'\n');
            }
            out
        })
}

fn run_all(bytes: &[u8]) {
    let _ = fingerprint(bytes);
    let _ = read_first_line(&mut &bytes[..]);
    for kinds in [Kinds::default(), Kinds::ALL] {
        let _ = peek(bytes, kinds, true);
        let _ = peek(bytes, kinds, false);
        let mut out = Vec::new();
        let _ = reduce_into(bytes, kinds, &mut out, &mut None);
        let mut p = LineParser::new();
        let _ = p.parse(bytes, |_| ());
        let _ = p.parse_lossy(bytes, |_| ());
        let _ = p.parse_skimmed(bytes, kinds, |_, _| ());
    }
    let _ = peek_links(bytes, true);
    let header = fingerprint(HEADER.as_bytes()).unwrap();
    for version in [1, 3] {
        let mut h = header.clone();
        h.version = version;
        let mut p = ChunkParser::new();
        let chunk = p.parse_chunk(bytes, 0, version, Kinds::ALL);
        let links = p.parse_links(bytes, 0, version);
        let s = Session::finish(h.clone(), vec![chunk], 2);
        assert!(s.documents.iter().all(|d| !d.text.is_empty()));
        let chunk = p.parse_chunk(bytes, 0, version, Kinds::default());
        let _ = Session::finish_grown(h, vec![links], vec![chunk], 2);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        run_all(&bytes);
    }

    #[test]
    fn damaged_pi_lines_never_panic(bytes in damaged_lines()) {
        run_all(&bytes);
    }
}
