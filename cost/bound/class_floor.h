// The floor of one plan class of a part (part_floor.cpp, partFloor; step_floors.cpp, its
// step-by-step terms): internal to the lower bound.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/bound/internal.h"
#include "cost/pricing/granularity.h"
#include "cost/pricing/subgraph.h"

namespace mlsys::bound_detail {

// Floors of one plan class (the slice templates of E3 do not depend on w, h, k within a class:
// nk > 1, or nk = 1).
struct ClassFloor {
  const Problem& p;
  const SubgraphPlan& pl;
  bool multiK;  // nk > 1 class: k free in [1, kHi]
  i64 kHi;      // largest k of the class
  // Per boundary-input tensor: its templates (canonicalised per (w,h,k) below), and its bit in
  // the retention choices when it is retainable (0: always loaded).
  struct Tensor {
    TensorId t;
    uint32_t bit;
    std::vector<std::pair<Ext, Ext>> tpl;
  };
  std::vector<Tensor> tensors;
  // Per written output: its bit when retainable (0: always stored).
  std::vector<std::pair<TensorId, uint32_t>> outs;
  // The crossing tensors that may stay in fast memory, in bit order. With more than kMaxChoices
  // of them the floor does not choose: every one is free of traffic and counts at most |t| (the
  // plain relaxation of retention, sound but weaker).
  static constexpr int kMaxChoices = 6;
  std::vector<TensorId> choices;
  bool relaxed = false;
  // The retention prices (bound.h, RetentionPrices): keeping choice i adds choicePen[i], +price
  // for a tensor kept in, -price for one kept out. minPen: the least any choice adds.
  const RetentionPrices* prices;
  std::vector<LD> choicePen;
  LD minPen = 0;

  // Under prices, the tensors made and read inside the part (never written) that a later part may
  // also read: kept out (V6 allows it), one counts |t| in the working set instead of 0 and earns
  // its price. Any of them may be: a later subgraph may run one of their readers again (a
  // recomputation) with the tensor retained in, paying its price there (sweep seed 8596, k_limit=
  // reduction: {0, 1, 2} kept op 0's output out for {1, 3, 4}, which ran op 1 again; the bound
  // that allowed only tensors with a reader outside the part was 222,376 against 209,372).
  std::vector<std::pair<TensorId, uint32_t>> inner;

  // With nk = 1, set by partFloor: each side pair pointSteps visits is also priced by the plan
  // at those sides with the choice's retained sets, over every tile order (cost/bound/any_order.h).
  const ModelOptions* orders = nullptr;
  const std::vector<OpId>* partOps = nullptr;

  // The arguments switched off (args.h): retention-choice (every choice relaxed),
  // band-reloads, step-floors.
  BoundArgs args;
  // The caller's stop (asked at every 8th poll: per class and side pair, and every 64 kept
  // choices, the first poll included; a stop reads the clock, and at every poll it took 6% of
  // the bound on random-n5000): past it the floor is not complete, and partFloor gives 0, which
  // every subgraph pays.
  const std::function<bool()>* stop = nullptr;
  mutable bool interrupted = false;
  mutable unsigned polls = 0;
  bool stopped() const {
    if (!interrupted && (polls++ & 7) == 0 && stop && *stop && (*stop)()) interrupted = true;
    return interrupted;
  }

