// Writes test sessions with Pi 1.6's own SessionManager, so pi-index's tests
// read files exactly as Pi writes them (not as we believe it does), and prints
// a JSON manifest of the planted words.
//
// Usage: NODE=$(scripts/pi/setup.sh | tail -n1)
//        "$NODE" scripts/pi/write-sessions.mjs OUTDIR [--cwd-root DIR] > manifest.json
//
// Pi refuses to open a session whose cwd does not exist ("Stored session
// working directory does not exist"), so tests that drive Pi itself pass
// --cwd-root: every cwd becomes DIR + the fixed cwd, and is created.
//
// OUTDIR is laid out like an agent dir: OUTDIR/sessions/<encoded cwd>/<ts>_<id>.jsonl
// (folder names from Pi's own getDefaultSessionDir), plus OUTDIR/flat/ for a
// session written as `--session-dir` writes it (no cwd folder).
//
// Words: `pi16plantNN` sit in user/assistant text (what pi-index indexes by
// default); `pi16hideNN` sit where it must not look by default (thinking, tool
// calls and results, system prompt, summaries, context_edit replacements,
// custom messages, labels, session names, bash executions). Two of those
// are found all the same, by design: a replacement still in effect is
// searched with the message it replaces, and a session's current name by
// `name:` and `sessions QUERY` (tests/pi16.rs says which).
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { pi, sessionManagerModule, textOf } from "./pi-lib.mjs";

const { SessionManager } = pi;
const { getDefaultSessionDir } = sessionManagerModule;

const args = process.argv.slice(2);
const rootAt = args.indexOf("--cwd-root");
const cwdRoot = rootAt >= 0 ? resolve(args.splice(rootAt, 2)[1] ?? "") : null;
const outArg = args[0];
if (!outArg || args.length !== 1) {
  console.error("usage: write-sessions.mjs OUTDIR [--cwd-root DIR]");
  process.exit(2);
}
const cwdOf = (fixed) => {
  if (!cwdRoot) return fixed;
  const dir = join(cwdRoot, fixed);
  mkdirSync(dir, { recursive: true });
  return dir;
};
const out = resolve(outArg);
// Refuse to mix runs: ids are random, so an old manifest would not match.
if (existsSync(out) && readdirSync(out).length > 0) {
  console.error(`write-sessions.mjs: ${out} is not empty`);
  process.exit(2);
}
mkdirSync(out, { recursive: true });

// Fixed message timestamps (epoch ms) so message content is reproducible; entry
// ids, session ids and entry timestamps come from Pi and differ per run.
let clock = Date.UTC(2026, 10, 20, 9, 0, 0);
const ts = () => (clock += 1000);

const zeroUsage = () => ({
  input: 10, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 30,
  cost: { input: 0.0001, output: 0.0002, cacheRead: 0, cacheWrite: 0, total: 0.0003 },
});
const readTool = {
  name: "read",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};
const system = (extra) => ({ role: "system", content: "", timestamp: ts(), ...extra });
const user = (content) => ({ role: "user", content, timestamp: ts() });
const assistant = (content, o = {}) => ({
  role: "assistant", content, api: "anthropic-messages", provider: o.provider ?? "anthropic",
  model: o.model ?? "claude-sonnet-4-5", usage: zeroUsage(), stopReason: o.stopReason ?? "stop",
  thinkingLevel: o.thinkingLevel ?? "medium", timestamp: ts(),
  ...(o.errorMessage ? { errorMessage: o.errorMessage } : {}),
});
const text = (t) => ({ type: "text", text: t });
const toolResult = (id, t) => ({
  role: "toolResult", toolCallId: id, toolName: "read", content: [text(t)], isError: false, timestamp: ts(),
});

const sessions = [];
function inPiLayout(cwd, options) {
  cwd = cwdOf(cwd);
  const sm = SessionManager.create(cwd, getDefaultSessionDir(cwd, out), options);
  sessions.push(sm);
  return sm;
}

