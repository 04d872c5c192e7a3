// solve(): the search as a library call and as the solve command's core. A first schedule at
// once (on disk, or in memory without an output path), the baseline, then the search until a stop
// (deadline, optimality, target, stall, evaluations, the caller's stop source or callback, a
// signal) and the final write. The CLI's summary and --stats are engine/cli/solve_report.cpp.
//
// A library caller fills SolveOptions and calls solve(problem, options): the result carries the
// best schedule, its latency, the bound, the gap, the stop reason and the statistics. The
// callback sees every new best (in order, one call at a time) and may stop the run; a StopSource
// of the caller's stops it from any thread; the log sink receives the progress lines.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost/pricing/evaluator.h"
#include "engine/base/deadline.h"
#include "engine/base/log_sink.h"
#include "engine/search/bound_guard.h"
#include "engine/search/run_state.h"

namespace mlsys {

struct SearchConfig;

// A new best, as the improvement callback sees it.
struct Improvement {
  const Schedule& schedule;  // valid (re-checked by the full evaluator); copy it to keep it
  double latency = 0;
  double seconds = 0;    // since the run's start
  std::string found_by;  // "first", "baseline", "exact", or the worker kind or constructor
  double bound = 0;      // the lower bound at that moment (0 before it is computed)
};

struct SolveOptions {
  std::string out;      // the output file, rewritten at each improvement; "" = in memory only
  double seconds = -1;  // < 0: contest default from the instance size
  int threads = 0;      // 0: all cores
  uint64_t seed = 1;
  int64_t max_evals = -1;                 // > 0: stop after this many move evaluations (reproducible runs)
  double target = -1;                     // >= 0: stop once a schedule at or below this latency is written (--target)
  double stall_s = -1;                    // > 0: stop after this many seconds without an improvement (--stall-seconds)
  std::string init;                       // --init: a schedule to start from (checked; the usual first one if invalid)
  std::optional<Schedule> init_schedule;  // the same in memory (used when `init` is empty)
  std::string config;                     // YAML path ("" = built-in default)
  std::vector<std::string> set;           // --set KEY=VALUE, applied over the config file
  std::string trace;                      // CSV of improvements (seconds, worker, latency)
  bool quiet = false;                     // no progress lines (warnings still go to the log)
  bool verbose = false;  // -v: after each progress row, the best per worker kind, the acceptance rate, the pool
  // Each new best (in order, never two calls at a time; from the calling thread or the search's
  // monitor thread). Returning false stops the run (stop reason `callback`). An exception stops
  // the run and is rethrown by solve() after the final write.
  std::function<bool(const Improvement&)> on_improvement;
  LogSink log;  // progress lines and warnings ("" = stderr); used by solve(problem, options)
  // The caller's stop: request() from any thread (or a signal handler) ends the run with its
  // best (stop reason `stopped`, or `signal` when requested with a signal number). Used by
  // solve(problem, options); the other form takes it from its Deadline.
  StopSource* stop = nullptr;
  // The CLI: the run's large objects are never destroyed (the process ends with _Exit; freeing
  // millions of small vectors took ~0.1 s on 200,000 ops). A library caller leaves it false.
  bool leak_at_end = false;
  ModelOptions model;
  bool model_set = false;  // --model given: overrides the config's model section
  bool exact = false;      // --exact: run the exact solver (engine/exact/exact.h) first
  // The bound's arguments switched off (cost/bound/args.h); its test_part_scale plants a wrong
  // argument (the self-check's test). The default: every argument on.
  BoundArgs bound_args;
  // The config as the caller already resolved it (the CLI: file, --set, flags): used as it is,
  // so the file is read once; config, set and model are then ignored.
  std::shared_ptr<const SearchConfig> resolved;
};

// `resolved` if set, else the config file (or defaults) with the CLI overrides applied.
SearchConfig resolveConfig(const SolveOptions& opt);
// Makes `cfg` (a config the caller resolved: file, --set, flags) the run's settings: seconds,
// threads, seed and model from it, and `resolved`, so that solve() does not read the file again.
void useConfig(SolveOptions& opt, const SearchConfig& cfg);

// Worker threads for a --threads value: 0 = all cores; capped at maxThreads().
int resolveThreads(int requested);
int maxThreads();

// Contest time limit by op count (2/5/15/30/60/120 s) and the budget we use within it.
double contestLimitSeconds(int numOps);
double defaultBudgetSeconds(int numOps);

// Timestamped lines ("[1.234s] text", seconds since the start of the run's deadline) to `sink`
// (stderr when empty); none when `quiet`. warn() writes "mlsys: warning: text" even when quiet.
class RunLog {
 public:
  RunLog(const Deadline& dl, bool quiet, LogSink sink = {}) : dl_(dl), quiet_(quiet), sink_(std::move(sink)) {}
  void operator()(const std::string& line) const;
  void warn(const std::string& text) const { emitLine(sink_, "mlsys: warning: " + text); }
  const LogSink& sink() const { return sink_; }
  bool quiet() const { return quiet_; }

