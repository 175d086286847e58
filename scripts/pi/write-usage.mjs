// Writes sessions that record usage everywhere Pi 1.6 writes it, with Pi's
// own SessionManager, and prints a JSON manifest with Pi's own totals of
// each file: getUsageCostBreakdown(entries) (dist/core/usage-totals.js)
// and the sum getSessionStats() makes (addUsageToTotals over the same
// entries), plus what every day costs when each entry of a family of
// forks is counted once (an entry copied into a fork keeps its id and
// timestamp: the same entry).
//
// Usage: NODE=$(scripts/pi/setup.sh | tail -n1)
//        "$NODE" scripts/pi/write-usage.mjs OUTDIR > manifest.json
//
// OUTDIR/sessions/<encoded cwd>/<ts>_<id>.jsonl, over four UTC days (a
// clock of its own drives every timestamp Pi writes):
// - plain (/home/u/usage-plain): two sessions of assistant messages only,
//   three models, one answered by another model (responseModel): what
//   ccusage reads too;
// - full (/home/u/usage-full): assistant messages, a `usage` entry
//   (cache_warm), a tool result with usage, a compaction with usage, an
//   abandoned branch (/tree) whose summary and answer have usage;
// - its /fork (createBranchedSession) and its clone (forkFrom into
//   /home/u/usage-other), each going on with answers of its own.
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { pi, sessionManagerModule } from "./pi-lib.mjs";

const outArg = process.argv[2];
if (!outArg || process.argv.length !== 3) {
  console.error("usage: write-usage.mjs OUTDIR");
  process.exit(2);
}
const out = resolve(outArg);
mkdirSync(out, { recursive: true });

// Every `new Date()` and `Date.now()` Pi makes reads this clock.
let clock = Date.UTC(2026, 9, 30, 22, 0, 0);
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...a) {
    if (a.length === 0) super(clock);
    else super(...a);
  }
  static now() {
    return clock;
  }
};
const tick = (ms = 61_000) => (clock += ms);
const nextDay = () => (clock += 20 * 3600_000);

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const base = resolve(process.env.PI_NODE_DIR || join(repo, "target/pi-node"));
const totals = await import(
  pathToFileURL(join(base, "node_modules/@earendil-works/pi-coding-agent/dist/core/usage-totals.js")).href
);

const { SessionManager } = pi;
const { getDefaultSessionDir } = sessionManagerModule;

// Prices and counts that do not add up to round numbers.
let n = 0;
const usage = (scale = 1) => {
  n += 1;
  const input = 1000 * scale + 37 * n;
  const output = 200 * scale + 11 * n;
  const cacheRead = 5000 * scale + 101 * n;
  const cacheWrite = 300 * scale + 7 * n;
  const cost = {
    input: input * 0.000003,
    output: output * 0.000015,
    cacheRead: cacheRead * 0.0000003,
    cacheWrite: cacheWrite * 0.00000375,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
};
const user = (text) => {
  tick();
  return { role: "user", content: text, timestamp: clock };
};
const assistant = (text, provider, model, extra = {}) => {
  tick();
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "anthropic-messages",
    provider,
    model,
    usage: usage(),
    stopReason: "stop",
    timestamp: clock,
    ...extra,
  };
};
const toolCall = (provider, model) => {
  tick();
  return {
    role: "assistant",
    content: [{ type: "toolCall", id: `call${n}`, name: "summarize", arguments: { path: "README.md" } }],
    api: "anthropic-messages",
    provider,
    model,
    usage: usage(),
    stopReason: "toolUse",
    timestamp: clock,
  };
};

const files = [];
const keep = (sm, group) => files.push({ sm, group });

// plain: two sessions, four days.
const plainCwd = "/home/u/usage-plain";
const plainDir = getDefaultSessionDir(plainCwd, out);
const p1 = SessionManager.create(plainCwd, plainDir);
p1.appendModelChange("anthropic", "claude-sonnet-4-5");
p1.appendMessage(user("plain one"));
p1.appendMessage(assistant("first answer zqplain", "anthropic", "claude-sonnet-4-5"));
p1.appendMessage(user("plain two"));
p1.appendMessage(assistant("second answer", "openai", "gpt-5"));
nextDay();
p1.appendMessage(user("plain three"));
p1.appendMessage(assistant("third answer", "anthropic", "claude-sonnet-4-5"));
keep(p1, "plain");
nextDay();
const p2 = SessionManager.create(plainCwd, plainDir);
p2.appendMessage(user("another plain"));
p2.appendMessage(assistant("answered by another model", "openrouter", "auto", { responseModel: "anthropic/claude-haiku-4-5" }));
nextDay();
p2.appendMessage(user("again"));
p2.appendMessage(assistant("and again", "google", "gemini-2.5-pro"));
keep(p2, "plain");

