// The fuse-far move (moves/fuse_far.cpp) on small Pointwise DAGs (128x128 tensors, cost 100,
// bandwidth 10: a tensor loads or stores in 1638.4, far above any compute here; tests/unit_graphs.h):
// a subgraph and a later reader of its outputs become one, what lies between reordered around
// them, priced by the incremental evaluator and the full evaluator.
#include <gtest/gtest.h>

#include <vector>

#include "cost/pricing/evaluator.h"
#include "cost/pricing/incremental.h"
#include "moves/moves.h"
#include "tests/test_util.h"
#include "tests/unit_graphs.h"

using namespace mlsys;
using namespace mlsys::units;

namespace {

const Granularity kTile{128, 128, 1};

// Every proposal `fuse-far` makes on `ev` over 64 seeds (it never changes the evaluator).
std::vector<Change> proposals(IncrementalEvaluator& ev) {
  auto mv = makeMove("fuse-far");
  EXPECT_TRUE(mv);
  std::vector<Change> out;
  if (!mv) return out;
  EXPECT_STREQ(mv->name(), "fuse-far");
  const Schedule before = ev.schedule();
  for (uint64_t seed = 1; seed <= 64; ++seed) {
    Rng rng(seed);
    Change c;
    if (!mv->propose(ev, rng, c)) continue;
    EXPECT_EQ(ev.schedule().subgraphs, before.subgraphs) << "proposing changed the schedule";
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::vector<OpId>> opsOf(const std::vector<SubgraphSched>& v) {
  std::vector<std::vector<OpId>> o;
  for (const auto& x : v) o.push_back(x.ops);
  return o;
}

TEST(FuseFar, ReordersWhatLiesBetweenAroundTheFusedSubgraph) {
  // op0: T0->T1, op1: T1->T2, op2: T1->T3 (s), op3: T3->T4 (needs s), op4: T5->T6 (t needs it),
  // op5: T2,T6->T7 (t). Before [0,1,2] [3] [4] [5]: [0,1,2] loads T0 and stores T2, T3 (4915.2);
  // [3] and [4] load one tensor and store one (3276.8 each); [5] loads T2, T6 and stores T7
  // (4915.2): 16384. The plain fuse cannot join [0,1,2] and [5]: [3] would read T3 before it is
  // made, or [5] T6 before [4]. Fuse-far: [4], then [0,1,2,5] (loads T0 and T6, stores T3, which
  // op3 still reads, and T7; T1 and T2 stay inside: 6553.6), then [3]: 3276.8 + 6553.6 + 3276.8 =
  // 13107.2, a delta of -3276.8.
  const Problem p = pointwiseDag("[[0], [1], [1], [3], [5], [2, 6]]", "[[1], [2], [3], [4], [6], [7]]", 8, 6);
  IncrementalEvaluator ev(p, ModelOptions{});
  ev.reset(schedule({sg({0, 1, 2}, kTile), sg({3}, kTile), sg({4}, kTile), sg({5}, kTile)}));
  ASSERT_TRUE(ev.valid());
  ASSERT_DOUBLE_EQ(ev.total(), 16384);
  const std::vector<Change> cs = proposals(ev);
  ASSERT_FALSE(cs.empty());
  for (const Change& c : cs) {  // [0,1,2]'s only far reader is [5]; [3]'s output has none
    EXPECT_EQ(c.first, 0);
    EXPECT_EQ(c.count, 4);
    EXPECT_EQ(opsOf(c.repl), (std::vector<std::vector<OpId>>{{4}, {0, 1, 2, 5}, {3}}));
  }
  const Schedule after = applied(ev.schedule(), cs[0]);
  EXPECT_NEAR(fullTotal(p, after), 13107.2, 1e-9);
  const DeltaEval d = ev.evaluate(cs[0]);
  ASSERT_TRUE(d.valid) << d.rule;
  EXPECT_NEAR(d.delta, -3276.8, 1e-9);
  ev.apply(cs[0], d);
  EXPECT_EQ(ev.schedule().subgraphs, after.subgraphs);
  EXPECT_TRUE(ev.checkAgainstFull());
}

TEST(FuseFar, ProposesNothingWhenWhatLiesBetweenBothNeedsSAndFeedsT) {
  // op0: T0->T1, op1: T1->T2, op2: T1,T2->T3 as [0] [1] [2]: [2] reads T1 from [0], but also T2
  // from [1], which needs T1: no order puts [0,2] after [1] and [1] after [0,2].
  const Problem p = pointwiseDag("[[0], [1], [1, 2]]", "[[1], [2], [3]]", 4, 3);
  IncrementalEvaluator ev(p, ModelOptions{});
  ev.reset(schedule({sg({0}, kTile), sg({1}, kTile), sg({2}, kTile)}));
  ASSERT_TRUE(ev.valid());
  EXPECT_TRUE(proposals(ev).empty());
}

TEST(FuseFar, ProposesNothingWhenASubgraphBetweenReadsWhatTheFusionHides) {
  // op0: T0->T1 (s), op1: T1->T2, op2: T3->T4, op3: T1->T5 (t) as [0] [1] [2] [3]: fused, [0,3]
  // keeps T1 inside (ephemeral), and op1 reads it from slow memory before or after: V5 either way.
  const Problem p = pointwiseDag("[[0], [1], [3], [1]]", "[[1], [2], [4], [5]]", 6, 4);
  IncrementalEvaluator ev(p, ModelOptions{});
  ev.reset(schedule({sg({0}, kTile), sg({1}, kTile), sg({2}, kTile), sg({3}, kTile)}));
  ASSERT_TRUE(ev.valid());
  EXPECT_TRUE(proposals(ev).empty());
}

TEST(FuseFar, DropsTheRetentionIntoTheFusedSubgraphFromTheOneBefore) {
  // op0: T0->T1, op1: T1->T2 (s), op2: T3->T4 (unrelated), op3: T2->T5 (t), as [0] keeping T1
  // for [1], [1], [2], [3]: [0] loads T0 and keeps T1 (1638.4), [1] finds T1 resident and stores
  // T2 (1638.4), [2] and [3] 3276.8 each: 9830.4. [0] writes nothing (T1 stays), so its outputs
  // have no reader far off; [1]'s T2 is read by [3]. Fused, [1,3] no longer follows [0]: the change
  // starts at [0], without its retention: [0] stores T1 (3276.8), [2] 3276.8, [1,3] loads T1 and
  // stores T5 (T2 stays inside) 3276.8: 9830.4, a delta of 0.
  const Problem p = pointwiseDag("[[0], [1], [3], [2]]", "[[1], [2], [4], [5]]", 6, 4);
  IncrementalEvaluator ev(p, ModelOptions{});
  ev.reset(schedule({sg({0}, kTile, {1}), sg({1}, kTile), sg({2}, kTile), sg({3}, kTile)}));
  ASSERT_TRUE(ev.valid());
  ASSERT_DOUBLE_EQ(ev.total(), 9830.4);
  const std::vector<Change> cs = proposals(ev);
  ASSERT_FALSE(cs.empty());
  for (const Change& c : cs) {
    EXPECT_EQ(c.first, 0);
    EXPECT_EQ(c.count, 4);
    EXPECT_EQ(opsOf(c.repl), (std::vector<std::vector<OpId>>{{0}, {2}, {1, 3}}));
    for (const auto& x : c.repl) EXPECT_TRUE(x.retain.empty());
  }
  const Schedule after = applied(ev.schedule(), cs[0]);
  EXPECT_NEAR(fullTotal(p, after), 9830.4, 1e-9);
  const DeltaEval d = ev.evaluate(cs[0]);
  ASSERT_TRUE(d.valid) << d.rule;
  EXPECT_NEAR(d.delta, 0, 1e-9);
}

}  // namespace
