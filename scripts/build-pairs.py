#!/usr/bin/env python3
"""Fresh builds of two pi-index binaries on one corpus, as interleaved pairs.

This machine's speed drifts from minute to minute, so two binaries are
compared run against run: A, B, A, B, ... (the order of each pair
alternates), and what is reported is the median of each side and the
median of the per-pair ratios (B / A), for wall time and for CPU time
(user + sys of the build and its threads). One warm-up pair first.

Usage: scripts/build-pairs.py --a OLD --b NEW --corpus DIR [--pairs 5]
       [--threads N] [--extra "ARGS"] [--json]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def one(binary, corpus, threads, extra):
    """One fresh build: (wall s, cpu s, peak RSS MB)."""
    index = tempfile.mkdtemp(prefix="pairs-index-")
    try:
        cmd = [binary, "build", corpus, "--index", index, "--full", "-q"]
        if threads:
            cmd += ["-j", str(threads)]
        cmd += extra
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed: {done.stderr.decode()}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, after.ru_maxrss / 1024
    finally:
        shutil.rmtree(index, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", required=True, help="the old binary")
    p.add_argument("--b", required=True, help="the new binary")
    p.add_argument("--corpus", required=True)
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--extra", default="", help="more arguments for both builds")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    extra = args.extra.split()
    one(args.a, args.corpus, args.threads, extra)
    one(args.b, args.corpus, args.threads, extra)
    runs = {"a": [], "b": []}
    for i in range(args.pairs):
        order = ["a", "b"] if i % 2 == 0 else ["b", "a"]
        for side in order:
            runs[side].append(one(getattr(args, side), args.corpus, args.threads, extra))
    med = lambda xs: statistics.median(xs)
    out = {
        "corpus": os.path.abspath(args.corpus),
        "pairs": args.pairs,
        "threads": args.threads or "default",
    }
    for k, i in [("wall", 0), ("cpu", 1)]:
        a = [r[i] for r in runs["a"]]
        b = [r[i] for r in runs["b"]]
        out[k] = {
            "a_median": round(med(a), 3),
            "b_median": round(med(b), 3),
            "ratio_median": round(med([y / x for x, y in zip(a, b)]), 4),
            "a": [round(x, 3) for x in a],
            "b": [round(x, 3) for x in b],
        }
    out["peak_rss_mb"] = {
        "a": round(max(r[2] for r in runs["a"])),
        "b": round(max(r[2] for r in runs["b"])),
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"{out['corpus']}: {args.pairs} interleaved pairs, threads {out['threads']}")
    for k in ["wall", "cpu"]:
        v = out[k]
        print(
            f"  {k:<4} A {v['a_median']:.3f} s  B {v['b_median']:.3f} s  "
            f"B/A median of pairs {v['ratio_median']:.4f}"
        )
    print(f"  peak RSS: A {out['peak_rss_mb']['a']} MB, B {out['peak_rss_mb']['b']} MB (largest child so far)")


if __name__ == "__main__":
    main()
