// Prints Oh My Pi's own reading of session files as JSON: the reference that
// pi-index's tests compare against (the session's id and name, every entry
// with its line, and the active branch).
//
// Usage: HOME=SCRATCH "$BUN" --no-install scripts/omp/omp-view.mjs FILE... > view.json
//
// Oh My Pi opens a copy, never the file itself (SessionManager.open rewrites
// a file it migrates or repairs). A file it refuses gets {"error": ...}.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { SessionManager, linesById, loadSessionFile, textOf } from "./omp-lib.mjs";

function summarize(e, line, active) {
  const o = { id: e.id, parentId: e.parentId, type: e.type, line, active };
  if (e.type === "message") {
    o.role = e.message?.role;
    if (o.role === "user" || o.role === "assistant") o.text = textOf(e.message.content);
    if (o.role === "assistant") {
      o.model = `${e.message.provider}/${e.message.model}`;
      o.usage = e.message.usage ?? null;
    }
  } else if (e.type === "model_change") {
    o.model = e.model;
    o.role = e.role ?? null;
  } else if (e.type === "model_usage") {
    o.usage = e.usage;
  }
  return o;
}

async function view(file) {
  const path = resolve(file);
  const dir = mkdtempSync(join(tmpdir(), "omp-view-"));
  try {
    const copy = join(dir, basename(path) || "session.jsonl");
    copyFileSync(path, copy);
    const loaded = await loadSessionFile(copy);
    if (loaded.invalidHeader || loaded.entries.length === 0) {
      return { path, error: "Oh My Pi reads no session header in it" };
    }
    const lines = linesById(readFileSync(copy, "utf8"));
    const sm = await SessionManager.open(copy, dir);
    const branch = sm.getBranch();
    const active = new Set(branch.map((e) => e.id));
    const out = {
      path,
      sessionId: sm.getSessionId(),
      name: sm.getSessionName() ?? null,
      titleSlot: loaded.titleSlot ?? null,
      header: sm.getHeader(),
      leafId: sm.getLeafId(),
      entries: sm.getEntries().map((e) => summarize(e, lines.get(e.id) ?? null, active.has(e.id))),
      activeBranch: branch.map((e) => e.id),
    };
    await sm.close();
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: omp-view.mjs FILE...");
  process.exit(2);
}
const views = [];
for (const f of files) views.push(await view(f));
console.log(JSON.stringify(views, null, 2));
