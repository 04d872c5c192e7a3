// Initial schedules: the always-valid baseline (each op alone) and greedy fusion.
#pragma once
#include "cost/evaluator.h"
#include "engine/deadline.h"

namespace mlsys {

// Each op alone, in topological order, at the largest granularity that fits (halving from the
// native size): valid for any parsed problem and built in microseconds per op.
Schedule quickSchedule(const Problem& p, const ModelOptions& m);

// Each op alone, in topological order, with its best granularity; retains an output into the
// next subgraph where all its consumers are there and it lowers the latency. Always valid for a
// problem that parsed (every op fits alone at [1,1,1]).
// Stops improving (keeping what it has, still valid) when `dl` expires.
Schedule baselineSchedule(const Problem& p, const ModelOptions& m, const Deadline* dl = nullptr);

// Picks the best granularity/traversal of every subgraph given its neighbours' retention.
void regranulate(const Problem& p, const ModelOptions& m, Schedule& s, bool exhaustive = false);

}  // namespace mlsys
