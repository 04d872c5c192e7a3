#include "engine/search/beam.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "cost/pricing/granularity.h"
#include "engine/construct/construct.h"
#include "engine/construct/topo_order.h"
#include "engine/search/order_beam.h"

namespace mlsys {

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
                   const std::function<bool()>& stop, IncrementalEvaluator& ev, Schedule& out, double& latency,
                   BeamPace* pace) {
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
  // The pace: measured over at least `window` positions since the last change (a segment's cost
  // varies with its ops' shapes, and the run's other threads take the cores unevenly), the rest of
  // the order projected at that rate; the longest segment becomes what that projection says fits,
  // at least one op less and at most half as many at a time.
  int maxSeg = cfg.beam_max_segment;
  const int window = std::max(16, n / 50);
  int paceFrom = 0;
  double paceAt = pace ? pace->progress() : 0;
  for (int i = 0; i < n; ++i) {
    if (pace && maxSeg > 1 && i - paceFrom >= window) {
      const double now = pace->progress(), rest = (now - paceAt) / (i - paceFrom) * (n - i);
      if (now + rest > pace->until) {
        // A position's cost grows about linearly with the longest segment tried (no room left, or
        // a clock that did not move: as short as a step allows).
        const double fits = rest > 0 ? static_cast<double>(maxSeg) * std::max(0.0, pace->until - now) / rest : 0;
        maxSeg = std::clamp(static_cast<int>(fits), std::max(1, maxSeg / 2), maxSeg - 1);
        paceFrom = i;
        paceAt = now;
      }
    }
    for (const BeamState& st : beam[i]) {
      for (int L = 1; L <= maxSeg && i + L <= n; ++L) {
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
  if (pace) pace->narrowed_to = maxSeg;
  if (beam[n].empty()) return false;
  out.subgraphs.clear();
  for (const BeamNode* x = beam[n][0].tail.get(); x; x = x->parent.get()) out.subgraphs.push_back(x->sg);
  std::reverse(out.subgraphs.begin(), out.subgraphs.end());
  out.reported.clear();
  latency = beam[n][0].cost;
  return true;
}

void runBeamPhase(SearchRun& run, int worker_id, IncrementalEvaluator& ev, Schedule& start, int beam_index) {
  const std::function<bool()> stop = [&run] { return run.stop.stopNow(); };
  double bestLocal = -1;
  // Greedy constructions first (cheap), then the beam over two topological orders.
  ev.reset(start);
  chainFusion(ev, stop);
  if (ev.valid()) run.progress.improved(ev.schedule(), ev.total(), "chain");
  greedyFusion(ev, stop);
  if (ev.valid()) {
    run.offer(worker_id, ev.schedule(), ev.total());
    run.progress.improved(ev.schedule(), ev.total(), "greedy");
    bestLocal = ev.total();
    start = ev.schedule();
  }
  // Two topological orders: the parser's (lowest id first) and a chain-following one.
  std::vector<std::vector<OpId>> orders = {chainTopoOrder(run.p), run.p.topo};
  if (orders[0] == orders[1]) orders.pop_back();
  for (const auto& order : orders) {
    if (beam_index > 0) break;  // deterministic: the first beam worker's passes are the same
    if (stop() || (bestLocal >= 0 && run.stop.fraction() > run.cfg.beam_time_share)) return;
    Schedule s;
    double lat = 0;
    // Paced to end within beam.pace_share once a schedule exists (not under --max-evals, whose
    // runs are deterministic).
    BeamPace pace{[&run] { return run.stop.fraction(); }, run.cfg.beam_pace_share};
    const bool paced = bestLocal >= 0 && !run.stop.byEvaluations() && run.cfg.beam_pace_share > 0;
    if (!beamConstruct(run.p, run.cfg, order, stop, ev, s, lat, paced ? &pace : nullptr)) continue;
    ev.reset(s);
    if (!ev.valid()) continue;
    run.offer(worker_id, ev.schedule(), ev.total());
    run.progress.improved(ev.schedule(), ev.total(), workerKindName(WorkerKind::BeamThen));
    if (ev.total() < bestLocal || bestLocal < 0) {
      bestLocal = ev.total();
      start = ev.schedule();
    }
  }
  // The order-aware beam over the candidate library, its width doubling while its share of the
  // budget (beam.order_time_share) lasts (the candidates' prices are cached across passes). A
  // pass never runs past that share once a schedule exists, and a wider pass starts only if it
  // should end within it (each pass is expected to take at most twice the previous one).
  const SearchConfig& cfg = run.cfg;
  if (cfg.beam_order_width <= 0 || run.p.numOps() > cfg.beam_order_max_ops || stop()) return;
  const std::function<bool()> passStop = [&] {
    return stop() || (bestLocal >= 0 && run.stop.fraction() > cfg.beam_order_time_share);
  };
  CandidateLibrary lib(run.p, ev.model(), cfg.beam_library_ops, passStop);
  if (!lib.complete()) return;
  if (run.stop.byEvaluations()) lib.setTake([&run, worker_id] { return run.takeEvaluations(worker_id); });
  double last = 0;
  // Beam worker j starts at width order_width * 2^j: more threads, wider beams.
  for (int width = cfg.beam_order_width << std::min(beam_index, 9); width <= 4096; width *= 2) {
    const double total = run.dl.elapsed() + run.dl.remaining();
    if (passStop() || (bestLocal >= 0 && !run.stop.byEvaluations() && total > 0 &&
                       (run.dl.elapsed() + 2 * last) / total > cfg.beam_order_time_share))
      return;
    const double t0 = run.dl.elapsed();
    const size_t pricedBefore = lib.priced();
    Schedule s;
    double lat = 0;
    const bool built = orderBeam(run.p, lib, width, passStop, s, lat);
    // Each candidate priced counts as an evaluation (under --max-evals, taken before it is priced).
    run.countBatch(worker_id, static_cast<long>(lib.priced() - pricedBefore));
    if (!built) return;
    last = run.dl.elapsed() - t0;
    ev.reset(s);
    if (!ev.valid()) continue;
    run.offer(worker_id, ev.schedule(), ev.total());
    run.progress.improved(ev.schedule(), ev.total(), "order-beam");
    if (ev.total() < bestLocal || bestLocal < 0) {
      bestLocal = ev.total();
      start = ev.schedule();
    }
  }
}

}  // namespace mlsys
