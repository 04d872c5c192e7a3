// The step-by-step terms of a part's floor (class_floor.h, ClassFloor): L1 and L2 make a
// subgraph pay the sum of its steps' maxima, not the larger of its sums.
#include <array>

#include "cost/bound/class_floor.h"

namespace mlsys::bound_detail {

ClassFloor::TileKind ClassFloor::tileKind(const Grid& g, uint32_t kept, i64 hmin, i64 wmin, i64 count) const {
  const LD B = static_cast<LD>(p.bandwidth);
  TileKind tk;
  tk.count = static_cast<LD>(count);
  const std::vector<Canon>& canon = canonFor(g);
  // A slice of one tile (rows and columns of it: both axes with several intervals) is new in
  // every tile, never a previous step's; it is needed from the tile's first k-step (spec,
  // decision 4: an epilogue's inputs are loaded at k-step 0 and stay), so that step loads it,
  // when no other template of its tensor may coincide with it.
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (keptFor(tensors[i].bit, kept) || canon[i].whole || !canon[i].allNever) continue;
    for (auto [r, k] : canon[i].tpl)
      if (r == Ext::Rho && k == Ext::Gamma) tk.tl += static_cast<LD>(hmin) * static_cast<LD>(wmin) / B;
  }
  // Each k-step loads a new k-strip of every operand not kept, unless another template of its
  // tensor may hold the same slice (then the strip may be resident from the previous step's
  // slice of the other role: L3; until issue 50 such tensors counted here too).
  if (g.nk > 1) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (keptFor(tensors[i].bit, kept) || canon[i].whole || !canon[i].allNever) continue;
      const TensorId t = tensors[i].t;
      i64 most = 0;
      for (auto [r, k] : canon[i].tpl) {
        if (r == Ext::Kappa) most = std::max(most, k == Ext::Gamma ? wmin : k == Ext::Full ? p.widths[t] : 0);
        if (k == Ext::Kappa) most = std::max(most, r == Ext::Rho ? hmin : r == Ext::Full ? p.heights[t] : 0);
      }
      tk.e += static_cast<LD>(most) / B;
    }
  }
  for (auto [t, bit] : outs)
    if (!keptFor(bit, kept)) tk.sigma += static_cast<LD>(hmin) * static_cast<LD>(wmin) / B;
  return tk;
}

// With nk = 1 each step is a tile, and a tile that starts a run of its row loads the row's
// bands in that step (traffic says when), one that starts a run of its column the column's:
// beyond stepFloor's max(c, sigma) per tile, each run start adds its bands' excess over theta
// (runExcess in joint_floors.cpp states why; theta from the kinds' stores: kindsExcess). The
// bands' times do not depend on theta: one traffic pass gives them.
ClassFloor::Bands ClassFloor::bandTimes(const Grid& g, uint32_t kept) const {
  Bands b;
  traffic(g, kept, &b);
  const LD B = static_cast<LD>(p.bandwidth);
  return {b.rowFull / B, b.rowLast / B, b.colFull / B, b.colLast / B};
}

