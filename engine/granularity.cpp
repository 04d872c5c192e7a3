#include "engine/granularity.h"

#include <algorithm>

#include "cost/incremental.h"

namespace mlsys {

std::vector<i64> sideCandidates(i64 dim, i64 N) {
  const i64 top = std::min(N, dim);
  std::vector<i64> v;
  v.push_back(top);
  for (i64 x = 1; x <= top; x *= 2) v.push_back(x);
  for (size_t i = 0, n = v.size(); i < n; ++i) {
    i64 tiles = (dim + v[i] - 1) / v[i];
    v.push_back((dim + tiles - 1) / tiles);
  }
  std::sort(v.begin(), v.end(), std::greater<>());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

GranChoice bestGranularity(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                           const std::vector<TensorId>& rin, const std::vector<TensorId>& rout) {
  GranChoice best;
  const i64 N = p.native;
  // Grid shape and the k range come from a probe plan at the native size.
  SubgraphPlan probe = planSubgraph(p, m, ops, {1, 1, 1}, rin, rout);
  if (!probe.valid && probe.rule != "V9") return best;
  i64 kmax = N;
  bool anyMM = false;
  for (OpId o : ops)
    if (p.ops[o].type == OpType::MatMul) { anyMM = true; kmax = std::min(kmax, p.ops[o].K); }
  std::vector<i64> ks = anyMM ? sideCandidates(kmax, N) : std::vector<i64>{1};
  std::vector<i64> ws = sideCandidates(probe.W, N), hs = sideCandidates(probe.H, N);
  for (i64 k : ks)
    for (i64 w : ws)
      for (i64 h : hs) {
        Granularity g{w, h, k};
        SubgraphPlan pl = planSubgraph(p, m, ops, g, rin, rout);
        if (!pl.valid) continue;
        for (TraversalKind tk : {TraversalKind::Raster, TraversalKind::RowSnake, TraversalKind::ColSnake}) {
          if (tk != TraversalKind::Raster && (pl.tiles() < 3 || pl.tiles() > kMaxWrittenOrderTiles)) continue;
          Traversal tr{tk, {}};
          SubgraphCost c = costSubgraph(p, pl, tr);
          if (!c.valid) continue;
          if (!best.found || c.latency < best.cost.latency) {
            best.found = true;
            best.g = g;
            best.trav = tr;
            best.cost = c;
          }
        }
      }
  return best;
}

// Best granularity for a segment: every (w, h, k) of the candidate sets in raster order, then
// the snakes for the winner.
bool bestGranularityCached(IncrementalEvaluator& ev, SubgraphSched& sg, const std::vector<TensorId>& rin,
                           const std::vector<Granularity>& extra) {
  const Problem& p = ev.problem();
  i64 kmax = p.native;
  bool anyMM = false;
  for (OpId o : sg.ops)
    if (p.ops[o].type == OpType::MatMul) { anyMM = true; kmax = std::min(kmax, p.ops[o].K); }
  auto [W, H] = subgraphGrid(p, SubgraphSched{sg.ops, {1, 1, 1}, {}, sg.retain});  // grid at [1,1,1] = shape
  std::vector<i64> ws = sideCandidates(W, p.native), hs = sideCandidates(H, p.native);
  std::vector<i64> ks = anyMM ? sideCandidates(kmax, p.native) : std::vector<i64>{1};
  auto trim = [](std::vector<i64>& v, size_t n) { if (v.size() > n) v.resize(n); };
  trim(ws, 4);
  trim(hs, 4);
  trim(ks, 5);
  std::vector<Granularity> cands = extra;
  for (i64 k : ks)
    for (i64 w : ws)
      for (i64 h : hs) cands.push_back({w, h, k});
  bool found = false;
  double best = 0;
  SubgraphSched cand = sg, bestS = sg;
  cand.trav = {};
  for (const Granularity& g : cands) {
    cand.gran = g;
    const CachedCost& c = ev.cost(cand, rin);
    if (c.valid && (!found || c.latency < best)) { found = true; best = c.latency; bestS = cand; }
  }
  if (!found) return false;
  for (TraversalKind tk : {TraversalKind::RowSnake, TraversalKind::ColSnake}) {
    cand = bestS;
    cand.trav = {tk, {}};
    const CachedCost& c = ev.cost(cand, rin);
    if (c.valid && c.latency < best) { best = c.latency; bestS = cand; }
  }
  sg = bestS;
  return true;
}

}  // namespace mlsys
