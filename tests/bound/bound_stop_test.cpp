// The bound keeps the deadline (issue 51, item 1): a stop fired at the N-th poll of give_up, for
// N across a whole run, ends the bound with a value that is still a bound (at or below the value
// of the run that was not stopped, at or above the global floors), and the anytime values
// (BoundOptions::on_value) rise to the returned one. The seam is give_up itself: it counts its
// calls and fires from the N-th on.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cost/bound/bound.h"
#include "engine/generate/generator.h"
#include "tests/soundness/random_problem.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

struct Stopped {
  double value = 0, floors = 0;
  long polls = 0;
  std::vector<double> published;
};

Stopped boundStoppedAt(const Problem& p, long fireAt) {
  Stopped s;
  BoundOptions bo;
  bo.give_up = [&] { return ++s.polls >= fireAt; };
  bo.on_value = [&](double v) { s.published.push_back(v); };
  const LowerBound lb = lowerBound(p, ModelOptions{}, bo);
  s.value = lb.value();
  s.floors = std::max(lb.compute, lb.traffic);
  return s;
}

void checkEveryStop(const Problem& p, const std::string& name) {
  const Stopped full = boundStoppedAt(p, std::numeric_limits<long>::max());
  ASSERT_GT(full.polls, 0) << name;
  ASSERT_FALSE(full.published.empty()) << name;
  EXPECT_DOUBLE_EQ(full.published.back(), full.value) << name;
  // Up to 40 stops spread over the run's polls (every one on short runs).
  const long step = std::max<long>(1, full.polls / 40);
  for (long n = 1; n <= full.polls; n += step) {
    const Stopped s = boundStoppedAt(p, n);
    EXPECT_LE(s.value, full.value * (1 + 1e-12)) << name << ", stopped at poll " << n;
    EXPECT_GE(s.value, s.floors) << name << ", stopped at poll " << n;
    for (size_t i = 1; i < s.published.size(); ++i) EXPECT_GE(s.published[i], s.published[i - 1]) << name;
    if (!s.published.empty()) {
      EXPECT_DOUBLE_EQ(s.published.back(), s.value) << name << ", stopped at poll " << n;
    }
  }
}

TEST(BoundStop, EveryStopGivesABoundAtOrBelowTheWholeRun) {
  checkEveryStop(parseProblemFile(test::instancePath("generated/transformer-20.json")), "transformer-20");
  checkEveryStop(parseProblemFile(test::instancePath("generated/random-30.json")), "random-30");
  checkEveryStop(parseProblemFile(test::instancePath("generated/mixer-16.json")), "mixer-16");
  for (uint64_t seed = 1; seed <= 20; ++seed)
    checkEveryStop(soundness::randomProblem(seed), "random problem " + std::to_string(seed));
}

// BoundOptions::stop_now (the run is ending): from the N-th poll on, the bound prices nothing more.
// The components not yet priced keep their quick floors, and the value is still a bound (at or
// below the whole run's, at or above the global floors). After the stop, give_up is asked a few
// times at most. With give_up alone, the steps after the stop still poll it: the quick floors of
// every component left, by their groups (0.4 s on 200,000 ops).
TEST(BoundStop, StopNowEndsTheBoundAtOnce) {
  const Problem p = generateProblem("random", 400, 7);
  const Stopped full = boundStoppedAt(p, std::numeric_limits<long>::max());
  ASSERT_GT(full.polls, 100);
  const long step = std::max<long>(1, full.polls / 20);
  for (long n = 1; n <= full.polls; n += step) {
    long polls = 0, after = 0;
    BoundOptions bo;
    bo.stop_now = [&] { return polls >= n; };
    bo.give_up = [&] {
      if (polls >= n) ++after;
      return ++polls >= n;
    };
    const LowerBound lb = lowerBound(p, ModelOptions{}, bo);
    EXPECT_LE(lb.value(), full.value * (1 + 1e-12)) << "stopped at poll " << n;
    EXPECT_GE(lb.value(), std::max(lb.compute, lb.traffic)) << "stopped at poll " << n;
    EXPECT_LE(after, 8) << "stopped at poll " << n;
    size_t ops = 0;
    for (const BoundComponent& c : lb.components) ops += c.ops.size();
    EXPECT_EQ(ops, static_cast<size_t>(p.numOps())) << "stopped at poll " << n;
  }
}

TEST(BoundStop, ContestInstancesStopAnywhere) {
  const std::string dir = std::string(MLSYS_SHARED_DIR) + "/benchmarks";
  for (const char* name : {"mlsys-2026-13", "mlsys-2026-21"}) {
    const std::string path = dir + "/" + name + ".json";
    if (!std::ifstream(path)) GTEST_SKIP() << "../shared/benchmarks is absent";
    checkEveryStop(parseProblemFile(path), name);
  }
}

}  // namespace
}  // namespace mlsys