// The tiles of a class: (nth - 1) x (ntw - 1) full ones (sides at least lo), a last column and
// a last row (the clipped band, at least rowLast / colLast), and the corner.
LD ClassFloor::stepFloor(const Grid& g, uint32_t kept, i64 kfit, const SideClass& cw, const SideClass& ch) const {
  if (!args.on(BoundArg::StepFloors)) return 0;
  const i64 hFull = ch.lo, wFull = cw.lo, hLast = std::min(ch.lo, g.rowLast), wLast = std::min(cw.lo, g.colLast);
  std::vector<TileKind> kinds;
  if (g.nth > 1 && g.ntw > 1) kinds.push_back(tileKind(g, kept, hFull, wFull, (g.nth - 1) * (g.ntw - 1)));
  if (g.nth > 1) kinds.push_back(tileKind(g, kept, hFull, wLast, g.nth - 1));
  if (g.ntw > 1) kinds.push_back(tileKind(g, kept, hLast, wFull, g.ntw - 1));
  kinds.push_back(tileKind(g, kept, hLast, wLast, 1));
  const SubgraphPlan::Coefs& cf = coefsFor(g);
  const LD a = cf.mm ? static_cast<LD>(cf.mm) / static_cast<LD>(pl.D) : 0;
  const LD b = static_cast<LD>(cf.every), last = static_cast<LD>(cf.last);
  const LD K = static_cast<LD>(pl.Kacc);
  auto f = [&](const TileKind& t, LD x) { return std::max(a * x + b, t.e * x); };
  auto gl = [&](const TileKind& t, LD x) { return std::max(a * x + b + last, t.e * x + t.sigma); };
  // The first k-step also loads the tile's slices (f1); a tile of one step does all (g1).
  auto f1 = [&](const TileKind& t, LD x) { return std::max(a * x + b, t.e * x + t.tl); };
  auto g1 = [&](const TileKind& t, LD x) { return std::max(a * x + b + last, t.e * x + t.sigma + t.tl); };
  // At one k, every tile: (n - 2) f(k) + f1(k) + g(r), or g1(K) with n = 1.
  auto atK = [&](i64 k) {
    const i64 nk = (pl.Kacc + k - 1) / k;
    const LD x = static_cast<LD>(k), r = K - static_cast<LD>(nk - 1) * x;
    LD sum = 0;
    for (const TileKind& t : kinds)
      sum += t.count * (nk == 1 ? g1(t, r) : static_cast<LD>(nk - 2) * f(t, x) + f1(t, x) + gl(t, r));
    return sum;
  };
  constexpr i64 kMaxStepK = 256;
  const i64 n = g.nk > 1 ? (pl.Kacc + kfit - 1) / kfit : 1;
  if (n <= 1) {
    LD sum = 0;
    std::array<std::pair<LD, LD>, 4> stores{};  // per kind: count, its least store (at most 4 kinds)
    for (size_t i = 0; i < stores.size(); ++i) {
      const TileKind& t = kinds[std::min(i, kinds.size() - 1)];
      if (i < kinds.size()) sum += t.count * g1(t, K);
      stores[i] = {i < kinds.size() ? t.count : 0, t.sigma + t.tl};  // a repeat: no count, same theta
    }
    // Each kind's steps store and load at least its sigma + tl (the class's least sides), so their
    // theta is at most max(0, c - sigma - tl): kindsExcess's loss is at most what it counts.
    const LD c = a * K + b + last;
    const Bands bt = bandTimes(g, kept);
    auto excessAt = [&](LD theta) {
      return runExcess(bt.rowFull, bt.rowLast, bt.colFull, bt.colLast, g.nth, g.ntw, theta);
    };
    return sum + kindsExcess(excessAt, stores, c);
  }
  LD best = std::numeric_limits<LD>::infinity();
  if (kfit <= kMaxStepK) {
    for (i64 k = 1; k <= kfit; ++k) best = std::min(best, atK(k));
    return best;
  }
  // The relaxation: per kind, the even split's least value at an end or a kink (see above; the
  // first step's tile slices left out).
  LD sum = 0;
  const LD m = static_cast<LD>(n - 1), hi = K / m;
  for (const TileKind& t : kinds) {
    std::vector<LD> ys = {0, hi};
    if (t.e > a) ys.push_back(b / (t.e - a));
    if (a != t.e) ys.push_back((K - (t.sigma - b - last) / (a - t.e)) / m);
    LD least = std::numeric_limits<LD>::infinity();
    for (LD y : ys) {
      y = std::clamp<LD>(y, 0, hi);
      least = std::min(least, m * f(t, y) + gl(t, K - m * y));
    }
    sum += t.count * least;
  }
  return sum;
}

}  // namespace mlsys::bound_detail
