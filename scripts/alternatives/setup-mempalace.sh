#!/usr/bin/env bash
# Installs MemPalace 3.11.0 (pinned in requirements-mempalace.txt) into a
# venv, so tests and CI compare pi-index's transcripts with MemPalace's
# own, always the same release. Last stdout line: the venv's python.
# Usage: scripts/alternatives/setup-mempalace.sh [DIR]   (default: <repo>/target/mempalace-venv)
#
# The package is installed without its dependencies (--no-deps): the code
# the reference runs (mempalace.normalize, mempalace.spellcheck) imports
# only the standard library, while the dependencies (chromadb, onnxruntime,
# tokenizers, ...) are hundreds of MB that only its vector store needs.
# Its optional spell checker (`autocorrect`, an extra) must stay out: with
# it installed, MemPalace rewrites user text. MEMPALACE_FULL=1 installs
# the dependencies too (what `pip install mempalace` gives a user).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$repo/target/mempalace-venv}
req=$repo/scripts/alternatives/requirements-mempalace.txt
want=$(sed -n 's/^mempalace==\(.*\)$/\1/p' "$req")
py=$dir/bin/python

# Tests may run this from several threads at once: one install at a time.
mkdir -p "$dir"
if command -v flock >/dev/null; then
  exec 9>"$dir/.setup.lock"
  flock 9
fi

have() {
  [ -x "$py" ] && "$py" -c 'import importlib.metadata as m; print(m.version("mempalace"))' 2>/dev/null
}

if [ "$(have || true)" = "$want" ]; then
  echo "setup-mempalace.sh: mempalace $want already in $dir" >&2
else
  command -v python3 >/dev/null || { echo "setup-mempalace.sh: python3 not found on PATH" >&2; exit 2; }
  echo "setup-mempalace.sh: installing mempalace $want into $dir" >&2
  python3 -m venv "$dir" >&2 || { echo "setup-mempalace.sh: python3 -m venv failed (is the venv module installed?)" >&2; exit 1; }
  deps=--no-deps
  [ "${MEMPALACE_FULL:-}" = 1 ] && deps=
  # Short timeouts: an unreachable index should fail in seconds.
  if ! "$py" -m pip install --quiet --disable-pip-version-check --timeout 60 --retries 1 $deps -r "$req" >&2; then
    echo "setup-mempalace.sh: pip install failed (is the package index reachable?)" >&2
    exit 1
  fi
fi
if "$py" -c 'import autocorrect' 2>/dev/null; then
  echo "setup-mempalace.sh: autocorrect is installed in $dir: MemPalace would spell-check user text; remove it" >&2
  exit 1
fi
"$py" -c 'from mempalace import normalize; normalize._try_pi_jsonl' \
  || { echo "setup-mempalace.sh: mempalace.normalize does not import" >&2; exit 1; }
echo "setup-mempalace.sh: mempalace $(have) runs as $py" >&2
echo "$py"
