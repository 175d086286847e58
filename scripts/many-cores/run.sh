#!/usr/bin/env bash
# Issue 43's many-core measurements in one command, on a machine with many
# cores, no network and no Rust (a lent device machine): what
# scripts/many-cores/pack.sh put in .many-cores/ and the scripts of this
# tree are all it needs (bash, coreutils, python3 3.11 or later).
#
#   1. unpacks the generator's sources and fast-resume's `fr`;
#   2. generates --large folders of `gen-corpus.py --size SIZE --seed S`
#      (S = 1, 2, ...), as many generators at once as there are cores;
#   3. the small corpus is the first --small folders (8 x 250MB: the
#      issue's 1.9 GB), the large one all of them (32: 7.5 GB), each a
#      folder of the seeds' project folders (hard links);
#   4. `scripts/bench-scale.py --threads` on each: fresh builds at every
#      thread count and fast-resume's `fr --rebuild`, rounds rotated,
#      medians; the tables (and every build's --json report beside them)
#      go to OUT.
#
# Usage: bash scripts/many-cores/run.sh [--out DIR] [--size 250MB]
#          [--small 8] [--large 32] [--runs 3] [--large-runs 2]
#          [--threads 1,2,4,8,16] [--large-threads 1,16] [--text-share S]
#   --out  where the tables and the log go (default: $OUT, which the
#          device tool brings back, else target/many-cores)
# The corpora and indexes live in /dev/shm when it has room (the issue's
# numbers are for a corpus in the page cache), else in $TMPDIR or /tmp.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
pack=$repo/.many-cores
out=${OUT:-$repo/target/many-cores}
size=250MB small=8 large=32 runs=3 large_runs=2 threads=1,2,4,8,16 large_threads=1,16 share=realistic
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --small) small=$2; shift 2 ;;
    --large) large=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --large-runs) large_runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --large-threads) large_threads=$2; shift 2 ;;
    --text-share) share=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1 (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
[ -x "$pack/pi-index" ] && [ -s "$pack/sources.tar.xz" ] \
  || { echo "run.sh: no $pack/pi-index or sources.tar.xz: run scripts/many-cores/pack.sh first (and carry .many-cores)" >&2; exit 2; }
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
say() { echo "run.sh [$(date +%T)]: $*"; }

# Room for the largest corpus twice over (the corpus and its indexes).
need_mb=$(python3 -c "import re,sys; m=re.fullmatch(r'(\d+(?:\.\d+)?)([KMG]B)', sys.argv[1]); \
print(int(float(m[1]) * {'KB': 1e-3, 'MB': 1, 'GB': 1e3}[m[2]] * int(sys.argv[2]) * 2))" "$size" "$large")
shm_mb=$(df -Pm /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
if [ -n "$shm_mb" ] && [ "$shm_mb" -gt "$need_mb" ]; then base=/dev/shm; else base=${TMPDIR:-/tmp}; fi
work=$base/pi-index-many-cores
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

say "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')," \
    "$(awk '/MemTotal/ {printf "%.0f GB", $2 / 1e6}' /proc/meminfo); kernel $(uname -r); $(python3 --version)"
say "pi-index: $("$pack/pi-index" --version | head -1); work folder $work ($(df -PT "$base" | awk 'NR == 2 {print $2}'))"

mkdir -p "$work/cargo"
python3 - "$pack/sources.tar.xz" "$work/cargo" <<'PY'
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    t.extractall(sys.argv[2], **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
PY
fr=
whl=$(ls "$pack"/fast_resume-*.whl 2>/dev/null | head -1 || true)
if [ -n "$whl" ]; then
  python3 - "$whl" "$work/fr" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    name = next(n for n in z.namelist() if n.endswith("/scripts/fr"))
    os.makedirs(sys.argv[2], exist_ok=True)
    path = os.path.join(sys.argv[2], "fr")
    with open(path, "wb") as f:
        f.write(z.read(name))
    os.chmod(path, 0o755)
PY
  fr=$work/fr/fr
  say "fast-resume: $("$fr" --version 2>&1 | head -1)"
else
  say "fast-resume left out: no wheel in $pack"
fi

say "generating $large folders of $size ($share text share), $(nproc) at a time"
mkdir -p "$work/gen"
seq 1 "$large" | CARGO_HOME=$work/cargo xargs -P "$(nproc)" -I{} \
  python3 "$repo/scripts/gen-corpus.py" --out "$work/gen/seed{}" --size "$size" --seed {} \
    --vocab real --text-share "$share" 2>"$work/gen.log" >/dev/null \
  || { cat "$work/gen.log"; exit 1; }
tail -n 2 "$work/gen.log"
lay() {  # lay DIR N: the first N seeds' project folders in DIR, as hard links
  mkdir -p "$1"
  for s in $(seq 1 "$2"); do
    for p in "$work/gen/seed$s"/*/; do cp -al "$p" "$1/s$s$(basename "$p")"; done
  done
  say "$1: $(find "$1" -name '*.jsonl' | wc -l) files, $(du -sm --apparent-size "$1" | cut -f1) MB"
}
lay "$work/small" "$small"
lay "$work/large" "$large"

frarg=()
[ -n "$fr" ] && frarg=(--fr "$fr")
say "the small corpus, -j $threads, $runs rounds"
python3 "$repo/scripts/bench-scale.py" --pi-index "$pack/pi-index" --threads "$threads" --corpus "$work/small" \
  --runs "$runs" --data "$work" --out "$out/scale-small.md" "${frarg[@]}"
say "the large corpus, -j $large_threads, $large_runs rounds"
python3 "$repo/scripts/bench-scale.py" --pi-index "$pack/pi-index" --threads "$large_threads" \
  --corpus "$work/large" --runs "$large_runs" --data "$work" --out "$out/scale-large.md" "${frarg[@]}"
say "done: $out/scale-small.md, $out/scale-large.md"
