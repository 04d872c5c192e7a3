// The exact solver's granularity search (see exact_internal.h and exact.h).
#include "engine/exact/exact_internal.h"

namespace mlsys::exact_detail {

void GranSearch::verifyInvalid(const std::vector<OpId>& ops, const std::vector<TensorId>& rin,
                               const std::vector<TensorId>& rout, const Space& s) {
  const i64 W = s.W, H = s.H, kmax = s.kmax;
  std::vector<i64> ks{1};
  for (OpId o : ops)
    if (p_.ops[o].type == OpType::MatMul)
      for (i64 k : smallestSides(p_.ops[o].K, kmax)) addSide(ks, k, kmax);
  addSide(ks, kmax, kmax);
  std::vector<i64> ws = smallestSides(W, s.wTop), hs = smallestSides(H, s.hTop);
  for (i64 x : s.extraW) addSide(ws, x, s.wTop);
  for (i64 x : s.extraH) addSide(hs, x, s.hTop);
  if (o_.every_side) {
    ws.clear();
    hs.clear();
    for (i64 x = 1; x <= s.wTop; ++x) ws.push_back(x);
    for (i64 x = 1; x <= s.hTop; ++x) hs.push_back(x);
    for (i64 x = 1; x <= kmax; ++x) addSide(ks, x, kmax);
  }
  for (i64 w : ws)
    for (i64 h : hs)
      for (i64 k : ks) {
        SubgraphPlan pl = planSubgraph(p_, m_, ops, {w, h, k}, rin, rout);
        ++st_.plans;
        if (pl.valid) {
          ++st_.lb_violations;
          return;
        }
      }
}

// Step 1: the grid shape (every non-ephemeral output has it, A-6: take any output of S), the
// largest k (V8: k <= N, or up to the MatMuls' K under k_limit=reduction) and the sides V9 may
// need. False when S has no output (invalid).
bool GranSearch::shapeOf(const std::vector<OpId>& ops, Space& s) const {
  const i64 N = p_.native;
  std::vector<char> inS(p_.numOps(), 0);
  for (OpId o : ops) inS[o] = 1;
  TensorId outT = -1;
  s.kmax = m_.k_limit == ModelOptions::KLimit::Reduction ? INT64_MAX : N;
  for (OpId o : ops) {
    const Op& op = p_.ops[o];
    for (TensorId t : op.outputs) {
      bool consumedInside = false;
      for (OpId c : p_.consumers[t]) consumedInside |= inS[c] != 0;
      if (!consumedInside && outT < 0) outT = t;
    }
    if (op.type == OpType::MatMul) {
      s.anyMM = true;
      s.kmax = std::min(s.kmax, op.K);
      OpId l = p_.producer[op.inputs[0]], r = p_.producer[op.inputs[1]];
      if (l >= 0 && inS[l] && p_.ops[l].type == OpType::Pointwise) s.extraW.push_back(op.K);
      if (r >= 0 && inS[r] && p_.ops[r].type == OpType::Pointwise) s.extraH.push_back(op.K);
    }
  }
  if (!s.anyMM) s.kmax = 1;
  if (outT < 0) return false;
  s.W = p_.widths[outT];
  s.H = p_.heights[outT];
  s.wTop = std::min(N, s.W);
  s.hTop = std::min(N, s.H);
  // V9 may need a side beyond the output's: w >= K of a MatMul whose LHS a Pointwise in S makes
  // (h for the RHS), with W < K <= N. Such a side still gives one tile column (E1: ceil(W / w) =
  // 1, the tile clipped to W), so it is in the space, and the largest side is the one to probe.
  for (i64 x : s.extraW) s.wTop = std::max(s.wTop, std::min(N, x));
  for (i64 x : s.extraH) s.hTop = std::max(s.hTop, std::min(N, x));
  return true;
}

// Step 2: the sides tried (exact.h, THE SPACE), each list largest first: the smallest side per
// count (every side with every_side), the V9 sides, and the largest k.
void GranSearch::listSides(const SubgraphPlan& probe, Space& s) const {
  s.Kacc = probe.Kacc;
  auto sides = [&](i64 dim, i64 limit) {
    if (!o_.every_side) return smallestSides(dim, limit);
    std::vector<i64> v;
    for (i64 x = 1; x <= limit; ++x) v.push_back(x);
    return v;
  };
  s.ws = sides(s.W, s.wTop);
  s.hs = sides(s.H, s.hTop);
  for (i64 x : s.extraW) addSide(s.ws, x, s.wTop);
  for (i64 x : s.extraH) addSide(s.hs, x, s.hTop);
  if (s.anyMM) {
    s.ks = sides(s.Kacc, s.kmax);
    addSide(s.ks, s.kmax, s.kmax);
  } else {
    s.ks = {1};
  }
  std::sort(s.ws.begin(), s.ws.end(), std::greater<>());
  std::sort(s.hs.begin(), s.hs.end(), std::greater<>());
  std::sort(s.ks.begin(), s.ks.end(), std::greater<>());
}

// Step 3: what the lower bounds use, from the plan at the largest granularity: the slice
// templates grouped by tensor (they do not depend on the granularity), the compute of one tile,
// the stores, the constant part of the working set.
void GranSearch::boundFacts(const SubgraphPlan& probe, Space& s) const {
  s.D = probe.D;
  s.B = p_.bandwidth;
  s.den = static_cast<i128>(s.D) * s.B;
  for (const SliceTpl& sl : probe.slices) {
    auto it = std::find_if(s.tens.begin(), s.tens.end(), [&](const Tensor& x) { return x.t == sl.t; });
    if (it == s.tens.end()) {
      s.tens.push_back({sl.t, p_.size(sl.t), p_.heights[sl.t], p_.widths[sl.t], {}});
      it = s.tens.end() - 1;
    }
    it->tpl.push_back({sl.rk, sl.ck});
  }
  // Compute of one tile, at least (den units): every MatMul need costs mm_coef*K_acc over the
  // k-steps; every Pointwise need at least once per tile (k-strip ones once per k-step). An op
  // with several regions counts once: they may coincide at other sides than the probe's.
  const SubgraphPlan::Coefs least = probe.leastCoefs();
  s.cTile = (static_cast<i128>(least.mm) * s.Kacc + static_cast<i128>(least.every + least.last) * s.D) * s.B;
  s.stores = static_cast<i128>(probe.n_store) * s.W * s.H;  // output tiles partition the tensor
  s.wsConst = probe.ws_const;
  s.nStore = probe.n_store;
  s.nAcc = probe.n_acc;
}

// The grid of the sides ws[wi], hs[hi], ks[ki].
GranSearch::Grid GranSearch::gridOf(const Space& s, size_t wi, size_t hi, size_t ki) const {
  Grid g{s.ws[wi], s.hs[hi], s.ks[ki], 0, 0, 1};
  g.nw = (s.W + g.w - 1) / g.w;
  g.nh = (s.H + g.h - 1) / g.h;
  g.nk = s.Kacc ? (s.Kacc + g.k - 1) / g.k : 1;
  return g;
}

// Lower bound on the elements tensor `x` loads over the subgraph (L3). With one template the
// slice is resident exactly when its intervals did not change since the previous step (the
// previous step's slice of that tensor is the same template); with several, a slice may be
// resident through another template, so only "every element at least once" is claimed.
// `flip` (bit 0: columns mirrored, bit 1: rows mirrored) starts a snake from another corner:
// it moves which turns fall on the clipped last row or column (mirrorOf below).
i128 GranSearch::loads(const Space& s, const Tensor& x, const Grid& g, TraversalKind tk, int flip) const {
  const i64 W = s.W, H = s.H, Kacc = s.Kacc;
  if (x.tpl.size() != 1) return x.size;
  auto count = [&](Ext a) { return a == Ext::Rho ? g.nh : a == Ext::Gamma ? g.nw : a == Ext::Kappa ? g.nk : i64{1}; };
  auto ext = [&](Ext a, bool row) {
    return a == Ext::Rho ? H : a == Ext::Gamma ? W : a == Ext::Kappa ? Kacc : (row ? x.Ht : x.Wt);
  };
  auto var = [&](Ext a) {
    return count(a) <= 1 ? -1 : a == Ext::Rho ? 0 : a == Ext::Gamma ? 1 : a == Ext::Kappa ? 2 : -1;
  };
  const Ext a = x.tpl[0].first, b = x.tpl[0].second;
  const int va = var(a), vb = var(b);
  const i128 Ea = ext(a, true), Eb = ext(b, false);
  if (va < 0 && vb < 0) return Ea * Eb;
  if (va == vb) return x.size;
  if (va == 2 || vb == 2) {  // the k-strip changes every step: a new slice every step
    const i64 counts[3] = {g.nh, g.nw, g.nk};
    i128 tot = 1;
    for (int v = 0; v < 3; ++v) tot *= v == va ? Ea : v == vb ? Eb : counts[v];
    if (va < 0) tot *= Ea;
    if (vb < 0) tot *= Eb;
    return tot;
  }
  if (va >= 0 && vb >= 0) return Ea * Eb;  // rows and columns: a new slice every tile
  const int v = va >= 0 ? va : vb;
  const i128 Lo = va >= 0 ? Eb : Ea;
  if (v == 0) {  // changes with the tile row
    if (tk != TraversalKind::ColSnake || g.nw == 1) return static_cast<i128>(H) * Lo;
    // The column snake turns nw - 1 times, alternately at the bottom row (the clipped one)
    // and the top row - at the top first when rows are mirrored (the walk starts at the
    // bottom); a turn keeps that row's slice resident into the next column.
    const i64 ce = g.nw / 2, co = (g.nw - 1) / 2, lastRow = H - (g.nh - 1) * g.h;
    const i64 first = flip & 2 ? g.h : lastRow, second = flip & 2 ? lastRow : g.h;
    return Lo * (static_cast<i128>(g.nw) * H - static_cast<i128>(ce) * first - static_cast<i128>(co) * second);
  }
  // changes with the tile column
  if (tk == TraversalKind::ColSnake || g.nh == 1) return static_cast<i128>(W) * Lo;
  if (tk == TraversalKind::Raster) return static_cast<i128>(g.nh) * W * Lo;
  // Likewise the row snake's turns: at the clipped right column first, or at the left one
  // first when columns are mirrored.
  const i64 ce = g.nh / 2, co = (g.nh - 1) / 2, lastCol = W - (g.nw - 1) * g.w;
  const i64 first = flip & 1 ? g.w : lastCol, second = flip & 1 ? lastCol : g.w;
  return Lo * (static_cast<i128>(g.nh) * W - static_cast<i128>(ce) * first - static_cast<i128>(co) * second);
}

// Working set of the first step, at least (W1): the largest slice of every tensor, the output
// tiles and accumulators, the retained tensors.
i128 GranSearch::firstWs(const Space& s, const Grid& g) const {
  const i64 W = s.W, H = s.H, Kacc = s.Kacc;
  auto len = [&](Ext a, bool row, const Tensor& x) -> i64 {
    return a == Ext::Rho     ? std::min(g.h, H)
           : a == Ext::Gamma ? std::min(g.w, W)
           : a == Ext::Kappa ? std::min(g.k, Kacc)
                             : (row ? x.Ht : x.Wt);
  };
  i128 ws0 = s.wsConst + static_cast<i128>(std::min(g.h, H)) * std::min(g.w, W) * (s.nStore + (g.nk > 1 ? s.nAcc : 0));
  for (const Tensor& x : s.tens) {
    i128 mx = 0;
    for (auto [a, b] : x.tpl) mx = std::max<i128>(mx, static_cast<i128>(len(a, true, x)) * len(b, false, x));
    ws0 += mx;
  }
  return ws0;
}

// The lower bound of one configuration: the larger of its compute and its loads and stores.
Cost GranSearch::lbOf(const Space& s, const Grid& g, TraversalKind tk, int flip) const {
  i128 mem = s.stores;
  for (const Tensor& x : s.tens) mem += loads(s, x, g, tk, flip);
  const i128 comp = static_cast<i128>(g.nw) * g.nh * s.cTile;
  return sc_.of(std::max(comp, mem * s.D), s.den, true);
}

// Every candidate with lower bound < limit, in loop order (the tile count only grows inside
// each loop, so the compute bound ends them early).
// In verify mode every candidate is produced (the bounds are only checked).
template <class Fn>
void GranSearch::forEach(const Space& s, Cost limit, Fn&& fn) const {
  const bool verify = o_.verify;
  const i64 W = s.W, H = s.H;
  const i64 nhMin = (H + s.hs[0] - 1) / s.hs[0];
  for (size_t wi = 0; wi < s.ws.size(); ++wi) {
    const i64 nw = (W + s.ws[wi] - 1) / s.ws[wi];
    if (!verify && sc_.of(static_cast<i128>(nw) * nhMin * s.cTile, s.den, true) >= limit) break;
    for (size_t hi = 0; hi < s.hs.size(); ++hi) {
      if (!ignoreStop && stop_()) throw Stopped{};  // millions of candidates on huge tensors
      const i64 nh = (H + s.hs[hi] - 1) / s.hs[hi];
      if (!verify && sc_.of(static_cast<i128>(nw) * nh * s.cTile, s.den, true) >= limit) break;
      for (size_t ki = 0; ki < s.ks.size(); ++ki) {
        Grid g = gridOf(s, wi, hi, ki);
        const bool wsPruned = firstWs(s, g) > p_.capacity;
        if (wsPruned && !verify) continue;
        const bool snakes = o_.snakes && g.nw >= 2 && g.nh >= 2 && g.nw * g.nh <= kMaxWrittenOrderTiles;
        // Mirrored starts only along an axis with a clipped last tile: without one, the
        // mirror maps the grid onto itself tile for tile (same sizes), so the price is equal.
        const bool mirrors = o_.mirrors && g.nw * g.nh >= 2 && g.nw * g.nh <= kMaxMirroredTiles;
        const int flips = mirrors ? (W % g.w != 0 && g.nw >= 2 ? 1 : 0) | (H % g.h != 0 && g.nh >= 2 ? 2 : 0) : 0;
        for (int t = 0; t < (snakes ? 3 : 1); ++t)
          for (int f = 0; f <= 3; ++f) {
            if ((f & flips) != f) continue;
            Cost lb = lbOf(s, g, kKinds[t], f);
            if (lb < limit || verify)
              fn(Cand{lb, static_cast<uint16_t>(wi), static_cast<uint16_t>(hi), static_cast<uint16_t>(ki),
                      static_cast<uint8_t>(t | f << 2), wsPruned});
          }
      }
    }
  }
}

// Prices one candidate exactly (planSubgraph + costSubgraph), once; a better price becomes the
// entry's best.
void GranSearch::price(const Space& s, Pricing& pr, const Cand& c) {
  const u64 pk = (u64{c.wi} << 40) | (u64{c.hi} << 20) | (u64{c.ki} << 4) | c.tk;
  if (!pr.priced.insert(pk).second) return;
  // (counted per attempt: on huge tensors most plans can be rejected, and pricing never counts)
  if ((++pr.attempts & 63) == 0 && !ignoreStop && stop_()) throw Stopped{};
  const Grid g = gridOf(s, c.wi, c.hi, c.ki);
  const u64 gk = pk >> 4;
  auto it = pr.plans.find(gk);
  if (it == pr.plans.end()) {
    it = pr.plans.emplace(gk, planSubgraph(p_, m_, pr.ops, {g.w, g.h, g.k}, pr.rin, pr.rout)).first;
    ++st_.plans;
  }
  priceOrder(pr, it->second, g, c.tk, c.lb, c.wsPruned);
}

// Prices one order (kind | flip << 2) of one planned grid exactly; a better price becomes the
// entry's best.
void GranSearch::priceOrder(Pricing& pr, const SubgraphPlan& pl, const Grid& g, int tk, Cost lb, bool wsPruned) {
  if (!pl.valid) return;
  if (!pl.fast_ok && pl.steps() > kMaxSearchWalkSteps) return;  // excluded from the space (exact.h)
  takePricing();
  SubgraphCost sc = costSubgraph(p_, pl, exactTraversal(kKinds[tk & 3], tk >> 2, g.nw, g.nh));
  ++st_.configs_priced;
  if (!sc.valid) return;
  Cost v = sc_.of(sc.num, sc.den, false);
  if (v < lb || wsPruned) ++st_.lb_violations;
  if (v < pr.best) {
    pr.best = v;
    pr.e.best = v;
    pr.e.g = {g.w, g.h, g.k};
    pr.e.tk = kKinds[tk & 3];
    pr.e.flip = static_cast<uint8_t>(tk >> 2);
    pr.e.order.clear();
  }
}

// Pass 1: an upper bound from the few candidates with the smallest bounds.
void GranSearch::seedPass(const Space& s, Pricing& pr, Cost cap) {
  constexpr size_t kSeeds = 8;
  std::priority_queue<Cand> seeds;  // max-heap on lb
  forEach(s, std::min(cap, pr.best), [&](const Cand& c) {
    if (seeds.size() < kSeeds) seeds.push(c);
    else if (c.lb < seeds.top().lb) {
      seeds.pop();
      seeds.push(c);
    }
  });
  std::vector<Cand> first;
  while (!seeds.empty()) {
    first.push_back(seeds.top());
    seeds.pop();
  }
  std::reverse(first.begin(), first.end());
  for (const Cand& c : first) {
    if (c.lb >= std::min(cap, pr.best) && !o_.verify) break;
    price(s, pr, c);
  }
}

// Pass 2: everything that can still beat the best, in order of its bound.
void GranSearch::fullPass(const Space& s, Pricing& pr, Cost cap) {
  std::vector<Cand> all;
  forEach(s, std::min(cap, pr.best), [&](const Cand& c) { all.push_back(c); });
  std::sort(all.begin(), all.end());
  for (const Cand& c : all) {
    if (c.lb >= std::min(cap, pr.best) && !o_.verify) break;
    price(s, pr, c);
  }
}

// The first steps of run and runFull: the grid shape and the plan at the largest granularity.
// False (and e final at kInf) when the subgraph is invalid at every granularity: V8, V9 and E2
// only get harder as w, h, k shrink, so one invalid at the largest is invalid everywhere.
bool GranSearch::probeSpace(const std::vector<OpId>& ops, const std::vector<TensorId>& rin,
                            const std::vector<TensorId>& rout, Space& s, SubgraphPlan& probe, PriceEntry& e) {
  ++st_.subgraphs_priced;
  bool ok = shapeOf(ops, s);
  if (ok) {
    probe = planSubgraph(p_, m_, ops, {s.wTop, s.hTop, s.kmax}, rin, rout);
    ++st_.plans;
    ok = probe.valid;
    if (!ok && o_.verify) verifyInvalid(ops, rin, rout, s);
  }
  if (!ok) {
    e.best = e.floor = kInf;
    e.exact = true;
  }
  return ok;
}

void GranSearch::run(const std::vector<OpId>& ops, const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                     Cost cap, PriceEntry& e) {
  Space s;
  SubgraphPlan probe;
  if (!probeSpace(ops, rin, rout, s, probe, e)) return;
  listSides(probe, s);
  boundFacts(probe, s);
  Pricing pr(ops, rin, rout, e);
  seedPass(s, pr, cap);
  fullPass(s, pr, cap);
  if (pr.best < cap || o_.verify) {
    e.exact = true;
    e.floor = e.best;
  } else {
    e.lb = std::max(e.lb, cap);
  }
}

}  // namespace mlsys::exact_detail
