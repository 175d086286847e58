#!/usr/bin/env python3
"""MemPalace's own importer on every session file: what its Pi support (the
origin of this project) costs. Needs `pip install mempalace`. Only extracts
(normalize returns a transcript); pi-index also indexes."""
import os
import sys

from mempalace.normalize import normalize


def main():
    files = chars = failed = 0
    for root in sys.argv[1:]:
        for d, _, names in os.walk(root):
            for name in names:
                if name.endswith(".jsonl"):
                    try:
                        out = normalize(os.path.join(d, name))
                    except Exception:  # decoys and damaged files: counted
                        failed += 1
                        continue
                    files += 1
                    chars += len(out or "")
    print(f"{files} files, {failed} refused, {chars} transcript characters")


if __name__ == "__main__":
    main()
