#!/usr/bin/env bash
# Installs the official MCP Python SDK (`mcp`, every package pinned in
# requirements.txt) into a virtual environment, for tests/mcp.rs and the
# latency measurement. Idempotent. Last stdout line: the venv's python.
# Usage: scripts/mcp/setup.sh [DIR]   (default: <repo>/target/mcp-venv)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=${1:-$repo/target/mcp-venv}
req=$here/requirements.txt
want=$(sed -n 's/^mcp==//p' "$req")
py=$dir/bin/python

have() { [ -x "$py" ] && "$py" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != sys.argv[1])' "$want" 2>/dev/null; }

if have; then
  echo "setup.sh: mcp $want already in $dir" >&2
else
  command -v python3 >/dev/null || { echo "setup.sh: python3 not found on PATH" >&2; exit 2; }
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || { echo "setup.sh: mcp $want needs Python 3.10 or newer, python3 is $(python3 --version 2>&1)" >&2; exit 2; }
  echo "setup.sh: installing mcp $want into $dir" >&2
  rm -rf "$dir"
  python3 -m venv "$dir" || { echo "setup.sh: python3 -m venv failed (on Debian: apt-get install python3-venv)" >&2; exit 1; }
  # Short timeouts: an unreachable index should fail in seconds.
  if ! "$py" -m pip install --quiet --disable-pip-version-check --timeout 30 --retries 1 \
        --requirement "$req" >&2; then
    echo "setup.sh: pip install failed (see above): cannot install the MCP Python SDK" >&2
    exit 1
  fi
  have || { echo "setup.sh: mcp $want is not importable after the install" >&2; exit 1; }
fi
echo "$py"
