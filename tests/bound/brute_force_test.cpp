// Self-tests of the soundness reference (tests/soundness/): the random problem generator and the
// brute-force optimum. The reference must only ever report the cost of a valid schedule (it is
// re-checked by evaluateSchedule), be at most what any schedule of its space costs, and be
// deterministic.
#include "tests/soundness/brute_force.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cost/pricing/evaluator.h"
#include "tests/soundness/random_problem.h"
#include "tests/test_util.h"

using namespace mlsys;
using namespace mlsys::soundness;

namespace {

RandomSpec smallSpec() {
  RandomSpec s;
  s.min_ops = 1;
  s.max_ops = 4;
  s.max_dim = 512;
  return s;
}

double tol(double x) { return 1e-9 * std::max(1.0, std::abs(x)); }

// The schedule evaluates valid, subgraph by subgraph as reported, with the reported total.
void expectRechecks(const Problem& p, const ModelOptions& m, const GraphBest& g) {
  ASSERT_TRUE(g.found) << p.name;
  const Evaluation ev = evaluateSchedule(p, g.schedule, m);
  ASSERT_TRUE(ev.valid) << p.name << ": " << ev.reason;
  EXPECT_NEAR(ev.total, g.total, tol(g.total)) << p.name;
  ASSERT_EQ(ev.subgraphs.size(), g.latencies.size()) << p.name;
  for (size_t i = 0; i < g.latencies.size(); ++i) EXPECT_EQ(ev.subgraphs[i].cost.latency, g.latencies[i]) << p.name;
}

// Whether the op alone is invalid at every granularity of the space (empty retained sets have the
// smallest working set; validity does not depend on the order, W1).
bool noValidGranularity(const Problem& p, const ModelOptions& m, OpId o, const Space& sp) {
  const std::vector<Granularity> gs = granularityCandidates(p, m, {o}, sp);
  return std::none_of(gs.begin(), gs.end(), [&](const Granularity& g) {
    const SubgraphPlan pl = planSubgraph(p, m, {o}, g, {}, {});
    const bool inSpace = pl.valid && (pl.fast_ok || pl.steps() <= sp.max_walk_steps);
    return inSpace && costSubgraph(p, pl, Traversal{}).valid;
  });
}

// A random schedule of the reference's own space: consecutive runs of a topological order (each
// split into single ops where it is not connected), random retained sets, each subgraph at its
// best (granularity, order) for its retained sets. nullopt-like: empty when it is invalid.
Schedule randomSchedule(const Problem& p, const ModelOptions& m, const Space& sp, std::mt19937_64& g) {
  Schedule s;
  std::vector<OpId> run;
  std::vector<TensorId> rin;
  auto flush = [&](const std::vector<OpId>& ops) {
    std::vector<TensorId> rout;
    for (OpId o : ops)
      for (TensorId t : p.ops[o].outputs)
        if (!p.is_graph_output[t] && static_cast<int>(rout.size()) < sp.max_retained && below(g, 2)) rout.push_back(t);
    SubgraphBest b = priceSubgraph(p, m, ops, rin, rout, sp);
    if (!b.valid) return false;
    s.subgraphs.push_back({b.ops, b.gran, b.trav, b.retained_out});
    rin = b.retained_out;
    return true;
  };
  for (size_t i = 0; i < p.topo.size(); ++i) {
    run.push_back(p.topo[i]);
    if (i + 1 < p.topo.size() && below(g, 2)) continue;
    if (!flush(run)) {
      for (OpId o : run)
        if (!flush({o})) return {};
    }
    run.clear();
  }
  return s;
}

}  // namespace

// Spec section 9: the optimum of the space is at most every stated latency of a valid example
// schedule, and its own schedule re-evaluates to its total.
TEST(BruteForce, SpecExamples) {
  const std::vector<std::pair<std::string, std::vector<double>>> examples = {
      {"ex1", {6553.6, 3276.8, 4400}}, {"ex2", {26214.4, 13107.2}}, {"ex3", {11468.8, 6276.8, 4638.4}},
      {"ex4", {7096, 6548}},           {"ex5", {6915.2}},
  };
  for (const auto& [name, stated] : examples) {
    const Problem p = parseProblemFile(test::instancePath("examples/" + name + ".json"));
    for (const Space& sp : {Space::ci(), Space::deep()}) {
      const GraphBest g = bestSchedule(p, ModelOptions{}, sp, 0);
      expectRechecks(p, ModelOptions{}, g);
      EXPECT_TRUE(g.finished);
      for (double x : stated) EXPECT_LE(g.total, x + tol(x)) << name;
    }
  }
}

