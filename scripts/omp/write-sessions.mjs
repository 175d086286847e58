// Writes test sessions with Oh My Pi's own SessionManager, into its default
// session dir (~/.omp/agent/sessions of $HOME, in its folder layout), so
// pi-index's tests read files exactly as Oh My Pi writes them, and prints a
// JSON manifest of the sessions and the planted words.
//
// Usage: HOME=SCRATCH "$BUN" --no-install scripts/omp/write-sessions.mjs CWD_ROOT > manifest.json
//
// Every session runs in a directory below CWD_ROOT (created). Sessions:
// 1. "alpha": every entry type Oh My Pi writes that Pi does not
//    (model_change as one string, model_usage, title_change through two
//    renames, ttsr_injection, credential_pin, mode_change,
//    service_tier_change) and every message kind (thinking, tool call and
//    result, bash, python, file mention, developer, custom message, label);
// 2. "beta": /tree branches, a branch summary, a compaction, a reset
//    boundary; never named (its title slot is empty);
// 3. "gamma": a subagent's session_init;
// 4. "delta", then its /branch at its second message
//    (createBranchedSession: the parent's path in `parentSession`), a fork
//    of that (fork(): the parent's id), and a copy of "delta" into another
//    directory (forkFrom: the id), each going on with its own words.
//
// Words: `ompplantNN` sit in user/assistant text (what pi-index indexes by
// default); `omphideNN` where it must not look by default; `ompnameNN` in
// the names the sessions end with (found by `name:`). The manifest lists,
// per file, its words with the entry, line and branch where Oh My Pi put
// them.
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SessionManager, linesById, textOf } from "./omp-lib.mjs";

const rootArg = process.argv[2];
if (!rootArg || process.argv.length !== 3) {
  console.error("usage: write-sessions.mjs CWD_ROOT");
  process.exit(2);
}
const root = resolve(rootArg);
const cwdOf = (name) => {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};

// Fixed message timestamps (epoch ms); entry ids, session ids and entry
// timestamps come from Oh My Pi and differ per run.
let clock = Date.UTC(2026, 6, 1, 9, 0, 0);
const ts = () => (clock += 1000);
const usage = () => ({
  input: 10, output: 20, cacheRead: 5, cacheWrite: 0, totalTokens: 35,
  cost: { input: 0.0001, output: 0.0002, cacheRead: 0.00001, cacheWrite: 0, total: 0.00031 },
});
const text = (t) => ({ type: "text", text: t });
const user = (content) => ({ role: "user", content, timestamp: ts() });
const assistant = (content, o = {}) => ({
  role: "assistant", content, api: "anthropic-messages", provider: o.provider ?? "anthropic",
  model: o.model ?? "claude-sonnet-4-5", usage: usage(), stopReason: o.stopReason ?? "stop", timestamp: ts(),
});
const toolResult = (id, t) => ({
  role: "toolResult", toolCallId: id, toolName: "read", content: [text(t)], isError: false, timestamp: ts(),
});

const managers = [];
const made = (sm) => { managers.push(sm); return sm; };

// 1. alpha
{
  const sm = made(SessionManager.create(cwdOf("alpha")));
  sm.appendModelChange("anthropic/claude-sonnet-4-5");
  sm.appendThinkingLevelChange("medium", "medium");
  sm.appendServiceTierChange(null);
  sm.appendCredentialPin("anthropic", "9f2c4e1a7b3d5f60");
  const u1 = sm.appendMessage(user("Please look at main.rs ompplant01"));
  sm.appendMessage(assistant([
    { type: "thinking", thinking: "I should read it omphide01", thinkingSignature: "sig" },
    text("I will read the file ompplant02"),
    { type: "toolCall", id: "call_1", name: "read", arguments: { path: "src/main.rs omphide02" } },
  ], { stopReason: "toolUse" }));
  const r1 = sm.appendMessage(toolResult("call_1", "fn main() {} omphide03"));
  sm.appendModelUsage(
    { purpose: "title", role: "smol", api: "anthropic-messages", provider: "anthropic", model: "claude-haiku-4-5", usage: usage(), stopReason: "stop" },
    { sessionId: sm.getSessionId(), parentId: r1 },
  );
  await sm.setSessionName("first name omphide04", "auto");
  sm.appendMessage(assistant([text("Line one ompplant03"), text("line two")]));
  sm.appendMessage({ role: "bashExecution", command: "ls omphide05", output: "main.rs\n", exitCode: 0, cancelled: false, truncated: false, timestamp: ts() });
  sm.appendMessage({ role: "pythonExecution", code: "print('omphide06')", output: "omphide06\n", exitCode: 0, cancelled: false, truncated: false, timestamp: ts() });
  sm.appendMessage({ role: "fileMention", files: [{ path: "notes.md", content: "notes omphide07", lineCount: 1 }], timestamp: ts() });
  sm.appendMessage({ role: "developer", content: [text("Reminder omphide08")], synthetic: true, timestamp: ts() });
  sm.appendCustomMessageEntry("omp-ext", "extension note omphide09", true);
  sm.appendLabelChange(u1, "label omphide10");
  sm.appendTtsrInjection(["rule-omphide11"]);
  sm.appendModeChange("plan", { planFile: "PLAN.md" });
  sm.appendMessage(user([text("multi\nline ompplant04"), text("second block")]));
  sm.appendMessage(assistant([text("Answer from another model ompplant05")], { provider: "openai", model: "gpt-5" }));
  await sm.setSessionName("Renamed ompname01", "user");
  sm.appendMessage(user("final question ompplant06"));
  sm.appendMessage(assistant([text("final answer ompplant07")]));
}

