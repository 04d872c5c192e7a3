#include "engine/construct/construct.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "cost/pricing/granularity.h"
#include "cost/pricing/incremental.h"
#include "engine/base/limits.h"
#include "engine/base/parallel.h"

namespace mlsys {

Schedule quickSchedule(const Problem& p, const ModelOptions& m) {
  Schedule s;
  for (OpId o : p.topo) {
    SubgraphSched sg;
    sg.ops = {o};
    sg.gran = firstFitting(p, m, o);
    s.subgraphs.push_back(std::move(sg));
  }
  return s;
}

namespace {

// Everything bestGranularity's answer depends on, with tensor ids replaced by local indices:
// per op its type, base cost and operands; per tensor its shape, whether it is a graph input or
// output, read outside the ops, retained in or out. Graphs built from repeated blocks (layers,
// heads) then price each distinct shape once. False if a retained tensor is not an operand.
bool shapeKey(const Problem& p, const std::vector<OpId>& ops, const std::vector<TensorId>& rin,
              const std::vector<TensorId>& rout, std::vector<i64>& key) {
  std::vector<TensorId> local;
  auto idx = [&](TensorId t) {
    auto it = std::find(local.begin(), local.end(), t);
    if (it != local.end()) return static_cast<i64>(it - local.begin());
    local.push_back(t);
    return static_cast<i64>(local.size() - 1);
  };
  key.clear();
  for (OpId o : ops) {
    const Op& op = p.ops[o];
    key.insert(key.end(), {-1, static_cast<i64>(op.type), op.base_cost, static_cast<i64>(op.inputs.size())});
    for (TensorId t : op.inputs) key.push_back(idx(t));
    for (TensorId t : op.outputs) key.push_back(idx(t));
  }
  auto in = [](const std::vector<TensorId>& v, TensorId t) { return std::find(v.begin(), v.end(), t) != v.end(); };
  for (TensorId t : rin)
    if (!in(local, t)) return false;
  for (TensorId t : rout)
    if (!in(local, t)) return false;
  for (TensorId t : local) {
    // Consumer lists hold distinct ops, so t is read outside iff it has more consumers than ops
    // of the set read it (a scan of its consumers per op was quadratic in the fan-out).
    size_t readers = 0;
    for (OpId o : ops) readers += std::count(p.ops[o].inputs.begin(), p.ops[o].inputs.end(), t);
    bool readOutside = p.consumers[t].size() > readers;
    key.insert(key.end(), {-2, p.heights[t], p.widths[t], p.producer[t] < 0, p.is_graph_output[t] ? 1 : 0, readOutside,
                           in(rin, t), in(rout, t)});
  }
  return true;
}

}  // namespace

Schedule baselineSchedule(const Problem& p, const ModelOptions& m, const Deadline* dl, const Schedule* quick,
                          bool descent) {
  Schedule s = quick ? *quick : quickSchedule(p, m);
  static const std::vector<TensorId> kNone;
  const std::function<bool()> timeUp = [&] { return dl && dl->expired(); };
  // Each subgraph's granularity: the full walk, or on large graphs the descent (construct.h).
  const auto choose = [&](const std::vector<OpId>& ops, const std::vector<TensorId>& rin,
                          const std::vector<TensorId>& rout) {
    return descent ? bestGranularityDescent(p, m, ops, rin, rout, timeUp)
                   : bestGranularity(p, m, ops, rin, rout, timeUp);
  };
  std::map<std::vector<i64>, GranChoice> memo;
  std::vector<i64> key;
  auto memoBest = [&](const std::vector<OpId>& ops, const std::vector<TensorId>& rin,
                      const std::vector<TensorId>& rout) {
    if (!shapeKey(p, ops, rin, rout, key)) return choose(ops, rin, rout);
    auto it = memo.find(key);
    if (it == memo.end()) {
      const GranChoice c = choose(ops, rin, rout);
      if (timeUp()) return c;  // cut short: not the best, not for the memo
      it = memo.emplace(key, c).first;
    }
    return it->second;
  };
  // Pass 1, each op alone: every distinct shape key once, in parallel (the thread count is the
  // caller's tbb::global_control); an op not reached before the deadline keeps its quick choice.
  const size_t n = s.subgraphs.size();
  std::vector<long> rep(n, -1);  // the subgraph whose answer this one shares
  std::vector<size_t> todo;
  std::vector<std::vector<i64>> keys(n);  // empty: no shape key
  {
    std::map<std::vector<i64>, size_t> first;
    for (size_t i = 0; i < n; ++i) {
      if ((i & 1023) == 1023 && timeUp()) return s;
      if (shapeKey(p, s.subgraphs[i].ops, kNone, kNone, keys[i])) {
        auto [it, fresh] = first.emplace(keys[i], i);
        if (!fresh) {
          rep[i] = static_cast<long>(it->second);
          continue;
        }
      } else {
        keys[i].clear();
      }
      todo.push_back(i);
    }
  }
  std::vector<GranChoice> choice(n);
  std::vector<char> done(n, 0);
  parallelFor(size_t{0}, todo.size(), [&](size_t j) {
    if (timeUp()) return;
    size_t i = todo[j];
    choice[i] = choose(s.subgraphs[i].ops, kNone, kNone);
    done[i] = 1;
  });
  for (size_t i = 0; i < n; ++i) {
    size_t from = rep[i] >= 0 ? static_cast<size_t>(rep[i]) : i;
    if (!done[from]) continue;
    const GranChoice& c = choice[from];
    if (c.found) {
      s.subgraphs[i].gran = c.g;
      s.subgraphs[i].trav = c.trav;
    }
  }
  if (timeUp()) return s;
  // The memo for the retention pass (only once there is time for it: 200,000 keys take ~0.1 s).
  for (size_t i = 0; i < n; ++i) {
    size_t from = rep[i] >= 0 ? static_cast<size_t>(rep[i]) : i;
    if (done[from] && !keys[i].empty()) memo.emplace(std::move(keys[i]), choice[from]);
  }
  // Retention: keep an output resident into the next subgraph when all its consumers are there.
  // `next`: the latency of subgraph i + 1 as it stands, when the pair (i, i + 1) priced it (it is
  // subgraph i of the next pair, with the same retained-in and retained-out sets): each subgraph is
  // priced once as it stands, not twice.
  double next = -1;
  for (size_t i = 0; i + 1 < s.subgraphs.size(); ++i) {
    if (timeUp()) return s;
    auto& a = s.subgraphs[i];
    auto& b = s.subgraphs[i + 1];
    double here = next;
    next = -1;
    for (TensorId t : p.ops[a.ops[0]].outputs) {
      if (p.is_graph_output[t] || p.consumers[t].empty()) continue;
      bool allNext = std::all_of(p.consumers[t].begin(), p.consumers[t].end(),
                                 [&](OpId c) { return std::find(b.ops.begin(), b.ops.end(), c) != b.ops.end(); });
      if (!allNext) continue;
      const auto& rinA = i ? s.subgraphs[i - 1].retain : kNone;
      std::vector<TensorId> rout = a.retain;
      rout.push_back(t);
      GranChoice ca = memoBest(a.ops, rinA, rout);
      GranChoice cb = memoBest(b.ops, rout, b.retain);
      if (!ca.found || !cb.found) continue;
      if (here < 0) here = costSubgraph(p, planSubgraph(p, m, a.ops, a.gran, rinA, a.retain), a.trav).latency;
      if (next < 0) next = costSubgraph(p, planSubgraph(p, m, b.ops, b.gran, a.retain, b.retain), b.trav).latency;
      if (ca.cost.latency + cb.cost.latency < here + next) {
        a.retain = rout;
        a.gran = ca.g;
        a.trav = ca.trav;
        b.gran = cb.g;
        b.trav = cb.trav;
        here = ca.cost.latency;
        next = cb.cost.latency;
      }
    }
  }
  return s;
}

}  // namespace mlsys

