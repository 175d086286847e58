#!/usr/bin/env python3
"""Write scripts/link-order.txt: the functions pi-index's short commands run.

Every pi-index command is a fresh process, and a fresh process pays a page
fault for each 64 KB of code it touches. build.rs hands this list to LLD
(`--symbol-ordering-file`), which places these functions first and side by
side, so a search touches a few hundred KB of code instead of pages spread
over 14 MB of `.text`.

The list is made from the release build (symbol names carry a hash of the
profile, the lockfile and the toolchain: a list made from another build
matches few names, and names that match nothing are skipped by the link):

    cargo build --release
    python3 scripts/link-order.py            # rewrites scripts/link-order.txt
    cargo build --release                    # links with it

It indexes the bundled fixtures into a scratch directory, runs the short
commands (search shapes, --json, sessions, show, stats, a build with nothing
changed, --version) under valgrind's callgrind, and lists every function of
the binary they execute, in the order the commands are given (searches
first). Needs valgrind (callgrind_annotate). Regenerate after a toolchain or
lockfile change, or when a command's code moved a lot; `--check` says how
many listed names the current build still defines.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "scripts", "link-order.txt")

HEADER = """\
# Functions pi-index's short commands run, placed first and together by the
# linker (build.rs: LLD --symbol-ordering-file). Made by
# scripts/link-order.py from the release build; names the build does not
# define are skipped. Do not edit by hand.
"""


def commands(index, session):
    q = ["search", "--index", index, "--color", "never"]
    return [
        q + ["error"],
        q + ["zqnotaword"],
        q + ["error", "index"],
        q + ['"the file"'],
        q + ["error", "role:user"],
        q + ["error", "--sort", "newest"],
        q + ["headermap"],
        ["search", "--index", index, "--json", "error"],
        ["sessions", "--index", index, "-n", "5"],
        ["sessions", "--index", index, "--json", "-n", "5"],
        ["show", session, "--index", index],
        ["stats", "--index", index],
        ["build", "--index", index, os.path.join(ROOT, "fixtures")],
        ["--version"],
    ]


def executed(binary, argv, scratch):
    """Mangled names of the binary's functions `argv` executes."""
    out = os.path.join(scratch, "callgrind.out")
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", binary, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    text = subprocess.run(
        ["callgrind_annotate", "--threshold=100", out], capture_output=True, text=True, check=True
    ).stdout
    tail = f" [{os.path.realpath(binary)}]"
    names = []
    for line in text.splitlines():
        if line.endswith(tail):
            names.append(re.sub(r"^.*:", "", line[: -len(tail)]))
    return names


def defined(binary):
    nm = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    return {parts[-1] for parts in (l.split() for l in nm.splitlines()) if parts}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "pi-index"))
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--check", action="store_true", help="count the listed names BIN defines; write nothing")
    args = ap.parse_args()
    if not os.path.isfile(args.bin):
        sys.exit(f"link-order: no binary at {args.bin}: run `cargo build --release` first")
    if args.check:
        listed = [l for l in open(args.out).read().splitlines() if l and not l.startswith("#")]
        have = defined(args.bin)
        found = sum(1 for n in listed if n in have)
        print(f"{found} of {len(listed)} listed functions are defined by {args.bin}")
        return
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        sys.exit("link-order: needs valgrind (apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as scratch:
        index = os.path.join(scratch, "index")
        subprocess.run(
            [args.bin, "build", "--index", index, os.path.join(ROOT, "fixtures")],
            stdout=subprocess.DEVNULL,
            check=True,
        )
        listing = subprocess.run(
            [args.bin, "sessions", "--index", index, "--json", "-n", "1"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        session = re.search(r'"session_id"\s*:\s*"([^"]+)"', listing).group(1)
        seen = {}
        for argv in commands(index, session):
            for name in executed(args.bin, argv, scratch):
                seen.setdefault(name, None)
    have = defined(args.bin)
    names = [n for n in seen if n in have]
    with open(args.out, "w") as f:
        f.write(HEADER)
        f.write("\n".join(names) + "\n")
    print(f"link-order: {len(names)} functions written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
