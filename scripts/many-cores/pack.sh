#!/usr/bin/env bash
# Packs what scripts/many-cores/run.sh needs on a machine that has many
# cores but no network and no Rust (a lent device machine, say) into
# .many-cores/ (ignored by git; name it in the device's `carry`):
#   pi-index                 the release build, stripped
#   sources.tar.xz           the source files gen-corpus.py --vocab real reads
#                            (this machine's cargo registry, only the files it
#                            can pick), so the corpus there is the corpus here
#   fast_resume-*.whl        fast-resume 2.14 (a native `fr` in a wheel), the
#                            peer the scaling table puts beside pi-index
#
# Usage: scripts/many-cores/pack.sh [--bin PATH]
#   --bin  pack this binary (stripped on the way) instead of building
#          `cargo build --profile release-stripped`
# About 45 MB in all; the device carries at most 64 MiB with the tree.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
dest=$repo/.many-cores
bin=
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    *) echo "pack.sh: unknown argument $1 (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
say() { echo "pack.sh: $*" >&2; }
mkdir -p "$dest"

if [ -z "$bin" ]; then
  say "building the release binary (fat LTO: several minutes)"
  (cd "$repo" && cargo build --locked --profile release-stripped --bin pi-index)
  bin=$repo/target/release-stripped/pi-index
fi
strip -o "$dest/pi-index" "$bin"
"$dest/pi-index" --version >&2

# gen-corpus.py picks among the .rs/.md/.toml/.json/.py/.ts/.js files of at
# most 256,000 bytes below $CARGO_HOME/registry/src/*/, outside hidden
# folders, target/ and node_modules/: carrying all of them (and nothing
# else) gives the same pick, so the same corpus, for every seed.
home=${CARGO_HOME:-$HOME/.cargo}
[ -d "$home/registry/src" ] || { say "no $home/registry/src: run \`cargo fetch\` in the project first"; exit 1; }
if [ ! -s "$dest/sources.tar.xz" ]; then
  say "packing the corpus generator's sources from $home/registry/src (a minute or two)"
  (cd "$home" && find registry/src -type f \( -name '*.rs' -o -name '*.md' -o -name '*.markdown' \
      -o -name '*.toml' -o -name '*.json' -o -name '*.py' -o -name '*.ts' -o -name '*.tsx' \
      -o -name '*.js' -o -name '*.mjs' \) -size -251k -not -path '*/.*' -not -path '*/target/*' \
      -not -path '*/node_modules/*' -print0 | sort -z | tar --null -T - -cf - | xz -9 -T0 >"$dest/sources.tar.xz.part")
  mv "$dest/sources.tar.xz.part" "$dest/sources.tar.xz"
fi

if ! ls "$dest"/fast_resume-*.whl >/dev/null 2>&1; then
  say "downloading fast-resume 2.14.0's wheel"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_17_x86_64 -d "$dest" fast-resume==2.14.0 \
    || say "no fast-resume wheel (no network?): run.sh will leave fast-resume out"
fi
du -sh "$dest"/* >&2
say "done: carry .many-cores and run \`bash scripts/many-cores/run.sh\` there"