// 1. System message first, then every context_edit form, labels, renames.
{
  const sm = inPiLayout("/home/u/pi16-proj");
  sm.appendMessage(system({
    sections: { preamble: "You are a coding agent pi16hide01.", tools: "<tools>\n- read: Read a file\n</tools>", cwd: cwdOf("/home/u/pi16-proj") },
    toolsAdded: [readTool],
  }));
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  sm.appendThinkingLevelChange("medium");
  sm.appendSessionInfo("first name pi16hide02");
  const u1 = sm.appendMessage(user("Please look at main.rs pi16plant01"));
  const a1 = sm.appendMessage(assistant([
    { type: "thinking", thinking: "I should read it pi16hide03", thinkingSignature: "sig" },
    text("I will read the file pi16plant02"),
    { type: "toolCall", id: "call_1", name: "read", arguments: { path: "src/main.rs pi16hide04" } },
  ], { stopReason: "toolUse" }));
  const r1 = sm.appendMessage(toolResult("call_1", "fn main() {} pi16hide05"));
  sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", zeroUsage(), "warm-up");
  const a2 = sm.appendMessage(assistant([text("Line one pi16plant03"), text("line two")]));
  const u2 = sm.appendMessage(user([text("multi\nline pi16plant04"), text("second block")]));
  sm.appendModelChange("openai", "gpt-5");
  const a3 = sm.appendMessage(assistant([text("Answer from another model pi16plant05")], { provider: "openai", model: "gpt-5" }));
  sm.appendThinkingLevelChange("high");
  sm.appendContextEdit(u1, null); // omitted
  sm.appendContextEdit(a1, { content: "short pi16hide06" }); // replaced (string -> one text block)
  sm.appendContextEdit(a2, { content: "first pi16hide07" });
  sm.appendContextEdit(a2, null); // latest wins: omitted
  sm.appendContextEdit(u2, null);
  sm.appendContextEdit(u2, { content: "u2 replaced pi16hide08" }); // latest wins: replaced
  sm.appendContextEdit(r1, { content: "trimmed pi16hide12" });
  sm.appendLabelChange(u2, "label pi16hide09");
  sm.appendLabelChange(a3, "temporary");
  sm.appendLabelChange(a3, undefined); // cleared
  sm.appendSessionInfo("renamed pi16hide10");
  sm.appendCustomMessageEntry("pi16-ext", "extension note pi16hide11", true, { any: 1 });
  sm.appendMessage(user("final question pi16plant06"));
  sm.appendMessage(assistant([text("final answer pi16plant07")], { provider: "openai", model: "gpt-5" }));
}

// 2. /tree: a plain branch and a branch with summary leave two abandoned paths.
{
  const sm = inPiLayout("/home/u/pi16-proj");
  sm.appendMessage(system({ sections: { preamble: "Agent." }, toolsAdded: [readTool] }));
  sm.appendSessionInfo("branches pi16hide14");
  const b1 = sm.appendMessage(user("first question pi16plant10"));
  const b2 = sm.appendMessage(assistant([text("first answer pi16plant11")]));
  sm.appendMessage(user("abandoned question pi16plant12"));
  sm.appendMessage(assistant([text("abandoned answer pi16plant13")]));
  sm.appendContextEdit(b1, null); // on the abandoned branch only: b1 stays unedited for the active one
  sm.branch(b2);
  sm.appendMessage(user("second try pi16plant14"));
  sm.appendMessage(assistant([text("second answer pi16plant15")]));
  sm.branchWithSummary(b2, "Tried approach B pi16hide13", { readFiles: [], modifiedFiles: [] }, false, zeroUsage());
  sm.appendMessage(user("third try pi16plant16"));
  sm.appendMessage(assistant([text("third answer pi16plant17")]));
  sm.appendContextEdit(b2, { content: [text("b2 replaced pi16hide19")] });
  sm.appendLabelChange(b1, "start");
}

// 3. Compaction: Pi stores a systemMessage checkpoint folded from both system messages.
{
  const sm = inPiLayout("/home/u/pi16-proj");
  sm.appendMessage(system({ sections: { preamble: "Agent.", tools: "<tools>read, write</tools>" }, toolsAdded: [readTool, { ...readTool, name: "write" }] }));
  const c1 = sm.appendMessage(user("old question pi16plant20"));
  sm.appendMessage(assistant([text("old answer pi16plant21")]));
  sm.appendMessage(system({ sections: { skills: "<skills>pi16hide15</skills>", tools: null }, toolsRemoved: [{ name: "write" }] }));
  const c3 = sm.appendMessage(user("kept question pi16plant22"));
  sm.appendMessage(assistant([text("kept answer pi16plant23")]));
  sm.appendContextEdit(c1, null);
  sm.appendCompaction("Summary of the start pi16hide16", c3, 12345, { readFiles: ["a.rs"], modifiedFiles: [] }, false, zeroUsage());
  sm.appendMessage(user("after compaction pi16plant24"));
  sm.appendMessage(assistant([text("after compaction answer pi16plant25")]));
  sm.appendContextEdit(c3, { content: "c3 replaced pi16hide17" });
}

