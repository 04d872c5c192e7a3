// The solve command's search: a first schedule on disk at once, the baseline, then the search
// until the deadline, and the final write. Its summary and --stats are engine/cli/solve_report.cpp.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cost/evaluator.h"
#include "engine/base/deadline.h"
#include "engine/search/run_state.h"

namespace mlsys {

struct SearchConfig;

struct SolveOptions {
  std::string out;
  double seconds = -1;  // < 0: contest default from the instance size
  int threads = 0;      // 0: all cores
  uint64_t seed = 1;
  int64_t max_evals = -1;        // > 0: stop after this many move evaluations (reproducible runs)
  double target = -1;            // >= 0: stop once a schedule at or below this latency is written (--target)
  double stall_s = -1;           // > 0: stop after this many seconds without an improvement (--stall-seconds)
  std::string init;              // --init: a schedule to start from (checked; the usual first one if invalid)
  std::string config;            // YAML path ("" = built-in default)
  std::vector<std::string> set;  // --set KEY=VALUE, applied over the config file
  std::string trace;             // CSV of improvements (seconds, worker, latency)
  std::string stats;             // JSON summary written at the end
  bool quiet = false;
  ModelOptions model;
  bool model_set = false;  // --model given: overrides the config's model section
  bool exact = false;      // --exact: run the exact solver (engine/exact/exact.h) first
  // The config as the caller already resolved it (the CLI: file, --set, flags): used as it is,
  // so the file is read once; config, set and model are then ignored.
  std::shared_ptr<const SearchConfig> resolved;
};

// `resolved` if set, else the config file (or defaults) with the CLI overrides applied.
SearchConfig resolveConfig(const SolveOptions& opt);

// Worker threads for a --threads value: 0 = all cores; capped at maxThreads().
int resolveThreads(int requested);
int maxThreads();

// Contest time limit by op count (2/5/15/30/60/120 s) and the budget we use within it.
double contestLimitSeconds(int numOps);
double defaultBudgetSeconds(int numOps);

// Timestamped lines on stderr ("[1.234s] text", seconds since the start of the process); none
// when `quiet`.
class RunLog {
 public:
  RunLog(const Deadline& dl, bool quiet) : dl_(dl), quiet_(quiet) {}
  void operator()(const std::string& line) const;

 private:
  const Deadline& dl_;
  bool quiet_;
};

// Why a solve run stopped.
enum class StopReason {
  Deadline,  // the budget ran out
  Optimal,   // the best meets the lower bound (the only proof of optimality a run makes)
  Signal,    // SIGTERM, SIGINT or SIGHUP
  MaxEvals,  // --max-evals evaluations
  Target,    // --target: a schedule at or below the target latency is written
  Stall,     // --stall-seconds: no improvement for that long
};
// "deadline", "optimal", "signal", "max_evals", "target", "stall": the name in the log and in --stats.
inline const char* stopReasonName(StopReason r) {
  switch (r) {
    case StopReason::Deadline: return "deadline";
    case StopReason::Optimal: return "optimal";
    case StopReason::Signal: return "signal";
    case StopReason::MaxEvals: return "max_evals";
    case StopReason::Target: return "target";
    case StopReason::Stall: return "stall";
  }
  return "?";
}

// What a solve run did.
struct SolveOutcome {
  // False: it ended before the search (a signal during the first write, or an internal error),
  // with `exit_code`; there is nothing to summarise.
  bool searched = false;
  int exit_code = 0;
  int threads = 0;
  SearchResult search;
  double written_best = -1;   // the latency of the schedule this run wrote last
  bool on_disk = false;       // that schedule is still the output file at the end (not replaced by another process)
  std::string write_error;    // the last write failed (the best is not on disk): why
  double best_found_s = 0;    // when the best was found (baseline, exact solver or search)
  double best = -1;           // the best valid schedule found (on disk unless write_error)
  std::string trace_error;    // a --trace row could not be written: why
  double first_write_s = -1;  // when the first schedule was on disk
  int writes = 0;
  double lower_bound = 0;  // cost/bound.h
  bool optimal = false;    // proven: the best meets the bound, or the exact solver completed
  StopReason stop_reason = StopReason::Deadline;
  std::string model;  // ModelOptions::describe()
};

// The output file holds a valid schedule from the first write on. Progress goes to `log`.
SolveOutcome solve(const Problem& p, const SolveOptions& opt, Deadline& deadline, const RunLog& log);

}  // namespace mlsys
