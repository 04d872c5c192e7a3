// The exact solver (engine/exact/exact.h): the spec's worked examples, hand-checked tiny graphs, the
// search's pruning against an unpruned run (verify mode: every configuration of every
// transition priced, plain Dijkstra, every bound checked), and generated graphs against
// `mlsys solve`. Every returned schedule is re-checked by the full evaluator at the same latency.
#include "engine/exact/exact.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"
#include "engine/generate/generator.h"
#include "tests/exact/tiny_problems.h"
#include "tests/test_util.h"

using namespace mlsys;
using mlsys::test::neverStop;

namespace {

// Solves and checks what every result must satisfy: a schedule the full evaluator accepts, at
// exactly the reported latency; no bound ever above an exact price.
ExactResult solveChecked(const Problem& p, const ExactOptions& opt = {}, const ModelOptions& m = {}) {
  ExactResult r = solveExact(p, m, opt, neverStop());
  EXPECT_TRUE(r.found) << p.name << ": " << exactStatusName(r.status) << " " << r.message;
  if (!r.found) return r;
  Evaluation ev = evaluateSchedule(p, r.schedule, m);
  EXPECT_TRUE(ev.valid) << p.name << ": " << ev.reason;
  EXPECT_EQ(ev.total, r.latency) << p.name;
  EXPECT_EQ(r.stats.lb_violations, 0) << p.name;
  EXPECT_LE(r.lower_bound, r.latency) << p.name;
  if (r.proven_optimal) {
    EXPECT_EQ(r.lower_bound, r.latency) << p.name;
    EXPECT_EQ(r.status, ExactStatus::Optimal);
  }
  return r;
}

// The unpruned search (verify mode: every configuration priced, Dijkstra) over the space of `o`
// proves the same optimum as `r`.
void expectUnprunedAgrees(const Problem& p, const ExactResult& r, ExactOptions o = {}, const ModelOptions& m = {}) {
  o.verify = true;
  o.greedy_incumbent = false;
  ExactResult rv = solveChecked(p, o, m);
  ASSERT_TRUE(rv.proven_optimal) << "unpruned search did not finish";
  EXPECT_EQ(rv.latency, r.latency);
}

Problem example(int i) { return parseProblemFile(test::instancePath("examples/ex" + std::to_string(i) + ".json")); }

bool recomputes(const Schedule& s) {
  std::vector<OpId> all;
  for (const auto& sg : s.subgraphs) all.insert(all.end(), sg.ops.begin(), sg.ops.end());
  std::sort(all.begin(), all.end());
  return std::adjacent_find(all.begin(), all.end()) != all.end();
}

bool retains(const Schedule& s) {
  for (const auto& sg : s.subgraphs)
    if (!sg.retain.empty()) return true;
  return false;
}

}  // namespace

// --- The spec's worked examples (section 9) -------------------------------------------------

// Ex 1: any schedule loads T0 and stores T2 (1638.4 each): 3276.8 is a lower bound, and 1B
// reaches it, so the optimum is exactly 3276.8.
TEST(Exact, Example1IsTheTrafficBound) {
  ExactResult r = solveChecked(example(1));
  EXPECT_TRUE(r.proven_optimal);
  EXPECT_EQ(r.latency, 3276.8);
}

// Ex 2: loading the 256x256 input and storing the output costs 2 x 6553.6: 2B (13107.2) is optimal.
TEST(Exact, Example2IsTheTrafficBound) {
  ExactResult r = solveChecked(example(2));
  EXPECT_TRUE(r.proven_optimal);
  EXPECT_EQ(r.latency, 13107.2);
}

// Ex 3: 3C (4638.4) is not optimal: the three ops fused in one subgraph (T1, T2 ephemeral) cost
// max(3 x 1500, 1638.4 + 1638.4) = 4500, and 4500 is the compute bound (every op costs its 1500
// on at least one tile), so the optimum is exactly 4500.
TEST(Exact, Example3BeatsThreeC) {
  ExactResult r = solveChecked(example(3));
  EXPECT_TRUE(r.proven_optimal);
  EXPECT_LE(r.latency, 4638.4);
  EXPECT_EQ(r.latency, 4500);
  ASSERT_EQ(r.schedule.subgraphs.size(), 1u);
}

