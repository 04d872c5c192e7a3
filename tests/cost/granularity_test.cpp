// The granularity module (cost/pricing/granularity.h): candidate values, the reduction limit, the
// chooser and its callers, on tiny graphs with hand-computed expectations.
#include "cost/pricing/granularity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>

#include "tests/test_util.h"

using namespace mlsys;

namespace {

// One MatMul T0 (128x128) x T1 (128x128) -> T2, base cost 1000, bandwidth 10, K = N = 128.
// At [w,h,k] a step holds the LHS strip h*k, the RHS strip k*w and the output tile h*w, so
// [128,128,128] needs 49152 > 40000 and [128,128,64] or [128,64,128] need 32768.
// Every tiling that loads each operand once and is memory-bound moves 3 x 16384 elements:
// 4915.2.
Problem matmul(long capacity = 40000) {
  return test::problemFromJson(R"({"widths": [128, 128, 128], "heights": [128, 128, 128],
    "inputs": [[0, 1]], "outputs": [[2]], "base_costs": [1000], "op_types": ["MatMul"],
    "fast_memory_capacity": )" +
                               std::to_string(capacity) + R"(, "slow_memory_bandwidth": 10,
    "native_granularity": [128, 128]})");
}

// matmul() and an incremental evaluator on it.
struct OneMatMul {
  Problem p = matmul();
  IncrementalEvaluator ev{p, ModelOptions{}};
};

// A MatMul T0 (128x256) x T1 (256x64) -> T2 (128x64), K = 256, then a Pointwise T2 -> T3; and
// a second MatMul T4 (128x32) x T5 (32x64) -> T6, K = 32, unconnected to the others.
Problem mixed() {
  return test::problemFromJson(
      R"({"widths": [256, 64, 64, 64, 32, 64, 64], "heights": [128, 256, 128, 128, 128, 32, 128],
    "inputs": [[0, 1], [2], [4, 5]], "outputs": [[2], [3], [6]], "base_costs": [1000, 100, 500],
    "op_types": ["MatMul", "Pointwise", "MatMul"], "fast_memory_capacity": 1000000, "slow_memory_bandwidth": 10,
    "native_granularity": [128, 128]})");
}

// A Pointwise T0 -> T1, 128x128: at [w,h] a step holds the input and the output tile, 2*w*h.
Problem pointwise(long capacity) {
  return test::problemFromJson(R"({"widths": [128, 128], "heights": [128, 128], "inputs": [[0]], "outputs": [[1]],
    "base_costs": [100], "op_types": ["Pointwise"], "fast_memory_capacity": )" +
                               std::to_string(capacity) +
                               R"(, "slow_memory_bandwidth": 10, "native_granularity": [128, 128]})");
}

bool operator==(const std::vector<Granularity>& a, const std::vector<std::array<i64, 3>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].w != b[i][0] || a[i].h != b[i][1] || a[i].k != b[i][2]) return false;
  return true;
}

TEST(Granularity, ReductionLimitIsTheSmallestKCappedAtN) {
  Problem p = mixed();
  EXPECT_EQ(reductionLimit(p, ModelOptions{}, {0}), 128);  // K = 256 > N
  EXPECT_EQ(reductionLimit(p, ModelOptions{}, {2}), 32);   // K = 32
  EXPECT_EQ(reductionLimit(p, ModelOptions{}, {0, 1, 2}), 32);
  EXPECT_EQ(reductionLimit(p, ModelOptions{}, {1}), 0);  // no MatMul
}

