// Numbers at the documented limits (issue 51 item 5): dimensions 2^24, base cost and bandwidth
// 2^40, capacity 2^62. The evaluator prices exactly there or refuses with rule range; it never
// saturates a count and reports a wrong total.
#include <gtest/gtest.h>

#include <string>

#include "cost/model/problem.h"
#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"

namespace mlsys {
namespace {

// One MatMul of 2^24 x 2^24 tensors (K = 2^24), base cost 2^40.
Problem bigMatMul(const std::string& bandwidth) {
  return parseProblemText(
      R"({"widths":[16777216,16777216,16777216],"heights":[16777216,16777216,16777216],"inputs":[[0,1]],)"
      R"("outputs":[[2]],"base_costs":[1099511627776],"op_types":["MatMul"],)"
      R"("fast_memory_capacity":4611686018427387904,"slow_memory_bandwidth":)" +
          bandwidth + R"(,"native_granularity":[128,128]})",
      "big");
}

Schedule oneSubgraph(const Problem& p, const std::string& gran) {
  return parseScheduleText(R"({"subgraphs":[[0]],"granularities":[)" + gran +
                               R"(],"tensors_to_retain":[[]],"traversal_orders":[null],"subgraph_latencies":[0]})",
                           p);
}

// Every step computes base 2^40 * k/K = 2^23 (reduction depth, k = 128 of K = 2^24) and 2^51 steps
// (2^17 x 2^17 tiles x 2^17 k-steps) are all compute-bound: 2^74 exactly, at either bandwidth.
// With bandwidth 2^40 the step prices' common denominator D * B is 2^64, so a numerator over it
// would be 2^138: the sum is kept in lowest terms instead (was: "invalid (rule range)").
TEST(Limits, TheLargestMatMulIsPricedExactlyAtEitherBandwidth) {
  for (const char* bw : {"1", "1099511627776"}) {
    const Problem p = bigMatMul(bw);
    const Evaluation ev = evaluateSchedule(p, oneSubgraph(p, "[128,128,128]"), ModelOptions{});
    ASSERT_TRUE(ev.valid) << "bandwidth " << bw << ": " << ev.reason;
    ASSERT_EQ(ev.subgraphs.size(), 1u);
    const SubgraphCost& c = ev.subgraphs[0].cost;
    EXPECT_EQ(c.den, 1) << bw;
    EXPECT_TRUE(c.num == (i128{1} << 74)) << bw;
    EXPECT_EQ(c.steps, i64{1} << 51) << bw;
    EXPECT_EQ(ev.total, 18889465931478580854784.0) << bw;
  }
}

// [16,16,1] has 2^20 x 2^20 tiles x 2^24 k-steps = 2^64 steps, one more than 64-bit counts hold:
// refused by name (was: "valid", steps saturated at 2^63 - 1, latency 2.45e18 against the real 2^80).
TEST(Limits, MoreStepsThanSixtyFourBitsIsRefusedNotSaturated) {
  const Problem p = bigMatMul("1");
  const Evaluation ev = evaluateSchedule(p, oneSubgraph(p, "[16,16,1]"), ModelOptions{});
  EXPECT_FALSE(ev.valid);
  EXPECT_EQ(ev.rule, Rule::Range);
  EXPECT_NE(ev.reason.find("more than 2^63 - 1 steps"), std::string::npos) << ev.reason;
  // The walk refuses it too (the same check comes first).
  const Evaluation walk = evaluateSchedule(p, oneSubgraph(p, "[16,16,1]"), ModelOptions{}, CostMethod::Walk);
  EXPECT_EQ(walk.rule, Rule::Range);
}

// A fraction that stays a fraction: bandwidth 3 with a memory-bound subgraph (the denominators
// D * B do not cancel) keeps the exact value num / den in lowest terms.
TEST(Limits, ExactSumsStayInLowestTerms) {
  const Problem p = parseProblemText(
      R"({"widths":[128,128],"heights":[128,128],"inputs":[[0]],"outputs":[[1]],"base_costs":[1],)"
      R"("op_types":["Pointwise"],"fast_memory_capacity":100000,"slow_memory_bandwidth":3,"native_granularity":[128,128]})");
  const Evaluation ev = evaluateSchedule(p, oneSubgraph(p, "[128,128,1]"), ModelOptions{});
  ASSERT_TRUE(ev.valid) << ev.reason;
  const SubgraphCost& c = ev.subgraphs[0].cost;
  // Load 128*128 and store 128*128 at bandwidth 3: 32768 / 3.
  EXPECT_TRUE(c.num == 32768 && c.den == 3) << static_cast<double>(c.num) << " / " << static_cast<double>(c.den);
}

}  // namespace
}  // namespace mlsys
