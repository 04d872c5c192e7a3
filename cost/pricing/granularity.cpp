#include "cost/pricing/granularity.h"

#include <algorithm>
#include <array>
#include <map>

namespace mlsys {

i64 reductionLimit(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops) {
  const i64 cap = m.k_limit == ModelOptions::KLimit::Reduction ? INT64_MAX : p.native;
  i64 kmax = 0;
  for (OpId o : ops)
    if (p.ops[o].type == OpType::MatMul) kmax = std::min(kmax ? kmax : cap, p.ops[o].K);
  return kmax;
}

i64 balancedSide(i64 dim, i64 side) {
  const i64 tiles = (dim + side - 1) / side;
  return (dim + tiles - 1) / tiles;
}

std::vector<i64> sideCandidates(i64 dim, i64 N) {
  const i64 top = std::min(N, dim);
  std::vector<i64> v;
  v.push_back(top);
  for (i64 x = 1; x <= top; x *= 2) v.push_back(x);
  for (size_t i = 0, n = v.size(); i < n; ++i) v.push_back(balancedSide(dim, v[i]));
  std::sort(v.begin(), v.end(), std::greater<>());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<i64> kAboveNative(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops, size_t most) {
  const i64 kmax = reductionLimit(p, m, ops), N = p.native;
  std::vector<i64> v;
  if (kmax <= N) return v;
  for (OpId o : ops) {
    if (p.ops[o].type != OpType::MatMul) continue;
    const i64 K = p.ops[o].K;
    for (i64 n = 1; (K + n - 1) / n > N; ++n)
      if ((K + n - 1) / n <= kmax) v.push_back((K + n - 1) / n);
  }
  std::sort(v.begin(), v.end(), std::greater<>());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  v.resize(std::min(v.size(), most));
  return v;
}

std::vector<i64> kChoices(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops, size_t most) {
  const i64 kmax = reductionLimit(p, m, ops);
  if (!kmax) return {1};
  std::vector<i64> ks = sideCandidates(std::min(kmax, p.native), p.native);
  ks.resize(std::min(ks.size(), most));
  for (i64 k : kAboveNative(p, m, ops, most)) ks.push_back(k);
  return ks;
}

std::vector<Granularity> granularityCandidates(i64 W, i64 H, const std::vector<i64>& ks, i64 N, size_t most_wh) {
  std::vector<i64> ws = sideCandidates(W, N), hs = sideCandidates(H, N);
  ws.resize(std::min(ws.size(), most_wh));
  hs.resize(std::min(hs.size(), most_wh));
  std::vector<Granularity> cands;
  cands.reserve(ks.size() * ws.size() * hs.size());
  for (i64 k : ks)
    for (i64 w : ws)
      for (i64 h : hs) cands.push_back({w, h, k});
  return cands;
}

std::vector<Granularity> halvings(Granularity g, int n) {
  std::vector<Granularity> v = {g};
  for (int i = 0; i < n; ++i) {
    if (g.k >= g.w && g.k >= g.h && g.k > 1) g.k = (g.k + 1) / 2;
    else if (g.w >= g.h && g.w > 1) g.w = (g.w + 1) / 2;
    else if (g.h > 1) g.h = (g.h + 1) / 2;
    else break;
    v.push_back(g);
  }
  return v;
}

std::vector<i64> niceSides(i64 dim, i64 top) {
  std::vector<i64> nice;
  for (i64 x = 1; x <= top; x *= 2) nice.push_back(x);
  nice.push_back(top);
  for (i64 tiles = 1; tiles <= 64; ++tiles) {
    i64 v = (dim + tiles - 1) / tiles;
    if (v <= top) nice.push_back(v);
  }
  return nice;
}

Granularity firstFitting(const Problem& p, const ModelOptions& m, OpId o) {
  static const std::vector<TensorId> kNone;
  const std::vector<OpId> ops = {o};
  const TensorId out = p.ops[o].outputs[0];
  const Granularity top{std::min(p.native, p.widths[out]), std::min(p.native, p.heights[out]),
                        std::max<i64>(1, reductionLimit(p, m, ops))};
  // Every op fits alone at [1,1,1] (checked by the parser), where the halvings end.
  const std::vector<Granularity> cands = halvings(top, 200);
  auto first = chooseCheapest(
      cands, [&](const Granularity& g) { return costSubgraph(p, planSubgraph(p, m, ops, g, kNone, kNone), {}); },
      [](const Granularity&, const SubgraphCost&, const auto& best) { return best.found; });
  return first.found ? first.cand : cands.back();
}

namespace {

// Granularity g of the subgraph at its cheapest traversal: raster, and the snakes where they can
// be written; not found when g is invalid.
GranChoice priceGranularity(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops, const Granularity& g,
                            const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                            const std::function<bool()>& stop) {
  SubgraphPlan pl = planSubgraph(p, m, ops, g, rin, rout);
  if (!pl.valid) return {};
  std::vector<Traversal> travs = {{TraversalKind::Raster, {}}};
  if (pl.tiles() >= 3 && pl.tiles() <= kMaxWrittenOrderTiles)
    travs.insert(travs.end(), {{TraversalKind::RowSnake, {}}, {TraversalKind::ColSnake, {}}});
  auto best = chooseCheapest(
      travs, [&](const Traversal& t) { return costSubgraph(p, pl, t, CostMethod::Auto, stop); },
      [&](const Traversal&, const SubgraphCost&, const auto&) { return stop && stop(); });
  if (!best.found) return {};
  return {true, g, best.cand, best.price};
}

// What chooseCheapest reads of a GranChoice.
struct ChoicePrice {
  bool valid = false;
  double latency = 0;
  GranChoice c;
};

}  // namespace

GranChoice bestGranularity(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                           const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                           const std::function<bool()>& stop) {
  // Grid shape and the k range come from a probe plan at [1,1,1].
  SubgraphPlan probe = planSubgraph(p, m, ops, {1, 1, 1}, rin, rout);
  if (!probe.valid && probe.rule != Rule::V9) return {};
  auto price = [&](const Granularity& g) {
    GranChoice c = priceGranularity(p, m, ops, g, rin, rout, stop);
    return ChoicePrice{c.found, c.cost.latency, c};
  };
  auto best = chooseCheapest(granularityCandidates(probe.W, probe.H, kChoices(p, m, ops), p.native), price,
                             [&](const Granularity&, const ChoicePrice&, const auto&) { return stop && stop(); });
  return best.found ? best.price.c : GranChoice{};
}

GranChoice bestGranularityDescent(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                                  const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                                  const std::function<bool()>& stop) {
  SubgraphPlan probe = planSubgraph(p, m, ops, {1, 1, 1}, rin, rout);
  if (!probe.valid && probe.rule != Rule::V9) return {};
  const std::vector<i64> ws = sideCandidates(probe.W, p.native), hs = sideCandidates(probe.H, p.native),
                         ks = kChoices(p, m, ops);
  const int dims[3] = {static_cast<int>(ws.size()), static_cast<int>(hs.size()), static_cast<int>(ks.size())};
  std::map<std::array<int, 3>, GranChoice> priced;
  auto price = [&](const std::array<int, 3>& at) -> const GranChoice& {
    auto it = priced.find(at);
    if (it != priced.end()) return it->second;
    const GranChoice c = priceGranularity(p, m, ops, {ws[at[0]], hs[at[1]], ks[at[2]]}, rin, rout, stop);
    return priced.emplace(at, c).first->second;
  };
  // The start: the largest-side-first path through the lists (as halvings() halves), first valid.
  std::array<int, 3> at = {0, 0, 0};
  while (!price(at).found) {
    if (stop && stop()) return {};
    int side = -1;
    i64 largest = 0;
    const i64 vals[3] = {ws[at[0]], hs[at[1]], ks[at[2]]};
    for (int d : {2, 0, 1})  // k first on ties: it leaves the grid as it is
      if (at[d] + 1 < dims[d] && vals[d] > largest) largest = vals[d], side = d;
    if (side < 0) return {};  // [smallest, smallest, smallest] is invalid: nothing is
    ++at[side];
  }
  static constexpr int kMoves[8][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0},
                                       {0, 0, 1}, {0, 0, -1}, {1, 1, 0}, {-1, -1, 0}};
  while (!(stop && stop())) {
    std::array<int, 3> next = at;
    double bestLat = price(at).cost.latency;
    for (const auto& mv : kMoves) {
      std::array<int, 3> n = {at[0] + mv[0], at[1] + mv[1], at[2] + mv[2]};
      if (n[0] < 0 || n[1] < 0 || n[2] < 0 || n[0] >= dims[0] || n[1] >= dims[1] || n[2] >= dims[2]) continue;
      const GranChoice& c = price(n);
      if (c.found && c.cost.latency < bestLat) bestLat = c.cost.latency, next = n;
    }
    if (next == at) break;
    at = next;
  }
  return price(at);
}

bool bestGranularityCached(IncrementalEvaluator& ev, SubgraphSched& sg, const std::vector<TensorId>& rin,
                           const std::vector<Granularity>& extra) {
  const Problem& p = ev.problem();
  auto [W, H] = subgraphGrid(p, SubgraphSched{sg.ops, {1, 1, 1}, {}, sg.retain});  // grid at [1,1,1] = shape
  std::vector<Granularity> cands = extra;
  for (const Granularity& g : granularityCandidates(W, H, kChoices(p, ev.model(), sg.ops, 5), p.native, 4))
    cands.push_back(g);
  SubgraphSched cand = sg;
  cand.trav = {};
  // Above N a larger k leaves less room for the tile: the fixed side lists rarely hold the side
  // that just fits, so for each such k add it (and its balanced value) for the two largest w.
  const std::vector<i64> above = kAboveNative(p, ev.model(), sg.ops, 5), ws = sideCandidates(W, p.native);
  const i64 topH = std::min(p.native, H);
  for (i64 k : above)
    for (size_t i = 0; i < std::min<size_t>(2, ws.size()); ++i) {
      const i64 h = largestFitting(topH, [&](i64 v) {
        cand.gran = {ws[i], v, k};
        return ev.peek(cand, rin).valid;
      });
      if (!h) continue;
      cands.push_back({ws[i], h, k});
      const i64 even = balancedSide(H, h);
      if (even != h) cands.push_back({ws[i], even, k});
    }
  auto best = chooseCheapest(cands, [&](const Granularity& g) {
    cand.gran = g;
    return ev.peek(cand, rin);
  });
  if (!best.found) return false;
  cand.gran = best.cand;
  const std::vector<Traversal> travs = {
      {TraversalKind::Raster, {}}, {TraversalKind::RowSnake, {}}, {TraversalKind::ColSnake, {}}};
  auto bestT = chooseCheapest(travs, [&](const Traversal& t) {
    if (t.kind == TraversalKind::Raster) return best.price;  // priced above
    cand.trav = t;
    return ev.peek(cand, rin);
  });
  sg.gran = best.cand;
  sg.trav = bestT.cand;
  return true;
}

bool repairGranularity(IncrementalEvaluator& ev, SubgraphSched& sg, const std::vector<TensorId>& rin) {
  const i64 kmax = reductionLimit(ev.problem(), ev.model(), sg.ops);
  Granularity g0 = sg.gran;
  g0.k = kmax ? std::clamp<i64>(g0.k, 1, kmax) : 1;
  std::vector<Granularity> cands = halvings(g0, 6);
  if (kmax && g0.k != kmax) cands.push_back({g0.w, g0.h, kmax});
  auto chosen = chooseCheapest(
      cands,
      [&](const Granularity& g) {
        sg.gran = g;
        return priceOf(ev.cost(sg, rin));
      },
      [](const Granularity& g, const CachedPrice& pr, const auto& best) {
        return (!pr.valid && !granularityCanFix(pr.rule)) || (best.found && g.w * g.h < best.cand.w * best.cand.h / 4);
      });
  sg.gran = chosen.found ? chosen.cand : g0;
  return chosen.found;
}

}  // namespace mlsys