  ClassFloor(const Problem& p_, const SubgraphPlan& pl_, bool multiK_, i64 kHi_, const RetentionPrices* prices_,
             const BoundArgs& args_ = {})
      : p(p_), pl(pl_), multiK(multiK_), kHi(kHi_), prices(prices_), args(args_) {
    for (const SliceTpl& s : pl.slices) {
      auto it = std::find_if(tensors.begin(), tensors.end(), [&](const Tensor& x) { return x.t == s.t; });
      if (it == tensors.end()) {
        tensors.push_back({s.t, choiceBit(s.t), {}});
        it = tensors.end() - 1;
      }
      it->tpl.push_back({s.rk, s.ck});
    }
    const size_t nIn = choices.size();
    for (TensorId t : pl.written) outs.push_back({t, choiceBit(t)});
    if (prices && !prices->empty())
      for (TensorId t : pl.produced) {
        if ((*prices)[t] <= 0 || std::find(pl.written.begin(), pl.written.end(), t) != pl.written.end()) continue;
        inner.push_back({t, choiceBit(t)});
      }
    relaxed = static_cast<int>(choices.size()) > kMaxChoices || !args.on(BoundArg::RetentionChoice);
    for (size_t i = 0; i < choices.size(); ++i) {
      const LD price = prices && !prices->empty() ? static_cast<LD>((*prices)[choices[i]]) : 0;
      choicePen.push_back(i < nIn ? price : -price);
      minPen += std::min<LD>(0, choicePen.back());
    }
    buildCanons();
  }
  // What the choice `kept` adds to the floor (a relaxed floor: the least any choice adds).
  LD penalty(uint32_t kept) const {
    if (relaxed) return minPen;
    LD pen = 0;
    for (size_t i = 0; i < choices.size(); ++i)
      if (kept >> i & 1) pen += choicePen[i];
    return pen;
  }
  uint32_t choiceBit(TensorId t) {
    if (!retainable(p, t)) return 0;
    choices.push_back(t);
    return choices.size() <= 32 ? 1u << (choices.size() - 1) : 0;
  }
  // Whether the tensor with this bit is kept in fast memory under the choice `kept` (a relaxed
  // floor treats every retainable one as kept for traffic).
  bool keptFor(uint32_t bit, uint32_t kept) const { return bit && (relaxed || (kept & bit)); }

  struct Grid {
    i64 w, h, k, ntw, nth, nk;
    i64 rowLast, colLast;  // the smallest row band / column band (the clipped last one)
  };

