#!/usr/bin/env python3
"""Segments an index keeps over months of incremental builds, by merge policy.

    python3 scripts/merge-model.py [--seed 1]

A model of segment sizes only (documents per segment), no index: each build
adds its segments (one, or two when it writes more than 600 documents, as
two writers do), then the policy's merges run until it asks for none, as
after a commit. Two policies:

- before: tantivy's log policy as incremental builds used it until the
  tiers (segments of at most 2,000 documents, layers from 100, eight of a
  layer merged);
- tiers: `Tiers` in src/index/writer.rs (segments under 2,000 one tier,
  each tier above four times as large, four of a tier merged smallest
  first into one no larger than the largest segment, a third of the index
  or 8,000 documents, whichever is most; segments that large left alone).

For three made-up histories it prints the segments after a build (mean,
most, last), the documents merged in all, and the most one build merged:
the table of docs/performance.md#months-of-incremental-builds.
"""
import argparse
import math
import random


def before(segs):
    sizes = sorted((x for x in segs if x <= 2000), reverse=True)
    levels, top = [], math.inf
    for x in sizes:
        size = math.log2(max(100, x))
        if not levels or size < top - 0.75:
            top = size
            levels.append([])
        levels[-1].append(x)
    return [level for level in levels if len(level) >= 8]


def tier(x):
    t, q = 0, x // 2000
    while q:
        t, q = t + 1, q // 4
    return t


def tiers(segs):
    most = max(max(segs), 4 * 2000, sum(segs) // 3)
    by_tier = {}
    for x in segs:
        if x < most:
            by_tier.setdefault(tier(x), []).append(x)
    groups = []
    for members in by_tier.values():
        if len(members) < 4:
            continue
        group, docs = [], 0
        for x in sorted(members):
            if docs + x > most:
                break
            group.append(x)
            docs += x
        if len(group) > 1:
            groups.append(group)
    return groups


def run(policy, base, builds):
    segs, counts, merged, worst = list(base), [], 0, 0
    for added in builds:
        segs += added
        spent = 0
        while groups := policy(segs):
            for group in groups:
                for x in group:
                    segs.remove(x)
                segs.append(sum(group))
                spent += sum(group)
        merged += spent
        worst = max(worst, spent)
        counts.append(len(segs))
    return sum(counts) / len(counts), max(counts), counts[-1], merged, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    rnd = random.Random(ap.parse_args().seed)

    def split(n):
        return [n // 2, n - n // 2] if n > 600 else [n]

    histories = [
        ("a year of three builds a day of 50-550 messages on 147,000",
         [73_000, 74_000], [split(rnd.randint(50, 550)) for _ in range(3 * 365)]),
        ("20,000 builds of 1-30 messages (a watching server)",
         [73_000, 74_000], [[rnd.randint(1, 30)] for _ in range(20_000)]),
        ("a year of five builds a day of 50-1,500 on 288,000",
         [96_000] * 3, [split(rnd.randint(50, 1500)) for _ in range(5 * 365)]),
    ]
    print("| history | policy | segments: mean, most, last | documents merged (per document added) | most in one build |")
    print("|---|---|---:|---:|---:|")
    for name, base, builds in histories:
        for pname, policy in (("before", before), ("tiers", tiers)):
            mean, most, last, merged, worst = run(policy, base, builds)
            added = sum(map(sum, builds))
            print(f"| {name} | {pname} | {mean:.1f}, {most}, {last} | {merged:,} ({merged / added:.1f}) | {worst:,} |")


if __name__ == "__main__":
    main()
