// Direct tests of the constructors of engine/construct/construct.h (quick, baseline, greedy and
// chain fusion) and the chain-following topological order (engine/construct/topo_order.h), on the
// spec's example graphs with hand-computed expectations (figures derived in the comments; see
// tests/unit_graphs.h).
#include "engine/construct/construct.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "cost/pricing/evaluator.h"
#include "cost/pricing/granularity.h"
#include "cost/pricing/incremental.h"
#include "engine/base/deadline.h"
#include "engine/base/limits.h"
#include "engine/construct/topo_order.h"
#include "engine/generate/generator.h"
#include "tests/test_util.h"
#include "tests/unit_graphs.h"

using namespace mlsys;
using namespace mlsys::units;

namespace {

// ---------------------------------------------------------------------------------------------
// quickSchedule: each op alone in p.topo order, at the first fitting halving of
// [min(N,W), min(N,H), min(N,K)] (k halved first while it is the largest side, then w, then h).

TEST(EngineUnitsQuick, Ex1NativeGranularityFits) {
  // [128,128,1]: WS T0 + T1 tiles = 32768 <= 50000. Latency = Ex 1A: 3276.8 + 3276.8 = 6553.6.
  Problem p = ex1();
  Schedule s = quickSchedule(p, ModelOptions{});
  EXPECT_TRUE(sameSchedule(s, schedule({sg({0}, {128, 128, 1}), sg({1}, {128, 128, 1})})));
  EXPECT_DOUBLE_EQ(fullTotal(p, s), 6553.6);
}

TEST(EngineUnitsQuick, Ex1SmallCapacityHalvesWThenH) {
  // Capacity 10000: [128,128,1] needs 32768; k = 1 is not halved, w is (w >= h): [64,128,1]
  // needs 2 x 8192 = 16384, still too much; then h: [64,64,1] needs 8192 and fits.
  // op0: 4 tiles x max(1000, 409.6 + 409.6) = 4000; op1: 4 x max(100, 819.2) = 3276.8. 7276.8.
  Problem p = ex1(10000);
  Schedule s = quickSchedule(p, ModelOptions{});
  EXPECT_TRUE(sameSchedule(s, schedule({sg({0}, {64, 64, 1}), sg({1}, {64, 64, 1})})));
  EXPECT_DOUBLE_EQ(fullTotal(p, s), 7276.8);
}

TEST(EngineUnitsQuick, Ex5HalvesKFirst) {
  // [128,128,128] needs LHS 16384 + RHS 16384 + T3 tile 16384 = 49152 > 45000 (Ex 5A's reason,
  // for one op). k is the largest side (ties go to k): [128,128,64] needs 8192 + 8192 + 16384
  // = 32768 and fits. Each op: 2 k-steps of compute 2000 x 64/128 = 1000; step 1 loads two
  // strips, max(1000, 819.2 + 819.2) = 1638.4; step 2 loads two strips and stores the tile,
  // max(1000, 1638.4 + 1638.4) = 3276.8: 4915.2. Op1 reads T3 from slow memory (written by
  // SG0). Total 9830.4.
  Problem p = ex5();
  Schedule s = quickSchedule(p, ModelOptions{});
  EXPECT_TRUE(sameSchedule(s, schedule({sg({0}, {128, 128, 64}), sg({1}, {128, 128, 64})})));
  EXPECT_DOUBLE_EQ(fullTotal(p, s), 9830.4);
  EXPECT_EQ(fullLatencies(p, s), (std::vector<double>{4915.2, 4915.2}));
}

// ---------------------------------------------------------------------------------------------
// baselineSchedule: each op alone at its best granularity, then retention of an output into the
// next subgraph when all its consumers are there and it lowers the latency.

TEST(EngineUnitsBaseline, Ex1RetainsT1) {
  // Best alone: [128,128,1] for both (one tile; 3276.8 each is the traffic floor). T1's only
  // consumer is the next subgraph: retained, SG0 max(1000, 1638.4) = 1638.4 and SG1
  // max(100, 0 + 1638.4) = 1638.4: 3276.8 < 6553.6. (SG1 at [128,64,1] ties, 2 x 819.2; the
  // chooser keeps the first candidate, [128,128,1].)
  Problem p = ex1();
  Schedule s = baselineSchedule(p, ModelOptions{});
  EXPECT_TRUE(sameSchedule(s, schedule({sg({0}, {128, 128, 1}, {1}), sg({1}, {128, 128, 1})})));
  EXPECT_DOUBLE_EQ(fullTotal(p, s), 3276.8);
}

TEST(EngineUnitsBaseline, Ex3RetainsOnlyWhereAllConsumersAreNext) {
  // T1 is read by op1 (next) and op2 (two on): not retained. T2 is read only by op2 (next):
  // retained, 1638.4 + 3276.8 < 3276.8 + 4915.2. Total 3276.8 + 1638.4 + 3276.8 = 8192, against
  // Ex 3A's 11468.8 unretained; no fusion (the baseline never fuses).
  Problem p = ex3();
  Schedule s = baselineSchedule(p, ModelOptions{});
  EXPECT_TRUE(sameSchedule(s, schedule({sg({0}, {128, 128, 1}), sg({1}, {128, 128, 1}, {2}), sg({2}, {128, 128, 1})})));
  EXPECT_DOUBLE_EQ(fullTotal(p, s), 8192);
}

TEST(EngineUnitsBaseline, Ex5RetainsT3AndAnExpiredDeadlineKeepsTheQuickSchedule) {
  // Best alone: [128,128,64] at 4915.2 each (the traffic floor 3 x 1638.4; k = 128 does not
  // fit at 128x128, and [128,64,128] costs max(2000, 3276.8) + max(2000, 1638.4) = 5276.8).
  // Retaining T3: 3276.8 + 3457.6 = 6734.4 < 9830.4 (see the beam test above).
  Problem p = ex5();
  Schedule s = baselineSchedule(p, ModelOptions{});
  EXPECT_TRUE(sameSchedule(s, schedule({sg({0}, {128, 128, 64}, {3}), sg({1}, {128, 128, 64})})));
  EXPECT_DOUBLE_EQ(fullTotal(p, s), 6734.4);
  // Out of time before it starts: the quick schedule, unimproved (9830.4), still valid.
  Deadline dl;
  dl.setBudget(0);
  Schedule q = baselineSchedule(p, ModelOptions{}, &dl);
  EXPECT_TRUE(sameSchedule(q, quickSchedule(p, ModelOptions{})));
  EXPECT_DOUBLE_EQ(fullTotal(p, q), 9830.4);
}

// ---------------------------------------------------------------------------------------------
// greedyFusion and chainFusion, through an IncrementalEvaluator.

using FusionPass = void (*)(IncrementalEvaluator&, const std::function<bool()>&);

// One fusion pass from `start`: the schedule after it, its incremental total (checked against
// the full evaluator) and whether it is still `start`.
struct Fused {
  Schedule schedule;
  double total;
  bool unchanged;
};
Fused runFusion(FusionPass pass, const Problem& p, const Schedule& start, const std::function<bool()>& stop = kNever) {
  IncrementalEvaluator ev(p, ModelOptions{});
  ev.reset(start);
  pass(ev, stop);
  EXPECT_TRUE(ev.valid());
  EXPECT_DOUBLE_EQ(fullTotal(p, ev.schedule()), ev.total());
  return {ev.schedule(), ev.total(), sameSchedule(ev.schedule(), start)};
}

TEST(EngineUnitsGreedy, Ex1FusesThePair) {
  // From Ex 1A (6553.6): [0] and [1] share T1; fused at [128,128,1] is Ex 1B, 3276.8.
  Problem p = ex1();
  ASSERT_DOUBLE_EQ(fullTotal(p, quickSchedule(p, ModelOptions{})), 6553.6);
  Fused f = runFusion(greedyFusion, p, quickSchedule(p, ModelOptions{}));
  EXPECT_DOUBLE_EQ(f.total, 3276.8);
  EXPECT_TRUE(sameSchedule(f.schedule, schedule({sg({0, 1}, {128, 128, 1})})));
}

TEST(EngineUnitsGreedy, Ex3MergesTheTailThenEverything) {
  // From Ex 3A (3276.8 + 3276.8 + 4915.2 = 11468.8). Pass 1: [0]+[1] is invalid (T1 becomes
  // ephemeral, op2 reads it later: V5); [1]+[2] gives max(3000, 1638.4 + 1638.4) = 3276.8 for
  // 8192 before: 6553.6. Pass 2: [0]+[1,2] gives max(4500, 1638.4 + 1638.4) = 4500. Done.
  Problem p = ex3();
  ASSERT_DOUBLE_EQ(fullTotal(p, quickSchedule(p, ModelOptions{})), 11468.8);
  Fused f = runFusion(greedyFusion, p, quickSchedule(p, ModelOptions{}));
  EXPECT_DOUBLE_EQ(f.total, 4500);
  EXPECT_TRUE(sameSchedule(f.schedule, schedule({sg({0, 1, 2}, {128, 128, 1})})));
}

TEST(EngineUnitsGreedy, AppliesOnlyImprovingMergesAndHonoursStop) {
  // Ex 5 from the baseline's retention schedule (6734.4): the only merge, [0,1], is best at
  // 6915.2 (Ex 5B; its start granularities [128,128,64] overflow fused: 49152 > 45000): worse,
  // not applied.
  Problem p = ex5();
  Fused fromBase = runFusion(greedyFusion, p, baselineSchedule(p, ModelOptions{}));
  EXPECT_TRUE(fromBase.unchanged);
  EXPECT_DOUBLE_EQ(fromBase.total, 6734.4);
  // From the quick schedule (9830.4) the same merge improves: 6915.2.
  Fused fromQuick = runFusion(greedyFusion, p, quickSchedule(p, ModelOptions{}));
  EXPECT_DOUBLE_EQ(fromQuick.total, 6915.2);
  EXPECT_TRUE(sameSchedule(fromQuick.schedule, schedule({sg({0, 1}, {128, 128, 32})})));
  // A stop already requested: nothing changes (Ex 1 would fuse otherwise).
  Fused stopped = runFusion(greedyFusion, ex1(), quickSchedule(ex1(), ModelOptions{}), kAlways);
  EXPECT_TRUE(stopped.unchanged);
  EXPECT_DOUBLE_EQ(stopped.total, 6553.6);
}

// Greedy fusion stops at a fixpoint: no adjacent pair sharing a tensor merges (at its best
// granularity, from both sides' as hints) into a valid, cheaper schedule. A later pass skips a
// pair refused before while the two subgraphs and what is retained into the first are the same;
// this holds it to re-pricing every pair, on generated graphs of several families.
TEST(EngineUnitsGreedy, EndsWhereNoAdjacentMergeImproves) {
  for (const char* family : {"gemm-chain", "transformer", "random", "mixer"})
    for (uint64_t seed : {1, 2}) {
      const Problem p = generateProblem(family, 60, seed);
      IncrementalEvaluator ev(p, ModelOptions{});
      ev.reset(quickSchedule(p, ModelOptions{}));
      ASSERT_TRUE(ev.valid());
      greedyFusion(ev, [] { return false; });
      ASSERT_TRUE(ev.valid());
      for (int s = 0; s + 1 < ev.size(); ++s) {
        const SubgraphSched& A = ev.schedule().subgraphs[s];
        const SubgraphSched& B = ev.schedule().subgraphs[s + 1];
        SubgraphSched m;
        m.ops = A.ops;
        for (OpId o : B.ops)
          if (std::find(m.ops.begin(), m.ops.end(), o) == m.ops.end()) m.ops.push_back(o);
        m.retain = B.retain;
        if (!bestGranularityCached(ev, m, ev.retainedInto(s), {A.gran, B.gran})) continue;
        const DeltaEval d = ev.evaluate(Change{s, 2, {m}});
        bool shares = false;
        for (OpId x : A.ops)
          for (TensorId t : p.ops[x].outputs)
            for (OpId y : B.ops)
              for (TensorId u : p.ops[y].inputs) shares |= t == u;
        EXPECT_FALSE(shares && d.valid && deltaImproves(d.delta, ev.total()))
            << family << " seed " << seed << ": subgraphs " << s << " and " << s + 1 << " still merge";
      }
    }
}

TEST(EngineUnitsChain, AnalyticModelOnEx5) {
  // A = T0 (H x K1), B = T1 (K1 x K2), C = T2 (K2 x W), all 128: at h = w = 128 one tile;
  // traffic = A once (16384) + strips K2 x (K1 + w) = 128 x 256 = 32768 + O once (16384) = 65536.
  EXPECT_DOUBLE_EQ(chainTraffic(128, 128, 128, 128, 128, 128), 65536);
  // h = 64: two tile rows, A still once (2 x 64 x 128), the strips twice: 16384 + 65536 + 16384.
  EXPECT_DOUBLE_EQ(chainTraffic(128, 128, 128, 128, 64, 128), 98304);
  // Working set h K1 + K1 k + k w + h w: Ex 5B (k = 32) is W4's 40960; k = 64 is 49152 > 45000.
  EXPECT_EQ(chainWorkingSet(128, 128, 128, 32), 40960);
  EXPECT_EQ(chainWorkingSet(128, 128, 128, 64), 49152);
}

TEST(EngineUnitsChain, Ex5FusesIntoTheSplitKChain) {
  // From the quick schedule (9830.4). The least traffic, 65536, needs h = w = 128; the working
  // set 32768 + 256 k <= 45000 allows k <= 47, so the four cheapest candidates are k = 32, 16,
  // 8, 4 (ties go to the larger k). Exact costs: k = 32 is Ex 5B, 2457.6 + 1000 + 1000 +
  // 2457.6 = 6915.2; k = 16 is 2048 + 6 x 500 + 2048 = 7096. 6915.2 < 9830.4: applied.
  Problem p = ex5();
  Fused f = runFusion(chainFusion, p, quickSchedule(p, ModelOptions{}));
  EXPECT_DOUBLE_EQ(f.total, 6915.2);
  EXPECT_TRUE(sameSchedule(f.schedule, schedule({sg({0, 1}, {128, 128, 32})})));
}

TEST(EngineUnitsChain, AppliesOnlyImprovingFusionsAndOnlyToMatMulChains) {
  // From the retention schedule (6734.4) the chain's 6915.2 is worse: unchanged.
  Problem p = ex5();
  Fused fromBase = runFusion(chainFusion, p, baselineSchedule(p, ModelOptions{}));
  EXPECT_TRUE(fromBase.unchanged);
  EXPECT_DOUBLE_EQ(fromBase.total, 6734.4);
  // Ex 1 has no MatMul: nothing to fuse although fusing would help (6553.6 -> 3276.8).
  EXPECT_TRUE(runFusion(chainFusion, ex1(), quickSchedule(ex1(), ModelOptions{})).unchanged);
  // A stop already requested: Ex 5 stays unfused.
  Fused stopped = runFusion(chainFusion, p, quickSchedule(p, ModelOptions{}), kAlways);
  EXPECT_TRUE(stopped.unchanged);
  EXPECT_DOUBLE_EQ(stopped.total, 9830.4);
}

// ---------------------------------------------------------------------------------------------
// chainTopoOrder: after an op, its ready consumer with the lowest position in p.topo, else the
// lowest ready op. (p.topo is Kahn's order with the smallest op id first.)

TEST(EngineUnitsTopo, FollowsTheConsumerOfTheOpJustScheduled) {
  // op0: T0->T1, op1: T0->T2, op2: T1->T3, op3: T2->T4, op4: T1->T5, op5: (T3,T4)->T6,
  // op6: T5->T7.
  // p.topo (smallest ready id): 0 1 2 3 4 5 6.
  // Chain: 0; its consumers 2 and 4 become ready, 2 is lower: 2; 2 readies nothing (op5 waits
  // for op3): lowest ready is 1 (not 4); 1 readies 3: 3; 3 readies 5: 5 (not 4, though lower);
  // 5 readies nothing: 4; 4 readies 6: 6.
  Problem p = pointwiseDag("[[0], [0], [1], [2], [1], [3, 4], [5]]", "[[1], [2], [3], [4], [5], [6], [7]]", 8, 7);
  EXPECT_EQ(p.topo, (std::vector<OpId>{0, 1, 2, 3, 4, 5, 6}));
  std::vector<OpId> order = chainTopoOrder(p);
  EXPECT_EQ(order, (std::vector<OpId>{0, 2, 1, 3, 5, 4, 6}));
  EXPECT_TRUE(isTopological(p, order));
}

TEST(EngineUnitsTopo, TiesGoToTheLowestTopoPositionNotTheLowestId) {
  // op0: T0->T1, op1: T2->T3, op2: (T3,T4)->T5, op3: T3->T6, op4: T1->T4.
  // p.topo: sources 0, 1 -> 0 (readies 4) -> 1 (readies 3; op2 waits for op4) -> 3 -> 4
  // (readies 2) -> 2: [0, 1, 3, 4, 2], so op3 sits before op2.
  // Chain: 0; it readies 4: 4; 4 readies nothing (op2 waits for op1): lowest ready 1; 1
  // readies both 2 and 3: 3 (position 2) before 2 (position 4, though its id is lower); 2.
  Problem p = pointwiseDag("[[0], [2], [3, 4], [3], [1]]", "[[1], [3], [5], [6], [4]]", 7, 5);
  EXPECT_EQ(p.topo, (std::vector<OpId>{0, 1, 3, 4, 2}));
  std::vector<OpId> order = chainTopoOrder(p);
  EXPECT_EQ(order, (std::vector<OpId>{0, 4, 1, 3, 2}));
  EXPECT_TRUE(isTopological(p, order));
  // The quick schedule follows p.topo, one op per subgraph, and is valid.
  Schedule q = quickSchedule(p, ModelOptions{});
  ASSERT_EQ(q.subgraphs.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(q.subgraphs[i].ops, (std::vector<OpId>{p.topo[i]}));
  fullTotal(p, q);
}

TEST(EngineUnitsTopo, AChainIsKeptWhole) {
  // Two independent chains 0->2->4 and 1->3->5: p.topo
  // interleaves them (0 1 2 3 4 5); the chain order runs each to its end: 0 2 4 1 3 5.
  // op0: T0->T2, op1: T1->T3, op2: T2->T4, op3: T3->T5, op4: T4->T6, op5: T5->T7.
  Problem p = pointwiseDag("[[0], [1], [2], [3], [4], [5]]", "[[2], [3], [4], [5], [6], [7]]", 8, 6);
  EXPECT_EQ(p.topo, (std::vector<OpId>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(chainTopoOrder(p), (std::vector<OpId>{0, 2, 4, 1, 3, 5}));
}

}  // namespace
