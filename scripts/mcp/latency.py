#!/usr/bin/env python3
"""Tool call latency of `pi-index mcp`, as an MCP client sees it: the
official Python SDK (client.py) calls `search` N times per query over
stdio, every call refreshing the index first (unless --no-refresh), and
this prints the median, p90, min and max per query with the machine's load.

    target/mcp-venv/bin/python scripts/mcp/latency.py --bin target/release/pi-index \\
        --corpus /tmp/c1g --index /tmp/idx1g [--n 200] [--no-refresh]

The corpus is passed to the server as its session directory, so the
refresh walks exactly the files the index was built from.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

QUERIES = [
    ("rare word, 10 hits", {"query": "zqplant0001"}),
    ("common word, 10 hits", {"query": "error"}),
    ("common word, 50 hits", {"query": "timeout", "limit": 50}),
    ("two words, filtered", {"query": "error handling", "role": "user", "since": "2020-01-01"}),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--no-refresh", action="store_true")
    a = ap.parse_args()
    steps = [{"bench": "search", "args": {"query": "warm up"}, "n": 20}]
    steps += [{"bench": "search", "args": args, "n": a.n} for _, args in QUERIES]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(steps, f)
    server = [a.bin, "mcp", a.corpus, "--index", a.index] + (["--no-refresh"] if a.no_refresh else [])
    load_before = os.getloadavg()
    out = subprocess.run(
        [sys.executable, os.path.join(os.path.dirname(__file__), "client.py"), f.name, "--"] + server,
        check=True,
        capture_output=True,
        text=True,
    )
    load_after = os.getloadavg()
    os.unlink(f.name)
    results = json.loads(out.stdout)["results"][1:]
    mode = "no refresh" if a.no_refresh else "refresh before every call"
    print(f"search through the MCP Python SDK, {a.n} calls per query, {mode}")
    print(f"load average (1, 5, 15 min): before {load_before}, after {load_after}")
    print("| query | median | p90 | min | max | tool errors |")
    print("|---|---:|---:|---:|---:|---:|")
    for (name, _), r in zip(QUERIES, results):
        t = sorted(r["times_ms"])
        p90 = t[int(len(t) * 0.9)]
        print(
            f"| {name} | {statistics.median(t):.1f} ms | {p90:.1f} ms | {t[0]:.1f} ms | {t[-1]:.1f} ms | {r['errors']} |"
        )


if __name__ == "__main__":
    main()