// Ex 4: one 128^3 MatMul under capacity 25000. Loading both operands and storing the result is
// 3 x 1638.4 = 4915.2 at least; one 128x128 tile split into k-steps of 19 (WS 2 x 128 x 19 +
// 128^2 = 21248) reaches it, so the optimum is 4915.2 (the spec's 4B costs 6548).
TEST(Exact, Example4IsTheTrafficBound) {
  ExactResult r = solveChecked(example(4));
  EXPECT_TRUE(r.proven_optimal);
  EXPECT_LE(r.latency, 6548);
  EXPECT_EQ(r.latency, 4915.2);
}

// Ex 5: at most 5B's 6915.2; the optimum over the space (6734.4: op 0 alone retaining T3, then
// op 1) is confirmed by the unpruned search.
TEST(Exact, Example5AtMostFiveB) {
  Problem p = example(5);
  ExactResult r = solveChecked(p);
  EXPECT_TRUE(r.proven_optimal);
  EXPECT_LE(r.latency, 6915.2);
  expectUnprunedAgrees(p, r);
}

// --- Hand-checked tiny graphs -----------------------------------------------------------------

// One Pointwise op: one subgraph, max(base_cost, load + store) on each tile; at 128x128 the
// native tile, 1 tile: max(100, 1638.4 + 1638.4).
TEST(Exact, SinglePointwise) {
  Problem p = test::problemFromJson(R"({"widths":[128,128],"heights":[128,128],"inputs":[[0]],"outputs":[[1]],
    "base_costs":[100],"op_types":["Pointwise"],"fast_memory_capacity":50000,"slow_memory_bandwidth":10,
    "native_granularity":[128,128]})");
  ExactResult r = solveChecked(p);
  EXPECT_TRUE(r.proven_optimal);
  EXPECT_EQ(r.latency, 3276.8);
  ASSERT_EQ(r.schedule.subgraphs.size(), 1u);
}

// T1 = pw(T0) feeds a MatMul T3 = T1 @ T2 (128x256) and a Pointwise T4 = pw(T1). T3 and T4 have
// different shapes, so they cannot share a subgraph (A-6). Every schedule loads T0 and T2 and
// stores T3 and T4: (16384 + 32768 + 32768 + 16384) / 10 = 9830.4, compute is negligible. With
// capacity 20000 the optimum reaches that bound only by retaining T1 (16384) into the next
// subgraph (writing T1 or recomputing op 0 costs extra traffic).
TEST(Exact, RetentionReachesTheTrafficBound) {
  const std::string base = R"({"widths":[128,128,256,256,128],"heights":[128,128,128,128,128],
    "inputs":[[0],[1,2],[1]],"outputs":[[1],[3],[4]],"base_costs":[10,100,10],
    "op_types":["Pointwise","MatMul","Pointwise"],"slow_memory_bandwidth":10,"native_granularity":[128,128],
    "fast_memory_capacity":)";
  Problem p = test::problemFromJson(base + "20000}");
  ExactResult r = solveChecked(p);
  EXPECT_TRUE(r.proven_optimal);
  EXPECT_EQ(r.latency, 9830.4);
  EXPECT_TRUE(retains(r.schedule));
  // With capacity 16000, T1 no longer fits as a whole: the optimum recomputes op 0 (and the
  // unpruned search agrees on its latency).
  Problem q = test::problemFromJson(base + "16000}");
  ExactResult rq = solveChecked(q);
  EXPECT_TRUE(rq.proven_optimal);
  EXPECT_GT(rq.latency, 9830.4);
  EXPECT_TRUE(recomputes(rq.schedule));
  expectUnprunedAgrees(q, rq);
}

// --- Stopping and incumbents ------------------------------------------------------------------

