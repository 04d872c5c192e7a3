// The exact solver's granularity search over the spec's whole space (ExactOptions::full_space;
// exact.h): every (w, h, k) that V8 allows and every tile order. Orders other than raster, the
// snakes and their mirrored starts are not priced but bounded by cost/bound/any_order.h's floor.
//
// Granularities are visited best-first by a sound bound, at four levels:
//  1. a tile-count class (nw, nh, nk): every side w with ceil(W / w) = nw lies between the
//     smallest such side and the next larger count's smallest side (likewise h and k). Its
//     bound (anyOrderWeak) depends on the counts only, so it holds for every member; a class
//     whose smallest sides already overflow the capacity at the first step is dropped (the
//     working set only grows with w, h, k, and the full-size tile (0, 0) is in every order);
//  1b. the class's floor (classFloor): an any-order floor that holds for every member; a class
//      with more than a few members is halved along its longest side, recursively, each half
//      bounded the same way over its own sides (a box of a class is a class for classFloor);
//  2. one grid (w, h, k) of a class: its any-order floor (cost/bound/any_order.h), at least the
//     class bound;
//  3. the same grid with that floor: its orders are priced; if the best price found so far
//     is still above the floor, every permutation of a grid of at most 6 tiles is priced, and
//     on a larger grid the floor stands for the orders not priced.
// The search ends when the least bound left reaches the best price (or the cap). The
// transition's floor is then min(best price, every floor that stood): nothing in the space
// costs less.
#include <array>

#include "cost/bound/any_order.h"
#include "engine/exact/exact_internal.h"

