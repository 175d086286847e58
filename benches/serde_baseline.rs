//! The baseline a Rust programmer would write first: every line into a
//! `serde_json::Value`, then the same default extraction rules (user and
//! assistant text). Shared by the criterion benches and
//! `examples/serde_extract.rs`, so both measure the same code.

use serde_json::Value;

/// Extract user and assistant text from one session file's bytes the
/// naive way. Returns (documents, text bytes).
pub fn extract(bytes: &[u8]) -> (u64, u64) {
    let mut docs = 0;
    let mut text_bytes = 0;
    let mut lines = bytes.split(|b| *b == b'\n');
    let Some(first) = lines.next() else {
        return (0, 0);
    };
    match serde_json::from_slice::<Value>(first) {
        Ok(h) if h.get("type").and_then(Value::as_str) == Some("session") => {}
        _ => return (0, 0),
    }
    for line in lines {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if v.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        let Some(m) = v.get("message") else { continue };
        let role = m.get("role").and_then(Value::as_str);
        if !matches!(role, Some("user" | "assistant")) {
            continue;
        }
        let text = match m.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => continue,
        };
        let t = text.trim();
        if !t.is_empty() {
            docs += 1;
            text_bytes += t.len() as u64;
        }
    }
    (docs, text_bytes)
}