TEST(Granularity, SideCandidates) {
  EXPECT_EQ(sideCandidates(128, 128), (std::vector<i64>{128, 64, 32, 16, 8, 4, 2, 1}));
  // 200 rows: powers of two up to N, and the balanced sizes ceil(200 / ceil(200 / v)):
  // v = 128 -> 2 tiles of 100, 64 -> 4 of 50, 32 -> 7 of 29, 16 -> 13 of 16.
  EXPECT_EQ(sideCandidates(200, 128), (std::vector<i64>{128, 100, 64, 50, 32, 29, 16, 8, 4, 2, 1}));
  // 100 columns: top = 100; 64 -> 2 tiles of 50, 32 -> 4 of 25, 16 -> 7 of 15.
  EXPECT_EQ(sideCandidates(100, 128), (std::vector<i64>{100, 64, 50, 32, 25, 16, 15, 8, 4, 2, 1}));
}

TEST(Granularity, CandidatesKOutermostThenWThenH) {
  auto c = granularityCandidates(2, 2, {1}, 128);  // sides {2, 1}, k = 1 without MatMul
  EXPECT_TRUE(c == (std::vector<std::array<i64, 3>>{{2, 2, 1}, {2, 1, 1}, {1, 2, 1}, {1, 1, 1}}));
  auto t = granularityCandidates(128, 128, {4, 2}, 128, 1);  // at most 1 w, 1 h
  EXPECT_TRUE(t == (std::vector<std::array<i64, 3>>{{128, 128, 4}, {128, 128, 2}}));
}

// One MatMul T0 (128x300) x T1 (300x128) -> T2 (128x128), K = 300, base cost 1000, bandwidth
// 10. At [128,h,300] a step holds T1's 300x128 strip (38400), the LHS strip h*300 and the
// output tile h*128: 38400 + 428h.
Problem oddK(long capacity) {
  return test::problemFromJson(R"({"widths": [300, 128, 128], "heights": [128, 300, 128],
    "inputs": [[0, 1]], "outputs": [[2]], "base_costs": [1000], "op_types": ["MatMul"],
    "fast_memory_capacity": )" +
                               std::to_string(capacity) + R"(, "slow_memory_bandwidth": 10,
    "native_granularity": [128, 128]})");
}

ModelOptions reduction() {
  ModelOptions m;
  m.k_limit = ModelOptions::KLimit::Reduction;
  return m;
}

TEST(Granularity, KAboveNativeIsTheSmallestKOfEachStepCount) {
  const Problem p = oddK(1000000);
  // K = 300: one step at 300, two at 150; three steps (100) are not above N.
  EXPECT_EQ(kAboveNative(p, reduction(), {0}), (std::vector<i64>{300, 150}));
  EXPECT_EQ(kAboveNative(p, reduction(), {0}, 1), (std::vector<i64>{300}));
  EXPECT_TRUE(kAboveNative(p, ModelOptions{}, {0}).empty());  // the spec: k <= N
  // The chooser's k: the spec's values first, then those above N.
  EXPECT_EQ(kChoices(p, ModelOptions{}, {0}, 2), (std::vector<i64>{128, 64}));
  EXPECT_EQ(kChoices(p, reduction(), {0}, 2), (std::vector<i64>{128, 64, 300, 150}));
  EXPECT_EQ(kChoices(pointwise(100000), reduction(), {0}), (std::vector<i64>{1}));  // no MatMul
  // mixed(): op 0 has K = 256 (k = 256 above N), op 2 K = 32 caps a subgraph holding both.
  EXPECT_EQ(kAboveNative(mixed(), reduction(), {0}), (std::vector<i64>{256}));
  EXPECT_TRUE(kAboveNative(mixed(), reduction(), {0, 2}).empty());
}

TEST(Granularity, LargestFittingFindsTheLastValueThatFits) {
  int calls = 0;
  EXPECT_EQ(largestFitting(128, [&](i64 v) { return ++calls, v <= 37; }), 37);
  EXPECT_LE(calls, 8);
  EXPECT_EQ(largestFitting(128, [](i64) { return false; }), 0);
  EXPECT_EQ(largestFitting(128, [](i64) { return true; }), 128);
  EXPECT_EQ(largestFitting(1, [](i64 v) { return v <= 1; }), 1);
}

