// runBeamPhase (engine/search/beam.h): the beam worker's construction phase on small graphs, with
// a budget in evaluations (SearchRun's max_evals, as --max-evals), so that it is deterministic and
// independent of the machine's speed. It must leave in `start` a valid schedule no worse than the
// constructor's (baselineSchedule, what solve() hands the workers), and offer it to the pool.
// BeamPace: a pass paced (beamConstruct's BeamPace) by a clock of its own work, not of the machine.
#include <gtest/gtest.h>

#include <string>

#include "cost/pricing/evaluator.h"
#include "cost/pricing/incremental.h"
#include "engine/construct/construct.h"
#include "engine/generate/generator.h"
#include "engine/io/output.h"
#include "engine/search/beam.h"
#include "engine/search/run_state.h"
#include "tests/test_util.h"
#include "tests/unit_graphs.h"

using namespace mlsys;

namespace {

struct PhaseResult {
  double constructor = 0;  // the baseline's latency
  Schedule s;              // what the phase left in `start`
  Evaluation full;         // its full evaluation
  double pool_best = 0;
  long evaluations = 0;
};

PhaseResult runPhase(const Problem& p, long max_evals) {
  SearchConfig cfg;
  Deadline dl;
  OutputWriter out(p, ModelOptions{}, "/dev/null");
  SearchRun run(p, cfg, 1, dl, out, max_evals, nullptr, 0, true);
  IncrementalEvaluator ev(p, cfg.model);
  PhaseResult r;
  r.s = baselineSchedule(p, cfg.model);
  const Evaluation base = evaluateSchedule(p, r.s, cfg.model);
  EXPECT_TRUE(base.valid) << base.reason;
  r.constructor = base.total;
  runBeamPhase(run, 0, ev, r.s);
  r.full = evaluateSchedule(p, r.s, cfg.model);
  r.pool_best = run.pool.bestLatency();
  r.evaluations = run.stats.evaluations.load();
  return r;
}

void expectNoWorse(const Problem& p, long max_evals) {
  const PhaseResult r = runPhase(p, max_evals);
  ASSERT_TRUE(r.full.valid) << r.full.reason;
  EXPECT_LE(r.full.total, r.constructor * (1 + 1e-9));
  EXPECT_NEAR(r.pool_best, r.full.total, 1e-9 * r.full.total);  // offered, and the best offered
  // Deterministic under an evaluation budget: a second run builds the same schedule.
  const PhaseResult again = runPhase(p, max_evals);
  EXPECT_EQ(again.s.subgraphs, r.s.subgraphs);
  EXPECT_EQ(again.evaluations, r.evaluations);
}

}  // namespace

TEST(BeamPhase, Example5IsNoWorseThanTheBaseline) {
  // Spec Example 5: two chained MatMuls under a tight capacity (45000).
  const Problem p = test::problemFromJson(test::readText(test::instancePath("examples/ex5.json")));
  expectNoWorse(p, 2000);
}

TEST(BeamPhase, ASmallRandomGraphIsNoWorseThanTheBaseline) { expectNoWorse(generateProblem("random", 12, 3), 2000); }

TEST(BeamPhase, AChainTooBigToRetainIsFused) {
  // op0: T0 -> T1, op1: T1 -> T2, Pointwise (base cost 100), tensors 512x512 = 262144 elements,
  // capacity 50000, B = 10, N = 128.
  // The baseline runs each op alone (T1 cannot be retained: 262144 > 50000). Every tile loads its
  // input region and stores its output region, so at any tile size each op moves 2 x 262144
  // elements: 52428.8, far above its compute (16 tiles x 100 at 128x128):
  //   baseline = 2 x 52428.8 = 104857.6.
  // Fused, T1 is ephemeral: 16 tiles x max(200, load 1638.4 + store 1638.4) = 52428.8, which is
  // also the least any schedule can move (load T0 + store T2).
  const Problem p = test::problemFromJson(R"({"widths":[512,512,512],"heights":[512,512,512],
      "inputs":[[0],[1]],"outputs":[[1],[2]],"base_costs":[100,100],"op_types":["Pointwise","Pointwise"],
      "fast_memory_capacity":50000,"slow_memory_bandwidth":10,"native_granularity":[128,128]})");
  const PhaseResult r = runPhase(p, 2000);
  EXPECT_NEAR(r.constructor, 104857.6, 1e-6);
  ASSERT_TRUE(r.full.valid) << r.full.reason;
  EXPECT_NEAR(r.full.total, 52428.8, 1e-6);
  EXPECT_NEAR(r.pool_best, 52428.8, 1e-6);
}

