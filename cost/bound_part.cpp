// The floor of one part (bound.h, partFloor): every subgraph with a given op set pays at least
// this, whatever its granularity, traversal and retention. The component bound (bound.cpp)
// combines these floors.
#include <limits>

#include "cost/bound_class_floor.h"

namespace mlsys {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

PartFloor partFloor(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                    const RetentionPrices* prices) {
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
  if (multi.valid && multi.nk > 1)
    bound_detail::ClassFloor(p, multi, true, std::min(kmax, multi.Kacc - 1), prices, ops).minimise(best);
  const i64 kOne = kmax ? kmax : 1;
  SubgraphPlan one = multi.valid && multi.nk == 1 ? multi : planSubgraph(p, m, ops, {N, N, kOne}, kNone, kNone);
  if (one.valid && one.nk == 1)
    bound_detail::ClassFloor(p, one, false, one.Kacc ? one.Kacc : 1, prices, ops).minimise(best);
  return best;
}

}  // namespace mlsys
