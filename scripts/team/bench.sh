#!/usr/bin/env bash
# The team path's benchmark (issue 24), on a generated corpus and a
# private PostgreSQL cluster on a loopback port:
#
#   scripts/team/bench.sh                     # 1 GB real-vocabulary corpus
#   SIZE=50MB PAIRS=1 scripts/team/bench.sh   # a quick check
#
# It measures, and prints as a Markdown table:
# - the first push of pi-index against `agentsview pg push` of the same
#   sessions into the same server, in pairs, each side's local build
#   (`pi-index build`, `agentsview sync --full`) done first and not timed;
#   MB/s of session files pushed; the push's peak RSS (/usr/bin/time -v);
# - a no-change push (10 runs);
# - search --db medians (20 runs each) for the five query shapes (rare
#   word, common word, two words, phrase, filtered) with three hosts'
#   worth of data (the corpus pushed as three hosts).
#
# Environment: SIZE (default 1GB), PAIRS (default 3), WORK (default
# target/team-bench), PG_BIN (default Debian's newest
# /usr/lib/postgresql/*/bin), AV_VERSION (agentsview from PyPI, default
# 0.46.*). Needs python3, a release build (made here) and, for the
# agentsview rows, pip. Runs the server as `nobody` when run as root.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
SIZE=${SIZE:-1GB}
PAIRS=${PAIRS:-3}
WORK=${WORK:-$ROOT/target/team-bench}
AV_VERSION=${AV_VERSION:-0.46.*}
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BIN/initdb" ] || { echo "no PostgreSQL server programs (set PG_BIN, or apt-get install postgresql-15)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time) for wall time and peak RSS" >&2; exit 2; }

mkdir -p "$WORK"
CORPUS=$WORK/corpus-$SIZE
if [ ! -d "$CORPUS" ]; then
    python3 scripts/gen-corpus.py --out "$CORPUS" --size "$SIZE" >/dev/null
fi
CORPUS_BYTES=$(du -sb "$CORPUS" | cut -f1)

cargo build --release --quiet
PI=$ROOT/target/release/pi-index

# agentsview from PyPI, into its own venv.
AV=
if [ ! -x "$WORK/av-venv/bin/python" ]; then
    python3 -m venv "$WORK/av-venv" && "$WORK/av-venv/bin/pip" install -q "agentsview==$AV_VERSION" || true
fi
for c in "$WORK"/av-venv/lib/python*/site-packages/agentsview/bin/agentsview "$WORK/av-venv/bin/agentsview"; do
    [ -x "$c" ] && AV=$c && break
done

# A private cluster on a free port, owned by nobody when we are root.
PGDIR=$(mktemp -d /tmp/pi-index-bench-pg.XXXXXX)
chmod 755 "$PGDIR"
mkdir "$PGDIR/data"
as_owner() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown 65534:65534 "$PGDIR/data"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
HOME=$PGDIR as_owner "$PG_BIN/initdb" -A trust -U postgres -E UTF8 --locale=C -D "$PGDIR/data" >/dev/null
HOME=$PGDIR as_owner "$PG_BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/data/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -c unix_socket_directories='' -c shared_buffers=512MB -c max_wal_size=4GB" start >/dev/null
stop() { kill -INT "$(head -1 "$PGDIR/data/postmaster.pid")" 2>/dev/null || true; sleep 2; rm -rf "$PGDIR"; }
trap stop EXIT
psql_() { "$PG_BIN/psql" -X -q -t -A -h 127.0.0.1 -p "$PORT" -U postgres "$@"; }
URL=postgres://postgres@127.0.0.1:$PORT

# Each side's local build, not timed.
IDX=$WORK/index
"$PI" build "$CORPUS" --index "$IDX" -q
AVHOME=$WORK/av-home
if [ -n "$AV" ]; then
    rm -rf "$AVHOME" && mkdir -p "$AVHOME"
    HOME=$AVHOME PI_DIR=$CORPUS AGENTSVIEW_NO_DAEMON=1 AGENTSVIEW_TELEMETRY=0 "$AV" sync --full >/dev/null 2>&1 || AV=
fi

# time_of CMD...: wall seconds and peak RSS (KB) of one run.
time_of() {
    local out
    out=$(/usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -1)
    echo "$out"
}

echo "| what | pi-index | agentsview | ratio |"
echo "|---|---:|---:|---:|"
for pair in $(seq 1 "$PAIRS"); do
    psql_ -d postgres -c "DROP DATABASE IF EXISTS pi_push" -c "CREATE DATABASE pi_push"
    read -r pi_s pi_kb < <(time_of "$PI" push "$URL/pi_push" --as bench --index "$IDX" -q)
    av_s=-
    if [ -n "$AV" ]; then
        psql_ -d postgres -c "DROP DATABASE IF EXISTS av_push" -c "CREATE DATABASE av_push"
        read -r av_s _ < <(HOME=$AVHOME AGENTSVIEW_NO_DAEMON=1 AGENTSVIEW_TELEMETRY=0 \
            AGENTSVIEW_PG_URL="$URL/av_push" time_of "$AV" pg push)
    fi
    ratio=$( [ "$av_s" = - ] && echo - || python3 -c "print(f'{$av_s/$pi_s:.2f}x')")
    mbs=$(python3 -c "print(f'{$CORPUS_BYTES/1e6/$pi_s:.0f}')")
    echo "| first push, pair $pair | $pi_s s ($mbs MB/s, $((pi_kb / 1024)) MB RSS) | $av_s s | $ratio |"
done

nochange=()
for _ in $(seq 1 10); do
    read -r s _ < <(time_of "$PI" push "$URL/pi_push" --as bench --index "$IDX" -q)
    nochange+=("$s")
done
echo "| no-change push, 10 runs (s) | ${nochange[*]} | | |"

# Three hosts' worth: the same index pushed as two more hosts.
"$PI" push "$URL/pi_push" --as bench2 --index "$IDX" -q
"$PI" push "$URL/pi_push" --as bench3 --index "$IDX" -q
psql_ -d pi_push -c "VACUUM ANALYZE"
for shape in "rare:zqplant0001" "common:error" "two words:error handling" "phrase:\"error handling\"" "filtered:error role:user after:2020-01-01"; do
    name=${shape%%:*}
    query=${shape#*:}
    median=$(python3 - "$PI" "$URL/pi_push" "$query" <<'EOF'
import statistics, subprocess, sys, time
pi, url, q = sys.argv[1:]
runs = []
for _ in range(20):
    t = time.perf_counter()
    subprocess.run([pi, "search", "--db", url, "--json", "--", q], stdout=subprocess.DEVNULL)
    runs.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(runs):.1f}")
EOF
)
    echo "| search --db, $name (\`$query\`), median of 20, ms | $median | | |"
done
