#!/usr/bin/env bash
# Scaling of `mlsys report` (issue 36, item 9): writes a chain of N Pointwise ops with one op per
# subgraph (N subgraphs) and times `mlsys report` on it, the median of --reps runs per size; then
# one run with a --trace of --trace-rows improving rows (two workers), giving the page's size.
# usage: bench/report_scale.sh [--sizes "5000 10000 20000 100000"] [--reps 3] [--trace-rows 1000000]
#                              [--trace-size 5000] [--timeout 120] [-s S]
# Env: MLSYS = the mlsys binary (default build/release/mlsys). A run past --timeout seconds is
# killed and shown as ">T". `-s S` is passed to report when its --help lists -s/--seconds.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mlsys="${MLSYS:-$root/build/release/mlsys}"
sizes="5000 10000 20000 100000"; reps=3; trows=1000000; tsize=5000; tmo=120; secs=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) sizes="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --trace-rows) trows="$2"; shift 2 ;;
    --trace-size) tsize="$2"; shift 2 ;;
    --timeout) tmo="$2"; shift 2 ;;
    -s|--seconds) secs="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "report_scale.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$mlsys" ]] || { echo "report_scale.sh: no mlsys binary at $mlsys (build first or set MLSYS)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "report_scale.sh: python3 is needed to write the inputs" >&2; exit 2; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
budget=()
if [[ -n "$secs" ]] && "$mlsys" report --help 2>/dev/null | grep -q -- '--seconds'; then budget=(-s "$secs"); fi

# A chain of n Pointwise ops on 128x128 tensors (base costs alternating 1000 and 5000, so that
# subgraphs are memory- and compute-bound in turn), and its schedule of one op per subgraph.
write_chain() {  # n problem.json schedule.json
  python3 - "$@" <<'EOF'
import json, sys
n, pf, sf = int(sys.argv[1]), sys.argv[2], sys.argv[3]
costs = [1000 if i % 2 == 0 else 5000 for i in range(n)]
prob = {"widths": [128] * (n + 1), "heights": [128] * (n + 1),
        "inputs": [[i] for i in range(n)], "outputs": [[i + 1] for i in range(n)],
        "base_costs": costs, "op_types": ["Pointwise"] * n,
        "fast_memory_capacity": 50000, "slow_memory_bandwidth": 10, "native_granularity": [128, 128]}
lat = [max(c, 3276.8) for c in costs]  # load + store 32768 elements / 10 against the compute
sched = {"subgraphs": [[i] for i in range(n)], "granularities": [[128, 128, 1]] * n,
         "tensors_to_retain": [[] for _ in range(n)], "traversal_orders": [None] * n,
         "subgraph_latencies": lat}
json.dump(prob, open(pf, "w"), separators=(",", ":"))
json.dump(sched, open(sf, "w"), separators=(",", ":"))
EOF
}

# rows trace.csv: first, baseline, then improving rows alternately from workers beam and sa, end.
write_trace() {
  python3 - "$@" <<'EOF'
import sys
rows, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write("seconds,worker,latency\n0.001,first,2000000000\n0.002,baseline,1900000000\n")
    lat = 1.9e9
    for i in range(rows):
        lat *= 0.9999995
        f.write("%.6f,%s,%.4f\n" % (0.003 + 10.0 * i / rows, "beam" if i % 2 == 0 else "sa", lat))
    f.write("10.01,end,%.4f\n" % lat)
EOF
}

# Runs report once; prints "seconds exit_code" (seconds ">T" when killed at the timeout).
run_report() {  # problem schedule out [extra args...]
  local p="$1" s="$2" out="$3"; shift 3
  local t0 t1 rc
  t0="$(date +%s.%N)"
  timeout "$tmo" "$mlsys" report "$p" "$s" -o "$out" "${budget[@]}" "$@" >/dev/null 2>"$work/err"
  rc=$?
  t1="$(date +%s.%N)"
  if [[ $rc -eq 124 ]]; then echo ">$tmo $rc"; else awk -v a="$t0" -v b="$t1" -v rc="$rc" 'BEGIN{printf "%.2f %d\n", b - a, rc}'; fi
}

median() { sort -g | awk '{v[NR]=$1} END{if (NR == 0) print "-"; else if (NR % 2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'; }

fmt='%-10s %10s %10s %12s %12s  %s\n'
echo "mlsys report scaling: $("$mlsys" --version 2>/dev/null | head -1); budget: ${budget[*]:-(none)}; median of $reps"
printf "$fmt" subgraphs trace_rows median_s runs_s html_bytes exit
for n in $sizes; do
  write_chain "$n" "$work/p.json" "$work/s.json"
  times=()
  rcs=""
  for ((k = 0; k < reps; k++)); do
    read -r t rc < <(run_report "$work/p.json" "$work/s.json" "$work/r.html")
    times+=("$t"); rcs="$rc"
    [[ "$t" == ">"* ]] && break  # no point in timing out again
  done
  if [[ "${times[0]}" == ">"* ]]; then med="${times[0]}"; else med="$(printf '%s\n' "${times[@]}" | median)"; fi
  bytes=$([[ -f "$work/r.html" && "$rcs" != 124 ]] && stat -c %s "$work/r.html" || echo -)
  printf "$fmt" "$n" 0 "$med" "$(IFS=/; echo "${times[*]}")" "$bytes" "$rcs"
  rm -f "$work/r.html"
done
if [[ "$trows" -gt 0 ]]; then
  write_chain "$tsize" "$work/p.json" "$work/s.json"
  write_trace "$trows" "$work/t.csv"
  read -r t rc < <(run_report "$work/p.json" "$work/s.json" "$work/r.html" --trace "$work/t.csv")
  bytes=$([[ -f "$work/r.html" && "$rc" != 124 ]] && stat -c %s "$work/r.html" || echo -)
  printf "$fmt" "$tsize" "$trows" "$t" "$t" "$bytes" "$rc"
fi