namespace mlsys::exact_detail {

namespace {
// Templates that may coincide by value need every predecessor: O(tiles^2) step prices.
constexpr i64 kFloorPairTiles = 64;
constexpr i64 kSideBits = 21;  // w, h, k in a plan key
// Grids where every permutation is priced when the floor stays below the best (720 orders).
constexpr i64 kPermTiles = 6;
constexpr i64 kPermSteps = 256;
// Boxes of a count class with at most this many grids are expanded rather than halved.
constexpr i64 kBoxExpand = 8;
}  // namespace

// Every order's price at grid g, at least, from the tile counts alone: the compute of every tile
// (each tile pays its compute whatever the order), or the stores plus the loads each tensor must
// do in any order (loads() of the cheaper of raster and column snake: each row strip and each
// column strip at least once, every k-strip every step, several templates every element once).
Cost GranSearch::anyOrderWeak(const Space& s, const Grid& g) const {
  i128 mem = s.stores;
  for (const Tensor& x : s.tens)
    mem += std::min(loads(s, x, g, TraversalKind::Raster, 0), loads(s, x, g, TraversalKind::ColSnake, 0));
  const i128 comp = static_cast<i128>(g.nw) * g.nh * s.cTile;
  return sc_.of(std::max(comp, mem * s.D), s.den, true);
}

const SubgraphPlan& GranSearch::planAt(Pricing& pr, const Grid& g) {
  const u64 key =
      (static_cast<u64>(g.w) << (2 * kSideBits)) | (static_cast<u64>(g.h) << kSideBits) | static_cast<u64>(g.k);
  auto it = pr.plans.find(key);
  if (it == pr.plans.end()) {
    it = pr.plans.emplace(key, planSubgraph(p_, m_, pr.ops, {g.w, g.h, g.k}, pr.rin, pr.rout)).first;
    ++st_.plans;
  }
  return it->second;
}

// The any-order floor of grid g (kInf: no order is valid there).
Cost GranSearch::gridFloor(const Space& s, Pricing& pr, const Grid& g) {
  const SubgraphPlan& pl = planAt(pr, g);
  if (!pl.valid) return kInf;
  const AnyOrderFloor f = anyOrderFloor(p_, pl, kFloorPairTiles);
  if (f.kind == AnyOrderFloor::Kind::Invalid) return kInf;
  const Cost weak = anyOrderWeak(s, g);
  if (f.kind == AnyOrderFloor::Kind::Unknown) return weak;
  return std::max(weak, sc_.of(f.num, static_cast<i128>(pl.D) * p_.bandwidth, true));
}

// A floor of every grid of one tile-count class (sides from lo to hi, counts equal), from one
// synthetic plan: the class's smallest sides for the full tiles and, for the clipped last row,
// column and k-strip, the smallest extent any member has (W - (nw - 1) * hi.w, ...). With one
// template per tensor (fast_ok, the same for every member: it depends on the counts) which
// slices are resident in a step depends on the counts and the tile relation only, and every
// slice, store and k-strip of the synthetic plan is no larger than the member's, so every step
// (and so every tile cost of cost/bound/any_order.h) is no dearer; its floor bounds every member.
// kInf: no member fits (the synthetic working sets, the least, overflow). Without one template
// per tensor, or when the smallest member is invalid, the class bound alone (anyOrderWeak).
//
// A plan's validity depends on the sides only through V8 (k <= K: every side here respects it)
// and V9 (a fused Pointwise operand needs w >= K, h >= K or k >= K: upward closed); the other
// rules depend on the counts, equal across the class. So when the plan of the largest sides is
// invalid, every member's is, and the class is empty (kInf) without looking at its members.
Cost GranSearch::classFloor(const Space& s, Pricing& pr, const Grid& lo, const Grid& hi) {
  if (!planAt(pr, hi).valid) return kInf;
  const Cost weak = anyOrderWeak(s, lo);
  const SubgraphPlan& base = planAt(pr, lo);
  if (!base.valid || !base.fast_ok || base.ntw != lo.nw || base.nth != lo.nh || base.nk != lo.nk) return weak;
  SubgraphPlan syn = base;
  syn.W = (lo.nw - 1) * lo.w + (s.W - (lo.nw - 1) * hi.w);
  syn.H = (lo.nh - 1) * lo.h + (s.H - (lo.nh - 1) * hi.h);
  if (s.Kacc) syn.Kacc = (lo.nk - 1) * lo.k + (s.Kacc - (lo.nk - 1) * hi.k);
  const AnyOrderFloor f = anyOrderFloor(p_, syn, kFloorPairTiles);
  if (f.kind == AnyOrderFloor::Kind::Invalid) return kInf;
  if (f.kind == AnyOrderFloor::Kind::Unknown) return weak;
  return std::max(weak, sc_.of(f.num, static_cast<i128>(syn.D) * p_.bandwidth, true));
}

// Every order the solver prices at grid g (forEach's orders: raster, the snakes on grids of at
// least 2 x 2 tiles, the mirrored starts along a clipped axis).
void GranSearch::priceOrders(const Space& s, Pricing& pr, const Grid& g) {
  const SubgraphPlan& pl = planAt(pr, g);
  const bool snakes = o_.snakes && g.nw >= 2 && g.nh >= 2 && g.nw * g.nh <= kMaxWrittenOrderTiles;
  const bool mirrors = o_.mirrors && g.nw * g.nh >= 2 && g.nw * g.nh <= kMaxMirroredTiles;
  const int flips = mirrors ? (s.W % g.w != 0 && g.nw >= 2 ? 1 : 0) | (s.H % g.h != 0 && g.nh >= 2 ? 2 : 0) : 0;
  for (int t = 0; t < (snakes ? 3 : 1); ++t)
    for (int f = 0; f <= 3; ++f)
      if ((f & flips) == f) priceOrder(pr, pl, g, t | f << 2, 0, false);
}

// On a grid of at most kPermTiles tiles, every order is priced (all permutations): the grid's
// minimum is then exact and no floor needs to stand for it. Templates that coincide by value can
// make an order outside the listed ones cheaper (a tile whose operand strip the previous tile
// loaded under another role). False when the grid is too large for this.
bool GranSearch::priceEveryOrder(Pricing& pr, const Grid& g) {
  const SubgraphPlan& pl = planAt(pr, g);
  const i64 T = pl.tiles();
  if (!pl.valid || T > kPermTiles || pl.steps() > kPermSteps) return false;
  std::vector<int32_t> perm(static_cast<size_t>(T));
  for (i64 t = 0; t < T; ++t) perm[static_cast<size_t>(t)] = static_cast<int32_t>(t);
  do {
    if ((++pr.attempts & 7) == 0 && !ignoreStop && stop_()) throw Stopped{};
    takePricing();
    SubgraphCost sc = costSubgraph(p_, pl, Traversal{TraversalKind::Custom, perm});
    ++st_.configs_priced;
    if (!sc.valid) continue;
    const Cost v = sc_.of(sc.num, sc.den, false);
    if (v < pr.best) {
      pr.best = pr.e.best = v;
      pr.e.g = {g.w, g.h, g.k};
      pr.e.tk = TraversalKind::Custom;
      pr.e.flip = 0;
      pr.e.order = perm;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  return true;
}

void GranSearch::runFull(const std::vector<OpId>& ops, const std::vector<TensorId>& rin,
                         const std::vector<TensorId>& rout, Cost cap, PriceEntry& e) {
  Space s;
  SubgraphPlan probe;
  if (!probeSpace(ops, rin, rout, s, probe, e)) return;
  s.Kacc = probe.Kacc;
  s.ws = smallestSides(s.W, s.wTop);
  s.hs = smallestSides(s.H, s.hTop);
  s.ks = s.anyMM ? smallestSides(s.Kacc, s.kmax) : std::vector<i64>{1};
  for (auto* v : {&s.ws, &s.hs, &s.ks}) std::sort(v->begin(), v->end(), std::greater<>());
  if (s.ws[0] >= (i64{1} << kSideBits) || s.hs[0] >= (i64{1} << kSideBits) || s.ks[0] >= (i64{1} << kSideBits))
    throw Overflow{};  // not reachable with the parser's limits; refuse rather than alias keys
  boundFacts(probe, s);
  Pricing pr(ops, rin, rout, e);

  struct Item {
    Cost lb;
    // 0: a count class to bound (indices into ws, hs, ks); 1: a box of one class to split or
    // expand (sides a..d, b..e, c..f); 2: a grid (sides) to bound; 3: a grid to price
    int level;
    i64 a, b, c, d = 0, e = 0, f = 0;
    bool operator<(const Item& o) const { return lb > o.lb; }  // min-heap
  };
  std::priority_queue<Item> q;
  auto limit = [&] { return pr.best < cap ? pr.best : cap; };
  auto grid = [&](i64 w, i64 h, i64 k) {
    return Grid{w, h, k, (s.W + w - 1) / w, (s.H + h - 1) / h, s.Kacc ? (s.Kacc + k - 1) / k : 1};
  };
  u64 n = 0;  // stop polls: every 8 floors or queue items (each can take a millisecond)
  for (size_t wi = 0; wi < s.ws.size(); ++wi)
    for (size_t hi = 0; hi < s.hs.size(); ++hi)
      for (size_t ki = 0; ki < s.ks.size(); ++ki) {
        if ((++n & 7) == 0 && !ignoreStop && stop_()) throw Stopped{};
        const Grid g = gridOf(s, wi, hi, ki);
        if (firstWs(s, g) > p_.capacity) continue;
        const Cost lb = anyOrderWeak(s, g);
        if (lb < limit()) q.push({lb, 0, static_cast<i64>(wi), static_cast<i64>(hi), static_cast<i64>(ki)});
      }
  // The sides of count class i of a list (largest first): from its smallest side up to just below
  // the next larger count's (the previous entry), or to the largest side allowed.
  auto top = [](const std::vector<i64>& v, i64 i, i64 largest) { return i == 0 ? largest : v[i - 1] - 1; };
  auto classTop = [&](const Item& it) {
    return Grid{top(s.ws, it.a, s.wTop), top(s.hs, it.b, s.hTop), s.anyMM ? top(s.ks, it.c, s.kmax) : 1, 0, 0, 0};
  };
  // A box of one count class (every member has the same tile and step counts): small ones are
  // expanded into their grids; larger ones are halved along their longest side, each half
  // bounded by classFloor over its own sides (a sub-box of a class is a class for its argument,
  // and its floor is at least the whole class's), so that a region of the class that cannot beat
  // the incumbent (under k_limit=reduction a class of k can span a thousand values) is dropped
  // at once. firstWs grows with every side, so a box whose smallest member overflows is empty.
  auto splitBox = [&](Cost lb, std::array<i64, 3> lo, std::array<i64, 3> hi) {
    if (firstWs(s, grid(lo[0], lo[1], lo[2])) > p_.capacity) return;
    const i64 volume = (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1);
    if (volume <= kBoxExpand) {
      for (i64 w = lo[0]; w <= hi[0]; ++w)
        for (i64 h = lo[1]; h <= hi[1]; ++h)
          for (i64 k = lo[2]; k <= hi[2]; ++k)
            if (firstWs(s, grid(w, h, k)) <= p_.capacity) q.push({lb, 2, w, h, k});
      return;
    }
    int ax = 0;
    for (int x = 1; x < 3; ++x)
      if (hi[x] - lo[x] > hi[ax] - lo[ax]) ax = x;
    const i64 mid = lo[ax] + (hi[ax] - lo[ax]) / 2;
    for (int half = 0; half < 2; ++half) {
      std::array<i64, 3> l = lo, h = hi;
      (half == 0 ? h : l)[ax] = half == 0 ? mid : mid + 1;
      if (firstWs(s, grid(l[0], l[1], l[2])) > p_.capacity) continue;
      const Cost f = classFloor(s, pr, grid(l[0], l[1], l[2]), grid(h[0], h[1], h[2]));
      if (f < kInf && std::max(f, lb) < limit()) q.push({std::max(f, lb), 1, l[0], l[1], l[2], h[0], h[1], h[2]});
    }
  };
  Cost floorMin = kInf;
  while (!q.empty() && q.top().lb < limit()) {
    if ((++n & 7) == 0 && !ignoreStop && stop_()) throw Stopped{};
    const Item it = q.top();
    q.pop();
    if (it.level == 0 || it.level == 1) {
      if (it.level == 0) {  // the class floor first: most classes end here
        const Grid lo = gridOf(s, it.a, it.b, it.c), hi = classTop(it);
        const Cost f = classFloor(s, pr, lo, hi);
        if (f < kInf) q.push({std::max(f, it.lb), 1, lo.w, lo.h, lo.k, hi.w, hi.h, hi.k});
        continue;
      }
      splitBox(it.lb, {it.a, it.b, it.c}, {it.d, it.e, it.f});
    } else if (it.level == 2) {
      const Cost f = gridFloor(s, pr, grid(it.a, it.b, it.c));
      if (f < kInf) q.push({std::max(f, it.lb), 3, it.a, it.b, it.c});
    } else {
      const Grid g = grid(it.a, it.b, it.c);
      priceOrders(s, pr, g);
      // Orders not priced may cost this little: the floor stands, unless every order is priced.
      if (pr.best > it.lb && !priceEveryOrder(pr, g)) floorMin = std::min(floorMin, it.lb);
    }
  }
  if (pr.best < cap || floorMin < cap) {
    e.exact = true;
    e.floor = std::min(pr.best, floorMin);
  } else {
    e.lb = std::max(e.lb, cap);
  }
}

}  // namespace mlsys::exact_detail