  // Canonical kind: an axis with one interval covering the tensor's whole axis is Full.
  static Ext canon(Ext e, bool oneK, bool oneRow, bool oneCol) {
    if (e == Ext::Kappa && oneK) return Ext::Full;
    if (e == Ext::Rho && oneRow) return Ext::Full;
    if (e == Ext::Gamma && oneCol) return Ext::Full;
    return e;
  }
  // Two distinct canonical templates of one tensor can never be identical slices when on some
  // axis one is Full and the other is not (a non-Full canonical axis has several intervals, none
  // of them whole). Otherwise they might coincide in some step (then only the larger is counted).
  static bool neverEqual(std::pair<Ext, Ext> a, std::pair<Ext, Ext> b) {
    return (a.first == Ext::Full) != (b.first == Ext::Full) || (a.second == Ext::Full) != (b.second == Ext::Full);
  }
  // Per tensor and per grid case (nk = 1?, nth = 1?, ntw = 1?): its distinct canonical templates.
  struct Canon {
    std::vector<std::pair<Ext, Ext>> tpl;  // canonical kinds
    bool allNever = true, whole = false;
  };
  std::vector<Canon> canons[8];
  bool hasSharedStrips = false;  // some tensor's templates may coincide (some Canon not allNever)
  const std::vector<Canon>& canonFor(const Grid& g) const {
    return canons[(g.nk == 1 ? 1 : 0) | (g.nth == 1 ? 2 : 0) | (g.ntw == 1 ? 4 : 0)];
  }
  void buildCanons() {
    for (int f = 0; f < 8; ++f)
      for (const Tensor& x : tensors) {
        Canon c;
        for (auto [r, k] : x.tpl) {
          std::pair<Ext, Ext> ct{canon(r, f & 1, f & 2, f & 4), canon(k, f & 1, f & 2, f & 4)};
          if (std::find(c.tpl.begin(), c.tpl.end(), ct) != c.tpl.end()) continue;
          for (auto& o : c.tpl) c.allNever = c.allNever && neverEqual(o, ct);
          c.tpl.push_back(ct);
          c.whole = c.whole || (ct.first == Ext::Full && ct.second == Ext::Full);
        }
        hasSharedStrips = hasSharedStrips || !c.allNever;
        canons[f].push_back(std::move(c));
      }
    for (int f = 0; f < 8; ++f) coefs[f] = regionCoefs(f & 1, f & 2, f & 4);
  }
  // The compute coefficients in a grid case (A-14: an op runs once per distinct region of its
  // output in a step). The probe plan counted each op's regions that differ in every step at its
  // own sides; at other sides of the class two of them may coincide (a tile and a k-strip when
  // w = k). Within a grid case an axis kind is one interval (the whole axis: canon -> Full) or
  // several, none whole; two regions of an op's output are then distinct in every step when on
  // some axis one is whole and the other is not (its extent is the axis, so each of its
  // intervals is shorter): a greedy set of such pairwise distinct regions is at most the count at
  // any step (issue 50: a MatMul whose output is two operands of a chain, counted twice at the
  // probe's sides, coincides with itself at w = k).
  SubgraphPlan::Coefs coefs[8];
  SubgraphPlan::Coefs regionCoefs(bool oneK, bool oneRow, bool oneCol) const {
    SubgraphPlan::Coefs c{pl.mm_coef, pl.pw_every, pl.pw_last};
    for (const SubgraphPlan::OpRegions& o : pl.multi_regions) {
      std::vector<std::pair<Ext, Ext>> distinct;
      for (const SubgraphPlan::Region& r : o.regions) {
        const std::pair<Ext, Ext> cr{canon(r.rk, oneK, oneRow, oneCol), canon(r.ck, oneK, oneRow, oneCol)};
        bool never = true;
        for (const auto& d : distinct) never = never && neverEqual(d, cr);
        if (never) distinct.push_back(cr);
      }
      (o.matmul ? c.mm : o.every ? c.every : c.last) -= o.cost * (o.counted - static_cast<i64>(distinct.size()));
    }
    return c;
  }
  const SubgraphPlan::Coefs& coefsFor(const Grid& g) const {
    return coefs[(g.nk == 1 ? 1 : 0) | (g.nth == 1 ? 2 : 0) | (g.ntw == 1 ? 4 : 0)];
  }
  // Length of an axis of canonical kind e in step (0,0,0) (the largest step: every interval
  // starts at 0).
  i64 len0(Ext e, i64 axisLen, const Grid& g) const {
    switch (e) {
      case Ext::Rho: return std::min(g.h, pl.H);
      case Ext::Gamma: return std::min(g.w, pl.W);
      case Ext::Kappa: return std::min(g.k, pl.Kacc);
      case Ext::Full: return axisLen;
    }
    return axisLen;
  }

  // Working set of step (0,0,0), W1, under the retention choice `kept`: a kept input counts |t|
  // (resident all through S) instead of its slices, a kept output |t| instead of its tile. Every
  // valid schedule of this part at (w,h,k) that keeps exactly those has WS >= this at that step.
  // A relaxed floor counts each retainable input at most |t| and each output as its tile (<= |t|),
  // which is below both choices.
  i64 ws(const Grid& g, uint32_t kept) const {
    i64 total = 0;
    const std::vector<Canon>& canon = canonFor(g);
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& x = tensors[i];
      // At step (0,0,0) every interval starts at 0, so two templates are the same slice exactly
      // when their extents are equal: each distinct extent counts once.
      i64 v = 0;
      const std::vector<std::pair<Ext, Ext>>& tpl = canon[i].tpl;
      for (size_t a = 0; a < tpl.size(); ++a) {
        const i64 rows = len0(tpl[a].first, p.heights[x.t], g), cols = len0(tpl[a].second, p.widths[x.t], g);
        bool repeat = false;  // an earlier template with the same extents: the same slice
        for (size_t b = 0; b < a && !repeat; ++b)
          repeat = len0(tpl[b].first, p.heights[x.t], g) == rows && len0(tpl[b].second, p.widths[x.t], g) == cols;
        if (!repeat) v += rows * cols;
      }
      if (relaxed && x.bit) v = std::min(v, p.size(x.t));
      else if (kept & x.bit) v = p.size(x.t);
      total += v;
    }
    const i64 tile = std::min(g.w, pl.W) * std::min(g.h, pl.H);
    total += tile * (pl.n_store + (g.nk > 1 ? pl.n_acc : 0));
    if (!relaxed) {
      for (auto [t, bit] : outs)
        if (kept & bit) total += p.size(t) - tile;
      // A tensor made and read inside, kept out: |t| all through S (W1), and no longer an
      // ephemeral split-K accumulator (decision 8: counted w h when nk > 1 while ephemeral, in
      // the plan without retention) when a MatMul makes it: that tile goes (issue 50: counted
      // twice, the choice looked too large to fit; a MatMul that is upstream had no such tile,
      // and taking one off anyway only lowers the floor).
      for (auto [t, bit] : inner)
        if (kept & bit) total += p.size(t) - (g.nk > 1 && p.ops[p.producer[t]].type == OpType::MatMul ? tile : 0);
    }
    return total;
  }

