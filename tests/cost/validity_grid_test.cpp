// Validity rules V8-V11 of spec section 3 (granularity, fusion grid, traversal, capacity), plus E2
// and A-6 (section 11 decisions 2 and 7); V1-V7: validity_test.cpp. For each rule at least one
// schedule that breaks it (the rule id and a reason naming the offending subgraph / tensor / op)
// and one that passes.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "tests/cost/validity_cases.h"
#include "tests/test_util.h"

using namespace mlsys;
using namespace mlsys::validity;

namespace {

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

// ---- outputs of different shapes ----------------------------------------------------------

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
