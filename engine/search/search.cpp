#include "engine/search/search.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include <oneapi/tbb/global_control.h>

#include "cost/pricing/incremental.h"
#include "engine/base/parallel.h"
#include "engine/search/annealing.h"
#include "engine/search/beam.h"
#include "engine/search/lns.h"

namespace mlsys {
namespace {

// One worker thread: its evaluator (with its cost cache) and the schedule it starts from; the
// phases its kind runs on them.
class Worker {
 public:
  Worker(SearchRun& run, int id, WorkerKind kind, int beam_index, const Schedule& start)
      : run_(run),
        id_(id),
        kind_(kind),
        then_(kind == WorkerKind::Beam ? run.cfg.beam_then : kind),
        beam_index_(beam_index),
        ev_(run.p, run.cfg.model, static_cast<size_t>(run.cfg.cache_entries)),
        start_(start),
        annealer_(run, id, run.cfg.annealWeights(then_ == WorkerKind::Lns)),
        lns_(run, id) {
    ev_.setStop(run.dl.stopToken());  // a rebuild on a huge graph gives up on a signal
  }

  void run() {
    // Each phase starts with an O(n) rebuild of the evaluator: check the stop first.
    if (kind_ == WorkerKind::Beam && !run_.stop.stopNow()) runBeamPhase(run_, id_, ev_, start_, beam_index_);
    // An LNS worker that proved the whole graph optimal (over the exact solver's space) anneals
    // for the rest of the run: other tile sides may still do better.
    if (then_ == WorkerKind::Lns && !run_.stop.stopNow()) {
      if (!run_.cfg.lns_adaptive) lns_.run(ev_, start_);
      else if (!lns_.solveWhole(ev_, start_)) slices();
      lns_.reportStats();
    }
    if (!run_.stop.stopNow()) annealer_.run(ev_, start_);
    annealer_.reportStats();
  }

 private:
  // The adaptive LNS worker (lns.adaptive): slices of lns.slice_seconds, each spent on one kind
  // of work from the pool's best: LNS windows, annealing, or (with lns.polish) the granularity
  // polish (coordinate descent, Lns::polishGranularities). A slice's yield is the relative
  // improvement it made on the schedule it started from, per second; each kind keeps a moving
  // average of its yields and the next slice goes to the kind with the highest (a kind not
  // measured yet first; ties to the earlier kind in that order). A kind not run for kExplore
  // slices gets the next one, so that a kind that stopped paying is measured again. Graphs where
  // the exact windows pay keep the worker on windows; where they are slow or dry (large
  // dimensions, annealing throughput decides) it becomes a second annealer; the polish takes the
  // granularities the annealer's random draws left a little above their best (it returns at once
  // on a schedule it has already swept).
  void slices() {
    constexpr int kExplore = 4;
    enum { kLns, kSa, kPolish };
    const int kKinds = run_.cfg.lns_polish ? 3 : 2;  // the polish only with lns.polish
    double yield[3] = {-1, -1, -1};                  // moving average per kind; -1: not measured yet
    int idle[3] = {0, 0, 0};                         // slices since the kind last ran
    while (!run_.stop.stopNow()) {
      int k = -1;
      for (int i = 0; i < kKinds && k < 0; ++i)
        if (yield[i] < 0) k = i;
      if (k < 0) {
        k = 0;
        for (int i = 1; i < kKinds; ++i)
          if (yield[i] > yield[k]) k = i;
        for (int i = 0; i < kKinds; ++i)
          if (i != k && idle[i] >= kExplore && (idle[k] < kExplore || idle[i] > idle[k])) k = i;
      }
      Schedule from;
      double ref;
      if (!run_.startFromBest(id_, from, ref)) from = start_;
      const double t0 = run_.dl.elapsed(), until = t0 + run_.cfg.lns_slice_seconds;
      double reached;
      if (k == kLns) {
        lns_.windows(ev_, from, until);
        reached = ev_.valid() ? ev_.total() : ref;
      } else if (k == kSa) {
        reached = annealer_.run(ev_, from, until);
      } else {
        lns_.polishGranularities(ev_, from, until);
        reached = ev_.valid() ? ev_.total() : ref;
      }
      const double dt = std::max(1e-3, run_.dl.elapsed() - t0);
      const double y = ref > 0 && reached < ref ? (ref - reached) / ref / dt : 0;
      yield[k] = yield[k] < 0 ? y : 0.5 * yield[k] + 0.5 * y;
      for (int i = 0; i < kKinds; ++i) idle[i] = i == k ? 0 : idle[i] + 1;
      if (ev_.valid()) start_ = ev_.schedule();
    }
  }

