// Per-move tests (as PyVRP tests each operator): for every move kind of moves/ a graph of 2-4
// ops, a starting schedule, the move proposed through its registry entry (Move::propose, drawn
// with seeds until it proposes the change named below), priced by IncrementalEvaluator::evaluate
// and committed by apply(), exactly as the annealer does. Each latency delta is computed by hand
// from the spec's formulas (/work/shared/spec/cost-model.md) in the comment above it, and the
// incremental delta must equal both that number and the full evaluator's delta. Where a move can
// propose an invalid schedule, one such proposal is shown rejected by evaluate() and by the full
// evaluator, with the same rule.
//
// Arithmetic shared by every test: bandwidth B = 10, native N = 128; a 128x128 tensor is 16384
// elements = 1638.4 time units to load or store, a 128x64 (or 64x128) slice 819.2, 64x64 409.6.
// A step costs max(compute, load + store) (L1); a subgraph the sum of its steps (L2); a
// Pointwise op its full base_cost once per tile (L5).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cost/pricing/evaluator.h"
#include "cost/pricing/incremental.h"
#include "moves/move.h"
#include "tests/test_util.h"
#include "tests/unit_graphs.h"

using namespace mlsys;

namespace {

constexpr double kTol = 1e-6;
constexpr uint64_t kSeeds = 20000;

// A problem whose tensors are all 128x128 (the shapes every test below uses).
Problem square(int tensors, const std::string& inputs, const std::string& outputs, const std::string& costs,
               const std::string& types, long capacity) {
  std::ostringstream dims, j;
  for (int i = 0; i < tensors; ++i) dims << (i ? ",128" : "128");
  j << R"({"widths":[)" << dims.str() << R"(],"heights":[)" << dims.str() << R"(],"inputs":)" << inputs
    << R"(,"outputs":)" << outputs << R"(,"base_costs":)" << costs << R"(,"op_types":)" << types
    << R"(,"fast_memory_capacity":)" << capacity << R"(,"slow_memory_bandwidth":10,"native_granularity":[128,128]})";
  return test::problemFromJson(j.str());
}

// "[a,b,...]"
std::string list(std::initializer_list<long> v) {
  std::ostringstream o;
  o << '[';
  for (long x : v) o << (o.tellp() > 1 ? "," : "") << x;
  o << ']';
  return o.str();
}

SubgraphSched sg(std::vector<OpId> ops, Granularity g, std::vector<TensorId> retain = {}) {
  SubgraphSched s;
  s.ops = std::move(ops);
  s.gran = g;
  s.retain = std::move(retain);
  return s;
}

Schedule sched(std::vector<SubgraphSched> sgs) {
  Schedule s;
  s.subgraphs = std::move(sgs);
  return s;
}

const Granularity kPw{128, 128, 1};  // one 128x128 tile; k ignored (Pointwise only)

using units::applied;  // the schedule a change turns a schedule into

std::vector<std::vector<OpId>> opsOf(const Schedule& s) {
  std::vector<std::vector<OpId>> v;
  for (const auto& x : s.subgraphs) v.push_back(x.ops);
  return v;
}

Evaluation full(const Problem& p, const Schedule& s) { return evaluateSchedule(p, s, ModelOptions{}); }

// An evaluator holding `s`, whose latency must be `hand` (computed in the test's comment).
std::unique_ptr<IncrementalEvaluator> start(const Problem& p, const Schedule& s, double hand) {
  auto ev = std::make_unique<IncrementalEvaluator>(p, ModelOptions{});
  ev->reset(s);
  EXPECT_TRUE(ev->valid());
  EXPECT_NEAR(ev->total(), hand, kTol);
  const Evaluation f = full(p, s);
  EXPECT_TRUE(f.valid) << f.reason;
  EXPECT_NEAR(f.total, hand, kTol);
  return ev;
}

// The move `name` from the registry proposes, with seeds 1, 2, ..., until a proposal satisfies
// `want` (given the changed schedule). Proposing never changes the evaluator.
Change proposeWhere(const std::string& name, IncrementalEvaluator& ev,
                    const std::function<bool(const Change&, const Schedule&)>& want) {
  auto mv = makeMove(name);
  EXPECT_TRUE(mv) << name;
  if (!mv) return {};
  const Schedule before = ev.schedule();
  const double total = ev.total();
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    Rng rng(seed);
    Change c;
    if (!mv->propose(ev, rng, c)) continue;
    EXPECT_EQ(ev.schedule().subgraphs, before.subgraphs) << name << " mutated the schedule";
    EXPECT_EQ(ev.total(), total);
    if (want(c, applied(before, c))) return c;
  }
  ADD_FAILURE() << name << " never proposed the wanted change in " << kSeeds << " seeds";
  return {};
}

