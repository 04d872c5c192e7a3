#!/usr/bin/env bash
# Kills `mlsys solve` with SIGTERM or SIGKILL at random moments (0.1-3 s) and checks the output:
#  - it is always a valid schedule (`mlsys evaluate`);
#  - after SIGTERM it holds the best schedule of the run (the last latency of --trace);
#  - after SIGKILL it is no worse than the best found write_interval_s (0.1 s) + 50 ms before the
#    kill (every improvement of the trace up to then is on disk).
# Usage: bench/kill_test.sh [TRIALS=50] [INSTANCE_DIR=../shared/benchmarks] [MLSYS=build/release/mlsys]
set -u
cd "$(dirname "$0")/.."
TRIALS=${1:-50}
DIR=${2:-../shared/benchmarks}
M=${3:-build/release/mlsys}
[ -d "$DIR" ] || { echo "kill_test: $DIR not found; skipping"; exit 0; }
mapfile -t FILES < <(ls "$DIR"/*.json | sort)
tmp=$(mktemp -d)
ok=0; bad=0; term=0; kill9=0
for ((i = 0; i < TRIALS; i++)); do
  f=${FILES[$((RANDOM % ${#FILES[@]}))]}
  out="$tmp/out$i.json" trace="$tmp/trace$i.csv"
  sig=TERM; ((RANDOM % 2)) && sig=KILL
  delay=$(awk -v r=$RANDOM 'BEGIN{printf "%.3f", 0.1 + (r/32767)*2.9}')
  t0=$(date +%s.%N)
  "$M" solve "$f" "$out" --seconds 20 --threads 2 -q --trace "$trace" &
  pid=$!
  sleep "$delay"
  t1=$(date +%s.%N)
  kill -s "$sig" "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rc=$?
  [ "$sig" = TERM ] && term=$((term + 1)) || kill9=$((kill9 + 1))
  at=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
  why=""
  if ! "$M" evaluate "$f" "$out" >/dev/null 2>&1; then
    why="invalid schedule"
  else
    why=$(python3 - "$out" "$trace" "$sig" "$at" <<'PY'
import csv, json, sys
out, trace, sig, at = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
onfile = sum(json.load(open(out))["subgraph_latencies"])
rows = []
lines = open(trace).read().splitlines()
if not lines or lines[0] != "seconds,worker,latency":
    print("the trace was not flushed (no header): nothing to check the file against"); sys.exit()
for r in csv.reader(lines):
    try: rows.append((float(r[0]), float(r[2])))
    except (ValueError, IndexError): pass  # header, or a line cut by the kill
tol = 1e-9 * max(1.0, abs(onfile))
if sig == "TERM":
    best = min((l for _, l in rows), default=onfile)
    if onfile > best + tol: print(f"file {onfile} but the run's best was {best}")
else:
    due = [l for t, l in rows if t <= at - 0.15]
    if due and onfile > min(due) + tol:
        print(f"file {onfile} but {min(due)} was found by {at - 0.15:.3f} s")
PY
)
  fi
  if [ -z "$why" ]; then
    ok=$((ok + 1))
  else
    bad=$((bad + 1))
    echo "FAIL: $(basename "$f") killed with SIG$sig after ${at}s (exit $rc): $why"
  fi
done
rm -rf "$tmp"
echo "kill test: $TRIALS trials ($term SIGTERM, $kill9 SIGKILL): $ok passed, $bad failed"
[ "$bad" -eq 0 ]
