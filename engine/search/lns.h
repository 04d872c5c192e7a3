// The large-neighbourhood-search worker (WorkerKind::Lns): re-optimises parts of the schedule
// exactly, with the rest fixed (after Shaw's LNS and the window re-optimisation of HGS/PyVRP).
//   whole graph  a graph of at most lns.whole_graph_ops ops is first solved by the exact solver
//                (engine/exact/exact.h) from the current schedule, over the budget if need be; if it
//                proves optimality over its space, the worker anneals for the rest of the run;
//   windows      otherwise, repeatedly: draw a window of up to `size` distinct ops - a run of
//                consecutive subgraphs (extended over retentions at its ends while it fits), or
//                the subgraphs running a connected region of ops grown through tensors from a
//                random subgraph (or, for a share lns.guided of windows, from the subgraph farthest
//                above its part floor); cut out its sub-problem (engine/search/window.h); solve it
//                exactly with the window as incumbent for at most lns.window_seconds; splice the
//                result back as one block where the window's first or last subgraph was (the cheaper;
//                retentions into a subgraph that no longer reads them are dropped, and the one before
//                the window is also priced retaining nothing; with lns.component_regions on a graph
//                of 200 ops or more, a window whose subgraphs lie apart may also go back interleaved
//                with the others of its range: interleavedSplice); keep it if the
//                whole schedule got cheaper (or as cheap: a sideways step), then retain greedily
//                across the block's ends and polish the block's traversals (every corner, both
//                ways). Windows proven optimal as they are are remembered and skipped. After
//                lns.stall_windows windows without improvement the size grows by one op; past
//                lns.window_ops_max a round ends: every traversal is polished, and the next round
//                starts at lns.window_ops_min from a pool schedule.
// Before each window the worker adopts the pool's best if it is better than its own, so that
// workers build on each other's finds, and replays its own logged window gains on it (replay);
// its improvements go to the progress (the writer) and the pool like the annealer's. Window solves are cut by wall
// time: runs are not reproducible.
#pragma once
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "cost/pricing/incremental.h"
#include "engine/exact/exact.h"
#include "engine/search/run_state.h"
#include "moves/move.h"

namespace mlsys {

class Lns {
 public:
  Lns(SearchRun& run, int worker_id);
  // Runs until the run stops; returns early (true) only when the exact solver proved the whole
  // graph optimal over its space, leaving the optimum in `start` for the caller to anneal from.
  // The same as solveWhole, then windows until the run stops.
  bool run(IncrementalEvaluator& ev, Schedule& start);
  // The whole graph by the exact solver if it has at most lns.whole_graph_ops ops (else nothing):
  // true if proven optimal; `start` becomes the best schedule.
  bool solveWhole(IncrementalEvaluator& ev, Schedule& start);
  // Whether solveWhole runs the exact solver over the spec's whole space on this problem (so that
  // the run's bound can rise during the search).
  static bool raisesBound(const Problem& p, const SearchConfig& cfg);
  // Windows from `start` until the run stops or the run's elapsed time reaches `until` (checked
  // between windows); `start` becomes the schedule reached (never worse than the one given). The
  // window size and stall count carry over from one call to the next.
  void windows(IncrementalEvaluator& ev, Schedule& start, double until);
  // Coordinate descent on the granularities from `start` until the run stops or its elapsed time
  // reaches `until`: for one subgraph after another (a cursor that carries over between calls),
  // every w in [1, min(N, W)] with h and k fixed, the cheapest applied if it lowers the whole
  // schedule's latency; then every h; then every k in [1, min(N, K limit)] and, under
  // k_limit=reduction, every k of kAboveNative; then w and h together along the fast-memory
  // frontier (polishFrontier), at the subgraph's k and at the 8 largest k above N; then the
  // traversal polish.
  // The annealer's granularity move draws these values at random, so late in a run, at a low
  // temperature, a subgraph often sits a little above its best granularity in context; the LNS
  // windows' exact solver considers only the smallest side per tile count. A full sweep without
  // a change marks the schedule converged: polishing it again returns at once. `start` becomes
  // the schedule reached; true if it is cheaper.
  bool polishGranularities(IncrementalEvaluator& ev, Schedule& start, double until);
  // Reader windows only (lns.reader_window_seconds with lns.adaptive: a kind of slice of its own),
  // from `start` until the run stops, its elapsed time reaches `until` (checked between windows) or
  // no subgraph above its part floor is left untried (guidedSeed); `start` becomes the schedule
  // reached. A seed whose window did not gain is not tried again while its subgraph stays as it is.
  void readerWindows(IncrementalEvaluator& ev, Schedule& start, double until);
  void reportStats() const;
  // Logs a gain made elsewhere on this worker's schedule (a component region: regions.h) for
  // replay: the op lists of the subgraphs it replaced, and what it put in their place.
  void logGain(const std::vector<std::vector<OpId>>& replaced, const std::vector<SubgraphSched>& block);
  // lns.guided: the subgraph whose latency exceeds the part floor of its op set the most (the
  // most that changing it alone could gain), among those whose window at the current size has not
  // already failed to gain (with their contents as they are), scanning at most kGuidedScan
  // subgraphs from a random one on larger schedules; -1 if none is above its floor or the run
  // stops or reaches `until` first. `key` names it for that record, `excess` (if given) receives
  // how far it is above its floor. Public for its test.
  int guidedSeed(const IncrementalEvaluator& ev, size_t& key, double until = 1e300, double* excess = nullptr);
  // Records a guided seed whose window did not gain (guidedSeed skips it at this size).
  void markTried(size_t key);
  static constexpr int kGuidedScan = 4096;
  // A reader window (lns.reader_window_seconds) from subgraph `seed`: for the largest tensor it
  // loads that another op reads too and whose load is at least half of `excess` (what the subgraph
  // pays above its part floor, which assumes such a tensor retained in where it fits: the window is
  // for that retention), the subgraph that last made the tensor before it, and those
  // that first run its other readers (at most kExactMaxOps ops): the window where the maker may
  // share a subgraph with the other readers and retain the tensor into the first (a CNN's
  // bottleneck block, bench/RESULTS.md seventeenth session); empty if none fits. Public for its test.
  std::vector<int> readerWindow(const IncrementalEvaluator& ev, int seed, double excess = 0);
  // Window choices (positions of subgraphs, increasing; empty if none fits): a run of
  // consecutive subgraphs, or the subgraphs running a connected region of at most `size` ops
  // grown through tensors, from subgraph `seed` (a random one when seed < 0), in time linear in
  // the region's neighbours (a tensor may have thousands of readers). Public for their tests.
  std::vector<int> consecutiveWindow(const IncrementalEvaluator& ev, int size, int seed = -1);
  std::vector<int> regionWindow(const IncrementalEvaluator& ev, int size, int seed = -1);

