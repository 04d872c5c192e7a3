#include "engine/cli/schedule_facts.h"

#include <algorithm>
#include <cmath>

#include "cost/json_util.h"

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
      w.push_back("subgraph " + std::to_string(i) + ": reported latency " + formatDouble(got) + " differs from the computed " +
                  formatDouble(want));
  }
  return w;
}

}  // namespace mlsys
