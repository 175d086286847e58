#!/usr/bin/env python3
"""Tool call latency of `pi-index mcp`, as an MCP client sees it: the
official Python SDK (client.py) calls `search` N times per query over
stdio, every call refreshing the index first (unless --no-refresh), and
this prints the median, p90, min and max per query with the machine's load.

    target/mcp-venv/bin/python scripts/mcp/latency.py --bin target/release/pi-index \\
        --corpus /tmp/c1g --index /tmp/idx1g [--n 200] [--no-refresh] \\
        [--query "memory allocation" ...] [--raw]

The corpus is passed to the server as its session directory, so the
refresh walks exactly the files the index was built from. --query
replaces the built-in queries. --raw times the server without the SDK:
JSON-RPC lines written to its stdin and its answers read from stdout in
this process (standard library only), so what it measures is the server
and the pipe; on a slow machine most of what the SDK's client sees is the
SDK's own time (docs/performance.md#copies-at-any-share).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

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
    ap.add_argument("--query", action="append", help="a query to call instead of the built-in ones")
    ap.add_argument("--raw", action="store_true", help="time the server without the SDK")
    a = ap.parse_args()
    queries = [(q, {"query": q}) for q in a.query] if a.query else QUERIES
    server = [a.bin, "mcp", a.corpus, "--index", a.index] + (["--no-refresh"] if a.no_refresh else [])
    load_before = os.getloadavg()
    results = (raw if a.raw else through_sdk)(server, queries, a.n)
    load_after = os.getloadavg()
    mode = "no refresh" if a.no_refresh else "refresh before every call"
    client = "JSON-RPC lines, no SDK" if a.raw else "the MCP Python SDK"
    print(f"search through {client}, {a.n} calls per query, {mode}")
    print(f"load average (1, 5, 15 min): before {load_before}, after {load_after}")
    print("| query | median | p90 | min | max | tool errors |")
    print("|---|---:|---:|---:|---:|---:|")
    for (name, _), r in zip(queries, results):
        t = sorted(r["times_ms"])
        p90 = t[int(len(t) * 0.9)]
        print(
            f"| {name} | {statistics.median(t):.1f} ms | {p90:.1f} ms | {t[0]:.1f} ms | {t[-1]:.1f} ms | {r['errors']} |"
        )


def through_sdk(server, queries, n):
    """Each query's `{"times_ms", "errors"}` as client.py times them."""
    steps = [{"bench": "search", "args": {"query": "warm up"}, "n": 20}]
    steps += [{"bench": "search", "args": args, "n": n} for _, args in queries]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(steps, f)
    out = subprocess.run(
        [sys.executable, os.path.join(os.path.dirname(__file__), "client.py"), f.name, "--"] + server,
        check=True,
        capture_output=True,
        text=True,
    )
    os.unlink(f.name)
    return json.loads(out.stdout)["results"][1:]


def raw(server, queries, n):
    """Each query's `{"times_ms", "errors"}`, the calls written and read
    here: 5 calls to warm up, then n timed."""
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    ids = iter(range(1 << 30))

    def call(method, params):
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}) + "\n").encode())
        proc.stdin.flush()
        while True:
            message = json.loads(proc.stdout.readline())
            if "id" in message:
                return message

    call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "latency.py", "version": "1"}})
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    proc.stdin.flush()
    results = []
    for _, args in queries:
        times, errors = [], 0
        for i in range(5 + n):
            started = time.perf_counter()
            got = call("tools/call", {"name": "search", "arguments": args})
            elapsed = (time.perf_counter() - started) * 1000
            if i < 5:
                continue
            times.append(elapsed)
            if "result" not in got or got["result"].get("isError"):
                errors += 1
        results.append({"times_ms": times, "errors": errors})
    proc.stdin.close()
    proc.wait()
    return results


if __name__ == "__main__":
    main()