TEST(Granularity, CachedChoiceUnderReductionLosesNothingAndFindsTheFittingSide) {
  // The choice under k_limit=reduction tries every candidate the spec's does: never dearer.
  for (long cap : {45000L, 60000L, 200000L}) {
    const Problem p = oddK(cap);
    IncrementalEvaluator spec(p, ModelOptions{}), red(p, reduction());
    SubgraphSched a{{0}, {1, 1, 1}, {}, {}}, b = a;
    ASSERT_TRUE(bestGranularityCached(spec, a, {}));
    ASSERT_TRUE(bestGranularityCached(red, b, {}));
    EXPECT_LE(red.cost(b, {}).latency, spec.cost(a, {}).latency) << cap;
  }
  // A Pointwise prologue T0 -> T1 on the LHS of a MatMul with K = 300: they share a subgraph
  // only at k = K (V9), so only under k_limit=reduction. At [128,h,300] a step holds T0's strip
  // h*300, T2 (300x128) and the output tile h*128: 38400 + 428h, which fits capacity 47000 up to
  // h = 20, 7 row tiles (compute bound, 11296); the fixed side list has only 16 (8 tiles).
  const Problem p = test::problemFromJson(R"({"widths": [300, 300, 128, 128], "heights": [128, 128, 300, 128],
    "inputs": [[0], [1, 2]], "outputs": [[1], [3]], "base_costs": [100, 1000], "op_types": ["Pointwise", "MatMul"],
    "fast_memory_capacity": 47000, "slow_memory_bandwidth": 10, "native_granularity": [128, 128]})");
  IncrementalEvaluator spec(p, ModelOptions{}), red(p, reduction());
  SubgraphSched sg{{0, 1}, {1, 1, 1}, {}, {}};
  EXPECT_FALSE(bestGranularityCached(spec, sg, {}));
  ASSERT_TRUE(bestGranularityCached(red, sg, {}));
  EXPECT_EQ(sg.gran.k, 300);
  EXPECT_TRUE(sg.gran.h == 20 || sg.gran.h == 19) << sg.gran.h;  // 19: the same 7 tiles, balanced
  EXPECT_LE(red.cost(sg, {}).latency, 11296);
}

TEST(Granularity, HalvingsHalveTheLargestSideKFirst) {
  EXPECT_TRUE(
      halvings({128, 128, 128}, 6) ==
      (std::vector<std::array<i64, 3>>{
          {128, 128, 128}, {128, 128, 64}, {64, 128, 64}, {64, 64, 64}, {64, 64, 32}, {32, 64, 32}, {32, 32, 32}}));
  EXPECT_TRUE(halvings({3, 1, 1}, 6) == (std::vector<std::array<i64, 3>>{{3, 1, 1}, {2, 1, 1}, {1, 1, 1}}));
}

TEST(Granularity, NiceSidesWeightTheBalancedSizes) {
  // Powers of two 1, 2, 4; the top 4; then ceil(4 / t) for t = 1..64: 4, 2, 2 and 61 ones.
  std::vector<i64> v = niceSides(4, 4);
  ASSERT_EQ(v.size(), 68u);
  EXPECT_EQ((std::vector<i64>(v.begin(), v.begin() + 8)), (std::vector<i64>{1, 2, 4, 4, 4, 2, 2, 1}));
  EXPECT_EQ(std::count(v.begin(), v.end(), 1), 62);
}

struct Fake {
  bool valid;
  double latency;
};

TEST(Granularity, ChooserKeepsTheFirstCheapestValid) {
  std::vector<int> cands = {0, 1, 2, 3, 4};
  const Fake price[] = {{false, 1}, {true, 5}, {true, 3}, {true, 3}, {false, 2}};
  int priced = 0;
  auto best = chooseCheapest(cands, [&](int c) { return ++priced, price[c]; });
  EXPECT_TRUE(best.found);
  EXPECT_EQ(best.cand, 2);  // 3 ties with it; 0 and 4 are cheaper but invalid
  EXPECT_EQ(priced, 5);
  priced = 0;
  auto first = chooseCheapest(
      cands, [&](int c) { return ++priced, price[c]; }, [](int, const Fake&, const auto& b) { return b.found; });
  EXPECT_EQ(first.cand, 1);
  EXPECT_EQ(priced, 2);
  auto none = chooseCheapest(std::vector<int>{0, 4}, [&](int c) { return price[c]; });
  EXPECT_FALSE(none.found);
}