  // Elements every traversal must load and store at (w,h,k) (L3, L4):
  // - a slice that depends on the k-step (nk > 1) differs from the previous step's in every step
  //   (the k-strip moves within a tile, and j restarts at 0 on the next tile): loaded every step;
  // - a slice depending on both the tile row and column is new in every tile;
  // - a slice depending on the row only (a row band) is reloaded whenever a run of tiles in its
  //   row starts, one on the column only whenever a run in its column starts; beyond loading
  //   every band once that is (R-1)(C-1) more runs over R x C tiles, at most C - 1 more per row
  //   and R - 1 per column, on the cheapest bands (bandReloads in joint_floors.cpp);
  // - a slice depending on neither is loaded once; a tensor needed whole in every step once.
  // A tensor with templates that might coincide by value counts only its largest template, and
  // a k-strip template (one slice per step) less what the other roles can make resident
  // (sharedStripSavings: L3 compares slices, not roles); never less than the tensor once.
  // Kept tensors (retained in) load nothing. Outputs are stored once (tile regions sum to |t|)
  // unless kept (retained out).
  // The elements of one band of each kind (the row-band slices of one tile row together, and of
  // one column), at their least over the class: 0 where there are none.
  struct Bands {
    LD rowFull = 0, rowLast = 0, colFull = 0, colLast = 0;
  };
  Bands bands(const Grid& g, LD rowPool, LD rowMin, LD colPool, LD colMin) const {
    return {static_cast<LD>(g.h) * rowPool / static_cast<LD>(pl.H), rowMin,
            static_cast<LD>(g.w) * colPool / static_cast<LD>(pl.W), colMin};
  }
  // The loads of a k-strip template A (a new slice in every k-step: nk > 1) that other
  // templates B of its tensor, which may hold the same slice, can save in a class, at most
  // (issue 50). In step (tile, j) A's strip is resident only if the previous step needed the
  // identical slice (L3), and the previous step's own strip of A is another k-interval (the strips
  // of a tile are distinct, and j restarts at 0 on the next tile), so only a B can hold it.
  // - The common case: B has A's kind on A's other axis and a tile kind (Rho or Gamma) on A's
  //   k axis (an operand also read by an epilogue: LHS {Rho, Kappa} and {Rho, Gamma}). Its slice
  //   is fixed within a tile, so a strip kappa_j it holds is an interval of the tile grid on that
  //   axis: both start at j k = c w and end together, which for a full tile interval means k = w
  //   (j = c) and otherwise only the last strip against the last, clipped tile interval, when
  //   (nk - 1) k = (ntw - 1) w. The tile's first strip [0, k) follows the predecessor's slices:
  //   held by a B only when it is a tile interval, c = 0 with k = w. So with k != side (w for
  //   Gamma, h for Rho) each tile on the last tile interval saves at most one strip, of the last
  //   interval's size; with k = side (possible when the class's sides reach down to kHi), each
  //   tile at most its B slice (those sum to the tensor over a row of tiles), and a first step
  //   only after a tile of the first tile interval, each tile being the predecessor of at most
  //   one: at most one strip of k per tile of that first interval.
  // - Any other B: each tile at most (1 + the B) strips of A (in the tile, B's slice at step j - 1
  //   fixes j; the first step one more), each at most A's largest strip in the class.
  // The class's traffic takes the least of the k = side and k != side figures (kEqualSide).
  LD sharedStripSavings(const Grid& g, const std::vector<std::pair<Ext, Ext>>& tpl, std::pair<Ext, Ext> a, i64 Ht,
                        i64 Wt, bool kEqualSide) const;
  // Whether some k = side (a tile side along the k axis of a tensor read as a k-strip and as a
  // tile slice) is in the class: then sharedStripSavings(..., true) applies there.
  bool kCanEqualSide(const Grid& g) const {
    if (!multiK) return false;
    return std::min(g.w, g.h) <= kHi;
  }

