// Validity rules V1-V7 of spec section 3 (V8-V11, E2 and A-6: validity_grid_test.cpp): for each
// rule at least one schedule that breaks it (the rule id and a reason naming the offending
// subgraph / tensor / op) and one that passes.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "tests/cost/validity_cases.h"
#include "tests/test_util.h"

using namespace mlsys;
using namespace mlsys::validity;

namespace {

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

TEST(V5Availability, TheFirstSubgraphNamesNoSubgraphBeforeIt) {
  // chain3's op 1 first: tensor 2 comes from op 0, which runs later; nothing runs before.
  Evaluation ev = eval(chain3(), sched("[[1],[0],[2]]", kG3, "[[],[],[]]"));
  expectInvalid(ev, "V5", 0, {"tensor 1 (produced by op 0)", "no subgraph runs before the first one"});
  for (const Violation& v : ev.violations) EXPECT_EQ(v.reason.find("subgraph -1"), std::string::npos) << v.reason;
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

}  // namespace
