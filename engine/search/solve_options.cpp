// SolveOptions and their defaults: the contest's time limits, threads, the config a run uses, the
// options' checks, the run's log lines.
#include <algorithm>
#include <cmath>
#include <thread>

#include <fmt/format.h>
#include <oneapi/tbb/info.h>

#include "cost/model/json_util.h"
#include "engine/io/config.h"
#include "engine/search/solve.h"

namespace mlsys {

double contestLimitSeconds(int n) {
  if (n <= 5) return 2;
  if (n <= 20) return 5;
  if (n <= 32) return 15;
  if (n <= 63) return 30;
  if (n <= 103) return 60;
  return 120;
}

double defaultBudgetSeconds(int n) {
  // Stay inside the limit with a margin: the harness kills at the limit and machines differ.
  double lim = contestLimitSeconds(n);
  return lim <= 2 ? 1.5 : lim * 0.9;
}

int resolveThreads(int requested) {
  // The CPUs this process may use (oneTBB reads the affinity mask, e.g. under taskset or a
  // container's cpuset), not every core of the machine.
  int hw = std::max(1, tbb::info::default_concurrency());
  return requested > 0 ? std::min(requested, maxThreads()) : hw;
}

int maxThreads() {
  // Each worker holds its own evaluator and cache; far more workers than cores only costs memory.
  return std::max(64, 4 * static_cast<int>(std::thread::hardware_concurrency()));
}

void useConfig(SolveOptions& opt, const SearchConfig& cfg) {
  opt.seconds = cfg.seconds;
  opt.threads = cfg.threads;
  opt.seed = cfg.seed;
  opt.model = cfg.model;
  opt.model_set = true;
  opt.resolved = std::make_shared<const SearchConfig>(cfg);
}

SearchConfig resolveConfig(const SolveOptions& opt) {
  if (opt.resolved) return *opt.resolved;
  SearchConfig cfg = loadConfig(opt.config, opt.set);
  if (opt.model_set) cfg.model = opt.model;
  return cfg;
}

void RunLog::operator()(const std::string& line) const {
  if (!quiet_) emitLine(sink_, fmt::format("[{}s] {}", formatDouble(std::round(dl_.elapsed() * 1000) / 1000), line));
}

void checkSolveOptions(const SolveOptions& opt) {
  auto bad = [](const std::string& field, double v, const std::string& want) {
    throw InputError("SolveOptions::" + field + " = " + formatDouble(v) + ": " + want);
  };
  if (!std::isfinite(opt.seconds) || opt.seconds == 0 || opt.seconds > 1e9)
    bad("seconds", opt.seconds, "expected a budget in (0, 1e9] seconds, or < 0 for the default");
  if (opt.threads < 0) bad("threads", opt.threads, "expected 0 (every CPU) or more");
  if (std::isnan(opt.target) || std::isinf(opt.target))
    bad("target", opt.target, "expected a latency, or < 0 for none");
  if (!std::isfinite(opt.stall_s) || opt.stall_s == 0)
    bad("stall_s", opt.stall_s, "expected seconds > 0, or < 0 for none");
  if (opt.max_evals == 0) bad("max_evals", 0, "expected a count > 0, or < 0 for none");
}

}  // namespace mlsys
