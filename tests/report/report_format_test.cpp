// The report's building blocks: the one number format (humanNumber, at most 8 significant
// digits), round axis ticks (axisTicks, logAxisTicks), and the per-subgraph traffic facts (subgraphTraffic: compute and
// memory time, elements loaded and stored).
#include "engine/report/report_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/report/schedule_facts.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

TEST(ReportFormat, ThousandsSeparatorsAndAtMostFourDecimals) {
  EXPECT_EQ(humanNumber(2118743.04, 2), "2,118,743");  // 8 significant digits at most
  EXPECT_EQ(humanNumber(1234.56789), "1,234.5679");
  EXPECT_EQ(humanNumber(6553.6), "6,553.6");
  EXPECT_EQ(humanNumber(100.0), "100");
  EXPECT_EQ(humanNumber(999.99999), "1,000");  // rounding carries into the integer part
  EXPECT_EQ(humanNumber(1000000.0), "1,000,000");
  EXPECT_EQ(humanNumber(-1234567.5), "-1,234,567.5");
  EXPECT_EQ(humanNumber(-1234567.25), "-1,234,567.3");  // the 8th significant digit, rounded away from zero
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
  // Rounded to 8 significant digits in integer arithmetic (a double would not be exact here).
  EXPECT_EQ(humanNumber(i64{4611686018427387904}), "4,611,686,000,000,000,000");
  EXPECT_EQ(humanNumber(i64{99999999}), "99,999,999");
  EXPECT_EQ(humanNumber(i64{123456785}), "123,456,790");  // half away from zero
  EXPECT_EQ(humanNumber(i64{-123456784}), "-123,456,780");
  EXPECT_EQ(humanNumber(i64{999999995}), "1,000,000,000");
  EXPECT_EQ(humanNumber(std::numeric_limits<i64>::min()), "-9,223,372,000,000,000,000");
  EXPECT_EQ(humanNumber(std::numeric_limits<i64>::max()), "9,223,372,000,000,000,000");
  EXPECT_EQ(humanNumber(i64{-1234}), "-1,234");
  EXPECT_EQ(humanNumber(12), "12");
  EXPECT_EQ(humanPercent(0.1234), "12.3%");
  EXPECT_EQ(humanPercent(0.5, 0), "50%");
  EXPECT_EQ(humanPercent(0.00001234), "0.001%");
}

// The significant digits of a number as humanNumber writes it: its digits without the leading
// zeros and, in the integer part, without the trailing ones.
int significantDigits(const std::string& s) {
  std::string d;
  for (char c : s)
    if ((c >= '0' && c <= '9') || c == '.') d += c;
  if (d.find('.') == std::string::npos)
    while (d.size() > 1 && d.back() == '0') d.pop_back();
  d.erase(std::remove(d.begin(), d.end(), '.'), d.end());
  d.erase(0, std::min(d.find_first_not_of('0'), d.size()));
  return static_cast<int>(d.size());
}

// Issue 35: no number a person reads has more than 8 significant digits; latencies keep their
// decimals while they fit (16,284,057.6 has 9: its .6 goes).
TEST(ReportFormat, AtMostEightSignificantDigits) {
  EXPECT_EQ(humanNumber(16284057.600000001), "16,284,058");
  EXPECT_EQ(humanNumber(10737418.239989262), "10,737,418");
  EXPECT_EQ(humanNumber(609093.8666666667), "609,093.87");
  EXPECT_EQ(humanNumber(88493.0666666666729412), "88,493.067");
  EXPECT_EQ(humanNumber(1249553.0666666667), "1,249,553.1");
  EXPECT_EQ(humanNumber(813940736.0), "813,940,740");
  EXPECT_EQ(humanNumber(99999999.6), "100,000,000");
  EXPECT_EQ(humanNumber(0.123456789123, 12), "0.12345679");
  for (double v : {16284057.600000001, 1.0 / 3, 2.0 / 3 * 1e5, 123456789012.345, 9.87654321e17, 4.2e-7, 1e8 - 0.5})
    for (int dec : {0, 2, 4, 8, 12}) {
      const std::string s = humanNumber(v, dec);
      EXPECT_LE(significantDigits(s), kMaxSignificantDigits) << v << " with " << dec << " decimals: " << s;
    }
}

