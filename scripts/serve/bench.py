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
    python3 scripts/serve/gen-big-session.py \
        CORPUS/--home-user-big--/2027-01-01T00-00-00-000Z_big50000.jsonl
    target/release/pi-index build CORPUS --index IDX
    python3 scripts/serve/bench.py --bin target/release/pi-index --index IDX --session big50000

With --db URL instead of --index, the server is `pi-index serve --db URL`
(the team database, as `pi-index push` fills it) and the same shapes are
timed there; the session page is the host's.

    python3 scripts/serve/bench.py --bin target/release/pi-index --db postgres://USER@HOST/DB

The big session (50,000 messages, 200 MB) is the newest of the corpus:
without --session the largest of the 100 newest sessions is opened, which
is it. The browser half (keystroke to painted results, the big session's
first screen in Chromium) is `PI_INDEX_BENCH_INDEX=IDX cargo test
--release --test tests serve::browser_latency -- --ignored --nocapture`.
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
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--index", help="the local index to serve")
    where.add_argument("--db", help="the team database to serve (postgres://...)")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--endpoint", default="/api/search", help="/api/search or /api/sessions")
    ap.add_argument("--session", help="the session whose first window is timed (by id; default: "
                    "the largest of the 100 newest)")
    ap.add_argument("--pages", type=int, default=20, help="first-window requests of that session")
    args = ap.parse_args()

    source = ["--db", args.db] if args.db else ["--no-refresh", "--index", args.index]
    server = subprocess.Popen(
        [args.bin, "serve", "--port", "0", *source],
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

        if args.session:
            found = f"/api/session/{urllib.parse.quote(args.session, safe='')}?limit=1"
            if args.db:
                # The host with the most sessions.
                _, body = get("/api/stats")
                host = json.loads(body)["stats"]["hosts"][0]["host"]
                found += f"&host={urllib.parse.quote(host, safe='')}"
            _, body = get(found)
            biggest, which = json.loads(body)["session"], f"session {args.session}"
        else:
            _, body = get("/api/sessions?limit=100")
            sessions = json.loads(body)["sessions"]
            biggest = max(sessions, key=lambda s: s["messages"]) if sessions else None
            which = "largest of the 100 newest sessions"
        if biggest:
            _, body = get("/api/stats")
            path = f"/session/{urllib.parse.quote(biggest['session_id'], safe='')}"
            if "host" in biggest:
                path += f"?host={urllib.parse.quote(biggest['host'], safe='')}"
            # The first request reads the file's tree (once per version of
            # the file): said apart.
            cold, page = get(path)
            times = []
            for _ in range(args.pages):
                dt, page = get(path)
                times.append(dt)
            print(f"\nsession page, first window ({which}, {biggest['messages']} messages): "
                  f"first request {cold:.1f} ms, then median {statistics.median(times):.1f} ms, "
                  f"p99 {pct(times, 99):.1f} ms over {len(times)}; {len(page) / 1e3:.0f} KB of HTML")
        with open(f"/proc/{server.pid}/status") as f:
            hwm = next(l for l in f if l.startswith("VmHWM")).split()[1]
        print(f"server peak RSS (VmHWM): {int(hwm) / 1024:.0f} MB")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