Change proposeOps(const std::string& name, IncrementalEvaluator& ev, const std::vector<std::vector<OpId>>& ops) {
  return proposeWhere(name, ev, [&](const Change&, const Schedule& a) { return opsOf(a) == ops; });
}

// evaluate() prices `c` at `hand`, the full evaluator's delta is the same, and apply() commits it.
void expectDelta(const Problem& p, IncrementalEvaluator& ev, const Change& c, double hand) {
  ASSERT_GT(c.count + static_cast<int>(c.repl.size()), 0) << "no change proposed";
  const Schedule before = ev.schedule();
  const Schedule after = applied(before, c);
  const Evaluation fb = full(p, before), fa = full(p, after);
  ASSERT_TRUE(fa.valid) << fa.reason;
  const DeltaEval d = ev.evaluate(c);
  ASSERT_TRUE(d.valid) << d.rule;
  EXPECT_NEAR(d.delta, hand, kTol) << "incremental delta vs hand";
  EXPECT_NEAR(fa.total - fb.total, hand, kTol) << "full evaluator delta vs hand";
  EXPECT_NEAR(d.delta, fa.total - fb.total, kTol) << "incremental vs full";
  EXPECT_NEAR(d.total, fa.total, kTol);
  ev.apply(c, d);
  EXPECT_NEAR(ev.total(), fa.total, kTol);
  EXPECT_EQ(ev.schedule().subgraphs, after.subgraphs);
  EXPECT_TRUE(ev.checkAgainstFull());
}

// evaluate() rejects `c` for `rule`, as the full evaluator does; nothing is applied.
void expectRejected(const Problem& p, IncrementalEvaluator& ev, const Change& c, Rule rule) {
  ASSERT_GT(c.count + static_cast<int>(c.repl.size()), 0) << "no change proposed";
  const Evaluation fa = full(p, applied(ev.schedule(), c));
  EXPECT_FALSE(fa.valid);
  EXPECT_EQ(fa.rule, rule) << fa.reason;
  const DeltaEval d = ev.evaluate(c);
  EXPECT_FALSE(d.valid);
  EXPECT_EQ(d.rule, rule);
}

// No seed makes `name` propose anything on the evaluator's schedule.
void expectNoProposal(const std::string& name, IncrementalEvaluator& ev) {
  auto mv = makeMove(name);
  ASSERT_TRUE(mv);
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed);
    Change c;
    EXPECT_FALSE(mv->propose(ev, rng, c)) << name << " proposed with seed " << seed;
  }
}

