// The report's building blocks: the one number format (humanNumber) and the per-subgraph
// traffic facts (subgraphTraffic: compute and memory time, elements loaded and stored).
#include "engine/report/report_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/report/schedule_facts.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

TEST(ReportFormat, ThousandsSeparatorsAndAtMostFourDecimals) {
  EXPECT_EQ(humanNumber(2118743.04), "2,118,743.04");
  EXPECT_EQ(humanNumber(1234.56789), "1,234.5679");
  EXPECT_EQ(humanNumber(6553.6), "6,553.6");
  EXPECT_EQ(humanNumber(100.0), "100");
  EXPECT_EQ(humanNumber(999.99999), "1,000");  // rounding carries into the integer part
  EXPECT_EQ(humanNumber(1000000.0), "1,000,000");
  EXPECT_EQ(humanNumber(-1234567.5), "-1,234,567.5");
  EXPECT_EQ(humanNumber(0.0), "0");
  EXPECT_EQ(humanNumber(-0.0), "0");
  EXPECT_EQ(humanNumber(-0.00001), "-0.00001");
  EXPECT_EQ(humanNumber(1234.5, 0), "1,235");
  EXPECT_EQ(humanNumber(1234.56, 1), "1,234.6");
}

TEST(ReportFormat, SmallValuesKeepSignificantDigits) {
  EXPECT_EQ(humanNumber(0.5), "0.5");
  EXPECT_EQ(humanNumber(0.12345), "0.1235");  // 0.12345 is 0.123449999... as a double
  EXPECT_EQ(humanNumber(0.000123456), "0.0001235");
  EXPECT_EQ(humanNumber(0.0123, 2), "0.012");
  EXPECT_EQ(humanNumber(0.4, 0), "0");  // no decimals asked: plain rounding
}

TEST(ReportFormat, ExtremesIntegersAndPercentages) {
  EXPECT_EQ(humanNumber(std::nan("")), "nan");
  EXPECT_EQ(humanNumber(INFINITY), "inf");
  EXPECT_EQ(humanNumber(-INFINITY), "-inf");
  EXPECT_EQ(humanNumber(1.5e20), "1.5e+20");
  EXPECT_EQ(humanNumber(i64{4611686018427387904}), "4,611,686,018,427,387,904");  // exact, unlike a double
  EXPECT_EQ(humanNumber(i64{-1234}), "-1,234");
  EXPECT_EQ(humanNumber(12), "12");
  EXPECT_EQ(humanPercent(0.1234), "12.3%");
  EXPECT_EQ(humanPercent(0.5, 0), "50%");
  EXPECT_EQ(humanPercent(0.00001234), "0.001%");
}

TEST(ReportFormat, EscapingAndCoordinates) {
  EXPECT_EQ(esc("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(px(12.5), "12.5");
  EXPECT_EQ(px(3.14159), "3.14");
  EXPECT_EQ(px(-0.001), "0");
  EXPECT_EQ(px(7.0), "7");
}

// MatMul 128x128x128, base cost 1000, bandwidth 10, granularity [128,128,32]: 4 k-steps, each
// loads a 128x32 and a 32x128 strip (8192 elements, 819.2 time units) and computes 250; the
// last also stores the 128x128 output (16384). Compute 1000, memory (4 * 8192 + 16384) / 10.
TEST(ScheduleFacts, TrafficOfAMatMulByHand) {
  Problem p = test::problemFromJson(R"({"widths":[128,128,128],"heights":[128,128,128],"inputs":[[0,1]],"outputs":[[2]],
    "base_costs":[1000],"op_types":["MatMul"],"fast_memory_capacity":50000,"slow_memory_bandwidth":10,"native_granularity":[128,128]})");
  Schedule s = test::scheduleFromJson(R"({"subgraphs":[[0]],"granularities":[[128,128,32]],"tensors_to_retain":[[]],
    "traversal_orders":[null],"subgraph_latencies":[4915.2]})",
                                      p);
  Evaluation ev = evaluateSchedule(p, s, ModelOptions{});
  ASSERT_TRUE(ev.valid) << ev.reason;
  auto t = subgraphTraffic(p, s, ev);
  ASSERT_EQ(t.size(), 1u);
  ASSERT_TRUE(t[0].known);
  EXPECT_EQ(t[0].loaded, 4 * 8192);
  EXPECT_EQ(t[0].stored, 16384);
  EXPECT_DOUBLE_EQ(t[0].compute, 1000);
  EXPECT_DOUBLE_EQ(t[0].memory, 4915.2);
  EXPECT_DOUBLE_EQ(ev.subgraphs[0].cost.latency, 4915.2);
}

