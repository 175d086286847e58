// Renames a session and appends a user message to it, as Oh My Pi does when
// it resumes one: its SessionManager opens the file, `setSessionName`
// appends a title_change entry and rewrites the title slot in place (the
// file's first 256 bytes), and the message is appended.
//
// Usage: HOME=SCRATCH "$BUN" --no-install scripts/omp/rename-append.mjs FILE NAME TEXT
// Prints {"path", "before", "after"}: the file's size before and after.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { SessionManager } from "./omp-lib.mjs";

const [file, name, text] = process.argv.slice(2);
if (!file || !name || !text) {
  console.error("usage: rename-append.mjs FILE NAME TEXT");
  process.exit(2);
}
const path = resolve(file);
const before = statSync(path).size;
const sm = await SessionManager.open(path);
if (!(await sm.setSessionName(name, "user"))) {
  console.error(`rename-append.mjs: Oh My Pi did not rename ${path}`);
  process.exit(1);
}
sm.appendMessage({ role: "user", content: text, timestamp: Date.UTC(2026, 6, 2, 9, 0, 0) });
await sm.flush();
await sm.close();
console.log(JSON.stringify({ path, before, after: statSync(path).size }));
