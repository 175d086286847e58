// Shared by write-sessions.mjs and pi-view.mjs: load Pi 1.6's own modules from
// the directory scripts/pi/setup.sh installed into, so both scripts use the
// exact code that writes and reads real sessions (not a re-implementation).
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
// PI_NODE_DIR: the DIR given to setup.sh (default <repo>/target/pi-node).
const base = resolve(process.env.PI_NODE_DIR || join(repo, "target/pi-node"));
const pkg = join(base, "node_modules/@earendil-works/pi-coding-agent");

async function load(rel) {
  const file = join(pkg, rel);
  if (!existsSync(file)) {
    console.error(`Pi 1.6 not found at ${pkg}: run scripts/pi/setup.sh first (or set PI_NODE_DIR)`);
    process.exit(2);
  }
  return import(pathToFileURL(file).href);
}

// The public API (SessionManager, buildSessionContext, ...).
export const pi = await load("dist/index.js");
// getDefaultSessionDir is not re-exported by index.js; it is the function Pi
// itself uses to encode a cwd into a folder name.
export const sessionManagerModule = await load("dist/core/session-manager.js");

// The text a user sees: string content as is, else text blocks joined by "\n"
// (the reading rule of /work/shared/pi-session-format.md; not trimmed here).
export function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b && b.type === "text" && typeof b.text === "string").map((b) => b.text).join("\n");
}
