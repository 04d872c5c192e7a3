#include <gtest/gtest.h>

#include "tests/test_util.h"

using namespace mlsys;

TEST(Smoke, Example5BIsExact) {
  Problem p = test::problemFromJson(R"({"widths":[128,128,128,128,128],"heights":[128,128,128,128,128],
    "inputs":[[0,1],[3,2]],"outputs":[[3],[4]],"base_costs":[2000,2000],"op_types":["MatMul","MatMul"],
    "fast_memory_capacity":45000,"slow_memory_bandwidth":10,"native_granularity":[128,128]})");
  Schedule s = test::scheduleFromJson(R"({"subgraphs":[[0,1]],"granularities":[[128,128,32]],
    "tensors_to_retain":[[]],"traversal_orders":[null],"subgraph_latencies":[0]})",
                                      p);
  Evaluation ev = evaluateSchedule(p, s, ModelOptions{});
  ASSERT_TRUE(ev.valid) << ev.reason;
  EXPECT_EQ(ev.total, 6915.2);
  EXPECT_EQ(ev.subgraphs[0].cost.peak_ws, 40960);
}
