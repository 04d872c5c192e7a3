// Pricing a plan (planSubgraph is in plan.cpp): the traversal check (V10), the choice between
// the step classes and the walk, the exact-range check and the capacity check (V11).
#include "cost/pricing/subgraph.h"

#include "cost/pricing/step.h"

namespace mlsys {
namespace {

// V10: an explicit order lists every tile of the grid exactly once.
bool isPermutation(const std::vector<int32_t>& o, i64 n, std::string& why) {
  if (static_cast<i64>(o.size()) != n) {
    why = "has " + std::to_string(o.size()) + " entries but the grid has " + std::to_string(n) + " tiles";
    return false;
  }
  std::vector<char> seen(static_cast<size_t>(n), 0);
  for (size_t i = 0; i < o.size(); ++i) {
    if (o[i] < 0 || o[i] >= n) {
      why = "entry " + std::to_string(i) + " is tile " + std::to_string(o[i]) + ", outside [0, " +
            std::to_string(n - 1) + "]";
      return false;
    }
    if (seen[static_cast<size_t>(o[i])]++) {
      why = "tile " + std::to_string(o[i]) + " appears twice";
      return false;
    }
  }
  return true;
}

}  // namespace

double toDouble(i128 num, i128 den) {
  return static_cast<double>(static_cast<long double>(num) / static_cast<long double>(den));
}

SubgraphCost costSubgraph(const Problem& p, const SubgraphPlan& pl, const Traversal& trav, CostMethod method,
                          const std::function<bool()>& stop) {
  SubgraphCost sc;
  if (!pl.valid) {
    sc.valid = false;
    sc.rule = pl.rule;
    sc.reason = pl.reason;
    return sc;
  }
  const i64 T = pl.tiles();
  if (trav.kind == TraversalKind::Custom) {
    std::string why;
    if (!isPermutation(trav.order, T, why)) {
      sc.valid = false;
      sc.rule = Rule::V10;
      sc.reason = "traversal order " + why;
      return sc;
    }
  }
  if (static_cast<i128>(pl.ntw) * pl.nth * pl.nk > INT64_MAX) {  // step counts are 64-bit: refuse, never saturate
    sc.valid = false;
    sc.rule = Rule::Range;
    sc.reason = "the subgraph has " + std::to_string(pl.ntw) + " x " + std::to_string(pl.nth) + " tiles x " +
                std::to_string(pl.nk) +
                " k-steps, more than 2^63 - 1 steps: it cannot be counted exactly; use a "
                "coarser granularity";
    sc.steps = INT64_MAX;
    return sc;
  }
  bool useFast = method != CostMethod::Walk && pl.fast_ok;
  if (!useFast && pl.steps() > kMaxWalkSteps) {
    sc.valid = false;
    sc.rule = Rule::Range;
    sc.reason = "pricing this subgraph needs a step walk of " + std::to_string(pl.steps()) + " steps (more than " +
                std::to_string(kMaxWalkSteps) + "); it cannot be priced exactly in reasonable time";
    sc.steps = pl.steps();
    return sc;
  }
  if (useFast) sc = step::classSteps(p, pl, trav);
  else sc = step::walkSteps(p, pl, traversalOrder(trav, pl.ntw, pl.nth), stop);
  if (sc.interrupted) {
    sc.valid = false;
    sc.rule = Rule::Interrupted;
    sc.reason = "the pricing was interrupted (a stop request or the deadline)";
    return sc;
  }
  sc.steps = pl.steps();
  sc.latency = toDouble(sc.num, sc.den);
  if (sc.overflow) {
    sc.valid = false;
    sc.rule = Rule::Range;
    sc.reason =
        "the subgraph's exact latency (a fraction in lowest terms) leaves the 128-bit range of the evaluator (" +
        std::to_string(pl.steps()) + " steps); it cannot be priced exactly";
    return sc;
  }
  if (sc.peak_ws > p.capacity) {
    sc.valid = false;
    sc.rule = Rule::V11;
    sc.reason = "working set " + std::to_string(sc.peak_ws) + " exceeds fast_memory_capacity " +
                std::to_string(p.capacity) + " at granularity [" + std::to_string(pl.g.w) + "," +
                std::to_string(pl.g.h) + "," + std::to_string(pl.g.k) + "]";
  }
  return sc;
}

}  // namespace mlsys
