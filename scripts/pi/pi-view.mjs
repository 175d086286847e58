// Prints Pi 1.6's own reading of session files as JSON: the reference that
// pi-index's tests compare against (entry ids, roles, text, active branch,
// and what the model is sent once context_edit and compaction apply).
//
// Usage: "$NODE" scripts/pi/pi-view.mjs FILE... > view.json
//
// Pi opens a copy, never the file itself: SessionManager.open rewrites files
// it migrates (v1/v2 -> v3, v1 ids are then random) and appends "\n" to a file
// whose last line has none. A file Pi rejects gets {"error": ...}.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { pi, textOf } from "./pi-lib.mjs";

const { SessionManager } = pi;

// 1-based line of each entry Pi keeps, by Pi's own rule (loadEntriesFromFile:
// split on "\n", skip blank lines and lines JSON.parse rejects or that parse
// to a falsy value), minus header lines, so entry i of getEntries() is line i.
function entryLines(text) {
  const lines = [];
  let header = null;
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let v;
    try { v = JSON.parse(line); } catch { return; }
    if (!v) return;
    if (header === null) header = v;
    if (v.type !== "session") lines.push(i + 1);
  });
  return { lines, header };
}

function summarize(e, line, active, edits, sm) {
  const o = { id: e.id, parentId: e.parentId, type: e.type, line, active };
  // As buildSessionProjection applies them: the last context_edit per target
  // among buildContextEntries() (active branch, compaction applied).
  if (edits.has(e.id)) o.edited = edits.get(e.id) === null ? "omitted" : "replaced";
  const label = sm.getLabel(e.id);
  if (label !== undefined) o.label = label;
  if (e.type === "message") {
    o.role = e.message?.role;
    if (o.role === "user" || o.role === "assistant") o.text = textOf(e.message.content);
    if (o.role === "assistant") o.model = { provider: e.message.provider, model: e.message.model };
  } else if (e.type === "custom_message") {
    o.customType = e.customType;
    o.text = textOf(e.content);
  } else if (e.type === "context_edit") {
    o.targetId = e.targetId;
    o.replacement = e.replacement;
  } else if (e.type === "label") {
    o.targetId = e.targetId;
    o.labelValue = e.label ?? null;
  } else if (e.type === "session_info") {
    o.name = e.name ?? null;
  } else if (e.type === "compaction" || e.type === "branch_summary") {
    o.summary = e.summary;
  }
  return o;
}

// A model message reduced to what a test can compare.
function contextMessage(m, sourceId) {
  const o = { sourceId, role: m.role };
  if ("summary" in m) o.text = m.summary;
  else if (m.role === "system") o.sections = Object.keys(m.sections ?? {});
  else if (m.role === "bashExecution") o.text = m.command;
  else o.text = textOf(m.content);
  return o;
}

function view(file) {
  const path = resolve(file);
  const dir = mkdtempSync(join(tmpdir(), "pi-view-"));
  try {
    const copy = join(dir, basename(path) || "session.jsonl");
    copyFileSync(path, copy);
    const text = readFileSync(copy, "utf8");
    // Pi would turn an empty file into a new session with a fresh id: not a view of anything.
    if (text.length === 0) return { path, error: "empty file" };
    const { lines, header: first } = entryLines(text);
    let sm;
    try {
      sm = SessionManager.open(copy, dir);
    } catch (err) {
      return { path, error: String(err?.message ?? err).replaceAll(copy, path) };
    }
    const entries = sm.getEntries();
    const branch = sm.getBranch();
    const active = new Set(branch.map((e) => e.id));
    const projection = sm.buildSessionProjection();
    const edits = new Map();
    for (const e of sm.buildContextEntries()) if (e.type === "context_edit") edits.set(e.targetId, e.replacement);
    const ctx = sm.buildSessionContext();
    return {
      path,
      sessionId: sm.getSessionId(),
      fileVersion: first?.type === "session" ? (first.version ?? 1) : null,
      header: sm.getHeader(),
      name: sm.getSessionName() ?? null,
      leafId: sm.getLeafId(),
      entries: entries.map((e, i) => summarize(e, lines[i] ?? null, active.has(e.id), edits, sm)),
      activeBranch: branch.map((e) => e.id),
      context: {
        model: ctx.model,
        thinkingLevel: ctx.thinkingLevel,
        messages: projection.entries.flatMap((p) => p.messages.map((m) => contextMessage(m, p.sourceEntry.id))),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: pi-view.mjs FILE...");
  process.exit(2);
}
console.log(JSON.stringify(files.map(view), null, 2));
