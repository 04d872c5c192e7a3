#include "engine/search.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>

#include "cost/json_util.h"
#include "engine/construct.h"
#include "engine/granularity.h"
#include "engine/pool.h"
#include "moves/move.h"

namespace mlsys {

std::vector<OpId> chainTopoOrder(const Problem& p) {
  // Prefer a ready consumer of the op just scheduled, then the lowest (original topo) position.
  // The ready ops that consume an output of the last op are exactly those its scheduling made
  // ready, so a heap by topo position for the rest keeps this O(n log n) (a scan of the ready
  // list per op was quadratic: 55 s on 200,000 ops).
  const int n = p.numOps();
  std::vector<int> indeg(n, 0);
  for (int o = 0; o < n; ++o)
    for (TensorId t : p.ops[o].inputs)
      if (p.producer[t] >= 0) ++indeg[o];
  auto later = [&](OpId a, OpId b) { return p.topo_pos[a] > p.topo_pos[b]; };
  std::priority_queue<OpId, std::vector<OpId>, decltype(later)> ready(later);
  for (int o = 0; o < n; ++o)
    if (!indeg[o]) ready.push(o);
  std::vector<OpId> order, fresh;
  order.reserve(static_cast<size_t>(n));
  OpId next = -1;
  while (next >= 0 || !ready.empty()) {
    OpId o = next;
    if (o < 0) {
      o = ready.top();
      ready.pop();
    }
    order.push_back(o);
    fresh.clear();
    for (TensorId t : p.ops[o].outputs)
      for (OpId c : p.consumers[t])
        if (--indeg[c] == 0) fresh.push_back(c);
    next = -1;
    for (OpId c : fresh)
      if (next < 0 || p.topo_pos[c] < p.topo_pos[next]) next = c;
    for (OpId c : fresh)
      if (c != next) ready.push(c);
  }
  return order;
}

// ---------------------------------------------------------------------------------------------
// Beam search. A partial schedule covers a prefix of `order`; it is extended by one subgraph made
// of the next L ops (L = 1..max_segment), priced with its best granularity among a candidate
// set. A segment is admissible only if every tensor it consumes internally has no consumer after
// it (otherwise that tensor would be ephemeral and unavailable later, V5), and every boundary
// input is a graph input, written earlier, or retained by the previous subgraph. Each extension
// is tried without and with retention of the previous subgraph's outputs that only the new
// segment reads. The B cheapest partial schedules are kept per prefix length.
namespace {

// A partial schedule is a persistent chain of subgraphs (shared tails), so that extending one
// costs O(segment), not O(prefix): the beam is linear in the number of ops.
struct BeamNode {
  SubgraphSched sg;
  double lat = 0;
  std::shared_ptr<const BeamNode> parent;
};

struct BeamState {
  double cost = 0;
  std::shared_ptr<const BeamNode> tail;  // the last subgraph (nullptr: empty prefix)
};

// Memo of bestGranFor per (segment start, length, retained-in, retained-out).
struct GranMemo {
  std::map<std::vector<i64>, std::optional<SubgraphSched>> m;
  bool get(IncrementalEvaluator& ev, int i, SubgraphSched& sg, const std::vector<TensorId>& rin) {
    std::vector<i64> key = {i, static_cast<i64>(sg.ops.size()), static_cast<i64>(rin.size())};
    key.insert(key.end(), rin.begin(), rin.end());
    key.push_back(-1);
    key.insert(key.end(), sg.retain.begin(), sg.retain.end());
    key.push_back(sg.ops.front());
    auto it = m.find(key);
    if (it == m.end()) {
      SubgraphSched s = sg;
      bool ok = bestGranularityCached(ev, s, rin);
      it = m.emplace(std::move(key), ok ? std::optional<SubgraphSched>(s) : std::nullopt).first;
    }
    if (!it->second) return false;
    sg = *it->second;
    return true;
  }
};

}  // namespace

bool beamConstruct(const Problem& p, const SearchConfig& cfg, const std::vector<OpId>& order,
                   const std::function<bool()>& stop, IncrementalEvaluator& ev, Schedule& out, double& latency) {
  const int n = static_cast<int>(order.size());
  std::vector<int> pos(p.numOps());
  for (int i = 0; i < n; ++i) pos[order[i]] = i;
  std::vector<std::vector<BeamState>> beam(n + 1);
  beam[0].push_back(BeamState{});
  static const std::vector<TensorId> kNone;
  GranMemo memo;
  auto insert = [&](std::vector<BeamState>& b, BeamState&& s) {
    if (static_cast<int>(b.size()) >= cfg.beam_width && s.cost >= b.back().cost) return;
    auto it = std::upper_bound(b.begin(), b.end(), s.cost, [](double c, const BeamState& x) { return c < x.cost; });
    b.insert(it, std::move(s));
    if (static_cast<int>(b.size()) > cfg.beam_width) b.pop_back();
  };
  for (int i = 0; i < n; ++i) {
    for (const BeamState& st : beam[i]) {
      for (int L = 1; L <= cfg.beam_max_segment && i + L <= n; ++L) {
        if (stop()) return false;
        SubgraphSched seg;
        seg.ops.assign(order.begin() + i, order.begin() + i + L);
        // Internal tensors must have no consumer after the segment.
        bool ok = true;
        std::vector<TensorId> bnd;
        for (OpId o : seg.ops) {
          for (TensorId t : p.ops[o].outputs)
            for (OpId c : p.consumers[t]) {
              bool inside = pos[c] >= i && pos[c] < i + L;
              bool consumedInside = false;
              for (OpId o2 : seg.ops)
                for (TensorId u : p.ops[o2].inputs) consumedInside |= u == t;
              if (!inside && consumedInside) ok = false;
            }
          for (TensorId t : p.ops[o].inputs) {
            OpId pr = p.producer[t];
            if (pr < 0 || !(pos[pr] >= i && pos[pr] < i + L)) bnd.push_back(t);
          }
        }
        if (!ok) continue;
        // Every boundary input is available: one produced earlier in the order was written to slow
        // memory unless the previous subgraph retains it (internal tensors have no later reader,
        // and a retained tensor is read only by the subgraph right after its producer's).
        const auto& rinPrev = st.tail ? st.tail->sg.retain : kNone;
        // Variant A: as is (the previous subgraph's retain set is already fixed).
        {
          SubgraphSched s = seg;
          if (memo.get(ev, i, s, rinPrev)) {
            const CachedCost& c = ev.cost(s, rinPrev);
            BeamState ns{st.cost + c.latency, nullptr};
            ns.tail = std::make_shared<const BeamNode>(BeamNode{std::move(s), c.latency, st.tail});
            insert(beam[i + L], std::move(ns));
          }
        }
        // Variant B: the previous subgraph retains its outputs that only this segment reads.
        if (st.tail) {
          const SubgraphSched& prev = st.tail->sg;
          std::vector<TensorId> rout = prev.retain;
          for (OpId o : prev.ops)
            for (TensorId t : p.ops[o].outputs) {
              if (p.is_graph_output[t] || std::find(bnd.begin(), bnd.end(), t) == bnd.end()) continue;
              bool onlyHere = true;
              for (OpId c : p.consumers[t])
                if (!(pos[c] >= i && pos[c] < i + L)) {
                  bool inPrev = std::find(prev.ops.begin(), prev.ops.end(), c) != prev.ops.end();
                  if (!inPrev) onlyHere = false;
                }
              if (onlyHere && std::find(rout.begin(), rout.end(), t) == rout.end()) rout.push_back(t);
            }
          if (rout.size() == prev.retain.size()) continue;
          std::sort(rout.begin(), rout.end());
          SubgraphSched prev2 = prev;
          prev2.retain = rout;
          const auto& rin2 = st.tail->parent ? st.tail->parent->sg.retain : kNone;
          if (!memo.get(ev, pos[prev2.ops.front()], prev2, rin2)) continue;
          const CachedCost& pc = ev.cost(prev2, rin2);
          SubgraphSched s = seg;
          if (!memo.get(ev, i, s, rout)) continue;
          const CachedCost& c = ev.cost(s, rout);
          BeamState ns{st.cost + pc.latency - st.tail->lat + c.latency, nullptr};
          auto prevNode = std::make_shared<const BeamNode>(BeamNode{std::move(prev2), pc.latency, st.tail->parent});
          ns.tail = std::make_shared<const BeamNode>(BeamNode{std::move(s), c.latency, std::move(prevNode)});
          insert(beam[i + L], std::move(ns));
        }
      }
    }
    beam[i].clear();
    beam[i].shrink_to_fit();
  }
  if (beam[n].empty()) return false;
  out.subgraphs.clear();
  for (const BeamNode* x = beam[n][0].tail.get(); x; x = x->parent.get()) out.subgraphs.push_back(x->sg);
  std::reverse(out.subgraphs.begin(), out.subgraphs.end());
  out.reported.clear();
  latency = beam[n][0].cost;
  return true;
}

// ---------------------------------------------------------------------------------------------
namespace {

struct Shared {
  const Problem& p;
  const SolveOptions& opt;
  const SearchConfig& cfg;
  Deadline& dl;
  OutputWriter& out;
  ElitePool pool;
  std::atomic<long> evals{0};
  std::atomic<long> accepted{0};  // applied SA moves
  std::atomic<bool> done{false};
  std::atomic<bool> warned_no_move{false};
  std::mutex mu;  // trace, stats, best bookkeeping
  FILE* trace = nullptr;
  double best = 1e300;
  double best_found_s = 0;
  std::map<std::string, MoveStats> moves;
  std::map<std::string, double> best_by_kind;

