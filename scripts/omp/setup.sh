#!/usr/bin/env bash
# Installs Oh My Pi and the Bun that runs it, both from npm and pinned, so
# tests and CI get the same writer every time. Last stdout line: the
# absolute path of the bun binary.
# Usage: scripts/omp/setup.sh [DIR]   (default: <repo>/target/omp-bun)
# Run Oh My Pi afterwards with either (both are the package's `omp`):
#   "$BUN" DIR/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js --version
#   PATH="DIR/node_modules/.bin:$PATH" omp --version   # the shim's `env bun` is then this bun
#
# OMP_VERSION is the newest release whose whole dependency set (its own
# @oh-my-pi/* packages, published together) the npm registry serves:
# 18.3.4 names @oh-my-pi/omp-stats@18.3.4 and others it does not hold.
# Its session format files (session-entries.ts, session-title-slot.ts,
# session-loader.ts) are those of 18.3.4. BUN_VERSION meets its
# `engines.bun` (>=1.3.14).
set -euo pipefail

BUN_VERSION=1.4.5
OMP_VERSION=18.2.3
OMP_PKG=@oh-my-pi/pi-coding-agent

repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$repo/target/omp-bun}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
bun=$dir/node_modules/bun/bin/bun.exe  # the package's "bin" (a native binary despite the name)
cli=$dir/node_modules/$OMP_PKG/dist/cli.js  # the package's "bin"

# Version of an installed package, or nothing (the first "version" key: the
# top-level one in npm's package.json files; no node needed to read it).
installed() {
  local pj=$dir/node_modules/$1/package.json
  [ -f "$pj" ] && sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$pj" | head -n1
}

# Tests may run this from several threads at once: one install at a time.
if command -v flock >/dev/null; then
  exec 9>"$dir/.setup.lock"
  flock 9
fi

if [ "$(installed bun)" = "$BUN_VERSION" ] && [ "$(installed "$OMP_PKG")" = "$OMP_VERSION" ] \
   && [ -x "$bun" ] && [ -f "$cli" ]; then
  echo "setup.sh: bun $BUN_VERSION and $OMP_PKG $OMP_VERSION already in $dir" >&2
else
  command -v npm >/dev/null || { echo "setup.sh: npm not found on PATH" >&2; exit 2; }
  # A tiny package.json of our own keeps npm from walking up into the repo.
  [ -f "$dir/package.json" ] || echo '{"name":"omp-bun","private":true}' > "$dir/package.json"
  echo "setup.sh: installing bun@$BUN_VERSION and $OMP_PKG@$OMP_VERSION into $dir" >&2
  # Short timeouts and few retries: an unreachable registry should fail in
  # seconds, not after npm's default minutes of retrying. The bun package's
  # install script (run by the machine's node) links its platform binary.
  if ! npm install --prefix "$dir" --no-audit --no-fund --save-exact --loglevel=error \
        --fetch-timeout=60000 --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 \
        "bun@$BUN_VERSION" "$OMP_PKG@$OMP_VERSION" >&2; then
    if ! timeout 30 npm ping --fetch-retries=0 >/dev/null 2>&1; then
      echo "setup.sh: the npm registry is unreachable (npm ping failed); cannot install Oh My Pi" >&2
    else
      echo "setup.sh: npm install failed (see above); the registry answers ping" >&2
    fi
    exit 1
  fi
fi

# Prove the pair works before handing it out: a broken install should fail
# here, not in a test far away. Oh My Pi writes into its config dir and Bun
# into its cache even to print a version: point HOME at DIR, not the user's.
export HOME=$dir/home-check
mkdir -p "$HOME"
v=$("$bun" --version) || { echo "setup.sh: $bun does not run" >&2; exit 1; }
[ "$v" = "$BUN_VERSION" ] || { echo "setup.sh: $bun is $v, not $BUN_VERSION" >&2; exit 1; }
ov=$("$bun" --no-install "$cli" --version 2>&1) || { echo "setup.sh: omp --version failed: $ov" >&2; exit 1; }
case $ov in *"$OMP_VERSION"*) ;; *) echo "setup.sh: omp --version says $ov, not $OMP_VERSION" >&2; exit 1 ;; esac
echo "setup.sh: omp $ov runs as: $bun $cli" >&2
echo "$bun"
