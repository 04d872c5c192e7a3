#include "engine/report/schedule_facts.h"

#include <algorithm>
#include <cmath>

#include "cost/model/json_util.h"

namespace mlsys {

SubgraphBound boundOf(const SubgraphCost& c) {
  if (!c.valid) return SubgraphBound::Invalid;
  if (c.memory_bound_steps == 0) return SubgraphBound::Compute;
  if (c.compute_bound_steps == 0) return SubgraphBound::Memory;
  return SubgraphBound::Mixed;
}

std::vector<std::string> reportedLatencyWarnings(const Schedule& s, const Evaluation& ev) {
  std::vector<std::string> w;
  for (size_t i = 0; i < ev.subgraphs.size() && i < s.reported.size(); ++i) {
    double got = s.reported[i], want = ev.subgraphs[i].cost.latency;
    if (ev.subgraphs[i].cost.valid && std::abs(got - want) > 1e-9 * std::max(1.0, std::abs(want)))
      w.push_back("subgraph " + std::to_string(i) + ": reported latency " + formatDouble(got) +
                  " differs from the computed " + formatDouble(want));
  }
  return w;
}

std::vector<SubgraphTraffic> subgraphTraffic(const Problem& p, const Schedule& s, const Evaluation& ev) {
  std::vector<SubgraphTraffic> out(ev.subgraphs.size());
  Problem memoryOnly = p;  // no compute: a step costs (load + store) / B
  for (Op& op : memoryOnly.ops) op.base_cost = 0;
  Problem computeOnly = p;  // its bandwidth is set per subgraph
  static const std::vector<TensorId> kNone;
  for (size_t i = 0; i < ev.subgraphs.size() && i < s.subgraphs.size(); ++i) {
    const SubgraphCost& cost = ev.subgraphs[i].cost;
    if (!cost.valid) continue;
    const SubgraphSched& sg = s.subgraphs[i];
    const auto& rin = i > 0 ? s.subgraphs[i - 1].retain : kNone;
    const SubgraphPlan plan = planSubgraph(p, ev.model, sg.ops, sg.gran, rin, sg.retain);
    const SubgraphCost mem =
        costSubgraph(p, planSubgraph(memoryOnly, ev.model, sg.ops, sg.gran, rin, sg.retain), sg.trav);
    // A step is compute-bound when c * B >= m * D (cost/pricing/step.h) and m <= 2 * peak working set (a
    // step loads and stores only what its working set holds); c >= 1 wherever an op computes.
    const i128 D = plan.D;
    const long double fastB = 2.0L * static_cast<long double>(cost.peak_ws) * static_cast<long double>(D) + 1;
    i64 baseSum = 0;
    for (OpId o : sg.ops) baseSum += p.ops[o].base_cost;
    const long double perStep =
        static_cast<long double>(baseSum) * static_cast<long double>(std::max<i64>({plan.Kacc, plan.D, 1}));
    // mem's latency is num / den in lowest terms; over the plan's denominator D * B its numerator is
    // (load + store) * D.
    const i128 full = D * p.bandwidth;
    i128 memNum = 0;
    if (!plan.valid || !mem.valid || D <= 0 || mem.den <= 0 || full % mem.den != 0 ||
        __builtin_mul_overflow(mem.num, full / mem.den, &memNum) || memNum % D != 0 || fastB > 9e18L ||
        perStep * fastB > 1e37L)
      continue;
    computeOnly.bandwidth = static_cast<i64>(fastB);
    const SubgraphCost comp = costSubgraph(computeOnly, plan, sg.trav);
    if (!comp.valid || comp.compute_bound_steps != comp.steps) continue;
    SubgraphTraffic& t = out[i];
    const i128 moved = memNum / D;
    t.stored = plan.n_store * plan.W * plan.H;
    t.loaded = static_cast<i64>(moved - t.stored);
    t.memory = mem.latency;
    t.compute = comp.latency;
    t.known = true;
  }
  return out;
}

}  // namespace mlsys
