#!/usr/bin/env bash
# Installs ccusage 20.0.24 (npm, a native binary per platform in its
# optional dependencies), pinned, so tests and CI compare `pi-index usage`
# with `ccusage pi daily` on the same files. Last stdout line: the ccusage
# binary. (20.0.26, the newest at writing, names a linux-x64 package the
# registry does not have.)
# Usage: scripts/alternatives/setup-ccusage.sh [DIR]   (default: <repo>/target/ccusage)
set -euo pipefail

VERSION=20.0.24
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$repo/target/ccusage}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
bin=$dir/node_modules/.bin/ccusage

# Tests may run this from several threads at once: one install at a time.
if command -v flock >/dev/null; then
  exec 9>"$dir/.setup.lock"
  flock 9
fi

installed() {
  local pj=$dir/node_modules/ccusage/package.json
  [ -f "$pj" ] && sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$pj" | head -n1
}

if [ "$(installed)" = "$VERSION" ] && [ -x "$bin" ]; then
  echo "setup-ccusage.sh: ccusage $VERSION already in $dir" >&2
else
  command -v npm >/dev/null || { echo "setup-ccusage.sh: npm not found on PATH" >&2; exit 2; }
  echo '{"name":"ccusage-reference","private":true}' > "$dir/package.json"
  rm -f "$dir/package-lock.json"
  echo "setup-ccusage.sh: installing ccusage@$VERSION into $dir" >&2
  if ! npm install --prefix "$dir" --no-audit --no-fund --save-exact --loglevel=error \
        --fetch-timeout=60000 --fetch-retries=1 "ccusage@$VERSION" >&2; then
    echo "setup-ccusage.sh: npm install failed (see above)" >&2
    exit 1
  fi
fi
# Prove it runs before handing it out.
HOME=$dir/home "$bin" --version >/dev/null 2>&1 || { echo "setup-ccusage.sh: ccusage does not run (its native binary for this platform is missing?)" >&2; exit 1; }
echo "$bin"