// The graphs (tensors 128x128; "op: inputs -> output, base cost").
//
// chain2:  op0: T0 -> T1 (PW), op1: T1 -> T2 (PW)
// chain3:  op0: T0 -> T1, op1: T1 -> T2, op2: T2 -> T3 (PW)
// fanout:  op0: T0 -> T1, op1: T1 -> T2, op2: T1 -> T3 (PW; T1 read by two ops)
Problem chain2(long c0, long c1, long capacity = 50000) {
  return square(3, "[[0],[1]]", "[[1],[2]]", list({c0, c1}), R"(["Pointwise","Pointwise"])", capacity);
}
Problem chain3(long c0, long c1, long c2) {
  return square(4, "[[0],[1],[2]]", "[[1],[2],[3]]", list({c0, c1, c2}), R"(["Pointwise","Pointwise","Pointwise"])",
                50000);
}
Problem fanout(long c0, long c1, long c2) {
  return square(4, "[[0],[1],[1]]", "[[1],[2],[3]]", list({c0, c1, c2}), R"(["Pointwise","Pointwise","Pointwise"])",
                50000);
}

}  // namespace

// ---- merge -------------------------------------------------------------------------------------

TEST(MoveDelta, MergeFusesAdjacentSubgraphs) {
  // chain2, costs 1000 / 100.
  // Before [[0],[1]] at [128,128,1]:
  //   SG0: max(1000, load T0 1638.4 + store T1 1638.4) = 3276.8
  //   SG1: max(100,  load T1 1638.4 + store T2 1638.4) = 3276.8      total 6553.6
  // After [[0,1]]: T1 ephemeral; max(1000 + 100, load T0 1638.4 + store T2 1638.4) = 3276.8
  // Delta 3276.8 - 6553.6 = -3276.8.
  const Problem p = chain2(1000, 100);
  auto ev = start(p, sched({sg({0}, kPw), sg({1}, kPw)}), 6553.6);
  expectDelta(p, *ev, proposeOps("merge", *ev, {{0, 1}}), -3276.8);
}

TEST(MoveDelta, MergeThatHidesATensorALaterSubgraphReadsIsRejected) {
  // fanout: merging [0] and [1] makes T1 ephemeral (consumed inside), but op2 in the next
  // subgraph reads T1 from slow memory: V5. (Merging [1] and [2] is never proposed: no link.)
  const Problem p = fanout(100, 100, 100);
  auto ev = start(p, sched({sg({0}, kPw), sg({1}, kPw), sg({2}, kPw)}), 3 * 3276.8);
  expectRejected(p, *ev, proposeOps("merge", *ev, {{0, 1}, {2}}), Rule::V5);
}

// ---- fuse --------------------------------------------------------------------------------------

TEST(MoveDelta, FuseJoinsNonAdjacentLinkedSubgraphs) {
  // op0: T0 -> T1 (2000), op1: T2 -> T3 (100, independent), op2: T1 -> T4 (1500).
  // Before [[0],[1],[2]]: each subgraph loads one 128x128 tensor and stores one:
  //   SG0 max(2000, 3276.8) = 3276.8, SG1 max(100, 3276.8) = 3276.8, SG2 max(1500, 3276.8) = 3276.8
  //   total 9830.4
  // After: [0,2] fused (at s's place or at t's, the same price): T1 ephemeral,
  //   max(2000 + 1500, load T0 1638.4 + store T4 1638.4) = 3500; SG [1] 3276.8; total 6776.8
  // Delta 6776.8 - 9830.4 = -3053.6 (both orientations are checked).
  const Problem p =
      square(5, "[[0],[2],[1]]", "[[1],[3],[4]]", "[2000,100,1500]", R"(["Pointwise","Pointwise","Pointwise"])", 50000);
  const Schedule s = sched({sg({0}, kPw), sg({1}, kPw), sg({2}, kPw)});
  for (const auto& want : std::vector<std::vector<std::vector<OpId>>>{{{0, 2}, {1}}, {{1}, {0, 2}}}) {
    auto ev = start(p, s, 9830.4);
    expectDelta(p, *ev, proposeOps("fuse", *ev, want), -3053.6);
  }
}

