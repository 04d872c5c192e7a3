#include "engine/search/annealing.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/base/limits.h"

namespace mlsys {
namespace {

// Proposals without a single success after which the moves are taken never to apply.
constexpr long kNoMoveTries = 20000;

// The worker's best schedule, copied lazily: while the current schedule is the best
// (is_current), the copy waits until a non-improving move is about to replace it or the best is
// needed. Copying a 10,000-subgraph schedule on every improvement would dominate.
struct LazyBest {
  double latency;
  Schedule s;
  bool is_current = false;
  void snapshot(const IncrementalEvaluator& ev) {
    if (!is_current) return;
    s = ev.schedule();
    latency = ev.total();
    is_current = false;
  }
  // Relative improvement threshold: an accepted move improves the best only below this.
  bool improvedBy(double total) const { return improves(total, latency); }
};

}  // namespace

Annealer::Annealer(SearchRun& run, int worker_id, const std::map<std::string, double>& weights)
    : run_(run), id_(worker_id), rng_(mixSeed(run.seed, worker_id, 1)), acc_rng_(mixSeed(run.seed, worker_id, 2)) {
  for (const auto& [name, w] : weights) {
    if (w <= 0) continue;
    auto m = makeMove(name);
    if (!m || !m->supports(run.p)) continue;
    moves_.push_back(std::move(m));
    weights_.push_back(w);
    stats_.emplace_back();
  }
  for (double w : weights_) wsum_ += w;
}

size_t Annealer::pickMove() {
  double r = rand01(rng_) * wsum_;
  size_t mi = 0;
  while (mi + 1 < moves_.size() && r >= weights_[mi]) r -= weights_[mi++];
  return mi;
}

bool Annealer::accept(double delta, double T) {
  double u = rand01(acc_rng_);  // drawn for every valid proposal: the stream stays aligned
  return delta <= 0 || (T > 0 && u < std::exp(-delta / T));
}

double annealingTemperature(const SearchConfig& c, double latency, int ops, double fraction) {
  // Geometric cooling from t0 to t1 (relative to the current latency, per scale_ops ops).
  const double scale =
      c.sa_scale_ops > 0 && ops > c.sa_scale_ops ? static_cast<double>(c.sa_scale_ops) / static_cast<double>(ops) : 1;
  return latency * scale * c.sa_t0 * std::pow(c.sa_t1 / c.sa_t0, fraction);
}

long syncInterval(const SearchConfig& c, int workers) {
  return c.sa_sync_every * std::max(1L, static_cast<long>(workers) / 2);
}

double Annealer::run(IncrementalEvaluator& ev, const Schedule& start, double until) {
  ev.reset(start);
  if (!ev.valid()) return std::numeric_limits<double>::infinity();
  LazyBest best{ev.total(), ev.schedule()};
  auto offerBestToPool = [&] {
    best.snapshot(ev);
    run_.offer(id_, best.s, best.latency);
  };
  const char* who = workerKindName(WorkerKind::Annealing);
  long sinceImprove = 0, sinceSync = 0, local = 0, proposals = 0;
  const long syncEvery = syncInterval(run_.cfg, run_.stats.workers());
  if (moves_.empty()) return best.latency;
  double lastOffer = -1;
  bool pendingOffer = false;
  double T = 0;
  while (true) {
    if ((local & 31) == 0) {
      if (run_.stop.stopNow() || run_.dl.elapsed() >= until) break;
      T = annealingTemperature(run_.cfg, ev.total(), ev.problem().numOps(), run_.stop.fraction());
      // An improvement reaches the writer at most once per write interval.
      if (pendingOffer && run_.dl.elapsed() - lastOffer >= run_.cfg.write_interval_s) {
        best.snapshot(ev);
        run_.progress.improved(best.s, best.latency, who);
        lastOffer = run_.dl.elapsed();
        pendingOffer = false;
      }
    }
    ++local;
    // Propose.
    const size_t mi = pickMove();
    Change c;
    if (!moves_[mi]->propose(ev, rng_, c)) {
      // No enabled move has applied to this schedule in many tries: it never will (the moves
      // depend only on the schedule, which nothing changes). Say so rather than spin silently.
      if (local >= kNoMoveTries && proposals == 0) {
        warnNoMove();
        break;
      }
      continue;
    }
    ++proposals;
    // Price (an evaluation taken from the budget first: none is left under --max-evals, stop).
    if (!run_.takeEvaluations(id_)) break;
    DeltaEval d = ev.evaluate(c);
    MoveStats& st = stats_[mi];
    ++st.evaluations;
    ++sinceImprove;
    ++sinceSync;
    if (!d.valid) continue;
    ++st.valid;
    // Accept.
    if (accept(d.delta, T)) {
      if (!best.improvedBy(d.total)) best.snapshot(ev);  // the current best is about to be left
      ev.apply(c, d);
      ++st.applied;
      run_.stats.accepted.fetch_add(1, std::memory_order_relaxed);
      if (best.improvedBy(ev.total())) {
        best.latency = ev.total();
        best.is_current = true;
        ++st.improvements;
        sinceImprove = 0;
        pendingOffer = true;
      }
    }
    if (sinceSync >= syncEvery) {
      sinceSync = 0;
      offerBestToPool();
      // Another worker is ahead of this one's best: continue from its schedule (with several
      // annealers on one funnel, the one behind joins the leader).
      Schedule s;
      if (run_.cfg.sa_adopt_pool_best && run_.adoptIfBetter(id_, best.latency, s)) {
        ev.reset(s);
        best = LazyBest{ev.total(), ev.schedule()};
        sinceImprove = 0;
      }
    }
    if (sinceImprove >= run_.cfg.sa_restart_after) {
      sinceImprove = 0;
      Schedule s;
      double l;
      offerBestToPool();
      if (run_.poolOf(id_).sample(rng_, s, l)) ev.reset(s);
    }
  }
  offerBestToPool();
  run_.progress.improved(best.s, best.latency, who);
  return best.latency;
}

void Annealer::reportStats() const {
  for (size_t i = 0; i < moves_.size(); ++i) run_.stats.addMoves(moves_[i]->name(), stats_[i]);
}

void Annealer::warnNoMove() const {
  std::string names;
  for (const auto& m : moves_) {
    if (!names.empty()) names += ", ";
    names += m->name();
  }
  run_.progress.warnOnce("no enabled move applies to this schedule (enabled: " + names +
                         "); the annealing workers stop");
}

}  // namespace mlsys
