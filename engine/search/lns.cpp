#include "engine/search/lns.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "cost/bound/bound.h"
#include "cost/pricing/granularity.h"
#include "cost/pricing/subgraph.h"
#include "engine/base/limits.h"
#include "engine/exact/exact.h"
#include "engine/search/regions.h"
#include "engine/search/window.h"
#include "moves/moves.h"

namespace mlsys {
namespace {

// The exact solver's limit on the ops of one problem (engine/base/limits.h).
constexpr int kMaxWindowOps = kExactMaxOps;

}  // namespace

Lns::Lns(SearchRun& run, int worker_id) : run_(run), id_(worker_id), rng_(mixSeed(run.seed, worker_id, 3)) {}

void Lns::improved(const IncrementalEvaluator& ev, MoveStats& by) {
  if (best_ >= 0 && !improves(ev.total(), best_)) return;
  best_ = ev.total();
  ++by.improvements;
  run_.offer(id_, ev.schedule(), ev.total());
  run_.progress.improved(ev.schedule(), ev.total(), workerKindName(WorkerKind::Lns));
}

bool Lns::run(IncrementalEvaluator& ev, Schedule& start) {
  if (solveWhole(ev, start)) return true;
  windows(ev, start, std::numeric_limits<double>::infinity());
  return false;
}

bool Lns::raisesBound(const Problem& p, const SearchConfig& cfg) {
  return cfg.exact_full_space && p.numOps() <= std::min(cfg.lns_whole_graph_ops, kMaxWindowOps);
}

bool Lns::solveWhole(IncrementalEvaluator& ev, Schedule& start) {
  const Problem& p = run_.p;
  const SearchConfig& cfg = run_.cfg;
  ev.reset(start);
  if (!ev.valid()) return false;
  best_ = ev.total();
  // Whole graph: the exact solver over the budget, from the current schedule.
  if (p.numOps() > std::min(cfg.lns_whole_graph_ops, kMaxWindowOps)) return false;
  ExactOptions o;
  o.max_ops = kMaxWindowOps;
  Schedule inc = ev.schedule();
  o.incumbent = &inc;
  o.greedy_incumbent = false;
  o.full_space = cfg.exact_full_space;
  takePricings(o);
  ExactResult r = solveExact(p, ev.model(), o, [this] { return run_.stop.stopNow(); });
  // Over the spec's whole space the exact solver's lower bound holds for every schedule, unless it
  // priced a configuration below a floor it pruned with (then none of its proofs count).
  if (r.stats.lb_violations > 0) {
    run_.progress.guard().exactViolation("the exact solver (whole graph)", static_cast<long>(r.stats.lb_violations),
                                         &inc, ev.total());
  } else if (o.full_space && r.found) {
    run_.progress.raiseBound(r.lower_bound, "the exact solver (whole graph)");
  }
  ++stats_.evaluations;
  run_.countBatch(id_, r.stats.configs_priced);
  if (r.found && r.latency < ev.total()) {
    ev.reset(r.schedule);
    if (ev.valid()) improved(ev, stats_);
  }
  start = ev.schedule();
  return r.proven_optimal;
}

void Lns::windows(IncrementalEvaluator& ev, Schedule& start, double until) {
  const SearchConfig& cfg = run_.cfg;
  if (!startFrom(ev, start, until)) return;
  if (size_ < cfg.lns_window_ops_min) size_ = cfg.lns_window_ops_min;
  while (!run_.stop.stopNow() && run_.dl.elapsed() < until) {
    // Adopt a better schedule another worker found (SearchRun::adoptIfBetter, the one policy).
    if (Schedule s; run_.adoptIfBetter(id_, ev.total(), s) && !startFrom(ev, s, until)) return;
    size_t seedKey = 0;
    const int seed = cfg.lns_guided > 0 && rand01(rng_) < cfg.lns_guided ? guidedSeed(ev, seedKey, until) : -1;
    // A third of the windows, with lns.reader_window_seconds, try a reader window first, from the
    // subgraph farthest above its part floor not tried yet at this size (guidedSeed).
    // (With lns.adaptive the reader windows are a kind of slice of their own: readerWindows.)
    const bool readers = cfg.lns_reader_window_seconds > 0 && !cfg.lns_adaptive && randBelow(rng_, 3) == 2;
    size_t readerKey = 0;
    double excess = 0;
    const int readerSeed = readers ? guidedSeed(ev, readerKey, until, &excess) : -1;
    std::vector<int> idx = readerSeed >= 0 ? readerWindow(ev, readerSeed, excess) : std::vector<int>{};
    const bool reader = !idx.empty();
    if (!reader) idx = (rng_() & 1) ? consecutiveWindow(ev, size_, seed) : regionWindow(ev, size_, seed);
    bool better = !idx.empty() &&
                  window(ev, idx, reader ? readerSeconds() : cfg.lns_window_seconds, reader ? readerStats_ : stats_);
    if (!better && seed >= 0) markTried(seedKey);
    if (!better && readerSeed >= 0) markTried(readerKey);
    if (better) {
      stall_ = 0;
      cycleImproved_ = true;
      improved(ev, reader ? readerStats_ : stats_);
    } else if (++stall_ >= cfg.lns_stall_windows) {
      stall_ = 0;
      if (++size_ > cfg.lns_window_ops_max) {
        size_ = cfg.lns_window_ops_min;
        // A whole round of windows: polish the traversal orders before moving on.
        if (!cycleImproved_ && polishTraversals(ev, 0, ev.size() - 1)) improved(ev, stats_);
        cycleImproved_ = false;
        Schedule s;
        double l;
        if (run_.poolOf(id_).sample(rng_, s, l)) ev.reset(s);
        if (!ev.valid()) return;
      }
    }
  }
  start = ev.schedule();
}

double Lns::readerSeconds() const {
  const double budget = run_.dl.elapsed() + run_.dl.remaining();
  return std::min(run_.cfg.lns_reader_window_seconds, std::max(run_.cfg.lns_window_seconds, budget / 10));
}

bool Lns::startFrom(IncrementalEvaluator& ev, const Schedule& s, double until) {
  ev.reset(s);
  if (!ev.valid()) return false;
  replay(ev, until);
  return true;
}

void Lns::readerWindows(IncrementalEvaluator& ev, Schedule& start, double until) {
  if (run_.cfg.lns_reader_window_seconds <= 0 || !startFrom(ev, start, until)) return;
  while (!run_.stop.stopNow() && run_.dl.elapsed() < until) {
    if (Schedule s; run_.adoptIfBetter(id_, ev.total(), s) && !startFrom(ev, s, until)) return;
    size_t key = 0;
    double excess = 0;
    const int seed = guidedSeed(ev, key, until, &excess);
    if (seed < 0) break;  // every subgraph above its floor tried: the slice ends (its yield says so)
    const std::vector<int> idx = readerWindow(ev, seed, excess);
    if (!idx.empty() && window(ev, idx, readerSeconds(), readerStats_)) {
      improved(ev, readerStats_);
      continue;  // the seed may be above its floor still: the schedule changed, so may its key
    }
    markTried(key);
  }
  if (ev.valid()) start = ev.schedule();
}

void Lns::markTried(size_t key) {
  if (seeded_.size() >= 1000000) seeded_.clear();  // a bounded memory: forgetting only costs a retry
  seeded_.insert(key);
}

int Lns::guidedSeed(const IncrementalEvaluator& ev, size_t& key, double until, double* excessOut) {
  const std::function<bool()> stop = [&] { return run_.stop.stopNow() || run_.dl.elapsed() >= until; };
  const auto& sgs = ev.schedule().subgraphs;
  const int n = ev.size(), scan = std::min(n, kGuidedScan);
  const int from = n > kGuidedScan ? static_cast<int>(randBelow(rng_, static_cast<uint64_t>(n))) : 0;
  auto hashOf = [](const std::vector<i64>& v) {
    return std::hash<std::string_view>{}(
        std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(i64)));
  };
  int best = -1;
  double most = 0;
  std::vector<i64> sk;
  for (int j = 0; j < scan && !stop(); ++j) {
    const int i = (from + j) % n;
    subgraphKey(sgs[i], ev.retainedInto(i), sk);
    sk.push_back(size_);
    const size_t k = hashOf(sk);
    if (seeded_.count(k)) continue;
    std::vector<OpId> ops = sgs[i].ops;
    std::sort(ops.begin(), ops.end());
    const size_t fk = hashOf(std::vector<i64>(ops.begin(), ops.end()));
    auto it = floors_.find(fk);
    if (it == floors_.end()) {
      // partFloor takes the ops in topological order.
      std::sort(ops.begin(), ops.end(), [&](OpId a, OpId b) { return run_.p.topo_pos[a] < run_.p.topo_pos[b]; });
      // A heuristic's figure, not a claim; one cut short by the stop (lower) is not kept.
      const double f = partFloor(run_.p, ev.model(), ops, nullptr, {}, &stop).value;
      if (stop()) break;
      if (floors_.size() >= kMaxFloors) floors_.clear();
      it = floors_.emplace(fk, f).first;
    }
    const double excess = ev.latency(i) - it->second;
    if (excess > most) most = excess, best = i, key = k;
  }
  if (excessOut) *excessOut = most;
  return best;
}

