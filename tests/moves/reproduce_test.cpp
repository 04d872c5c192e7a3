// The reproduce move (moves/reproduce.cpp) on a small Pointwise DAG (128x128 tensors, cost 100,
// bandwidth 10: a tensor loads or stores in 1638.4, far above any compute here; tests/unit_graphs.h):
// a tensor's producer runs again just before a subgraph that loads it and retains it into it, priced
// by the incremental evaluator and the full evaluator against the figure derived by hand.
//
// The graph, as an encoder layer's LayerNorm before its MLP: op0: T0 -> T1, op1: T1 -> T2 (the
// LayerNorm), op2: T2 -> T3 (the MLP), op3: (T2, T3) -> T4 (the residual add: T2 has a reader past
// op2's subgraph, so the subgraph making T2 must write it).
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

constexpr double kTol = 1e-6;
const Granularity kTile{128, 128, 1};

Problem lnMlp() { return pointwiseDag("[[0],[1],[2],[2,3]]", "[[1],[2],[3],[4]]", 5, 4); }

SubgraphSched tile(std::vector<OpId> ops) { return sg(std::move(ops), kTile); }

// The first proposal (seeds 1, 2, ...) whose schedule runs `ops`; proposing never changes `ev`.
Change proposalWith(IncrementalEvaluator& ev, const std::vector<std::vector<OpId>>& ops) {
  auto mv = makeMove("reproduce");
  EXPECT_TRUE(mv);
  if (!mv) return {};
  EXPECT_STREQ(mv->name(), "reproduce");
  const Schedule before = ev.schedule();
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    Rng rng(seed);
    Change c;
    if (!mv->propose(ev, rng, c)) continue;
    EXPECT_EQ(ev.schedule().subgraphs, before.subgraphs) << "proposing changed the schedule";
    std::vector<std::vector<OpId>> got;
    for (const auto& x : applied(before, c).subgraphs) got.push_back(x.ops);
    if (got == ops) return c;
  }
  ADD_FAILURE() << "reproduce never proposed the wanted schedule";
  return {};
}

// [[0,1],[2],[3]]: SG0 max(200, load T0 + store T2) = 3276.8 (T1 consumed inside, never written);
// SG1 max(100, load T2 + store T3) = 3276.8; SG2 max(100, load T2 + load T3 + store T4) = 4915.2.
constexpr double kStart = 3276.8 + 3276.8 + 4915.2;  // 11468.8

std::unique_ptr<IncrementalEvaluator> startEv(const Problem& p, const Schedule& s) {
  auto ev = std::make_unique<IncrementalEvaluator>(p, ModelOptions{});
  ev->reset(s);
  EXPECT_TRUE(ev->valid());
  EXPECT_NEAR(ev->total(), kStart, kTol);
  return ev;
}

}  // namespace

TEST(Reproduce, RunsAProducerAgainToRetainItsOutputIntoItsReader) {
  // Re-producing T2 for SG1 -> [[0,1] retain {T1}], [[1] retain {T2}], [2], [3]:
  //   SG0: T1 was never written, so still 3276.8 (working set T0 and T2 tiles + T1 whole: 49152);
  //   N = [1]: T1 resident (free, retained in), T2 retained out (not written): max(100, 0) = 100;
  //   SG1: T2 resident: max(100, store T3 1638.4) = 1638.4; SG2 still loads SG0's write: 4915.2.
  // Delta 3276.8 + 100 + 1638.4 + 4915.2 - 11468.8 = -1538.4.
  const Problem p = lnMlp();
  const Schedule s{{tile({0, 1}), tile({2}), tile({3})}, {}};
  auto ev = startEv(p, s);
  const Change c = proposalWith(*ev, {{0, 1}, {1}, {2}, {3}});
  ASSERT_EQ(c.repl.size(), 3u);
  EXPECT_EQ(c.repl[0].retain, std::vector<TensorId>{1});
  EXPECT_EQ(c.repl[1].retain, std::vector<TensorId>{2});
  const Schedule after = applied(s, c);
  const Evaluation fa = evaluateSchedule(p, after, ModelOptions{});
  ASSERT_TRUE(fa.valid) << fa.reason;
  EXPECT_NEAR(fa.total - kStart, -1538.4, kTol) << "full evaluator";
  const DeltaEval d = ev->evaluate(c);
  ASSERT_TRUE(d.valid) << d.rule;
  EXPECT_NEAR(d.delta, -1538.4, kTol) << "incremental evaluator";
  ev->apply(c, d);
  EXPECT_EQ(ev->schedule().subgraphs, after.subgraphs);
  EXPECT_TRUE(ev->checkAgainstFull());
}

TEST(Reproduce, AProducerWhoseInputIsEphemeralElsewhereIsRejected) {
  // Re-producing T2 for SG2 puts [1] after SG1 = [2], which does not make T1, and T1 is consumed
  // inside SG0 (never written): V5, in both evaluators.
  const Problem p = lnMlp();
  const Schedule s{{tile({0, 1}), tile({2}), tile({3})}, {}};
  auto ev = startEv(p, s);
  const Change c = proposalWith(*ev, {{0, 1}, {2}, {1}, {3}});
  const Evaluation fa = evaluateSchedule(p, applied(s, c), ModelOptions{});
  EXPECT_FALSE(fa.valid);
  EXPECT_EQ(fa.rule, Rule::V5) << fa.reason;
  const DeltaEval d = ev->evaluate(c);
  EXPECT_FALSE(d.valid);
  EXPECT_EQ(d.rule, Rule::V5);
}

TEST(Reproduce, NothingToReproduceWhereEverySubgraphReadsOnlyGraphInputs) {
  // [[0,1,2,3]] reads only T0: no boundary input has a producer.
  const Problem p = lnMlp();
  IncrementalEvaluator ev(p, ModelOptions{});
  ev.reset(Schedule{{tile({0, 1, 2, 3})}, {}});
  ASSERT_TRUE(ev.valid());
  auto mv = makeMove("reproduce");
  ASSERT_TRUE(mv);
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed);
    Change c;
    EXPECT_FALSE(mv->propose(ev, rng, c)) << "seed " << seed;
  }
}
