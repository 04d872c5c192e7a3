// Differential tests: the incremental evaluator and the step-class fast path must agree with
// the full step-walking evaluator exactly (validity) and to 1e-9 relative (totals).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "engine/construct/construct.h"
#include "engine/generate/generator.h"
#include "moves/move.h"
#include "tests/test_util.h"

using namespace mlsys;

namespace {

// Number of random moves per benchmark; MLSYS_DIFF_MOVES overrides (the large run by hand).
int movesPerInstance() {
  const char* e = std::getenv("MLSYS_DIFF_MOVES");
  return e ? std::atoi(e) : 2500;
}

struct DiffStats {
  long evaluated = 0, applied = 0, mismatches = 0;
};

void runDifferential(const Problem& p, uint64_t seed, int moves, DiffStats& st) {
  ModelOptions m;
  IncrementalEvaluator ev(p, m, 4096);
  ev.reset(baselineSchedule(p, m));
  ASSERT_TRUE(ev.valid());
  Rng rng(seed);
  std::vector<std::unique_ptr<Move>> ms;
  for (const auto& n : moveNames()) ms.push_back(makeMove(n));
  for (int i = 0; i < moves; ++i) {
    Move& mv = *ms[randBelow(rng, ms.size())];
    Change c;
    if (!mv.propose(ev, rng, c)) continue;
    DeltaEval d = ev.evaluate(c);
    ++st.evaluated;
    // Check the verdict against the full evaluator on the changed schedule.
    Schedule after = ev.schedule();
    after.subgraphs.erase(after.subgraphs.begin() + c.first, after.subgraphs.begin() + c.first + c.count);
    after.subgraphs.insert(after.subgraphs.begin() + c.first, c.repl.begin(), c.repl.end());
    if (i % 7 == 0 || d.valid) {
      // The step walk (oracle) on every tenth check where it is affordable, step classes otherwise.
      long steps = 0;
      if (i % 10 == 0)
        for (const auto& sg : after.subgraphs) {
          auto [ntw, nth] = subgraphGrid(p, sg);
          steps += ntw * nth * 8;
        }
      bool walk = i % 10 == 0 && steps < 200000;
      Evaluation full = evaluateSchedule(p, after, m, walk ? CostMethod::Walk : CostMethod::Auto);
      bool agree = full.valid == d.valid;
      if (agree && d.valid) agree = std::abs(full.total - d.total) <= 1e-9 * std::max(1.0, full.total);
      if (!agree) {
        ++st.mismatches;
        ADD_FAILURE() << p.name << " move " << mv.name() << " #" << i << ": incremental valid=" << d.valid << " ("
                      << d.rule << ") total=" << d.total << " vs full valid=" << full.valid << " (" << full.rule << ": "
                      << full.reason << ") total=" << full.total;
        if (st.mismatches > 5) return;
      }
    }
    // Accept valid moves that are not much worse, so the walk explores.
    if (d.valid && (d.delta <= 0 || rand01(rng) < 0.3)) {
      ev.apply(c, d);
      ++st.applied;
      if (!ev.checkAgainstFull()) {
        ++st.mismatches;
        ADD_FAILURE() << p.name << ": state after apply disagrees with the full evaluator";
        return;
      }
    }
  }
}

}  // namespace

TEST(Incremental, RandomMovesMatchFullEvaluatorOnSharedBenchmarks) {
  auto files = test::sharedBenchmarks();
  if (files.empty()) GTEST_SKIP() << "../shared/benchmarks not found: differential test on contest instances skipped";
  DiffStats st;
  for (const auto& f : files) {
    Problem p = parseProblemFile(f);
    runDifferential(p, 12345, movesPerInstance(), st);
  }
  std::cout << "differential: " << st.evaluated << " moves evaluated, " << st.applied << " applied, " << st.mismatches
            << " mismatches\n";
  EXPECT_EQ(st.mismatches, 0);
  EXPECT_GT(st.evaluated, 1000);
}

TEST(Incremental, RandomMovesMatchOnShippedInstances) {
  DiffStats st;
  for (const char* rel : {"examples/ex3.json", "examples/ex5.json", "examples/ex2.json"}) {
    std::string path = test::instancePath(rel);
    // Shipped with the project (instances/): a missing one is a failure, not a skip.
    ASSERT_FALSE(test::readText(path).empty()) << path << " is missing";
    runDifferential(parseProblemFile(path), 7, 3000, st);
  }
  EXPECT_EQ(st.mismatches, 0);
  EXPECT_GT(st.evaluated, 1000) << "too few moves were evaluated to compare anything";
}

