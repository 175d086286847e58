#!/usr/bin/env bash
# The team path's benchmark (issue 24), on a generated corpus and a
# private PostgreSQL cluster on a loopback port:
#
#   scripts/team/bench.sh                     # 1 GB real-vocabulary corpus
#   SIZE=20MB PAIRS=1 RUNS=3 scripts/team/bench.sh   # a quick check
#
# It measures, and prints as a Markdown table:
# - the first push of pi-index against `agentsview pg push` of the same
#   sessions into the same server, in pairs (each into a fresh database),
#   each side's local build (`pi-index build`, `agentsview sync --full`)
#   done first and not timed; MB/s of session files pushed; the push's
#   peak RSS (/usr/bin/time);
# - a no-change push (10 runs: median and every run);
# - search --db for the five query shapes (rare word, common word, two
#   words, phrase, filtered), and a word typed without its separator
#   (`isfinished`, also searched as `is <-> finished`) and a phrase of
#   two of the commonest words (`"the file"`), with three
#   hosts' worth of data (the corpus
#   pushed as three hosts): the median of RUNS runs of the statement on
#   the server (its parse, plan and execution as the server's log times
#   them, and its execution alone) and of the whole command (a new
#   process, its connection, the statements before the search, the
#   query, the printing).
#
# Environment: SIZE (default 1GB), SEED (42), FORK_SHARE (0: the share of
# sessions given forks, as `gen-corpus.py --fork-share`), CORPUS (a
# corpus already generated; default WORK/corpus-SIZE), PAIRS (3), RUNS
# (20), WORK (default target/team-bench), PI_BIN (a pi-index binary;
# default: a release build made here), PG_BIN (default Debian's newest
# /usr/lib/postgresql/*/bin), AGENTSVIEW (an agentsview binary; default
# the one on PATH, else PyPI's AV_VERSION, default 0.46.*, installed
# into WORK/av-venv). Needs python3 and /usr/bin/time. Runs the server as
# `nobody` when run as root.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
SIZE=${SIZE:-1GB}
SEED=${SEED:-42}
FORK_SHARE=${FORK_SHARE:-0}
PAIRS=${PAIRS:-3}
RUNS=${RUNS:-20}
WORK=${WORK:-$ROOT/target/team-bench}
AV_VERSION=${AV_VERSION:-0.46.*}
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BIN/initdb" ] || { echo "no PostgreSQL server programs (set PG_BIN, or apt-get install postgresql-15)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time) for wall time and peak RSS" >&2; exit 2; }

mkdir -p "$WORK"
CORPUS=${CORPUS:-$WORK/corpus-$SIZE-$SEED-$FORK_SHARE}
if [ ! -d "$CORPUS" ]; then
    python3 scripts/gen-corpus.py --out "$CORPUS" --size "$SIZE" --seed "$SEED" --fork-share "$FORK_SHARE" >/dev/null
fi
CORPUS_BYTES=$(du -sb "$CORPUS" | cut -f1)

if [ -n "${PI_BIN:-}" ]; then
    PI=$(realpath "$PI_BIN")
else
    cargo build --release --quiet
    PI=$ROOT/target/release/pi-index
fi

# agentsview: the one named, else on PATH, else from PyPI into a venv.
AV=${AGENTSVIEW:-$(command -v agentsview || true)}
if [ -z "$AV" ]; then
    if [ ! -x "$WORK/av-venv/bin/agentsview" ]; then
        python3 -m venv "$WORK/av-venv" && "$WORK/av-venv/bin/pip" install -q "agentsview==$AV_VERSION" ||
            echo "bench: agentsview could not be installed from PyPI: its rows are left empty" >&2
    fi
    [ -x "$WORK/av-venv/bin/agentsview" ] && AV=$WORK/av-venv/bin/agentsview
fi

