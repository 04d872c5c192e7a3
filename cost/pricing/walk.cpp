// The step walk: the oracle (`evaluate --walk`). Prices every step of the subgraph in traversal
// order, each against the previous step's slices (L2: the subgraph's latency is the sum).
#include "cost/pricing/step.h"

namespace mlsys::step {

SubgraphCost walkSteps(const Problem& p, const SubgraphPlan& pl, const std::vector<int32_t>& order,
                       const std::function<bool()>& stop) {
  SubgraphCost sc;
  StepPricer pr(p, pl);
  LatencySum sum(static_cast<i128>(pl.D) * p.bandwidth);
  std::vector<Slice> prev, cur;
  i64 walked = 0;
  for (int32_t tile : order) {
    if (stop && (walked += pl.nk) >= 4096) {  // about every 4,096 steps: a few hundred microseconds
      walked = 0;
      if (stop()) {
        sc.interrupted = true;
        return sc;
      }
    }
    i64 r = tile / pl.ntw, c = tile % pl.ntw;
    for (i64 j = 0; j < pl.nk; ++j) {
      StepIdx s{r, c, j};
      pr.slicesAt(s, cur);
      auto res = pr.price(s, cur, prev);
      sum.add(res.num, 1);
      sc.peak_ws = std::max(sc.peak_ws, res.ws);
      (res.compute_bound ? sc.compute_bound_steps : sc.memory_bound_steps) += 1;
      std::swap(prev, cur);
    }
  }
  sum.finish(sc);
  return sc;
}

}  // namespace mlsys::step
