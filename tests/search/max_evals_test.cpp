// --max-evals N is a budget the workers take from before they price (RunStats::takeEvaluations):
// a run makes at most N evaluations, whatever the thread count and whichever worker (annealing,
// LNS polish, LNS exact windows, the order beam's candidates) prices last. Before the reservation
// the count was checked only between batches: --max-evals 1 on ex5 made 20 with 2 threads.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "engine/generate/generator.h"
#include "engine/search/run_state.h"
#include "engine/search/solve.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {
using test::instancePath;

SolveOutcome run(const Problem& p, int threads, int64_t n) {
  SolveOptions o;
  o.seconds = 60;
  o.threads = threads;
  o.max_evals = n;
  o.quiet = true;
  o.seed = 3;
  return solve(p, o);
}

void expectWithin(const Problem& p, int threads, int64_t n) {
  const SolveOutcome r = run(p, threads, n);
  ASSERT_TRUE(r.searched);
  EXPECT_LE(r.search.evaluations, n) << p.name << " threads " << threads;
  // Ended by the budget: it spent all of it (nothing else stops a 60 s run this early but a proof).
  if (r.stop_reason == StopReason::MaxEvals) EXPECT_EQ(r.search.evaluations, n) << p.name;
  else EXPECT_EQ(r.stop_reason, StopReason::Optimal) << p.name << " threads " << threads;
  long byWorker = 0;
  for (const WorkerEvaluations& w : r.search.workers) byWorker += w.evaluations;
  EXPECT_EQ(byWorker, r.search.evaluations) << "the workers' counts add up to the run's";
}

TEST(MaxEvals, OneEvaluationIsOne) {
  const Problem p = parseProblemFile(instancePath("examples/ex5.json"));
  for (int threads : {1, 2}) {
    const SolveOutcome r = run(p, threads, 1);
    EXPECT_EQ(r.search.evaluations, 1) << "threads " << threads;
    EXPECT_EQ(r.stop_reason, StopReason::MaxEvals);
  }
}

TEST(MaxEvals, NeverOverOnExamplesAndGeneratedGraphs) {
  std::vector<Problem> ps = {parseProblemFile(instancePath("examples/ex5.json")),
                             parseProblemFile(instancePath("generated/cnn-24.json")),
                             parseProblemFile(instancePath("generated/mixer-16.json"))};
  for (const Problem& p : ps)
    for (int threads : {1, 2})
      for (int64_t n : {1, 7, 100, 1000}) expectWithin(p, threads, n);
}

// The reservation itself: threads racing for the last evaluations never take more than the budget.
TEST(MaxEvals, RacingTakesStopAtTheLimit) {
  RunStats stats;
  stats.setWorkers(4);
  std::atomic<long> taken{0};
  std::vector<std::thread> ts;
  for (int w = 0; w < 4; ++w)
    ts.emplace_back([&, w] {
      for (int i = 0; i < 100000; ++i)
        if (stats.takeEvaluations(w, 1 + i % 3, 12345)) taken.fetch_add(1 + i % 3);
    });
  for (auto& t : ts) t.join();
  EXPECT_LE(stats.evaluations.load(), 12345);
  EXPECT_GE(stats.evaluations.load(), 12345 - 2) << "only a take larger than what is left fails";
  EXPECT_EQ(taken.load(), stats.evaluations.load());
  long sum = 0;
  for (long e : stats.evaluationsByWorker()) sum += e;
  EXPECT_EQ(sum, stats.evaluations.load());
  // No budget: every take counts.
  RunStats free;
  EXPECT_TRUE(free.takeEvaluations(-1, 5, -1));
  EXPECT_EQ(free.evaluations.load(), 5);
}

}  // namespace
}  // namespace mlsys