// Two Pointwise ops fused: t1 never reaches slow memory; retained out, the output is not stored.
TEST(ScheduleFacts, TrafficOfFusedAndRetainedPointwise) {
  Problem p =
      test::problemFromJson(R"({"widths":[128,128,128],"heights":[128,128,128],"inputs":[[0],[1]],"outputs":[[1],[2]],
    "base_costs":[1000,1000],"op_types":["Pointwise","Pointwise"],"fast_memory_capacity":50000,"slow_memory_bandwidth":10,
    "native_granularity":[128,128]})");
  Schedule fused =
      test::scheduleFromJson(R"({"subgraphs":[[0,1]],"granularities":[[128,128,1]],"tensors_to_retain":[[]],
    "traversal_orders":[null],"subgraph_latencies":[3276.8]})",
                             p);
  Evaluation ev = evaluateSchedule(p, fused, ModelOptions{});
  ASSERT_TRUE(ev.valid) << ev.reason;
  auto t = subgraphTraffic(p, fused, ev);
  ASSERT_TRUE(t[0].known);
  EXPECT_EQ(t[0].loaded, 16384);
  EXPECT_EQ(t[0].stored, 16384);
  EXPECT_DOUBLE_EQ(t[0].compute, 2000);
  EXPECT_DOUBLE_EQ(t[0].memory, 3276.8);

  Schedule retained = test::scheduleFromJson(R"({"subgraphs":[[0],[1]],"granularities":[[128,128,1],[128,128,1]],
    "tensors_to_retain":[[1],[]],"traversal_orders":[null,null],"subgraph_latencies":[1638.4,1638.4]})",
                                             p);
  ev = evaluateSchedule(p, retained, ModelOptions{});
  ASSERT_TRUE(ev.valid) << ev.reason;
  t = subgraphTraffic(p, retained, ev);
  ASSERT_TRUE(t[0].known && t[1].known);
  EXPECT_EQ(t[0].loaded, 16384);
  EXPECT_EQ(t[0].stored, 0);  // t1 stays in fast memory
  EXPECT_EQ(t[1].loaded, 0);  // and is read from there
  EXPECT_EQ(t[1].stored, 16384);
}

// On real schedules: the latency, a sum of per-step maxima, lies between max(compute, memory) and
// compute + memory, equals compute when every step is compute-bound and memory when every step is
// memory-bound; elements moved = memory time x bandwidth.
TEST(ScheduleFacts, TrafficIsConsistentWithTheLatencyOnBenchmarks) {
  std::vector<std::string> problems;
  for (const char* ex : {"examples/ex1.json", "examples/ex3.json", "examples/ex5.json"})
    problems.push_back(test::instancePath(ex));
  for (const std::string& b : test::sharedBenchmarks()) problems.push_back(b);
  int checked = 0, mixed = 0;
  for (const std::string& path : problems) {
    SCOPED_TRACE(path);
    std::string out = test::tempPath("traffic_" + std::to_string(checked) + ".json");
    auto r = test::runMlsys({"solve", path, out, "--threads", "1", "--max-evals", "300", "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Problem p = parseProblemFile(path);
    Schedule s = parseScheduleFile(out, p);
    Evaluation ev = evaluateSchedule(p, s, ModelOptions{});
    ASSERT_TRUE(ev.valid) << ev.reason;
    auto t = subgraphTraffic(p, s, ev);
    for (size_t i = 0; i < t.size(); ++i) {
      const SubgraphCost& c = ev.subgraphs[i].cost;
      ASSERT_TRUE(t[i].known) << "subgraph " << i;
      const double L = c.latency, tol = 1e-9 * std::max(1.0, L);
      EXPECT_GE(L, std::max(t[i].compute, t[i].memory) - tol) << "subgraph " << i;
      EXPECT_LE(L, t[i].compute + t[i].memory + tol) << "subgraph " << i;
      if (c.memory_bound_steps == 0) {
        EXPECT_NEAR(L, t[i].compute, tol) << "subgraph " << i;
      }
      if (c.compute_bound_steps == 0) {
        EXPECT_NEAR(L, t[i].memory, tol) << "subgraph " << i;
      }
      mixed += c.memory_bound_steps > 0 && c.compute_bound_steps > 0;
      const double moved = static_cast<double>(t[i].loaded + t[i].stored);
      EXPECT_NEAR(moved, t[i].memory * static_cast<double>(p.bandwidth), 1e-9 * std::max(1.0, moved))
          << "subgraph " << i;
      EXPECT_GE(t[i].loaded, 0);
      EXPECT_GE(t[i].stored, 0);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  RecordProperty("subgraphs_checked", checked);
  RecordProperty("mixed_subgraphs", mixed);
}

TEST(ScheduleFacts, InvalidSubgraphHasNoTraffic) {
  Problem p =
      test::problemFromJson(R"({"widths":[128,128,128],"heights":[128,128,128],"inputs":[[0],[1]],"outputs":[[1],[2]],
    "base_costs":[1000,1000],"op_types":["Pointwise","Pointwise"],"fast_memory_capacity":50000,"slow_memory_bandwidth":10,
    "native_granularity":[128,128]})");
  Schedule s = test::scheduleFromJson(R"({"subgraphs":[[0],[1]],"granularities":[[128,128,1],[256,128,1]],
    "tensors_to_retain":[[],[]],"traversal_orders":[null,null],"subgraph_latencies":[0,0]})",
                                      p);
  Evaluation ev = evaluateSchedule(p, s, ModelOptions{});
  ASSERT_FALSE(ev.valid);
  auto t = subgraphTraffic(p, s, ev);
  EXPECT_TRUE(t[0].known);
  EXPECT_FALSE(t[1].known);
}

}  // namespace
}  // namespace mlsys
