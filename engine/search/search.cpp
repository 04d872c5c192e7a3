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
#include "engine/search/regions.h"
#include "engine/search/slices.h"

namespace mlsys {
namespace {

// One worker thread: its evaluator (with its cost cache) and the schedule it starts from; the
// phases its kind runs on them.
class Worker {
 public:
  Worker(SearchRun& run, int id, int threads, WorkerKind kind, WorkerKind beamThen, int beam_index,
         const Schedule& start)
      : run_(run),
        id_(id),
        kind_(kind),
        then_(kind == WorkerKind::BeamThen ? beamThen : kind),
        beam_index_(beam_index),
        ev_(run.p, run.cfg.model, static_cast<size_t>(run.cfg.cache_entries)),
        start_(start),
        annealer_(run, id, run.cfg.annealWeights(then_ == WorkerKind::Lns)),
        lns_(run, id),
        regions_(run, id, threads) {
    ev_.setStop(run.dl.stopToken());  // a rebuild on a huge graph gives up on a signal
  }

  void run() {
    // Each phase starts with an O(n) rebuild of the evaluator: check the stop first.
    if (kind_ == WorkerKind::BeamThen && !run_.stop.stopNow()) runBeamPhase(run_, id_, ev_, start_, beam_index_);
    // An LNS worker that proved the whole graph optimal (over the exact solver's space) anneals
    // for the rest of the run: other tile sides may still do better.
    if (then_ == WorkerKind::Lns && !run_.stop.stopNow()) {
      if (!run_.cfg.lns_adaptive) lns_.run(ev_, start_);
      else if (!lns_.solveWhole(ev_, start_)) adaptiveSlices(run_, id_, ev_, start_, annealer_, lns_, regions_);
      lns_.reportStats();
      regions_.reportStats();
    }
    if (!run_.stop.stopNow()) annealer_.run(ev_, start_);
    annealer_.reportStats();
  }

 private:
  SearchRun& run_;
  int id_;
  WorkerKind kind_;
  WorkerKind then_;  // what the worker runs after its beam phase, if any (its own kind otherwise)
  int beam_index_;   // rank among the beam workers
  IncrementalEvaluator ev_;
  Schedule start_;
  Annealer annealer_;
  Lns lns_;
  RegionSearch regions_;
};

}  // namespace

WorkerKind beamThen(const SearchConfig& cfg, int /*threads*/, bool byEvaluations) {
  if (cfg.beam_then != WorkerKind::BeamThen) return cfg.beam_then;
  return byEvaluations ? WorkerKind::Annealing : WorkerKind::Lns;
}

bool searchRaisesBound(const Problem& p, const SearchConfig& cfg, int threads, bool byEvaluations) {
  const WorkerKind then = beamThen(cfg, threads, byEvaluations);
  bool lns = false;
  for (int i = 0; i < threads; ++i) {
    const WorkerKind k = cfg.workers[static_cast<size_t>(i) % cfg.workers.size()];
    lns = lns || k == WorkerKind::Lns || (k == WorkerKind::BeamThen && then == WorkerKind::Lns);
  }
  return lns && Lns::raisesBound(p, cfg);
}

SearchResult runSearch(const Problem& p, const SolveOptions& opt, const SearchConfig& cfg, int threads,
                       Deadline& deadline, OutputWriter& out, const Schedule& start, BoundGuard& guard,
                       TraceFile* trace, const LogSink& log) {
  // With opt.leak_at_end (the CLI, which ends with _Exit) the run and its workers are never freed:
  // their cost caches took 0.25 s to free on random-50000, after a SIGTERM, before the final write.
  auto held = std::make_unique<SearchRun>(p, cfg, opt.seed, deadline, out, opt.max_evals, trace, guard, opt.quiet, log);
  SearchRun& run = *held;
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
  const WorkerKind then = beamThen(cfg, threads, opt.max_evals > 0);
  for (int i = 0; i < threads; ++i) {
    const WorkerKind kind = cfg.workers[static_cast<size_t>(i) % cfg.workers.size()];
    workers.push_back(
        std::make_unique<Worker>(run, i, threads, kind, then, kind == WorkerKind::BeamThen ? beams : 0, start));
    beams += kind == WorkerKind::BeamThen;
  }
  run.progress.setBoundDynamic(searchRaisesBound(p, cfg, threads, opt.max_evals > 0));
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
  if (opt.leak_at_end) {
    for (auto& w : workers) (void)w.release();
    (void)held.release();
  }
  return r;
}

}  // namespace mlsys
