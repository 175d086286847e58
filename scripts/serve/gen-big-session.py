#!/usr/bin/env python3
"""Write one big Pi session for the web view's benchmark (issue 23: "the
50,000-message session (200 MB file) opens with its first screen
quickly"): MESSAGES messages alternating user and assistant, about MB
megabytes in all, every assistant turn with a tool call and its result
(drawn as tool rows on the page), dated after everything
`scripts/gen-corpus.py` writes, so that it is the newest session of a
corpus it is added to (and the one `scripts/serve/bench.py` and the
browser half, `serve::browser_latency`, open: the largest of the 100
newest).

    python3 scripts/serve/gen-big-session.py CORPUS/--home-user-big--/2027-01-01T00-00-00-000Z_big50000.jsonl

Deterministic; standard library only. Prints the session id.
"""

import argparse
import json
import os
import random

WORDS = ("the error is in the index reader when a session file grows while the build reads it "
         "so the parser sees a half written line and skips it until the next build which is fine "
         "but the test expected the hit at once fix the test not the parser").split()


def text(rng, chars):
    out, n = [], 0
    while n < chars:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--mb", type=float, default=200.0, help="size of the file, about (MB)")
    ap.add_argument("--id", default="big50000")
    args = ap.parse_args()
    rng = random.Random(50_000)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    # Less the JSON around the text (~425 bytes a message).
    per = max(int(args.mb * 1e6 / args.messages) - 425, 16)
    header = {"type": "session", "version": 3, "id": args.id,
              "timestamp": "2027-01-01T00:00:00.000Z", "cwd": "/home/user/big"}
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(header) + "\n")
        parent, n = None, 0
        for i in range(args.messages):
            ms = 1798761600000 + i * 1000
            ts = f"2027-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
            # A user turn of `per` bytes, an assistant turn of half that
            # and its tool result of the other half: `per` a message.
            if i % 2 == 0:
                msg = {"role": "user", "content": text(rng, per), "timestamp": ms}
                entries = [msg]
            else:
                call = f"call{i}"
                msg = {"role": "assistant", "content": [
                    {"type": "text", "text": text(rng, per // 2)},
                    {"type": "toolCall", "id": call, "name": "bash",
                     "arguments": {"command": f"cargo test --lib index::{i}"}}],
                    "provider": "anthropic", "model": "claude-sonnet-4-5",
                    "stopReason": "toolUse", "timestamp": ms}
                result = {"role": "toolResult", "toolCallId": call, "toolName": "bash",
                          "content": [{"type": "text", "text": text(rng, per // 2)}],
                          "isError": False, "timestamp": ms}
                entries = [msg, result]
            for m in entries:
                n += 1
                eid = f"{n:08x}"
                f.write(json.dumps({"type": "message", "id": eid, "parentId": parent,
                                    "timestamp": ts, "message": m}) + "\n")
                parent = eid
    print(args.id)


if __name__ == "__main__":
    main()
