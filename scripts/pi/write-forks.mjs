// Writes a session and its forks with Pi 1.6's own SessionManager, the way
// Pi's `/fork` (createBranchedSession) and `/clone`, `--fork`, resuming in
// another directory (forkFrom) write them, and prints a JSON manifest.
//
// Usage: NODE=$(scripts/pi/setup.sh | tail -n1)
//        "$NODE" scripts/pi/write-forks.mjs OUTDIR > manifest.json
//
// OUTDIR/sessions/<encoded cwd>/<ts>_<id>.jsonl:
// - parent (/home/u/fork-proj): forkshared01..04 (two exchanges), then
//   forkparent05 (its own continuation);
// - fork (/fork at the answer forkshared04, same folder): the path up to
//   there, then forkone06;
// - clone (forkFrom into /home/u/fork-other): every entry of the parent,
//   then forkclone07.
// Words: forkshared* are in all three files; the others in one each.
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { pi, sessionManagerModule } from "./pi-lib.mjs";

const { SessionManager } = pi;
const { getDefaultSessionDir } = sessionManagerModule;

const outArg = process.argv[2];
if (!outArg || process.argv.length !== 3) {
  console.error("usage: write-forks.mjs OUTDIR");
  process.exit(2);
}
const out = resolve(outArg);
mkdirSync(out, { recursive: true });

let clock = Date.UTC(2026, 10, 21, 9, 0, 0);
const ts = () => (clock += 1000);
// Header timestamps come from the clock: each file starts later than the
// one it was forked from, as it does when a person forks.
const later = () => {
  const until = Date.now() + 5;
  while (Date.now() < until);
};
const usage = () => ({
  input: 10, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 30,
  cost: { input: 0.0001, output: 0.0002, cacheRead: 0, cacheWrite: 0, total: 0.0003 },
});
const user = (content) => ({ role: "user", content, timestamp: ts() });
const assistant = (t) => ({
  role: "assistant", content: [{ type: "text", text: t }], api: "anthropic-messages",
  provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(), stopReason: "stop", timestamp: ts(),
});

const cwd = "/home/u/fork-proj";
const other = "/home/u/fork-other";
const parent = SessionManager.create(cwd, getDefaultSessionDir(cwd, out));
parent.appendMessage({ role: "system", content: "", sections: { preamble: "Agent." }, toolsAdded: [], timestamp: ts() });
parent.appendModelChange("anthropic", "claude-sonnet-4-5");
const shared = [
  parent.appendMessage(user("shared question forkshared01")),
  parent.appendMessage(assistant("shared answer forkshared02")),
  parent.appendMessage(user("second shared question forkshared03")),
  parent.appendMessage(assistant("second shared answer forkshared04")),
];
parent.appendMessage(user("the parent goes on forkparent05"));
parent.appendMessage(assistant("only the parent says this forkparent05"));
const parentFile = parent.getSessionFile();
const parentId = parent.getSessionId();

// /fork at the second answer: a new file in the same folder.
later();
const fork = SessionManager.open(parentFile, getDefaultSessionDir(cwd, out));
fork.createBranchedSession(shared[3]);
fork.appendMessage(user("the fork goes on forkone06"));
fork.appendMessage(assistant("only the fork says this forkone06"));

// Resumed from another directory: every entry copied, in that folder.
later();
const clone = SessionManager.forkFrom(parentFile, other, getDefaultSessionDir(other, out));
clone.appendMessage(user("the clone goes on forkclone07"));
clone.appendMessage(assistant("only the clone says this forkclone07"));

const file = (sm, id) => ({ path: sm.getSessionFile(), id: sm.getSessionId(), cwd: sm.getCwd() });
console.log(JSON.stringify({
  parent: { path: parentFile, id: parentId, cwd },
  fork: file(fork),
  clone: file(clone),
  shared,
}, null, 1));
