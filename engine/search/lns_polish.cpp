// The LNS worker's granularity and traversal polish (Lns::polishGranularities and its parts): a
// coordinate descent over each subgraph's w, h, k and tile order, one of the adaptive LNS worker's
// three kinds of slice (engine/search/search.cpp). The windows are in lns.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cost/pricing/granularity.h"
#include "cost/pricing/subgraph.h"
#include "engine/base/limits.h"
#include "engine/search/lns.h"
#include "moves/moves.h"

namespace mlsys {

bool Lns::polishGranularities(IncrementalEvaluator& ev, Schedule& start, double until) {
  const Problem& p = run_.p;
  ev.reset(start);
  if (!ev.valid()) return false;
  const double before = ev.total();
  if (polishConverged_ >= 0 && std::abs(before - polishConverged_) <= 1e-12 * before) return false;
  long clean = 0;  // subgraphs visited since the last change
  while (!run_.stop.stopNow() && run_.dl.elapsed() < until) {
    const int n = ev.size();
    if (clean >= n) {
      polishConverged_ = ev.total();
      break;
    }
    const int s = static_cast<int>(polishCursor_++ % static_cast<size_t>(n));
    const double at = ev.total();
    const i64 kmax = reductionLimit(p, ev.model(), ev.schedule().subgraphs[s].ops);
    const auto [W, H] = outputShape(ev, s);
    // Every value of each side up to N; above N (k_limit=reduction) the k of kAboveNative.
    const std::vector<i64> kAbove = kAboveNative(p, ev.model(), ev.schedule().subgraphs[s].ops);
    for (int side = 0; side < 3 && !run_.stop.stopNow(); ++side) {
      const i64 top = side == 0 ? std::min(p.native, W) : side == 1 ? std::min(p.native, H) : std::min(p.native, kmax);
      if (top <= 1 && (side < 2 || kAbove.empty())) continue;
      const SubgraphSched& S = ev.schedule().subgraphs[s];
      Change best;
      DeltaEval bestD;
      auto consider = [&](i64 v) {
        Granularity g = S.gran;
        (side == 0 ? g.w : side == 1 ? g.h : g.k) = v;
        if (g == S.gran) return;
        Change c = Change::replaceOne(s, S);
        c.repl[0].gran = g;
        polishConsider(ev, std::move(c), at, best, bestD);
      };
      for (i64 v = 1; v <= top; ++v) consider(v);
      if (side == 2)
        for (i64 v : kAbove) consider(v);
      if (bestD.valid) ev.apply(best, bestD), ++polishStats_.applied;
    }
    polishFrontier(ev, s);
    for (size_t i = 0; i < std::min<size_t>(kAbove.size(), 8) && !run_.stop.stopNow(); ++i)
      polishFrontier(ev, s, kAbove[i]);  // the 8 largest: 1-8 k-steps
    polishTraversals(ev, s, s);
    if (improves(ev.total(), at, 1e-12)) clean = 0;
    else ++clean;
  }
  start = ev.schedule();
  if (improves(ev.total(), before)) {
    improved(ev, polishStats_);
    return true;
  }
  return false;
}

bool Lns::polishConsider(IncrementalEvaluator& ev, Change c, double at, Change& best, DeltaEval& bestD) {
  if (!run_.takeEvaluations(id_)) return false;  // --max-evals spent: stopNow() says so to the callers
  DeltaEval d = ev.evaluate(c);
  ++polishStats_.evaluations;
  polishStats_.valid += d.valid;
  const bool valid = d.valid;
  if (valid && deltaImproves(d.delta, at, 1e-12) && (!bestD.valid || d.delta < bestD.delta))
    bestD = std::move(d), best = std::move(c);
  return valid;
}

void Lns::polishFrontier(IncrementalEvaluator& ev, int s, i64 k) {
  const Problem& p = run_.p;
  SubgraphSched S = ev.schedule().subgraphs[s];
  if (k > 0) S.gran.k = k;
  const auto [W, H] = outputShape(ev, s);
  const i64 topW = std::min(p.native, W), topH = std::min(p.native, H);
  if (topW <= 1 || topH <= 1) return;
  const double at = ev.total();
  Change best;
  DeltaEval bestD;
  auto price = [&](Granularity g, const Traversal& t) {
    Change c = Change::replaceOne(s, S);
    c.repl[0].gran = g;
    c.repl[0].trav = t;
    return polishConsider(ev, std::move(c), at, best, bestD);
  };
  // One side fixed at each value that is the smallest of its tile count (or the limit); the
  // other side at the largest value that fits, and at the smallest value of that tile count.
  // Fast memory use grows with either tile side (V11), so at a fixed k the fitting sides form a
  // staircase: as one side grows the other's largest fitting value can only fall, found by one
  // downward scan per side (at raster). Priced at raster and the row snake; polishTraversals then tries
  // every corner of the winner.
  for (int side = 0; side < 2 && !run_.stop.stopNow(); ++side) {
    const i64 dimA = side == 0 ? W : H, topA = side == 0 ? topW : topH;
    const i64 dimB = side == 0 ? H : W, topB = side == 0 ? topH : topW;
    auto gran = [&](i64 a, i64 b) {
      Granularity g = S.gran;
      (side == 0 ? g.w : g.h) = a;
      (side == 0 ? g.h : g.w) = b;
      return g;
    };
    i64 b = topB;
    for (i64 a = 1; a <= topA && b >= 1; ++a) {
      const bool smallest = a == 1 || (dimA + a - 1) / a < (dimA + a - 2) / (a - 1);
      if (!smallest && a != topA) continue;
      while (b >= 1 && !price(gran(a, b), {TraversalKind::Raster, {}})) --b;
      if (b < 1) break;
      const i64 even = balancedSide(dimB, b);
      price(gran(a, b), {TraversalKind::RowSnake, {}});
      if (even != b)
        price(gran(a, even), {TraversalKind::Raster, {}}), price(gran(a, even), {TraversalKind::RowSnake, {}});
    }
  }
  if (bestD.valid) ev.apply(best, bestD), ++polishStats_.applied;
}

bool Lns::polishTraversals(IncrementalEvaluator& ev, int from, int to) {
  const double before = ev.total();
  for (int s = std::max(0, from); s <= std::min(to, ev.size() - 1) && !run_.stop.stopNow(); ++s) {
    const SubgraphSched S = ev.schedule().subgraphs[s];
    auto [ntw, nth] = subgraphGrid(run_.p, S);
    if (ntw * nth < 2 || ntw * nth > 4096) continue;
    Change best;
    DeltaEval bestD;
    for (TraversalKind k : {TraversalKind::Raster, TraversalKind::RowSnake, TraversalKind::ColSnake}) {
      const std::vector<int32_t> base = traversalOrder({k, {}}, ntw, nth);
      for (int how = 0; how < 8; ++how) {
        Change c = Change::replaceOne(s, S);
        c.repl[0].trav = {TraversalKind::Custom, mirroredOrder(base, ntw, nth, how & 1, how & 2, how & 4)};
        if (how == 0) c.repl[0].trav = {k, {}};
        if (c.repl[0].trav == S.trav) continue;
        DeltaEval d = ev.evaluate(c);
        if (d.valid && deltaImproves(d.delta, before, 1e-12) && (!bestD.valid || d.delta < bestD.delta))
          bestD = std::move(d), best = std::move(c);
      }
    }
    if (bestD.valid) ev.apply(best, bestD);
  }
  return improves(ev.total(), before);
}

}  // namespace mlsys
