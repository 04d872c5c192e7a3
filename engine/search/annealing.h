// The annealing worker (WorkerKind::Annealing; a beam worker ends with it too): simulated
// annealing over the moves of moves/. One step:
//   propose  a move kind drawn by roulette over sa.moves weights proposes a Change
//            (moves/*.cpp, Move::propose; it never mutates the schedule);
//   price    IncrementalEvaluator::evaluate prices the Change as a delta (cost/pricing/incremental.cpp:
//            only the replaced subgraphs and their successor are re-costed, through a cache);
//   accept   Metropolis: always if the delta is <= 0, else with probability exp(-delta / T), T
//            cooling geometrically from sa.t0 to sa.t1 (fractions of the current latency, scaled
//            down on graphs of more than sa.scale_ops ops) over the budget;
//            IncrementalEvaluator::apply commits it.
// The worker's best goes to the run's progress (at most once per write interval) and to the elite
// pool (every syncInterval evaluations); after sa.restart_after evaluations without improvement
// it restarts from a schedule drawn from the pool.
#pragma once
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cost/pricing/incremental.h"
#include "engine/search/run_state.h"
#include "moves/move.h"

namespace mlsys {

// T = latency * t0 * (t1 / t0)^fraction, times min(1, scale_ops / ops) when scale_ops > 0: a move
// replaces a few subgraphs, so its delta scales with the latency per op; on a large graph a
// temperature relative to the whole latency would accept almost every move until the last
// seconds (bench/RESULTS.md, eighth session of 2026-11-28).
double annealingTemperature(const SearchConfig& c, double latency, int ops, double fraction);

// Evaluations between an annealer's sync points (its offer to the pool, and the adoption of the
// pool's best when another worker is ahead): sa.sync_every with up to 3 workers, times workers / 2
// beyond. Each sync copies and encodes the schedule, and each adoption re-prices it and drops the
// worker's own moves since: on 16 cores, 16 threads syncing every 2,000 evaluations reached less on
// 4 of 6 graphs of 1,000-5,000 ops than with syncs 10 times rarer (bench/RESULTS.md, seventeenth
// session).
long syncInterval(const SearchConfig& c, int workers);

class Annealer {
 public:
  // The enabled moves (weight > 0 in `weights`, supported by the problem) and the worker's random
  // streams, derived from (seed, worker_id).
  Annealer(SearchRun& run, int worker_id, const std::map<std::string, double>& weights);
  // Anneals from `start` on the worker's evaluator `ev` until the run stops or the run's elapsed
  // time reaches `until`; returns the best latency it reached (infinity if `start` is invalid).
  double run(IncrementalEvaluator& ev, const Schedule& start, double until = std::numeric_limits<double>::infinity());
  // Adds the per-move counters to the run's statistics.
  void reportStats() const;

 private:
  size_t pickMove();                    // roulette over the weights
  bool accept(double delta, double T);  // Metropolis criterion
  void warnNoMove() const;

  SearchRun& run_;
  int id_;             // the worker's id (which pool it reads: SearchRun::poolOf)
  Rng rng_, acc_rng_;  // proposals and restarts; acceptance
  std::vector<std::unique_ptr<Move>> moves_;
  std::vector<double> weights_;
  double wsum_ = 0;
  std::vector<MoveStats> stats_;
};

}  // namespace mlsys
