#!/usr/bin/env python3
"""Latency of `pi-index serve`'s JSON API over HTTP, and the server's memory.

Starts `pi-index serve --no-refresh --port 0` on an index, waits for its
URL, warms it, then sends REQUESTS requests per query shape (one rare
word, one common word, two words, a phrase, filtered, sorted) over one
keep-alive connection, and prints the median and p99 per shape (client
side: request written to body read), the first screen of the largest
session (`/session/ID`, the page's HTML), and the server's peak RSS
(VmHWM). Standard library only.

    python3 scripts/gen-corpus.py --out CORPUS --size 1GB --seed 42
    target/release/pi-index build CORPUS --index IDX
    python3 scripts/serve/bench.py --bin target/release/pi-index --index IDX
"""

import argparse
import http.client
import json
import re
import statistics
import subprocess
import sys
import time
import urllib.parse

SHAPES = [
    ("rare word", "zqplant0001", ""),
    ("common word", "error", ""),
    ("two words", "error index", ""),
    ("phrase", '"zqphrase01a zqphrase01b"', ""),
    ("filtered", "error role:user", ""),
    ("sorted", "error", "&sort=newest"),
]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/pi-index")
    ap.add_argument("--index", required=True)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--endpoint", default="/api/search", help="/api/search or /api/sessions")
    args = ap.parse_args()

    server = subprocess.Popen(
        [args.bin, "serve", "--no-refresh", "--port", "0", "--index", args.index],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            sys.exit(f"serve did not print its URL: {line!r}")
        port = int(m.group(1))
        conn = http.client.HTTPConnection("127.0.0.1", port)

        def get(path):
            t = time.perf_counter()
            conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
            r = conn.getresponse()
            body = r.read()
            dt = (time.perf_counter() - t) * 1000
            if r.status != 200:
                sys.exit(f"{path}: {r.status} {body[:200]!r}")
            return dt, body

        print(f"{args.endpoint}, {args.requests} requests per shape, one keep-alive connection")
        print("| shape | query | hits | median | p99 |")
        print("|---|---|---:|---:|---:|")
        for name, q, extra in SHAPES:
            path = f"{args.endpoint}?q={urllib.parse.quote(q)}{extra}"
            for _ in range(20):
                get(path)
            times = []
            for _ in range(args.requests):
                dt, body = get(path)
                times.append(dt)
            total = json.loads(body).get("total")
            print(f"| {name} | `{q}{extra.replace('&', ' ')}` | {total} | "
                  f"{statistics.median(times):.2f} ms | {pct(times, 99):.2f} ms |")

        _, body = get("/api/sessions?limit=100")
        sessions = json.loads(body)["sessions"]
        if sessions:
            _, body = get("/api/stats")
            biggest = max(sessions, key=lambda s: s["messages"])
            times = []
            for i in range(21):
                dt, page = get(f"/session/{urllib.parse.quote(biggest['session_id'], safe='')}")
                if i:
                    times.append(dt)
            print(f"\nsession page, first window (largest of the 100 newest sessions, "
                  f"{biggest['messages']} messages): median {statistics.median(times):.1f} ms, "
                  f"{len(page) / 1e3:.0f} KB of HTML")
        with open(f"/proc/{server.pid}/status") as f:
            hwm = next(l for l in f if l.startswith("VmHWM")).split()[1]
        print(f"server peak RSS (VmHWM): {int(hwm) / 1024:.0f} MB")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
