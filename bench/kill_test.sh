#!/usr/bin/env bash
# Kills `mlsys solve` with SIGTERM or SIGKILL at random moments (after the first 100 ms) and
# checks that the output file is always a valid schedule.
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
  out="$tmp/out$i.json"
  sig=TERM; ((RANDOM % 2)) && sig=KILL
  delay=$(awk -v r=$RANDOM 'BEGIN{printf "%.3f", 0.1 + (r/32767)*2.9}')
  "$M" solve "$f" "$out" --seconds 20 --threads 2 -q &
  pid=$!
  sleep "$delay"
  kill -s "$sig" "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rc=$?
  [ "$sig" = TERM ] && term=$((term + 1)) || kill9=$((kill9 + 1))
  if "$M" evaluate "$f" "$out" >/dev/null 2>&1; then
    ok=$((ok + 1))
  else
    bad=$((bad + 1))
    echo "INVALID: $(basename "$f") killed with SIG$sig after ${delay}s (exit $rc)"
  fi
done
rm -rf "$tmp"
echo "kill test: $TRIALS trials ($term SIGTERM, $kill9 SIGKILL): $ok valid, $bad invalid"
[ "$bad" -eq 0 ]