// full: usage everywhere Pi writes it.
const fullCwd = "/home/u/usage-full";
const fullDir = getDefaultSessionDir(fullCwd, out);
const full = SessionManager.create(fullCwd, fullDir);
full.appendModelChange("anthropic", "claude-sonnet-4-5");
full.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage(0), "warmed before the first turn");
const u1 = full.appendMessage(user("read the readme"));
full.appendMessage(toolCall("anthropic", "claude-sonnet-4-5"));
tick();
full.appendMessage({
  role: "toolResult",
  toolCallId: `call${n}`,
  toolName: "summarize",
  content: [{ type: "text", text: "a summary made by a model" }],
  details: {},
  usage: usage(2),
  isError: false,
  timestamp: clock,
});
const a1 = full.appendMessage(assistant("the readme says zqfull", "anthropic", "claude-sonnet-4-5"));
nextDay();
full.appendMessage(user("an abandoned question"));
full.appendMessage(assistant("an abandoned answer zqabandoned", "anthropic", "claude-opus-4-5"));
tick();
// /tree back to the first answer, with a summary of the branch left.
full.branchWithSummary(a1, "the abandoned branch asked and was answered", undefined, false, usage(1));
full.appendMessage(user("the branch that stays"));
full.appendMessage(assistant("it stays", "anthropic", "claude-sonnet-4-5"));
tick();
full.appendCompaction("everything so far, compacted", u1, 12345, undefined, false, usage(3));
const shared = full.appendMessage(user("after the compaction"));
const sharedAnswer = full.appendMessage(assistant("answer after the compaction", "anthropic", "claude-sonnet-4-5"));
full.appendMessage(user("the parent goes on"));
full.appendMessage(assistant("only the parent", "anthropic", "claude-sonnet-4-5"));
keep(full, "full");
const fullFile = full.getSessionFile();

// /fork at the answer after the compaction.
nextDay();
const fork = SessionManager.open(fullFile, fullDir);
fork.createBranchedSession(sharedAnswer);
fork.appendMessage(user("the fork goes on"));
fork.appendMessage(assistant("only the fork", "openai", "gpt-5"));
keep(fork, "full");

// Resumed from another directory: every entry copied there.
tick();
const otherCwd = "/home/u/usage-other";
const clone = SessionManager.forkFrom(fullFile, otherCwd, getDefaultSessionDir(otherCwd, out));
clone.appendMessage(user("the clone goes on"));
clone.appendMessage(assistant("only the clone", "anthropic", "claude-haiku-4-5"));
keep(clone, "full");
void shared;

// Pi's own totals of each file, and each day's, each entry of a family once.
const key = (e) => `${e.id}\u0000${e.timestamp}`;
const spent = (e) => {
  if (e.type === "message" && e.message.role === "assistant") return e.message.usage;
  if (e.type === "message" && e.message.role === "toolResult") return e.message.usage;
  if (e.type === "usage") return e.usage;
  if (e.type === "compaction" || e.type === "branch_summary") return e.usage;
  return undefined;
};
const daily = new Map();
const seen = new Map();
const manifest = files.map(({ sm, group }) => {
  const entries = sm.getEntries();
  const t = totals.createUsageTotals();
  for (const e of entries) {
    const u = spent(e);
    if (!u) continue;
    totals.addUsageToTotals(t, u);
    const fam = seen.get(group) ?? new Set();
    seen.set(group, fam);
    if (fam.has(key(e))) continue;
    fam.add(key(e));
    const day = e.timestamp.slice(0, 10);
    const d = daily.get(day) ?? { input: 0, output: 0, cache_read: 0, cache_write: 0, cost: 0 };
    d.input += u.input;
    d.output += u.output;
    d.cache_read += u.cacheRead;
    d.cache_write += u.cacheWrite;
    d.cost += u.cost.total;
    daily.set(day, d);
  }
  return {
    path: sm.getSessionFile(),
    id: sm.getSessionId(),
    group,
    breakdown: totals.getUsageCostBreakdown(entries),
    cost: t.cost,
    tokens: { input: t.input, output: t.output, cacheRead: t.cacheRead, cacheWrite: t.cacheWrite },
  };
});
console.log(
  JSON.stringify({
    files: manifest,
    daily: Object.fromEntries([...daily.entries()].sort()),
  }),
);
