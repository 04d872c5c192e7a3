// The floor of one part (bound.h, partFloor): every subgraph with a given op set pays at least
// this, whatever its granularity, traversal and retention. The component bound (ruler.cpp)
// combines these floors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "cost/bound/any_order.h"
#include "cost/bound/class_floor.h"

namespace mlsys {

namespace bound_detail {

// Every tile order of the plan at sides (w, h), nk = 1, with the choice's retained sets (the
// boundary inputs it keeps in, the outputs and inner tensors it keeps out): the any-order floor
// (cost/bound/any_order.h), +infinity where no order is valid, 0 when not known.
LD ClassFloor::orderFloor(i64 w, i64 h, uint32_t kept) const {
  if (!orders || !partOps || multiK || relaxed) return 0;
  std::vector<TensorId> rin, rout;
  for (const Tensor& x : tensors)
    if (x.bit & kept) rin.push_back(x.t);
  for (const auto& [t, bit] : outs)
    if (bit & kept) rout.push_back(t);
  for (const auto& [t, bit] : inner)
    if (bit & kept) rout.push_back(t);
  const SubgraphPlan at = planSubgraph(p, *orders, *partOps, {w, h, kHi}, rin, rout);
  if (!at.valid) return std::numeric_limits<LD>::infinity();
  const AnyOrderFloor f = anyOrderFloor(p, at, 0, true);
  if (f.kind == AnyOrderFloor::Kind::Invalid) return std::numeric_limits<LD>::infinity();
  if (f.kind != AnyOrderFloor::Kind::Floor) return 0;
  return static_cast<LD>(f.num) / (static_cast<LD>(at.D) * static_cast<LD>(p.bandwidth));
}

// Every class and choice whose floor is below cap, in `take` (cap is read again after each).
template <class Take>
void ClassFloor::scan(const double& cap, const Take& take) const {
  const LD B = static_cast<LD>(p.bandwidth);
  const std::vector<SideClass> ws_ = sideClasses(pl.W, p.native), hs_ = sideClasses(pl.H, p.native);
  const uint32_t nChoices = relaxed ? 1u : 1u << choices.size();
  // Largest tiles first: they give the least compute, so the pruning below bites early.
  for (const SideClass& cw : ws_) {
    bool allOut = false;  // every later cw too (leastTraffic)
    for (const SideClass& ch : hs_) {
      const Grid g0 = gridOf(cw, ch);
      // Compute only grows as h shrinks (more tile rows) and k shrinks: nothing below can beat
      // the best. (Counting each op once: with its regions per grid case, an op's two regions
      // may coincide only at smaller tiles, A-14.)
      if (stopped()) return;
      if (static_cast<double>(leastCompute(withK(g0, kHi)) + minPen) >= cap) break;
      // Nor any choice on traffic, where its floor alone reaches cap: at this class pair, and,
      // past the one-row and one-column grid cases, at every later one (it never falls as the
      // tile counts grow): the rest of this cw, and every later cw if this was its first ch.
      if (static_cast<double>(leastTraffic(g0) / B + minPen) >= cap) {
        if (g0.nth == 1) continue;
        allOut = &ch == &hs_.front() && g0.ntw > 1;
        break;
      }
      for (uint32_t kept = 0; kept < nChoices; ++kept) {
        if ((kept & 63) == 63 && stopped()) return;  // 2^choices of them: milliseconds on large parts
        // Cheapest test first: the choice must fit at k = 1 (or the class's k).
        if (ws(withK(g0, multiK ? 1 : kHi), kept) > p.capacity) continue;
        // The traffic is the same for every k of the class; with a tensor read as a k-strip and as
        // a tile slice, the least of its figures at k = a tile side and at any other k
        // (sharedStripSavings). Priced first at g0, whose last bands are the class's least: a
        // floor of the choice's traffic at its own grid (reachedAtG0), so a choice that cannot get
        // below cap there is passed over before fitted's bisections.
        auto trafficAt = [&](const Grid& at) {
          LD t = traffic(withK(at, kHi), kept) / B;
          if (hasSharedStrips && kCanEqualSide(at)) t = std::min(t, traffic(withK(at, kHi), kept, nullptr, true) / B);
          return t;
        };
        const LD pen = penalty(kept);
        const LD m0 = trafficAt(g0);
        if (reachedAtG0(m0, pen, cap)) continue;
        const Grid g = fitted(g0, cw, ch, kept);
        const LD m = g.rowLast == g0.rowLast && g.colLast == g0.colLast ? m0 : trafficAt(g);
        if (static_cast<double>(m + pen) >= cap) continue;
        const i64 k = bestK(g, kept);
        const LD c = compute(withK(g, k));
        LD steps = stepFloor(withK(g, k), kept, k, cw, ch);
        double v = static_cast<double>(std::max({c, m, steps}) + pen);
        if (v >= cap) continue;
        // The least step floor over the class's side pairs, where it is above max(c, m, steps): at
        // or below that it changes neither v nor, through refine (max(steps, the order floors'
        // least, which is at least that least)), the refined floor, so steps stays the class's.
        const LD enough = std::max({c, m, steps});
        if (const LD points = pointSteps(g, kept, k, cw, ch, false, enough); points > enough) steps = points;
        v = static_cast<double>(std::max({c, m, steps}) + pen);
        if (v < cap) take(Candidate{v, c, m, pen, steps, k, cw, ch, kept, g});
      }
    }
    if (allOut) break;
  }
}

// Whether a choice whose traffic at g0 (gridOf, over B) is m0, with penalty pen, has m + pen >= cap
// at its own grid g = fitted(g0, ...), so that scan would pass over it there. traffic(g, kept) >=
// traffic(g0, kept): fitted changes only the last bands, rowLast and colLast, and only raises them
// (the largest side that fits is at most the class's hi, which g0 takes). That shrinks the box of
// sides over whose corners the band reloads take their least (bandReloads is concave on it: a
// least over a smaller box), and sharedStripSavings' saving at k = a tile side (sideHi falls);
// h, w, k and the grid case, hence the templates and every other term, stay. Exact in real
// numbers; the test keeps a relative margin of 1e-12 for floating point (whose error is some
// 1e-18 of these terms), so it never passes over a choice that scan would take there, and the
// floor is the same.
bool ClassFloor::reachedAtG0(LD m0, LD pen, double cap) {
  if (!std::isfinite(cap)) return false;
  const LD margin = (std::abs(m0) + std::abs(pen)) * 1e-12L;
  return static_cast<double>(m0 + pen - margin) >= cap;
}

// The candidate's floor with the order floors at its side pairs (orderFloor).
double ClassFloor::refine(const Candidate& x) const {
  const LD steps = std::max(x.steps, pointSteps(x.g, x.kept, x.k, x.cw, x.ch, true));
  return static_cast<double>(std::max({x.c, x.m, steps}) + x.pen);
}

// The least over the classes and choices. With order floors (nk = 1), lazily: the best
// candidate's refined floor U bounds the least from above, every candidate below U is
// collected, and they are refined cheapest first until the next one's floor (a floor of its
// refined one) reaches the least refined so far.
void ClassFloor::minimise(PartFloor& best) const {
  auto record = [&](const Candidate& x, double v) {
    best = {v,  static_cast<double>(x.c),  static_cast<double>(x.m), {x.cw.hi, x.ch.hi, x.k},
            {}, static_cast<double>(x.pen)};
    for (size_t i = 0; i < choices.size() && !relaxed; ++i)
      if (x.kept >> i & 1) best.retained.push_back(choices[i]);
  };
  double cap = best.value;
  std::optional<Candidate> first;
  scan(cap, [&](const Candidate& x) { first = x, cap = x.v; });
  if (!first) return;
  if (!orders || multiK || relaxed) return record(*first, first->v);
  cap = std::min(best.value, refine(*first));
  std::vector<Candidate> all;
  scan(cap, [&](const Candidate& x) { all.push_back(x); });
  std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.v < b.v; });
  std::optional<std::pair<Candidate, double>> least;
  if (cap < best.value) least = {*first, cap};
  auto isFirst = [&](const Candidate& x) {
    return x.kept == first->kept && x.k == first->k && x.cw.hi == first->cw.hi && x.ch.hi == first->ch.hi;
  };
  for (const Candidate& x : all) {
    if ((least && x.v >= least->second) || stopped()) break;
    if (isFirst(x)) continue;  // refined above
    const double r = refine(x);
    if (!least || r < least->second) least = {x, r};
  }
  if (least && least->second < best.value) record(least->first, least->second);
}

}  // namespace bound_detail

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

