// Every JSON document the program writes besides schedules (those are cost/model/schedule.cpp):
// the `solve --stats` summary and `evaluate --json`. Written with RapidJSON's PrettyWriter, so
// names and messages are escaped whatever they hold; numbers keep the evaluator's shortest
// round-trip form (formatDouble).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/pricing/evaluator.h"
#include "engine/search/run_state.h"  // WorkerEvaluations, BoundViolation

namespace mlsys {

// The `solve --stats` summary (keys in this order).
struct SolveStats {
  std::string instance;
  double best_latency = -1;  // of the schedule this run wrote last
  bool on_disk = true;       // it is still the output file at the end
  std::string write_error;   // the best's write failed: why ("" if none)
  double first_write_s = -1, best_found_s = 0, elapsed_s = 0;
  long evaluations = 0;
  double evals_per_s = 0;
  int writes = 0, threads = 0;
  std::vector<WorkerEvaluations> workers;  // per worker thread: its kind and its evaluations
  uint64_t seed = 0;
  double lower_bound = 0, gap = 1;  // gap = (best - bound) / best
  bool optimal = false;
  std::optional<BoundViolation> bound_violation;  // engine/search/bound_guard.h: null when none
  std::string stop_reason, model, version;
  std::string config;                                            // the config file ("" = built-in defaults)
  std::vector<std::pair<std::string, std::string>> non_default;  // keys off their default: path, YAML value
  std::vector<std::string> set;                                  // the --set arguments, as given
};
std::string statsJson(const SolveStats& s);

// `evaluate --json`: validity (rule and reason when invalid), the model, the total, one object
// per subgraph, and `warnings` (the evaluator's and the reported-latency ones).
std::string evaluationJson(const Evaluation& ev, const ModelOptions& m, const std::vector<std::string>& warnings);

// `bound --json`: the bound, its global floors and, per fusion component, its groups (method,
// value, the cheapest cover's parts) and edge floor.
// The bound, its components and what priced them; `args`: the arguments switched off; `at`: what
// each argument that is on gave the bound and each component (leave one out).
std::string boundJson(const LowerBound& lb, const ModelOptions& m, const BoundArgs& args = {},
                      const BoundAttribution& at = {});
// "cover, lp": the arguments switched off.
std::string offArgs(const BoundArgs& args);

}  // namespace mlsys