# A private cluster on a free port, owned by nobody when we are root;
# every statement's duration goes to its log (the server-side times).
PGDIR=$(mktemp -d /tmp/pi-index-bench-pg.XXXXXX)
chmod 755 "$PGDIR"
mkdir "$PGDIR/data"
as_owner() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown 65534:65534 "$PGDIR/data"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
HOME=$PGDIR as_owner "$PG_BIN/initdb" -A trust -U postgres -E UTF8 --locale=C -D "$PGDIR/data" >/dev/null
HOME=$PGDIR as_owner "$PG_BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/data/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -c unix_socket_directories='' -c shared_buffers=512MB -c max_wal_size=4GB" start >/dev/null
stop() {
    HOME=$PGDIR as_owner "$PG_BIN/pg_ctl" -D "$PGDIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$PGDIR"
}
trap stop EXIT
psql_() { PGOPTIONS='-c client_min_messages=warning' "$PG_BIN/psql" -X -q -t -A -h 127.0.0.1 -p "$PORT" -U postgres "$@"; }
URL=postgres://postgres@127.0.0.1:$PORT

# Each side's local build, not timed.
IDX=$WORK/index-$(basename "$CORPUS")
"$PI" build "$CORPUS" --index "$IDX" -q
AVHOME=$WORK/av-home
# agentsview's environment: its own home, the corpus as Pi's sessions,
# no daemon, no browser, no update check.
AVENV=(env HOME="$AVHOME" AGENTSVIEW_DATA_DIR="$AVHOME/.agentsview" PI_DIR="$CORPUS"
    AGENTSVIEW_NO_DAEMON=1 AGENTSVIEW_NO_BROWSER=1 AGENTSVIEW_DISABLE_UPDATE_CHECK=1
    AGENTSVIEW_DISABLE_AUTO_SYNC=1)
if [ -n "$AV" ]; then
    rm -rf "$AVHOME" && mkdir -p "$AVHOME"
    if ! "${AVENV[@]}" "$AV" sync --full >"$WORK/av-sync.log" 2>&1; then
        echo "bench: agentsview sync --full failed (see $WORK/av-sync.log): its rows are left empty" >&2
        AV=
    fi
    # Its state after the sync, restored before each push: whatever it
    # remembers of a push made before, each pair's is a first push.
    rm -rf "$AVHOME.synced" && cp -a "$AVHOME" "$AVHOME.synced"
fi

# time_of CMD...: wall seconds and peak RSS (KB) of one run, which must
# succeed; what it printed goes to WORK/last.log.
time_of() {
    if ! /usr/bin/time -o "$WORK/last.time" -f '%e %M' "$@" >"$WORK/last.log" 2>&1; then
        echo "bench: failed: $*" >&2
        tail -20 "$WORK/last.log" >&2
        return 1
    fi
    tail -1 "$WORK/last.time"
}
median() { python3 -c 'import statistics, sys; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.3f}")' "$@"; }

echo "| what | pi-index | agentsview | ratio |"
echo "|---|---:|---:|---:|"
for pair in $(seq 1 "$PAIRS"); do
    psql_ -d postgres -c "DROP DATABASE IF EXISTS pi_push" -c "CREATE DATABASE pi_push"
    read -r pi_s pi_kb < <(time_of "$PI" push "$URL/pi_push" --as bench --index "$IDX" -q)
    av_s=-
    av_kb=0
    if [ -n "$AV" ]; then
        psql_ -d postgres -c "DROP DATABASE IF EXISTS av_push" -c "CREATE DATABASE av_push"
        rm -rf "$AVHOME" && cp -a "$AVHOME.synced" "$AVHOME"
        read -r av_s av_kb < <(time_of "${AVENV[@]}" AGENTSVIEW_PG_URL="$URL/av_push?sslmode=disable" \
            AGENTSVIEW_PG_MACHINE=bench "$AV" pg push)
        cp "$WORK/last.log" "$WORK/av-push-$pair.log"
    fi
    ratio=$( [ "$av_s" = - ] && echo - || python3 -c "print(f'{$av_s/max($pi_s, 0.01):.2f}x')")
    mbs=$(python3 -c "print(f'{$CORPUS_BYTES/1e6/max($pi_s, 0.01):.0f}')")
    av_mb=$( [ "$av_s" = - ] && echo "" || echo " ($((av_kb / 1024)) MB RSS)")
    echo "| first push of $((CORPUS_BYTES / 1000000)) MB, pair $pair | $pi_s s ($mbs MB/s, $((pi_kb / 1024)) MB RSS) | $av_s s$av_mb | $ratio |"
