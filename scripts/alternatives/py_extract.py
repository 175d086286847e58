#!/usr/bin/env python3
"""The plain Python extractor a user would write: json.loads every line and
apply pi-index's default rules (user and assistant text, joined text blocks,
trimmed, non-empty). Prints documents and text bytes. Used by bench.sh."""
import json
import os
import sys


def extract(path):
    docs = 0
    text_bytes = 0
    with open(path, "rb") as f:
        first = f.readline()
        try:
            head = json.loads(first)
        except ValueError:
            return 0, 0
        if not isinstance(head, dict) or head.get("type") != "session":
            return 0, 0
        for line in f:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict) or entry.get("type") != "message":
                continue
            m = entry.get("message") or {}
            if m.get("role") not in ("user", "assistant"):
                continue
            c = m.get("content")
            if isinstance(c, str):
                text = c
            elif isinstance(c, list):
                text = "\n".join(
                    b["text"] for b in c
                    if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
                )
            else:
                continue
            text = text.strip()
            if text:
                docs += 1
                text_bytes += len(text.encode())
    return docs, text_bytes


def main():
    docs = text = 0
    for root in sys.argv[1:]:
        for d, _, files in os.walk(root):
            for name in files:
                if name.endswith(".jsonl"):
                    a, b = extract(os.path.join(d, name))
                    docs += a
                    text += b
    print(f"{docs} documents, {text} text bytes")


if __name__ == "__main__":
    main()
