#include "engine/search/regions.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <unordered_set>

#include "engine/search/annealing.h"
#include "engine/search/lns.h"
#include "engine/search/window.h"

namespace mlsys {

RegionSearch::RegionSearch(SearchRun& run, int worker_id, int workers)
    : run_(run), id_(worker_id), workers_(std::max(1, workers)), rng_(mixSeed(run.seed, worker_id, 5)) {}

namespace {

bool consecutiveApply(const Problem& p, const SearchConfig& cfg) {
  return cfg.lns_region_ops > 0 && p.numOps() >= kRegionsPerGraph * static_cast<long>(cfg.lns_region_ops);
}

bool componentsApply(const Problem& p, const SearchConfig& cfg) {
  return cfg.lns_component_regions && p.numOps() >= kComponentRegionsMinOps;
}

}  // namespace

bool RegionSearch::applies(const Problem& p, const SearchConfig& cfg) {
  return consecutiveApply(p, cfg) || componentsApply(p, cfg);
}

bool RegionSearch::ready() const {
  return consecutiveApply(run_.p, run_.cfg) ||
         (componentsApply(run_.p, run_.cfg) && run_.progress.guard().components() != nullptr);
}

std::vector<int> RegionSearch::nextComponent(const IncrementalEvaluator& ev, int& comp) {
  comp = -1;
  if (!componentsApply(run_.p, run_.cfg)) return {};
  const std::shared_ptr<const BoundGuard::Components> cs = run_.progress.guard().components();
  if (!cs || cs->of_op.size() != static_cast<size_t>(run_.p.numOps())) return {};
  const size_t nc = cs->value.size();
  if (componentFails_.size() != nc) componentFails_.assign(nc, 0);
  const auto& sgs = ev.schedule().subgraphs;
  std::vector<double> lat(nc, 0);
  for (int i = 0; i < ev.size(); ++i) {
    const double each = ev.latency(i) / static_cast<double>(std::max<size_t>(1, sgs[i].ops.size()));
    for (OpId o : sgs[i].ops) {
      const int c = cs->of_op[static_cast<size_t>(o)];
      if (c >= 0) lat[static_cast<size_t>(c)] += each;
    }
  }
  std::vector<double> weight(nc, 0);
  double total = 0;
  for (size_t c = 0; c < nc; ++c) {
    if (cs->size[c] < 2 || cs->size[c] > kComponentRegionOps || !(lat[c] > cs->value[c] * (1 + 1e-9))) continue;
    weight[c] = (lat[c] - cs->value[c]) / std::pow(4.0, std::min(componentFails_[c], 40));
    total += weight[c];
  }
  if (!(total > 0)) return {};
  double r = rand01(rng_) * total;
  size_t pick = 0;
  while (pick + 1 < nc && (weight[pick] <= 0 || r >= weight[pick])) r -= weight[pick++];
  if (weight[pick] <= 0) return {};
  std::vector<int> idx;
  for (int i = 0; i < ev.size(); ++i)
    if (!sgs[i].ops.empty() && cs->of_op[static_cast<size_t>(sgs[i].ops.front())] == static_cast<int>(pick))
      idx.push_back(i);
  if (idx.empty()) return {};
  comp = static_cast<int>(pick);
  return idx;
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

namespace {

// Where subgraphs `idx` of `mine` are in `shared` (the same ops, granularity and traversal):
// consecutive (a run of them), or else each one where it is first found after the one before;
// empty if not all are.
std::vector<int> positionsIn(const Schedule& shared, const Schedule& mine, const std::vector<int>& idx,
                             bool consecutive) {
  auto same = [](const SubgraphSched& x, const SubgraphSched& y) {
    return x.ops == y.ops && x.gran == y.gran && x.trav == y.trav;
  };
  const int len = static_cast<int>(idx.size()), m = static_cast<int>(shared.subgraphs.size());
  std::vector<int> found;
  if (consecutive) {
    for (int j = 0; j + len <= m && found.empty(); ++j) {
      bool all = true;
      for (int i = 0; i < len && all; ++i) all = same(shared.subgraphs[j + i], mine.subgraphs[idx[i]]);
      if (all)
        for (int i = 0; i < len; ++i) found.push_back(j + i);
    }
    return found;
  }
  for (int i = 0, j = 0; i < len; ++i, ++j) {
    while (j < m && !same(shared.subgraphs[j], mine.subgraphs[idx[i]])) ++j;
    if (j >= m) return {};
    found.push_back(j);
  }
  return found;
}

}  // namespace

bool RegionSearch::alone(const SubProblem& w, const Schedule& inc, double seconds, bool component, Schedule& best) {
  // The region's own run: the same config, no stop margin (nothing is written), a deadline of the
  // time given on the run's clock and stop source (a signal stops it at once), nothing written (an
  // in-memory writer), no bound (0).
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
  if (component) {  // LNS windows, which re-group its ops (measured better than annealing there)
    Lns lns(sub, 0);
    Schedule from = inc;
    lns.windows(subEv, from, 1e300);
  } else {  // an LNS worker's annealing
    Annealer annealer(sub, 0, cfg.annealWeights(true));
    annealer.run(subEv, inc);
  }
  run_.countBatch(id_, sub.stats.evaluations.load());
  double latency;
  return sub.pool.best(best, latency) && improves(latency, before);
}

bool RegionSearch::run(IncrementalEvaluator& ev, Schedule& start, double until, Lns* log) {
  const Problem& p = run_.p;
  ev.reset(start);
  if (!ev.valid()) return false;
  int comp = -1;
  std::vector<int> idx = nextComponent(ev, comp);
  if (comp < 0) {
    if (!consecutiveApply(p, run_.cfg)) return false;
    idx = next(ev);
  }
  MoveStats& stats = comp >= 0 ? componentStats_ : stats_;
  // A component's slice that does not gain quarters its weight (nextComponent).
  bool cheaper = false;
  struct Tally {
    std::vector<int>& fails;
    int comp;
    bool& cheaper;
    ~Tally() {
      if (comp >= 0) fails[static_cast<size_t>(comp)] = cheaper ? 0 : fails[static_cast<size_t>(comp)] + 1;
    }
  } tally{componentFails_, comp, cheaper};
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
  ++calls_;
  ++stats.evaluations;
  Schedule best;
  if (!alone(w, toSub(w, cur, idx), seconds, comp >= 0, best)) return false;
  ++stats.valid;
  const std::vector<SubgraphSched> block = toFull(w, best).subgraphs;
  double latency;
  // The merge: another worker may have improved the run's best meanwhile, elsewhere. If the pool's
  // best is cheaper than the schedule the region was cut from and still holds the region's
  // subgraphs (the same ops, granularity and traversal, consecutive), the block goes there, so
  // that both finds are kept; otherwise into the schedule it was cut from.
  std::vector<int> at = idx;
  if (Schedule shared; run_.startFromBest(id_, shared, latency) && improves(latency, ev.total())) {
    const std::vector<int> found = positionsIn(shared, start, idx, comp < 0);
    if (!found.empty()) {
      const double gained = ev.total() - latency;
      ev.reset(shared);
      if (!ev.valid()) {
        ev.reset(start);
      } else {
        run_.countAdopted(id_, gained);
        at = found;
      }
    }
  }
  Splice sp = cheapestSplice(p, ev, at, block, comp >= 0);
  if (!sp.delta.valid) {
    start = ev.schedule();
    return false;
  }
  const double oldTotal = ev.total();
  const Schedule backup = deltaWorsens(sp.delta.delta, oldTotal) ? ev.schedule() : Schedule{};
  ev.apply(sp.change, sp.delta);
  for (auto [from, to] : sp.runs(static_cast<int>(block.size()))) {
    retainAcross(ev, to);
    retainAcross(ev, from - 1);
  }
  if (!improves(ev.total(), oldTotal)) {
    if (worsens(ev.total(), oldTotal)) ev.reset(backup);
    start = ev.schedule();
    return false;
  }
  ++stats.applied;
  ++stats.improvements;
  cheaper = true;
  if (log && comp >= 0) {
    std::vector<std::vector<OpId>> replaced;
    for (int i : idx) replaced.push_back(start.subgraphs[i].ops);
    log->logGain(replaced, block);
  }
  start = ev.schedule();
  run_.offer(id_, start, ev.total());
  run_.progress.improved(start, ev.total(), workerKindName(WorkerKind::Lns));
  return true;
}

void RegionSearch::reportStats() const {
  if (stats_.evaluations > 0) run_.stats.addMoves("lns-region", stats_);
  if (componentStats_.evaluations > 0) run_.stats.addMoves("lns-component", componentStats_);
}

}  // namespace mlsys