TEST(BeamPace, APaceItCannotKeepShortensTheSegmentsAndStillCoversTheGraph) {
  using units::kNever;
  using units::sameSchedule;
  // The pace's clock here is the evaluator's cache lookups (the pass's work) over those of the
  // unpaced pass, so that the unpaced pass ends at 1 and the test does not depend on the machine.
  const Problem p = generateProblem("gemm-chain", 120, 5);
  const int n = p.numOps();
  ASSERT_GE(n, 64);
  SearchConfig cfg;
  auto lookups = [](IncrementalEvaluator& ev) { return static_cast<double>(ev.cache().hits + ev.cache().misses); };
  Schedule freeS;
  double freeLat = 0, work = 0;
  {
    IncrementalEvaluator ev(p, ModelOptions{});
    ASSERT_TRUE(beamConstruct(p, cfg, p.topo, kNever, ev, freeS, freeLat));
    work = lookups(ev);
  }
  ASSERT_GT(work, 0);
  auto paced = [&](double until, int& narrowedTo, Schedule& s, double& lat, double& used) {
    IncrementalEvaluator ev(p, ModelOptions{});
    BeamPace pace{[&] { return lookups(ev) / work; }, until};
    const bool ok = beamConstruct(p, cfg, p.topo, kNever, ev, s, lat, &pace);
    narrowedTo = pace.narrowed_to;
    used = lookups(ev) / work;
    if (ok) {
      const Evaluation full = evaluateSchedule(p, s, ModelOptions{});
      EXPECT_TRUE(full.valid) << full.reason;
      EXPECT_NEAR(lat, full.total, 1e-9 * full.total);
      size_t ops = 0;
      for (const auto& sg : s.subgraphs) ops += sg.ops.size();
      EXPECT_EQ(ops, static_cast<size_t>(n));  // the whole graph, each op once
    }
    return ok;
  };
  Schedule s;
  double lat = 0, used = 0;
  // A pace the pass keeps: the same schedule as without one, segments never shortened.
  int kept = 0;
  ASSERT_TRUE(paced(1.5, kept, s, lat, used));
  EXPECT_EQ(kept, cfg.beam_max_segment);
  EXPECT_TRUE(sameSchedule(s, freeS));
  EXPECT_DOUBLE_EQ(lat, freeLat);
  // Half the work: shorter segments, fewer lookups, a whole schedule still.
  int half = 0;
  ASSERT_TRUE(paced(0.5, half, s, lat, used));
  EXPECT_LT(half, cfg.beam_max_segment);
  EXPECT_LT(used, 0.8);
  // A pace it cannot keep at all: one op per segment from the first window on.
  int none = 0;
  ASSERT_TRUE(paced(0.0, none, s, lat, used));
  EXPECT_EQ(none, 1);
  EXPECT_LT(used, 0.5);
  // A clock that does not move, past the aim: no pace to project from, as short as a step allows.
  {
    IncrementalEvaluator ev(p, ModelOptions{});
    BeamPace stuck{[] { return 0.9; }, 0.5};
    ASSERT_TRUE(beamConstruct(p, cfg, p.topo, kNever, ev, s, lat, &stuck));
    EXPECT_EQ(stuck.narrowed_to, 1);
    EXPECT_TRUE(evaluateSchedule(p, s, ModelOptions{}).valid);
  }
}