// 200 random problems: the optimum re-checks, every op alone is priceable (or provably not in the
// space), the optimum is at most a sequential schedule and random schedules of the space, and the
// generator and the reference are deterministic.
TEST(BruteForce, RandomProblems) {
  const ModelOptions m;
  const Space sp = Space::ci();
  std::mt19937_64 rng(7);
  int checked_random = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Problem p = randomProblem(seed, smallSpec());
    ASSERT_EQ(randomProblemJson(seed, smallSpec()), problemToJson(p));
    const GraphBest g = bestSchedule(p, m, sp, 0);
    EXPECT_TRUE(g.finished);
    Schedule seq;  // every op alone, topological, nothing retained
    for (OpId o : p.topo) {
      const SubgraphBest one = bestSubgraph(p, m, {o}, sp);
      if (!one.valid) {
        EXPECT_TRUE(noValidGranularity(p, m, o, sp)) << p.name << " op " << o;
      }
      const SubgraphBest alone = priceSubgraph(p, m, {o}, {}, {}, sp);
      if (alone.valid) seq.subgraphs.push_back({alone.ops, alone.gran, alone.trav, {}});
      if (one.valid && alone.valid) {
        EXPECT_TRUE(one.num * alone.den <= alone.num * one.den) << p.name << " op " << o;
      }
    }
    if (seq.subgraphs.size() == p.topo.size()) {
      const Evaluation ev = evaluateSchedule(p, seq, m);
      ASSERT_TRUE(ev.valid) << p.name << ": " << ev.reason;
      ASSERT_TRUE(g.found) << p.name;
      EXPECT_LE(g.total, ev.total + tol(ev.total)) << p.name;
    }
    if (!g.found) continue;
    expectRechecks(p, m, g);
    for (int k = 0; k < 3; ++k) {
      const Schedule s = randomSchedule(p, m, sp, rng);
      if (s.subgraphs.empty()) continue;
      const Evaluation ev = evaluateSchedule(p, s, m);
      if (!ev.valid) continue;
      ++checked_random;
      EXPECT_LE(g.total, ev.total + tol(ev.total)) << p.name << " random schedule " << k;
    }
    if (seed <= 20) {
      const GraphBest again = bestSchedule(randomProblem(seed, smallSpec()), m, sp, 0);
      EXPECT_TRUE(again.num == g.num && again.den == g.den) << p.name;
      EXPECT_EQ(again.schedule.subgraphs, g.schedule.subgraphs);
    }
  }
  EXPECT_GT(checked_random, 100);
}

// A time limit that has passed stops the search without a result; no limit finishes.
TEST(BruteForce, TimeLimit) {
  const Problem p = randomProblem(3, RandomSpec{});
  const GraphBest g = bestSchedule(p, ModelOptions{}, Space::deep(), 1e-9);
  EXPECT_FALSE(g.finished);
  EXPECT_FALSE(g.found);
}

// The candidate lists: within [1, N] (k also within every K), the structural sides present.
TEST(BruteForce, Candidates) {
  const Space sp = Space::ci();
  const std::vector<i64> w = sideCandidates(200, 128, sp, 1);
  for (i64 v : {i64{100}, i64{128}, i64{67}, i64{99}, i64{64}, i64{32}, i64{16}})
    EXPECT_NE(std::find(w.begin(), w.end(), v), w.end()) << v;
  EXPECT_TRUE(std::all_of(w.begin(), w.end(), [](i64 v) { return v >= 1 && v <= 128; }));
  EXPECT_EQ(orderCandidates(1, 1, sp).size(), 1u);
  EXPECT_EQ(orderCandidates(3, 1, Space::deep()).size(), 6u);  // all 3! permutations
  for (const Traversal& t : orderCandidates(5, 4, Space::deep())) {
    std::vector<int32_t> o = traversalOrder(t, 5, 4);
    std::sort(o.begin(), o.end());
    for (int32_t i = 0; i < 20; ++i) ASSERT_EQ(o[static_cast<size_t>(i)], i);
  }
  const Problem p = parseProblemFile(test::instancePath("examples/ex5.json"));
  for (const Granularity& g : granularityCandidates(p, ModelOptions{}, {0, 1}, Space::deep()))
    EXPECT_TRUE(g.w >= 1 && g.w <= 128 && g.h >= 1 && g.h <= 128 && g.k >= 1 && g.k <= 128);
}

// The generator: valid problems with the motifs in the promised shares.
TEST(BruteForce, GeneratorMotifs) {
  int multi = 0, residual = 0, diamond = 0, shared = 0, chain = 0, below_tile = 0, above_row = 0, huge = 0;
  const int n = 2000;
  for (uint64_t seed = 1; seed <= n; ++seed) {
    const std::string json = randomProblemJson(seed);
    const Problem p = parseProblemText(json, "random");  // model-valid
    ASSERT_EQ(problemToJson(p), json);
    ASSERT_GE(p.numOps(), 1);
    ASSERT_LE(p.numOps(), 6);
    const GraphFeatures f = graphFeatures(p);
    multi += f.multi_role;
    residual += f.residual;
    diamond += f.diamond;
    shared += f.shared_weight;
    chain += f.mm_pw_mm;
    const CapacityMarks mk = capacityMarks(p);
    below_tile += p.capacity < mk.tile;
    above_row += p.capacity > mk.row;
    huge += p.capacity >= mk.total;
    for (TensorId t = 0; t < p.numTensors(); ++t) ASSERT_TRUE(p.producer[t] >= 0 || !p.consumers[t].empty());
  }
  EXPECT_GE(multi, n * 3 / 10);
  EXPECT_GE(residual, n / 20);
  EXPECT_GE(diamond, n / 50);
  EXPECT_GE(shared, n / 20);
  EXPECT_GE(chain, n / 50);
  EXPECT_GE(below_tile, n / 10);
  EXPECT_GE(above_row, n / 10);
  EXPECT_GE(huge, n / 20);
  RandomSpec capped;
  capped.max_dim = 200;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Problem p = randomProblem(seed, capped);
    for (TensorId t = 0; t < p.numTensors(); ++t) ASSERT_LE(std::max(p.widths[t], p.heights[t]), 200);
  }
}

// problemFromBytes never throws and always gives a valid problem.
TEST(BruteForce, ProblemFromBytes) {
  std::mt19937_64 g(11);
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 10000; ++i) {
    bytes.resize(below(g, 300));
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(below(g, 256));
    Problem p;
    ASSERT_NO_THROW(p = problemFromBytes(bytes.data(), bytes.size()));
    ASSERT_NO_THROW(parseProblemText(problemToJson(p)));
  }
  RandomSpec odd;
  odd.dims = {};
  odd.max_k = 0;
  odd.max_dim = 3;
  odd.min_ops = 9;
  odd.max_ops = 2;
  ASSERT_NO_THROW(parseProblemText(problemToJson(problemFromBytes(nullptr, 0, odd))));
}
