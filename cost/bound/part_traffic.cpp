// The traffic term of a part floor (class_floor.h, ClassFloor::traffic): the elements every
// traversal of a class must load and store, with the band reloads (argument "band-reloads") and
// what a tensor read in two roles can keep resident (sharedStripSavings); the arguments are in
// class_floor.h next to the declarations.
#include "cost/bound/class_floor.h"

namespace mlsys::bound_detail {

LD ClassFloor::axisSum(Ext e, i64 axisLen) const {
  switch (e) {
    case Ext::Rho: return static_cast<LD>(pl.H);
    case Ext::Gamma: return static_cast<LD>(pl.W);
    case Ext::Kappa: return static_cast<LD>(pl.Kacc);
    case Ext::Full: return static_cast<LD>(axisLen);
  }
  return 0;
}

LD ClassFloor::sharedStripSavings(const Grid& g, const std::vector<std::pair<Ext, Ext>>& tpl, std::pair<Ext, Ext> a,
                                  i64 Ht, i64 Wt, bool kEqualSide) const {
  const bool onCols = a.second == Ext::Kappa;  // A's k axis: its columns (an LHS) or its rows (an RHS)
  const Ext other = onCols ? a.first : a.second;
  const Ext tileKind = onCols ? Ext::Gamma : Ext::Rho;
  const i64 n = onCols ? g.ntw : g.nth, side = onCols ? g.w : g.h;  // tiles along the k axis, least side
  const i64 L = onCols ? pl.W : pl.H;                               // that axis (= Kacc)
  const i64 sideHi = n > 1 ? (L - (onCols ? g.colLast : g.rowLast)) / (n - 1) : side;
  const i64 lastHi = L - (n - 1) * side;      // the largest last tile interval
  const i64 across = onCols ? g.nth : g.ntw;  // tiles along the other axis
  // The other axis: a tile interval (its lengths sum to the axis over the tiles along it) or
  // the whole axis in every tile.
  const LD otherSum = other == Ext::Full ? static_cast<LD>(across) * static_cast<LD>(onCols ? Ht : Wt)
                                         : static_cast<LD>(onCols ? pl.H : pl.W);
  const LD otherMost = other == Ext::Full ? static_cast<LD>(onCols ? Ht : Wt)
                                          : static_cast<LD>(std::min(p.native, onCols ? pl.H : pl.W));
  LD total = 0;
  for (const auto& b : tpl) {
    if (b == a || neverEqual(a, b)) continue;
    const Ext bOther = onCols ? b.first : b.second, bK = onCols ? b.second : b.first;
    if (bOther == other && bK == tileKind && n > 1) {
      if (kEqualSide) total += otherSum * static_cast<LD>(L + sideHi);
      else total += otherSum * static_cast<LD>(lastHi);  // per tile on the last interval, its other side
      continue;
    }
    // Any other partner: (1 + 1) strips per tile (this B in the tile, and the first step).
    const LD strip = otherMost * static_cast<LD>(std::min(g.k, pl.Kacc));
    total += 2 * static_cast<LD>(g.nth) * static_cast<LD>(g.ntw) * strip;
  }
  return total;
}

LD ClassFloor::traffic(const Grid& g, uint32_t kept, Bands* pools, bool kEqualSide) const {
  LD total = 0, rowPool = 0, colPool = 0, rowMin = 0, colMin = 0;
  const std::vector<Canon>& canon = canonFor(g);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& x = tensors[i];
    if (keptFor(x.bit, kept)) continue;
    const i64 Ht = p.heights[x.t], Wt = p.widths[x.t];
    const std::vector<std::pair<Ext, Ext>>& c = canon[i].tpl;
    const bool allNever = canon[i].allNever;
    if (canon[i].whole) {  // loaded once, then every other slice of it lies inside the previous step's
      total += static_cast<LD>(p.size(x.t));
      continue;
    }
    LD best = 0;
    for (auto [r, k] : c) {
      const bool usesR = r == Ext::Rho, usesC = k == Ext::Gamma, usesJ = r == Ext::Kappa || k == Ext::Kappa;
      const LD rs = axisSum(r, Ht), cs = axisSum(k, Wt);
      LD own = 0;
      if (usesJ) {
        own = rs * cs * (usesR ? 1 : g.nth) * (usesC ? 1 : g.ntw);
        if (!allNever) own = std::max(rs * cs, own - sharedStripSavings(g, c, {r, k}, Ht, Wt, kEqualSide));
      } else if (usesR && usesC) {
        own = rs * cs;
      } else if (usesR) {
        own = rs * cs;
        if (allNever) {
          rowPool += own;
          rowMin += static_cast<LD>(g.rowLast) * cs;
          continue;
        }
      } else if (usesC) {
        own = rs * cs;
        if (allNever) {
          colPool += own;
          colMin += rs * static_cast<LD>(g.colLast);
          continue;
        }
      } else {
        own = rs * cs;
      }
      if (allNever) total += own;
      else best = std::max(best, own);
    }
    total += best;
  }
  total += rowPool + colPool;
  // The reloads beyond one of each band, by runs of tiles (bound_detail::bandReloads). Within
  // the class (R and C fixed) a full row band is h rowPool / H and the last one
  // (H - (R - 1) h) rowPool / H, both affine in h (rowPool / H is the row bands' total width per
  // row), and the columns likewise in w; bandReloads is the least over which loads it counts of
  // sums linear in the band sizes, so concave, and so is its composition with those affine
  // maps: over the box of the class's sides that may fit (from the smallest, g.h and g.w, to the
  // largest that fits, which g.rowLast and g.colLast encode) its least is at a corner.
  if (rowPool > 0 && colPool > 0 && args.on(BoundArg::BandReloads)) {
    const LD H = static_cast<LD>(pl.H), W = static_cast<LD>(pl.W), R = static_cast<LD>(g.nth),
             C = static_cast<LD>(g.ntw);
    const LD hHi = g.nth > 1 ? (H - static_cast<LD>(g.rowLast)) / (R - 1) : static_cast<LD>(g.h);
    const LD wHi = g.ntw > 1 ? (W - static_cast<LD>(g.colLast)) / (C - 1) : static_cast<LD>(g.w);
    LD least = std::numeric_limits<LD>::infinity();
    for (LD h : {static_cast<LD>(g.h), hHi})
      for (LD w : {static_cast<LD>(g.w), wHi})
        least =
            std::min(least, bound_detail::bandReloads(h * rowPool / H, (H - (R - 1) * h) * rowPool / H, w * colPool / W,
                                                      (W - (C - 1) * w) * colPool / W, g.nth, g.ntw));
    total += least;
  }
  if (pools) *pools = bands(g, rowPool, rowMin, colPool, colMin);
  for (auto [t, bit] : outs)
    if (!keptFor(bit, kept)) total += static_cast<LD>(p.size(t));
  return total;
}

