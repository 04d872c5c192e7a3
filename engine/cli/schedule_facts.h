// Facts about an evaluated schedule that `evaluate` and `report` both show.
#pragma once
#include <string>
#include <vector>

#include "cost/evaluator.h"

namespace mlsys {

// What bounds a subgraph's steps: all compute-bound (compute >= load + store), all memory-bound,
// both kinds, or nothing (the subgraph is invalid).
enum class SubgraphBound { Compute, Memory, Mixed, Invalid };
SubgraphBound boundOf(const SubgraphCost& c);

// "subgraph i: reported latency X differs from the computed Y", for each valid subgraph whose
// latency in the schedule file differs from the evaluator's (relative tolerance 1e-9).
std::vector<std::string> reportedLatencyWarnings(const Schedule& s, const Evaluation& ev);

}  // namespace mlsys
