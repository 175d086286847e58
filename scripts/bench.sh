#!/usr/bin/env bash
# Measure pi-index side by side with its peers on one generated corpus and
# write the performance table (see scripts/bench.py --help and
# scripts/README.md for the rows and options):
#
#   scripts/bench.sh --size 1GB --out bench-results.md --doc docs/performance.md
#   scripts/bench.sh --size 50MB --runs 2 --only build,fast-resume   # a quick check
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/bench.py "$@"
