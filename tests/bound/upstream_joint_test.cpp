// upstream-joint (cost/bound/compute_floor.cpp, accumulationRoles; cost/bound/shares.h,
// share_modes.cpp): joint floors for MatMuls that may be upstream elsewhere, capped there. Checked
// against the exact solver over the spec's whole space, with the exact cover (and the linear
// relaxation where it would price the group) switched off so that the share bound prices them.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "cost/bound/bound.h"
#include "cost/model/problem.h"
#include "engine/exact/exact.h"
#include "tests/bound/open_shares.h"
#include "tests/test_util.h"

using namespace mlsys;
using test::fullSpaceOptimum;

namespace {

// A (512 wide, 128 tall) @ B (256 x 512) -> T (256 x 128) -> Pointwise -> U -> L (128 x 1024) @ U
// -> V (256 x 1024), a graph output; `tail` adds V @ R (128 x 256) -> X (128 x 1024). The second
// MatMul (K = 128, its output a graph output) always accumulates; the first (K = 512) may be
// upstream of it (fused, it makes its output's k-strips), but where the first accumulates the two
// would be two accumulating MatMuls of different K (decision 2): it feeds no MatMul there.
Problem upstreamBlock(long capacity, int firstCost, bool tail = false, int secondCost = 800) {
  return test::problemFromJson(
      std::string(R"({"widths":[512,256,256,256,128,256)") + (tail ? ",128,128" : "") +
      R"(],"heights":[128,512,128,128,1024,1024)" + (tail ? ",256,1024" : "") + R"(],"inputs":[[0,1],[2],[4,3])" +
      (tail ? ",[5,6]" : "") + R"(],"outputs":[[2],[3],[5])" + (tail ? ",[7]" : "") + R"(],"base_costs":[)" +
      std::to_string(firstCost) + ",100," + std::to_string(secondCost) + (tail ? ",800" : "") +
      R"(],"op_types":["MatMul","Pointwise","MatMul")" + (tail ? R"(,"MatMul")" : "") + R"(],"fast_memory_capacity":)" +
      std::to_string(capacity) + R"(,"slow_memory_bandwidth":10,"native_granularity":[128,128]})");
}

// The share bound alone on every component, with or without the argument.
LowerBound openShares(const Problem& p, const ModelOptions& m, bool upstreamJoint) {
  return test::openShares(p, m, upstreamJoint ? BoundArgs{} : BoundArgs{}.disable(BoundArg::UpstreamJoint));
}

}  // namespace

// accumulationRoles (compute_floor.cpp): the first MatMul may feed a MatMul and be upstream (on
// V's grid, 2 x 8 tiles), yet never feeds one where it accumulates; the second always accumulates.
// With a MatMul after V (fusable: MatMul -> MatMul) the second may be upstream too, and the first
// loses the premise.
TEST(ShareBound, AccumulationRolesOfAMatMulThatMayBeUpstream) {
  for (bool reduction : {false, true}) {
    SCOPED_TRACE(reduction ? "reduction" : "spec");
    const ModelOptions m = test::reading(reduction);
    const OpComputeFloor f = opComputeFloor(upstreamBlock(100000, 500), m);
    EXPECT_TRUE(f.may_feed_matmul[0]);
    EXPECT_FALSE(f.always_accumulates[0]);
    EXPECT_FALSE(f.feeds_matmul_accumulating[0]);
    EXPECT_EQ(f.min_tiles_upstream[0], 16);
    EXPECT_TRUE(f.always_accumulates[2]);
    EXPECT_FALSE(f.feeds_matmul_accumulating[2]);
    EXPECT_EQ(f.min_tiles_upstream[2], std::numeric_limits<i64>::max());
    const OpComputeFloor g = opComputeFloor(upstreamBlock(100000, 500, true), m);
    EXPECT_FALSE(g.always_accumulates[2]);
    EXPECT_TRUE(g.feeds_matmul_accumulating[0]);
    EXPECT_EQ(g.upstream_roles[0], 2);  // the walk goes on past a MatMul that may be upstream: U is an RHS
    EXPECT_TRUE(g.always_accumulates[3]);
  }
}

