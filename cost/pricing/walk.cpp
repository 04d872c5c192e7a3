// The step walk: the oracle (`evaluate --walk`). Prices every step of the subgraph in traversal
// order, each against the previous step's slices (L2: the subgraph's latency is the sum).
#include "cost/pricing/step.h"

namespace mlsys::step {

SubgraphCost walkSteps(const Problem& p, const SubgraphPlan& pl, const std::vector<int32_t>& order) {
  SubgraphCost sc;
  StepPricer pr(p, pl);
  std::vector<Slice> prev, cur;
  for (int32_t tile : order) {
    i64 r = tile / pl.ntw, c = tile % pl.ntw;
    for (i64 j = 0; j < pl.nk; ++j) {
      StepIdx s{r, c, j};
      pr.slicesAt(s, cur);
      auto res = pr.price(s, cur, prev);
      if (__builtin_add_overflow(sc.num, res.num, &sc.num)) sc.overflow = true;
      sc.peak_ws = std::max(sc.peak_ws, res.ws);
      (res.compute_bound ? sc.compute_bound_steps : sc.memory_bound_steps) += 1;
      std::swap(prev, cur);
    }
  }
  return sc;
}

}  // namespace mlsys::step