std::vector<int> Lns::consecutiveWindow(const IncrementalEvaluator& ev, int size, int seed) {
  const int n = ev.size();
  const auto& sgs = ev.schedule().subgraphs;
  std::unordered_set<OpId> ops;
  auto fits = [&](int i) {
    size_t extra = 0;
    for (OpId o : sgs[i].ops) extra += !ops.count(o);
    return ops.size() + extra <= static_cast<size_t>(size);
  };
  auto add = [&](int i) { ops.insert(sgs[i].ops.begin(), sgs[i].ops.end()); };
  int first = seed >= 0 ? seed : static_cast<int>(randBelow(rng_, static_cast<uint64_t>(n))), last = first;
  add(first);
  if (ops.size() > static_cast<size_t>(kMaxWindowOps)) return {};
  while (true) {
    bool left = first > 0 && fits(first - 1), right = last + 1 < n && fits(last + 1);
    if (!left && !right) break;
    if (left && (!right || (rng_() & 1))) add(--first);
    else add(++last);
  }
  // Retentions across the ends: include their partners while they fit.
  while (first > 0 && !sgs[first - 1].retain.empty() && fits(first - 1)) add(--first);
  while (last + 1 < n && !sgs[last].retain.empty() && fits(last + 1)) add(++last);
  if (ops.size() < 2) return {};
  std::vector<int> idx;
  for (int i = first; i <= last; ++i) idx.push_back(i);
  return idx;
}