// The step-class fast path equals the step walk on random subgraphs of every benchmark,
// for every traversal kind and many granularities (including non-divisors).
TEST(Incremental, RandomMovesMatchOnGeneratedGraphs) {
  // Property: on graphs unlike the contest's (every generator family, odd sizes, tight memories),
  // the incremental verdict and total equal the full evaluator's after any sequence of moves.
  DiffStats st;
  for (const auto& fam : generatorFamilies())
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      Problem p = generateProblem(fam, seed == 1 ? 8 : 30, seed);
      runDifferential(p, 777 + seed, 400, st);
    }
  std::cout << "differential (generated): " << st.evaluated << " moves evaluated, " << st.applied << " applied, "
            << st.mismatches << " mismatches\n";
  EXPECT_GT(st.applied, 0);
  EXPECT_EQ(st.mismatches, 0);
}

TEST(FastPath, EqualsWalkOnRandomSubgraphs) {
  auto files = test::sharedBenchmarks();
  if (files.empty()) GTEST_SKIP() << "../shared/benchmarks not found";
  Rng rng(99);
  long compared = 0, sharedTensor = 0;
  for (const auto& f : files) {
    Problem p = parseProblemFile(f);
    ModelOptions m;
    for (int trial = 0; trial < 400; ++trial) {
      // A random connected set of 1-5 ops: grow through consumers of produced tensors or
      // producers of consumed ones (so fan-out and shared inputs occur).
      std::vector<OpId> ops = {static_cast<OpId>(randBelow(rng, p.numOps()))};
      for (int e = 0; e < 4 && rand01(rng) < 0.7; ++e) {
        OpId from = ops[randBelow(rng, ops.size())];
        std::vector<OpId> nb;
        for (TensorId t : p.ops[from].outputs)
          for (OpId c : p.consumers[t]) nb.push_back(c);
        for (TensorId t : p.ops[from].inputs)
          if (p.producer[t] >= 0) nb.push_back(p.producer[t]);
        if (nb.empty()) break;
        OpId c = nb[randBelow(rng, nb.size())];
        if (std::find(ops.begin(), ops.end(), c) == ops.end()) ops.push_back(c);
      }
      std::sort(ops.begin(), ops.end(), [&](OpId a, OpId b) { return p.topo_pos[a] < p.topo_pos[b]; });
      Granularity g{1 + static_cast<i64>(randBelow(rng, 128)), 1 + static_cast<i64>(randBelow(rng, 128)),
                    1 + static_cast<i64>(randBelow(rng, 128))};
      if (rand01(rng) < 0.5) g = {128 >> randBelow(rng, 4), 128 >> randBelow(rng, 4), 128 >> randBelow(rng, 5)};
      SubgraphPlan pl = planSubgraph(p, m, ops, g, {}, {});
      if (!pl.valid || pl.steps() > 200000) continue;
      for (TraversalKind k : {TraversalKind::Raster, TraversalKind::RowSnake, TraversalKind::ColSnake}) {
        SubgraphCost a = costSubgraph(p, pl, {k, {}}, CostMethod::Fast);
        SubgraphCost b = costSubgraph(p, pl, {k, {}}, CostMethod::Walk);
        ASSERT_EQ(a.num, b.num) << p.name << " ops " << ops.size() << " g=[" << g.w << "," << g.h << "," << g.k
                                << "] trav " << traversalName(k);
        ASSERT_EQ(a.peak_ws, b.peak_ws);
        ASSERT_EQ(a.compute_bound_steps, b.compute_bound_steps);
        ++compared;
        if (pl.tiles() >= 2 && pl.tiles() <= 400) {
          // A random explicit order is classified tile by tile.
          Traversal cu{TraversalKind::Custom, traversalOrder({k, {}}, pl.ntw, pl.nth)};
          std::shuffle(cu.order.begin(), cu.order.end(), rng);
          SubgraphCost c1 = costSubgraph(p, pl, cu, CostMethod::Fast), c2 = costSubgraph(p, pl, cu, CostMethod::Walk);
          ASSERT_EQ(c1.num, c2.num) << p.name << " custom order";
          ASSERT_EQ(c1.peak_ws, c2.peak_ws);
        }
        if (a.fast) {
          for (size_t x = 0; x < pl.slices.size(); ++x)
            for (size_t y = x + 1; y < pl.slices.size(); ++y)
              if (pl.slices[x].t == pl.slices[y].t) ++sharedTensor;
        }
      }
    }
  }
  EXPECT_GT(compared, 1000);
  // The closed form was exercised on subgraphs where one tensor has two slice templates.
  EXPECT_GT(sharedTensor, 3);
  std::cout << "fast vs walk: " << compared << " comparisons, " << sharedTensor << " with a shared tensor\n";
}