TEST(MoveDelta, FuseThatStarvesTheMiddleSubgraphIsRejected) {
  // fanout with the reader of T1 in the middle: [[0],[1],[2]]; fusing [0] with [2] makes T1
  // ephemeral ([0,2] first: op1 cannot read it) or runs op1 before op0 ([0,2] last): V5 either way.
  const Problem p = fanout(100, 100, 100);
  const Schedule s = sched({sg({0}, kPw), sg({1}, kPw), sg({2}, kPw)});
  for (const auto& want : std::vector<std::vector<std::vector<OpId>>>{{{0, 2}, {1}}, {{1}, {0, 2}}}) {
    auto ev = start(p, s, 3 * 3276.8);
    expectRejected(p, *ev, proposeOps("fuse", *ev, want), Rule::V5);
  }
}

// ---- split -------------------------------------------------------------------------------------

TEST(MoveDelta, SplitCutsASubgraphInTwo) {
  // chain2, costs 1500 / 2500.
  // Before [[0,1]]: max(1500 + 2500, load T0 1638.4 + store T2 1638.4) = 4000.
  // After [[0],[1]]: max(1500, 3276.8) + max(2500, 3276.8) = 6553.6.
  // Delta 6553.6 - 4000 = +2553.6.
  const Problem p = chain2(1500, 2500);
  auto ev = start(p, sched({sg({0, 1}, kPw)}), 4000);
  expectDelta(p, *ev, proposeOps("split", *ev, {{0}, {1}}), 2553.6);
}

TEST(MoveDelta, SplitThatHidesATensorTheSecondPartReadsIsRejected) {
  // fanout in one subgraph [0,1,2]; the cut after op1 gives [[0,1],[2]]: T1 is ephemeral in the
  // first part, and op2 reads it in the second: V5. A one-op subgraph is never split.
  const Problem p = fanout(100, 100, 100);
  // [0,1,2]: max(300, load T0 1638.4 + store T2 1638.4 + store T3 1638.4) = 4915.2.
  auto ev = start(p, sched({sg({0, 1, 2}, kPw)}), 4915.2);
  expectRejected(p, *ev, proposeOps("split", *ev, {{0, 1}, {2}}), Rule::V5);
  auto one = start(p, sched({sg({0}, kPw), sg({1}, kPw), sg({2}, kPw)}), 3 * 3276.8);
  expectNoProposal("split", *one);
}

// ---- move-op -----------------------------------------------------------------------------------

TEST(MoveDelta, MoveOpShiftsABoundaryOpToTheNextSubgraph) {
  // chain3, costs 3000 / 2000 / 500.
  // Before [[0,1],[2]]:
  //   SG0: T1 ephemeral; max(3000 + 2000, load T0 1638.4 + store T2 1638.4) = 5000
  //   SG1: max(500, load T2 1638.4 + store T3 1638.4) = 3276.8                total 8276.8
  // After [[0],[1,2]] (the only proposal: [2] has one op to give):
  //   SG0: max(3000, load T0 + store T1 = 3276.8) = 3276.8
  //   SG1: T2 ephemeral; max(2000 + 500, load T1 + store T3 = 3276.8) = 3276.8  total 6553.6
  // Delta 6553.6 - 8276.8 = -1723.2.
  const Problem p = chain3(3000, 2000, 500);
  auto ev = start(p, sched({sg({0, 1}, kPw), sg({2}, kPw)}), 8276.8);
  expectDelta(p, *ev, proposeOps("move-op", *ev, {{0}, {1, 2}}), -1723.2);
}

TEST(MoveDelta, MoveOpThatHidesATensorIsRejected) {
  // op0: T0 -> T1, op1: T1 -> T2, op2: T1 + T2 -> T3. [[0],[1,2]] is valid (SG0 writes T1);
  // moving op1 back gives [[0,1],[2]]: T1 becomes ephemeral in SG0 and op2 cannot read it: V5.
  const Problem p =
      square(4, "[[0],[1],[1,2]]", "[[1],[2],[3]]", "[100,100,100]", R"(["Pointwise","Pointwise","Pointwise"])", 50000);
  // [[0],[1,2]]: 3276.8 + max(200, load T1 1638.4 + store T3 1638.4) = 6553.6.
  auto ev = start(p, sched({sg({0}, kPw), sg({1, 2}, kPw)}), 6553.6);
  expectRejected(p, *ev, proposeOps("move-op", *ev, {{0, 1}, {2}}), Rule::V5);
}

