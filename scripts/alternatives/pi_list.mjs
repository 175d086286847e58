// Pi's own session listing (what /resume pays when it shows all sessions):
// SessionManager.listAll(), which reads every session file under
// <agent dir>/sessions/<project>/ to build its list (header, name, first
// message, counts, modified time).
//
// Usage: PI_CODING_AGENT_DIR=AGENT_DIR node pi_list.mjs PACKAGE_DIR
//   PACKAGE_DIR: node_modules/@earendil-works/pi-coding-agent (Pi 1.x, needs
//                Node 22+) or node_modules/@mariozechner/pi-coding-agent (0.73.1)
//   AGENT_DIR:   a scratch agent dir whose `sessions` is (a link to) the corpus
//
// listAll() has the same meaning in 0.73.1 and 1.6.0. (list(cwd, dir) does
// not: 1.6 keeps only the sessions whose header cwd is `cwd` when a dir is
// given, so the old list("/", dir) call finds nothing there.)
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkg] = process.argv.slice(2);
if (!pkg || !process.env.PI_CODING_AGENT_DIR) {
  console.error("usage: PI_CODING_AGENT_DIR=AGENT_DIR node pi_list.mjs PACKAGE_DIR");
  process.exit(2);
}
const { SessionManager } = await import(pathToFileURL(join(pkg, "dist/index.js")).href);
const list = await SessionManager.listAll();
const messages = list.reduce((n, s) => n + (s.messageCount ?? 0), 0);
console.log(`${list.length} sessions, ${messages} messages`);
