//! From entries to documents: exactly what the format page says a person
//! reads as the conversation, plus the opt-in kinds. One parsed line in,
//! its documents, tree link and session facts (model changes, names) out,
//! into the chunk's [`ParsedChunk`].

use simd_json::prelude::*;
use simd_json::tape::{Array, Object, Value};

use super::entry::role_is_indexed;
use super::parsed::{EditEntry, LineCtx, ParsedChunk, NO_LINK};
use super::time::parse_iso_millis;
use super::Role;

/// Typed lookups on a tape object (the tape `Value` has them, `Object`
/// does not).
trait ObjExt<'i> {
    fn get_str(&self, k: &str) -> Option<&'i str>;
    fn get_bool(&self, k: &str) -> Option<bool>;
}

impl<'i> ObjExt<'i> for Object<'_, 'i> {
    #[inline]
    fn get_str(&self, k: &str) -> Option<&'i str> {
        self.get(k)?.into_string()
    }
    #[inline]
    fn get_bool(&self, k: &str) -> Option<bool> {
        self.get(k)?.as_bool()
    }
}

/// The fields of an entry that every document of it shares.
pub(super) struct EntryMeta<'a> {
    pub(super) id: Option<&'a str>,
    pub(super) timestamp_ms: Option<i64>,
    pub(super) model: Option<ModelName<'a>>,
}

/// Extract everything from one parsed line into `out`.
pub(super) fn extract_line(
    root: Value<'_, '_>,
    ctx: &LineCtx,
    scratch: &mut String,
    out: &mut ParsedChunk,
) {
    let Some(obj) = root.as_object() else { return };
    let mut ty = None;
    let mut id = None;
    let mut parent = None;
    let mut ts = None;
    let mut message = None;
    for (k, v) in obj.iter() {
        match k {
            "type" if ty.is_none() => ty = v.into_string(),
            "id" if id.is_none() => id = v.into_string(),
            "parentId" if parent.is_none() => parent = v.into_string(),
            "timestamp" if ts.is_none() => ts = v.into_string(),
            "message" if message.is_none() => message = v.as_object(),
            _ => {}
        }
    }
    // Objects without a type, and repeated headers, are not entries.
    let Some(ty) = ty else { return };
    if ty == "session" {
        return;
    }
    let link = if ctx.recovered {
        NO_LINK
    } else {
        out.push_link(id, parent, ctx.offset)
    };
    let mut meta = EntryMeta {
        id,
        timestamp_ms: ts.and_then(parse_iso_millis),
        model: None,
    };
    // What the entry spent: kept whatever the kinds (and off the tree
    // too: a repaired line was paid for).
    if !ctx.links_only {
        record_usage(&obj, ty, message.as_ref(), id, ts, &meta, ctx, out);
    }
    match ty {
        "message" => {
            if let Some(m) = message {
                extract_message(&m, ctx, link, &mut meta, scratch, out);
            }
        }
        "model_change" => {
            // Pi: `provider` and `modelId`. Oh My Pi (and Pi's version 1):
            // one `model` string, `provider/id`; Oh My Pi's `role` names
            // which model slot changed, and only its default one (no role)
            // is the conversation's model.
            if let Some(model) = ModelName::new(obj.get_str("provider"), obj.get_str("modelId")) {
                out.model_changes.push((ctx.line, model.joined()));
            } else if let Some(model) = obj.get_str("model").filter(|m| !m.is_empty()) {
                if matches!(obj.get_str("role"), None | Some("default")) {
                    out.model_changes.push((ctx.line, model.to_owned()));
                }
            }
        }
        // Oh My Pi: a subagent session's initial context (its system
        // prompt, task and tools), a system prompt like Pi's `system`
        // messages.
        "session_init" if ctx.kinds.system => {
            scratch.clear();
            scratch.push_str(obj.get_str("systemPrompt").unwrap_or(""));
            if let Some(task) = obj.get_str("task") {
                scratch.push('\n');
                scratch.push_str(task);
            }
            if let Some(tools) = obj.get("tools").and_then(|t| t.as_array()) {
                for tool in tools.iter().filter_map(|t| t.into_string()) {
                    scratch.push('\n');
                    scratch.push_str(tool);
                }
            }
            out.push_doc(ctx, link, Role::System, &meta, scratch);
        }
        "session_info" => {
            let name = obj.get_str("name").filter(|n| !n.trim().is_empty());
            out.names.push((ctx.line, name.map(str::to_owned)));
        }
        "compaction" | "branch_summary" => {
            if let Some(s) = obj.get_str("summary") {
                out.push_doc(ctx, link, Role::Summary, &meta, s);
            }
        }
        "context_edit" if link != NO_LINK => {
            // Pi applies the latest edit per target along the active
            // branch; which one that is is known once the file is.
            if let Some(target) = obj.get_str("targetId") {
                let replacement = match obj.get("replacement") {
                    Some(r) if r.as_object().is_some() => {
                        let r = r.as_object().expect("an object");
                        match r.get("content") {
                            Some(content) => content_text(content, scratch),
                            None => scratch.clear(),
                        }
                        Some(scratch.trim().to_owned())
                    }
                    _ => None,
                };
                let target = out.span(target);
                out.edits.push(EditEntry {
                    link,
                    target,
                    replacement,
                });
            }
        }
        "custom_message" if ctx.kinds.custom => {
            if let Some(content) = obj.get("content") {
                content_text(content, scratch);
                out.push_doc(ctx, link, Role::Custom, &meta, scratch);
            }
        }
        _ => {}
    }
}

