#!/usr/bin/env bash
# Measure pi-index against the alternatives on one generated corpus and
# write the README's performance table (see scripts/bench.py for options):
#
#   scripts/bench.sh --size 1GB --runs 3 --out bench-results.md
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/bench.py "$@"
