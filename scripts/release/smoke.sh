#!/usr/bin/env bash
# What the release workflow runs on each platform after package.sh: the
# packages in DIST installed as users install them, off the repository's
# target/ and with no cargo on PATH, then `pi-index --version` and the
# README's fixtures commands through each. (On Linux x64,
# tests/release.rs does the same and more, through a local registry and
# Pi itself.)
# Usage: scripts/release/smoke.sh DIST
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
dist=$(cd "${1:?usage: smoke.sh DIST}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say() { echo "smoke.sh: $*" >&2; }

case "$(uname -s)" in MINGW* | MSYS* | CYGWIN*) windows=1 ;; *) windows= ;; esac
# PATH without cargo: every directory that holds it left out.
clean_path() {
  local out= dir
  local IFS=:
  for dir in $PATH; do
    [ -e "$dir/cargo" ] || [ -e "$dir/cargo.exe" ] && continue
    out=${out:+$out:}$dir
  done
  echo "$out"
}
path=$(clean_path)
if PATH=$path command -v cargo >/dev/null 2>&1; then
  say "cargo is still on PATH"; exit 1
fi

# Run the installed pi-index (in DIR) as the README does.
check() {
  local dir=$1 how=$2
  (
    export PATH="$dir:$path"
    cd "$repo"
    say "$how: $(command -v pi-index)"
    pi-index --version
    pi-index --version | grep -q "^pi-index [0-9.]* (commit [0-9a-f]*, " || { say "$how: --version says no commit"; exit 1; }
    pi-index build fixtures/sessions --index "$work/index-$how" | tee "$work/build-$how"
    grep -q '^indexed 49 sessions (61 files seen, 12 rejected)' "$work/build-$how" || { say "$how: not the README's summary"; exit 1; }
    pi-index search notify --index "$work/index-$how" | tee "$work/search-$how"
    grep -q notify "$work/search-$how" || { say "$how: the search found nothing"; exit 1; }
  )
}

# npm: the platform's tarball and the main package, into an empty prefix.
npm install --global --prefix "$work/npm" --no-audit --no-fund "$dist"/pi-index-*-*.tgz "$dist"/pi-index-[0-9]*.tgz >&2
if [ -n "$windows" ]; then check "$work/npm" npm; else check "$work/npm/bin" npm; fi

# pip: the wheel into a fresh venv.
python=python3
command -v python3 >/dev/null || python=python
"$python" -m venv "$work/venv"
if [ -n "$windows" ]; then bin=$work/venv/Scripts; else bin=$work/venv/bin; fi
"$bin/python" -m pip install --no-index --disable-pip-version-check "$dist"/*.whl >&2
check "$bin" pip
say "ok"