  Shared(const Problem& pp, const SolveOptions& o, const SearchConfig& c, Deadline& d, OutputWriter& w)
      : p(pp), opt(o), cfg(c), dl(d), out(w), pool(c.pool_size) {}

  bool stopNow() const {
    if (done.load(std::memory_order_relaxed) || Deadline::stop_requested.load(std::memory_order_relaxed)) return true;
    if (opt.max_evals > 0) return evals.load(std::memory_order_relaxed) >= opt.max_evals;
    return dl.remaining() <= out.stopMargin(cfg.margin_s);
  }
  double fraction() const {
    if (opt.max_evals > 0) return std::min(1.0, static_cast<double>(evals.load()) / static_cast<double>(opt.max_evals));
    return dl.fraction();
  }
  // A worker found a schedule it believes is a new best: offer it to the writer (which
  // re-checks it with the full evaluator) and record it.
  void improved(const Schedule& s, double lat, const std::string& who) {
    {
      std::lock_guard<std::mutex> lk(mu);
      auto it = best_by_kind.find(who);
      if (it == best_by_kind.end() || lat < it->second) best_by_kind[who] = lat;
      if (lat >= best) return;
    }
    double checked = out.offer(s, dl.elapsed());
    if (checked == OutputWriter::kInterrupted) return;  // a signal: the run is ending
    std::lock_guard<std::mutex> lk(mu);
    if (checked < 0) {
      std::cerr << "mlsys: internal error: " << who << " produced a schedule the full evaluator rejects; ignored\n";
      return;
    }
    if (checked < best) {
      best = checked;
      best_found_s = dl.elapsed();
      if (trace) {
        // Flushed line by line: the trace must survive a SIGKILL.
        std::fprintf(trace, "%.4f,%s,%s\n", dl.elapsed(), who.c_str(), formatDouble(checked).c_str());
        std::fflush(trace);
      }
    }
  }
};

class Worker {
 public:
  Worker(Shared& sh, int id, std::string kind, const Schedule& start)
      : sh_(sh), kind_(std::move(kind)), rng_(mixSeed(sh.opt.seed, id, 1)), acc_rng_(mixSeed(sh.opt.seed, id, 2)),
        ev_(sh.p, sh.cfg.model, static_cast<size_t>(sh.cfg.cache_entries)), start_(start) {
    for (const auto& [name, w] : sh.cfg.move_weights) {
      if (w <= 0) continue;
      auto m = makeMove(name);
      if (!m || !m->supports(sh.p)) continue;
      moves_.push_back(std::move(m));
      weights_.push_back(w);
      stats_.emplace_back();
    }
  }

