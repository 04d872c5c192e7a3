#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) in build/fuzz and runs each for SECONDS.
#   tests/fuzz/run.sh SECONDS [TARGET...]     (default targets: problem schedule evaluator input;
#                                              also: bound, issue 50's soundness fuzzer)
# Env: MLSYS_FUZZ_PARALLEL=1 runs the targets at the same time (one core each).
#      MLSYS_FUZZ_BUILD_DIR overrides build/fuzz.
# The seed corpus (tests/fuzz/corpus/<t>) is copied into a working corpus under the build dir, so
# the committed seeds stay small. Crash/timeout/leak/OOM inputs land in <build>/artifacts/<t>/.
# Exit status: 0 if no target found anything, 1 otherwise, 2 on usage or build errors.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ || "$1" -lt 1 ]]; then
  echo "usage: tests/fuzz/run.sh SECONDS [problem|schedule|evaluator|input|bound]..." >&2
  exit 2
fi
secs="$1"; shift
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(problem schedule evaluator input)
build="${MLSYS_FUZZ_BUILD_DIR:-$root/build/fuzz}"

cxx="$(command -v clang++ || command -v clang++-14 || true)"
if [[ -z "$cxx" ]]; then
  echo "run.sh: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
mkdir -p "$build"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$here" -B "$build" "${gen[@]}" -DCMAKE_CXX_COMPILER="$cxx" >"$build.configure.log" 2>&1 \
    || { cat "$build.configure.log" >&2; echo "run.sh: configure failed" >&2; exit 2; }
fi
build_targets=()
for t in "${targets[@]}"; do build_targets+=(--target "fuzz_$t"); done
cmake --build "$build" -j "$(nproc)" "${build_targets[@]}" >"$build/build.log" 2>&1 \
  || { tail -40 "$build/build.log" >&2; echo "run.sh: build failed (or unknown target)" >&2; exit 2; }

run_one() {
  local t="$1" bin="$build/fuzz_$1" corp="$build/corpus/$1" art="$build/artifacts/$1/" log="$build/fuzz_$1.log"
  mkdir -p "$corp" "$art"
  cp -n "$here/corpus/$t/"* "$corp/" 2>/dev/null || true
  # fuzz_bound prices every variant against brute force: slow inputs are not findings there.
  local timeout=10 slow=10
  [[ "$t" == bound ]] && timeout=300 slow=300
  "$bin" "$corp" -dict="$here/mlsys.dict" -max_total_time="$secs" -timeout="$timeout" -report_slow_units="$slow" -rss_limit_mb=2560 \
    -max_len=8192 -artifact_prefix="$art" -print_final_stats=1 >"$log" 2>&1
  echo $? >"$log.rc"
}

pids=()
for t in "${targets[@]}"; do
  if [[ ! -x "$build/fuzz_$t" ]]; then echo "run.sh: unknown target '$t'" >&2; exit 2; fi
  echo "fuzzing $t for ${secs}s (log: $build/fuzz_$t.log)"
  if [[ "${MLSYS_FUZZ_PARALLEL:-0}" == 1 ]]; then run_one "$t" & pids+=($!); else run_one "$t"; fi
done
for p in "${pids[@]}"; do wait "$p"; done

status=0
printf '%-10s %6s %12s %10s %8s %8s %8s  %s\n' target rc execs exec/s cov ft corpus artifacts
for t in "${targets[@]}"; do
  log="$build/fuzz_$t.log"
  rc="$(cat "$log.rc" 2>/dev/null || echo '?')"
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
  eps="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
  last="$(grep -E '^#[0-9]+' "$log" | tail -1)"
  cov="$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*')"
  ft="$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*')"
  corp="$(grep -o 'corp: [0-9]*' <<<"$last" | grep -o '[0-9]*')"
  arts="$(find "$build/artifacts/$t" -type f 2>/dev/null | wc -l)"
  printf '%-10s %6s %12s %10s %8s %8s %8s  %s\n' "$t" "$rc" "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$arts"
  if [[ "$rc" != 0 || "$arts" -gt 0 ]]; then
    status=1
    echo "  $t: FAILED; see $log" >&2
    grep -E 'ERROR|FUZZ BUG|runtime error|SUMMARY|Test unit written' "$log" | head -8 | sed 's/^/    /' >&2
  fi
done
exit $status