// peek (the granularity walks' pricing) gives cost's price, from the cache when it is there, and
// keeps nothing: the cache holds as many entries after a walk of peeks as before it.
TEST(Incremental, PeekPricesAsCostAndKeepsNothing) {
  for (const char* family : {"transformer", "gemm-chain", "random"}) {
    const Problem p = generateProblem(family, 40, 3);
    const Schedule s = baselineSchedule(p, {});
    IncrementalEvaluator ev(p, {});
    ev.reset(s);
    ASSERT_TRUE(ev.valid());
    IncrementalEvaluator fresh(p, {});  // an empty cache: every cost() computes
    for (int i = 0; i < ev.size(); ++i) {
      const std::vector<TensorId> rin = ev.retainedInto(i);
      for (i64 side : {8, 32, 128}) {
        SubgraphSched sg = s.subgraphs[i];
        sg.gran = {side, side, side};
        const size_t before = ev.cache().size();
        const CachedPrice peeked = ev.peek(sg, rin);
        EXPECT_EQ(ev.cache().size(), before) << family << " subgraph " << i;
        const CachedCost& priced = fresh.cost(sg, rin);
        EXPECT_EQ(peeked.valid, priced.valid) << family << " subgraph " << i;
        EXPECT_EQ(peeked.rule, priced.rule) << family << " subgraph " << i;
        EXPECT_EQ(peeked.latency, priced.latency) << family << " subgraph " << i;
      }
      // A subgraph the cache holds: the same price, from it.
      const CachedPrice held = ev.peek(s.subgraphs[i], rin);
      EXPECT_TRUE(held.valid);
      EXPECT_EQ(held.latency, ev.latency(i)) << family << " subgraph " << i;
    }
  }
}

// A change of more subgraphs than the cost cache holds: pricing it turns the cache over twice,
// which frees the entries priced first while evaluate() still reads them (a crash in
// availabilityOk on random-50000's interleaved LNS splices). evaluate() then prices them again
// into storage of its own; its verdict and total are the full evaluator's, and apply() holds.
TEST(Incremental, AChangeLargerThanTheCacheIsPricedFromCostsItOwns) {
  const Problem p = generateProblem("random", 3000, 1);
  const ModelOptions m;
  IncrementalEvaluator ev(p, m, 1024);  // 512 entries a generation
  ev.reset(quickSchedule(p, m));
  ASSERT_TRUE(ev.valid());
  const int n = ev.size();
  ASSERT_GT(n, 2000);
  Change c;  // every subgraph again, and the last op once more at the end (structural: V5 runs)
  c.first = 0;
  c.count = n;
  c.repl = ev.schedule().subgraphs;
  c.repl.push_back(c.repl.back());
  const DeltaEval d = ev.evaluate(c);
  ASSERT_GE(ev.cache().epoch() - d.epoch, 2u);
  ASSERT_EQ(d.owned.size(), c.repl.size() + 0u);  // no subgraph after the range: no `next`
  for (const CachedCost* cc : d.repl) EXPECT_TRUE(cc >= d.owned.data() && cc < d.owned.data() + d.owned.size());
  Schedule after = ev.schedule();
  after.subgraphs.push_back(after.subgraphs.back());
  const Evaluation full = evaluateSchedule(p, after, m);
  EXPECT_EQ(d.valid, full.valid) << full.reason;
  EXPECT_NEAR(d.total, full.total, 1e-9 * full.total);
  ev.apply(c, d);
  EXPECT_TRUE(ev.checkAgainstFull());
  EXPECT_EQ(ev.size(), n + 1);
}
