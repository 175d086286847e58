// Shared by write-sessions.mjs, rename-append.mjs and omp-view.mjs: load Oh
// My Pi's own modules (TypeScript, run by Bun) from the directory
// scripts/omp/setup.sh installed into, so the scripts use the exact code that
// writes and reads real sessions (not a re-implementation).
//
// Run with that Bun, with a throwaway HOME: Oh My Pi resolves its session
// dirs (~/.omp/agent/sessions) from HOME when its modules load.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
// OMP_BUN_DIR: the DIR given to setup.sh (default <repo>/target/omp-bun).
const base = resolve(process.env.OMP_BUN_DIR || join(repo, "target/omp-bun"));
const pkg = join(base, "node_modules/@oh-my-pi/pi-coding-agent");

async function load(rel) {
  const file = join(pkg, rel);
  if (!existsSync(file)) {
    console.error(`Oh My Pi not found at ${pkg}: run scripts/omp/setup.sh first (or set OMP_BUN_DIR)`);
    process.exit(2);
  }
  return import(pathToFileURL(file).href);
}

// SessionManager: what the CLI writes sessions with (create, open, forkFrom,
// fork, createBranchedSession, setSessionName, append*).
export const { SessionManager } = await load("src/session/session-manager.ts");
// loadSessionFile: what it reads them with (the title slot skipped, the header
// validated, malformed lines skipped).
export const { loadSessionFile } = await load("src/session/session-loader.ts");

// The text a user sees: string content as is, else text blocks joined by "\n"
// (the reading rule of /work/shared/pi-session-format.md; not trimmed here).
export function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b && b.type === "text" && typeof b.text === "string").map((b) => b.text).join("\n");
}

// 1-based line of each entry of a file Oh My Pi wrote (one JSON object per
// line: the title slot, the header, then its entries), by entry id.
export function linesById(text) {
  const lines = new Map();
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let v;
    try { v = JSON.parse(line); } catch { return; }
    if (v && typeof v.id === "string" && v.type !== "session") lines.set(v.id, i + 1);
  });
  return lines;
}
