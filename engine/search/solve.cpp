#include "engine/search/solve.h"

#include "engine/base/limits.h"
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>

#include <cmath>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "cost/bound.h"
#include "cost/json_util.h"
#include "engine/io/config.h"
#include "engine/construct/construct.h"
#include "engine/exact/exact.h"
#include "engine/io/files.h"
#include "engine/io/output.h"
#include "engine/search/search.h"

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

SearchConfig resolveConfig(const SolveOptions& opt) {
  if (opt.resolved) return *opt.resolved;
  SearchConfig cfg = loadConfig(opt.config, opt.set);
  if (opt.model_set) cfg.model = opt.model;
  return cfg;
}

void RunLog::operator()(const std::string& line) const {
  if (!quiet_) std::cerr << fmt::format("[{}s] {}\n", formatDouble(std::round(dl_.elapsed() * 1000) / 1000), line);
}

SolveOutcome solve(const Problem& p, const SolveOptions& opt, Deadline& deadline, const RunLog& log) {
  double budget = opt.seconds > 0 ? opt.seconds : defaultBudgetSeconds(p.numOps());
  deadline.setBudget(budget);
  SearchConfig cfg = resolveConfig(opt);
  SolveOutcome r;
  if (cfg.margin_s >= budget) {
    // The search would stop before it starts and only the first schedule would be written.
    std::cerr << fmt::format("mlsys: warning: search.margin_s ({} s) is not below the budget ({} s): using {} s\n",
                             formatDouble(cfg.margin_s), formatDouble(budget), formatDouble(budget / 2));
    cfg.margin_s = budget / 2;
  }
  // Temporary files of earlier runs killed during a write (their process is gone).
  for (const std::string& f : {opt.out, opt.stats})
    if (!f.empty())
      if (int n = removeStaleTemps(f)) log(fmt::format("removed {} stale temporary file(s) of '{}'", n, f));
  // The trace covers the whole run (engine/search/run_state.h, TraceFile): the search's rows go to the same file.
  std::unique_ptr<TraceFile> trace = opt.trace.empty() ? nullptr : TraceFile::open(opt.trace);
  auto traceRow = [&](TraceTag tag, double latency) {
    if (trace && latency >= 0) trace->row(deadline.elapsed(), traceTagName(tag), latency);
  };
  // Opens (checks) the output now: a directory or an unwritable place is an error before any search.
  OutputWriter& out = *new OutputWriter(p, cfg.model, opt.out, cfg.write_interval_s, &deadline);
  out.setStopMargin(cfg.margin_s);
  if (out.inPlace()) log("'" + opt.out + "' is not a regular file: it is written in place, once, at the end");
  r.threads = resolveThreads(opt.threads);
  log(fmt::format("mlsys " MLSYS_VERSION ": {}, {} ops, {} tensors; budget {} s; threads {}; seed {}{}; model {}", p.name,
                  p.numOps(), p.numTensors(), formatDouble(budget), r.threads, opt.seed,
                  opt.max_evals > 0 ? fmt::format("; max-evals {}", opt.max_evals) : "", cfg.model.describe()));
  // 1. A valid schedule on disk at once: each op alone at the largest granularity that fits.
  // The large objects of a run are never destroyed: main ends with _Exit, and freeing millions of
  // small vectors took ~0.1 s on 200,000 ops, half of what a signal allows (exit within 0.2 s).
  Schedule& quick = *new Schedule(quickSchedule(p, cfg.model));
  double lat = out.offer(quick, deadline.elapsed(), true);
  if (lat == OutputWriter::kInterrupted) {
    r.exit_code = 128 + Deadline::signal_received.load();
    return r;
  }
  if (lat < 0) {
    std::cerr << "mlsys: internal error: the first schedule is invalid\n";
    r.exit_code = 1;
    return r;
  }
  if (!out.inPlace() && out.writtenBest() < 0) {
    // Nothing is on disk and nothing was searched: the output cannot be written (a full disk, a
    // file system that refuses the name).
    std::cerr << "mlsys: error: " << out.writeError() << "\n";
    r.exit_code = 1;
    return r;
  }
  traceRow(TraceTag::First, lat);
  log(fmt::format("{}: latency {}", out.inPlace() ? "first schedule ready" : "first schedule written", formatDouble(lat)));
  // On huge graphs (100k+ ops) reading and the first schedule can take the whole budget: then the
  // baseline and the search are skipped, so that the run ends right after the first write instead
  // of after the deadline; so is the bound, unless its quick floors are cheap (up to
  // kQuickFloorOps ops: about 1 us per op, measured 0.1 s at 100,000 ops): a small graph on a
  // loaded machine, whose stop margin grows with the measured write time, keeps a bound.
  constexpr int kQuickFloorOps = 20000;
  const auto spent = [&] { return deadline.remaining() <= out.stopMargin(cfg.margin_s); };
  r.model = cfg.model.describe();
  const bool spentAtFirst = spent();
  if (spentAtFirst)
    log(p.numOps() > kQuickFloorOps ? "the budget is spent: lower bound, baseline and search skipped"
                                    : "the budget is spent: baseline and search skipped (the bound's quick floors only)");
  // The ruler: a lower bound (cost/bound.h), within 5% of the budget (beyond it the remaining
  // fusion components get their quick floors).
  if (!spentAtFirst || p.numOps() <= kQuickFloorOps) {
    Deadline boundDl;
    boundDl.setBudget(spentAtFirst ? 0 : 0.05 * budget);
    BoundOptions bo;
    bo.give_up = [&] { return boundDl.expired() || Deadline::stop_requested.load(); };
    r.lower_bound = lowerBound(p, cfg.model, bo).value();
  }
  if (r.lower_bound > 0) log(fmt::format("lower bound {}; gap {}", formatDouble(r.lower_bound), gapText(lat, r.lower_bound)));
  // 2. The baseline: best granularity per op, plus retention where it helps.
  Deadline baseDl;  // the baseline may use at most a quarter of the budget
  baseDl.setBudget(std::min(deadline.remaining() - out.stopMargin(cfg.margin_s), 0.25 * budget));
  Schedule& base = *new Schedule;
  if (spent()) {
    base = quick;
  } else {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(r.threads));
    base = baselineSchedule(p, cfg.model, &baseDl, &quick);
  }
  // After a signal, go straight to the final write; with the budget spent, too.
  if (!Deadline::stop_requested.load() && !spent()) {
    // Nothing to re-check when the baseline was stopped before it changed anything.
    // Written at once (not throttled): with --exact it is what the file holds while the exact
    // solver runs.
    double blat = base.subgraphs == quick.subgraphs ? lat : out.offer(base, deadline.elapsed(), true);
    if (blat >= 0 && blat < lat) r.best_found_s = deadline.elapsed();
    if (blat >= 0) log("baseline: latency " + formatDouble(blat) + "; gap " + gapText(blat, r.lower_bound));
    if (blat < 0 || blat > lat) base = quick;
    traceRow(TraceTag::Baseline, out.best());
    if (meetsBound(out.best(), r.lower_bound)) {
      r.optimal = true;
    }
    // 3. --exact: the exact solver, from the baseline, within search.exact_share of the budget
    // left; the search runs after it for the rest (see below why even when it completed).
    if (opt.exact && !r.optimal && !Deadline::stop_requested.load()) {
      ExactOptions eo;
      eo.incumbent = &base;
      const double left = deadline.remaining() - out.stopMargin(cfg.margin_s);
      const double stopAt = deadline.remaining() - std::max(0.0, left) * cfg.exact_share;
      ExactResult ex = solveExact(p, cfg.model, eo, [&] {
        return Deadline::stop_requested.load() || deadline.remaining() <= std::max(stopAt, out.stopMargin(cfg.margin_s));
      });
      const double before = out.best();
      if (ex.found && out.offer(ex.schedule, deadline.elapsed(), true) >= 0 && ex.latency < out.best() * (1 + 1e-12)) base = ex.schedule;
      if (out.best() < before) {
        traceRow(TraceTag::Exact, out.best());
        r.best_found_s = deadline.elapsed();
      }
      // Completed, the exact solver is optimal over its own space only (the smallest tile side per
      // tile count): the search goes on, and has found better schedules outside it (bench/RESULTS.md,
      // issue 36). The run is proven optimal only when the best meets the lower bound.
      if (meetsBound(out.best(), r.lower_bound)) {
        r.optimal = true;
      }
      log(fmt::format("exact solver: {}, latency {} ({} states expanded, {} s)",
                      ex.proven_optimal   ? std::string("optimal over its space; the search goes on")
                      : ex.status == ExactStatus::TooLarge ? fmt::format("too large (over {} ops)", kExactMaxOps)
                                                      : std::string("stopped before the proof"),
                      ex.found ? formatDouble(ex.latency) : "-", ex.stats.states_expanded, formatDouble(std::round(ex.stats.seconds * 1000) / 1000)));
    }
    // 4. The search, unless the best is proven optimal already.
    if (!r.optimal && !Deadline::stop_requested.load())
      r.search = runSearch(p, opt, cfg, r.threads, deadline, out, base, r.lower_bound, trace.get());
    if (r.search.optimal) {
      r.optimal = true;
    }
    // When the search improved on the start, its own time; otherwise that of the phase above.
    if (r.search.best_found_s > 0) r.best_found_s = r.search.best_found_s;
  }
  // After a signal, write whatever the time; otherwise if the write ends inside the budget (plus a
  // small grace, so that a late process still writes a small schedule).
  if (!out.flushFinal(Deadline::signal_received.load() != 0) && out.writeError().empty())
    log("a better schedule (latency " + formatDouble(out.best()) + ") was not written: the write would have ended past the budget");
  r.searched = true;
  r.written_best = out.writtenBest();
  r.write_error = out.writeError();
  r.best = out.best();
  if (trace) r.trace_error = trace->error();
  // Another process (a second run on the same output) may have replaced the file since.
  r.on_disk = r.written_best >= 0 && out.stillOnDisk();
  if (r.written_best >= 0 && !r.on_disk)
    std::cerr << "mlsys: warning: '" << opt.out << "' was replaced or removed by someone else after this run's last write: "
              << "this run's best is not on disk\n";
  traceRow(TraceTag::End, r.written_best);
  r.first_write_s = out.firstWriteTime();
  r.writes = out.writes();
  if (Deadline::signal_received.load()) r.stop_reason = StopReason::Signal;
  else if (r.optimal) r.stop_reason = StopReason::Optimal;
  else if (r.search.max_evals_hit) r.stop_reason = StopReason::MaxEvals;
  else r.stop_reason = StopReason::Deadline;
  if (r.optimal)
    log(fmt::format("optimal: latency {} meets the lower bound", formatDouble(r.written_best)));
  return r;
}

}  // namespace mlsys