TEST(Granularity, FirstFittingHalvesUntilItFits) {
  // [128,128,128] needs 49152 > 40000; k is halved first.
  Granularity g = firstFitting(matmul(), ModelOptions{}, 0);
  EXPECT_EQ(g, (Granularity{128, 128, 64}));
  // 2*128*128 = 32768 > 20000; k stays 1, w is halved: 2*64*128 = 16384.
  EXPECT_EQ(firstFitting(pointwise(20000), ModelOptions{}, 0), (Granularity{64, 128, 1}));
}

TEST(Granularity, BestGranularityIsTheFirstCheapestCandidate) {
  // Candidates run k = 128 first, w from 128 down, h from 128 down: [128,128,128] does not fit,
  // [128,64,128] loads the LHS once in two row strips, the RHS once (resident across the two
  // tiles) and stores once: 4915.2, which nothing beats. Two tiles: no snakes.
  Problem p = matmul();
  GranChoice c = bestGranularity(p, ModelOptions{}, {0}, {}, {});
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.g, (Granularity{128, 64, 128}));
  EXPECT_EQ(c.trav.kind, TraversalKind::Raster);
  EXPECT_DOUBLE_EQ(c.cost.latency, 4915.2);
}

TEST(Granularity, CachedChoiceTriesTheExtraCandidatesFirst) {
  OneMatMul m;
  SubgraphSched sg{{0}, {1, 1, 1}, {}, {}};
  ASSERT_TRUE(bestGranularityCached(m.ev, sg, {}));
  EXPECT_EQ(sg.gran, (Granularity{128, 64, 128}));
  // [128,128,64] costs the same 4915.2 (two k-steps, each operand loaded once) and comes first.
  ASSERT_TRUE(bestGranularityCached(m.ev, sg, {}, {{128, 128, 64}}));
  EXPECT_EQ(sg.gran, (Granularity{128, 128, 64}));
  EXPECT_EQ(sg.trav.kind, TraversalKind::Raster);
}

TEST(Granularity, RepairStopsOnceCandidatesGetSmall) {
  // From [128,128,128] (49152 > 40000): [128,128,64] is valid at 4915.2; the halvings after it
  // cost more; [32,64,32] is the first with less than a quarter of its tile area, and ends the
  // scan, so [32,32,32] is never priced: six lookups.
  OneMatMul m;
  SubgraphSched sg{{0}, {128, 128, 128}, {}, {}};
  ASSERT_TRUE(repairGranularity(m.ev, sg, {}));
  EXPECT_EQ(sg.gran, (Granularity{128, 128, 64}));
  EXPECT_EQ(m.ev.cache().misses, 6u);
  EXPECT_EQ(m.ev.cache().hits, 0u);
}

TEST(Granularity, RepairClampsKAndStopsOnARuleNoGranularityFixes) {
  Problem p = mixed();
  IncrementalEvaluator ev(p, ModelOptions{});
  // Ops 0 and 2 are not connected (V4): one lookup, no valid granularity; k clamped to the
  // reduction limit 32.
  SubgraphSched sg{{0, 2}, {128, 128, 500}, {}, {}};
  EXPECT_FALSE(repairGranularity(ev, sg, {}));
  EXPECT_EQ(sg.gran, (Granularity{128, 128, 32}));
  EXPECT_EQ(ev.cache().misses, 1u);
  EXPECT_FALSE(granularityCanFix(Rule::V4));
  EXPECT_TRUE(granularityCanFix(Rule::V11));
}

}  // namespace
