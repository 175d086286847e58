#!/usr/bin/env python3
"""Tool call latency of `pi-index mcp` without the SDK: JSON-RPC lines
written to the server's stdin and its answers read from stdout, in the
same process that times them (standard library only). What it measures is
the server and the pipe; client.py and latency.py measure what a client
built on the official Python SDK sees, which on a slow machine is mostly
the SDK's own time (docs/performance.md#copies-at-any-share).

    python3 scripts/mcp/raw_latency.py --bin target/release/pi-index \\
        --corpus DIR --index DIR [--n 100] [--query "memory allocation" ...]

Each query is called --n times after 5 calls to warm up; the median, p90,
min and max per query are printed as one JSON object. A call that does
not answer with a result stops the run with its answer.
"""

import argparse
import json
import statistics
import subprocess
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--query", action="append")
    a = ap.parse_args()
    queries = a.query or ["memory allocation", "iterator"]
    server = subprocess.Popen(
        [a.bin, "mcp", a.corpus, "--index", a.index],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    ids = iter(range(1, 1 << 30))

    def send(message):
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()

    def answer():
        while True:
            message = json.loads(server.stdout.readline())
            if "id" in message:
                return message

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "raw_latency", "version": "1"}}})
    answer()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    out = {}
    for query in queries:
        times = []
        for i in range(5 + a.n):
            started = time.perf_counter()
            send({"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
                  "params": {"name": "search", "arguments": {"query": query}}})
            got = answer()
            if "result" not in got:
                raise SystemExit(f"{query}: {got}")
            if i >= 5:
                times.append((time.perf_counter() - started) * 1000)
        times.sort()
        out[query] = {"median_ms": round(statistics.median(times), 3),
                      "p90_ms": round(times[int(0.9 * (len(times) - 1))], 3),
                      "min_ms": round(times[0], 3), "max_ms": round(times[-1], 3)}
    server.stdin.close()
    server.wait()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