 private:
  const Deadline& dl_;
  bool quiet_;
  LogSink sink_;
};

// Why a solve run stopped.
enum class StopReason {
  Deadline,  // the budget ran out
  Optimal,   // the best meets the lower bound (the only proof of optimality a run makes)
  Signal,    // SIGTERM, SIGINT or SIGHUP
  MaxEvals,  // --max-evals evaluations
  Target,    // --target: a schedule at or below the target latency is written
  Stall,     // --stall-seconds: no improvement for that long
  Callback,  // the improvement callback returned false (or threw)
  Stopped,   // the caller's StopSource (without a signal number)
};
// "deadline", "optimal", "signal", "max_evals", "target", "stall", "callback", "stopped": the name
// in the log and in --stats.
inline const char* stopReasonName(StopReason r) {
  switch (r) {
    case StopReason::Deadline: return "deadline";
    case StopReason::Optimal: return "optimal";
    case StopReason::Signal: return "signal";
    case StopReason::MaxEvals: return "max_evals";
    case StopReason::Target: return "target";
    case StopReason::Stall: return "stall";
    case StopReason::Callback: return "callback";
    case StopReason::Stopped: return "stopped";
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
  double lower_bound = 0;  // cost/bound/bound.h
  bool optimal = false;    // proven: the best meets the bound, or the exact solver completed
  StopReason stop_reason = StopReason::Deadline;
  std::string model;                       // ModelOptions::describe()
  Schedule schedule;                       // the best valid schedule (empty if none: `best` < 0)
  std::vector<double> subgraph_latencies;  // its subgraphs' latencies
  double gap = 1;                          // (best - lower_bound) / best: 0 when proven optimal
  double seconds = 0;                      // the run's length
  // Set when a valid schedule was found below the bound (or a subgraph below its part floor, or
  // the exact solver priced below its floors): an internal error, logged; the bound was dropped
  // (lower_bound 0, gap unknown: 1) and the run never claimed optimality (bound_guard.h).
  std::optional<BoundViolation> bound_violation;
};

// The library's call: a run of its own (its clock starts now; opt.stop, opt.log, opt.seconds).
// Throws InputError for a bad option (checkSolveOptions), config, --set value or unwritable
// output, before any search.
SolveOutcome solve(const Problem& p, const SolveOptions& opt);
// InputError naming the field when an option is out of range: seconds (0, NaN, inf, > 1e9),
// threads < 0, target NaN or inf, stall_s 0 or not finite, max_evals 0.
void checkSolveOptions(const SolveOptions& opt);
// The CLI's: on the process's deadline (its stop source is the run's), logging to `log`. The output
// file, if any, holds a valid schedule from the first write on.
SolveOutcome solve(const Problem& p, const SolveOptions& opt, Deadline& deadline, const RunLog& log);

}  // namespace mlsys
