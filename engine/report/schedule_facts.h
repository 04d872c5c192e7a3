// Facts about an evaluated schedule that `evaluate` and `report` both show.
#pragma once
#include <string>
#include <vector>

#include "cost/pricing/evaluator.h"
#include "cost/pricing/subgraph.h"

namespace mlsys {

// What bounds a subgraph's steps: all compute-bound (compute >= load + store), all memory-bound,
// both kinds, or nothing (the subgraph is invalid).
enum class SubgraphBound { Compute, Memory, Mixed, Invalid };
SubgraphBound boundOf(const SubgraphCost& c);

// "subgraph i: reported latency X differs from the computed Y", for each valid subgraph whose
// latency in the schedule file differs from the evaluator's (relative tolerance 1e-9).
std::vector<std::string> reportedLatencyWarnings(const Schedule& s, const Evaluation& ev);

// Where a subgraph's latency comes from: its compute time and its memory time (the sums over its
// steps of compute and of (load + store) / B; its latency, the sum of the per-step maxima, lies
// between max(compute, memory) and compute + memory), and the elements it loads from and stores
// to slow memory.
struct SubgraphTraffic {
  bool known = false;              // false for an invalid subgraph, or when the figures leave the exact range
  double compute = 0, memory = 0;  // time units
  i64 loaded = 0, stored = 0;      // elements
};
// From the evaluator itself (costSubgraph), not from a second cost model: priced again with every
// base cost 0, each step costs (load + store) / B, so the latency is the memory time and times B
// the elements moved; priced again with a bandwidth so high that every step is compute-bound
// (checked: otherwise not known), the latency is the compute time. Stored elements are the plan's
// written outputs, each stored once (W x H elements per output); loaded = moved - stored.
std::vector<SubgraphTraffic> subgraphTraffic(const Problem& p, const Schedule& s, const Evaluation& ev);

}  // namespace mlsys
