#include "engine/solver.h"

#include <oneapi/tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <thread>
#include <sstream>

#include "cost/bound.h"
#include "cost/json_util.h"
#include "engine/files.h"
#include "engine/config.h"
#include "engine/construct.h"
#include "engine/output.h"
#include "engine/search.h"

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
  int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return requested > 0 ? std::min(requested, maxThreads()) : hw;
}

int maxThreads() {
  // Each worker holds its own evaluator and cache; far more workers than cores only costs memory.
  return std::max(64, 4 * static_cast<int>(std::thread::hardware_concurrency()));
}

SearchConfig resolveConfig(const SolveOptions& opt) {
  SearchConfig cfg = opt.config.empty() ? SearchConfig{} : loadConfig(opt.config);
  if (opt.model_set) cfg.model = opt.model;
  return cfg;
}

int solve(const Problem& p, const SolveOptions& opt, Deadline& deadline) {
  double budget = opt.seconds > 0 ? opt.seconds : defaultBudgetSeconds(p.numOps());
  deadline.setBudget(budget);
  SearchConfig cfg = resolveConfig(opt);
  auto log = [&](const std::string& s) {
    if (!opt.quiet) std::cerr << "[" << formatDouble(std::round(deadline.elapsed() * 1000) / 1000) << "s] " << s << "\n";
  };
  // Temporary files of earlier runs killed during a write (their process is gone).
  for (const std::string& f : {opt.out, opt.stats})
    if (!f.empty())
      if (int n = removeStaleTemps(f)) log("removed " + std::to_string(n) + " stale temporary file(s) of '" + f + "'");
  OutputWriter& out = *new OutputWriter(p, cfg.model, opt.out, cfg.write_interval_s, &deadline);
  if (out.inPlace()) log("'" + opt.out + "' is not a regular file: it is written in place, once, at the end");
  int threads = resolveThreads(opt.threads);
  log("mlsys " MLSYS_VERSION ": " + p.name + ", " + std::to_string(p.numOps()) + " ops, " + std::to_string(p.numTensors()) +
      " tensors; budget " + formatDouble(budget) + " s; threads " + std::to_string(threads) + "; seed " +
      std::to_string(opt.seed) + (opt.max_evals > 0 ? "; max-evals " + std::to_string(opt.max_evals) : "") + "; model " +
      cfg.model.describe());
  // 1. A valid schedule on disk at once: each op alone at the largest granularity that fits.
  // The large objects of a run are never destroyed: main ends with _Exit, and freeing millions of
  // small vectors took ~0.1 s on 200,000 ops, half of what a signal allows (exit within 0.2 s).
  Schedule& quick = *new Schedule(quickSchedule(p, cfg.model));
  double lat = out.offer(quick, deadline.elapsed(), true);
  if (lat == OutputWriter::kInterrupted) return 128 + Deadline::signal_received.load();
  if (lat < 0) {
    std::cerr << "mlsys: internal error: the first schedule is invalid\n";
    return 1;
  }
  log(std::string(out.inPlace() ? "first schedule ready" : "first schedule written") + ": latency " + formatDouble(lat) +
      " (lower bound " + formatDouble(lowerBound(p, cfg.model).value()) + ")");
  // 2. The baseline: best granularity per op, plus retention where it helps.
  Deadline baseDl;  // the baseline may use at most a quarter of the budget
  baseDl.setBudget(std::min(deadline.remaining() - out.stopMargin(cfg.margin_s), 0.25 * budget));
  Schedule& base = *new Schedule;
  {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
    base = baselineSchedule(p, cfg.model, &baseDl, &quick);
  }
  SearchResult res;
  // After a signal, go straight to the final write.
  if (!Deadline::stop_requested.load()) {
    // Nothing to re-check when the baseline was stopped before it changed anything.
    double blat = base.subgraphs == quick.subgraphs ? lat : out.offer(base, deadline.elapsed());
    if (blat >= 0) log("baseline: latency " + formatDouble(blat));
    if (blat < 0 || blat > lat) base = quick;
    if (!Deadline::stop_requested.load()) res = runSearch(p, opt, cfg, deadline, out, base);
  }
  // After a signal, write whatever the time; otherwise if the write ends inside the budget (plus a
  // small grace, so that a late process still writes a small schedule).
  if (!out.flushFinal(Deadline::signal_received.load() != 0))
    log("a better schedule (latency " + formatDouble(out.best()) + ") was not written: the write would have ended past the budget");
  double el = deadline.elapsed();
  if (!opt.quiet) {
    log("done: best latency " + formatDouble(out.writtenBest()) + ", found at " + formatDouble(std::round(res.best_found_s * 1000) / 1000) +
        " s; " + std::to_string(out.writes()) + " writes; " + std::to_string(res.evaluations) + " evaluations (" +
        std::to_string(static_cast<long>(res.evaluations / std::max(1e-9, el))) + "/s)");
    std::cerr << "  move           evaluated      valid    applied  improved\n";
    for (const auto& [name, m] : res.moves) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "  %-12s %11ld %10ld %10ld %9ld\n", name.c_str(), m.evaluations, m.valid, m.applied,
                    m.improvements);
      std::cerr << buf;
    }
  }
  if (!opt.stats.empty()) {
    std::ostringstream os;
    os << "{\n  \"instance\": \"" << p.name << "\",\n  \"best_latency\": " << formatDouble(out.writtenBest())
       << ",\n  \"first_write_s\": " << formatDouble(out.firstWriteTime()) << ",\n  \"best_found_s\": "
       << formatDouble(res.best_found_s) << ",\n  \"elapsed_s\": " << formatDouble(el) << ",\n  \"evaluations\": " << res.evaluations
       << ",\n  \"evals_per_s\": " << formatDouble(std::round(res.evaluations / std::max(1e-9, el)))
       << ",\n  \"writes\": " << out.writes() << ",\n  \"threads\": " << threads << ",\n  \"seed\": " << opt.seed << "\n}\n";
    writeFileAtomic(opt.stats, os.str());
  }
  int sig = Deadline::signal_received.load();
  if (sig) log("stopped by signal " + std::to_string(sig) + " (" + strsignal(sig) + "); the best schedule is on disk");
  return sig ? 128 + sig : 0;
}

}  // namespace mlsys