/// Whether `entry` records usage (see [`super::usage`]): then what to
/// read of it is left in `out` for the loop, which has the line's bytes.
#[allow(clippy::too_many_arguments)]
fn record_usage(
    entry: &Object<'_, '_>,
    ty: &str,
    message: Option<&Object<'_, '_>>,
    id: Option<&str>,
    ts: Option<&str>,
    meta: &EntryMeta<'_>,
    ctx: &LineCtx,
    out: &mut ParsedChunk,
) {
    use super::usage::{self, Source, UsageEntry, Wanted};
    let has = |o: &Object<'_, '_>, k: &str| o.get(k).is_some();
    let (source, model, path, required) = match (ty, message) {
        ("message", Some(m)) => {
            // One pass over the message's keys.
            let (mut role, mut provider, mut model, mut answered, mut tool) =
                (None, None, None, None, None);
            let (mut has_usage, mut details) = (false, None);
            for (k, v) in m.iter() {
                match k {
                    "role" => role = v.into_string(),
                    "provider" => provider = v.into_string(),
                    "model" => model = v.into_string(),
                    "responseModel" => answered = v.into_string(),
                    "toolName" => tool = v.into_string(),
                    "usage" => has_usage = true,
                    "details" => details = v.as_object(),
                    _ => {}
                }
            }
            match role {
                Some("assistant") => (
                    Source::Assistant,
                    usage::model_bucket(&mut out.usage_bucket, provider, answered.or(model)),
                    usage::MESSAGE_USAGE,
                    true,
                ),
                Some("toolResult") if has_usage => (
                    Source::ToolResult,
                    usage::tools_bucket(),
                    usage::MESSAGE_USAGE,
                    false,
                ),
                // Oh My Pi: a `task` tool's subagent.
                Some("toolResult")
                    if tool == Some("task") && details.is_some_and(|d| has(&d, "usage")) =>
                {
                    (
                        Source::Subagent,
                        usage::tools_bucket(),
                        usage::SUBAGENT_USAGE,
                        false,
                    )
                }
                _ => return,
            }
        }
        ("usage" | "model_usage", _) => (
            if ty == "usage" {
                Source::Entry
            } else {
                Source::ModelUsage
            },
            usage::model_bucket(
                &mut out.usage_bucket,
                entry.get_str("provider"),
                entry.get_str("model"),
            ),
            usage::ENTRY_USAGE,
            false,
        ),
        ("compaction" | "branch_summary", _)
            if entry.get("usage").is_some_and(|u| !u.is_null()) =>
        {
            (
                Source::Summary,
                usage::tools_bucket(),
                usage::ENTRY_USAGE,
                false,
            )
        }
        _ => return,
    };
    // Version 1 entries have no time of their own: their message's.
    let timestamp_ms = meta.timestamp_ms.or_else(|| {
        let t = message?.get("timestamp")?;
        t.as_i64().or_else(|| t.cast_f64().map(|f| f as i64))
    });
    out.usage.push(UsageEntry {
        line: ctx.line,
        key: usage::entry_key(id, ts, ctx.offset),
        timestamp_ms,
        source,
        model,
        usage: Default::default(),
        fault: None,
    });
    out.usage_wanted = Some(Wanted { path, required });
}