// ---- recompute / uncompute ---------------------------------------------------------------------

TEST(MoveDelta, RecomputeDuplicatesAProducerIntoAConsumer) {
  // fanout, costs 3000 / 400 / 1000, from [[0],[1],[2]] (each 3276.8: one load, one store,
  // compute at most 3000; total 9830.4). Two proposals (SG0 reads only a graph input):
  //   into SG1 -> [[0],[0,1],[2]]: SG1 = max(3000 + 400, load T0 + store T2 = 3276.8) = 3400
  //     delta 3400 - 3276.8 = +123.2
  //   into SG2 -> [[0],[1],[0,2]]: SG2 = max(3000 + 1000, 3276.8) = 4000
  //     delta 4000 - 3276.8 = +723.2
  // (op2 still reads T1 from SG0's write; in [0,1] T1 is ephemeral and not written again.)
  const Problem p = fanout(3000, 400, 1000);
  const Schedule s = sched({sg({0}, kPw), sg({1}, kPw), sg({2}, kPw)});
  auto a = start(p, s, 9830.4);
  expectDelta(p, *a, proposeOps("recompute", *a, {{0}, {0, 1}, {2}}), 123.2);
  auto b = start(p, s, 9830.4);
  expectDelta(p, *b, proposeOps("recompute", *b, {{0}, {1}, {0, 2}}), 723.2);
}

TEST(MoveDelta, RecomputeOfAProducerWhoseInputIsEphemeralIsRejected) {
  // chain3 as [[0,1],[2]]: SG1's boundary input T2 is op1's; recomputing op1 there needs T1,
  // which is ephemeral in SG0 (consumed by op1 inside it): V5. SG0 reads only a graph input.
  const Problem p = chain3(100, 100, 100);
  auto ev = start(p, sched({sg({0, 1}, kPw), sg({2}, kPw)}), 2 * 3276.8);
  expectRejected(p, *ev, proposeOps("recompute", *ev, {{0, 1}, {1, 2}}), Rule::V5);
}

TEST(MoveDelta, UncomputeRemovesADuplicatedOp) {
  // fanout, costs 3000 / 400 / 1000, from [[0],[1],[0,2]]:
  //   3276.8 + 3276.8 + max(3000 + 1000, 3276.8) = 10553.6.
  // Removing op0 from SG2 -> [[0],[1],[2]]: SG2 = max(1000, load T1 + store T3) = 3276.8
  //   delta 3276.8 - 4000 = -723.2.
  const Problem p = fanout(3000, 400, 1000);
  auto ev = start(p, sched({sg({0}, kPw), sg({1}, kPw), sg({0, 2}, kPw)}), 10553.6);
  expectDelta(p, *ev, proposeOps("uncompute", *ev, {{0}, {1}, {2}}), -723.2);
}

TEST(MoveDelta, UncomputeThatEmptiesTheOnlyWriterIsRejected) {
  // The same start; removing op0 from SG0 empties it (it disappears): [[1],[0,2]] leaves op1
  // without T1 (never written: ephemeral in [0,2], which also runs later): V5.
  const Problem p = fanout(3000, 400, 1000);
  auto ev = start(p, sched({sg({0}, kPw), sg({1}, kPw), sg({0, 2}, kPw)}), 10553.6);
  expectRejected(p, *ev, proposeOps("uncompute", *ev, {{1}, {0, 2}}), Rule::V5);
}

// ---- granularity -------------------------------------------------------------------------------

