// epilogue-tiles (cost/bound/joint_floors.cpp, jointFrontier; share_claims.cpp, epilogueOf): a
// joint MatMul whose output no valid subgraph can retain either writes it (its store counts in
// its constant-lambda points) or keeps it ephemeral, and then a step of its first tile holds the
// accumulator, an output tile and what its Pointwise reader's other inputs need (more tiles:
// smaller ones, more reloads). Checked against the exact solver over the spec's whole space on a
// hand-built block, and on random graphs drawn independently of `mlsys generate`'s families
// (tests/soundness/random_problem.h) against the brute-force reference (tests/soundness), which
// shares no code with the bound.
#include <gtest/gtest.h>

#include <string>

#include "cost/bound/bound.h"
#include "tests/bound/open_shares.h"
#include "tests/bound_check/bound_check.h"
#include "tests/soundness/random_problem.h"

namespace mlsys::soundness {
namespace {

// A1 (512 wide, 128 tall) @ B1 (512 x 512) -> T1 (512 x 128), A2 @ B2 -> T2 likewise, and
// Pointwise(T1, T2) -> U, a graph output. K = 512 > N: each MatMul has nk >= 4 k-steps. Their
// forced stores (forcedStores: S holding one writes T_i or U) share U, so the second gets none.
// With C = 30,000, T2 written fits 128 x 128 tiles (four column tiles: A2 four times, B2 once, T2
// stored); T2 ephemeral holds three tiles (its accumulator, U's tile, and T1's accumulator or slice),
// so h <= 77 or w <= 77: A2 seven times or B2 twice, more than the store saves.
Problem residualBlock(long capacity) {
  return test::problemFromJson(R"({"widths":[512,512,512,512,512,512,512],"heights":[128,512,128,128,512,128,128],)"
                               R"("inputs":[[0,1],[3,4],[2,5]],"outputs":[[2],[5],[6]],"base_costs":[100,100,50],)"
                               R"("op_types":["MatMul","MatMul","Pointwise"],"fast_memory_capacity":)" +
                               std::to_string(capacity) +
                               R"(,"slow_memory_bandwidth":10,"native_granularity":[128,128]})");
}

bool above(double claim, double cost) { return claim > cost * (1 + 1e-9) + 1e-9; }

// Under the spec the second MatMul's share rises by T2's store (65,536 / 10), and the bound stays at
// or below the whole space's optimum under each model setting; with room for three 128 x 128 tiles
// (C = 60,000) the ephemeral T2 costs nothing more, and the argument gives nothing.
TEST(EpilogueTiles, AJointMatMulPaysItsStoreOrSmallerTiles) {
  for (const auto& [name, m] : modelSettings()) {
    SCOPED_TRACE(name);
    for (long capacity : {30000L, 60000L}) {
      SCOPED_TRACE("C=" + std::to_string(capacity));
      const Problem p = residualBlock(capacity);
      const ExactResult r = test::fullSpaceOptimum(p, m);
      ASSERT_TRUE(r.found);
      const double with = test::openShares(p, m).value(),
                   without = test::openShares(p, m, BoundArgs{}.disable(BoundArg::EpilogueTiles)).value();
      EXPECT_FALSE(above(with, r.lower_bound)) << with << " against the optimum " << r.lower_bound;
      if (capacity == 30000 && m.k_limit == ModelOptions::KLimit::Native) EXPECT_NEAR(with, without + 6553.6, 1e-6);
      if (capacity == 60000) EXPECT_EQ(with, without);
    }
  }
}

// On random graphs the share bound with the argument (every op open, no cover) is never below the
// bound without it, and where it is above, at or below the reference's cheapest schedule, under
// each model setting; it rises on some of them (under k_limit=reduction a MatMul may take nk = 1,
// whose points the argument leaves as they are, and on these graphs it never rose).
TEST(EpilogueTiles, RaisesRandomGraphsAndStaysBelowTheReference) {
  int raised = 0;
  for (const auto& [name, m] : modelSettings()) {
    SCOPED_TRACE(name);
    for (uint64_t seed = 1; seed <= 300; ++seed) {
      const Problem p = randomProblem(9'000'000 + seed);
      const double with = test::openShares(p, m).value();
      const double without = test::openShares(p, m, BoundArgs{}.disable(BoundArg::EpilogueTiles)).value();
      EXPECT_FALSE(above(without, with)) << "seed " << seed << ": the argument lowered the bound";
      if (!above(with, without)) continue;
      ++raised;
      const GraphBest best = bestSchedule(p, m, Space::ci(), 0);
      if (best.found)
        EXPECT_FALSE(above(with, best.total)) << "seed " << seed << ": " << with << " against " << best.total;
    }
  }
  EXPECT_GE(raised, 5) << "the argument rose on too few graphs to check it";
}

}  // namespace
}  // namespace mlsys::soundness
