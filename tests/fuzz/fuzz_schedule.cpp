// libFuzzer target: bytes -> parseScheduleText against a fixed small problem (a MatMul chain with
// an epilogue, a fan-out and a second component), then evaluate the schedule. Only InputError
// may escape the parser; the evaluator must not throw at all, and its closed-form pricing must
// equal the step-by-step walk. A schedule that parses must round-trip through scheduleToJson.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_common.h"

namespace {

// Tensors (HxW): t3 = t0(128x128) @ t1(128x256); t8 = pw(t3) (fan-out of t3, graph output);
// t4 = t3 @ t2(256x96); t5 = pw(t4); t7 = t5 @ t6(96x200); t10 = pw(t7, t9); a second component
// t12 = pw(t11) on 200x200; t13 is unused. Dimensions are multiples of 128 and not.
const char* kProblem = R"({
  "widths":  [128, 256, 96, 256, 96, 96, 200, 200, 256, 200, 200, 200, 200, 64],
  "heights": [128, 128, 256, 128, 128, 128, 96, 128, 128, 128, 128, 200, 200, 64],
  "inputs":  [[0, 1], [3], [3, 2], [4], [5, 6], [7, 9], [11]],
  "outputs": [[3], [8], [4], [5], [7], [10], [12]],
  "base_costs": [2000, 300, 1500, 100, 1000, 200, 50],
  "op_types": ["MatMul", "Pointwise", "MatMul", "Pointwise", "MatMul", "Pointwise", "Pointwise"],
  "fast_memory_capacity": 200000,
  "slow_memory_bandwidth": 10,
  "native_granularity": [128, 128]
})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlsys;
  static const Problem p = parseProblemText(kProblem, "fixed");
  if (fuzz::skipKnownBug(data, size)) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Schedule s;
  try {
    s = parseScheduleText(text, p, "fuzz");
  } catch (const InputError&) {
    return 0;
  }
  fuzz::evaluateAndCompare(p, s);
  // Round trip (latencies are re-emitted from `reported`).
  Schedule t;
  try {
    t = parseScheduleText(scheduleToJson(s, p, s.reported), p, "roundtrip");
  } catch (const InputError& e) {
    fuzz::bug(std::string("scheduleToJson output does not parse back: ") + e.what());
  }
  if (t.subgraphs != s.subgraphs) fuzz::bug("scheduleToJson round trip changed the schedule");
  return 0;
}
