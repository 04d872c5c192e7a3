// The fuse move (moves/fuse.cpp) on small Pointwise DAGs: two non-adjacent subgraphs that share
// an op or a tensor become one, priced against the full evaluator (figures derived in the comments;
// see tests/unit_graphs.h).
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

// ---------------------------------------------------------------------------------------------
// FuseMove: two non-adjacent subgraphs that share an op (or a tensor) become one.

// op0: T0->T1, op1: T1->T2, op2: T4->T5 (unrelated), op3: T1->T3; Pointwise, cost 100, 128x128.
Problem fuseGraph() { return pointwiseDag("[[0], [1], [4], [1]]", "[[1], [2], [5], [3]]", 6, 4); }

TEST(EngineUnitsFuse, FusesNonAdjacentSubgraphsThatShareAnOpAndComputesItOnce) {
  // [0,1] [2] [0,3]: op0 is computed twice (T1 is ephemeral in [0,1], so [0,3] recomputes it from
  // T0). Each subgraph moves two full tensors (1638.4 each) against 100-300 of compute: 3 x 3276.8
  // = 9830.4. Fused, [0,1,3] moves T0 in, T2 and T3 out: 3 x 1638.4 = 4915.2 (compute 300), plus
  // [2]'s 3276.8 = 8192, wherever the fused subgraph goes (position 0 or 2; [2] is unrelated).
  Problem p = fuseGraph();
  IncrementalEvaluator ev(p, ModelOptions{});
  const Granularity g{128, 128, 1};
  ev.reset(schedule({sg({0, 1}, g), sg({2}, g), sg({0, 3}, g)}));
  ASSERT_TRUE(ev.valid());
  ASSERT_DOUBLE_EQ(ev.total(), 9830.4);
  auto mv = makeMove("fuse");
  ASSERT_STREQ(mv->name(), "fuse");
  bool atFirst = false, atLast = false;
  for (uint64_t seed = 1; seed <= 64; ++seed) {
    Rng rng(seed);
    Change c;
    if (!mv->propose(ev, rng, c)) continue;
    ASSERT_EQ(c.first, 0);
    ASSERT_EQ(c.count, 3);
    ASSERT_EQ(c.repl.size(), 2u);
    const bool first = c.repl[0].ops.size() == 3;
    const SubgraphSched& fused = c.repl[first ? 0 : 1];
    EXPECT_EQ(fused.ops, (std::vector<OpId>{0, 1, 3}));
    EXPECT_EQ(c.repl[first ? 1 : 0].ops, (std::vector<OpId>{2}));
    (first ? atFirst : atLast) = true;
    DeltaEval d = ev.evaluate(c);
    ASSERT_TRUE(d.valid);
    EXPECT_DOUBLE_EQ(d.total, 8192);
    EXPECT_NEAR(d.delta, -1638.4, 1e-9);
    Schedule after = ev.schedule();
    after.subgraphs.erase(after.subgraphs.begin(), after.subgraphs.begin() + 3);
    after.subgraphs.insert(after.subgraphs.begin(), c.repl.begin(), c.repl.end());
    EXPECT_DOUBLE_EQ(fullTotal(p, after), 8192);
  }
  EXPECT_TRUE(atFirst && atLast) << "the fused subgraph goes to either end of the range";
}

TEST(EngineUnitsFuse, ProposesNothingWithoutANonAdjacentLink) {
  // The chain op0: T0->T1, op1: T1->T2, op2: T2->T3 as [0] [1] [2]: every link (T1, T2) joins
  // adjacent subgraphs (merge's business); [0] and [2] share no op and [2] reads nothing [0]
  // produces. With two subgraphs nothing is non-adjacent.
  Problem p = pointwiseDag("[[0], [1], [2]]", "[[1], [2], [3]]", 4, 3);
  IncrementalEvaluator ev(p, ModelOptions{});
  const Granularity g{128, 128, 1};
  auto mv = makeMove("fuse");
  for (const Schedule& s : {schedule({sg({0}, g), sg({1}, g), sg({2}, g)}), schedule({sg({0, 1}, g), sg({2}, g)})}) {
    ev.reset(s);
    ASSERT_TRUE(ev.valid()) << str(s);
    for (uint64_t seed = 1; seed <= 64; ++seed) {
      Rng rng(seed);
      Change c;
      EXPECT_FALSE(mv->propose(ev, rng, c)) << str(s);
    }
  }
}

TEST(EngineUnitsFuse, FusesAConsumerWithItsNonAdjacentProducer) {
  // op0: T0->T1, op1: T3->T4 (unrelated), op2: T1->T2 as [0] [1] [2]: 3 x 3276.8 = 9830.4. [2]
  // reads T1, which [0] produces: fused, [0,2] moves T0 in and T2 out (T1 stays inside): 3276.8,
  // plus [1]'s 3276.8 = 6553.6.
  Problem p = pointwiseDag("[[0], [3], [1]]", "[[1], [4], [2]]", 5, 3);
  IncrementalEvaluator ev(p, ModelOptions{});
  const Granularity g{128, 128, 1};
  ev.reset(schedule({sg({0}, g), sg({1}, g), sg({2}, g)}));
  ASSERT_DOUBLE_EQ(ev.total(), 9830.4);
  auto mv = makeMove("fuse");
  int proposed = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    Rng rng(seed);
    Change c;
    if (!mv->propose(ev, rng, c)) continue;
    ++proposed;
    ASSERT_EQ(c.repl.size(), 2u);
    const bool first = c.repl[0].ops.size() == 2;
    EXPECT_EQ(c.repl[first ? 0 : 1].ops, (std::vector<OpId>{0, 2}));
    DeltaEval d = ev.evaluate(c);
    ASSERT_TRUE(d.valid);
    EXPECT_DOUBLE_EQ(d.total, 6553.6);
  }
  EXPECT_EQ(proposed, 16);
}

}  // namespace
