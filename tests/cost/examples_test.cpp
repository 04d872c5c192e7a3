// The worked examples of PROBLEM.md, as reproduced in spec section 9 (and W4 for working sets).
// Each example lives in instances/examples/ as a contest-format problem plus schedule; every
// figure below is the spec's, asserted exactly (EXPECT_EQ on doubles), under every cost method
// and through the CLI.
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cost/model/json_util.h"
#include "cost/model/number_format.h"
#include "tests/test_util.h"

// Readable parameter names in test output (found by argument-dependent lookup).
namespace mlsys {
[[maybe_unused]] static void PrintTo(CostMethod m, std::ostream* os) {
  *os << (m == CostMethod::Auto ? "Auto" : m == CostMethod::Walk ? "Walk" : "Fast");
}
}  // namespace mlsys

using namespace mlsys;

namespace {

struct ExampleCase {
  std::string name;  // "ex1a": problem ex1.json, schedule ex1a.schedule.json
  bool valid;
  std::string rule;                           // for invalid examples
  double total;                               // spec section 9 (ignored when invalid)
  std::vector<double> sg_latency;             // per subgraph, spec section 9
  std::vector<std::optional<int64_t>> sg_ws;  // peak working set where W4 / section 9 gives it
  std::vector<int64_t> sg_steps;              // steps per subgraph (tiles x k-steps)
  // Compute-bound steps per subgraph where the spec's step table decides it (-1: not asserted).
  std::vector<int64_t> sg_compute_bound;
};

void PrintTo(const ExampleCase& c, std::ostream* os) { *os << c.name; }

std::string problemFile(const std::string& name) {
  return test::instancePath("examples/" + name.substr(0, 3) + ".json");
}
std::string scheduleFile(const std::string& name) { return test::instancePath("examples/" + name + ".schedule.json"); }

const std::vector<ExampleCase>& cases() {
  static const std::vector<ExampleCase> v = {
      // 1A: SG0 max(1000, 1638.4 + 1638.4), SG1 max(100, 3276.8).
      {"ex1a", true, "", 6553.6, {3276.8, 3276.8}, {std::nullopt, std::nullopt}, {1, 1}, {0, 0}},
      // 1B: fused, T1 ephemeral: max(1100, 3276.8).
      {"ex1b", true, "", 3276.8, {3276.8}, {std::nullopt}, {1}, {0}},
      // 1C: 4 tiles of 64x64, each max(1100 padded, 409.6 + 409.6); WS = 8192.
      {"ex1c", true, "", 4400, {4400}, {8192}, {4}, {4}},
      // 2A: 4 tiles x max(1000, 3276.8) and 4 x max(100, 3276.8); 128^2 tiles: WS 32768 (W4).
      {"ex2a", true, "", 26214.4, {13107.2, 13107.2}, {32768, 32768}, {4, 4}, {0, 0}},
      // 2B: 4 x max(1100, 3276.8); WS at 128^2 tiles = 32768 <= 35000 (W4).
      {"ex2b", true, "", 13107.2, {13107.2}, {32768}, {4}, {0}},
      // 3A: 3276.8 + 3276.8 + max(1500, 3276.8 + 1638.4); SG2 WS = 3 x 16384 (W4).
      {"ex3a", true, "", 11468.8, {3276.8, 3276.8, 4915.2}, {std::nullopt, std::nullopt, 49152}, {1, 1, 1}, {0, 0, 0}},
      // 3B: SG0 max(3000, 1638.4) (T2 retained, no store); SG1 max(3000, 3276.8); SG1 WS = T0 + T3 + T2 (W4).
      {"ex3b", true, "", 6276.8, {3000, 3276.8}, {std::nullopt, 49152}, {1, 1}, {1, 0}},
      // 3C: SG0 max(1500, 1638.4) (T1 retained, no store); SG1 max(3000, 0 + 1638.4).
      {"ex3c", true, "", 4638.4, {1638.4, 3000}, {std::nullopt, std::nullopt}, {1, 1}, {0, 1}},
      // 4A: steps 2048, 1500, 2048, 1500; WS = 64*128 + 128*64 + 64*64 = 20480 (W4).
      {"ex4a", true, "", 7096, {7096}, {20480}, {4}, {2}},
      // 4B: order [0,1,3,2]: 2048, 1500, 1500, 1500.
      {"ex4b", true, "", 6548, {6548}, {20480}, {4}, {3}},
      // 5A: WS = T0 + T1 + T2 + T4 = 65536 > 45000: OOM.
      {"ex5a", false, "V11", 0, {}, {65536}, {1}, {}},
      // 5B: 4 k-steps (not 16): 2457.6, 1000, 1000, 2457.6; WS = 40960 (W4).
      {"ex5b", true, "", 6915.2, {6915.2}, {40960}, {4}, {2}},
  };
  return v;
}

std::string methodName(CostMethod m) {
  switch (m) {
    case CostMethod::Auto: return "Auto";
    case CostMethod::Walk: return "Walk";
    case CostMethod::Fast: return "Fast";
  }
  return "?";
}

using Param = std::tuple<ExampleCase, CostMethod>;

class ExampleTest : public ::testing::TestWithParam<Param> {};

TEST_P(ExampleTest, MatchesSpecFigures) {
  const auto& [ex, method] = GetParam();
  Problem p = parseProblemFile(problemFile(ex.name));
  Schedule s = parseScheduleFile(scheduleFile(ex.name), p);
  Evaluation ev = evaluateSchedule(p, s, ModelOptions{}, method);
  ASSERT_EQ(ev.subgraphs.size(), s.subgraphs.size());
  EXPECT_EQ(ev.model, ModelOptions{});
  if (!ex.valid) {
    EXPECT_FALSE(ev.valid);
    EXPECT_EQ(ruleName(ev.rule), ex.rule) << ev.reason;
    EXPECT_EQ(ev.bad_subgraph, 0);
    EXPECT_NE(ev.reason.find("subgraph 0"), std::string::npos) << ev.reason;
    EXPECT_NE(ev.reason.find("45000"), std::string::npos) << ev.reason;
  } else {
    ASSERT_TRUE(ev.valid) << ev.rule << ": " << ev.reason;
    EXPECT_EQ(ev.total, ex.total);
    ASSERT_EQ(ev.subgraphs.size(), ex.sg_latency.size());
    for (size_t i = 0; i < ex.sg_latency.size(); ++i) {
      EXPECT_EQ(ev.subgraphs[i].cost.latency, ex.sg_latency[i]) << "subgraph " << i;
      // The schedule files carry the spec's figures as subgraph_latencies.
      EXPECT_EQ(s.reported[i], ex.sg_latency[i]) << "subgraph " << i;
    }
  }
  for (size_t i = 0; i < ex.sg_ws.size(); ++i)
    if (ex.sg_ws[i]) {
      EXPECT_EQ(ev.subgraphs[i].cost.peak_ws, *ex.sg_ws[i]) << "subgraph " << i;
    }
  for (size_t i = 0; i < ex.sg_steps.size(); ++i)
    EXPECT_EQ(ev.subgraphs[i].cost.steps, ex.sg_steps[i]) << "subgraph " << i;
  for (size_t i = 0; i < ex.sg_compute_bound.size(); ++i) {
    EXPECT_EQ(ev.subgraphs[i].cost.compute_bound_steps, ex.sg_compute_bound[i]) << "subgraph " << i;
    EXPECT_EQ(ev.subgraphs[i].cost.compute_bound_steps + ev.subgraphs[i].cost.memory_bound_steps,
              ev.subgraphs[i].cost.steps)
        << "subgraph " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Spec, ExampleTest,
                         ::testing::Combine(::testing::ValuesIn(cases()),
                                            ::testing::Values(CostMethod::Auto, CostMethod::Walk, CostMethod::Fast)),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           return std::get<0>(i.param).name + "_" + methodName(std::get<1>(i.param));
                         });

class ExampleCliTest : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(ExampleCliTest, Evaluate) {
  const ExampleCase& ex = GetParam();
  for (bool walk : {false, true}) {
    std::vector<std::string> args = {"evaluate", problemFile(ex.name), scheduleFile(ex.name)};
    if (walk) args.push_back("--walk");
    SCOPED_TRACE(walk ? "--walk" : "default");
    test::RunResult r = test::runMlsys(args);
    EXPECT_EQ(r.out.rfind("model: matmul_compute=reduction_depth matmul_chains=literal k_limit=native\n", 0), 0u)
        << r.out;
    if (ex.valid) {
      EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
      EXPECT_NE(r.out.find("total latency: " + humanLatency(ex.total) + "\n"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("valid: yes"), std::string::npos) << r.out;
      // The reported subgraph_latencies are the spec's figures: no mismatch warning.
      EXPECT_EQ(r.err.find("differs from the computed"), std::string::npos) << r.err;
    } else {
      EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
      EXPECT_NE(r.out.find("valid: no"), std::string::npos) << r.out;
      EXPECT_NE(r.err.find("rule " + ex.rule + ")"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("working set 65536 exceeds fast_memory_capacity 45000"), std::string::npos) << r.err;
    }
  }
}

TEST_P(ExampleCliTest, EvaluateJson) {
  const ExampleCase& ex = GetParam();
  test::RunResult r = test::runMlsys({"evaluate", "--json", problemFile(ex.name), scheduleFile(ex.name)});
  EXPECT_EQ(r.exit_code, ex.valid ? 0 : 1) << r.out << r.err;
  EXPECT_NE(r.out.find("\"valid\": " + std::string(ex.valid ? "true" : "false")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"model\": \"matmul_compute=reduction_depth matmul_chains=literal k_limit=native\""),
            std::string::npos)
      << r.out;
  if (ex.valid) {
    EXPECT_NE(r.out.find("\"total_latency\": " + formatDouble(ex.total) + ","), std::string::npos) << r.out;
    for (double l : ex.sg_latency)
      EXPECT_NE(r.out.find("\"latency\": " + formatDouble(l) + ","), std::string::npos) << r.out;
  } else {
    EXPECT_NE(r.out.find("\"rule\": \"" + ex.rule + "\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"peak_working_set\": 65536"), std::string::npos) << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Spec, ExampleCliTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<ExampleCase>& i) { return i.param.name; });

// Ex 5B in detail (spec section 9 and E2/E3): 4 k-steps of one tile, Op1 accumulating, Op0 upstream.
TEST(Examples, Ex5BStructure) {
  Problem p = parseProblemFile(test::instancePath("examples/ex5.json"));
  Schedule s = parseScheduleFile(test::instancePath("examples/ex5b.schedule.json"), p);
  Evaluation ev = evaluateSchedule(p, s, ModelOptions{});
  ASSERT_TRUE(ev.valid) << ev.reason;
  EXPECT_EQ(ev.subgraphs[0].ntw, 1);
  EXPECT_EQ(ev.subgraphs[0].nth, 1);
  EXPECT_EQ(ev.subgraphs[0].nk, 4);
  SubgraphPlan pl = planSubgraph(p, ModelOptions{}, {0, 1}, {128, 128, 32}, {}, {});
  ASSERT_TRUE(pl.valid) << pl.reason;
  EXPECT_EQ(pl.Kacc, 128);
  EXPECT_EQ(pl.mm_coef, 4000);  // per-step compute (2000 + 2000) * 32 / 128 = 1000
  EXPECT_EQ(pl.n_store, 1);     // T4
  // T0 is needed whole (h x K of the upstream MatMul), T1 and T2 as 128x32 / 32x128 strips.
  auto has = [&](TensorId t, Ext rk, Ext ck) {
    for (const SliceTpl& st : pl.slices)
      if (st.t == t && st.rk == rk && st.ck == ck) return true;
    return false;
  };
  EXPECT_TRUE(has(0, Ext::Rho, Ext::Full));
  EXPECT_TRUE(has(1, Ext::Full, Ext::Kappa));
  EXPECT_TRUE(has(2, Ext::Kappa, Ext::Gamma));
  EXPECT_EQ(pl.slices.size(), 3u);
}

// Ex 4's step tables: 4A and 4B differ only in their third step (4A reloads LHS r1 and RHS c0,
// 2048; 4B reuses LHS r1 and loads RHS c0, 1500), so 7096 - 6548 = 548. A column snake
// [0,2,3,1] is the mirror image of 4B and also reloads only once.
TEST(Examples, Ex4OrdersDifferByOneReload) {
  Problem p = parseProblemFile(test::instancePath("examples/ex4.json"));
  Schedule a = parseScheduleFile(test::instancePath("examples/ex4a.schedule.json"), p);
  Schedule b = parseScheduleFile(test::instancePath("examples/ex4b.schedule.json"), p);
  double la = evaluateSchedule(p, a, ModelOptions{}, CostMethod::Walk).total;
  double lb = evaluateSchedule(p, b, ModelOptions{}, CostMethod::Walk).total;
  EXPECT_EQ(la - lb, 548.0);
  // Column snake [0,2,3,1] mirrors 4B: also one full reload only.
  b.subgraphs[0].trav.order = {0, 2, 3, 1};
  EXPECT_EQ(evaluateSchedule(p, b, ModelOptions{}, CostMethod::Walk).total, 6548);
  // The built-in snakes must price identically by walk and by step classes.
  for (TraversalKind k : {TraversalKind::RowSnake, TraversalKind::ColSnake}) {
    b.subgraphs[0].trav = Traversal{k, {}};
    EXPECT_EQ(evaluateSchedule(p, b, ModelOptions{}, CostMethod::Walk).total, 6548) << traversalName(k);
    EXPECT_EQ(evaluateSchedule(p, b, ModelOptions{}, CostMethod::Auto).total, 6548) << traversalName(k);
  }
}

// Ex 2's capacity was raised from 25000 to 35000 (c9101de): under the old capacity 2B at 128^2
// tiles (WS 32768) is OOM.
TEST(Examples, Ex2OldCapacityIsOom) {
  std::string json = test::readText(test::instancePath("examples/ex2.json"));
  auto pos = json.find("35000");
  ASSERT_NE(pos, std::string::npos);
  json.replace(pos, 5, "25000");
  Problem p = test::problemFromJson(json);
  Schedule s = parseScheduleFile(test::instancePath("examples/ex2b.schedule.json"), p);
  Evaluation ev = evaluateSchedule(p, s, ModelOptions{});
  EXPECT_FALSE(ev.valid);
  EXPECT_EQ(ev.rule, Rule::V11);
  EXPECT_NE(ev.reason.find("working set 32768"), std::string::npos) << ev.reason;
}

}  // namespace
