// Pi's own session listing (what /resume pays on every open):
// SessionManager.list over each project folder of the corpus.
// Usage: node pi_list.mjs NODE_MODULES_DIR CORPUS
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, corpus] = process.argv.slice(2);
const { SessionManager } = await import(
  pathToFileURL(join(modules, "@mariozechner/pi-coding-agent/dist/index.js")).href
);
let sessions = 0;
for (const dir of readdirSync(corpus, { withFileTypes: true })) {
  if (!dir.isDirectory()) continue;
  const list = await SessionManager.list("/", join(corpus, dir.name));
  sessions += list.length;
}
console.log(`${sessions} sessions`);