done
if [ -n "$AV" ]; then
    rows=$(psql_ -d av_push -c "SELECT count(*) FROM agentsview.messages" 2>/dev/null || echo "?")
    echo "| agentsview's rows (messages) | | $rows | |"
fi
echo "| pi-index's rows (messages) | $(psql_ -d pi_push -c "SELECT count(*) FROM pi_messages") | | |"

nochange=()
for _ in $(seq 1 10); do
    read -r s _ < <(time_of "$PI" push "$URL/pi_push" --as bench --index "$IDX" -q)
    nochange+=("$s")
done
echo "| no-change push, median of 10 (s) | $(median "${nochange[@]}") (${nochange[*]}) | | |"

# Three hosts' worth: the same index pushed as two more hosts.
"$PI" push "$URL/pi_push" --as bench2 --index "$IDX" -q
"$PI" push "$URL/pi_push" --as bench3 --index "$IDX" -q
psql_ -d pi_push -c "VACUUM ANALYZE"
echo "| rows with three hosts (messages) | $(psql_ -d pi_push -c "SELECT count(*) FROM pi_messages") | | |"
psql_ -d postgres -c "ALTER SYSTEM SET log_min_duration_statement = 0" -c "SELECT pg_reload_conf()" >/dev/null
sleep 1
LOG=$PGDIR/data/log
for shape in "rare:zqplant0001" "common:error" "two words:error handling" "phrase:\"error handling\"" "filtered:error role:user after:2020-01-01" "cut word:isfinished" "common phrase:\"the file\""; do
    name=${shape%%:*}
    query=${shape#*:}
    from=$(wc -c <"$LOG")
    read -r wall hits < <(python3 - "$PI" "$URL/pi_push" "$query" "$RUNS" <<'EOF'
import statistics, subprocess, sys, time
pi, url, q, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
times, hits = [], 0
for _ in range(runs):
    t = time.perf_counter()
    out = subprocess.run([pi, "search", "--db", url, "--json", "--", q], stdout=subprocess.PIPE, check=False)
    times.append((time.perf_counter() - t) * 1000)
    if out.returncode not in (0, 1):
        sys.exit(f"search --db {q!r} failed: exit {out.returncode}")
    hits = out.stdout.count(b"\n")
print(f"{statistics.median(times):.1f} {hits}")
EOF
)
    # The search statement's own durations, as the server logged them:
    # its parse, its bind (where PostgreSQL plans an unnamed statement)
    # and its execution, summed; and its execution alone.
    server=$(tail -c +"$((from + 1))" "$LOG" | python3 -c '
import re, statistics, sys
text = sys.stdin.read()
whole, run, at = [], [], 0.0
for m in re.finditer(r"duration: ([0-9.]+) ms\s+(parse|bind|execute|statement)[^:]*: (?:WITH hits|WITH pool|WITH windowed|SELECT m\.host)", text):
    at += float(m.group(1))
    if m.group(2) in ("execute", "statement"):
        whole.append(at)
        run.append(float(m.group(1)))
        at = 0.0
print(f"{statistics.median(whole):.1f} ms (execution {statistics.median(run):.1f}) over {len(whole)}" if whole else "not logged")')
    echo "| search --db, $name (\`$query\`, $hits hits on the first page): server (parse + plan + execution), median | $server | | |"
    echo "| the same, the whole command, median of $RUNS, ms | $wall | | |"
done
