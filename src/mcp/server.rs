//! The MCP server as the protocol sees it: the tools (names,
//! descriptions, schemas), what it tells a client about itself, and one
//! tool call run off the async runtime.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ServerCapabilities, ServerConfig,
};
use rmcp::{tool, tool_handler, tool_router, ServerHandler};
use serde::Serialize;
use serde_json::Value;

use super::tools::{
    self, SearchArgs, SearchOutput, SessionsArgs, SessionsOutput, ShowArgs, ShowOutput, UsageArgs,
    UsageOutput,
};
use crate::live::Served;

/// What the server tells a client about itself when it connects.
const INSTRUCTIONS: &str = "pi-index searches every past session of the Pi coding agent on this machine (the user's saved conversations with the agent). Use `search` to find what was said or decided before (it returns messages with their session id and line), `show` with a session id and `around` = a hit's line to read that part of the conversation, `sessions` to list sessions (newest first, or best match first with a query), and `usage` for what the sessions cost (tokens and dollars by day, week, month, session, model or project). The index is brought up to date before every call.";

/// The MCP server: what it reads (the index kept fresh, or the team
/// database) and the tools over it.
#[derive(Clone)]
pub struct Server {
    served: Arc<Served>,
    calls: Arc<tokio::sync::Semaphore>,
    tool_router: ToolRouter<Server>,
}

/// Tool calls run at once; more wait their turn. Each is bounded (a query
/// of at most [`crate::search::query::MAX_QUERY_BYTES`], at most
/// [`tools::MAX_LIMIT`] hits), so this bounds the memory of all of them
/// ([docs/performance.md](../../docs/performance.md#hostile-input)).
pub const MAX_CONCURRENT_CALLS: usize = 4;

impl Server {
    /// A server over `served`.
    pub fn new(served: Served) -> Server {
        Server {
            served: Arc::new(served),
            calls: Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_CALLS)),
            tool_router: Self::tool_router(),
        }
    }

    /// Run one tool call off the async runtime (refreshes and searches
    /// block), as the protocol's result.
    async fn run(&self, tool: &'static str, args: JsonObject) -> CallToolResult {
        let served = self.served.clone();
        // The semaphore is never closed, so this always gets a permit.
        let permit = self.calls.clone().acquire_owned().await;
        let done = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            crate::failpoint::mcp_hold();
            call_value(&served, tool, args)
        })
        .await;
        match done {
            Ok(Ok(value)) => CallToolResult::structured(value),
            Ok(Err(message)) => CallToolResult::error(vec![ContentBlock::text(message)]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "internal error in {tool} ({e}); please report it: the server goes on"
            ))]),
        }
    }
}

/// Input schema of a tool, from its argument type.
fn input<T: schemars::JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_input::<T>().unwrap_or_else(|e| panic!("input schema: {e}"))
}

#[tool_router]
impl Server {
    /// Search every past Pi coding-agent session on this machine (the user's
    /// saved conversations) for messages matching a query. Use it before
    /// re-deriving something that may have been worked out before: an
    /// error's fix, a decision, a command, where some code lives. Returns
    /// up to `limit` hits (default 10, at most 50), each with its session
    /// id, file, line, role, time, directory, session name, whether it is on
    /// the session's active branch, a snippet, and the message text (cut at
    /// 2,000 characters, with truncated: true). Read the conversation around
    /// a hit with `show` (session = the hit's session_id, around = its line).
    #[tool(
        name = "search",
        input_schema = input::<SearchArgs>(),
        output_schema = schema_for_output::<SearchOutput>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        self.run("search", args).await
    }

    /// Read the messages of one past Pi session: by default its active
    /// branch from the start (at most 50 messages, each cut at 2,000
    /// characters), or with `around` (a line from a `search` hit) the
    /// messages just before and after that line. When messages were left
    /// out, `more` says which call shows them.
    #[tool(
        name = "show",
        input_schema = input::<ShowArgs>(),
        output_schema = schema_for_output::<ShowOutput>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn show(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        self.run("show", args).await
    }

    /// List past Pi sessions on this machine: newest activity first, or,
    /// with a `query`, the sessions whose messages match it best first
    /// (with how many of the best matches each holds and its best one).
    /// Filter by directory (`cwd`) and time (`since`). Each session has its
    /// id (for `show`), file, directory, name, title (its first user
    /// message), start and last times and message count.
    #[tool(
        name = "sessions",
        input_schema = input::<SessionsArgs>(),
        output_schema = schema_for_output::<SessionsOutput>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn sessions(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        self.run("sessions", args).await
    }

    /// What past Pi sessions cost: tokens and dollars as Pi recorded them
    /// with every model call, by day (default), week, month, session,
    /// model or project, each entry of a family of forked sessions
    /// counted once. Filter by time (`since`, `until`), directory (`cwd`)
    /// and model (and, over the team database, group and filter by the
    /// pushing `host`). Returns the latest periods (or the costliest sessions,
    /// models or projects) up to `limit`, the total of the whole range,
    /// and how many entries could not be summed and why.
    #[tool(
        name = "usage",
        input_schema = input::<UsageArgs>(),
        output_schema = schema_for_output::<UsageOutput>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn usage(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        self.run("usage", args).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("pi-index", env!("CARGO_PKG_VERSION"))
                    .with_title("pi-index: search past Pi sessions"),
            )
            .with_instructions(INSTRUCTIONS)
    }
}

/// Run one tool call: refresh, then the tool. The result object as the
/// tool returns it, or the message of a tool error. This is what the
/// server runs for each call, and what `pi-index mcp --call` prints.
pub fn call(served: &Served, tool: &str, args: Value) -> Result<Value, String> {
    match args {
        Value::Object(map) => call_value(served, tool, map),
        Value::Null => call_value(served, tool, JsonObject::new()),
        other => Err(format!(
            "the arguments of {tool} must be a JSON object, not {other}"
        )),
    }
}

fn call_value(served: &Served, tool: &str, args: JsonObject) -> Result<Value, String> {
    fn out<T: Serialize>(v: Result<T, String>) -> Result<Value, String> {
        v.and_then(|v| serde_json::to_value(v).map_err(|e| e.to_string()))
    }
    // Arguments are checked before the refresh: a bad call costs nothing.
    match tool {
        "search" => {
            let args: SearchArgs = tools::parse_args(tool, args)?;
            crate::search::query::limits::check(&args.query).map_err(|e| e.to_string())?;
            out(tools::search(&served.snapshot()?, args))
        }
        "show" => {
            let args: ShowArgs = tools::parse_args(tool, args)?;
            out(tools::show(&served.snapshot()?, args))
        }
        "sessions" => {
            let args: SessionsArgs = tools::parse_args(tool, args)?;
            if let Some(q) = &args.query {
                crate::search::query::limits::check(q).map_err(|e| e.to_string())?;
            }
            out(tools::sessions(&served.snapshot()?, args))
        }
        "usage" => {
            let args: UsageArgs = tools::parse_args(tool, args)?;
            out(tools::usage(&served.snapshot()?, args))
        }
        other => Err(format!(
            "no tool named {other:?}: the tools are search, show, sessions and usage"
        )),
    }
}

/// The server's runtime: two worker threads.
pub(super) fn runtime() -> Result<tokio::runtime::Runtime, ServeError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("pi-index-mcp")
        .enable_all()
        .build()
        .map_err(|e| ServeError(format!("cannot start the server's threads: {e}")))
}

/// The server could not start or its connection failed.
#[derive(Debug, thiserror::Error)]
#[error("MCP server: {0}")]
pub struct ServeError(pub(super) String);