// leastTraffic (class_floor.h). Per boundary tensor that the choice keeping all it may
// (nChoices - 1; a relaxed floor: every retainable one) does not keep, and per output it does not
// keep, the terms of traffic() that are whole numbers of elements and need no other template:
// a tensor needed whole once; with its templates never equal, each template's own (a k-strip's
// over the tiles it is reloaded in, the bands once, the rest once); else the largest template's
// elements once (traffic takes the largest own, each at least that). The band reloads (>= 0) and
// the strip savings (on the !allNever templates only) are left out. So for every choice `kept`
// and every grid of the class pair (fitted moves only the last bands, which no term here reads):
// - it is at most traffic(g, kept), in floating point too: its terms are exact sums of whole
//   numbers, at most traffic's exact whole part, which is kept exactly (far below 2^64), then
//   adds the band reloads (>= 0) and the stores, and rounding is monotone; and a choice keeping
//   fewer tensors only adds terms (traffic skips the kept ones, here a superset);
// - within one grid case (canonFor: nk, nth and ntw = 1 or not; the templates are fixed) it
//   never falls as nth or ntw grow: a k-strip's own is rs cs times the tile counts of the axes it
//   does not follow, every other term is constant.
// scan compares leastTraffic / B + minPen with cap as it compares m + pen: both sides of each
// step are monotone, so where this reaches cap the choice's own figure does too.
LD ClassFloor::leastTraffic(const Grid& pair) const {
  const uint32_t all = relaxed ? 0u : (1u << choices.size()) - 1;
  const Grid g = withK(pair, kHi);  // the grid case traffic is priced in (nk as at k = kHi)
  const std::vector<Canon>& canon = canonFor(g);
  LD total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& x = tensors[i];
    if (keptFor(x.bit, all)) continue;
    if (canon[i].whole) {
      total += static_cast<LD>(p.size(x.t));
      continue;
    }
    LD best = 0;
    for (auto [r, k] : canon[i].tpl) {
      LD own = axisSum(r, p.heights[x.t]) * axisSum(k, p.widths[x.t]);
      if (!canon[i].allNever) {
        best = std::max(best, own);
        continue;
      }
      if (r == Ext::Kappa || k == Ext::Kappa)
        own *= static_cast<LD>(r == Ext::Rho ? 1 : g.nth) * static_cast<LD>(k == Ext::Gamma ? 1 : g.ntw);
      total += own;
    }
    total += best;
  }
  for (auto [t, bit] : outs)
    if (!keptFor(bit, all)) total += static_cast<LD>(p.size(t));
  return total;
}

}  // namespace mlsys::bound_detail