// 4. Odd cwd (space, colon) and awkward messages: aborted/empty, thinking-only,
// error, bashExecution, image, multi-line user text, a last user turn with no reply.
{
  const sm = inPiLayout("/home/u/pi16 odd:dir/sub");
  sm.appendMessage(user("first line pi16plant30\nsecond line\n  indented third"));
  sm.appendMessage(assistant([], { stopReason: "aborted" }));
  sm.appendMessage(assistant([{ type: "thinking", thinking: "only thinking pi16hide20" }]));
  sm.appendMessage(assistant([text("failed reply pi16plant31")], { stopReason: "error", errorMessage: "overloaded" }));
  sm.appendMessage({ role: "bashExecution", command: "echo pi16hide18", output: "pi16hide18\n", exitCode: 0, cancelled: false, truncated: false, timestamp: ts() });
  sm.appendMessage(user([{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }, text("see picture pi16plant32")]));
  sm.appendMessage(assistant([text("  padded reply pi16plant35  ")]));
  sm.appendMessage(user("unanswered pi16plant33"));
}

// 5. Flat, as `pi --session-dir DIR` writes, with a caller-chosen session id.
{
  const sm = SessionManager.create(cwdOf("/home/u/pi16-proj"), join(out, "flat"), { id: "pi16-flat-session" });
  sessions.push(sm);
  sm.appendMessage(user("flat question pi16plant40"));
  sm.appendMessage(assistant([text("flat answer pi16plant41")]));
}

// Where in an entry a word sits, by the field that holds it.
function places(e) {
  const m = e.message;
  const found = [];
  const add = (where, value) => { if (value != null) found.push([where, typeof value === "string" ? value : JSON.stringify(value)]); };
  if (e.type === "message") {
    if (m.role === "user" || m.role === "assistant") add("text", textOf(m.content));
    if (Array.isArray(m.content)) {
      for (const b of m.content) {
        if (b.type === "thinking") add("thinking", b.thinking);
        if (b.type === "toolCall") add("toolCall", b.arguments);
      }
    }
    if (m.role === "toolResult") add("toolResult", m.content);
    if (m.role === "system") add("system", m.sections);
    if (m.role === "bashExecution") add("bashExecution", m.command + "\n" + m.output);
  }
  if (e.type === "custom_message") add("custom_message", e.content);
  if (e.type === "compaction" || e.type === "branch_summary") add("summary", e.summary);
  if (e.type === "compaction") add("systemCheckpoint", e.systemMessage);
  if (e.type === "context_edit") add("replacement", e.replacement);
  if (e.type === "label") add("label", e.label);
  if (e.type === "session_info") add("sessionName", e.name);
  return found;
}

const files = sessions.map((sm) => {
  const path = sm.getSessionFile();
  const entries = sm.getEntries();
  const branch = sm.getBranch();
  const active = new Set(branch.map((e) => e.id));
  // Latest edit per target along the active branch (what Pi's projection applies).
  const edit = new Map();
  for (const e of branch) if (e.type === "context_edit") edit.set(e.targetId, e.replacement === null ? "omitted" : "replaced");
  const inContext = new Set(sm.buildSessionProjection().entries.filter((p) => p.messages.length > 0).map((p) => p.sourceEntry.id));
  const lineOf = new Map();
  readFileSync(path, "utf8").split("\n").forEach((l, i) => { if (l.trim()) lineOf.set(JSON.parse(l).id, i + 1); });
  const words = [];
  for (const e of entries) {
    for (const [where, value] of places(e)) {
      for (const word of new Set(value.match(/pi16(?:plant|hide)\d+/g))) {
        words.push({
          word, where, entryId: e.id, line: lineOf.get(e.id), type: e.type,
          role: e.type === "message" ? e.message.role : null,
          active: active.has(e.id),
          edited: active.has(e.id) ? (edit.get(e.id) ?? null) : null,
          inContext: inContext.has(e.id),
        });
      }
    }
  }
  return {
    path, relPath: relative(out, path), sessionId: sm.getSessionId(), cwd: sm.getCwd(),
    name: sm.getSessionName() ?? null, leafId: sm.getLeafId(), entries: entries.length, words,
  };
});

// Each word must be findable in exactly one place, or the tests' expectations are ambiguous.
const seen = new Map();
for (const f of files) for (const w of f.words) {
  if (w.where === "systemCheckpoint") continue; // a copy of the system sections, by design
  if (seen.has(w.word)) throw new Error(`word ${w.word} planted twice`);
  seen.set(w.word, true);
}
console.log(JSON.stringify({ pi: "@earendil-works/pi-coding-agent@1.6.0", outDir: out, files }, null, 2));
