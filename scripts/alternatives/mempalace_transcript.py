#!/usr/bin/env python3
"""The transcript MemPalace 3.11.0 files for each Pi session: the reference for
comparing pi-index's extraction with MemPalace's (the origin of this project).

Run inside a venv with scripts/alternatives/requirements-mempalace.txt:

    python scripts/alternatives/mempalace_transcript.py FILE...        # JSON
    python scripts/alternatives/mempalace_transcript.py --raw FILE     # bytes

It calls mempalace.normalize.normalize_conversations(path), which is what
`mempalace mine --mode convos` calls per file (convo_miner.py,
_normalize_convo_conversations), keeping the non-empty conversations. For a
Pi file that is one string, identical to mempalace.normalize.normalize(path),
which mempalace_import.py times. Inside, a Pi session is recognized by
normalize._try_pi_jsonl and rendered by normalize._messages_to_transcript; when
_try_pi_jsonl declines (no "version" in the header, as in Pi's version-1 files,
or fewer than two messages with text), MemPalace files the raw file text
instead, so `pi` says whether it recognized the file. User text goes through
mempalace.spellcheck, a no-op unless the optional `autocorrect` package is
installed (it is not a dependency; keep it out of the venv for reference output).
"""
import json
import sys

from mempalace import normalize as mp


def transcript(path):
    # The miner drops empty conversations; a Pi file yields at most one.
    conversations = [c for c in mp.normalize_conversations(path) if c]
    return {
        "path": path,
        "pi": mp._try_pi_jsonl(mp._read_transcript_file(path)) is not None,
        "conversations": len(conversations),
        # How normalize() joins a bundle; for one conversation, just it.
        "transcript": "\n\n".join(conversations),
    }


def main():
    args = sys.argv[1:]
    raw = args[:1] == ["--raw"]
    files = args[1:] if raw else args
    if not files or (raw and len(files) != 1):
        sys.exit("usage: mempalace_transcript.py FILE... | --raw FILE")
    if raw:
        sys.stdout.write(transcript(files[0])["transcript"])
        return
    out = []
    for path in files:
        try:
            out.append(transcript(path))
        except Exception as e:  # MemPalace refuses some files (e.g. Codex logs it cannot read)
            out.append({"path": path, "error": f"{type(e).__name__}: {e}"})
    json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
