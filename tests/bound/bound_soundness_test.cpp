// Every argument of the lower bound against brute force (issue 50, item 4), on random graphs of
// 1-6 ops drawn independently of `mlsys generate`'s families (tests/soundness/random_problem.h:
// tensors read in two to four roles, residuals, diamonds, shared weights, capacities around one
// tile's and one tile row's working set). Per model setting, 700 graphs in four tests of 175 (2,100 in all): each part
// floor (all on, each of its arguments off) against the cheapest subgraph of its ops, and the
// whole bound (all on, each argument off, the exact cover off, the share bound's open ops) against
// the cheapest schedule of the reference's space (tests/bound_check/bound_check.h). A violation
// prints the problem, the model, the variant and the two numbers. The sweep tool
// (bench/soundness_sweep.cpp) runs the same on as many graphs as wanted.
#include <gtest/gtest.h>

#include <mutex>
#include <tuple>

#include <oneapi/tbb/parallel_for.h>

#include "tests/bound_check/bound_check.h"
#include "tests/soundness/random_problem.h"

namespace mlsys::soundness {
namespace {

constexpr long kGraphs = 700;  // per model, in four parts (one test each: k_limit=reduction's took 497 s whole,
                               // a half of it 450 s in a CI run, near ctest's 600 s per test)
constexpr long kParts = 4;

class BoundSoundness : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(BoundSoundness, NoArgumentClaimsMoreThanBruteForce) {
  const auto [model, part] = GetParam();
  const auto [name, m] = modelSettings()[static_cast<size_t>(model)];
  std::mutex mu;
  std::vector<std::string> violations;
  long parts = 0, bounds = 0, found = 0;
  // Seeds differ per model, so that the three settings see 2,100 different graphs.
  // The parts interleave (seeds base + 4i + part), so that the slow graphs split evenly.
  const uint64_t base = 1 + static_cast<uint64_t>(model) * 1'000'000 + static_cast<uint64_t>(part);
  tbb::parallel_for(0L, kGraphs / kParts, [&](long j) {
    const long i = kParts * j;
    const Problem p = randomProblem(base + static_cast<uint64_t>(i));
    const CheckResult r = checkBound(p, m, Space::ci(), CheckLevel::Quick);
    std::lock_guard<std::mutex> lk(mu);
    parts += r.part_checks;
    bounds += r.bound_checks;
    found += r.reference_found ? 1 : 0;
    for (const std::string& v : r.violations) violations.push_back("seed " + std::to_string(base + i) + ": " + v);
  });
  EXPECT_GT(found, kGraphs / kParts * 9 / 10) << "the reference found too few schedules to check against";
  EXPECT_GT(parts, kGraphs / kParts * 10);
  EXPECT_GT(bounds, kGraphs / kParts * 15);
  EXPECT_TRUE(violations.empty()) << violations.size() << " violations under " << name << "; the first:\n"
                                  << (violations.empty() ? "" : violations.front());
}

INSTANTIATE_TEST_SUITE_P(Models, BoundSoundness,
                         ::testing::Combine(::testing::Values(0, 1, 2), ::testing::Values(0, 1, 2, 3)),
                         [](const auto& info) {
                           const int model = std::get<0>(info.param);
                           return std::string(model == 0   ? "Spec"
                                              : model == 1 ? "KLimitReduction"
                                                           : "NativeDepth") +
                                  "Part" + std::to_string(std::get<1>(info.param) + 1);
                         });

}  // namespace
}  // namespace mlsys::soundness
