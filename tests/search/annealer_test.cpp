// Annealer (engine/search/annealing.h): the Metropolis acceptance rule and the geometric
// temperature schedule, observed through what a run applies. Every run here has a budget in
// evaluations (--max-evals, SearchRun's max_evals), a fixed seed and one thread, so it is
// deterministic; none depends on the wall clock.
//
// The temperature is T = latency * t0 * (t1/t0)^f, f the fraction of the budget spent; a valid
// proposal of delta d is accepted if d <= 0, else with probability exp(-d/T). So:
//   T enormous (1e300 x latency): exp(-d/T) == 1.0 in double, every valid proposal is applied;
//   T tiny (1e-300 x latency):   exp(-d/T) == 0.0, only proposals with d <= 0 are applied, the
//                                current schedule never gets worse and ends as the best.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "cost/pricing/evaluator.h"
#include "cost/pricing/incremental.h"
#include "engine/construct/construct.h"
#include "engine/generate/generator.h"
#include "engine/io/output.h"
#include "engine/search/annealing.h"
#include "engine/search/run_state.h"
#include "tests/test_util.h"

using namespace mlsys;

namespace {

// A small random DAG (deterministic: family, size, seed).
const Problem& problem() {
  static const Problem p = generateProblem("random", 8, 7);
  return p;
}

SearchConfig config(double t0, double t1) {
  SearchConfig c;
  c.sa_t0 = t0;
  c.sa_t1 = t1;
  c.sa_restart_after = 1L << 40;  // no restarts from the pool: the trajectory is one walk
  c.sa_adopt_pool_best = false;
  return c;
}

// One annealing run of worker 0 on its own SearchRun, with a budget of `max_evals` evaluations of
// which `spent` are counted as already made (the budget fraction starts at spent / max_evals).
struct AnnealRun {
  const Problem& p;
  SearchConfig cfg;
  Deadline dl;
  OutputWriter out;
  SearchRun run;
  IncrementalEvaluator ev;
  double start_total = 0, best = 0;
  long evaluations = 0;
  std::map<std::string, MoveStats> moves;

  AnnealRun(const SearchConfig& c, uint64_t seed, long max_evals, long spent = 0)
      : p(problem()),
        cfg(c),
        out(p, ModelOptions{}, "/dev/null"),
        run(p, cfg, seed, dl, out, max_evals, nullptr, 0, true),
        ev(p, cfg.model) {
    const Schedule start = baselineSchedule(p, cfg.model);
    start_total = evaluateSchedule(p, start, cfg.model).total;
    run.stats.evaluations.store(spent);
    Annealer a(run, 0, cfg.move_weights);
    best = a.run(ev, start);
    a.reportStats();
    evaluations = run.stats.evaluations.load() - spent;
    moves = run.stats.moves();
  }
  long valid() const {
    long n = 0;
    for (const auto& [name, m] : moves) n += m.valid;
    return n;
  }
  long applied() const {
    long n = 0;
    for (const auto& [name, m] : moves) n += m.applied;
    return n;
  }
};

bool sameSchedule(const Schedule& a, const Schedule& b) { return a.subgraphs == b.subgraphs; }

}  // namespace

TEST(Annealer, ASeedGivesOneTrajectory) {
  const SearchConfig c = config(0.002, 0.00001);  // the default schedule
  AnnealRun a(c, 5, 3000), b(c, 5, 3000);
  // The budget is counted in evaluations: the run stops at it (checked every 32 proposals).
  EXPECT_GE(a.evaluations, 3000);
  EXPECT_LT(a.evaluations, 3000 + 64);
  EXPECT_EQ(a.evaluations, b.evaluations);
  EXPECT_EQ(a.best, b.best);
  EXPECT_TRUE(sameSchedule(a.ev.schedule(), b.ev.schedule()));
  ASSERT_EQ(a.moves.size(), b.moves.size());
  for (const auto& [name, m] : a.moves) {
    SCOPED_TRACE(name);
    const MoveStats& n = b.moves.at(name);
    EXPECT_EQ(m.evaluations, n.evaluations);
    EXPECT_EQ(m.valid, n.valid);
    EXPECT_EQ(m.applied, n.applied);
    EXPECT_EQ(m.improvements, n.improvements);
  }
  EXPECT_LE(a.best, a.start_total);  // the best never exceeds the start
  // The evaluator agrees with the full evaluator on where the walk ended.
  EXPECT_TRUE(a.ev.checkAgainstFull());
}

TEST(Annealer, AtAnEnormousTemperatureEveryValidProposalIsApplied) {
  AnnealRun r(config(1e300, 1e300), 11, 2000);
  ASSERT_GT(r.valid(), 100);
  EXPECT_EQ(r.applied(), r.valid());
  for (const auto& [name, m] : r.moves) EXPECT_EQ(m.applied, m.valid) << name;
  EXPECT_EQ(r.run.stats.accepted.load(), r.valid());
  // Worsening moves were taken: the walk ends above its best.
  EXPECT_GT(r.ev.total(), r.best);
}

TEST(Annealer, AtATinyTemperatureOnlyNonWorseningProposalsAreApplied) {
  AnnealRun r(config(1e-300, 1e-300), 11, 2000);
  ASSERT_GT(r.valid(), 100);
  EXPECT_LT(r.applied(), r.valid());  // worsening proposals were refused
  EXPECT_GT(r.applied(), 0);          // improving or neutral ones taken
  // The current schedule never rose: it ends at (not above) the best, which is at most the start.
  EXPECT_LE(r.ev.total(), r.best * (1 + 1e-9));
  EXPECT_LE(r.best, r.start_total);
}

