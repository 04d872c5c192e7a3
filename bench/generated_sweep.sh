#!/usr/bin/env bash
# Generates N instances across all families and solves each with a short budget, checking
#   0 crashes (exit code other than 0), 0 missing/invalid outputs (`mlsys evaluate`), and
#   0 budget overruns (wall time > budget + 100 ms).
# usage: bench/generated_sweep.sh N [--seconds S] [--sizes "5 20 60 200"] [--keep DIR]
# Env: MLSYS = the mlsys binary (default build/release/mlsys). Exit 1 if anything failed.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mlsys="${MLSYS:-$root/build/release/mlsys}"
n="${1:-}"
if [[ ! "$n" =~ ^[0-9]+$ || "$n" -lt 1 ]]; then
  echo "usage: bench/generated_sweep.sh N [--seconds S] [--sizes \"5 20 60 200\"] [--keep DIR]" >&2
  exit 2
fi
shift
budget=1; sizes="3 8 20 40 80 150 300"; keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) budget="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    *) echo "generated_sweep.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$mlsys" ]] || { echo "generated_sweep.sh: no mlsys binary at $mlsys (build first or set MLSYS)" >&2; exit 2; }
read -r -a families <<<"$(python3 "$root/bench/benchlib" families)"  # the one list, bench/benchlib/common.py
read -r -a sz <<<"$sizes"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
[[ -n "$keep" ]] && mkdir -p "$keep"
limit="$(awk -v b="$budget" 'BEGIN{print b + 0.1}')"

ok=0; crashes=0; invalid=0; overruns=0; genfail=0; worst=0
for ((i = 0; i < n; i++)); do
  fam="${families[i % ${#families[@]}]}"
  size="${sz[(i / ${#families[@]}) % ${#sz[@]}]}"
  seed=$((1000 + i))
  name="$fam-$size-s$seed"
  prob="$work/$name.json"; out="$work/$name.out.json"
  if ! "$mlsys" generate --family "$fam" --size "$size" --seed "$seed" -o "$prob" 2>"$work/gen.err"; then
    genfail=$((genfail + 1)); echo "GENERATE FAILED $name: $(head -c 300 "$work/gen.err")"; continue
  fi
  t0="$(date +%s.%N)"
  "$mlsys" solve "$prob" "$out" --seconds "$budget" --quiet >"$work/solve.out" 2>"$work/solve.err"
  rc=$?
  t1="$(date +%s.%N)"
  wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')"
  worst="$(awk -v a="$worst" -v b="$wall" 'BEGIN{print (b > a) ? b : a}')"
  bad=""
  if [[ $rc -ne 0 ]]; then
    crashes=$((crashes + 1)); bad="exit $rc: $(tail -c 300 "$work/solve.err" | tr '\n' ' ')"
  elif [[ ! -s "$out" ]]; then
    invalid=$((invalid + 1)); bad="no output file"
  elif ! "$mlsys" evaluate "$prob" "$out" >"$work/eval.out" 2>&1; then
    invalid=$((invalid + 1)); bad="invalid output: $(grep -m1 -E 'invalid|error' "$work/eval.out")"
  fi
  if awk -v w="$wall" -v l="$limit" 'BEGIN{exit !(w > l)}'; then
    overruns=$((overruns + 1)); bad="${bad:+$bad; }overrun: ${wall}s > ${limit}s"
  fi
  if [[ -n "$bad" ]]; then
    echo "FAIL $name (${wall}s): $bad"
    [[ -n "$keep" ]] && cp "$prob" "$keep/" && { [[ -f "$out" ]] && cp "$out" "$keep/" || true; }
  else
    ok=$((ok + 1))
  fi
done
echo "instances: $n  ok: $ok  crashes: $crashes  invalid: $invalid  overruns: $overruns  generate-failures: $genfail  worst wall: ${worst}s (budget ${budget}s)"
[[ $crashes -eq 0 && $invalid -eq 0 && $overruns -eq 0 && $genfail -eq 0 ]]