TEST(Exact, StoppedAtOnceReturnsAValidSchedule) {
  Problem p = generateProblem("random", 6, 3);
  ExactResult r = solveExact(p, {}, {}, [] { return true; });
  ASSERT_TRUE(r.found) << exactStatusName(r.status) << " " << r.message;
  EXPECT_FALSE(r.proven_optimal);
  EXPECT_EQ(r.status, ExactStatus::Stopped);
  Evaluation ev = evaluateSchedule(p, r.schedule, {});
  ASSERT_TRUE(ev.valid) << ev.reason;
  EXPECT_EQ(ev.total, r.latency);
  EXPECT_LE(r.lower_bound, r.latency);
  ExactResult full = solveChecked(p);
  ASSERT_TRUE(full.proven_optimal);
  EXPECT_LE(r.lower_bound, full.latency);
  EXPECT_LE(full.latency, r.latency);
}

TEST(Exact, StartsFromAGivenIncumbent) {
  Problem p = example(5);
  Schedule s5b = parseScheduleFile(test::instancePath("examples/ex5b.schedule.json"), p);
  ExactOptions o;
  o.incumbent = &s5b;
  ExactResult stopped = solveExact(p, {}, o, [] { return true; });
  ASSERT_TRUE(stopped.found);
  EXPECT_LE(stopped.latency, 6915.2);
  ExactResult r = solveChecked(p, o);
  EXPECT_TRUE(r.proven_optimal);
  EXPECT_EQ(r.latency, solveChecked(p).latency);
}

// every_side widens the granularity space to every V8 value: never worse than the default (on
// this graph strictly better: W = 1500 at w = 128 gives 12 columns with a last one of 92, which
// the smallest side for 12 columns, 125, does not reproduce).
TEST(Exact, EverySideIsNeverWorse) {
  Problem p = generateProblem("gemm-chain", 3, 4);
  ExactResult r = solveChecked(p);
  ExactOptions o;
  o.every_side = true;
  ExactResult re = solveChecked(p, o);
  ASSERT_TRUE(r.proven_optimal);
  ASSERT_TRUE(re.proven_optimal);
  EXPECT_LE(re.latency, r.latency);
}

TEST(Exact, TooLargeIsNotAttempted) {
  Problem p = generateProblem("gemm-chain", 8, 1);
  ExactOptions o;
  o.max_ops = 4;
  ExactResult r = solveExact(p, {}, o, [] { return false; });
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.status, ExactStatus::TooLarge);
}

// --- The pruning against the unpruned search --------------------------------------------------

// Under both MatMul compute models (A-1), with the default and the full granularity space: the
// optimum with every pruning on equals the unpruned search's, which also checks every bound the
// pruning uses against the exact prices.
TEST(Exact, PruningAgreesWithTheUnprunedSearch) {
  const auto problems = test::tinyProblems(40);
  EXPECT_GE(problems.size(), 35u);
  for (const auto& [seed, p] : problems) {
    ModelOptions m;
    if (seed % 2) m.matmul_compute = ModelOptions::MatmulCompute::NativeDepth;
    ExactOptions o;
    o.every_side = seed % 3 == 0;  // also the full V8 granularity range
    o.greedy_incumbent = false;    // both searches must find the space's optimum themselves
    SCOPED_TRACE(p.name + " " + m.describe() + (o.every_side ? " every_side" : ""));
    ExactResult r = solveChecked(p, o, m);
    ASSERT_TRUE(r.proven_optimal);
    expectUnprunedAgrees(p, r, o, m);
  }
}

