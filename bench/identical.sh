#!/usr/bin/env bash
# Checks that seeded single-thread runs are byte-identical between a reference commit and the
# working tree: `--threads 1 --seed S --max-evals N` on every shared benchmark.
# Usage: bash bench/identical.sh [REF_COMMIT] [MAX_EVALS] [SEEDS]
#   REF_COMMIT  default: the commit named in bench/identical.ref (the last behaviour-preserving base)
#   MAX_EVALS   default 20000;  SEEDS default "1 2"
# Builds REF_COMMIT in a git worktree under build/identical-ref (reused when it exists) and the
# working tree with the release preset; prints a Markdown table; exits 1 on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:-$(cat bench/identical.ref)}
evals=${2:-20000}
seeds=${3:-"1 2"}
bench_dir=${MLSYS_INSTANCES:-../shared/benchmarks}
if [ ! -d "$bench_dir" ]; then echo "identical.sh: $bench_dir is absent: nothing to compare" >&2; exit 0; fi
wt=build/identical-ref
if [ ! -d "$wt" ] || [ "$(git -C "$wt" rev-parse HEAD)" != "$(git rev-parse "$ref")" ]; then
  git worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
  git worktree add --detach "$wt" "$ref" >/dev/null
fi
(cd "$wt" && cmake --preset release -DMLSYS_BUILD_TESTS=OFF -DMLSYS_BUILD_BENCH=OFF >/dev/null && cmake --build --preset release >/dev/null)
cmake --preset release >/dev/null && cmake --build --preset release >/dev/null
refbin=$wt/build/release/mlsys newbin=build/release/mlsys out=build/identical
mkdir -p "$out"
echo "reference $(git rev-parse --short "$ref") vs working tree; --threads 1 --max-evals $evals"
echo
echo "| instance | seed | reference latency | new latency | identical |"
echo "|---|---|---|---|---|"
fail=0
for f in "$bench_dir"/*.json; do
  b=$(basename "$f" .json)
  for s in $seeds; do
    "$refbin" solve "$f" "$out/$b.$s.ref.json" --threads 1 --seed "$s" --max-evals "$evals" --seconds 300 -q
    "$newbin" solve "$f" "$out/$b.$s.new.json" --threads 1 --seed "$s" --max-evals "$evals" --seconds 300 -q
    lat() { python3 -c "import json,sys; print(sum(json.load(open(sys.argv[1]))['subgraph_latencies']))" "$1"; }
    if cmp -s "$out/$b.$s.ref.json" "$out/$b.$s.new.json"; then same=yes; else same=NO; fail=1; fi
    echo "| $b | $s | $(lat "$out/$b.$s.ref.json") | $(lat "$out/$b.$s.new.json") | $same |"
  done
done
exit $fail