  LD traffic(const Grid& g, uint32_t kept, Bands* pools = nullptr, bool kEqualSide = false) const;
  // The sum of an axis's lengths over its index (a template's axis of kind e; axisLen: the
  // tensor's, for Full).
  LD axisSum(Ext e, i64 axisLen) const;
  // A floor of traffic(g', kept) for every choice and every grid g' of the class pair whose
  // gridOf is `pair` (at k = kHi, as scan prices traffic), which never falls as the tile counts
  // grow within a grid case (part_traffic.cpp says why): scan passes over class pairs on it.
  LD leastTraffic(const Grid& pair) const;

  // L5: total compute at (w,h,k): MatMuls base_cost per tile over the k-steps (x Kacc / D),
  // k-strip Pointwise every k-step, epilogue Pointwise once per tile.
  LD compute(const Grid& g) const { return computeWith(g, coefsFor(g)); }
  // The same with each op of several regions counted once: at most compute() in every grid case,
  // and never falling as the tiles shrink (the scan's pruning rests on that).
  LD leastCompute(const Grid& g) const { return computeWith(g, pl.leastCoefs()); }
  LD computeWith(const Grid& g, const SubgraphPlan::Coefs& cf) const {
    const LD T = static_cast<LD>(g.ntw) * static_cast<LD>(g.nth);
    LD per = static_cast<LD>(cf.every) * static_cast<LD>(g.nk) + static_cast<LD>(cf.last);
    if (cf.mm) per += static_cast<LD>(cf.mm) * static_cast<LD>(pl.Kacc) / static_cast<LD>(pl.D);
    return T * per;
  }

  // Step by step (L1, L2: a subgraph pays the sum of its steps' maxima, not the larger sum). In
  // each step j of a tile, compute is a |k_j| + b (a = mm_coef / D, b = pw_every; the last step
  // adds pw_last) and the loads include every k-dependent slice of a tensor not kept (a new k-strip
  // in every step, never resident: the strip moves, and j restarts on the next tile; a tensor also
  // needed whole is left out), at least e |k_j| (e: per tensor its largest such slice per unit of
  // k, at the smallest tile sides of the class), and the last step stores the outputs' tile (at
  // least sigma). So at a given k a tile costs at least (n - 1) f(k) + g(r), n = ceil(K / k),
  // r = K - (n - 1) k, with f(x) = max(a x + b, e x) and g(x) = max(a x + b + pw_last, e x + sigma).
  // The schedule may use any k <= kfit (the largest that fits), so the floor is the least of these
  // over k = 1..kfit, times the tiles. (Beyond kMaxStepK values of k, a relaxation: f and g are
  // convex with f(0) >= 0 and g's slope at most f's, so merging steps never raises the sum, and the
  // n = ceil(K / kfit) pieces are best split evenly but for the last: min over y of
  // (n - 1) f(y) + g(K - (n - 1) y), a convex piecewise-linear function, least at an end or a kink.)
  // A range [lo, hi] of tile sides with the same tile count (see sideClasses below).
  struct SideClass {
    i64 count, lo, hi;
  };