namespace mlsys {

namespace {

bool shareTensor(const Problem& p, const SubgraphSched& a, const SubgraphSched& b) {
  for (OpId x : a.ops)
    for (TensorId t : p.ops[x].outputs)
      for (OpId y : b.ops)
        for (TensorId u : p.ops[y].inputs)
          if (t == u) return true;
  return false;
}

}  // namespace

void greedyFusion(IncrementalEvaluator& ev, const std::function<bool()>& stop) {
  const Problem& p = ev.problem();
  // Pairs that did not merge, with what their merge is priced from (the two subgraphs as they are
  // and what is retained into the first), and its delta (infinite: no granularity fits): a later
  // pass skips them while these stay the same and the delta still does not improve the (lower)
  // total. A merge refused as invalid for the rest of the schedule (V5) is not recorded, nor any
  // on an invalid schedule. The passes after the first re-priced every such pair: on
  // gemm-chain-n5000 (seed 9001) greedy fusion took 6.4 s, now 1.2 s, to the same schedule.
  std::unordered_map<std::string, double> refused;
  const bool memo = ev.valid();
  auto pairKey = [&](int s) {
    std::vector<i64> a, b;
    subgraphKey(ev.schedule().subgraphs[s], ev.retainedInto(s), a);
    subgraphKey(ev.schedule().subgraphs[s + 1], {}, b);
    a.insert(a.end(), b.begin(), b.end());
    return std::string(reinterpret_cast<const char*>(a.data()), a.size() * sizeof(i64));
  };
  bool improved = true;
  while (improved && !stop()) {
    improved = false;
    for (int s = 0; s + 1 < ev.size() && !stop(); ++s) {
      const auto& A = ev.schedule().subgraphs[s];
      const auto& B = ev.schedule().subgraphs[s + 1];
      if (!shareTensor(p, A, B)) continue;
      std::string key = memo ? pairKey(s) : std::string();
      if (auto r = refused.find(key); memo && r != refused.end() && !deltaImproves(r->second, ev.total())) continue;
      SubgraphSched m;
      m.ops = A.ops;
      for (OpId o : B.ops)
        if (std::find(m.ops.begin(), m.ops.end(), o) == m.ops.end()) m.ops.push_back(o);
      m.retain = B.retain;
      if (!bestGranularityCached(ev, m, ev.retainedInto(s), {A.gran, B.gran})) {
        if (memo) refused[std::move(key)] = std::numeric_limits<double>::infinity();
        continue;
      }
      Change c{s, 2, {m}};
      DeltaEval d = ev.evaluate(c);
      if (d.valid && deltaImproves(d.delta, ev.total())) {
        ev.apply(c, d);
        improved = true;
      } else if (memo && d.valid) {
        refused[std::move(key)] = d.delta;
      }
    }
  }
}

double chainTraffic(i64 H, i64 W, i64 K1, i64 K2, i64 h, i64 w) {
  const double rows = static_cast<double>((H + h - 1) / h), cols = static_cast<double>((W + w - 1) / w);
  // A: h x K1 per tile row (identical across the row's tiles and k-steps);
  // per tile: B strips K1 x k and C strips k x w over K2 -> K2 * (K1 + w); O: H x W once.
  return rows * static_cast<double>(h * K1) + rows * cols * static_cast<double>(K2 * (K1 + w)) +
         static_cast<double>(H * W);
}

i64 chainWorkingSet(i64 K1, i64 h, i64 w, i64 k) { return h * K1 + K1 * k + k * w + h * w; }

void chainFusion(IncrementalEvaluator& ev, const std::function<bool()>& stop) {
  const Problem& p = ev.problem();
  for (int s = 0; s + 1 < ev.size() && !stop(); ++s) {
    const auto& A = ev.schedule().subgraphs[s];
    const auto& B = ev.schedule().subgraphs[s + 1];
    // A MatMul in A whose output is the LHS of a MatMul in B.
    OpId m1 = -1, m2 = -1;
    for (OpId x : A.ops)
      for (OpId y : B.ops)
        if (p.ops[x].type == OpType::MatMul && p.ops[y].type == OpType::MatMul &&
            p.ops[y].inputs[0] == p.ops[x].outputs[0]) {
          m1 = x;
          m2 = y;
        }
    if (m1 < 0) continue;
    const i64 H = p.heights[p.ops[m2].outputs[0]], W = p.widths[p.ops[m2].outputs[0]];
    const i64 K1 = p.ops[m1].K, K2 = p.ops[m2].K, N = p.native;
    // Analytic choice: the (h, w, k) with the least traffic whose working set fits.
    struct Cand {
      double traffic;
      Granularity g;
    };
    std::vector<Cand> cands;
    std::vector<i64> chainKs = sideCandidates(std::min(K1, K2), N);
    for (i64 k : kAboveNative(p, ev.model(), {m1, m2})) chainKs.push_back(k);  // k_limit=reduction
    for (i64 h : sideCandidates(H, N))
      for (i64 w : sideCandidates(W, N))
        for (i64 k : chainKs)
          if (chainWorkingSet(K1, h, w, k) <= p.capacity)
            cands.push_back({chainTraffic(H, W, K1, K2, h, w), {w, h, k}});
    if (cands.empty()) continue;
    std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
      return a.traffic < b.traffic || (a.traffic == b.traffic && a.g.k > b.g.k);
    });
    if (cands.size() > 4) cands.resize(4);
    SubgraphSched m;
    m.ops = A.ops;
    for (OpId o : B.ops)
      if (std::find(m.ops.begin(), m.ops.end(), o) == m.ops.end()) m.ops.push_back(o);
    m.retain = B.retain;
    auto chosen = chooseCheapest(cands, [&](const Cand& c) {
      m.gran = c.g;
      return priceOf(ev.cost(m, ev.retainedInto(s)));
    });
    if (!chosen.found) continue;
    m.gran = chosen.cand.g;
    Change ch{s, 2, {m}};
    DeltaEval d = ev.evaluate(ch);
    if (d.valid && d.delta < 0) ev.apply(ch, d);
  }
}

}  // namespace mlsys