// Each tick is a whole multiple of one step 1, 2 or 5 x 10^n: at most 2 significant digits
// beyond the step's magnitude, so "22,411,472" cannot be a tick.
bool roundMultiple(double v, double step) {
  const double k = v / step;
  return std::fabs(k - std::round(k)) < 1e-6;
}
// The axis' step, the difference of its first two ticks rounded to 2 significant digits (the
// difference of two doubles is not exact).
double stepOf(const std::vector<double>& t) {
  if (t.size() < 2) return 0;
  const double d = t[1] - t[0], mag = std::pow(10.0, std::floor(std::log10(d)) - 1);
  return std::round(d / mag) * mag;
}
bool oneTwoFive(double v) {
  const double m = v / std::pow(10.0, std::floor(std::log10(v)));
  return std::fabs(m - 1) < 1e-6 || std::fabs(m - 2) < 1e-6 || std::fabs(m - 5) < 1e-6;
}

TEST(ReportFormat, LinearTicksAreMultiplesOfOneTwoFive) {
  EXPECT_EQ(axisTicks(0, 4.887, 10), (std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5}));
  EXPECT_EQ(axisTicks(0, 10, 10), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  for (auto [lo, hi] : {std::pair{10619770.0, 22411472.0},
                        {588628.0, 1263716.0},
                        {0.0, 0.168},
                        {609000.0, 609100.0},
                        {1.0, 1.0000001},
                        {0.0, 3e9}}) {
    const std::vector<double> t = axisTicks(lo, hi, 7);
    ASSERT_GE(t.size(), 3u) << lo << ".." << hi;
    EXPECT_LE(t.size(), 8u) << lo << ".." << hi;
    const double st = stepOf(t);
    EXPECT_TRUE(oneTwoFive(st)) << "step " << st;
    for (double v : t) {
      EXPECT_TRUE(roundMultiple(v, st)) << v << " is not a multiple of " << st;
      EXPECT_GE(v, lo - 1e-9 * std::fabs(lo));
      EXPECT_LE(v, hi + 1e-9 * std::fabs(hi));
    }
  }
  EXPECT_EQ(axisTicks(5, 5, 7), std::vector<double>{5});  // an empty range: its one value
}

TEST(ReportFormat, LogTicksArePowersOfTenOrOneTwoFive) {
  // A run from 0.02 s to 4.9 s: 1-2-5 ticks; latencies over 6 decades: powers of ten.
  EXPECT_EQ(logAxisTicks(0.02, 4.887, 10).size(), 7u);  // 0.02 0.05 0.1 0.2 0.5 1 2
  for (double v : logAxisTicks(0.02, 4.887, 10)) EXPECT_TRUE(oneTwoFive(v)) << v;
  EXPECT_EQ(logAxisTicks(1e3, 2e9, 7), (std::vector<double>{1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}));
  // mlsys-2026-13: 10.6M to 22.4M holds no 1-2-5 value but 20M: evenly spaced round values.
  const std::vector<double> t = logAxisTicks(10619770, 22411472, 7);
  ASSERT_GE(t.size(), 3u);
  for (double v : t) {
    EXPECT_TRUE(roundMultiple(v, 1e6)) << v << ": not a round tick";
    EXPECT_GE(v, 10619770);
    EXPECT_LE(v, 22411472);
  }
  EXPECT_EQ(tickDecimals({0, 0.5, 1}), 1);
  EXPECT_EQ(tickDecimals({0.01, 0.02, 0.05}), 2);
  EXPECT_EQ(tickDecimals({12e6, 14e6}), 0);
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
