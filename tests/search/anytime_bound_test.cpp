// The anytime bound (issue 32, item 4): the exact solver over the spec's whole space proves a
// lower bound during the run, which replaces the static one when higher; the run stops as soon
// as the best meets it. random-7-s14: the static bound is 298,926.08, the optimum 421,806.08
// (proven by the exact solver in ~0.05 s, bench/exact_sweep.py --full-space).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "tests/test_util.h"

using namespace mlsys;

namespace {

constexpr double kOptimum = 421806.08;

struct Solved {
  test::RunResult run;
  rapidjson::Document stats;
};

// `mlsys solve` of generated random-7-s14 with `args`, and its --stats.
Solved solveR714(const std::string& name, std::vector<std::string> args) {
  const std::string problem = test::tempPath("anytime_r714.json"), stats = test::tempPath(name + ".stats.json");
  test::RunResult g = test::runMlsys({"generate", "--family", "random", "--size", "7", "--seed", "14", "-o", problem});
  EXPECT_EQ(g.exit_code, 0) << g.err;
  args.insert(args.begin(), {"solve", problem, test::tempPath(name + ".out.json")});
  args.insert(args.end(), {"--stats", stats});
  Solved r{test::runMlsys(args), {}};
  EXPECT_EQ(r.run.exit_code, 0) << r.run.err;
  if (r.run.exit_code == 0) r.stats.Parse(test::readText(stats).c_str());
  return r;
}

}  // namespace

// --exact: the exact solver's certificate raises the bound to the optimum and ends the run
// (a budget of 60 s is a net for a hang only: the run stops in well under a second).
TEST(AnytimeBound, TheExactSolverRaisesTheBoundAndEndsTheRun) {
  Solved r = solveR714("anytime_exact", {"--exact", "--seconds", "60"});
  ASSERT_TRUE(r.stats.IsObject());
  EXPECT_STREQ(r.stats["stop_reason"].GetString(), "optimal");
  EXPECT_DOUBLE_EQ(r.stats["best_latency"].GetDouble(), kOptimum);
  EXPECT_NEAR(r.stats["lower_bound"].GetDouble(), kOptimum, kOptimum * 1e-9);
  EXPECT_NE(r.run.err.find("lower bound raised to 421,806.08 by the exact solver"), std::string::npos) << r.run.err;
  EXPECT_NE(r.run.err.find("optimal over the spec's whole space"), std::string::npos) << r.run.err;
}

// Its restricted space proves nothing beyond itself: the bound stays static, the run uses its
// budget.
TEST(AnytimeBound, TheRestrictedSpaceLeavesTheBoundStatic) {
  Solved r = solveR714("anytime_restricted", {"--exact", "--seconds", "1", "--set", "search.exact_full_space=false"});
  ASSERT_TRUE(r.stats.IsObject());
  EXPECT_STREQ(r.stats["stop_reason"].GetString(), "deadline");
  EXPECT_LT(r.stats["lower_bound"].GetDouble(), 300000.0);
  EXPECT_EQ(r.run.err.find("raised"), std::string::npos) << r.run.err;
}

// Without --exact: the LNS worker's whole-graph solve (graphs of up to lns.whole_graph_ops ops)
// raises the bound during the search, and the run stops.
TEST(AnytimeBound, TheLnsWholeGraphSolveRaisesTheBoundDuringTheSearch) {
  Solved r = solveR714("anytime_lns", {"--threads", "2", "--seconds", "60"});
  ASSERT_TRUE(r.stats.IsObject());
  EXPECT_STREQ(r.stats["stop_reason"].GetString(), "optimal");
  EXPECT_NEAR(r.stats["lower_bound"].GetDouble(), kOptimum, kOptimum * 1e-9);
  EXPECT_NE(r.run.err.find("bound raised to 421,806.08"), std::string::npos) << r.run.err;
  EXPECT_NE(r.run.err.find("by the exact solver (whole graph)"), std::string::npos) << r.run.err;
}
