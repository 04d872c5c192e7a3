// The exact solver's granularity search (see exact_internal.h and exact.h).
#include "engine/exact/exact_internal.h"

namespace mlsys::exact_detail {

void GranSearch::verifyInvalid(const std::vector<OpId>& ops, const std::vector<TensorId>& rin,
                               const std::vector<TensorId>& rout, i64 W, i64 H, i64 kmax) {
  const i64 N = p_.native;
  std::vector<i64> ks{1};
  for (OpId o : ops)
    if (p_.ops[o].type == OpType::MatMul)
      for (i64 k : smallestSides(p_.ops[o].K, kmax)) addSide(ks, k, kmax);
  addSide(ks, kmax, kmax);
  std::vector<i64> ws = smallestSides(W, std::min(N, W)), hs = smallestSides(H, std::min(N, H));
  if (o_.every_side) {
    ws.clear();
    hs.clear();
    for (i64 x = 1; x <= std::min(N, W); ++x) ws.push_back(x);
    for (i64 x = 1; x <= std::min(N, H); ++x) hs.push_back(x);
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

void GranSearch::run(const std::vector<OpId>& ops, const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                     Cost cap, PriceEntry& e) {
  const i64 N = p_.native;
  ++st_.subgraphs_priced;
  // The grid shape: every non-ephemeral output has it; take any output of S.
  std::vector<char> inS(p_.numOps(), 0);
  for (OpId o : ops) inS[o] = 1;
  TensorId outT = -1;
  // V8: k <= N, or up to the MatMuls' K under k_limit=reduction.
  i64 kmax = m_.k_limit == ModelOptions::KLimit::Reduction ? INT64_MAX : N;
  bool anyMM = false;
  std::vector<i64> extraW, extraH;
  for (OpId o : ops) {
    const Op& op = p_.ops[o];
    for (TensorId t : op.outputs) {
      bool consumedInside = false;
      for (OpId c : p_.consumers[t]) consumedInside |= inS[c] != 0;
      if (!consumedInside && outT < 0) outT = t;
    }
    if (op.type == OpType::MatMul) {
      anyMM = true;
      kmax = std::min(kmax, op.K);
      OpId l = p_.producer[op.inputs[0]], r = p_.producer[op.inputs[1]];
      if (l >= 0 && inS[l] && p_.ops[l].type == OpType::Pointwise) extraW.push_back(op.K);
      if (r >= 0 && inS[r] && p_.ops[r].type == OpType::Pointwise) extraH.push_back(op.K);
    }
  }
  if (!anyMM) kmax = 1;
  auto invalid = [&] {
    e.best = kInf;
    e.exact = true;
  };
  if (outT < 0) return invalid();
  const i64 W = p_.widths[outT], H = p_.heights[outT];
  const i64 wTop = std::min(N, W), hTop = std::min(N, H);
  // V8, V9 and E2 only get harder as w, h, k shrink: a subgraph invalid at the largest
  // granularity is invalid at every granularity.
  SubgraphPlan probe = planSubgraph(p_, m_, ops, {wTop, hTop, kmax}, rin, rout);
  ++st_.plans;
  if (!probe.valid) {
    if (o_.verify) verifyInvalid(ops, rin, rout, W, H, kmax);
    return invalid();
  }
  const i64 Kacc = probe.Kacc, D = probe.D, B = p_.bandwidth;
  const i128 den = static_cast<i128>(D) * B;

  auto sides = [&](i64 dim, i64 limit) {
    if (!o_.every_side) return smallestSides(dim, limit);
    std::vector<i64> v;
    for (i64 x = 1; x <= limit; ++x) v.push_back(x);
    return v;
  };
  std::vector<i64> ws = sides(W, wTop), hs = sides(H, hTop);
  for (i64 x : extraW) addSide(ws, x, wTop);
  for (i64 x : extraH) addSide(hs, x, hTop);
  std::vector<i64> ks;
  if (anyMM) {
    ks = sides(Kacc, kmax);
    addSide(ks, kmax, kmax);
  } else {
    ks = {1};
  }
  std::sort(ws.begin(), ws.end(), std::greater<>());
  std::sort(hs.begin(), hs.end(), std::greater<>());
  std::sort(ks.begin(), ks.end(), std::greater<>());

  // Slice templates grouped by tensor (they do not depend on the granularity).
  std::vector<Tensor> tens;
  for (const SliceTpl& s : probe.slices) {
    auto it = std::find_if(tens.begin(), tens.end(), [&](const Tensor& x) { return x.t == s.t; });
    if (it == tens.end()) {
      tens.push_back({s.t, p_.size(s.t), p_.heights[s.t], p_.widths[s.t], {}});
      it = tens.end() - 1;
    }
    it->tpl.push_back({s.rk, s.ck});
  }
  // Compute of one tile, at least (den units): every MatMul need costs mm_coef*K_acc over the
  // k-steps; every Pointwise need at least once per tile (k-strip ones once per k-step).
  const i128 cTile = (static_cast<i128>(probe.mm_coef) * Kacc + static_cast<i128>(probe.pw_every + probe.pw_last) * D) * B;
  const i128 stores = static_cast<i128>(probe.n_store) * W * H;  // output tiles partition the tensor
  const i64 wsConst = probe.ws_const, nStore = probe.n_store, nAcc = probe.n_acc;

  struct Grid {
    i64 w, h, k, nw, nh, nk;
  };
  // Lower bound on the elements tensor `x` loads over the subgraph (L3). With one template the
  // slice is resident exactly when its intervals did not change since the previous step (the
  // previous step's slice of that tensor is the same template); with several, a slice may be
  // resident through another template, so only "every element at least once" is claimed.
  // `flip` (bit 0: columns mirrored, bit 1: rows mirrored) starts a snake from another corner:
  // it moves which turns fall on the clipped last row or column (mirrorOf below).
  auto loads = [&](const Tensor& x, const Grid& g, TraversalKind tk, int flip) -> i128 {
    if (x.tpl.size() != 1) return x.size;
    auto count = [&](Ext a) { return a == Ext::Rho ? g.nh : a == Ext::Gamma ? g.nw : a == Ext::Kappa ? g.nk : i64{1}; };
    auto ext = [&](Ext a, bool row) { return a == Ext::Rho ? H : a == Ext::Gamma ? W : a == Ext::Kappa ? Kacc : (row ? x.Ht : x.Wt); };
    auto var = [&](Ext a) { return count(a) <= 1 ? -1 : a == Ext::Rho ? 0 : a == Ext::Gamma ? 1 : a == Ext::Kappa ? 2 : -1; };
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
  };
  // Working set of the first step, at least (W1): the largest slice of every tensor, the output
  // tiles and accumulators, the retained tensors.
  auto firstWs = [&](const Grid& g) -> i128 {
    auto len = [&](Ext a, bool row, const Tensor& x) -> i64 {
      return a == Ext::Rho ? std::min(g.h, H) : a == Ext::Gamma ? std::min(g.w, W) : a == Ext::Kappa ? std::min(g.k, Kacc) : (row ? x.Ht : x.Wt);
    };
    i128 ws0 = wsConst + static_cast<i128>(std::min(g.h, H)) * std::min(g.w, W) * (nStore + (g.nk > 1 ? nAcc : 0));
    for (const Tensor& x : tens) {
      i128 mx = 0;
      for (auto [a, b] : x.tpl) mx = std::max<i128>(mx, static_cast<i128>(len(a, true, x)) * len(b, false, x));
      ws0 += mx;
    }
    return ws0;
  };
  auto gridOf = [&](size_t wi, size_t hi, size_t ki) {
    Grid g{ws[wi], hs[hi], ks[ki], 0, 0, 1};
    g.nw = (W + g.w - 1) / g.w;
    g.nh = (H + g.h - 1) / g.h;
    g.nk = Kacc ? (Kacc + g.k - 1) / g.k : 1;
    return g;
  };
  const TraversalKind kinds[3] = {TraversalKind::Raster, TraversalKind::RowSnake, TraversalKind::ColSnake};
  auto lbOf = [&](const Grid& g, TraversalKind tk, int flip) -> Cost {
    i128 mem = stores;
    for (const Tensor& x : tens) mem += loads(x, g, tk, flip);
    const i128 comp = static_cast<i128>(g.nw) * g.nh * cTile;
    return sc_.of(std::max(comp, mem * D), den, true);
  };
  // Every candidate with lower bound < limit, in loop order (the tile count only grows inside
  // each loop, so the compute bound ends them early).
  // In verify mode every candidate is produced (the bounds are only checked).
  const bool verify = o_.verify;
  auto forEach = [&](Cost limit, auto&& fn) {
    const i64 nhMin = (H + hs[0] - 1) / hs[0];
    for (size_t wi = 0; wi < ws.size(); ++wi) {
      const i64 nw = (W + ws[wi] - 1) / ws[wi];
      if (!verify && sc_.of(static_cast<i128>(nw) * nhMin * cTile, den, true) >= limit) break;
      for (size_t hi = 0; hi < hs.size(); ++hi) {
        if (!ignoreStop && stop_()) throw Stopped{};  // millions of candidates on huge tensors
        const i64 nh = (H + hs[hi] - 1) / hs[hi];
        if (!verify && sc_.of(static_cast<i128>(nw) * nh * cTile, den, true) >= limit) break;
        for (size_t ki = 0; ki < ks.size(); ++ki) {
          Grid g = gridOf(wi, hi, ki);
          const bool wsPruned = firstWs(g) > p_.capacity;
          if (wsPruned && !verify) continue;
          const bool snakes = o_.snakes && g.nw >= 2 && g.nh >= 2 && g.nw * g.nh <= kMaxWrittenOrderTiles;
          // Mirrored starts only along an axis with a clipped last tile: without one, the
          // mirror maps the grid onto itself tile for tile (same sizes), so the price is equal.
          const bool mirrors = o_.mirrors && g.nw * g.nh >= 2 && g.nw * g.nh <= kMaxMirroredTiles;
          const int flips = mirrors ? (W % g.w != 0 && g.nw >= 2 ? 1 : 0) | (H % g.h != 0 && g.nh >= 2 ? 2 : 0) : 0;
          for (int t = 0; t < (snakes ? 3 : 1); ++t)
            for (int f = 0; f <= 3; ++f) {
              if ((f & flips) != f) continue;
              Cost lb = lbOf(g, kinds[t], f);
              if (lb < limit || verify)
                fn(Cand{lb, static_cast<uint16_t>(wi), static_cast<uint16_t>(hi), static_cast<uint16_t>(ki),
                        static_cast<uint8_t>(t | f << 2), wsPruned});
            }
        }
      }
    }
  };

  std::unordered_map<u64, SubgraphPlan> plans;
  std::unordered_set<u64> priced;
  Cost best = e.best;
  u64 attempts = 0;
  auto key = [](const Cand& c) { return (u64{c.wi} << 40) | (u64{c.hi} << 20) | (u64{c.ki} << 4) | c.tk; };
  auto price = [&](const Cand& c) {
    const u64 pk = key(c);
    if (!priced.insert(pk).second) return;
    // (counted per attempt: on huge tensors most plans can be rejected, and pricing never counts)
    if ((++attempts & 63) == 0 && !ignoreStop && stop_()) throw Stopped{};
    const Grid g = gridOf(c.wi, c.hi, c.ki);
    const u64 gk = pk >> 4;
    auto it = plans.find(gk);
    if (it == plans.end()) {
      it = plans.emplace(gk, planSubgraph(p_, m_, ops, {g.w, g.h, g.k}, rin, rout)).first;
      ++st_.plans;
    }
    const SubgraphPlan& pl = it->second;
    if (!pl.valid) return;
    if (!pl.fast_ok && pl.steps() > kMaxSearchWalkSteps) return;  // excluded from the space (exact.h)
    SubgraphCost sc = costSubgraph(p_, pl, exactTraversal(kinds[c.tk & 3], c.tk >> 2, g.nw, g.nh));
    ++st_.configs_priced;
    if (!sc.valid) return;
    Cost v = sc_.of(sc.num, sc.den, false);
    if (v < c.lb || c.wsPruned) ++st_.lb_violations;
    if (v < best) {
      best = v;
      e.best = v;
      e.g = {g.w, g.h, g.k};
      e.tk = kinds[c.tk & 3];
      e.flip = static_cast<uint8_t>(c.tk >> 2);
    }
  };

  // Pass 1: an upper bound from the few candidates with the smallest bounds.
  constexpr size_t kSeeds = 8;
  std::priority_queue<Cand> seeds;  // max-heap on lb
  forEach(std::min(cap, best), [&](const Cand& c) {
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
    if (c.lb >= std::min(cap, best) && !verify) break;
    price(c);
  }
  // Pass 2: everything that can still beat the best, in order of its bound.
  std::vector<Cand> all;
  forEach(std::min(cap, best), [&](const Cand& c) { all.push_back(c); });
  std::sort(all.begin(), all.end());
  for (const Cand& c : all) {
    if (c.lb >= std::min(cap, best) && !verify) break;
    price(c);
  }
  if (best < cap || verify) {
    e.exact = true;
  } else {
    e.lb = std::max(e.lb, cap);
  }
}

}  // namespace mlsys::exact_detail
