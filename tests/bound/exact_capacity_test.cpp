// A tensor of exactly the fast memory's size is never retained (cost/bound/internal.h, retainable):
// a subgraph it were retained into would also hold at least one element of an output (O(S) is never
// empty), so its working set would exceed the capacity (V11). The share bound may then claim it as a
// MatMul's operand (share_claims.cpp, usable): every subgraph running the MatMul loads it.
//
// The graphs are an encoder layer's MLP tail (instances/models/encoder-s512.json, ops 39-42): a ReLU
// makes the 2048 x 512 LHS of the second linear layer (K = 2048), in a fast memory of 2048 x 512
// elements; the bias add and the residual add follow. Before the fix the LHS counted as retainable,
// the MatMul's joint floor claimed only its RHS, and the share bound gave it half its loads.
#include <gtest/gtest.h>

#include <string>

#include "tests/bound/open_shares.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

std::string mlpTail(long capacity, bool withAdds) {
  const std::string c = std::to_string(capacity);
  if (!withAdds)
    return R"({"fast_memory_capacity": )" + c +
           R"(, "slow_memory_bandwidth": 64, "native_granularity": [128, 128], "widths": [2048, 2048, 512, 512], "heights": [512, 512, 2048, 512], "inputs": [[0], [1, 2]], "outputs": [[1], [3]], "base_costs": [16, 2048], "op_types": ["Pointwise", "MatMul"]})";
  return R"({"fast_memory_capacity": )" + c +
         R"(, "slow_memory_bandwidth": 64, "native_granularity": [128, 128], "widths": [2048, 2048, 512, 512, 512, 512, 512], "heights": [512, 512, 2048, 512, 512, 512, 512], "inputs": [[0], [1, 2], [3], [5, 4]], "outputs": [[1], [3], [4], [6]], "base_costs": [16, 2048, 16, 16], "op_types": ["Pointwise", "MatMul", "Pointwise", "Pointwise"]})";
}

TEST(ExactCapacity, ATensorOfTheCapacityIsClaimedAndTheShareBoundStaysBelowTheOptimum) {
  for (bool withAdds : {false, true})
    for (const char* model : {"", "k_limit=reduction", "matmul_compute=native_depth"}) {
      ModelOptions m;
      if (*model) m.setAssignment(model);
      const Problem p = test::problemFromJson(mlpTail(2048L * 512, withAdds));
      const ExactResult opt = test::fullSpaceOptimum(p, m);
      ASSERT_TRUE(opt.proven_optimal) << model;
      const double lb = test::openShares(p, m).value();
      EXPECT_LE(lb, opt.latency * (1 + 1e-12)) << model << (withAdds ? " with the adds" : "");
      if (*model == '\0') {
        // Under the spec (k <= N < K) the MatMul loads its LHS and RHS strips in every k-step of
        // its 16 tiles: 16 x 2 x 2048 x 128 / 64 = 131,072 of the optimum's 167,936 or 172,032.
        // With the LHS claimed the share bound reaches at least those loads; as retainable
        // (the old rule) it reached 65,536 for the MatMul.
        EXPECT_GE(lb, 131072) << (withAdds ? "with the adds" : "");
      }
    }
}

TEST(ExactCapacity, OneElementMoreAndTheTensorMayBeRetained) {
  // With room for one more element the LHS counts as retainable again (a relaxation: it still
  // never fits beside an RHS strip and an output tile), and the bound holds either way.
  const Problem p = test::problemFromJson(mlpTail(2048L * 512 + 1, true));
  const ExactResult opt = test::fullSpaceOptimum(p, {});
  ASSERT_TRUE(opt.proven_optimal);
  const double lb = test::openShares(p, {}).value();
  EXPECT_LE(lb, opt.latency * (1 + 1e-12));
  EXPECT_LT(lb, 131072);
}

}  // namespace
}  // namespace mlsys
