// Validity rules of spec section 3 (V1-V11), plus E2 and A-6 (section 11 decisions 2 and 7):
// for each rule at least one schedule that breaks it (the rule id and a reason naming the
// offending subgraph / tensor / op) and one that passes.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "tests/test_util.h"

using namespace mlsys;

namespace {

// ---- problems ---------------------------------------------------------------------------------

std::string example(const std::string& name) {
  return test::readText(test::instancePath("examples/" + name + ".json"));
}

std::string problemJson(const std::string& widths, const std::string& heights, const std::string& inputs,
                        const std::string& outputs, const std::string& costs, const std::string& types, long capacity,
                        long bandwidth = 10) {
  return "{\"widths\": " + widths + ", \"heights\": " + heights + ", \"inputs\": " + inputs +
         ", \"outputs\": " + outputs + ", \"base_costs\": " + costs + ", \"op_types\": " + types +
         ", \"fast_memory_capacity\": " + std::to_string(capacity) +
         ", \"slow_memory_bandwidth\": " + std::to_string(bandwidth) + ", \"native_granularity\": [128, 128]}";
}

// T0 -> T1 -> T2 -> T3, three Pointwise ops, all 128x128.
std::string chain3() {
  return problemJson("[128,128,128,128]", "[128,128,128,128]", "[[0],[1],[2]]", "[[1],[2],[3]]", "[100,100,100]",
                     "[\"Pointwise\",\"Pointwise\",\"Pointwise\"]", 50000);
}

// Ex 3 / Ex 4 with another capacity.
std::string withCapacity(const std::string& json, long from, long to) {
  std::string s = json;
  auto pos = s.find(std::to_string(from));
  EXPECT_NE(pos, std::string::npos);
  if (pos != std::string::npos) s.replace(pos, std::to_string(from).size(), std::to_string(to));
  return s;
}

// ---- schedules --------------------------------------------------------------------------------

// Number of top-level entries of a JSON list literal like "[[0],[1,2]]".
int topLevelCount(const std::string& list) {
  int depth = 0, n = 0;
  bool any = false;
  for (char c : list) {
    if (c == '[') {
      if (depth == 1) ++n;
      ++depth;
    } else if (c == ']') {
      --depth;
    } else if (depth == 1 && c != ' ' && c != ',') {
      any = true;
    }
  }
  return n ? n : (any ? 1 : 0);
}

std::string sched(const std::string& subgraphs, const std::string& grans, const std::string& retain,
                  const std::string& trav = "") {
  int n = topLevelCount(subgraphs);
  std::string lat = "[";
  for (int i = 0; i < n; ++i) lat += i ? ", 0" : "0";
  lat += "]";
  std::string s =
      "{\"subgraphs\": " + subgraphs + ", \"granularities\": " + grans + ", \"tensors_to_retain\": " + retain;
  if (!trav.empty()) s += ", \"traversal_orders\": " + trav;
  return s + ", \"subgraph_latencies\": " + lat + "}";
}

// ---- evaluation helpers -----------------------------------------------------------------------

Evaluation eval(const std::string& problem, const std::string& schedule) {
  Problem p = test::problemFromJson(problem);
  Schedule s = test::scheduleFromJson(schedule, p);
  Evaluation a = evaluateSchedule(p, s, ModelOptions{}, CostMethod::Auto);
  Evaluation w = evaluateSchedule(p, s, ModelOptions{}, CostMethod::Walk);
  // The walk (oracle) and the step-class pricing agree on the verdict and the number.
  EXPECT_EQ(a.valid, w.valid);
  EXPECT_EQ(a.rule, w.rule);
  EXPECT_EQ(a.reason, w.reason);
  if (a.valid) {
    EXPECT_EQ(a.total, w.total);
  }
  return a;
}

void expectInvalid(const Evaluation& ev, const std::string& rule, int subgraph,
                   std::initializer_list<const char*> mentions) {
  EXPECT_FALSE(ev.valid);
  EXPECT_EQ(ruleName(ev.rule), rule) << ev.reason;
  EXPECT_EQ(ev.bad_subgraph, subgraph) << ev.reason;
  if (subgraph >= 0) {
    EXPECT_EQ(ev.reason.rfind("subgraph " + std::to_string(subgraph) + ": ", 0), 0u) << ev.reason;
  }
  for (const char* m : mentions)
    EXPECT_NE(ev.reason.find(m), std::string::npos) << "expected \"" << m << "\" in: " << ev.reason;
}

void expectValid(const Evaluation& ev) { EXPECT_TRUE(ev.valid) << ev.rule << ": " << ev.reason; }

// Parse error (rule V1): returns the InputError message.
std::string v1Error(const std::string& problem, const std::string& schedule) {
  Problem p = test::problemFromJson(problem);
  try {
    test::scheduleFromJson(schedule, p);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "schedule was accepted: " << schedule;
  return "";
}

void expectV1(const std::string& msg, std::initializer_list<const char*> mentions) {
  EXPECT_NE(msg.find("rule V1"), std::string::npos) << msg;
  for (const char* m : mentions) EXPECT_NE(msg.find(m), std::string::npos) << "expected \"" << m << "\" in: " << msg;
}

const char* kG1 = "[[128,128,1]]";
const char* kG2 = "[[128,128,1],[128,128,1]]";
const char* kG3 = "[[128,128,1],[128,128,1],[128,128,1]]";

// ---- V1: format -------------------------------------------------------------------------------

TEST(V1Format, MissingRequiredKeys) {
  const std::string p = example("ex1");
  const std::string full = sched("[[0],[1]]", kG2, "[[],[]]");
  for (const char* key : {"subgraphs", "granularities", "tensors_to_retain", "subgraph_latencies"}) {
    std::string s = full;
    std::string k = std::string("\"") + key + "\"";
    auto pos = s.find(k);
    ASSERT_NE(pos, std::string::npos);
    s.replace(pos, k.size(), "\"renamed_" + std::string(key) + "\"");
    std::string msg = v1Error(p, s);
    expectV1(msg, {"missing key", key});
  }
}

TEST(V1Format, ListsOfDifferentLengths) {
  const std::string p = example("ex1");
  expectV1(v1Error(p, sched("[[0],[1]]", kG1, "[[],[]]")), {"\"granularities\" has 1 entries but \"subgraphs\" has 2"});
  expectV1(v1Error(p, sched("[[0],[1]]", kG2, "[[]]")),
           {"\"tensors_to_retain\" has 1 entries but \"subgraphs\" has 2"});
  expectV1(v1Error(p, sched("[[0],[1]]", kG2, "[[],[]]", "[null]")),
           {"\"traversal_orders\" has 1 entries but \"subgraphs\" has 2"});
  expectV1(v1Error(p, R"({"subgraphs": [[0],[1]], "granularities": [[128,128,1],[128,128,1]],
                          "tensors_to_retain": [[],[]], "subgraph_latencies": [0]})"),
           {"\"subgraph_latencies\" has 1 entries but \"subgraphs\" has 2"});
}

TEST(V1Format, NonIntegerGranularity) {
  const std::string p = example("ex1");
  expectV1(v1Error(p, sched("[[0],[1]]", "[[128.0,128,1],[128,128,1]]", "[[],[]]")),
           {"granularities[0][0] (w)", "must be an integer"});
  expectV1(v1Error(p, sched("[[0],[1]]", "[[128,128,1],[128,64.5,1]]", "[[],[]]")),
           {"granularities[1][1] (h)", "must be an integer, got 64.5"});
  expectV1(v1Error(p, sched("[[0],[1]]", "[[128,128,1],[128,128,\"1\"]]", "[[],[]]")),
           {"granularities[1][2] (k)", "must be an integer"});
  expectV1(v1Error(p, sched("[[0],[1]]", "[[128,128,0],[128,128,1]]", "[[],[]]")),
           {"granularities[0][2] (k)", "0 is out of range"});
  expectV1(v1Error(p, sched("[[0],[1]]", "[[128,128],[128,128,1]]", "[[],[]]")),
           {"granularities[0] must be an array [w, h, k]"});
  expectV1(v1Error(p, sched("[[0],[1.0]]", kG2, "[[],[]]")), {"subgraphs[1][0] (op index)", "must be an integer"});
}

TEST(V1Format, OtherFieldsAndEmptySchedule) {
  const std::string p = example("ex1");
  expectV1(v1Error(p, sched("[[0],[]]", kG2, "[[],[]]")), {"subgraphs[1] must be a non-empty array"});
  expectV1(v1Error(p, sched("[[0],[1]]", kG2, "[[],[0.5]]")), {"tensors_to_retain[1][0] (tensor index)"});
  expectV1(v1Error(p, sched("[[0],[1]]", kG2, "[[],[]]", "[null, 3]")),
           {"traversal_orders[1] must be null or an array"});
  expectV1(v1Error(p, R"({"subgraphs": [[0,1]], "granularities": [[128,128,1]], "tensors_to_retain": [[]],
                          "subgraph_latencies": ["3276.8"]})"),
           {"subgraph_latencies[0] must be a number"});
  expectV1(v1Error(p, "[1, 2]"), {"top level must be a JSON object"});
  // An empty schedule parses but covers nothing.
  Evaluation ev =
      eval(p, R"({"subgraphs": [], "granularities": [], "tensors_to_retain": [], "subgraph_latencies": []})");
  expectInvalid(ev, "V1", -1, {"no subgraphs"});
}

