#!/usr/bin/env bash
# 1 thread vs 2 threads at the same wall time on each instance (median over seeds).
# Usage: bench/threads_compare.sh [SECONDS=10] [SEEDS=3] [INSTANCE_DIR=../shared/benchmarks]
set -u
cd "$(dirname "$0")/.."
S=${1:-10}; SEEDS=${2:-3}; DIR=${3:-../shared/benchmarks}; M=${MLSYS:-build/release/mlsys}
[ -d "$DIR" ] || { echo "threads_compare: $DIR not found; skipping"; exit 0; }
tmp=$(mktemp -d)
echo "| instance | 1 thread (median) | 2 threads (median) | 2t / 1t |"
echo "|---|---|---|---|"
for f in $(ls "$DIR"/*.json | sort -V); do
  n=$(basename "$f" .json)
  declare -A med
  for t in 1 2; do
    vals=()
    for ((s = 1; s <= SEEDS; s++)); do
      "$M" solve "$f" "$tmp/o.json" --seconds "$S" --threads "$t" --seed "$s" --stats "$tmp/s.json" -q
      vals+=("$(python3 bench/benchlib stats "$tmp/s.json" best_latency)")
    done
    med[$t]=$(printf '%s\n' "${vals[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  done
  python3 -c "a=${med[1]};b=${med[2]};print(f'| $n | {a:.10g} | {b:.10g} | {b/a:.4f} |')"
done
rm -rf "$tmp"