// The mirrored starts (ExactOptions::mirrors, on by default) widen the traversal space: never
// worse than without them (the pruning with them is checked by the unpruned search above), and
// strictly better on a generated CNN graph (11,618.9 -> 11,439.7: an order that meets the clipped
// edge tiles first).
TEST(Exact, MirroredStartsAreNeverWorse) {
  const auto problems = test::tinyProblems(40);
  EXPECT_GE(problems.size(), 35u);
  for (const auto& [seed, p] : problems) {
    SCOPED_TRACE(p.name);
    ExactOptions plain;
    plain.mirrors = false;
    ExactResult r0 = solveChecked(p, plain), r1 = solveChecked(p);
    ASSERT_TRUE(r0.proven_optimal && r1.proven_optimal);
    EXPECT_LE(r1.latency, r0.latency);
  }
  Problem p = generateProblem("cnn", 5, 1);
  ExactOptions plain;
  plain.mirrors = false;
  ExactResult r0 = solveChecked(p, plain), r1 = solveChecked(p);
  ASSERT_TRUE(r0.proven_optimal && r1.proven_optimal);
  EXPECT_LT(r1.latency, r0.latency);
  bool mirrored = false;  // the better schedule starts a traversal elsewhere than at tile 0
  for (const SubgraphSched& sg : r1.schedule.subgraphs) mirrored |= sg.trav.kind == TraversalKind::Custom;
  EXPECT_TRUE(mirrored);
}
// A few generated graphs small enough for the unpruned search.
TEST(Exact, GeneratedGraphsAgreeWithTheUnprunedSearch) {
  for (auto [size, seed] : std::vector<std::pair<int, uint64_t>>{{3, 1}, {3, 7}, {3, 10}, {4, 5}}) {
    Problem p = generateProblem("random", size, seed);
    SCOPED_TRACE(p.name);
    ExactOptions o;
    o.greedy_incumbent = false;
    ExactResult r = solveChecked(p, o);
    ASSERT_TRUE(r.proven_optimal);
    expectUnprunedAgrees(p, r, o);
  }
}

// Generated graphs (every family; transformer and mixer graphs have at least 12 and 10 ops, the
// others 3-5 here): proven optimal, and never above what `mlsys solve` finds in 1 s. Below it is
// a search miss of solve; above it would be a bug here, or solve using a tile side outside the
// space (not the smallest for its count: e.g. gemm-chain size 3 seed 4, see EverySideIsNeverWorse):
// then the space with every side must be no worse than solve.
TEST(Exact, GeneratedGraphsAgainstSolve) {
  struct Case {
    const char* family;
    int size;
    uint64_t seed;
  };
  const std::vector<Case> cases = {{"gemm-chain", 3, 1}, {"gemm-chain", 5, 2}, {"cnn", 3, 3},
                                   {"cnn", 5, 1},        {"random", 3, 1},     {"random", 4, 2},
                                   {"random", 5, 3},     {"mixer", 3, 2},      {"transformer", 3, 1}};
  for (const Case& c : cases) {
    Problem p = generateProblem(c.family, c.size, c.seed);
    SCOPED_TRACE(p.name);
    ExactResult r = solveChecked(p);
    ASSERT_TRUE(r.proven_optimal) << exactStatusName(r.status) << " " << r.message;
    const std::string in = test::tempPath(p.name + ".json"), out = test::tempPath(p.name + ".solve.json");
    test::writeText(in, problemToJson(p));
    test::RunResult run = test::runMlsys({"solve", in, out, "--seconds", "1", "-q"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    Problem pr = parseProblemFile(in);
    Evaluation ev = evaluateSchedule(pr, parseScheduleFile(out, pr), {});
    ASSERT_TRUE(ev.valid) << ev.reason;
    // Below the exact figure, solve must have left the space: a walk other than raster and the
    // snakes from the first tile (the LNS worker polishes traversals from every corner), or a
    // tile side that is not the smallest for its count (then the space with every side wins).
    bool otherWalk = false;
    const Schedule sol = parseScheduleFile(out, pr);
    for (const SubgraphSched& sg : sol.subgraphs) {
      auto [ntw, nth] = subgraphGrid(pr, sg);
      const std::vector<int32_t> order = traversalOrder(sg.trav, ntw, nth);
      bool known = false;
      for (TraversalKind k : {TraversalKind::Raster, TraversalKind::RowSnake, TraversalKind::ColSnake})
        known |= order == traversalOrder({k, {}}, ntw, nth);
      otherWalk |= !known;
    }
    if (ev.total < r.latency && !otherWalk) {
      ExactOptions o;
      o.every_side = true;
      ExactResult re = solveChecked(p, o);
      ASSERT_TRUE(re.proven_optimal);
      EXPECT_LE(re.latency, ev.total) << "exact (every side) " << re.latency << " vs solve " << ev.total;
    }
  }
}
