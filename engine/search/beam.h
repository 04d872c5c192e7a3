// The beam phase of the beam-then worker (WorkerKind::BeamThen, config name "beam"): builds good
// starting schedules; the worker then runs beam.then, annealing or LNS (search.cpp).
//   1. the constructors of engine/construct/construct.cpp: chain fusion, then greedy fusion;
//   2. beamConstruct over two topological orders (the parser's and chainTopoOrder), while the
//      run is within beam.time_share of its budget; each pass paced to end within
//      beam.pace_share (BeamPace);
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

// A pass's pace (optional): `progress` reads how far the run is (StopPolicy::fraction, 0..1) and
// the pass aims to end by `until` of it. Where the positions since the last change say, at their
// pace, that it would end later, the longest segment tried shrinks for the rest of the order
// (down to 1 op): the pass narrows and still ends with a schedule of the whole graph, where a
// pass on 5,000 ops could take a short budget whole (gemm-chain-n5000: 12-20 s at 8 ops, 1
// thread). `narrowed_to`: the longest segment at the pass's end (beam.max_segment if never).
struct BeamPace {
  std::function<double()> progress;
  double until = 1;
  int narrowed_to = 0;
};

// Beam search over contiguous segments of a topological order: a partial schedule covers a
// prefix of `order` and is extended by one subgraph of the next L ops (L = 1..beam.max_segment)
// at its best granularity, with and without retention of the previous subgraph's outputs; the
// beam.width cheapest are kept per prefix length. Deterministic without `pace`. Returns false if
// `stop` cut it short or no schedule covers the order.
bool beamConstruct(const Problem& p, const SearchConfig& cfg, const std::vector<OpId>& order,
                   const std::function<bool()>& stop, IncrementalEvaluator& ev, Schedule& out, double& latency,
                   BeamPace* pace = nullptr);

}  // namespace mlsys
