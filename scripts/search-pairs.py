#!/usr/bin/env python3
"""Fresh-process search latency of pi-index binaries, interleaved.

    python3 scripts/search-pairs.py RUNS INDEX NAME=BIN[@INDEX][:ARG,ARG] ...

For each of the five query shapes of the benchmarks (a rare word, a
common word, two words, a common phrase, a filtered word), RUNS rounds
after one warm-up: each round runs every binary once (`search -n 20`),
in an order rotated from round to round, timed by wait4. Prints a
Markdown table: each binary's median wall time, and the median of the
per-round ratios of the first binary's time over each other's (above 1:
the other is faster). A binary may search its own index (`@INDEX`: an
older schema needs its own build) and take extra arguments (`:--copies`).
Every run must exit 0.
"""
import os
import statistics
import subprocess
import sys
import time

SHAPES = [
    ("rare word", "zqplant0001"),
    ("`error`", "error"),
    ("two words", "error index"),
    ('`"the file"`', '"the file"'),
    ("`error role:user`", "error role:user"),
]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    runs, index = int(sys.argv[1]), sys.argv[2]
    cmds = []
    for spec in sys.argv[3:]:
        name, _, rest = spec.partition("=")
        binary, _, extra = rest.partition(":")
        binary, _, own = binary.partition("@")
        args = [a for a in extra.split(",") if a] + ["--index", own or index]
        cmds.append((name, binary, args))

    def run(binary, args, query):
        start = time.perf_counter()
        p = subprocess.Popen(
            [binary, "search", "-n", "20", *args, "--", query],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _, status, _ = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{binary} {args} {query!r}: exit {status}")
        return (time.perf_counter() - start) * 1000

    first = cmds[0][0]
    names = [c[0] for c in cmds]
    print("| shape | " + " | ".join(names) + " | "
          + " | ".join(f"{first} / {n}" for n in names[1:]) + " |")
    print("|---|" + "---:|" * (2 * len(names) - 1))
    for label, query in SHAPES:
        walls = {n: [] for n in names}
        ratios = {n: [] for n in names[1:]}
        for r in range(runs + 1):
            k = r % len(cmds)
            got = {n: run(b, a, query) for n, b, a in cmds[k:] + cmds[:k]}
            if r == 0:
                continue
            for n in names:
                walls[n].append(got[n])
            for n in names[1:]:
                ratios[n].append(got[first] / got[n])
        print(f"| {label} | "
              + " | ".join(f"{statistics.median(walls[n]):.2f} ms" for n in names)
              + " | "
              + " | ".join(f"{statistics.median(ratios[n]):.2f}x" for n in names[1:])
              + " |", flush=True)


if __name__ == "__main__":
    main()
