// The adaptive LNS worker's portfolio (lns.adaptive): slices of lns.slice_seconds, each spent on
// LNS windows, annealing, the granularity polish, (on large graphs) a region or reader windows, chosen by the yield
// each kind had in its recent slices (slices.cpp states the policy). Used by the worker threads of
// engine/search/search.cpp.
#pragma once

#include "cost/pricing/incremental.h"
#include "engine/search/annealing.h"
#include "engine/search/lns.h"
#include "engine/search/regions.h"
#include "engine/search/run_state.h"

namespace mlsys {

// Runs slices until the run stops, worker `id` on evaluator `ev`, from the pool's best at each slice
// (else `start`); `start` ends as the last schedule reached.
void adaptiveSlices(SearchRun& run, int id, IncrementalEvaluator& ev, Schedule& start, Annealer& annealer, Lns& lns,
                    RegionSearch& regions);

}  // namespace mlsys