// One MatMul: T0 (LHS 128x128) x T1 (RHS 128x128) -> T2, base cost 5000, K = 128, capacity 40000.
Problem oneMatMul() { return square(3, "[[0,1]]", "[[2]]", "[5000]", R"(["MatMul"])", 40000); }

// The granularity move's proposal that gives the one subgraph granularity `want`.
Change proposeGranularity(IncrementalEvaluator& ev, const Granularity& want) {
  return proposeWhere("granularity", ev,
                      [&](const Change& c, const Schedule&) { return c.repl.size() == 1 && c.repl[0].gran == want; });
}

TEST(MoveDelta, GranularityChangesATileSide) {
  // Before [128,128,64]: one tile, nk = 128/64 = 2 k-steps, compute 5000 * 64/128 = 2500 each.
  //   j0: LHS 128x64 819.2 + RHS 64x128 819.2 = 1638.4            -> max(2500, 1638.4) = 2500
  //   j1: LHS 819.2 + RHS 819.2 + store T2 1638.4 = 3276.8        -> 3276.8
  //   total 5776.8 (working set 8192 + 8192 + 16384 = 32768 <= 40000)
  // After [64,128,64]: 2 tiles (columns) x 2 k-steps, compute 2500 per step (no discount for w < N).
  //   (c0,j0): LHS 128x64 819.2 + RHS 64x64 409.6 = 1228.8                    -> 2500
  //   (c0,j1): LHS 819.2 + RHS 409.6 + store 128x64 819.2 = 2048              -> 2500
  //   (c1,j0): LHS k-strip 0 again, not the previous step's slice: 1228.8      -> 2500
  //   (c1,j1): 2048                                                           -> 2500
  //   total 10000
  // Delta 10000 - 5776.8 = +4223.2.
  const Problem p = oneMatMul();
  auto ev = start(p, sched({sg({0}, {128, 128, 64})}), 5776.8);
  expectDelta(p, *ev, proposeGranularity(*ev, {64, 128, 64}), 4223.2);
}

TEST(MoveDelta, GranularityOverTheCapacityIsRejected) {
  // k = 128 at 128x128: working set LHS 16384 + RHS 16384 + T2 tile 16384 = 49152 > 40000: V11.
  const Problem p = oneMatMul();
  auto ev = start(p, sched({sg({0}, {128, 128, 64})}), 5776.8);
  expectRejected(p, *ev, proposeGranularity(*ev, {128, 128, 128}), Rule::V11);
}

// ---- traversal ---------------------------------------------------------------------------------

TEST(MoveDelta, TraversalRowSnakeReusesTheSharedOperand) {
  // Spec Example 4: one MatMul 128x128 x 128x128, base cost 1500, capacity 25000, at [64,64,128]:
  // 2x2 tiles, nk = 1, compute 1500 per tile, store 64x64 = 409.6 per tile.
  // Before, raster 0,1,2,3 (4A):
  //   t0: LHS r0 + RHS c0 = 819.2 + 819.2 + 409.6 = 2048;  t1: LHS r0 reused, RHS c1: 1228.8 -> 1500
  //   t2: LHS r1 + RHS c0: 2048;                          t3: LHS r1 reused: 1500   total 7096
  // After, row-snake 0,1,3,2 (4B): t0 2048; t1 1500; t3: RHS c1 reused, LHS r1 819.2 + 409.6
  //   -> 1500; t2: LHS r1 reused, RHS c0 -> 1500                                   total 6548
  // Delta 6548 - 7096 = -548.
  const Problem p = square(3, "[[0,1]]", "[[2]]", "[1500]", R"(["MatMul"])", 25000);
  auto ev = start(p, sched({sg({0}, {64, 64, 128})}), 7096);
  expectDelta(p, *ev,
              proposeWhere("traversal", *ev,
                           [](const Change& c, const Schedule&) {
                             return c.repl.size() == 1 && c.repl[0].trav.kind == TraversalKind::RowSnake;
                           }),
              -548);
}

