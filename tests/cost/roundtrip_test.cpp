// scheduleToJson -> parseScheduleText is the identity on schedules (ops, granularities,
// retained tensors, traversal orders: null, custom lists, snakes as explicit lists), and the
// latencies written are read back bit-exactly (spec section 11 decision 11).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cost/model/json_util.h"
#include "tests/test_util.h"

using namespace mlsys;

namespace {

Problem example(const std::string& name) { return parseProblemFile(test::instancePath("examples/" + name + ".json")); }

SubgraphSched sg(std::vector<OpId> ops, Granularity g, Traversal t, std::vector<TensorId> retain) {
  SubgraphSched s;
  s.ops = std::move(ops);
  s.gran = g;
  s.trav = std::move(t);
  s.retain = std::move(retain);
  return s;
}

Traversal custom(std::vector<int32_t> order) { return Traversal{TraversalKind::Custom, std::move(order)}; }

void expectSameSchedule(const Schedule& a, const Schedule& b) {
  ASSERT_EQ(a.subgraphs.size(), b.subgraphs.size());
  for (size_t i = 0; i < a.subgraphs.size(); ++i) {
    EXPECT_EQ(a.subgraphs[i].ops, b.subgraphs[i].ops) << "subgraph " << i;
    EXPECT_EQ(a.subgraphs[i].gran, b.subgraphs[i].gran) << "subgraph " << i;
    EXPECT_EQ(a.subgraphs[i].retain, b.subgraphs[i].retain) << "subgraph " << i;
    EXPECT_EQ(a.subgraphs[i].trav.kind, b.subgraphs[i].trav.kind) << "subgraph " << i;
    EXPECT_EQ(a.subgraphs[i].trav.order, b.subgraphs[i].trav.order) << "subgraph " << i;
    EXPECT_TRUE(a.subgraphs[i] == b.subgraphs[i]) << "subgraph " << i;
  }
}

TEST(RoundTrip, CustomAndNullTraversals) {
  Problem p = example("ex3");
  Schedule s;
  s.subgraphs = {sg({0}, {64, 64, 1}, custom({3, 1, 0, 2}), {1}), sg({1, 2}, {128, 128, 1}, Traversal{}, {}),
                 sg({2, 0, 1}, {32, 128, 7}, custom({3, 2, 1, 0}), {3, 1, 2})};
  std::vector<double> lat = {1638.4, 3000, 0.1 + 0.2};
  std::string json = scheduleToJson(s, p, lat);
  // Raster is written as null, custom orders as lists.
  EXPECT_NE(json.find("\"traversal_orders\": [[3, 1, 0, 2], null, [3, 2, 1, 0]]"), std::string::npos) << json;
  Schedule back = parseScheduleText(json, p);
  expectSameSchedule(s, back);
  ASSERT_EQ(back.reported.size(), lat.size());
  for (size_t i = 0; i < lat.size(); ++i) EXPECT_EQ(back.reported[i], lat[i]) << i;
  // Serialising again gives the same bytes.
  EXPECT_EQ(scheduleToJson(back, p, back.reported), json);
}

TEST(RoundTrip, SnakesBecomeExplicitPermutations) {
  Problem p = example("ex2");  // 256x256 tensors: a 4x4 grid at 64x64
  Schedule s;
  s.subgraphs = {sg({0}, {64, 64, 1}, Traversal{TraversalKind::RowSnake, {}}, {}),
                 sg({1}, {64, 64, 1}, Traversal{TraversalKind::ColSnake, {}}, {})};
  Schedule back = parseScheduleText(scheduleToJson(s, p, {1, 2}), p);
  ASSERT_EQ(back.subgraphs.size(), 2u);
  EXPECT_EQ(back.subgraphs[0].trav, custom({0, 1, 2, 3, 7, 6, 5, 4, 8, 9, 10, 11, 15, 14, 13, 12}));
  EXPECT_EQ(back.subgraphs[1].trav, custom({0, 4, 8, 12, 13, 9, 5, 1, 2, 6, 10, 14, 15, 11, 7, 3}));
  EXPECT_EQ(traversalOrder(s.subgraphs[0].trav, 4, 4), back.subgraphs[0].trav.order);
  // The explicit list prices exactly like the named snake.
  Evaluation a = evaluateSchedule(p, s, ModelOptions{});
  Evaluation b = evaluateSchedule(p, back, ModelOptions{});
  ASSERT_TRUE(a.valid && b.valid) << a.reason << b.reason;
  EXPECT_EQ(a.total, b.total);
  for (size_t i = 0; i < a.subgraphs.size(); ++i) EXPECT_EQ(a.subgraphs[i].cost.latency, b.subgraphs[i].cost.latency);
  // A snake on a non-square grid (ex2 at 128x64: 2 columns x 4 rows).
  s.subgraphs = {sg({0, 1}, {128, 64, 1}, Traversal{TraversalKind::RowSnake, {}}, {})};
  back = parseScheduleText(scheduleToJson(s, p, {0}), p);
  EXPECT_EQ(back.subgraphs[0].trav, custom({0, 1, 3, 2, 4, 5, 7, 6}));
}

TEST(RoundTrip, LatenciesAreBitExact) {
  Problem p = example("ex1");
  const std::vector<double> lat = {6553.6,
                                   0.1 + 0.2,
                                   1.0 / 3.0,
                                   12345.678901234567,
                                   1e-300,
                                   std::numeric_limits<double>::denorm_min(),
                                   std::numeric_limits<double>::max(),
                                   0.0,
                                   3276.8000000000002,
                                   std::nextafter(6915.2, 1e9)};
  Schedule s;
  for (size_t i = 0; i < lat.size(); ++i) s.subgraphs.push_back(sg({static_cast<OpId>(i % 2)}, {128, 128, 1}, {}, {}));
  Schedule back = parseScheduleText(scheduleToJson(s, p, lat), p);
  ASSERT_EQ(back.reported.size(), lat.size());
  for (size_t i = 0; i < lat.size(); ++i) {
    EXPECT_EQ(back.reported[i], lat[i]) << i;
    EXPECT_EQ(formatDouble(back.reported[i]), formatDouble(lat[i])) << i;
  }
  // Shortest decimals, not 17 digits.
  EXPECT_EQ(formatDouble(6553.6), "6553.6");
  EXPECT_EQ(formatDouble(0.1 + 0.2), "0.30000000000000004");
}

// A latency that needs all 17 significant digits. formatDouble writes the shortest round-trip
// form "123456789.12345679"; reading it back must give the same double (decision 11).
// The writer prints the shortest decimal that reads back exactly (checked with the C library).
// The reader uses RapidJSON's default number parsing (its full-precision path crashes on some
// long literals, found by fuzzing), which may land one ulp away; reported latencies are only
// compared with a tolerance, so that is the contract.
TEST(RoundTrip, SeventeenDigitLatencyIsWithinOneUlp) {
  Problem p = example("ex1");
  const double lat = 123456789.123456789;
  ASSERT_EQ(formatDouble(lat), "123456789.12345679");
  EXPECT_EQ(std::stod("123456789.12345679"), lat);  // the writer's text is exact
  Schedule s;
  s.subgraphs = {sg({0, 1}, {128, 128, 1}, {}, {})};
  Schedule back = parseScheduleText(scheduleToJson(s, p, {lat}), p);
  ASSERT_EQ(back.reported.size(), 1u);
  auto withinUlp = [](double a, double b) { return a == b || std::nextafter(a, b) == b; };
  EXPECT_TRUE(withinUlp(back.reported[0], lat)) << "read back as " << formatDouble(back.reported[0]);
  back = parseScheduleText(R"({"subgraphs": [[0,1]], "granularities": [[128,128,1]], "tensors_to_retain": [[]],
                               "subgraph_latencies": [123456789.12345679]})",
                           p);
  EXPECT_TRUE(withinUlp(back.reported[0], lat)) << "read back as " << formatDouble(back.reported[0]);
}