fn extract_message<'i>(
    m: &Object<'_, 'i>,
    ctx: &LineCtx,
    link: u32,
    meta: &mut EntryMeta<'i>,
    scratch: &mut String,
    out: &mut ParsedChunk,
) {
    let Some(role) = m.get_str("role") else {
        return;
    };
    if !role_is_indexed(role, ctx.kinds) {
        return;
    }
    if meta.timestamp_ms.is_none() {
        meta.timestamp_ms = m.get("timestamp").and_then(|t| {
            t.as_i64()
                .or_else(|| t.as_u64().map(|u| u as i64))
                .or_else(|| t.as_f64().map(|f| f as i64))
        });
    }
    match role {
        "user" => {
            if let Some(content) = m.get("content") {
                content_text(content, scratch);
                out.push_doc(ctx, link, Role::User, meta, scratch);
            }
        }
        "assistant" => {
            meta.model = ModelName::new(m.get_str("provider"), m.get_str("model"));
            let Some(blocks) = m.get("content").and_then(|c| c.as_array()) else {
                if let Some(s) = m.get_str("content") {
                    out.push_doc(ctx, link, Role::Assistant, meta, s);
                }
                return;
            };
            join_blocks(&blocks, "text", "text", scratch);
            out.push_doc(ctx, link, Role::Assistant, meta, scratch);
            if ctx.kinds.thinking {
                join_blocks(&blocks, "thinking", "thinking", scratch);
                out.push_doc(ctx, link, Role::Thinking, meta, scratch);
            }
            if ctx.kinds.tools {
                tool_calls_text(&blocks, scratch);
                out.push_doc(ctx, link, Role::Tool, meta, scratch);
            }
        }
        "toolResult" => {
            if let Some(content) = m.get("content") {
                content_text(content, scratch);
                out.push_doc(ctx, link, Role::Tool, meta, scratch);
            }
        }
        "bashExecution" => {
            scratch.clear();
            scratch.push_str(m.get_str("command").unwrap_or(""));
            scratch.push('\n');
            scratch.push_str(m.get_str("output").unwrap_or(""));
            out.push_doc(ctx, link, Role::Tool, meta, scratch);
        }
        // Oh My Pi: `$ code` run by the user, as `!` runs bash.
        "pythonExecution" => {
            scratch.clear();
            scratch.push_str(m.get_str("code").unwrap_or(""));
            scratch.push('\n');
            scratch.push_str(m.get_str("output").unwrap_or(""));
            out.push_doc(ctx, link, Role::Tool, meta, scratch);
        }
        // Oh My Pi: files an `@path` mention read into the conversation,
        // as a read tool's result: each path, then its content.
        "fileMention" => {
            scratch.clear();
            if let Some(files) = m.get("files").and_then(|f| f.as_array()) {
                for file in files.iter().filter_map(|f| f.as_object()) {
                    if !scratch.is_empty() {
                        scratch.push('\n');
                    }
                    scratch.push_str(file.get_str("path").unwrap_or(""));
                    if let Some(content) = file.get_str("content") {
                        scratch.push('\n');
                        scratch.push_str(content);
                    }
                }
            }
            out.push_doc(ctx, link, Role::Tool, meta, scratch);
        }
        // Oh My Pi: instructions it injects into the conversation itself
        // (reminders, continuations), extension messages in all but name.
        "developer" => {
            if let Some(content) = m.get("content") {
                content_text(content, scratch);
                out.push_doc(ctx, link, Role::Custom, meta, scratch);
            }
        }
        "custom" | "hookMessage" => {
            if let Some(content) = m.get("content") {
                content_text(content, scratch);
                out.push_doc(ctx, link, Role::Custom, meta, scratch);
            }
        }
        "system" => {
            system_text(m, scratch);
            out.push_doc(ctx, link, Role::System, meta, scratch);
        }
        "branchSummary" | "compactionSummary" => {
            if let Some(s) = m.get_str("summary") {
                out.push_doc(ctx, link, Role::Summary, meta, s);
            }
        }
        _ => {}
    }
}

