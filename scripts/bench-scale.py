#!/usr/bin/env python3
"""Ten times the sessions: pi-index on 1 GB and on 10 GB of the same kind of
corpus, measured in one run, as issue 21 asks.

    python3 scripts/bench-scale.py [--pi-index BIN] [--data DIR] [--runs 3]
                                   [--search-runs 30] [--mcp-calls 100]
                                   [--out target/scale-results.md]

The corpora are `scripts/gen-corpus.py --size 1GB --seed S` for S = 42 (the
1 GB corpus) and S = 42..51, each in its own folder (the 10 GB corpus: ten
times the sessions, each seed a different set of sessions with the same
mix, so no session is a copy of another). They are generated under --data
when missing (the 10 GB one holds the 1 GB one as hard links).

Rows, each measured for both sizes alternately in the same loop (the
machine's speed drifts between runs, so a ratio is only read within a run):

- a fresh build (the index removed before each run, untimed): wall, CPU
  (user + sys of the process, from wait4) and peak RSS (ru_maxrss), medians
  of --runs;
- a build with nothing changed: median of --search-runs;
- an MCP tool call after no change: the official MCP Python SDK
  (scripts/mcp/client.py) calls `search` --mcp-calls times on one server
  whose session directory is the corpus, each call refreshing first
  (watched: nothing runs when nothing changed): median and p99 as the
  client sees them;
- search as a fresh process, five shapes: median of --search-runs.

Prints a markdown table (1 GB, 10 GB, and how it grows) and writes it to
--out, with the raw samples as JSON beside it.

With --threads 1,2,4,8,16 it measures instead how a fresh build scales
with threads, on --corpus (default: the 1 GB corpus): --runs rounds, each
running every thread count once in an order rotated from round to round,
and fast-resume's `fr --rebuild` beside them when --fr (or `fr` on PATH)
is there (a scratch HOME, the corpus as its Pi session directory). The
table: wall, CPU, peak RSS and speed-up over `-j 1`, CPU over `-j 1`'s,
and the phases `build --json` reports (parse, commit, the commit's merge
wall and CPU, and the commit's share of the wall), medians of the rounds;
every run's (wall, CPU, RSS, `--json` report) goes beside --out as JSON:

    python3 scripts/bench-scale.py --threads 1,2,4 --corpus DIR --runs 3
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEEDS = list(range(42, 52))
SEARCHES = [
    ("rare word", ["zqplant0001"]),
    ("common word", ["error"]),
    ("two words", ["error index"]),
    ("common phrase", ['"the file"']),
    ("filtered", ["error role:user"]),
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(argv, env=None, out=subprocess.DEVNULL):
    """(wall s, cpu s, peak RSS MB) of one run of argv; fails loudly."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {code}: {err[-800:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def corpus(data, seed):
    d = os.path.join(data, f"seed{seed}")
    if not os.path.exists(os.path.join(d, ".done")):
        log(f"generating the 1 GB corpus of seed {seed} in {d} (about a minute)")
        shutil.rmtree(d, ignore_errors=True)
        subprocess.run([sys.executable, os.path.join(HERE, "gen-corpus.py"), "--out", d, "--size", "1GB",
                        "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
        open(os.path.join(d, ".done"), "w").close()
    return d


def corpora(data):
    one = corpus(data, 42)
    ten = os.path.join(data, "ten")
    os.makedirs(ten, exist_ok=True)
    for s in SEEDS:
        src, dst = corpus(data, s), os.path.join(ten, f"seed{s}")
        if not os.path.exists(dst):
            # Hard links: the same bytes, another path.
            subprocess.run(["cp", "-al", src, dst], check=True)
    return one, ten


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def fmt_s(s):
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def mcp_latency(bin_, corp, index, n):
    """Median and p99 (ms) of n `search` calls after no change, as the SDK client times them."""
    venv_py = os.path.join(ROOT, "target", "mcp-venv", "bin", "python")
    if not os.path.exists(venv_py):
        subprocess.run(["bash", os.path.join(HERE, "mcp", "setup.sh")], check=True, stdout=subprocess.DEVNULL)
    steps = [{"bench": "search", "args": {"query": "warm up"}, "n": 5},
             {"bench": "search", "args": {"query": "error"}, "n": n}]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(steps, f)
    out = subprocess.run([venv_py, os.path.join(HERE, "mcp", "client.py"), f.name, "--", bin_, "mcp", corp,
                          "--index", index], check=True, capture_output=True, text=True)
    os.unlink(f.name)
    times = json.loads(out.stdout)["results"][1]["times_ms"]
    return statistics.median(times), pct(times, 99), times


def build_json(bin_, corp, threads, data):
    """One fresh build at -j threads: (wall s, cpu s, peak RSS MB, its --json report)."""
    index = tempfile.mkdtemp(prefix="scale-j-", dir=data)
    shutil.rmtree(index)
    try:
        with tempfile.TemporaryFile() as out:
            wall, cpu, rss = run([bin_, "build", corp, "--index", index, "--full", "--json", "-j", str(threads)],
                                 out=out)
            out.seek(0)
            report = json.loads(out.read())
        return wall, cpu, rss, report
    finally:
        shutil.rmtree(index, ignore_errors=True)


def threads_table(bin_, corp, counts, runs, fr, data):
    """The scaling table (see the module's documentation)."""
    fr_home = tempfile.mkdtemp(prefix="scale-fr-", dir=data)
    fr_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": fr_home, "LANG": "C.UTF-8",
              "XDG_CACHE_HOME": os.path.join(fr_home, ".cache"), "PI_CODING_AGENT_SESSION_DIR": corp}
    sides = [str(j) for j in counts] + (["fr"] if fr else [])
    got = {side: [] for side in sides}
    run_build(bin_, corp, counts[0], data)  # warm the page cache
    for r in range(runs):
        order = sides[r % len(sides):] + sides[:r % len(sides)]
        for side in order:
            if side == "fr":
                shutil.rmtree(os.path.join(fr_home, ".cache"), ignore_errors=True)
                wall, cpu, rss = run([fr, "--rebuild"], env=fr_env)
                got[side].append((wall, cpu, rss, None))
            else:
                got[side].append(build_json(bin_, corp, int(side), data))
            log(f"round {r + 1}: {side}: {got[side][-1][0]:.2f} s")
    shutil.rmtree(fr_home, ignore_errors=True)
    med = lambda xs: statistics.median(xs)  # noqa: E731
    base_wall = med([g[0] for g in got[str(counts[0])]])
    base_cpu = med([g[1] for g in got[str(counts[0])]])
    rows = [f"Fresh builds of {corp} ({runs} rounds, medians; {os.cpu_count()} CPUs here)", "",
            f"| threads (`-j`) | wall | CPU-s | peak RSS | speed-up over `-j {counts[0]}` | CPU over `-j {counts[0]}` "
            "| parse | commit | merge wall | merge CPU | commit share of wall |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for side in sides:
        g = got[side]
        wall, cpu, rss = med([x[0] for x in g]), med([x[1] for x in g]), med([x[2] for x in g])
        if side == "fr":
            rows.append(f"| fast-resume `fr --rebuild` | {wall:.2f} s | {cpu:.1f} | {rss:.0f} MB | | "
                        f"{cpu / base_cpu:.2f}x | | | | | |")
            continue
        t = lambda k: med([x[3]["timings"].get(k, 0) for x in g]) / 1000  # noqa: E731
        share = med([x[3]["timings"]["commit_ms"] / max(1, x[3]["elapsed_ms"]) for x in g])
        rows.append(f"| {side} | {wall:.2f} s | {cpu:.1f} | {rss:.0f} MB | {base_wall / wall:.1f}x | "
                    f"{cpu / base_cpu:.2f}x | {t('parse_ms'):.2f} s | {t('commit_ms'):.2f} s | "
                    f"{t('merge_ms'):.2f} s | {t('merge_cpu_ms'):.2f} s | {share:.0%} |")
    if not fr:
        rows += ["", "fast-resume left out: no `fr` (pass --fr, or `pip install fast-resume`)."]
    return "\n".join(rows), got


def run_build(bin_, corp, threads, data):
    build_json(bin_, corp, threads, data)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pi-index", default=None, help="binary (default: cargo build --release)")
    ap.add_argument("--data", default=os.path.join(ROOT, "target", "bench-scale"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--search-runs", type=int, default=30)
    ap.add_argument("--mcp-calls", type=int, default=100)
    ap.add_argument("--out", default="target/scale-results.md")
    ap.add_argument("--threads", default=None, help="thread counts, e.g. 1,2,4,8,16: the scaling table instead")
    ap.add_argument("--corpus", default=None, help="with --threads: the corpus (default: the 1 GB corpus)")
    ap.add_argument("--fr", default=None, help="with --threads: fast-resume's `fr` (default: `fr` on PATH)")
    a = ap.parse_args()
    bin_ = a.pi_index
    if bin_ is None:
        subprocess.run(["cargo", "build", "--release", "--locked"], cwd=ROOT, check=True)
        bin_ = os.path.join(ROOT, "target", "release", "pi-index")
    bin_ = os.path.abspath(bin_)
    os.makedirs(a.data, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    if a.threads:
        counts = [int(t) for t in a.threads.split(",") if t.strip()]
        corp = os.path.abspath(a.corpus) if a.corpus else corpus(a.data, 42)
        fr = a.fr or shutil.which("fr")
        text, got = threads_table(bin_, corp, counts, a.runs, fr, a.data)
        print(text)
        with open(a.out, "w") as f:
            f.write(text + "\n")
        with open(os.path.splitext(a.out)[0] + ".json", "w") as f:
            json.dump(got, f, indent=1)
        return
    one, ten = corpora(a.data)
    sizes = [("1 GB", one, os.path.join(a.data, "index-1g")), ("10 GB", ten, os.path.join(a.data, "index-10g"))]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": a.data, "LANG": "C.UTF-8", "TZ": "UTC"}
    samples = {name: {} for name, _, _ in sizes}
    files = {name: sum(len([f for f in fs if f.endswith(".jsonl")]) for _, _, fs in os.walk(c))
             for name, c, _ in sizes}

    def add(size, row, value):
        samples[size].setdefault(row, []).append(value)

    log(f"fresh builds, {a.runs} per size, alternating")
    for r in range(a.runs):
        for name, corp, index in sizes:
            shutil.rmtree(index, ignore_errors=True)
            wall, cpu, rss = run([bin_, "build", "--index", index, corp], env)
            log(f"  {name} run {r}: {fmt_s(wall)}, {cpu:.2f} CPU-s, {rss:.0f} MB")
            add(name, "build_wall", wall)
            add(name, "build_cpu", cpu)
            add(name, "build_rss", rss)
    log(f"no-change builds, {a.search_runs} per size, alternating")
    for _ in range(a.search_runs):
        for name, corp, index in sizes:
            add(name, "nochange", run([bin_, "build", "--index", index, corp], env)[0])
    log(f"fresh-process searches, {a.search_runs} per shape and size, alternating")
    for _ in range(a.search_runs):
        for shape, q in SEARCHES:
            for name, corp, index in sizes:
                add(name, f"search {shape}", run([bin_, "search", *q, "--index", index, "-n", "20"], env)[0])
    log(f"MCP tool calls after no change, {a.mcp_calls} per size")
    for name, corp, index in sizes:
        med, p99, times = mcp_latency(bin_, corp, index, a.mcp_calls)
        samples[name]["mcp_times_ms"] = times
        samples[name]["mcp_median_ms"] = med
        samples[name]["mcp_p99_ms"] = p99

    def med(size, row):
        return statistics.median(samples[size][row])

    o, t = "1 GB", "10 GB"
    rows = [
        ("fresh build, wall", fmt_s(med(o, "build_wall")), fmt_s(med(t, "build_wall")),
         med(t, "build_wall") / med(o, "build_wall")),
        ("fresh build, CPU", f"{med(o, 'build_cpu'):.2f} s", f"{med(t, 'build_cpu'):.2f} s",
         med(t, "build_cpu") / med(o, "build_cpu")),
        ("fresh build, peak RSS", f"{max(samples[o]['build_rss']):.0f} MB", f"{max(samples[t]['build_rss']):.0f} MB",
         max(samples[t]["build_rss"]) / max(samples[o]["build_rss"])),
        ("build with nothing changed", fmt_s(med(o, "nochange")), fmt_s(med(t, "nochange")),
         med(t, "nochange") / med(o, "nochange")),
        ("MCP `search` after no change, median (SDK client)", f"{samples[o]['mcp_median_ms']:.2f} ms",
         f"{samples[t]['mcp_median_ms']:.2f} ms", samples[t]["mcp_median_ms"] / samples[o]["mcp_median_ms"]),
        ("MCP `search` after no change, p99", f"{samples[o]['mcp_p99_ms']:.2f} ms",
         f"{samples[t]['mcp_p99_ms']:.2f} ms", samples[t]["mcp_p99_ms"] / samples[o]["mcp_p99_ms"]),
    ]
    for shape, q in SEARCHES:
        key = f"search {shape}"
        rows.append((f"search, fresh process: {shape} (`{q[0]}`)", fmt_s(med(o, key)), fmt_s(med(t, key)),
                     med(t, key) / med(o, key)))
    load = os.getloadavg()
    lines = [
        f"pi-index: `{bin_}`; corpora: gen-corpus.py --size 1GB, seed 42 ({files[o]:,} files) and seeds 42-51 "
        f"({files[t]:,} files); {a.runs} fresh builds and {a.search_runs} of every other command per size, "
        f"the sizes alternating; medians (peak RSS: the largest); load average after: {load[0]:.2f}.",
        "",
        "| | 1 GB | 10 GB | grows |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {r} | {x} | {y} | {g:.1f}x |" for r, x, y, g in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(a.out, "w") as f:
        f.write(text)
    with open(os.path.splitext(a.out)[0] + ".json", "w") as f:
        json.dump(samples, f, indent=1)


if __name__ == "__main__":
    main()
