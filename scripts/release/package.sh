#!/usr/bin/env bash
# Builds the packages of one platform into OUT (default target/dist):
#   pi-index-VERSION.tgz              the npm package `pi-index` (launcher
#                                     and Pi extension, integrations/pi)
#   pi-index-PLATFORM-VERSION.tgz     the npm package `@pi-index/PLATFORM`
#                                     (the stripped binary)
#   pi_index-VERSION-py3-none-TAG.whl the PyPI wheel (maturin, bindings = "bin")
# and prints each file's size. PLATFORM is the npm name of the target
# (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64).
#
# Usage: scripts/release/package.sh [--profile P] [--features F] [--target T] [--out DIR]
#   --profile  the Cargo profile to build and ship (default
#              release-stripped: the release build, stripped; tests pass
#              the one they already built, e.g. dev, whose binary is
#              stripped here instead)
#   --features Cargo features of that build (tests: failpoints)
#   --target   a target triple (default: this machine's)
# Needs cargo, node with npm, and maturin ($MATURIN, else on PATH, else
# target/release-venv from scripts/release/setup.sh).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
profile=release-stripped features= target= out=$repo/target/dist
while [ $# -gt 0 ]; do
  case $1 in
    --profile) profile=$2; shift 2 ;;
    --features) features=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "package.sh: unknown argument $1 (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
say() { echo "package.sh: $*" >&2; }
die() { say "$*"; exit 1; }

host=$(rustc -vV | sed -n 's/^host: //p')
triple=${target:-$host}
case $triple in
  x86_64-unknown-linux-gnu) platform=linux-x64 os=linux cpu=x64 ;;
  aarch64-unknown-linux-gnu) platform=linux-arm64 os=linux cpu=arm64 ;;
  x86_64-apple-darwin) platform=darwin-x64 os=darwin cpu=x64 ;;
  aarch64-apple-darwin) platform=darwin-arm64 os=darwin cpu=arm64 ;;
  x86_64-pc-windows-msvc) platform=win32-x64 os=win32 cpu=x64 ;;
  *) die "no npm package is named for the target $triple (see the list in $0)" ;;
esac
exe=pi-index
[ "$os" = win32 ] && exe=pi-index.exe

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -n1)
[ -n "$version" ] || die "no version in $repo/Cargo.toml"
# The npm package's own version and its platform packages' are Cargo's.
node - "$repo/integrations/pi/package.json" "$version" <<'JS' || die "integrations/pi/package.json is not at version $version (Cargo.toml's): change both"
const [file, version] = process.argv.slice(2);
const pkg = require(file);
const wrong = [["version", pkg.version], ...Object.entries(pkg.optionalDependencies)].filter(([, v]) => v !== version);
if (wrong.length) { console.error(wrong.map(([k, v]) => `${k}: ${v}`).join(", ")); process.exit(1); }
JS

# The binary: built (nothing to do when it is up to date) with the
# profile and features asked for.
cargo_args=(--locked --profile "$profile" --bin pi-index)
[ -n "$features" ] && cargo_args+=(--features "$features")
[ -n "$target" ] && cargo_args+=(--target "$target")
say "cargo build ${cargo_args[*]}"
(cd "$repo" && cargo build "${cargo_args[@]}" >&2)
case $profile in dev | test) dir=debug ;; release | bench) dir=release ;; *) dir=$profile ;; esac
built=$repo/target/${target:+$target/}$dir/$exe
[ -x "$built" ] || die "cargo built no $built"
[ "$(cd "$(dirname "$built")" && pwd)" != "$(mkdir -p "$out" && cd "$out" && pwd)" ] \
  || die "--out $out is where cargo puts the $profile build: choose another"

mkdir -p "$out"
stage=$out/stage
rm -rf "$stage"
rm -f "$out"/pi-index-*.tgz "$out"/pi_index-*.whl
mkdir -p "$stage/platform/bin" "$stage/main"

# The platform package: the binary, stripped (release-stripped is
# already), its os/cpu/libc for npm.
cp "$built" "$stage/platform/bin/$exe"
cp "$repo/LICENSE" "$stage/platform/LICENSE"
if [ "$profile" != release-stripped ] && [ "$os" != win32 ] && command -v strip >/dev/null; then
  strip "$stage/platform/bin/$exe"
fi
chmod 755 "$stage/platform/bin/$exe"
libc=
[ "$os" = linux ] && libc='"libc": ["glibc"],'
# Built by GitHub Actions: the repository, which npm's provenance checks
# against the workflow that built the package.
repository= repository_json=
if [ -n "${GITHUB_REPOSITORY:-}" ]; then
  repository="git+${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_REPOSITORY.git"
  repository_json="\"repository\": {\"type\": \"git\", \"url\": \"$repository\"},"
fi
cat > "$stage/platform/package.json" <<JSON
{
  "name": "@pi-index/$platform",
  "version": "$version",
  "description": "The pi-index binary for $platform, installed by the pi-index package",
  "license": "MIT",
  "os": ["$os"],
  "cpu": ["$cpu"],
  $libc
  $repository_json
  "files": ["bin/", "LICENSE"],
  "preferUnplugged": true
}
JSON
cat > "$stage/platform/README.md" <<MD
# @pi-index/$platform

The \`pi-index\` binary ($triple) for the npm package
[\`pi-index\`](https://www.npmjs.com/package/pi-index), which installs it
as an optional dependency on $platform: install \`pi-index\`, not this.
MD

# The main package: integrations/pi as it is in the repository.
cp -R "$repo/integrations/pi/." "$stage/main/"
cp "$repo/LICENSE" "$stage/main/LICENSE"
if [ -n "$repository" ]; then
  node - "$stage/main/package.json" "$repository" <<'JS'
const fs = require("node:fs");
const [file, url] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
pkg.repository = { type: "git", url };
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
JS
fi

(cd "$stage/platform" && npm pack --silent --pack-destination "$out" >/dev/null)
(cd "$stage/main" && npm pack --silent --pack-destination "$out" >/dev/null)

# The wheel: maturin builds the same profile (its cargo run finds the
# binary built above); a profile that does not strip is stripped by it.
maturin=${MATURIN:-$(command -v maturin || echo "$repo/target/release-venv/bin/maturin")}
[ -x "$maturin" ] || die "maturin not found: run scripts/release/setup.sh or set MATURIN"
wheel_args=(build --profile "$profile" --out "$out")
[ -n "$features" ] && wheel_args+=(--features "$features")
[ -n "$target" ] && wheel_args+=(--target "$target")
[ "$profile" != release-stripped ] && wheel_args+=(--strip)
say "maturin ${wheel_args[*]}"
(cd "$repo" && "$maturin" "${wheel_args[@]}" >&2)
rm -rf "$stage"

say "$triple, profile $profile, version $version, into $out:"
for f in "$out"/*; do
  printf '%10d  %s\n' "$(wc -c < "$f")" "$(basename "$f")"
done
