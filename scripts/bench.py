#!/usr/bin/env python3
"""Measure pi-index against what a user would use instead, on one generated
corpus, in one run, and write the markdown table the README shows.

    scripts/bench.sh [--size 1GB] [--runs 3] [--out bench-results.md]

Each command runs --runs times (after one warm-up that also fills the page
cache); the table gives the median wall time, throughput and the peak RSS
(/usr/bin/time), and each alternative's time as a ratio to pi-index's.
Alternatives that cannot be installed here are skipped with a note.
"""
import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, **kw)


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def measure(cmd, runs, setup=None):
    """Median wall seconds of `cmd` over `runs` runs (after a warm-up), and
    its peak RSS in MB from one more run under /usr/bin/time. Commands
    without shell syntax run directly, so a few-millisecond command is not
    charged for a shell."""
    argv = None if any(c in cmd for c in "|>&;*") else shlex.split(cmd)
    walls = []
    for i in range(runs + 1):
        if setup:
            sh(setup)
        start = time.perf_counter()
        if argv:
            p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        else:
            p = subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.perf_counter() - start
        if p.returncode not in (0, 1):
            raise RuntimeError(f"{cmd} failed ({p.returncode}): {p.stderr.decode()[-400:]}")
        if i > 0:  # the first run is a warm-up
            walls.append(wall)
    if setup:
        sh(setup)
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name, "sh", "-c", cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kb = int((t.read().strip().splitlines() or ["0"])[-1])
    return statistics.median(walls), kb / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="1GB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench-results.md"))
    ap.add_argument("--data", default=os.path.join(ROOT, "target", "bench-data"))
    ap.add_argument("--seed", default="42")
    args = ap.parse_args()

    data = args.data
    os.makedirs(data, exist_ok=True)
    corpus = os.path.join(data, f"corpus-{args.size}-{args.seed}")
    manifest_path = corpus + ".json"
    if not os.path.exists(os.path.join(corpus, ".complete")):
        shutil.rmtree(corpus, ignore_errors=True)
        print(f"generating {args.size} corpus in {corpus}", file=sys.stderr)
        with open(manifest_path, "w") as m:
            sh(
                f"python3 {ROOT}/scripts/gen-corpus.py --out {corpus} --size {args.size} "
                f"--seed {args.seed} --json",
                stdout=m,
            )
        open(os.path.join(corpus, ".complete"), "w").close()
    manifest = json.load(open(manifest_path))
    nbytes = manifest["totals"]["bytes"]
    nfiles = manifest["totals"]["files"]

    print("building pi-index (release)", file=sys.stderr)
    sh(f"cd {ROOT} && cargo build --release --quiet && cargo build --release --quiet --example serde_extract")
    pi = os.path.join(ROOT, "target", "release", "pi-index")
    serde = os.path.join(ROOT, "target", "release", "examples", "serde_extract")
    index = os.path.join(data, f"index-{args.size}-{args.seed}")
    tools = os.path.join(data, "tools")
    os.makedirs(tools, exist_ok=True)
    notes = []

    # Alternatives that need installing: each is skipped, with a note, if
    # the machine cannot install it.
    venv_py = os.path.join(tools, "venv", "bin", "python")
    mempalace = None
    try:
        if not os.path.exists(venv_py):
            sh(f"python3 -m venv {tools}/venv")
        sh(f"{venv_py} -m pip install -q mempalace", stdout=subprocess.DEVNULL)
        v = subprocess.run([venv_py, "-c", "import importlib.metadata as m; print(m.version('mempalace'))"],
                           capture_output=True, text=True, check=True).stdout.strip()
        mempalace = f"{venv_py} {ROOT}/scripts/alternatives/mempalace_import.py {corpus}"
        notes.append(f"MemPalace {v} (`pip install mempalace`), `mempalace.normalize.normalize(path)` on every file")
    except Exception as e:  # noqa: BLE001 - any failure means: skip it
        notes.append(f"MemPalace skipped: cannot install it here ({e})")
    node_modules = os.path.join(tools, "npm", "node_modules")
    pi_list = None
    try:
        if shutil.which("node") is None:
            raise RuntimeError("no node")
        os.makedirs(os.path.join(tools, "npm"), exist_ok=True)
        if not os.path.exists(os.path.join(node_modules, "@mariozechner", "pi-coding-agent")):
            sh(f"cd {tools}/npm && (test -f package.json || npm init -y >/dev/null) && "
               f"npm install --silent @mariozechner/pi-coding-agent", stdout=subprocess.DEVNULL)
        v = json.load(open(os.path.join(node_modules, "@mariozechner", "pi-coding-agent", "package.json")))["version"]
        pi_list = f"node {ROOT}/scripts/alternatives/pi_list.mjs {node_modules} {corpus}"
        notes.append(f"Pi {v} (`npm install @mariozechner/pi-coding-agent`), `SessionManager.list` over each project folder")
    except Exception as e:  # noqa: BLE001
        notes.append(f"Pi's listing skipped: cannot install it here ({e})")
    rg = shutil.which("rg")
    if rg is None:
        notes.append("ripgrep skipped: `rg` is not installed (`apt-get install ripgrep`)")

    files = f"find {corpus} -name '*.jsonl' -print0"
    rows = []

    def row(group, name, cmd, base=None, setup=None, throughput=True):
        wall, rss = measure(cmd, args.runs, setup)
        rows.append((group, name, wall, rss, throughput, base))
        print(f"{name}: {wall * 1000:.1f} ms, {rss:.0f} MB", file=sys.stderr)
        return wall

    g = "read the bytes (the floor)"
    row(g, "`cat` every file to /dev/null", f"{files} | xargs -0 cat > /dev/null")
    row(g, "count newlines (`wc -l`)", f"{files} | xargs -0 wc -l > /dev/null")
    g = "parse, extract (and index)"
    cold = row(g, "**pi-index build**, fresh index", f"{pi} build {corpus} --index {index} -q",
               setup=f"rm -rf {index}")
    row(g, "**pi-index build**, nothing changed", f"{pi} build {corpus} --index {index} -q", base=cold)
    row(g, "naive Rust: serde_json `Value` per line (all cores)", f"{serde} {corpus}", base=cold)
    row(g, "plain Python `json.loads` extractor", f"python3 {ROOT}/scripts/alternatives/py_extract.py {corpus}",
        base=cold)
    if mempalace:
        row(g, "MemPalace's importer (extracts only)", mempalace, base=cold)
    g = "list sessions"
    listing = row(g, "**pi-index sessions**", f"{pi} sessions --index {index} --json", throughput=False)
    if pi_list:
        row(g, "Pi's `SessionManager.list` (what `/resume` pays)", pi_list, base=listing, throughput=False)
    g = "search, fresh process, 20 hits"
    words = [manifest["planted"][0]["token"], "error", "timeout"]
    for w in words:
        base = row(g, f"**pi-index search {w}**", f"{pi} search {w} --index {index} --color never", throughput=False)
        if rg:
            row(g, f"`rg -c -F {w}` over the files", f"{rg} -c -F {w} {corpus}", base=base, throughput=False)

    # The table.
    out = []
    out.append(f"Corpus: {nbytes / 1e6:,.0f} MB, {nfiles:,} session files, generated by "
               f"`scripts/gen-corpus.py --size {args.size} --seed {args.seed}`.  ")
    out.append(f"Machine: {cpu_name()}, {os.cpu_count()} cores; warm page cache; median of {args.runs} runs "
               f"after a warm-up (commands without pipes run without a shell); peak RSS from one more run under `/usr/bin/time`.  ")
    out.append(f"Reproduce: `scripts/bench.sh --size {args.size} --runs {args.runs}`.")
    out.append("")
    out.append("| task | tool | time | MB/s | peak RSS | vs pi-index |")
    out.append("|---|---|---:|---:|---:|---:|")
    for group, name, wall, rss, tp, base in rows:
        mbs = f"{nbytes / 1e6 / wall:,.0f}" if tp else ""
        ratio = ""
        if base:
            r = wall / base
            ratio = f"{r:,.1f}x slower" if r >= 1 else f"{1 / r:,.1f}x faster"
        t = f"{wall:.2f} s" if wall >= 1 else f"{wall * 1000:.1f} ms"
        out.append(f"| {group} | {name} | {t} | {mbs} | {rss:,.0f} MB | {ratio} |")
    out.append("")
    for n in notes:
        out.append(f"- {n}")
    text = "\n".join(out) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
