//! One JSON-RPC message from a client, read from a stdio line or an HTTP
//! body, or the error reply JSON-RPC 2.0 asks for when it cannot be read.
//!
//! rmcp drops a line that is not JSON without a word (and replies
//! `-32600` to any other that does not parse), so a client that sent one
//! waits forever. Here every message that is not read gets its error,
//! with the request's id when the line shows one:
//!
//! | the message | reply |
//! |---|---|
//! | not JSON | `-32700` Parse error, id null |
//! | a batch (a JSON array) | `-32600` Invalid Request, id null: MCP has no batches since 2025-06-18 |
//! | JSON whose values cannot be read (`1e309`, a lone surrogate `"\ud800"`, a wrong type) in a request | `-32602` Invalid params, with its id |
//! | JSON that is not a JSON-RPC message | `-32600` Invalid Request |
//! | a request for a method MCP does not have | `-32601` Method not found, with its id (rmcp's own reply quotes the method whole) |
//! | longer than [`MAX_MESSAGE_BYTES`] | `-32600` Invalid Request, id null, the limit in the message |
//!
//! A notification (no id) that cannot be read gets no reply, as JSON-RPC
//! says. Error messages quote no more of what was sent than
//! [`MAX_ERROR_CHARS`] characters.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest};

use crate::search::query::shown;
use serde::Deserialize;
use serde_json::{json, Value};

/// The longest message a client may send, in bytes (a stdio line, an HTTP
/// body). The tools' arguments are small (a query has at most
/// [`crate::search::query::MAX_QUERY_BYTES`]); 4 MiB is rmcp's own limit
/// for an HTTP body, and a message parsed into JSON values costs a few
/// times its size.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Characters of a parser's message in an error reply before it is cut
/// (serde quotes the value it could not read, which may be anything).
pub const MAX_ERROR_CHARS: usize = 300;

/// JSON-RPC's codes.
pub const PARSE_ERROR: i64 = -32700;
/// See [`PARSE_ERROR`].
pub const INVALID_REQUEST: i64 = -32600;
/// See [`PARSE_ERROR`].
pub const INVALID_PARAMS: i64 = -32602;
/// See [`PARSE_ERROR`].
pub const METHOD_NOT_FOUND: i64 = -32601;

/// What was read of a message that did not parse whole.
#[derive(Deserialize)]
struct Probe {
    // Values are skipped unread (`IgnoredAny` reads no number and decodes
    // no escape), so `1e309` and `"\ud800"` pass here.
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
}

/// Read one message, or the error reply (a JSON-RPC error object) when it
/// cannot be read; `Err(None)` for a notification that cannot be read,
/// which gets no reply.
pub fn parse(bytes: &[u8]) -> Result<ClientJsonRpcMessage, Option<Value>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.len() > MAX_MESSAGE_BYTES {
        return Err(Some(too_long(Some(bytes.len()))));
    }
    let e = match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(ClientJsonRpcMessage::Request(r)) => {
            // rmcp's -32601 quotes the method whole, whatever its length.
            if let ClientRequest::CustomRequest(c) = &r.request {
                return Err(Some(error(
                    Some(serde_json::to_value(&r.id).unwrap_or(Value::Null)),
                    METHOD_NOT_FOUND,
                    &format!("Method not found: {}", shown(&c.method)),
                )));
            }
            return Ok(ClientJsonRpcMessage::Request(r));
        }
        Ok(m) => return Ok(m),
        Err(e) => e,
    };
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    // A struct reads from an array too (by position): a batch first.
    let probe = match first {
        Some(b'[') => serde_json::from_slice::<Vec<serde::de::IgnoredAny>>(bytes).map(|_| None),
        _ => serde_json::from_slice::<Probe>(bytes).map(Some),
    };
    match probe {
        Ok(None) => {
            Err(Some(error(
                None,
                INVALID_REQUEST,
                "batches are not supported (MCP has none since 2025-06-18): send each message on its own",
            )))
        }
        Err(p) if p.is_syntax() || p.is_eof() => Err(Some(error(
            None,
            PARSE_ERROR,
            &format!("Parse error: the message is not JSON ({})", cut(&p.to_string())),
        ))),
        Err(_) => Err(Some(error(
            None,
            INVALID_REQUEST,
            "Invalid Request: the message is not a JSON-RPC request or notification object",
        ))),
        Ok(Some(Probe { id: None, .. })) => Err(None),
        Ok(Some(Probe { id: Some(id), method })) => {
            let id = match id {
                Value::Number(_) | Value::String(_) => id,
                _ => Value::Null,
            };
            if method.is_some() && !id.is_null() {
                Err(Some(error(
                    Some(id),
                    INVALID_PARAMS,
                    &format!("Invalid params: {}", cut(&e.to_string())),
                )))
            } else {
                Err(Some(error(
                    Some(id),
                    INVALID_REQUEST,
                    &format!("Invalid Request: {}", cut(&e.to_string())),
                )))
            }
        }
    }
}

/// The reply to a message over [`MAX_MESSAGE_BYTES`]: of `len` bytes,
/// when its length is known.
pub fn too_long(len: Option<usize>) -> Value {
    let size = match len {
        Some(n) => format!("{n} bytes, "),
        None => String::new(),
    };
    error(
        None,
        INVALID_REQUEST,
        &format!(
            "Invalid Request: the message is {size}more than the {MAX_MESSAGE_BYTES} bytes a message may have; it was not read"
        ),
    )
}

/// A JSON-RPC error object.
pub fn error(id: Option<Value>, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null), "error": {"code": code, "message": message}})
}

/// At most [`MAX_ERROR_CHARS`] characters of `s`.
fn cut(s: &str) -> String {
    crate::output::text::ellipsized(s, MAX_ERROR_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        parse(line.as_bytes()).unwrap_err().expect("a reply")
    }

    #[test]
    fn every_unreadable_request_gets_its_error() {
        assert!(parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_ok());
        let r = reply("not json");
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        let r = reply(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":1e309}}}"#,
        );
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(7), json!(-32602))
        );
        let r = reply(
            r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"search","arguments":{"query":"\ud800"}}}"#,
        );
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!("s"), json!(-32602))
        );
        let r = reply(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!(r["error"]["code"], -32600);
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("batches are not supported"));
        let r = reply(r#"{"jsonrpc":"2.0","id":3}"#);
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(3), json!(-32600))
        );
        assert_eq!(reply("[1, 2").get("error").unwrap()["code"], -32700);
        assert_eq!(reply("42")["error"]["code"], -32600);
        let r = reply(&format!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"{}"}}"#,
            "m".repeat(100_000)
        ));
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(8), json!(-32601))
        );
        assert!(r.to_string().len() < 300, "{r}");
    }

    #[test]
    fn an_unreadable_notification_gets_no_reply() {
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"n":1e309}}"#)
                .unwrap_err(),
            None
        );
    }

    #[test]
    fn a_long_value_is_not_echoed_whole() {
        let word = "z".repeat(100_000);
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"search","arguments":{{"query":"{word}\ud800"}}}}}}"#
        );
        let r = reply(&line);
        assert!(r.to_string().len() < 1000, "{r}");
        let r = reply(&format!("{word} not json"));
        assert!(r.to_string().len() < 1000, "{r}");
    }
}
