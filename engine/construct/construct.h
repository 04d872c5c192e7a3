// Initial schedules: the always-valid baseline (each op alone) and greedy fusion.
#pragma once
#include <functional>

#include "cost/pricing/evaluator.h"
#include "engine/base/deadline.h"

namespace mlsys {

// Each op alone, in topological order, at the largest granularity that fits (halving from the
// native size): valid for any parsed problem and built in microseconds per op.
Schedule quickSchedule(const Problem& p, const ModelOptions& m);

// Each op alone, in topological order, with its best granularity; retains an output into the
// next subgraph where all its consumers are there and it lowers the latency. Always valid for a
// problem that parsed (every op fits alone at [1,1,1]).
// Stops improving (keeping what it has, still valid) when `dl` expires. `quick`, if given, is
// quickSchedule(p, m) already built by the caller (it is linear but not free on huge graphs).
// `descent`: each granularity by bestGranularityDescent (dozens of pricings) instead of the full
// walk of bestGranularity (thousands): for large graphs (search.baseline_full_walk_ops).
Schedule baselineSchedule(const Problem& p, const ModelOptions& m, const Deadline* dl = nullptr,
                          const Schedule* quick = nullptr, bool descent = false);

}  // namespace mlsys

namespace mlsys {
class IncrementalEvaluator;

// Greedy fusion: repeatedly merge adjacent subgraphs that share a tensor when the merged
// subgraph (at its best granularity) lowers the total latency. `ev` holds the schedule.
void greedyFusion(IncrementalEvaluator& ev, const std::function<bool()>& stop);

// MatMul-chain fusion (spec Ex 5B, after Chimera): where a MatMul's output feeds another MatMul
// in the next subgraph, fuse them with split-K, choosing (w, h, k) from an analytic
// data-movement model (traffic of the upstream operands and the k-strips under the capacity),
// then confirming with the exact cost. Applies only improving fusions.
void chainFusion(IncrementalEvaluator& ev, const std::function<bool()>& stop);

// Analytic traffic (elements) of a fused MatMul chain A(HxK1) x B(K1xK2) -> T, T x C(K2xW) -> O at
// tile h x w: A once per tile row, B and C strips every k-step, O stored once. Exposed for tests.
double chainTraffic(i64 H, i64 W, i64 K1, i64 K2, i64 h, i64 w);
i64 chainWorkingSet(i64 K1, i64 h, i64 w, i64 k);
}  // namespace mlsys
