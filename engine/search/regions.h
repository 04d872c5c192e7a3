// Decomposition (lns.region_ops; after POPMUSIC and the decomposition phase of HGS-CVRP and
// PyVRP): on a large graph (kRegionsPerGraph regions or more), one region of the schedule at a time - a run of
// consecutive subgraphs holding about lns.region_ops distinct ops - is cut out as a problem of its own
// (engine/search/window.h, extractSubProblem: what it reads from outside is in slow memory, what
// the rest needs is a graph output), annealed there from the region's own subgraphs with a full
// cooling of its own (sa.t0 to sa.t1 over the time given), and spliced back as one block if the
// whole schedule gets cheaper (bestSplice; then retentions across the block's ends, retainAcross).
// The annealer's moves on a region of a few hundred ops are priced on an evaluator of that size,
// and its temperature is set by the region's latency, not the whole graph's.
// Regions are visited by a cursor that walks the schedule (each call starts where the last
// ended), offset per worker, so that the workers of one run start on different parts of it.
#pragma once
#include <vector>

#include "cost/pricing/incremental.h"
#include "engine/search/run_state.h"
#include "moves/move.h"

namespace mlsys {

// Regions apply to a graph of at least this many times lns.region_ops ops: measured (bench/RESULTS.md,
// fourth session of 2026-11-28), a region of 40% of a 1,000-op graph cost random-n1000 0.2-0.5%,
// while on the 5,000-op graphs regions of 400 ops gained on random-n5000 and were neutral elsewhere.
constexpr long kRegionsPerGraph = 8;

class RegionSearch {
 public:
  RegionSearch(SearchRun& run, int worker_id, int workers);
  // Whether regions apply: lns.region_ops > 0 and the graph has at least kRegionsPerGraph times as
  // many ops.
  static bool applies(const Problem& p, const SearchConfig& cfg);
  // One region of `start` (the evaluator is reset to it) annealed until the run's elapsed time
  // reaches `until` (or the run stops) and spliced back if that is cheaper; `start` becomes the
  // schedule reached. True if it is cheaper.
  bool run(IncrementalEvaluator& ev, Schedule& start, double until);
  void reportStats() const;

 private:
  // The next region: consecutive subgraph positions from the cursor, until they hold
  // lns.region_ops distinct ops (or the schedule ends; the cursor wraps).
  std::vector<int> next(const IncrementalEvaluator& ev);

  SearchRun& run_;
  int id_;
  int workers_;
  Rng rng_;
  long calls_ = 0;
  double cursor_ = -1;  // where the next region starts, as a fraction of the schedule's length
  MoveStats stats_;     // regions annealed, valid splices, applied, improvements
};

}  // namespace mlsys
