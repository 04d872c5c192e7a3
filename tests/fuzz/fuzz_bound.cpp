// libFuzzer target (issue 50): problem bytes -> a random problem of 1-5 ops outside the generator's
// families (tests/soundness/random_problem.h, problemFromBytes: tensors in two roles, residuals,
// diamonds, shared weights, capacities around a tile's and a tile row's working set) under one of
// the three model settings (the first byte) -> every argument of the lower bound alone against the
// brute-force reference (tests/bound_check: each part floor in every variant of its arguments
// against the cheapest subgraph of its ops, the whole bound with each argument off or alone, the
// cover off, the open ops, against the cheapest schedule). The reference shares no code with the
// bound (the full-space exact solver does: it uses the bound's any-order floor, so it is not the
// judge here). Any violation prints the problem and aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/bound_check/bound_check.h"
#include "tests/soundness/random_problem.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlsys;
  using namespace mlsys::soundness;
  if (size < 2) return 0;
  RandomSpec spec;
  spec.max_ops = 5;
  spec.max_dim = 512;  // keeps the reference's pricing within the fuzzer's per-input time (ASan)
  const Problem p = problemFromBytes(data + 1, size - 1, spec);
  const auto models = modelSettings();
  const auto& [name, m] = models[data[0] % models.size()];
  const CheckResult r = checkBound(p, m, Space::ci(), CheckLevel::Full, /*reference_seconds=*/60);
  if (!r.violations.empty()) {
    std::fprintf(stderr, "fuzz_bound: %zu violation(s) under %s; the first:\n%s\n", r.violations.size(), name.c_str(),
                 r.violations.front().c_str());
    std::abort();
  }
  return 0;
}
