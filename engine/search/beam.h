// The beam phase of the beam-then worker (WorkerKind::BeamThen, config name "beam"): builds good
// starting schedules; the worker then runs beam.then, annealing or LNS (search.cpp).
//   1. the constructors of engine/construct/construct.cpp: chain fusion, then greedy fusion;
//   2. beamConstruct over two topological orders (the parser's and chainTopoOrder), while the
//      run is within beam.time_share of its budget;
//   3. the order-aware beam over the candidate library (engine/search/order_beam.h), its width doubling
//      while the run is within beam.time_share of its budget.
// Every schedule it builds goes to the elite pool and to the run's progress (the writer).
#pragma once
#include <functional>
#include <vector>

#include "cost/pricing/incremental.h"
#include "engine/io/config.h"
#include "engine/search/run_state.h"

namespace mlsys {

// Runs the construction phase on the worker's evaluator `ev`; `start` becomes the best schedule
// built (unchanged if none is valid); what it builds is offered as worker `worker_id`'s
// (SearchRun::offer). `beam_index`: this worker's rank among the run's beam
// workers; beyond the first they skip the (deterministic) topological passes and start the
// order-aware beam wider (beam.order_width * 2^beam_index).
void runBeamPhase(SearchRun& run, int worker_id, IncrementalEvaluator& ev, Schedule& start, int beam_index = 0);

// Beam search over contiguous segments of a topological order: a partial schedule covers a
// prefix of `order` and is extended by one subgraph of the next L ops (L = 1..beam.max_segment)
// at its best granularity, with and without retention of the previous subgraph's outputs; the
// beam.width cheapest are kept per prefix length. Deterministic. Returns false if `stop` cut
// it short or no schedule covers the order.
bool beamConstruct(const Problem& p, const SearchConfig& cfg, const std::vector<OpId>& order,
                   const std::function<bool()>& stop, IncrementalEvaluator& ev, Schedule& out, double& latency);

}  // namespace mlsys
