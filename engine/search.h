// The search: one worker per thread (oneTBB tasks), of the kinds in search.workers assigned
// round-robin (engine/worker_kind.h), sharing a SearchRun (engine/run_state.h: stop policy,
// statistics, progress, elite pool) under one wall-clock deadline, while the calling thread
// monitors progress and flushes deferred writes.
#pragma once
#include "cost/schedule.h"
#include "engine/config.h"
#include "engine/output.h"
#include "engine/run_state.h"
#include "engine/solver.h"

namespace mlsys {

// Searches from `start` (a valid schedule, already offered to `out`) with `threads` workers,
// until the deadline or until the best meets `bound` (proven optimal). Improvements are rows of
// `trace` (nullptr: no --trace).
SearchResult runSearch(const Problem& p, const SolveOptions& opt, const SearchConfig& cfg, int threads,
                       Deadline& deadline, OutputWriter& out, const Schedule& start, double bound, TraceFile* trace);

}  // namespace mlsys
