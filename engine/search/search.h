// The search: one worker per thread (oneTBB tasks), of the kinds in search.workers assigned
// round-robin (engine/base/worker_kind.h), sharing a SearchRun (engine/search/run_state.h: stop policy,
// statistics, progress, elite pool) under one wall-clock deadline, while the calling thread
// monitors progress and flushes deferred writes.
#pragma once
#include <atomic>

#include "cost/model/schedule.h"
#include "engine/io/config.h"
#include "engine/io/output.h"
#include "engine/search/run_state.h"
#include "engine/search/solve.h"

namespace mlsys {

// What a beam worker runs after its passes (beam.then): `sa`, `lns`, or for `auto` the LNS worker's
// portfolio unless the budget is --max-evals (byEvaluations; with sa a --threads 1 --max-evals run
// stays reproducible), then annealing. With one thread and the default workers, `lns` measured
// better on 9 of 10 generated graphs of 1,000-5,000 ops and on mlsys-2026-5 (bench/RESULTS.md,
// third session of 2026-11-28); with two, where an LNS worker runs beside it, better on 7 of 10
// and worse on random-n5000 (+0.4%), the contest instances unchanged, and the first worker then
// runs what one thread runs (fifth session). `threads` is no longer consulted.
WorkerKind beamThen(const SearchConfig& cfg, int threads, bool byEvaluations);

// Whether the search (with `threads` workers) can raise the bound: an LNS phase solves the whole
// graph with the exact solver over the spec's whole space. Otherwise the bound is static.
bool searchRaisesBound(const Problem& p, const SearchConfig& cfg, int threads, bool byEvaluations);

// Searches from `start` (a valid schedule, already offered to `out`) with `threads` workers,
// until the deadline or until the best meets the guard's bound (proven optimal); a bound raised
// during the search goes to `guard`. Improvements are rows of `trace` (nullptr: no --trace);
// progress lines go to `log` (stderr when empty).
SearchResult runSearch(const Problem& p, const SolveOptions& opt, const SearchConfig& cfg, int threads,
                       Deadline& deadline, OutputWriter& out, const Schedule& start, BoundGuard& guard,
                       TraceFile* trace, const LogSink& log = {});

}  // namespace mlsys
