// pi-index inside Pi: `/find QUERY` and the model's `session_search` tool.
//
// /find QUERY    brings the index up to date (`pi-index build -q`), runs
//                `pi-index search --json`, shows the hits in Pi's selector,
//                and switches Pi to the chosen session at that message.
// session_search the same contract as the `search` tool of `pi-index mcp`
//                (arguments and result), through `pi-index mcp --call search`.
//
// The binary is $PI_INDEX_BIN, else the one installed with this package
// (`pi install npm:pi-index`: the package of this platform, found by
// lib/binary.js as the npm launcher finds it), else `pi-index` on PATH;
// the index is pi-index's own default ($PI_INDEX_DIR, else the platform
// data directory). Loaded by Pi's TypeScript loader as is: no build step.
import { createRequire } from "node:module";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

/** The binary to run, and why the package's own is not it (if it is not). */
function locate(): { bin: string; why?: string } {
  if (process.env.PI_INDEX_BIN) return { bin: process.env.PI_INDEX_BIN };
  let binary: { binaryPath(): string };
  try {
    binary = createRequire(import.meta.url)("../lib/binary.js");
  } catch {
    // This file alone (copied into Pi's extension directory): PATH.
    return { bin: "pi-index" };
  }
  try {
    return { bin: binary.binaryPath() };
  } catch (e) {
    return { bin: "pi-index", why: e instanceof Error ? e.message : String(e) };
  }
}

const { bin: BIN, why: NO_SHIPPED_BINARY } = locate();
const NOT_INSTALLED =
  `pi-index is not installed (\`${BIN}\` was not found): install it with \`pi install npm:pi-index\` ` +
  "or `npm i -g pi-index`, or set PI_INDEX_BIN to the binary's path" +
  (NO_SHIPPED_BINARY ? `. This package's own binary: ${NO_SHIPPED_BINARY}` : "");
/** Hits /find offers; the selector shows one line each. */
const FIND_LIMIT = 20;

type Run = { ok: true; stdout: string; stderr: string; code: number } | { ok: false; message: string };

async function run(pi: ExtensionAPI, args: string[], timeout: number, signal?: AbortSignal): Promise<Run> {
  let r;
  try {
    r = await pi.exec(BIN, args, { timeout, signal });
  } catch (e) {
    return { ok: false, message: /ENOENT/.test(String(e)) ? NOT_INSTALLED : `cannot run ${BIN}: ${e}` };
  }
  // Pi's exec reports a binary that cannot be spawned as exit 1 with the
  // spawn error as stderr.
  const spawnError = /spawn \S+ (ENOENT|EACCES)/.exec(r.stderr);
  if (r.code !== 0 && r.stdout === "" && spawnError) {
    return { ok: false, message: spawnError[1] === "ENOENT" ? NOT_INSTALLED : `cannot run ${BIN}: ${r.stderr.trim()}` };
  }
  if (r.killed) return { ok: false, message: `${BIN} ${args[0]} took longer than ${timeout / 1000} s and was stopped` };
  return { ok: true, stdout: r.stdout, stderr: r.stderr, code: r.code };
}

/** The message of a failed pi-index run: its stderr without the prefix. */
function failure(stderr: string, code: number): string {
  const text = stderr.trim().replace(/^pi-index: error: /, "");
  return text || `pi-index exited with status ${code}`;
}

interface Hit {
  session_id: string;
  path: string;
  line: number;
  entry_id: string | null;
  role: string;
  timestamp: string | null;
  cwd: string | null;
  session_name: string | null;
  active: boolean;
  snippet: string;
}

/** One line for the selector: whitespace runs and control characters (a
 * terminal escape in an old message must not reach Pi's screen) become one
 * space. */