  // One kind of tile (its smallest sides) for stepFloor: e and sigma, and how many such tiles.
  struct TileKind {
    LD e = 0, sigma = 0, count = 0;
    LD tl = 0;  // the tile's own slices, loaded in its first k-step
  };
  TileKind tileKind(const Grid& g, uint32_t kept, i64 hmin, i64 wmin, i64 count) const;

  // The excess over compute of the bands that runs of tiles load, nk = 1 (step_floors.cpp).
  // The bands' times (elements / B) for the run excess (step_floors.cpp).
  Bands bandTimes(const Grid& g, uint32_t kept) const;

  // The step-by-step floor of the class at (w, h, k) (step_floors.cpp states it).
  LD stepFloor(const Grid& g, uint32_t kept, i64 kfit, const SideClass& cw, const SideClass& ch) const;

  // min over every w <= N, h <= N and k of the class that fits of max(compute, traffic / B).
  // Within the class the floor does not increase with k (the k-strip loads sum to K whatever k
  // is; strip Pointwise run nk times) while the working set does not decrease: the largest k
  // that fits is the best one, found by bisection.
  // Tile sides with the same tile count form a class [lo, hi]: compute and every traffic term
  // depend on the side only through the count, except the smallest band (the clipped last one),
  // smallest at hi; the working set grows with the side, least at lo. So a class is priced at hi
  // and admitted if it fits at lo (a relaxation of every side in it).
  static std::vector<SideClass> sideClasses(i64 dim, i64 N) {
    std::vector<SideClass> v;  // largest sides first
    for (i64 x = std::min(N, dim); x >= 1; --x) {
      const i64 c = (dim + x - 1) / x;
      if (!v.empty() && v.back().count == c) v.back().lo = x;
      else v.push_back({c, x, x});
    }
    return v;
  }