  SearchRun& run_;
  int id_;
  WorkerKind kind_;
  WorkerKind then_;  // what the worker runs after its beam phase, if any (its own kind otherwise)
  int beam_index_;   // rank among the beam workers
  IncrementalEvaluator ev_;
  Schedule start_;
  Annealer annealer_;
  Lns lns_;
};

}  // namespace

bool searchRaisesBound(const Problem& p, const SearchConfig& cfg, int threads) {
  bool lns = false;
  for (int i = 0; i < threads; ++i) {
    const WorkerKind k = cfg.workers[static_cast<size_t>(i) % cfg.workers.size()];
    lns = lns || k == WorkerKind::Lns || (k == WorkerKind::Beam && cfg.beam_then == WorkerKind::Lns);
  }
  return lns && Lns::raisesBound(p, cfg);
}

SearchResult runSearch(const Problem& p, const SolveOptions& opt, const SearchConfig& cfg, int threads,
                       Deadline& deadline, OutputWriter& out, const Schedule& start, BoundGuard& guard,
                       TraceFile* trace, const LogSink& log) {
  SearchRun run(p, cfg, opt.seed, deadline, out, opt.max_evals, trace, guard, opt.quiet, log);
  run.progress.setVerbose(opt.verbose);
  if (threads > 1 && cfg.pool_isolate_first) run.isolateFirstWorker();
  run.stats.setWorkers(threads);
  run.stats.target = opt.target;
  run.stats.stall_s = opt.stall_s;
  run.stats.last_improvement_s = deadline.elapsed();  // the search starts from its best so far
  run.offer(0, start, out.best());
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
  std::vector<std::unique_ptr<Worker>> workers;
  int beams = 0;
  for (int i = 0; i < threads; ++i) {
    const WorkerKind kind = cfg.workers[static_cast<size_t>(i) % cfg.workers.size()];
    workers.push_back(std::make_unique<Worker>(run, i, kind, kind == WorkerKind::Beam ? beams : 0, start));
    beams += kind == WorkerKind::Beam;
  }
  run.progress.setBoundDynamic(searchRaisesBound(p, cfg, threads));
  std::atomic<int> running{threads};
  // Progress monitor on its own thread while the workers run.
  std::thread monitor([&] { run.progress.monitor(running, cfg.log_interval_s, opt.quiet, run.pool); });
  runConcurrently(threads, [&](int i) {
    workers[static_cast<size_t>(i)]->run();
    running.fetch_sub(1);
  });
  monitor.join();
  SearchResult r;
  r.evaluations = run.stats.evaluations.load();
  const std::vector<long> byWorker = run.stats.evaluationsByWorker();
  for (int i = 0; i < threads; ++i)
    r.workers.push_back({cfg.workers[static_cast<size_t>(i) % cfg.workers.size()], byWorker[static_cast<size_t>(i)]});
  r.best_found_s = run.progress.bestFoundS();
  r.moves = run.stats.moves();
  r.best_by_kind = run.stats.bestByKind();
  r.optimal = run.stats.optimal.load();
  r.lower_bound = run.progress.bound();
  r.max_evals_hit = opt.max_evals > 0 && r.evaluations >= opt.max_evals;
  r.target_hit = run.stats.target_hit.load();
  r.stalled = run.stats.stalled(deadline.elapsed());
  return r;
}

}  // namespace mlsys
