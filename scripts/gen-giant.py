#!/usr/bin/env python3
"""Write a Pi session whose messages are giant lines, for measuring what
one giant line costs a build and a search (docs/limitations.md).

    scripts/gen-giant.py OUT.jsonl                   # one line of 209 MB
    scripts/gen-giant.py OUT.jsonl --lines 20 --mb 9 # twenty of 9.8 MB
    scripts/gen-giant.py OUT.jsonl --lines 2090 --mb 0.075 # 208 MB of text

The last form is no giant line at all but a session that is nothing but
message text, under the cap (a real session is ~7% text).

Each giant message is a user message of words, escapes and multi-byte
characters, beginning with `zqgiantstart` and ending with `zqgiantend`;
`zqwordy` is written all along it. With one giant line, an ordinary
message comes before it (`zqbefore`) and after it (`zqafter`).
Deterministic: the same arguments write the same bytes.
"""

import argparse
import json
import random

WORDS = ["alpha", "beta", "gamma", "delta", "error", "timeout", "caf\u00e9",
         "\u00e9t\u00e9", "\U0001F600", "path/to/file.rs", "fooBar", "snake_case",
         "\"quoted\"", "tab\there", "line\nbreak", "back\\slash", "zqwordy"]


def entry(i, parent, role, content):
    message = {"role": role, "content": content, "timestamp": 0}
    if role == "assistant":
        message.update(provider="p", model="m")
    return {"type": "message", "id": f"e{i}", "parentId": parent,
            "timestamp": "2026-04-01T10:00:01.000Z", "message": message}


def giant_text(rng, chars):
    parts, n = ["zqgiantstart"], 0
    while n < chars:
        chunk = " ".join(rng.choice(WORDS) for _ in range(2000))
        parts.append(chunk)
        n += len(chunk) + 1
    parts.append("zqgiantend")
    return " ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--lines", type=int, default=1, help="giant lines (1)")
    # 184 MiB of characters make a line of 200 million characters once
    # escaped, 209 MB in UTF-8.
    ap.add_argument("--mb", type=float, default=184,
                    help="MiB of characters in each giant message (184)")
    args = ap.parse_args()
    rng = random.Random(7)
    header = {"type": "session", "version": 3, "id": "giant-lines",
              "timestamp": "2026-04-01T10:00:00.000Z", "cwd": "/p"}
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(header) + "\n")
        lines, parent = [], None
        if args.lines == 1:
            lines.append(("user", "zqbefore a small question"))
        for _ in range(args.lines):
            lines.append(("user", giant_text(rng, int(args.mb * (1 << 20)))))
        if args.lines == 1:
            lines.append(("assistant", [{"type": "text", "text": "zqafter the giant"}]))
        for i, (role, content) in enumerate(lines):
            line = json.dumps(entry(i, parent, role, content), ensure_ascii=False)
            f.write(line + "\n")
            parent = f"e{i}"
            size = len(line.encode("utf-8"))
            if size > 1 << 20:
                print(f"line {i + 2}: {size:,} bytes")


if __name__ == "__main__":
    main()
