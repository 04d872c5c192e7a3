#!/usr/bin/env bash
# Scaling benchmark: generates graphs of 100, 1000 and 10000 ops and solves each once, measuring
# time to the first valid output (stats first_write_s), the best latency, evaluations, peak
# memory (/usr/bin/time -v "Maximum resident set size") and wall time, and checks the output
# with `mlsys evaluate`.
# usage: bench/scale.sh [--seconds S] [--families "random transformer"] [--sizes "100 1000 10000"]
#                       [--seed N] [--threads T]
# Env: MLSYS = the mlsys binary (default build/release/mlsys). Exit 1 if a run failed.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mlsys="${MLSYS:-$root/build/release/mlsys}"
secs=10; families="random transformer"; sizes="100 1000 10000"; seed=1; threads=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) secs="$2"; shift 2 ;;
    --families) families="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "scale.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$mlsys" ]] || { echo "scale.sh: no mlsys binary at $mlsys (build first or set MLSYS)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "scale.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

# Fields of the stats JSON, one per line (bench/benchlib reads --stats for every bench script).
stats() { python3 "$root/bench/benchlib" stats "$@" 2>/dev/null; }

failed=0
fmt='%-12s %6s %8s %9s %12s %16s %12s %10s %8s %9s  %s\n'
printf "$fmt" family size ops tensors first_write_s best_latency evaluations evals/s wall_s peak_MB status
for fam in $families; do
  for n in $sizes; do
    p="$work/$fam-$n.json"; out="$work/$fam-$n.out.json"; st="$work/$fam-$n.stats.json"; tv="$work/$fam-$n.time"
    if ! "$mlsys" generate --family "$fam" --size "$n" --seed "$seed" -o "$p" 2>"$work/err"; then
      printf "$fmt" "$fam" "$n" - - - - - - - - "GENERATE FAILED: $(head -c 200 "$work/err")"; failed=1; continue
    fi
    ops="$(grep -o '"op_types": \[.*\]' "$p" | grep -o '"[A-Za-z]*"' | grep -c -E 'MatMul|Pointwise')"
    tensors="$(grep -o '"widths": \[[^]]*\]' "$p" | tr ',' '\n' | wc -l)"
    args=(solve "$p" "$out" --seconds "$secs" --stats "$st" --quiet)
    [[ -n "$threads" ]] && args+=(--threads "$threads")
    t0="$(date +%s.%N)"
    /usr/bin/time -v -o "$tv" "$mlsys" "${args[@]}" >"$work/solve.out" 2>"$work/solve.err"
    rc=$?
    t1="$(date +%s.%N)"
    wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b - a}')"
    rss="$(grep 'Maximum resident set size' "$tv" | grep -o '[0-9]*$')"
    mb="$(awk -v k="${rss:-0}" 'BEGIN{printf "%.0f", k / 1024}')"
    status=ok
    if [[ $rc -ne 0 ]]; then status="exit $rc: $(tail -c 200 "$work/solve.err" | tr '\n' ' ')"; failed=1
    elif [[ ! -s "$out" ]]; then status="no output"; failed=1
    elif ! "$mlsys" evaluate "$p" "$out" >"$work/eval.out" 2>&1; then status="INVALID: $(grep -m1 -E 'invalid|error' "$work/eval.out")"; failed=1
    elif awk -v w="$wall" -v s="$secs" 'BEGIN{exit !(w > s + 0.1)}'; then status="overrun (> ${secs}s + 0.1)"
    fi
    st_fields=(); mapfile -t st_fields < <(stats "$st" first_write_s best_latency evaluations evals_per_s)
    printf "$fmt" "$fam" "$n" "$ops" "$tensors" "${st_fields[0]:-}" "${st_fields[1]:-}" \
      "${st_fields[2]:-}" "${st_fields[3]:-}" "$wall" "$mb" "$status"
  done
done
exit $failed