TEST(V1Format, WellFormedVariantsPass) {
  const std::string p = example("ex1");
  // traversal_orders is optional, may be null as a whole, and its entries may be null.
  expectValid(eval(p, sched("[[0],[1]]", kG2, "[[],[]]")));
  expectValid(eval(p, sched("[[0],[1]]", kG2, "[[],[]]", "null")));
  expectValid(eval(p, sched("[[0],[1]]", kG2, "[[],[]]", "[null, [0]]")));
  // Latencies may be any number (they are reported, not trusted).
  Evaluation ev = eval(p, R"({"subgraphs": [[0,1]], "granularities": [[128,128,1]], "tensors_to_retain": [[]],
                              "traversal_orders": [null], "subgraph_latencies": [1.5e3]})");
  expectValid(ev);
  EXPECT_EQ(ev.total, 3276.8);
}

// ---- V2: coverage -----------------------------------------------------------------------------

TEST(V2Coverage, UncoveredOpFails) {
  Evaluation ev = eval(example("ex1"), sched("[[0]]", kG1, "[[]]"));
  expectInvalid(ev, "V2", -1, {"op 1 appears in no subgraph"});
  // Op 1 is missing, so subgraph 1 lacks T2: V5 is found (per subgraph) before V2 (global).
  ev = eval(example("ex3"), sched("[[0],[2]]", kG2, "[[],[]]"));
  expectInvalid(ev, "V5", 1, {"tensor 2 (produced by op 1)"});
  ev = eval(chain3(), sched("[[0],[1]]", kG2, "[[],[]]"));
  expectInvalid(ev, "V2", -1, {"op 2 appears in no subgraph"});
}