PartFloor partFloor(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                    const RetentionPrices* prices, const BoundArgs& args, const std::function<bool()>* stop) {
  if (!args.on(BoundArg::PartFloors)) return PartFloor{};
  PartFloor best{kInf, kInf, kInf, {}, {}, 0};
  const i64 N = p.native;
  const i64 kmax = reductionLimit(p, m, ops);  // V8 (0: no MatMul)
  static const std::vector<TensorId> kNone;
  // The templates depend on the granularity only through nk > 1 or nk = 1, and validity only
  // through V9 (which fails at w = h = N, the most permissive sides, exactly when it fails for
  // every w, h of the class at that k) and capacity (checked per (w,h,k) above). Retention changes the plan
  // only by removing retained-in slices and stores (priced as a choice above) or by making a tensor consumed
  // inside S non-ephemeral (rule 11.7), which keeps every op's charge per tile and only adds
  // demanded regions, so the plan without retention gives the floor.
  SubgraphPlan multi = planSubgraph(p, m, ops, {N, N, 1}, kNone, kNone);
  // V9 is also upward closed in k (a Pointwise operand of a MatMul q is fine once k >= K_q).
  // Under k_limit=reduction k may reach K_q and still stay below Kacc (several k-steps, e.g. a
  // Pointwise feeding a MatMul with K = 256 upstream of one with K = 512), so when k = 1 fails on
  // V9 the class is probed again at its largest k, min(kmax, Kacc - 1); its floor then ranges
  // over every k of the class, a superset of the valid ones. (Kacc is set before V9 is checked.)
  if (!multi.valid && multi.rule == Rule::V9 && std::min(kmax, multi.Kacc - 1) > 1)
    multi = planSubgraph(p, m, ops, {N, N, std::min(kmax, multi.Kacc - 1)}, kNone, kNone);
  if (multi.valid && multi.nk > 1) {
    bound_detail::ClassFloor cf(p, multi, true, std::min(kmax, multi.Kacc - 1), prices, args);
    cf.stop = stop;
    cf.minimise(best);
    if (cf.interrupted) return PartFloor{};
  }
  const i64 kOne = kmax ? kmax : 1;
  SubgraphPlan one = multi.valid && multi.nk == 1 ? multi : planSubgraph(p, m, ops, {N, N, kOne}, kNone, kNone);
  if (one.valid && one.nk == 1) {
    bound_detail::ClassFloor cf(p, one, false, one.Kacc ? one.Kacc : 1, prices, args);
    if (args.on(BoundArg::OrderFloors)) cf.orders = &m, cf.partOps = &ops;
    cf.stop = stop;
    cf.minimise(best);
    if (cf.interrupted) return PartFloor{};
  }
  if (args.test_part_scale != 1 && std::isfinite(best.value)) best.value *= args.test_part_scale;
  return best;
}

}  // namespace mlsys