  // The grid g with its last bands at their least over the sides of the class that fit: a side
  // larger than the largest that fits with the other side at its least (the working set grows
  // with both sides) is never used, so the last row band is at least H - (nth - 1) that side.
  Grid fitted(Grid g, const SideClass& cw, const SideClass& ch, uint32_t kept) const {
    auto largest = [&](i64 lo, i64 hi, bool rows) {
      while (lo < hi) {
        const i64 mid = lo + (hi - lo + 1) / 2;
        Grid t = withK(g, multiK ? 1 : kHi);
        (rows ? t.h : t.w) = mid;
        if (ws(t, kept) <= p.capacity) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    if (ch.hi > ch.lo) g.rowLast = pl.H - (g.nth - 1) * largest(ch.lo, ch.hi, true);
    if (cw.hi > cw.lo) g.colLast = pl.W - (g.ntw - 1) * largest(cw.lo, cw.hi, false);
    return g;
  }

  // The grid of a side class pair with k = 1.
  Grid gridOf(const SideClass& cw, const SideClass& ch) const {
    Grid g{cw.lo, ch.lo, 1, cw.count, ch.count, 1, 0, 0};
    g.rowLast = pl.H - (g.nth - 1) * ch.hi;
    g.colLast = pl.W - (g.ntw - 1) * cw.hi;
    return g;
  }
  Grid withK(Grid g, i64 k) const {
    g.k = k;
    g.nk = multiK ? (pl.Kacc + k - 1) / k : 1;
    return g;
  }

  // The best k of the class for the retention choice `kept`, which fits at its least k (the
  // caller checks): the largest k that fits, by bisection (the working set grows with k).
  i64 bestK(const Grid& g, uint32_t kept) const {
    if (!multiK) return kHi;
    i64 lo = 1, hi = kHi;  // ws(lo) fits (checked by the caller)
    while (lo < hi) {
      i64 mid = lo + (hi - lo + 1) / 2;
      if (ws(withK(g, mid), kept) <= p.capacity) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  // The step-by-step floor at each pair of sides of the class that fits (every side's own last
  // bands and tile stores, not the class's least of each), the least of them; when the sides that
  // fit are at most kMaxPoints pairs (else the class's: +infinity here, the caller keeps that).
  // (Until the sixth session of 2026-11-25 the whole box had to be within kMaxPoints pairs: a class
  // of two tile rows, whose second may be one row high, never got there.)
  // Each is a floor of every schedule at those sides, and every side that fits is visited.
  // Without orders, `enough`: the caller needs the least only where it is above enough, so the
  // first point at or below it ends the visit (returned: some value <= enough).
  LD pointSteps(const Grid& g, uint32_t kept, i64 k, const SideClass& cw, const SideClass& ch, bool withOrders,
                LD enough = -std::numeric_limits<LD>::infinity()) const {
    constexpr i64 kMaxPoints = 64, kMaxBox = 1024;
    const i64 hHi = g.nth > 1 ? (pl.H - g.rowLast) / (g.nth - 1) : ch.lo;
    const i64 wHi = g.ntw > 1 ? (pl.W - g.colLast) / (g.ntw - 1) : cw.lo;
    if ((hHi - ch.lo + 1) * (wHi - cw.lo + 1) > kMaxBox) return 0;
    // The pairs of the box that fit (a box of up to kMaxBox pairs; at most kMaxPoints of them
    // fitting: a class whose largest sides do not fit often has few pairs that do).
    std::vector<Grid> fit;
    for (i64 h = ch.lo; h <= hHi; ++h)
      for (i64 w = cw.lo; w <= wHi; ++w) {
        Grid pt = g;
        pt.w = w, pt.h = h, pt.rowLast = pl.H - (g.nth - 1) * h, pt.colLast = pl.W - (g.ntw - 1) * w;
        if (ws(withK(pt, multiK ? 1 : kHi), kept) > p.capacity) continue;
        if (static_cast<i64>(fit.size()) == kMaxPoints) return 0;
        fit.push_back(pt);
      }
    std::vector<std::tuple<LD, i64, i64>> points;  // (step floor, w, h)
    for (const Grid& pt : fit) {
      const LD steps = stepFloor(withK(pt, k), kept, k, {cw.count, pt.w, pt.w}, {ch.count, pt.h, pt.h});
      if (!withOrders && steps <= enough) return steps;
      points.emplace_back(steps, pt.w, pt.h);
    }
    // The least over the points of the larger of the two floors: by step floor, until it alone
    // reaches the least so far.
    std::sort(points.begin(), points.end());
    LD least = std::numeric_limits<LD>::infinity();
    for (const auto& [steps, w, h] : points) {
      if (steps >= least || stopped()) break;
      least = std::min(least, withOrders ? std::max(steps, orderFloor(w, h, kept)) : steps);
    }
    return least < std::numeric_limits<LD>::infinity() ? least : 0;
  }
  // Every tile order of the plan at sides (w, h), nk = 1, with the choice's retained sets
  // (part_floor.cpp): the any-order floor, +infinity where no order is valid, 0 when not known.
  LD orderFloor(i64 w, i64 h, uint32_t kept) const;
  // One class and retention choice: its floor without and (refine) with the order floors.
  struct Candidate {
    double v;
    LD c, m, pen, steps;
    i64 k;
    SideClass cw, ch;
    uint32_t kept;
    Grid g;
  };
  // Every class and choice whose floor is below cap, in `take` (part_floor.cpp).
  template <class Take>
  void scan(const double& cap, const Take& take) const;
  // Whether a choice whose traffic at its class pair's gridOf is m0 cannot get below cap at its
  // own grid (part_floor.cpp).
  static bool reachedAtG0(LD m0, LD pen, double cap);
  // The candidate's floor with the order floors at its side pairs (orderFloor).
  double refine(const Candidate& x) const;
  // The least over the classes and choices (part_floor.cpp says how, lazily with orders).
  void minimise(PartFloor& best) const;
};

}  // namespace mlsys::bound_detail