function oneLine(s: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** One selector line: number, date, role, where, snippet. */
function label(h: Hit, i: number): string {
  const when = h.timestamp ? `${h.timestamp.slice(0, 10)} ${h.timestamp.slice(11, 16)}` : "-";
  const where = h.session_name || (h.cwd ? h.cwd.split("/").filter(Boolean).pop() : "") || h.session_id.slice(0, 8);
  const branch = h.active ? "" : " [abandoned branch]";
  return `${i + 1}. ${when} ${h.role} · ${oneLine(where, 30)}${branch} · ${oneLine(h.snippet, 100)}`;
}

export default function (pi: ExtensionAPI) {
  pi.registerCommand("find", {
    description: "Search every past session (pi-index) and open the chosen one at that message",
    handler: async (args, ctx) => {
      const query = args.trim();
      if (!query) {
        ctx.ui.notify("usage: /find QUERY (words, \"a phrase\", OR, -word, role:user, after:7d, ...)", "warning");
        return;
      }
      // Bring the index up to date first (incremental, cheap when nothing
      // changed). Its failure is not fatal: search the index as it is.
      const refresh = await run(pi, ["build", "-q"], 120_000);
      if (!refresh.ok && refresh.message === NOT_INSTALLED) {
        ctx.ui.notify(NOT_INSTALLED, "error");
        return;
      }
      const r = await run(pi, ["search", "--json", "-n", String(FIND_LIMIT), "--", query], 30_000);
      if (!r.ok) {
        ctx.ui.notify(r.message, "error");
        return;
      }
      if (r.code === 1 && r.stdout.trim() === "") {
        ctx.ui.notify(`no past message matches ${JSON.stringify(query)}`, "info");
        return;
      }
      if (r.code !== 0) {
        ctx.ui.notify(`pi-index search failed: ${failure(r.stderr, r.code)}`, "error");
        return;
      }
      let hits: Hit[];
      try {
        hits = r.stdout
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l));
      } catch (e) {
        ctx.ui.notify(`pi-index search printed something that is not JSON Lines: ${e}`, "error");
        return;
      }
      const labels = hits.map(label);
      const choice = await ctx.ui.select(`${hits.length} past messages match ${JSON.stringify(query)}`, labels);
      if (choice === undefined) return;
      const hit = hits[labels.indexOf(choice)];
      if (!hit) return;
      try {
        const res = await ctx.switchSession(hit.path, {
          withSession: async (c) => {
            if (hit.entry_id) {
              try {
                await c.navigateTree(hit.entry_id, { summarize: false });
              } catch (e) {
                c.ui.notify(`opened ${hit.path}, but not at line ${hit.line}: ${e instanceof Error ? e.message : e}`, "warning");
                return;
              }
            }
            c.ui.notify(`opened ${hit.path} at line ${hit.line}`, "info");
          },
        });
        if (res.cancelled) ctx.ui.notify("switching sessions was cancelled", "warning");
      } catch (e) {
        ctx.ui.notify(`cannot open ${hit.path}: ${e instanceof Error ? e.message : e}`, "error");
      }
    },
  });

  pi.registerTool({
    name: "session_search",
    label: "Search past sessions",
    description:
      "Search every past Pi session on this machine (the user's saved conversations with coding agents) " +
      "for messages matching a query, before re-deriving something that may have been worked out before " +
      "(an error's fix, a decision, a command, where some code lives). Returns JSON: hits (session_id, path, " +
      "line, entry_id, role, timestamp, cwd, session_name, active, snippet, text cut at 2,000 characters " +
      "with truncated), total, next_offset when there are more, and index (how fresh the index was). " +
      "To read a session, use `pi-index show SESSION_ID --around LINE` or open the path.",
    promptSnippet: "Search the user's past Pi sessions (session_search) for earlier work",
    promptGuidelines: [
      "Use session_search before re-deriving a fix, decision or command that may have come up in an earlier session.",
    ],
    parameters: Type.Object({
      query: Type.String({
        description:
          'What to look for: words (ANDed), "a phrase", OR, -word or NOT word, (grouping), prefix*, and inline ' +
          "filters role:user, cwd:~/src/app, session:<id prefix>, model:opus, after:7d, before:2026-03-01, branch:active.",
      }),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: "Hits to return: 1 to 50 (default 10)." })),
      offset: Type.Optional(
        Type.Integer({ minimum: 0, maximum: 1000, description: "Hits to skip first, for paging (the previous next_offset)." }),
      ),
      role: Type.Optional(
        Type.String({ description: "Only these roles, comma separated: user, assistant, thinking, tool, summary, custom." }),
      ),
      cwd: Type.Optional(Type.String({ description: "Only sessions that ran in this directory or below it." })),
      since: Type.Optional(
        Type.String({ description: "Only messages at or after this time: 2026-03-01, today, yesterday, 7d, 12h, 2w." }),
      ),
      until: Type.Optional(Type.String({ description: "Only messages before this time (same forms as since)." })),
      active_only: Type.Optional(Type.Boolean({ description: "Only messages on the active branch of their session." })),
      sort: Type.Optional(
        Type.Union([Type.Literal("relevance"), Type.Literal("newest"), Type.Literal("oldest")], {
          description: "Order of hits: relevance (default), newest or oldest.",
        }),
      ),
    }),
    async execute(_toolCallId, params, signal) {
      const r = await run(pi, ["mcp", "--call", "search", "--args", JSON.stringify(params)], 60_000, signal);
      if (!r.ok) throw new Error(r.message);
      if (r.code !== 0) throw new Error(failure(r.stderr, r.code));
      return { content: [{ type: "text", text: r.stdout.trim() }], details: JSON.parse(r.stdout) };
    },
  });
}