TEST(MoveDelta, TraversalOfASingleTileIsNeverProposed) {
  const Problem p = chain2(1000, 100);
  auto ev = start(p, sched({sg({0, 1}, kPw)}), 3276.8);
  expectNoProposal("traversal", *ev);
}

// ---- retain ------------------------------------------------------------------------------------

TEST(MoveDelta, RetainKeepsATensorForTheNextSubgraph) {
  // chain2, costs 2000 / 100, [[0],[1]] at [128,128,1] (6553.6 as in the merge test, since
  // max(2000, 3276.8) = 3276.8). Retaining T1 (the only candidate):
  //   SG0: max(2000, load T0 1638.4 + no store) = 2000
  //   SG1: T1 resident, free: max(100, store T2 1638.4) = 1638.4          total 3638.4
  //   (working sets 16384 + 16384 = 32768 <= 50000)
  // Delta 3638.4 - 6553.6 = -2915.2.
  const Problem p = chain2(2000, 100);
  auto ev = start(p, sched({sg({0}, kPw), sg({1}, kPw)}), 6553.6);
  expectDelta(p, *ev,
              proposeWhere("retain", *ev,
                           [](const Change& c, const Schedule&) {
                             return c.first == 0 && c.repl.size() == 1 && c.repl[0].retain == std::vector<TensorId>{1};
                           }),
              -2915.2);
}

TEST(MoveDelta, RetainOverTheCapacityIsRejected) {
  // chain2 with capacity 20000 at [64,128,1] (two 64-wide tiles): without retention SG0 holds a
  // T0 slice 8192 + a T1 tile 8192 = 16384; retaining T1 holds all of it: 8192 + 16384 = 24576 >
  // 20000: V11.
  const Problem p = chain2(2000, 100, 20000);
  // Each subgraph: 2 tiles x max(cost, 819.2 + 819.2): SG0 2 x 2000, SG1 2 x 1638.4 = 7276.8.
  auto ev = start(p, sched({sg({0}, {64, 128, 1}), sg({1}, {64, 128, 1})}), 7276.8);
  expectRejected(p, *ev,
                 proposeWhere("retain", *ev,
                              [](const Change& c, const Schedule&) {
                                return c.repl.size() == 1 && c.repl[0].retain == std::vector<TensorId>{1};
                              }),
                 Rule::V11);
}

// A chain T0 -> op0 -> T1 -> op1 -> T2 -> op2 -> T3 at [64,64,1] (4 tiles; a 64x64 slice moves in
// 409.6), capacity 30000: no subgraph holds T1 and T2 whole together (32768, V11), so keeping one
// where the other is kept drops the other in the same change (s-1 or s+1 then writes it).
static Problem chain3(const std::string& costs) {
  return square(4, "[[0],[1],[2]]", "[[1],[2],[3]]", costs, R"(["Pointwise","Pointwise","Pointwise"])", 30000);
}

TEST(MoveDelta, RetainTradesTheTensorKeptIntoItsSubgraph) {
  // Costs 1000/100/100. [[0] keeping T1], [[1]], [[2]]: SG0 4 x max(1000, load T0 409.6) = 4000
  // (4096 + 16384 <= 30000); SG1 4 x max(100, store T2 409.6) = 1638.4; SG2 4 x max(100, 819.2) =
  // 3276.8; total 8915.2. Keeping T2 out of SG1 drops T1: SG0 4 x max(1000, 819.2) = 4000, SG1
  // 4 x max(100, load T1 409.6) = 1638.4, SG2 4 x max(100, store T3 409.6) = 1638.4: 7276.8, -1638.4.
  const Problem p = chain3("[1000,100,100]");
  const Granularity g{64, 64, 1};
  auto ev = start(p, sched({sg({0}, g, {1}), sg({1}, g), sg({2}, g)}), 8915.2);
  expectDelta(p, *ev,
              proposeWhere("retain", *ev,
                           [](const Change& c, const Schedule&) {
                             return c.first == 0 && c.count == 2 && c.repl.size() == 2 && c.repl[0].retain.empty() &&
                                    c.repl[1].retain == std::vector<TensorId>{2};
                           }),
              -1638.4);
}