TEST(V2Coverage, RecomputationPasses) {
  // Ex 3B: op 0 appears twice.
  Evaluation ev = eval(example("ex3"), sched("[[0,1],[0,2]]", kG2, "[[2],[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.total, 6276.8);
}

// ---- V3: order --------------------------------------------------------------------------------

TEST(V3Order, NonTopologicalWithinSubgraphFails) {
  Evaluation ev = eval(example("ex1"), sched("[[1,0]]", kG1, "[[]]"));
  expectInvalid(ev, "V3", 0, {"op 1 (Pointwise) consumes tensor 1 produced by op 0", "listed after it"});
  ev = eval(example("ex3"), sched("[[0],[2,1]]", kG2, "[[],[]]"));
  expectInvalid(ev, "V3", 1, {"op 2 (Pointwise) consumes tensor 2 produced by op 1"});
}

TEST(V3Order, OpListedTwiceFails) {
  expectInvalid(eval(example("ex1"), sched("[[0,0,1]]", kG1, "[[]]")), "V3", 0, {"op 0 is listed twice"});
  expectInvalid(eval(example("ex1"), sched("[[0],[1,1]]", kG2, "[[],[]]")), "V3", 1, {"op 1 is listed twice"});
}

TEST(V3Order, SubgraphsRunInListOrder) {
  // Subgraph 0 needs T1, which only the later subgraph 1 produces.
  Evaluation ev = eval(example("ex1"), sched("[[1],[0]]", kG2, "[[],[]]"));
  expectInvalid(ev, "V5", 0, {"tensor 1 (produced by op 0)"});
}

TEST(V3Order, TopologicalPasses) {
  expectValid(eval(example("ex1"), sched("[[0,1]]", kG1, "[[]]")));
  // Ex 3: [1,0,2] is not topological, [0,1,2] is.
  expectValid(eval(example("ex3"), sched("[[0,1,2]]", kG1, "[[]]")));
  expectInvalid(eval(example("ex3"), sched("[[1,0,2]]", kG1, "[[]]")), "V3", 0, {"op 1 (Pointwise) consumes tensor 1"});
}

// ---- V4: connectivity -------------------------------------------------------------------------

TEST(V4Connectivity, DisconnectedOpsFail) {
  Evaluation ev = eval(chain3(), sched("[[0,2],[1],[2]]", kG3, "[[],[],[]]"));
  expectInvalid(ev, "V4", 0, {"ops 0 and 2 are not connected"});
}

TEST(V4Connectivity, SharedInputIsNotALink) {
  // A-7 strict: op 0 and op 1 only share the graph input T0.
  std::string fork = problemJson("[128,128,128]", "[128,128,128]", "[[0],[0]]", "[[1],[2]]", "[100,100]",
                                 "[\"Pointwise\",\"Pointwise\"]", 50000);
  expectInvalid(eval(fork, sched("[[0,1]]", kG1, "[[]]")), "V4", 0, {"ops 0 and 1 are not connected"});
  expectValid(eval(fork, sched("[[0],[1]]", kG2, "[[],[]]")));
}

TEST(V4Connectivity, ConnectedPasses) {
  Evaluation ev = eval(chain3(), sched("[[0,1,2]]", kG1, "[[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.total, 3276.8);  // max(300, 1638.4 + 1638.4)
}

// ---- V5: availability -------------------------------------------------------------------------

TEST(V5Availability, EphemeralIntermediateIsNotAvailableLater) {
  // Ex 3: T1 is consumed inside subgraph 0 (ephemeral) and needed again by op 2 in subgraph 1.
  Evaluation ev = eval(example("ex3"), sched("[[0,1],[2]]", kG2, "[[],[]]"));
  expectInvalid(ev, "V5", 1, {"tensor 1 (produced by op 0)", "not available"});
}

TEST(V5Availability, RetentionTwoBoundariesBackIsNotAvailable) {
  // T1 retained by subgraph 0 lives through subgraph 1 only; subgraph 2 cannot use it.
  Evaluation ev = eval(example("ex3"), sched("[[0],[1],[2]]", kG3, "[[1],[],[]]"));
  expectInvalid(ev, "V5", 2, {"tensor 1 (produced by op 0)", "not retained by subgraph 1"});
}

TEST(V5Availability, ProducedLaterIsNotAvailable) {
  Evaluation ev = eval(chain3(), sched("[[0],[2],[1]]", kG3, "[[],[],[]]"));
  expectInvalid(ev, "V5", 1, {"tensor 2 (produced by op 1)"});
}

TEST(V5Availability, EachSourcePasses) {
  // (a) graph inputs and (c) written earlier: Ex 3A.
  Evaluation ev = eval(example("ex3"), sched("[[0],[1],[2]]", kG3, "[[],[],[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.total, 11468.8);
  // (b) retained by the previous subgraph: Ex 3C.
  ev = eval(example("ex3"), sched("[[0],[1,2]]", kG2, "[[1],[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.total, 4638.4);
  // #69: a tensor consumed inside S and retained for the very next subgraph.
  // SG0 max(3000, 1638.4 + 1638.4); SG1: T1 free, T2 loaded, T3 stored: 3276.8.
  ev = eval(example("ex3"), sched("[[0,1],[2]]", kG2, "[[1],[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.total, 6553.6);
  // Re-produce and re-retain to keep a tensor for s+2 (V6 lifetime). SG1 holds T1 retained in
  // and T1 retained out, counted twice (decision 6): T0 + T1 + T1 + T2 = 65536.
  const std::string s3 = sched("[[0],[0,1],[2]]", kG3, "[[1],[1],[]]");
  ev = eval(withCapacity(example("ex3"), 50000, 65536), s3);
  expectValid(ev);
  EXPECT_EQ(ev.subgraphs[1].cost.peak_ws, 65536);
  expectInvalid(eval(example("ex3"), s3), "V11", 1, {"working set 65536"});
}

// ---- V6: retention ----------------------------------------------------------------------------

TEST(V6Retention, GraphInputCannotBeRetained) {
  Evaluation ev = eval(example("ex1"), sched("[[0],[1]]", kG2, "[[0],[]]"));
  expectInvalid(ev, "V6", 0, {"tensor 0 is retained but not produced by this subgraph", "graph input"});
}

TEST(V6Retention, TensorNotProducedCannotBeRetained) {
  // T1 is a boundary input of subgraph 1, not one of its products.
  Evaluation ev = eval(example("ex1"), sched("[[0],[1]]", kG2, "[[],[1]]"));
  expectInvalid(ev, "V6", 1, {"tensor 1 is retained but not produced by this subgraph"});
  EXPECT_EQ(ev.reason.find("graph input"), std::string::npos) << ev.reason;
  // T3 of Ex 3 is produced by op 2 only.
  ev = eval(example("ex3"), sched("[[0],[1,2]]", kG2, "[[1,3],[]]"));
  expectInvalid(ev, "V6", 0, {"tensor 3 is retained but not produced"});
}

TEST(V6Retention, RetainedTensorIsNotWritten) {
  // T1 retained by SG0 is never written to slow memory: SG1 may use it (Ex 3C), SG2 may not.
  expectValid(eval(example("ex3"), sched("[[0],[1,2]]", kG2, "[[1],[]]")));
  expectInvalid(eval(example("ex3"), sched("[[0],[1],[2]]", kG3, "[[1],[2],[]]")), "V5", 2, {"tensor 1"});
}

// ---- V7: graph outputs ------------------------------------------------------------------------

TEST(V7GraphOutputs, RetainedGraphOutputFails) {
  Evaluation ev = eval(example("ex1"), sched("[[0],[1]]", kG2, "[[],[2]]"));
  expectInvalid(ev, "V7", 1, {"tensor 2 is a graph output and must not be retained"});
}

TEST(V7GraphOutputs, GraphOutputNeverWrittenFails) {
  // The only production of graph output T3 is retained, so it never reaches slow memory.
  expectInvalid(eval(example("ex3"), sched("[[0],[1,2]]", kG2, "[[1],[3]]")), "V7", 1, {"tensor 3 is a graph output"});
  // Even when another subgraph writes it, retaining a graph output is rejected (A-9).
  expectInvalid(eval(example("ex1"), sched("[[0,1],[0,1]]", kG2, "[[],[2]]")), "V7", 1, {"tensor 2 is a graph output"});
}

TEST(V7GraphOutputs, WrittenGraphOutputsPass) {
  expectValid(eval(example("ex1"), sched("[[0],[1]]", kG2, "[[],[]]")));
  // Ex 3B: T3 written by subgraph 1; T2 (not a graph output) retained.
  expectValid(eval(example("ex3"), sched("[[0,1],[0,2]]", kG2, "[[2],[]]")));
}

// ---- V8: granularity --------------------------------------------------------------------------

std::string matmulK64() {
  // T0 (128x64, HxW) x T1 (64x128) -> T2 (128x128): K = 64.
  return problemJson("[64,128,128]", "[128,64,128]", "[[0,1]]", "[[2]]", "[1000]", "[\"MatMul\"]", 50000);
}

TEST(V8Granularity, LargerThanNativeFails) {
  Evaluation ev = eval(example("ex1"), sched("[[0,1]]", "[[256,128,1]]", "[[]]"));
  expectInvalid(ev, "V8", 0, {"w = 256 exceeds the native size N = 128"});
  ev = eval(example("ex2"), sched("[[0],[1]]", "[[128,128,1],[128,256,1]]", "[[],[]]"));
  expectInvalid(ev, "V8", 1, {"h = 256 exceeds the native size N = 128"});
}

TEST(V8Granularity, KAboveNativeFailsEvenPointwiseOnly) {
  Evaluation ev = eval(example("ex1"), sched("[[0,1]]", "[[128,128,129]]", "[[]]"));
  expectInvalid(ev, "V8", 0, {"k = 129 exceeds the native size N = 128"});
  ev = eval(example("ex5"), sched("[[0],[1]]", "[[128,128,64],[128,128,256]]", "[[],[]]"));
  expectInvalid(ev, "V8", 1, {"k = 256 exceeds the native size N = 128"});
}

TEST(V8Granularity, KAboveReductionLengthFails) {
  Evaluation ev = eval(matmulK64(), sched("[[0]]", "[[128,128,128]]", "[[]]"));
  expectInvalid(ev, "V8", 0, {"k = 128 exceeds K = 64 of op 0 (MatMul)"});
  ev = eval(matmulK64(), sched("[[0]]", "[[128,128,65]]", "[[]]"));
  expectInvalid(ev, "V8", 0, {"k = 65 exceeds K = 64"});
}

TEST(V8Granularity, NonPositiveFailsInPlan) {
  Problem p = test::problemFromJson(example("ex1"));
  SubgraphPlan pl = planSubgraph(p, ModelOptions{}, {0, 1}, {128, 0, 1}, {}, {});
  EXPECT_FALSE(pl.valid);
  EXPECT_EQ(pl.rule, Rule::V8);
  EXPECT_NE(pl.reason.find("must be positive, got [128,0,1]"), std::string::npos) << pl.reason;
}

TEST(V8Granularity, WithinLimitsPasses) {
  Evaluation ev = eval(matmulK64(), sched("[[0]]", "[[128,128,64]]", "[[]]"));
  expectValid(ev);
  // One step: max(1000, (8192 + 8192 + 16384) / 10).
  EXPECT_EQ(ev.total, 3276.8);
  ev = eval(matmulK64(), sched("[[0]]", "[[128,128,32]]", "[[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.subgraphs[0].nk, 2);
  // k = N in a Pointwise-only subgraph is allowed (k is ignored there), and so is a
  // non-divisor w (ceil grid, A-5).
  expectValid(eval(example("ex1"), sched("[[0,1]]", "[[128,128,128]]", "[[]]")));
  ev = eval(example("ex1"), sched("[[0,1]]", "[[100,128,1]]", "[[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.subgraphs[0].ntw, 2);
}

// ---- V9: unified grid and fusion --------------------------------------------------------------

// op 0 Pointwise T0 -> T1; op 1 MatMul T1 x T2 -> T3 (LHS prologue), or T2 x T1 -> T3 (RHS).
std::string prologue(bool lhs) {
  return problemJson("[128,128,128,128]", "[128,128,128,128]", lhs ? "[[0],[1,2]]" : "[[0],[2,1]]", "[[1],[3]]",
                     "[100,1000]", "[\"Pointwise\",\"MatMul\"]", 50000);
}

TEST(V9Fusion, PointwiseProducingLhsNeedsWideTiles) {
  Evaluation ev = eval(prologue(true), sched("[[0,1]]", "[[64,128,32]]", "[[]]"));
  expectInvalid(ev, "V9", 0,
                {"op 0 (Pointwise) produces the LHS of op 1 (MatMul)", "k = 32 < K = 128", "w >= 128, got 64"});
}

TEST(V9Fusion, PointwiseProducingRhsNeedsTallTiles) {
  Evaluation ev = eval(prologue(false), sched("[[0,1]]", "[[128,64,32]]", "[[]]"));
  expectInvalid(ev, "V9", 0, {"op 0 (Pointwise) produces the RHS of op 1 (MatMul)", "h >= 128, got 64"});
  // The width does not matter for an RHS prologue.
  expectValid(eval(prologue(false), sched("[[0,1]]", "[[64,128,32]]", "[[]]")));
}

TEST(V9Fusion, ValidProloguesAndEpilogues) {
  expectValid(eval(prologue(true), sched("[[0,1]]", "[[128,128,32]]", "[[]]")));
  // k = K: no constraint on w.
  expectValid(eval(prologue(true), sched("[[0,1]]", "[[64,128,128]]", "[[]]")));
  // #84: MatMul -> Pointwise -> MatMul at [128,128,32], all 128^2: valid.
  std::string mpm = problemJson("[128,128,128,128,128,128]", "[128,128,128,128,128,128]", "[[0,1],[2],[3,4]]",
                                "[[2],[3],[5]]", "[1000,100,1000]", "[\"MatMul\",\"Pointwise\",\"MatMul\"]", 50000);
  Evaluation ev = eval(mpm, sched("[[0,1,2]]", "[[128,128,32]]", "[[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.subgraphs[0].nk, 4);
  EXPECT_EQ(ev.subgraphs[0].cost.peak_ws, 40960);  // T0 whole + T1 strip + T4 strip + T5 tile
  // #82: epilogue (MatMul then Pointwise) at any [w,h,k].
  std::string epi = problemJson("[128,128,128,128]", "[128,128,128,128]", "[[0,1],[2]]", "[[2],[3]]", "[1000,100]",
                                "[\"MatMul\",\"Pointwise\"]", 50000);
  expectValid(eval(epi, sched("[[0,1]]", "[[32,64,16]]", "[[]]")));
}

// ---- V10: traversal order ---------------------------------------------------------------------

TEST(V10Traversal, NotAPermutationFails) {
  const std::string p = example("ex4");
  const char* g = "[[64,64,128]]";
  expectInvalid(eval(p, sched("[[0]]", g, "[[]]", "[[0,1,1,2]]")), "V10", 0, {"tile 1 appears twice"});
  expectInvalid(eval(p, sched("[[0]]", g, "[[]]", "[[0,1,2]]")), "V10", 0, {"has 3 entries but the grid has 4 tiles"});
  expectInvalid(eval(p, sched("[[0]]", g, "[[]]", "[[0,1,2,3,0]]")), "V10", 0, {"has 5 entries"});
  expectInvalid(eval(p, sched("[[0]]", g, "[[]]", "[[0,1,2,4]]")), "V10", 0, {"entry 3 is tile 4, outside [0, 3]"});
  expectInvalid(eval(p, sched("[[0]]", g, "[[]]", "[[]]")), "V10", 0, {"has 0 entries"});
  // A negative index is a format error.
  expectV1(v1Error(p, sched("[[0]]", g, "[[]]", "[[0,1,-1,2]]")), {"traversal_orders[0][2]"});
}

TEST(V10Traversal, PermutationsAndNullPass) {
  const std::string p = example("ex4");
  const char* g = "[[64,64,128]]";
  EXPECT_EQ(eval(p, sched("[[0]]", g, "[[]]", "[null]")).total, 7096);
  EXPECT_EQ(eval(p, sched("[[0]]", g, "[[]]", "[[0,1,2,3]]")).total, 7096);  // = raster
  EXPECT_EQ(eval(p, sched("[[0]]", g, "[[]]", "[[0,1,3,2]]")).total, 6548);
  // Reverse raster is raster's mirror image: also 7096.
  EXPECT_EQ(eval(p, sched("[[0]]", g, "[[]]", "[[3,2,1,0]]")).total, 7096);
}

// ---- V11: capacity ----------------------------------------------------------------------------

TEST(V11Capacity, Example5AIsOom) {
  Evaluation ev = eval(example("ex5"), sched("[[0,1]]", "[[128,128,128]]", "[[]]"));
  expectInvalid(ev, "V11", 0, {"working set 65536 exceeds fast_memory_capacity 45000", "[128,128,128]"});
}

TEST(V11Capacity, BoundaryIsInclusive) {
  // Ex 4: WS 20480 fits a capacity of exactly 20480, not 20479.
  const std::string s = sched("[[0]]", "[[64,64,128]]", "[[]]");
  Evaluation ev = eval(withCapacity(example("ex4"), 25000, 20480), s);
  expectValid(ev);
  EXPECT_EQ(ev.total, 7096);
  ev = eval(withCapacity(example("ex4"), 25000, 20479), s);
  expectInvalid(ev, "V11", 0, {"working set 20480 exceeds fast_memory_capacity 20479"});
}

TEST(V11Capacity, RetainedTensorsCount) {
  const std::string s = sched("[[0,1],[0,2]]", kG2, "[[2],[]]");  // Ex 3B
  // SG1: T0 + T3 + retained-in T2 = 49152.
  Evaluation ev = eval(withCapacity(example("ex3"), 50000, 49152), s);
  expectValid(ev);
  ev = eval(withCapacity(example("ex3"), 50000, 49151), s);
  expectInvalid(ev, "V11", 1, {"working set 49152 exceeds fast_memory_capacity 49151"});
  // SG0: T0 + retained-out T2 = 32768 (W1, A-8).
  ev = eval(withCapacity(example("ex3"), 50000, 32767), s);
  expectInvalid(ev, "V11", 0, {"working set 32768 exceeds"});
}

TEST(V11Capacity, SmallerTilesFit) {
  // Ex 5 at [128,128,32] (5B) fits where 5A does not.
  Evaluation ev = eval(example("ex5"), sched("[[0,1]]", "[[128,128,32]]", "[[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.total, 6915.2);
}

// ---- E2: accumulating MatMuls with different K -------------------------------------------------

// op 0 MatMul T0 x T1 -> T2 (K = 128); op 1 MatMul T3 x T4 -> T5 (K = kk); op 2 Pointwise (T2,T5) -> T6.
std::string twoMatmulsAdd(int kk) {
  std::string k = std::to_string(kk);
  return problemJson("[128,128,128," + k + ",128,128,128]", "[128,128,128,128," + k + ",128,128]",
                     "[[0,1],[3,4],[2,5]]", "[[2],[5],[6]]", "[1000,1000,100]", "[\"MatMul\",\"MatMul\",\"Pointwise\"]",
                     100000);
}

TEST(E2KLoop, AccumulatingMatmulsWithDifferentKFail) {
  Evaluation ev = eval(twoMatmulsAdd(256), sched("[[0,1,2]]", "[[128,128,64]]", "[[]]"));
  expectInvalid(ev, "E2", 0, {"different K", "K = 128 and K = 256 at op 1 (MatMul)"});
}

TEST(E2KLoop, AccumulatingMatmulsWithEqualKPass) {
  Evaluation ev = eval(twoMatmulsAdd(128), sched("[[0,1,2]]", "[[128,128,64]]", "[[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.subgraphs[0].nk, 2);
  // Per step: compute (1000 + 1000) * 64/128 = 1000 (+100 in the last step); loads 4 strips of
  // 8192 = 3276.8; the last step also stores T6 (1638.4): 3276.8 + 4915.2.
  EXPECT_EQ(ev.total, 8192);
  // WS: 4 strips + T6 tile + 2 ephemeral accumulators (decision 8) = 81920.
  EXPECT_EQ(ev.subgraphs[0].cost.peak_ws, 81920);
  // Different K split into subgraphs is fine.
  expectValid(
      eval(twoMatmulsAdd(256), sched("[[0],[1],[2]]", "[[128,128,64],[128,128,64],[128,128,1]]", "[[],[],[]]")));
}

TEST(E2KLoop, SplitKMatmulThatIsAlsoAnOperandFails) {
  // Ex 5 with T3 retained: op 0 accumulates into T3 and also feeds op 1's k-strips.
  Evaluation ev = eval(example("ex5"), sched("[[0,1]]", "[[128,128,32]]", "[[3]]"));
  expectInvalid(ev, "E2", 0, {"op 0 (MatMul) accumulates over k-steps but is also an operand"});
}

// ---- A-6: outputs of different shapes ----------------------------------------------------------

// op 0 Pointwise T0 -> T1 (128x128); op 1 MatMul T1 x T2 (128x256) -> T3 (128x256);
// op 2 Pointwise T1 -> T4 (128x128).
std::string mixedShapes() {
  return problemJson("[128,128,256,256,128]", "[128,128,128,128,128]", "[[0],[1,2],[1]]", "[[1],[3],[4]]",
                     "[100,1000,100]", "[\"Pointwise\",\"MatMul\",\"Pointwise\"]", 60000);
}

TEST(A6Shapes, OutputsOfDifferentShapesFail) {
  Evaluation ev = eval(mixedShapes(), sched("[[0,1,2]]", "[[128,128,128]]", "[[]]"));
  expectInvalid(ev, "A-6", 0, {"outputs of different shapes", "tensor 3 is 128x256", "tensor 4 is 128x128"});
}

TEST(A6Shapes, RetainedConsumedTensorCountsAsAnOutput) {
  // Decision 7: T1 is consumed inside the subgraph but retained, so it joins the outputs.
  Evaluation ev = eval(mixedShapes(), sched("[[0,1],[2]]", "[[128,128,128],[128,128,1]]", "[[1],[]]"));
  expectInvalid(ev, "A-6", 0, {"tensor 1 is 128x128", "tensor 3 is 128x256"});
}

TEST(A6Shapes, SameShapeGroupsPass) {
  Evaluation ev = eval(mixedShapes(), sched("[[0,1],[0,2]]", "[[128,128,128],[128,128,1]]", "[[],[]]"));
  expectValid(ev);
  EXPECT_EQ(ev.subgraphs[0].ntw, 2);  // grid from T3 (W = 256)
  EXPECT_EQ(ev.subgraphs[0].nth, 1);
}

}  // namespace