/// A model's name as Pi wrote it, borrowed from the parsed line: only a
/// line that yields a document pays for the owned `provider/model` string
/// (most assistant lines are tool calls without text).
#[derive(Clone, Copy)]
pub(super) struct ModelName<'a> {
    pub(super) provider: Option<&'a str>,
    pub(super) model: &'a str,
}

impl<'a> ModelName<'a> {
    /// The model, if there is one; an empty provider counts as none.
    pub(super) fn new(provider: Option<&'a str>, model: Option<&'a str>) -> Option<Self> {
        Some(ModelName {
            provider: provider.filter(|p| !p.is_empty()),
            model: model?,
        })
    }

    /// `provider/model`, or just the model.
    pub(super) fn joined(self) -> String {
        match self.provider {
            Some(p) => [p, "/", self.model].concat(),
            None => self.model.to_owned(),
        }
    }
}

/// A `system` message as text: its `content`, then each prompt section's
/// text in the order written (a `null` section removes one: nothing),
/// then `name: description` of each tool it declares, one per line.
fn system_text(m: &Object<'_, '_>, scratch: &mut String) {
    match m.get("content") {
        Some(content) => content_text(content, scratch),
        None => scratch.clear(),
    }
    if let Some(sections) = m.get("sections").and_then(|s| s.as_object()) {
        for (_, v) in sections.iter() {
            if let Some(text) = v.as_str() {
                scratch.push('\n');
                scratch.push_str(text);
            }
        }
    }
    if let Some(tools) = m.get("toolsAdded").and_then(|t| t.as_array()) {
        for tool in tools.iter() {
            let Some(t) = tool.as_object() else { continue };
            scratch.push('\n');
            scratch.push_str(t.get_str("name").unwrap_or(""));
            if let Some(d) = t.get_str("description") {
                scratch.push_str(": ");
                scratch.push_str(d);
            }
        }
    }
}

/// A `content` value's text: a string as is, or its `text` blocks joined
/// with `\n`.
fn content_text(content: Value<'_, '_>, scratch: &mut String) {
    scratch.clear();
    if let Some(s) = content.as_str() {
        scratch.push_str(s);
    } else if let Some(blocks) = content.as_array() {
        join_blocks(&blocks, "text", "text", scratch);
    }
}

/// Join the `field` strings of blocks whose `type` is `block_type` with
/// `\n`. Thinking blocks marked `redacted` are left out, and so are empty
/// strings: Pi shows nothing for an empty block, and MemPalace's importer
/// (whose transcripts `show --format transcript` reproduces) drops them.
fn join_blocks(blocks: &Array<'_, '_>, block_type: &str, field: &str, scratch: &mut String) {
    scratch.clear();
    let mut first = true;
    for block in blocks.iter() {
        let Some(b) = block.as_object() else { continue };
        if b.get_str("type") != Some(block_type) {
            continue;
        }
        if block_type == "thinking" && b.get_bool("redacted") == Some(true) {
            continue;
        }
        let Some(text) = b.get_str(field).filter(|t| !t.is_empty()) else {
            continue;
        };
        if !first {
            scratch.push('\n');
        }
        first = false;
        scratch.push_str(text);
    }
}

/// Tool calls as text: each call's name on a line, then `key: value` per
/// top-level argument (strings as they are, anything else as compact JSON).
fn tool_calls_text(blocks: &Array<'_, '_>, scratch: &mut String) {
    scratch.clear();
    for block in blocks.iter() {
        let Some(b) = block.as_object() else { continue };
        if b.get_str("type") != Some("toolCall") {
            continue;
        }
        let name = b
            .get_str("name")
            .or_else(|| b.get_str("toolName"))
            .unwrap_or("");
        if !scratch.is_empty() {
            scratch.push('\n');
        }
        scratch.push_str(name);
        let args = b.get("arguments").or_else(|| b.get("input"));
        if let Some(args) = args.and_then(|a| a.as_object()) {
            for (k, v) in args.iter() {
                scratch.push('\n');
                scratch.push_str(k);
                scratch.push_str(": ");
                match v.as_str() {
                    Some(s) => scratch.push_str(s),
                    None => scratch.push_str(&v.encode()),
                }
            }
        }
    }
}