// 2. beta: branches, summaries, a compaction and a reset; never named.
{
  const sm = made(SessionManager.create(cwdOf("beta")));
  sm.appendMessage(user("first question ompplant10"));
  const b2 = sm.appendMessage(assistant([text("first answer ompplant11")]));
  sm.appendMessage(user("abandoned question ompplant12"));
  sm.appendMessage(assistant([text("abandoned answer ompplant13")]));
  sm.branch(b2);
  sm.appendMessage(user("second try ompplant14"));
  sm.appendMessage(assistant([text("second answer ompplant15")]));
  sm.branchWithSummary(b2, "Tried approach B omphide12");
  const third = sm.appendMessage(user("third try ompplant16"));
  sm.appendMessage(assistant([text("third answer ompplant17")]));
  sm.appendCompaction("Summary of the start omphide13", "short omphide14", third, 12345);
  sm.appendResetBoundary();
  sm.appendMessage(user("after the reset ompplant18"));
  sm.appendMessage(assistant([text("after the reset answer ompplant19")]));
}

// 3. gamma: a subagent's session.
{
  const sm = made(SessionManager.create(cwdOf("gamma")));
  sm.appendSessionInit({ systemPrompt: "You are a scout omphide15", task: "find the config omphide16", tools: ["read", "grep"], agent: "scout" });
  sm.appendMessage(user("scout task ompplant20"));
  sm.appendMessage(assistant([text("scout answer ompplant21")]));
  await sm.setSessionName("Scout ompname02", "auto");
}

// 4. delta and its forks.
const forks = {};
{
  const sm = SessionManager.create(cwdOf("delta"));
  sm.appendMessage(user("fork base question ompplant30"));
  const f2 = sm.appendMessage(assistant([text("fork base answer ompplant31")]));
  sm.appendMessage(user("fork base more ompplant32"));
  sm.appendMessage(assistant([text("fork base more answer ompplant33")]));
  await sm.setSessionName("Fork base ompname03", "user");
  await sm.flush();
  const base = sm.getSessionFile();
  forks.base = base;
  managers.push({ snapshot: base });
  // /branch at f2: a new file of the path to it.
  sm.createBranchedSession(f2);
  sm.appendMessage(user("branched own question ompplant34"));
  sm.appendMessage(assistant([text("branched own answer ompplant35")]));
  await sm.flush();
  forks.branched = sm.getSessionFile();
  managers.push({ snapshot: forks.branched });
  // fork(): every entry of the branched file into a new one.
  await sm.fork();
  sm.appendMessage(user("forked own question ompplant36"));
  sm.appendMessage(assistant([text("forked own answer ompplant37")]));
  forks.forked = sm.getSessionFile();
  managers.push(sm);
  // forkFrom: the base session copied into another directory.
  const clone = await SessionManager.forkFrom(base, cwdOf("epsilon"));
  clone.appendMessage(user("clone own question ompplant38"));
  clone.appendMessage(assistant([text("clone own answer ompplant39")]));
  forks.clone = clone.getSessionFile();
  managers.push(clone);
}

for (const sm of managers) {
  if (sm.snapshot) continue;
  await sm.flush();
  await sm.close();
}

// Where in an entry a word sits.
function places(e) {
  const found = [];
  const add = (where, value) => { if (value != null) found.push([where, typeof value === "string" ? value : JSON.stringify(value)]); };
  if (e.type === "message") {
    const m = e.message;
    if (m.role === "user" || m.role === "assistant") add("text", textOf(m.content));
    else add(m.role, m);
    if (Array.isArray(m.content)) {
      for (const b of m.content) {
        if (b.type === "thinking") add("thinking", b.thinking);
        if (b.type === "toolCall") add("toolCall", b.arguments);
      }
    }
  } else {
    add(e.type, e);
  }
  return found;
}

// Each file as Oh My Pi reads it back (a fresh SessionManager over the file).
const files = [];
for (const sm of managers) {
  const path = sm.snapshot ?? sm.getSessionFile();
  const back = await SessionManager.open(path);
  const entries = back.getEntries();
  const active = new Set(back.getBranch().map((e) => e.id));
  const lines = linesById(readFileSync(path, "utf8"));
  const words = [];
  for (const e of entries) {
    for (const [where, value] of places(e)) {
      for (const word of new Set(value.match(/omp(?:plant|hide|name)\d+/g))) {
        words.push({ word, where, entryId: e.id, line: lines.get(e.id), type: e.type, role: e.type === "message" ? e.message.role : null, active: active.has(e.id) });
      }
    }
  }
  files.push({ path, sessionId: back.getSessionId(), cwd: back.getCwd(), name: back.getSessionName() ?? null, header: back.getHeader(), words });
  await back.close();
}
console.log(JSON.stringify({ omp: "@oh-my-pi/pi-coding-agent@18.2.3", forks, files }, null, 2));
