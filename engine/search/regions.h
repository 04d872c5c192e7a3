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
//
// With lns.component_regions, once the run's bound has ended, a region is instead one fusion
// component of the bound (BoundGuard::components: ops that can share a subgraph, so no subgraph
// holds ops of two), of kComponentRegionOps ops at most, drawn with weight its subgraphs' latency
// (shared among components by op count) above the bound's value for it, divided by 4 for each of
// its slices that did not gain since one did. It is re-optimised by LNS windows (engine/search/lns.h)
// as a problem of its own and put back among the rest of its range in an order their tensors allow
// (interleavedSplice), or as one block (bestSplice), the cheaper; its gain is logged for the LNS
// replay. Its subgraphs lie far apart
// in the schedule, where the whole graph's windows seldom reach them together: on random-n5000 a
// 26-op component cost 38.6M in a 30 s schedule and 29.1M after 2.5 s of windows on its own.
#pragma once
#include <vector>

#include "cost/pricing/incremental.h"
#include "engine/search/run_state.h"
#include "engine/search/window.h"
#include "moves/move.h"

namespace mlsys {

class Lns;

// Regions apply to a graph of at least this many times lns.region_ops ops: measured (bench/RESULTS.md,
// fourth session of 2026-11-28), a region of 40% of a 1,000-op graph cost random-n1000 0.2-0.5%,
// while on the 5,000-op graphs regions of 400 ops gained on random-n5000 and were neutral elsewhere.
constexpr long kRegionsPerGraph = 8;
// lns.component_regions: graphs of at least kComponentRegionsMinOps ops, components of 2 to
// kComponentRegionOps ops.
constexpr long kComponentRegionsMinOps = 200;
constexpr int kComponentRegionOps = 500;

class RegionSearch {
 public:
  RegionSearch(SearchRun& run, int worker_id, int workers);
  // Whether regions apply: lns.region_ops > 0 and the graph has at least kRegionsPerGraph times as
  // many ops, or lns.component_regions and at least kComponentRegionsMinOps ops.
  static bool applies(const Problem& p, const SearchConfig& cfg);
  // Whether a region can be cut now: consecutive regions apply, or component regions are on and the
  // run's bound has ended (its components are known).
  bool ready() const;
  // One region of `start` (the evaluator is reset to it) annealed until the run's elapsed time
  // reaches `until` (or the run stops) and spliced back if that is cheaper; `start` becomes the
  // schedule reached. True if it is cheaper.
  // A component's gain is logged in `log` (the worker's LNS, which replays it on the schedules it
  // adopts: Lns::replay), when given.
  bool run(IncrementalEvaluator& ev, Schedule& start, double until, Lns* log = nullptr);
  void reportStats() const;

 private:
  // The next region: consecutive subgraph positions from the cursor, until they hold
  // lns.region_ops distinct ops (or the schedule ends; the cursor wraps).
  std::vector<int> next(const IncrementalEvaluator& ev);
  // lns.component_regions: the positions of the subgraphs of a component drawn as above (comp: its
  // index; -1 and empty when none applies).
  std::vector<int> nextComponent(const IncrementalEvaluator& ev, int& comp);
  // The region's own run from `inc` for `seconds`: LNS windows for a component, else annealing;
  // true with its best in `best` if that is cheaper than `inc`.
  bool alone(const SubProblem& w, const Schedule& inc, double seconds, bool component, Schedule& best);

  SearchRun& run_;
  int id_;
  int workers_;
  Rng rng_;
  long calls_ = 0;
  double cursor_ = -1;               // where the next region starts, as a fraction of the schedule's length
  MoveStats stats_;                  // regions annealed, valid splices, applied, improvements
  MoveStats componentStats_;         // the same for component regions
  std::vector<int> componentFails_;  // per bound component: its slices that did not gain since one did
};

}  // namespace mlsys
