// A-14 (spec section 8, the amended item): an op runs once per DISTINCT region of its output
// needed in a step. The spec's own example (Pointwise 0 -> MatMul 1's LHS and Pointwise 2's
// input, all 128 x 128, one subgraph): 3,100 at [128,128,128] (op 0 once), 5,100 at [128,128,64]
// (op 0 for the k-strip in each of two k-steps and once for the epilogue's tile). Each figure is
// asserted exactly under every cost method, and the graph of issue 50's case C, where the same
// coincidence on 64 x 64 tensors makes the schedule 2,100.
#include <gtest/gtest.h>

#include "cost/pricing/evaluator.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

const char* kA14 =
    R"({"widths":[128,128,128,128,128],"heights":[128,128,128,128,128],"inputs":[[0],[1,2],[3,1]],)"
    R"("outputs":[[1],[3],[4]],"base_costs":[1000,2000,100],"op_types":["Pointwise","MatMul","Pointwise"],)"
    R"("fast_memory_capacity":100000,"slow_memory_bandwidth":100,"native_granularity":[128,128]})";
const char* kCaseC =
    R"({"widths":[64,64,64,64,64],"heights":[64,64,64,64,64],"inputs":[[0],[1,2],[3,1]],"outputs":[[1],[3],[4]],)"
    R"("base_costs":[1000,1000,100],"op_types":["Pointwise","MatMul","Pointwise"],"fast_memory_capacity":100000,)"
    R"("slow_memory_bandwidth":6,"native_granularity":[128,128]})";

double priced(const Problem& p, const std::string& gran, CostMethod how) {
  const Schedule s = test::scheduleFromJson(
      R"({"subgraphs":[[0,1,2]],"granularities":[)" + gran + R"(],"tensors_to_retain":[[]],"subgraph_latencies":[0]})",
      p);
  const Evaluation ev = evaluateSchedule(p, s, {}, how);
  EXPECT_TRUE(ev.valid) << ev.reason;
  return ev.total;
}

TEST(DistinctRegions, TheSpecsExampleRunsTheProducerOncePerDistinctRegion) {
  const Problem p = test::problemFromJson(kA14);
  for (CostMethod how : {CostMethod::Auto, CostMethod::Walk, CostMethod::Fast}) {
    EXPECT_EQ(priced(p, "[128,128,128]", how), 3100);
    EXPECT_EQ(priced(p, "[128,128,64]", how), 5100);
  }
}

TEST(DistinctRegions, IssueFiftyCaseC) {
  const Problem p = test::problemFromJson(kCaseC);
  for (CostMethod how : {CostMethod::Auto, CostMethod::Walk, CostMethod::Fast})
    EXPECT_NEAR(priced(p, "[64,64,64]", how), 2100, 1e-9);
}

// Two tile rows: the LHS strip (the whole K = 128 at nk = 1) and the epilogue's tile are the same
// region in every step, so op 0 runs once a tile: 2 x 3,100 (it was 2 x 4,100 before A-14).
TEST(DistinctRegions, SameRegionInEveryStepCountsOnceATile) {
  const Problem p = test::problemFromJson(kA14);
  for (CostMethod how : {CostMethod::Auto, CostMethod::Walk, CostMethod::Fast})
    EXPECT_EQ(priced(p, "[128,64,128]", how), 6200);
  const SubgraphPlan pl = planSubgraph(p, {}, {0, 1, 2}, {128, 64, 128}, {}, {});
  ASSERT_TRUE(pl.valid) << pl.reason;
  EXPECT_EQ(pl.pw_last, 1100);  // op 0 once and op 2
  EXPECT_TRUE(pl.regions.empty());
}

}  // namespace
}  // namespace mlsys
