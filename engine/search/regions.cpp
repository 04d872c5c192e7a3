#include "engine/search/regions.h"

#include <algorithm>
#include <exception>
#include <unordered_set>

#include "engine/search/annealing.h"
#include "engine/search/window.h"

namespace mlsys {

RegionSearch::RegionSearch(SearchRun& run, int worker_id, int workers)
    : run_(run), id_(worker_id), workers_(std::max(1, workers)), rng_(mixSeed(run.seed, worker_id, 5)) {}

bool RegionSearch::applies(const Problem& p, const SearchConfig& cfg) {
  return cfg.lns_region_ops > 0 && p.numOps() >= kRegionsPerGraph * static_cast<long>(cfg.lns_region_ops);
}

std::vector<int> RegionSearch::next(const IncrementalEvaluator& ev) {
  const int n = ev.size();
  if (n < 2) return {};
  if (cursor_ < 0) cursor_ = static_cast<double>(id_ % workers_) / workers_;
  int first = std::clamp(static_cast<int>(cursor_ * n), 0, n - 1);
  const auto& sgs = ev.schedule().subgraphs;
  std::unordered_set<OpId> ops;
  std::vector<int> idx;
  for (int i = first; i < n && ops.size() < static_cast<size_t>(run_.cfg.lns_region_ops); ++i) {
    ops.insert(sgs[i].ops.begin(), sgs[i].ops.end());
    idx.push_back(i);
  }
  // The next region starts a little before this one ends (its end is re-optimised with what
  // follows), and the walk wraps at the schedule's end.
  const int last = idx.back();
  const int overlap = std::max<int>(1, static_cast<int>(idx.size()) / 8);
  cursor_ = last + 1 >= n ? 0.0 : static_cast<double>(std::max(first + 1, last + 1 - overlap)) / n;
  return idx.size() >= 2 ? idx : std::vector<int>{};
}

bool RegionSearch::run(IncrementalEvaluator& ev, Schedule& start, double until) {
  const Problem& p = run_.p;
  ev.reset(start);
  if (!ev.valid()) return false;
  const std::vector<int> idx = next(ev);
  // Within the slice and before the run's own stop (the deadline less the writer's margin): the
  // region's run cannot see the run's StopPolicy, only its clock and signals.
  const double seconds = std::min(until - run_.dl.elapsed(), run_.stop.secondsLeft());
  if (idx.empty() || seconds <= 0 || run_.stop.stopNow()) return false;
  const Schedule& cur = ev.schedule();
  std::vector<OpId> ops;
  for (int i : idx) ops.insert(ops.end(), cur.subgraphs[i].ops.begin(), cur.subgraphs[i].ops.end());
  SubProblem w;
  try {
    w = extractSubProblem(p, ops);
  } catch (const std::exception&) {  // a sub-problem the parser's checks reject: skip the region
    return false;
  }
  const Schedule inc = toSub(w, cur, idx);
  ++calls_;
  ++stats_.evaluations;
  // The region's own run: the same config (its moves: an LNS worker's annealing), no stop margin
  // (nothing is written), a deadline of the time given on the run's clock and stop source (a
  // signal stops it at once), nothing written (an in-memory writer), no bound (0).
  SearchConfig cfg = run_.cfg;
  cfg.margin_s = 0;
  const Deadline dl = run_.dl.child(seconds);
  OutputWriter out(w.p, cfg.model, "", cfg.write_interval_s);
  SearchRun sub(w.p, cfg, mixSeed(run_.seed, id_, 6) + static_cast<uint64_t>(calls_), dl, out, 0, nullptr, 0.0,
                /*quiet=*/true);
  sub.stats.setWorkers(1);
  IncrementalEvaluator subEv(w.p, cfg.model, static_cast<size_t>(cfg.cache_entries));
  subEv.setStop(run_.dl.stopToken());
  subEv.reset(inc);
  if (!subEv.valid()) return false;  // the region as it is does not stand alone (e.g. a tensor never written)
  const double before = subEv.total();
  Annealer annealer(sub, 0, cfg.annealWeights(true));
  annealer.run(subEv, inc);
  run_.countBatch(id_, sub.stats.evaluations.load());
  Schedule best;
  double latency;
  if (!sub.pool.best(best, latency) || !improves(latency, before)) return false;
  ++stats_.valid;
  const std::vector<SubgraphSched> block = toFull(w, best).subgraphs;
  // The merge: another worker may have improved the run's best meanwhile, elsewhere. If the pool's
  // best is cheaper than the schedule the region was cut from and still holds the region's
  // subgraphs (the same ops, granularity and traversal, consecutive), the block goes there, so
  // that both finds are kept; otherwise into the schedule it was cut from.
  std::vector<int> at = idx;
  if (Schedule shared; run_.startFromBest(id_, shared, latency) && improves(latency, ev.total())) {
    const std::vector<SubgraphSched>& mine = start.subgraphs;
    auto same = [&](const SubgraphSched& x, const SubgraphSched& y) {
      return x.ops == y.ops && x.gran == y.gran && x.trav == y.trav;
    };
    const int len = static_cast<int>(idx.size()), m = static_cast<int>(shared.subgraphs.size());
    for (int j = 0; j + len <= m; ++j) {
      bool all = true;
      for (int i = 0; i < len && all; ++i) all = same(shared.subgraphs[j + i], mine[idx[i]]);
      if (!all) continue;
      const double gained = ev.total() - latency;
      ev.reset(shared);
      if (!ev.valid()) {
        ev.reset(start);
        break;
      }
      run_.countAdopted(id_, gained);
      for (int i = 0; i < len; ++i) at[i] = j + i;
      break;
    }
  }
  Splice sp = bestSplice(p, ev, at, block);
  if (!sp.delta.valid) {
    start = ev.schedule();
    return false;
  }
  const double oldTotal = ev.total();
  const Schedule backup = deltaWorsens(sp.delta.delta, oldTotal) ? ev.schedule() : Schedule{};
  ev.apply(sp.change, sp.delta);
  retainAcross(ev, sp.block_at + static_cast<int>(block.size()) - 1);
  retainAcross(ev, sp.block_at - 1);
  if (!improves(ev.total(), oldTotal)) {
    if (worsens(ev.total(), oldTotal)) ev.reset(backup);
    start = ev.schedule();
    return false;
  }
  ++stats_.applied;
  ++stats_.improvements;
  start = ev.schedule();
  run_.offer(id_, start, ev.total());
  run_.progress.improved(start, ev.total(), workerKindName(WorkerKind::Lns));
  return true;
}

void RegionSearch::reportStats() const {
  if (stats_.evaluations > 0) run_.stats.addMoves("lns-region", stats_);
}

}  // namespace mlsys