std::vector<int> Lns::readerWindow(const IncrementalEvaluator& ev, int seed, double excess) {
  const Problem& p = run_.p;
  const int n = ev.size(), s = seed;
  if (s < 0 || s >= n) return {};
  std::vector<TensorId> cands;  // loaded here, made by an op, read by another op too
  for (TensorId t : ev.info(s).boundary)
    if (p.producer[t] >= 0 && p.consumers[t].size() >= 2 &&
        static_cast<double>(p.size(t)) / static_cast<double>(p.bandwidth) >= excess / 2)
      cands.push_back(t);
  if (cands.empty()) return {};
  const TensorId t = *std::max_element(cands.begin(), cands.end(), [&](TensorId a, TensorId b) {
    return p.size(a) < p.size(b);  // the largest load
  });
  const int maker = ev.lastWriterBefore(t, s);
  if (maker < 0) return {};
  const auto& sgs = ev.schedule().subgraphs;
  // The first subgraph that runs each op (one pass, not one per reader: t may have thousands).
  std::vector<int> first(p.numOps(), -1);
  for (int i = n - 1; i >= 0; --i)
    for (OpId o : sgs[i].ops) first[o] = i;
  std::vector<int> idx = {maker, s};
  std::unordered_set<OpId> ops;
  for (int i : idx) ops.insert(sgs[i].ops.begin(), sgs[i].ops.end());
  for (OpId d : p.consumers[t]) {
    if (first[d] < 0 || std::find(idx.begin(), idx.end(), first[d]) != idx.end()) continue;
    idx.push_back(first[d]);
    ops.insert(sgs[first[d]].ops.begin(), sgs[first[d]].ops.end());
    if (ops.size() > static_cast<size_t>(kMaxWindowOps)) return {};
  }
  std::sort(idx.begin(), idx.end());
  if (idx.size() < 3) return {};
  return idx;
}

