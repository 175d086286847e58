#!/usr/bin/env bash
# Installs what packaging and its test need, pinned: maturin (pip, into
# target/release-venv), which builds the wheel; uv (the same venv), whose
# `uv tool install` tests/release.rs runs on it; and verdaccio (npm, into
# target/verdaccio), the local npm registry tests/release.rs publishes to.
# Idempotent. Last three stdout lines: the maturin binary, the uv binary,
# then verdaccio's entry script (run it with Node 22: scripts/pi/setup.sh's).
# Usage: scripts/release/setup.sh
set -euo pipefail

MATURIN_VERSION=1.16.0
UV_VERSION=0.13.8
VERDACCIO_VERSION=6.8.0

repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=$repo/target/release-venv
reg=$repo/target/verdaccio
mkdir -p "$repo/target"

# Tests may run this from several threads at once: one install at a time.
if command -v flock >/dev/null; then
  exec 9>"$repo/target/.release-setup.lock"
  flock 9
fi

maturin=$venv/bin/maturin
uv=$venv/bin/uv
if [ -x "$maturin" ] && [ "$("$maturin" --version 2>/dev/null)" = "maturin $MATURIN_VERSION" ] \
   && [ -x "$uv" ] && [ "$("$uv" --version 2>/dev/null | cut -d' ' -f1-2)" = "uv $UV_VERSION" ]; then
  echo "setup.sh: maturin $MATURIN_VERSION and uv $UV_VERSION already in $venv" >&2
else
  command -v python3 >/dev/null || { echo "setup.sh: python3 not found on PATH" >&2; exit 2; }
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || { echo "setup.sh: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION" "uv==$UV_VERSION" >&2 \
    || { echo "setup.sh: pip could not install maturin==$MATURIN_VERSION and uv==$UV_VERSION" >&2; exit 1; }
fi

entry=$reg/node_modules/verdaccio/bin/verdaccio
installed=$(sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$reg/node_modules/verdaccio/package.json" 2>/dev/null | head -n1 || true)
if [ -f "$entry" ] && [ "$installed" = "$VERDACCIO_VERSION" ]; then
  echo "setup.sh: verdaccio $VERDACCIO_VERSION already in $reg" >&2
else
  command -v npm >/dev/null || { echo "setup.sh: npm not found on PATH" >&2; exit 2; }
  mkdir -p "$reg"
  # A package.json of our own keeps npm from walking up into the repo.
  [ -f "$reg/package.json" ] || echo '{"name":"verdaccio-here","private":true}' > "$reg/package.json"
  npm install --prefix "$reg" --no-audit --no-fund --save-exact --loglevel=error \
    --fetch-timeout=60000 --fetch-retries=1 "verdaccio@$VERDACCIO_VERSION" >&2 \
    || { echo "setup.sh: npm could not install verdaccio@$VERDACCIO_VERSION" >&2; exit 1; }
fi
[ -f "$entry" ] || { echo "setup.sh: $entry is missing after the install" >&2; exit 1; }
echo "$maturin"
echo "$uv"
echo "$entry"