 private:
  // A reader window's time: lns.reader_window_seconds, at most a tenth of the run's budget (at
  // least lns.window_seconds), so that on a short run one window cannot take the rest of it.
  double readerSeconds() const;
  // The exact solve of window idx within `seconds`, spliced in when it is cheaper; counted in `by`.
  bool window(IncrementalEvaluator& ev, const std::vector<int>& idx, double seconds, MoveStats& by);
  // Puts `block` in place of subgraphs `idx` (bestSplice), retains across its ends and polishes its
  // traversals: true if the latency fell; a worse result is undone, an equal one kept (a sideways
  // step). `strict`: only a splice priced below the current latency is applied at all.
  bool spliceIn(IncrementalEvaluator& ev, const std::vector<int>& idx, const std::vector<SubgraphSched>& block,
                bool strict = false);
  // The worker's own window gains, replayed on the schedule a windows slice starts from or adopts
  // from another worker: each logged window (the op lists of the subgraphs it replaced, and its
  // block) whose subgraphs the schedule runs as they were (the same op lists) is spliced in again
  // where it is priced cheaper (strict), oldest first, until the run stops or its elapsed time
  // reaches `until`. Without it, adopting a better schedule discards every window gain made since
  // on the worker's own (on gemm-chain-n5000 the beam worker's first schedule arrived after 19 s,
  // and the windows solved meanwhile were lost). true if cheaper.
  bool replay(IncrementalEvaluator& ev, double until);
  // `ev` reset to `s`, then the logged gains replayed on it: false (nothing replayed) if s is not valid.
  bool startFrom(IncrementalEvaluator& ev, const Schedule& s, double until);
  // Subgraphs [from, to] each at its best traversal among raster and the snakes from every
  // corner, both ways (the window solver knows only raster and the snakes from the first tile).
  bool polishTraversals(IncrementalEvaluator& ev, int from, int to);
  // Subgraph s's w and h changed together, along the fast-memory frontier (see lns.cpp), at its
  // k or, if k > 0, at that k (k and the tile change together: a larger k leaves less room); the
  // cheapest change applied if it lowers the schedule's latency.
  void polishFrontier(IncrementalEvaluator& ev, int s, i64 k = 0);
  // A polish prices change c (counted in the polish's stats) and keeps it in best / bestD if it
  // is the cheapest so far that lowers the latency `at`; true if c is valid.
  bool polishConsider(IncrementalEvaluator& ev, Change c, double at, Change& best, DeltaEval& bestD);
  // Under --max-evals, an exact solve takes each pricing from the run's budget before it makes it
  // (ExactOptions::take_pricing); otherwise its pricings are counted when it returns.
  void takePricings(ExactOptions& o) {
    if (run_.stop.byEvaluations()) o.take_pricing = [this] { return run_.takeEvaluations(id_); };
  }
  // Offers the schedule to the pool and the progress if it beats the worker's best, counting the
  // improvement in `by`.
  void improved(const IncrementalEvaluator& ev, MoveStats& by);

  SearchRun& run_;
  int id_;  // the worker's id (which pool it reads: SearchRun::poolOf)
  Rng rng_;
  std::unordered_set<std::string> solved_;     // windows (their subgraphs, encoded) proven optimal as they are
  std::unordered_map<size_t, double> floors_;  // part floors (lns.guided), per hash of the sorted op set
  static constexpr size_t kMaxFloors = 100000;
  std::unordered_set<size_t> seeded_;  // guided seeds whose window did not gain (hash of the subgraph's key, size)
  MoveStats stats_;
  struct Logged {
    std::vector<std::vector<OpId>> replaced;  // the op lists of the subgraphs a window replaced
    std::vector<SubgraphSched> block;         // what it put in their place
  };
  std::deque<Logged> log_;  // the worker's window gains (at most kMaxLogged, oldest dropped)
  static constexpr size_t kMaxLogged = 4096;
  MoveStats replayStats_;  // replays: evaluated, applied (the latency fell)
  MoveStats readerStats_;  // reader windows (lns.reader_window_seconds): as stats_ for the others
  MoveStats polishStats_;  // the granularity polish: evaluated, valid, applied (a side changed), improved (a new best)
  double best_ = -1;
  int size_ = 0;    // window size (distinct ops) of the current round
  long stall_ = 0;  // windows since the last improvement at this size
  bool cycleImproved_ = false;
  size_t polishCursor_ = 0;      // next subgraph the granularity polish visits
  double polishConverged_ = -1;  // latency of the last schedule a full sweep left unchanged
};

}  // namespace mlsys