std::vector<int> Lns::regionWindow(const IncrementalEvaluator& ev, int size, int seed) {
  const Problem& p = run_.p;
  const int n = ev.size();
  const auto& sgs = ev.schedule().subgraphs;
  std::unordered_map<OpId, std::vector<int>> where;  // op -> the subgraphs that run it
  for (int i = 0; i < n; ++i)
    for (OpId o : sgs[i].ops) where[o].push_back(i);
  std::unordered_set<OpId> ops;
  std::unordered_set<int> chosen;
  // The ops next to the region through a tensor, not in it, each listed once (`listed`; `near`
  // skips the region's own) and tried at most once: kept as they come, so that growing costs
  // O(the region's neighbours), where recollecting them for every try cost O(neighbours) per try
  // (a tensor read by 20,000 ops: 20,000 tries of 20,000 each, tens of seconds without a poll).
  std::vector<OpId> frontier;
  std::unordered_set<OpId> listed;
  auto neighbours = [&](OpId o) {
    auto near = [&](OpId x) {
      if (x >= 0 && !ops.count(x) && listed.insert(x).second) frontier.push_back(x);
    };
    for (TensorId t : p.ops[o].inputs) near(p.producer[t]);
    for (TensorId t : p.ops[o].outputs)
      for (OpId c : p.consumers[t]) near(c);
  };
  auto tryAdd = [&](OpId o) {  // every subgraph that runs o, if the union fits
    std::vector<OpId> extra;
    for (int i : where[o])
      if (!chosen.count(i))
        for (OpId x : sgs[i].ops)
          if (!ops.count(x) && std::find(extra.begin(), extra.end(), x) == extra.end()) {
            extra.push_back(x);
            if (ops.size() + extra.size() > static_cast<size_t>(size)) return false;
          }
    for (int i : where[o]) chosen.insert(i);
    ops.insert(extra.begin(), extra.end());
    for (OpId x : extra) neighbours(x);
    return true;
  };
  const int s0 = seed >= 0 ? seed : static_cast<int>(randBelow(rng_, static_cast<uint64_t>(n)));
  if (!tryAdd(sgs[s0].ops.front())) return {};
  // A neighbour drawn at random, tried once; the region is full when it holds `size` ops (every
  // addition adds at least the op drawn).
  while (!frontier.empty() && ops.size() < static_cast<size_t>(size)) {
    const size_t j = randBelow(rng_, frontier.size());
    const OpId o = frontier[j];
    frontier[j] = frontier.back();
    frontier.pop_back();
    if (!ops.count(o)) tryAdd(o);
  }
  if (ops.size() < 2) return {};
  std::vector<int> idx(chosen.begin(), chosen.end());
  std::sort(idx.begin(), idx.end());
  return idx;
}

bool Lns::window(IncrementalEvaluator& ev, const std::vector<int>& idx, double seconds, MoveStats& by) {
  const Problem& p = run_.p;
  const Schedule& cur = ev.schedule();
  std::vector<OpId> ops;
  for (int i : idx) ops.insert(ops.end(), cur.subgraphs[i].ops.begin(), cur.subgraphs[i].ops.end());
  // A window solved to optimality before, with the same subgraphs, has nothing new to give.
  Schedule here;
  for (int i : idx) here.subgraphs.push_back(cur.subgraphs[i]);
  const std::string key = ElitePool::encode(here);
  if (solved_.count(key)) return false;
  SubProblem w;
  try {
    w = extractSubProblem(p, ops);
  } catch (const std::exception&) {  // a sub-problem the parser's checks reject: skip the window
    return false;
  }
  Schedule inc = toSub(w, cur, idx);
  const Evaluation incEval = evaluateSchedule(w.p, inc, ev.model());
  ExactOptions o;
  o.max_ops = kMaxWindowOps;
  o.incumbent = incEval.valid ? &inc : nullptr;
  o.greedy_incumbent = !incEval.valid;
  o.every_side = run_.cfg.lns_every_side;
  // Not the mirrored starts here: they are explicit orders, so a subgraph given one keys the cost
  // cache by its whole order and leaves the granularity move's reach until a traversal move
  // resets it; measured, they cost transformer-n150-s12 1-2% at 30 s (bench/RESULTS.md).
  o.mirrors = false;
  takePricings(o);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  ExactResult r =
      solveExact(w.p, ev.model(), o, [&] { return run_.stop.stopNow() || std::chrono::steady_clock::now() > until; });
  ++by.evaluations;
  run_.countBatch(id_, std::max<int64_t>(1, r.stats.configs_priced));
  if (r.stats.lb_violations > 0) {  // a window's exact price below a floor it pruned with
    run_.progress.guard().exactViolation("the exact solver (an LNS window)", static_cast<long>(r.stats.lb_violations),
                                         &inc, incEval.total);
    r.proven_optimal = false;
  }
  if (!r.found || (incEval.valid && !improves(r.latency, incEval.total))) {
    if (r.proven_optimal && solved_.size() < 1000000) solved_.insert(key);
    return false;
  }
  ++by.valid;
  const std::vector<SubgraphSched> block = toFull(w, r.schedule).subgraphs;
  if (!spliceIn(ev, idx, block)) return false;
  ++by.applied;
  Logged entry;
  for (const SubgraphSched& sg : here.subgraphs) entry.replaced.push_back(sg.ops);
  entry.block = block;
  if (log_.size() >= kMaxLogged) log_.pop_front();
  log_.push_back(std::move(entry));
  return true;
}