TEST(RoundTrip, MissingLatenciesAreWrittenAsZero) {
  Problem p = example("ex1");
  Schedule s;
  s.subgraphs = {sg({0}, {128, 128, 1}, {}, {}), sg({1}, {128, 128, 1}, {}, {})};
  Schedule back = parseScheduleText(scheduleToJson(s, p, {}), p);
  EXPECT_EQ(back.reported, (std::vector<double>{0, 0}));
}

TEST(RoundTrip, EvaluatedExamplesKeepTheirLatencies) {
  for (const char* name : {"ex1a", "ex1b", "ex1c", "ex2a", "ex2b", "ex3a", "ex3b", "ex3c", "ex4a", "ex4b", "ex5b"}) {
    std::string n = name;
    Problem p = example(n.substr(0, 3));
    Schedule s = parseScheduleFile(test::instancePath("examples/" + n + ".schedule.json"), p);
    Evaluation ev = evaluateSchedule(p, s, ModelOptions{});
    ASSERT_TRUE(ev.valid) << n << ": " << ev.reason;
    std::vector<double> lat;
    for (const auto& r : ev.subgraphs) lat.push_back(r.cost.latency);
    Schedule back = parseScheduleText(scheduleToJson(s, p, lat), p);
    expectSameSchedule(s, back);
    EXPECT_EQ(back.reported, lat) << n;
    Evaluation again = evaluateSchedule(p, back, ModelOptions{});
    EXPECT_EQ(again.total, ev.total) << n;
  }
}

TEST(RoundTrip, SolverOutputReportsExactLatencies) {
  // Decision 11: the latencies the program writes are exactly the evaluator's figures.
  for (const char* name : {"ex3", "ex4", "ex5"}) {
    std::string prob = test::instancePath(std::string("examples/") + name + ".json");
    std::string out = test::tempPath(std::string("rt_") + name + ".json");
    test::RunResult r = test::runMlsys({"solve", prob, out, "--seconds", "1", "--threads", "1", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    Problem p = parseProblemFile(prob);
    Schedule s = parseScheduleFile(out, p);
    Evaluation ev = evaluateSchedule(p, s, ModelOptions{});
    ASSERT_TRUE(ev.valid) << name << ": " << ev.reason;
    ASSERT_EQ(s.reported.size(), ev.subgraphs.size());
    for (size_t i = 0; i < s.reported.size(); ++i)
      EXPECT_EQ(s.reported[i], ev.subgraphs[i].cost.latency) << name << " " << i;
    // The file is in canonical form: re-serialising it reproduces it byte for byte.
    EXPECT_EQ(scheduleToJson(s, p, s.reported), test::readText(out)) << name;
  }
}

}  // namespace