// upstream-joint: with every op open (share_parts 0) the first MatMul takes a joint floor (its
// operands A and B are graph inputs), capped where it is upstream by its mixture of its compute on
// V's 16 tiles and its loads of A and B once at the second MatMul's lambda there. The second
// computes far more than it loads (lambda 1), the first loads far more: without the argument the
// first takes its compute beside the second's lambda (1,000), with it its joint floor capped at
// 8,000. The bound rises and stays at or below the whole space's optimum under both readings.
TEST(ShareBound, AMatMulThatMayBeUpstreamTakesItsJointFloorAtOrBelowTheOptimum) {
  for (long capacity : {100000L, 40000L})
    for (bool reduction : {false, true}) {
      SCOPED_TRACE("C=" + std::to_string(capacity) + (reduction ? " reduction" : " spec"));
      const Problem p = upstreamBlock(capacity, 500, false, 20000);
      const ModelOptions m = test::reading(reduction);
      const ExactResult r = fullSpaceOptimum(p, m);
      ASSERT_TRUE(r.found);
      const LowerBound with = openShares(p, m, true), without = openShares(p, m, false);
      int joint = 0, jointWithout = 0;
      for (const BoundComponent& c : with.components) joint += c.joint_ops;
      for (const BoundComponent& c : without.components) jointWithout += c.joint_ops;
      EXPECT_EQ(joint, jointWithout + 1);
      EXPECT_LE(with.value(), r.lower_bound * (1 + 1e-9));
      EXPECT_GT(with.value(), without.value() * 1.01);
    }
}

// The cap is needed: A (512 wide, 128 tall) @ B (256 x 512) -> T (256 x 128) @ W (128 x 256) ->
// V (128 x 128). Alone, the first MatMul (K = 512, two column tiles) reloads A's k-strips in each
// tile; fused upstream of the second (K = 256, V a graph output: it always accumulates) it makes
// T's k-strips from A's rows, the same slice in every step, so A is loaded once and the fused
// subgraph costs less than the first MatMul's joint floor alone. The bound stays at or below the
// whole space's optimum (it does not without the cap).
TEST(ShareBound, WhereTheMatMulIsUpstreamItsShareIsCapped) {
  for (bool reduction : {false, true}) {
    SCOPED_TRACE(reduction ? "reduction" : "spec");
    const Problem p = test::problemFromJson(R"({"widths":[512,256,256,128,128],"heights":[128,512,128,256,128],
      "inputs":[[0,1],[2,3]],"outputs":[[2],[4]],"base_costs":[100,100],"op_types":["MatMul","MatMul"],
      "fast_memory_capacity":120000,"slow_memory_bandwidth":10,"native_granularity":[128,128]})");
    const ModelOptions m = test::reading(reduction);
    const OpComputeFloor f = opComputeFloor(p, m);
    ASSERT_FALSE(f.feeds_matmul_accumulating[0]);
    ASSERT_FALSE(f.always_accumulates[0]);
    const ExactResult r = fullSpaceOptimum(p, m);
    ASSERT_TRUE(r.found);
    for (int parts : {0, 24}) {
      BoundOptions bo;
      bo.max_cover_ops = 0;
      bo.share_parts = parts;
      bo.args.upstream_joint_alone = true;
      EXPECT_LE(lowerBound(p, m, bo).value(), r.lower_bound * (1 + 1e-9)) << "share_parts " << parts;
    }
  }
}

// split-joint (global_floors.cpp): with the MatMul after V the second may be upstream, so the walk
// no longer proves that the first (K = 512 > N) feeds no MatMul where it accumulates; under the
// spec (k <= N) it accumulates at nk >= 4 there, where no MatMul can read its output (E2), so it
// takes its joint floor all the same, and so does the third (K = 256). Under k_limit=reduction
// (nk = 1 possible) nothing changes. Measured under the spec: 167,600 -> 170,560 (C = 100,000;
// optimum 192,614.4) and -> 174,540 (C = 40,000; optimum 200,736).
TEST(SplitJoint, AMatMulWithKAboveNFeedsNoMatMulWhereItAccumulates) {
  for (long capacity : {100000L, 40000L})
    for (bool reduction : {false, true}) {
      SCOPED_TRACE("C=" + std::to_string(capacity) + (reduction ? " reduction" : " spec"));
      const Problem p = upstreamBlock(capacity, 500, true, 20000);
      const ModelOptions m = test::reading(reduction);
      ASSERT_TRUE(opComputeFloor(p, m).feeds_matmul_accumulating[0]);
      const ExactResult r = fullSpaceOptimum(p, m);
      ASSERT_TRUE(r.found);
      const LowerBound with = test::openShares(p, m),
                       without = test::openShares(p, m, BoundArgs{}.disable(BoundArg::SplitJoint));
      int joint = 0, jointWithout = 0;
      for (const BoundComponent& c : with.components) joint += c.joint_ops;
      for (const BoundComponent& c : without.components) jointWithout += c.joint_ops;
      EXPECT_LE(with.value(), r.lower_bound * (1 + 1e-9));
      if (reduction) {
        EXPECT_EQ(joint, jointWithout);
        EXPECT_EQ(with.value(), without.value());
      } else {
        EXPECT_EQ(joint, jointWithout + 2);
        EXPECT_GT(with.value(), without.value() * 1.015) << with.value() << " against " << without.value();
      }
    }
}