  void run() {
    // Each phase starts with an O(n) rebuild of the evaluator: check the stop first.
    if (kind_ == "beam" && !sh_.stopNow()) runBeam();
    if (!sh_.stopNow()) runSA();
    std::lock_guard<std::mutex> lk(sh_.mu);
    for (size_t i = 0; i < moves_.size(); ++i) {
      auto& m = sh_.moves[moves_[i]->name()];
      m.evaluations += stats_[i].evaluations;
      m.valid += stats_[i].valid;
      m.applied += stats_[i].applied;
      m.improvements += stats_[i].improvements;
    }
  }

 private:
  static uint64_t mixSeed(uint64_t seed, int id, int stream) {
    uint64_t z = seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(id) * 0xbf58476d1ce4e5b9ULL + static_cast<uint64_t>(stream);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  void runBeam() {
    // Greedy constructions first (cheap), then the beam over two topological orders.
    {
      auto stop = [this] { return sh_.stopNow(); };
      ev_.reset(start_);
      chainFusion(ev_, stop);
      if (ev_.valid()) sh_.improved(ev_.schedule(), ev_.total(), "chain");
      greedyFusion(ev_, stop);
      if (ev_.valid()) {
        sh_.pool.offer(ev_.schedule(), ev_.total());
        sh_.improved(ev_.schedule(), ev_.total(), "greedy");
        bestLocal_ = ev_.total();
        start_ = ev_.schedule();
      }
    }
    // Two topological orders: the parser's (lowest id first) and a chain-following one.
    std::vector<std::vector<OpId>> orders = {chainTopoOrder(sh_.p), sh_.p.topo};
    if (orders[0] == orders[1]) orders.pop_back();
    for (const auto& order : orders) {
      if (sh_.stopNow() || (bestLocal_ >= 0 && sh_.fraction() > sh_.cfg.beam_time_share)) return;
      Schedule s;
      double lat = 0;
      if (!beamConstruct(sh_.p, sh_.cfg, order, [this] { return sh_.stopNow(); }, ev_, s, lat)) continue;
      ev_.reset(s);
      if (!ev_.valid()) continue;
      sh_.pool.offer(ev_.schedule(), ev_.total());
      sh_.improved(ev_.schedule(), ev_.total(), "beam");
      if (ev_.total() < bestLocal_ || bestLocal_ < 0) {
        bestLocal_ = ev_.total();
        start_ = ev_.schedule();
      }
    }
  }

  void runSA() {
    ev_.reset(start_);
    if (!ev_.valid()) return;
    double best = ev_.total();
    Schedule bestS = ev_.schedule();
    // The best schedule is copied lazily: while the current schedule is the best one
    // (bestIsCurrent), the copy waits until a non-improving move is about to replace it or the
    // best is needed. Copying a 10,000-subgraph schedule on every improvement would dominate.
    bool bestIsCurrent = false;
    auto snapshot = [&] {
      if (!bestIsCurrent) return;
      bestS = ev_.schedule();
      best = ev_.total();
      bestIsCurrent = false;
    };
    auto offerBestToPool = [&] {
      snapshot();
      sh_.pool.offer(bestS, best);
    };
    long sinceImprove = 0, sinceSync = 0, local = 0, proposals = 0;
    double wsum = 0;
    for (double w : weights_) wsum += w;
    if (moves_.empty()) return;
    double lastOffer = -1;
    bool pendingOffer = false;
    double T = 0;
    const std::string who = "sa";
    while (true) {
      if ((local & 31) == 0) {
        if (sh_.stopNow()) break;
        double f = sh_.fraction();
        // Geometric cooling from t0 to t1 (relative to the current latency).
        T = ev_.total() * sh_.cfg.sa_t0 * std::pow(sh_.cfg.sa_t1 / sh_.cfg.sa_t0, f);
        if (pendingOffer && sh_.dl.elapsed() - lastOffer >= sh_.cfg.write_interval_s) {
          snapshot();
          sh_.improved(bestS, best, who);
          lastOffer = sh_.dl.elapsed();
          pendingOffer = false;
        }
      }
      ++local;
      // Roulette over move weights.
      double r = rand01(rng_) * wsum;
      size_t mi = 0;
      while (mi + 1 < moves_.size() && r >= weights_[mi]) r -= weights_[mi++];
      Change c;
      if (!moves_[mi]->propose(ev_, rng_, c)) {
        // No enabled move has applied to this schedule in many tries: it never will (the moves
        // depend only on the schedule, which nothing changes). Say so rather than spin silently.
        if (local >= kNoMoveTries && proposals == 0) {
          warnNoMove();
          break;
        }
        continue;
      }
      ++proposals;
      DeltaEval d = ev_.evaluate(c);
      sh_.evals.fetch_add(1, std::memory_order_relaxed);
      auto& st = stats_[mi];
      ++st.evaluations;
      ++sinceImprove;
      ++sinceSync;
      if (!d.valid) continue;
      ++st.valid;
      double u = rand01(acc_rng_);
      if (d.delta <= 0 || (T > 0 && u < std::exp(-d.delta / T))) {
        if (!(d.total < best - 1e-9 * best)) snapshot();
        ev_.apply(c, d);
        ++st.applied;
        sh_.accepted.fetch_add(1, std::memory_order_relaxed);
        if (ev_.total() < best - 1e-9 * best) {
          best = ev_.total();
          bestIsCurrent = true;
          ++st.improvements;
          sinceImprove = 0;
          pendingOffer = true;
        }
      }
      if (sinceSync >= sh_.cfg.sa_sync_every) {
        sinceSync = 0;
        offerBestToPool();
      }
      if (sinceImprove >= sh_.cfg.sa_restart_after) {
        sinceImprove = 0;
        Schedule s;
        double l;
        offerBestToPool();
        if (sh_.pool.sample(rng_, s, l)) ev_.reset(s);
      }
    }
    offerBestToPool();
    sh_.improved(bestS, best, who);
  }

  static constexpr long kNoMoveTries = 20000;
  void warnNoMove() {
    if (sh_.warned_no_move.exchange(true)) return;
    std::string names;
    for (const auto& m : moves_) {
      if (!names.empty()) names += ", ";
      names += m->name();
    }
    std::lock_guard<std::mutex> lk(sh_.mu);
    std::cerr << "warning: no enabled move applies to this schedule (enabled: " << names
              << "); the annealing workers stop\n";
  }

  Shared& sh_;
  std::string kind_;
  Rng rng_, acc_rng_;
  IncrementalEvaluator ev_;
  Schedule start_;
  double bestLocal_ = -1;
  std::vector<std::unique_ptr<Move>> moves_;
  std::vector<double> weights_;
  std::vector<MoveStats> stats_;
};

}  // namespace

SearchResult runSearch(const Problem& p, const SolveOptions& opt, const SearchConfig& cfg, Deadline& deadline,
                       OutputWriter& out, const Schedule& start) {
  Shared sh(p, opt, cfg, deadline, out);
  if (!opt.trace.empty()) {
    sh.trace = std::fopen(opt.trace.c_str(), "w");
    if (!sh.trace) throw InputError("--trace: cannot write '" + opt.trace + "'");
    std::fprintf(sh.trace, "seconds,worker,latency\n");
    std::fflush(sh.trace);
  }
  sh.best = out.best();
  sh.pool.offer(start, out.best());
  int threads = resolveThreads(opt.threads);
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < threads; ++i)
    workers.push_back(std::make_unique<Worker>(sh, i, cfg.workers[static_cast<size_t>(i) % cfg.workers.size()], start));
  // Progress monitor on the calling thread while the workers run.
  std::atomic<int> running{threads};
  tbb::task_group tg;
  for (auto& w : workers)
    tg.run([&w, &running] {
      w->run();
      running.fetch_sub(1);
    });
  std::thread monitor([&] {
    double next = cfg.log_interval_s;
    long lastEvals = 0, lastAcc = 0;
    double lastT = 0;
    while (running.load() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      double t = deadline.elapsed();
      // A best deferred by the write throttle goes to disk here, within write_interval_s + 20 ms.
      if (!Deadline::stop_requested.load()) out.flushDue(t);
      if (t < next || opt.quiet) continue;
      long e = sh.evals.load(), acc = sh.accepted.load();
      double rate = (e - lastEvals) / std::max(1e-9, t - lastT);
      double accRate = e > lastEvals ? 100.0 * (acc - lastAcc) / (e - lastEvals) : 0;
      lastEvals = e;
      lastAcc = acc;
      lastT = t;
      next = t + cfg.log_interval_s;
      std::lock_guard<std::mutex> lk(sh.mu);
      std::cerr << "[" << formatDouble(std::round(t * 10) / 10) << "s] best " << formatDouble(sh.best);
      for (const auto& [k, v] : sh.best_by_kind) std::cerr << "  " << k << " " << formatDouble(v);
      std::cerr << "  evals " << e << " (" << static_cast<long>(rate) << "/s, " << formatDouble(std::round(accRate * 10) / 10)
                << "% accepted)  pool " << sh.pool.size() << "\n";
    }
  });
  tg.wait();
  monitor.join();
  if (sh.trace) std::fclose(sh.trace);
  SearchResult r;
  r.evaluations = sh.evals.load();
  r.best_found_s = sh.best_found_s;
  r.moves = sh.moves;
  r.best_by_kind = sh.best_by_kind;
  return r;
}

}  // namespace mlsys
