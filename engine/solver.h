// The solve command: baseline on disk first, then search until the deadline.
#pragma once
#include <cstdint>
#include <string>

#include "cost/evaluator.h"
#include "engine/deadline.h"

namespace mlsys {

struct SolveOptions {
  std::string out;
  double seconds = -1;     // < 0: contest default from the instance size
  int threads = 0;         // 0: all cores
  uint64_t seed = 1;
  int64_t max_evals = -1;  // > 0: stop after this many move evaluations (reproducible runs)
  std::string config;      // YAML path ("" = built-in default)
  std::string trace;       // CSV of improvements (seconds, worker, latency)
  std::string stats;       // JSON summary written at the end
  bool quiet = false;
  ModelOptions model;
  bool model_set = false;  // --model given: overrides the config's model section
};

struct SearchConfig;
// The config file (or defaults) with the CLI overrides applied.
SearchConfig resolveConfig(const SolveOptions& opt);

// Worker threads for a --threads value: 0 = all cores; capped at maxThreads().
int resolveThreads(int requested);
int maxThreads();

// Contest time limit by op count (2/5/15/30/60/120 s) and the budget we use within it.
double contestLimitSeconds(int numOps);
double defaultBudgetSeconds(int numOps);

// Returns the process exit code. The output file holds a valid schedule from the first write on.
int solve(const Problem& p, const SolveOptions& opt, Deadline& deadline);

}  // namespace mlsys