TEST(Annealer, AtTheEndOfTheBudgetTheTemperatureIsT1s) {
  // With 99.8% of a 1,000,000-evaluation budget spent, f >= 0.998 and
  // T = latency * t0 * (t1/t0)^f is within a factor (t0/t1)^0.002 = 10^0.6 of latency * t1.
  constexpr long kBudget = 1000000, kSpent = kBudget - 2000;
  {
    SCOPED_TRACE("hot to cold: ends cold");
    AnnealRun r(config(1e150, 1e-150), 13, kBudget, kSpent);  // T <= latency * 1e-149
    ASSERT_GT(r.valid(), 100);
    EXPECT_LT(r.applied(), r.valid());
    EXPECT_LE(r.ev.total(), r.best * (1 + 1e-9));
  }
  {
    SCOPED_TRACE("cold to hot: ends hot");
    AnnealRun r(config(1e-150, 1e150), 13, kBudget, kSpent);  // T >= latency * 1e149
    ASSERT_GT(r.valid(), 100);
    EXPECT_EQ(r.applied(), r.valid());
  }
}

// A single-worker run on problem() with an unused deadline and no output, for one Annealer.
struct QuietRun {
  const Problem& p = problem();
  SearchConfig cfg = config(0.002, 0.00001);
  Deadline dl;
  OutputWriter out{p, ModelOptions{}, "/dev/null"};
  SearchRun run{p, cfg, 1, dl, out, 1000, nullptr, 0, true};
};

TEST(Annealer, AnInvalidStartIsNotAnnealed) {
  QuietRun q;
  IncrementalEvaluator ev(q.p, q.cfg.model);
  Annealer a(q.run, 0, q.cfg.move_weights);
  Schedule empty;  // covers no op (V2)
  EXPECT_EQ(a.run(ev, empty), std::numeric_limits<double>::infinity());
  EXPECT_EQ(q.run.stats.evaluations.load(), 0);
}

TEST(Annealer, WithNoEnabledMoveOrNoTimeLeftItReturnsTheStart) {
  QuietRun q;
  const Schedule start = baselineSchedule(q.p, q.cfg.model);
  const double total = evaluateSchedule(q.p, start, q.cfg.model).total;
  IncrementalEvaluator ev(q.p, q.cfg.model);
  // Every weight 0 (or unknown): no move is enabled.
  Annealer none(q.run, 0, {{"merge", 0}, {"split", 0}, {"no-such-move", 5}});
  EXPECT_NEAR(none.run(ev, start), total, 1e-9 * total);
  // `until` = 0: the run's elapsed time is already past it at the first check.
  Annealer a(q.run, 0, q.cfg.move_weights);
  EXPECT_NEAR(a.run(ev, start, 0.0), total, 1e-9 * total);
  EXPECT_EQ(q.run.stats.evaluations.load(), 0);
}

TEST(Annealer, OnGraphsBeyondScaleOpsTheTemperatureFollowsTheLatencyPerOp) {
  SearchConfig c = config(0.002, 0.00001);
  c.sa_scale_ops = 200;
  const double unscaled = 1e6 * 0.002 * std::pow(0.00001 / 0.002, 0.5);
  // Up to scale_ops ops: relative to the whole latency, as without the key.
  EXPECT_DOUBLE_EQ(annealingTemperature(c, 1e6, 150, 0.5), unscaled);
  EXPECT_DOUBLE_EQ(annealingTemperature(c, 1e6, 200, 0.5), unscaled);
  // Beyond it: times scale_ops / ops, at every fraction of the budget.
  EXPECT_DOUBLE_EQ(annealingTemperature(c, 1e6, 800, 0.5), unscaled / 4);
  EXPECT_DOUBLE_EQ(annealingTemperature(c, 1e6, 5000, 0), 1e6 * 0.002 * 200 / 5000);
  EXPECT_DOUBLE_EQ(annealingTemperature(c, 1e6, 5000, 1), 1e6 * 0.00001 * 200 / 5000);
  // 0 turns it off.
  c.sa_scale_ops = 0;
  EXPECT_DOUBLE_EQ(annealingTemperature(c, 1e6, 5000, 0.5), unscaled);
}

// The sync interval: sa.sync_every with up to 3 workers (so 1 and 2 threads sync as they always
// did), times workers / 2 beyond (bench/RESULTS.md, seventeenth session: 16 threads on 16 cores).
TEST(Annealer, SyncsAsConfiguredUpToThreeWorkersAndHalfAsOftenPerWorkerBeyond) {
  SearchConfig c;
  c.sa_sync_every = 2000;
  EXPECT_EQ(syncInterval(c, 0), 2000);  // a SearchRun whose workers were never counted
  EXPECT_EQ(syncInterval(c, 1), 2000);
  EXPECT_EQ(syncInterval(c, 2), 2000);
  EXPECT_EQ(syncInterval(c, 3), 2000);
  EXPECT_EQ(syncInterval(c, 4), 4000);
  EXPECT_EQ(syncInterval(c, 16), 16000);
  EXPECT_EQ(syncInterval(c, 64), 64000);
  c.sa_sync_every = 1;
  EXPECT_EQ(syncInterval(c, 5), 2);
}