TEST(MoveDelta, RetainTradesTheTensorTheNextSubgraphKeepsOut) {
  // Costs 100/100/1000. [[0]], [[1] keeping T2], [[2]]: SG0 4 x max(100, 819.2) = 3276.8; SG1 1638.4
  // (loads T1); SG2 4 x max(1000, 409.6) = 4000; total 8915.2. Keeping T1 out of SG0 drops T2: SG0
  // 1638.4, SG1 1638.4 (stores T2), SG2 4 x max(1000, 819.2) = 4000: 7276.8, -1638.4.
  const Problem p = chain3("[100,100,1000]");
  const Granularity g{64, 64, 1};
  auto ev = start(p, sched({sg({0}, g), sg({1}, g, {2}), sg({2}, g)}), 8915.2);
  expectDelta(p, *ev,
              proposeWhere("retain", *ev,
                           [](const Change& c, const Schedule&) {
                             return c.first == 0 && c.count == 2 && c.repl.size() == 2 &&
                                    c.repl[0].retain == std::vector<TensorId>{1} && c.repl[1].retain.empty();
                           }),
              -1638.4);
}

// ---- reorder -----------------------------------------------------------------------------------

// op0: T0 -> T1 (2500), op1: T1 -> T2 (100), op2: T3 -> T4 (100, independent), scheduled
// [[2],[0 retaining T1],[1]].
Problem reorderGraph() {
  return square(5, "[[0],[1],[3]]", "[[1],[2],[4]]", "[2500,100,100]", R"(["Pointwise","Pointwise","Pointwise"])",
                50000);
}

TEST(MoveDelta, ReorderSwapsSubgraphsAndDropsTheirRetention) {
  // Before: SG0 [2]: max(100, 3276.8) = 3276.8; SG1 [0] retains T1: max(2500, load T0 1638.4) =
  //   2500; SG2 [1]: T1 resident: max(100, store T2 1638.4) = 1638.4.           total 7415.2
  // Swapping SG0 and SG1 -> [[0],[2],[1]] drops the retention (it linked neighbours), so T1 is
  // written and read back: 3 x max(cost, 3276.8) = 9830.4.
  // Delta 9830.4 - 7415.2 = +2415.2.
  const Problem p = reorderGraph();
  auto ev = start(p, sched({sg({2}, kPw), sg({0}, kPw, {1}), sg({1}, kPw)}), 7415.2);
  expectDelta(p, *ev, proposeOps("reorder", *ev, {{0}, {2}, {1}}), 2415.2);
}

TEST(MoveDelta, ReorderBeforeTheProducerIsRejected) {
  // Swapping SG1 and SG2 -> [[2],[1],[0]]: op1 runs before op0 produces T1: V5.
  const Problem p = reorderGraph();
  auto ev = start(p, sched({sg({2}, kPw), sg({0}, kPw, {1}), sg({1}, kPw)}), 7415.2);
  expectRejected(p, *ev, proposeOps("reorder", *ev, {{2}, {1}, {0}}), Rule::V5);
}

// Every registered move kind has a test above (fuse-far and reproduce: tests/moves/<name>_test.cpp).
TEST(MoveDelta, EveryRegisteredMoveIsCovered) {
  const std::vector<std::string> covered = {"fuse",    "fuse-far",  "granularity", "merge", "move-op",   "recompute",
                                            "reorder", "reproduce", "retain",      "split", "traversal", "uncompute"};
  std::vector<std::string> names = moveNames();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, covered);
}