bool Lns::spliceIn(IncrementalEvaluator& ev, const std::vector<int>& idx, const std::vector<SubgraphSched>& block,
                   bool strict) {
  // Where component regions apply (RegionSearch::applies: lns.component_regions, a graph of 200 ops or
  // more), a window whose subgraphs lie apart may also go back interleaved with the rest.
  Splice sp = cheapestSplice(run_.p, ev, idx, block,
                             run_.cfg.lns_component_regions && run_.p.numOps() >= kComponentRegionsMinOps);
  if (!sp.delta.valid || (strict && !(sp.delta.delta < 0))) return false;
  const double oldTotal = ev.total();
  const Schedule backup = deltaWorsens(sp.delta.delta, oldTotal) ? ev.schedule() : Schedule{};
  ev.apply(sp.change, sp.delta);  // better, as good (a sideways step), or worse until retentions return
  for (auto [from, to] : sp.runs(static_cast<int>(block.size()))) {
    if (run_.stop.stopNow()) break;  // the splice stands or is undone below; the rest is polish
    retainAcross(ev, to);
    retainAcross(ev, from - 1);
    polishTraversals(ev, from, to);
  }
  if (improves(ev.total(), oldTotal)) return true;
  if (worsens(ev.total(), oldTotal)) ev.reset(backup);
  return false;
}

void Lns::logGain(const std::vector<std::vector<OpId>>& replaced, const std::vector<SubgraphSched>& block) {
  if (log_.size() >= kMaxLogged) log_.pop_front();
  log_.push_back(Logged{replaced, block});
}

bool Lns::replay(IncrementalEvaluator& ev, double until) {
  if (log_.empty() || !ev.valid()) return false;
  std::map<std::vector<OpId>, int> at;  // op list -> its subgraph's position
  auto index = [&] {
    at.clear();
    for (int i = 0; i < ev.size(); ++i) at.emplace(ev.schedule().subgraphs[i].ops, i);
  };
  // The positions of an entry's subgraphs, if the schedule runs each as it was (checked against
  // the schedule itself: a splice that left it as cheap may have moved subgraphs).
  auto locate = [&](const Logged& e, std::vector<int>& idx) {
    idx.clear();
    for (const auto& ops : e.replaced) {
      auto f = at.find(ops);
      if (f == at.end() || f->second >= ev.size() || ev.schedule().subgraphs[f->second].ops != ops) return false;
      idx.push_back(f->second);
    }
    std::sort(idx.begin(), idx.end());
    return std::adjacent_find(idx.begin(), idx.end()) == idx.end();
  };
  index();
  bool cheaper = false, stale = false;  // stale: a splice changed the schedule since index()
  std::vector<int> idx;
  for (const Logged& e : log_) {  // kept after a replay: a schedule adopted later may run them again
    if (run_.stop.stopNow() || run_.dl.elapsed() >= until) break;
    if (!locate(e, idx)) {
      if (!stale) continue;
      index();  // positions moved: look again
      stale = false;
      if (!locate(e, idx)) continue;
    }
    ++replayStats_.evaluations;
    const double total = ev.total();
    const int size = ev.size();
    if (spliceIn(ev, idx, e.block, true)) {
      ++replayStats_.applied, cheaper = true;
      index();
      stale = false;
    } else if (ev.total() != total || ev.size() != size) {
      stale = true;  // kept as cheap (within the tolerance): subgraphs may have moved
    }
  }
  if (cheaper) improved(ev, replayStats_);
  return cheaper;
}

void Lns::reportStats() const {
  run_.stats.addMoves("lns-window", stats_);
  if (polishStats_.evaluations > 0) run_.stats.addMoves("lns-polish", polishStats_);
  if (replayStats_.evaluations > 0) run_.stats.addMoves("lns-replay", replayStats_);
  if (readerStats_.evaluations > 0) run_.stats.addMoves("lns-reader", readerStats_);
}

}  // namespace mlsys
