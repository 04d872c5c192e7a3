#include "engine/search/solve.h"

#include <atomic>
#include <cmath>
#include <exception>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>

#include "cost/bound/bound.h"
#include "cost/model/json_util.h"
#include "cost/model/number_format.h"
#include "cost/pricing/evaluator.h"
#include "engine/base/limits.h"
#include "engine/base/thread_cpu_budget.h"
#include "engine/construct/construct.h"
#include "engine/exact/exact.h"
#include "engine/io/config.h"
#include "engine/io/config_keys.h"
#include "engine/io/files.h"
#include "engine/io/output.h"
#include "engine/search/search.h"

namespace mlsys {

namespace {

// On huge graphs (100k+ ops) reading and the first schedule can take the whole budget: then the
// baseline and the search are skipped, so that the run ends right after the first write instead
// of after the deadline; so is the bound, unless its quick floors are cheap (up to
// kQuickFloorOps ops: about 1 us per op, measured 0.1 s at 100,000 ops): a small graph on a
// loaded machine, whose stop margin grows with the measured write time, keeps a bound.
constexpr int kQuickFloorOps = 20000;

// One solve run, in the steps solve() takes them. With opt.leak_at_end (the CLI) the large
// objects of a run are never destroyed: main ends with _Exit, and freeing millions of small
// vectors took ~0.1 s on 200,000 ops, half of what a signal allows (exit within 0.2 s).
class SolveRun {
 public:
  SolveRun(const Problem& p, const SolveOptions& opt, Deadline& deadline, const RunLog& log)
      : p_(p), opt_(opt), dl_(deadline), log_(log), cfg_(resolveConfig(opt)), guard_(p, cfg_.model, log.sink()) {
    guard_.setAbortInDebug(opt.bound_args.test_part_scale == 1);
  }
  ~SolveRun() {
    stopBound();  // (an early return: the thread must not outlive the run)
    if (opt_.leak_at_end) {
      (void)out_.release();
      (void)quick_.release();
      (void)base_.release();
      (void)late_.release();
    }
  }
  SolveRun(const SolveRun&) = delete;
  SolveRun& operator=(const SolveRun&) = delete;

  SolveOutcome run() {
    budget_ = opt_.seconds > 0 ? opt_.seconds : defaultBudgetSeconds(p_.numOps());
    dl_.setBudget(budget_);
    open();
    const Schedule* quick = first();
    if (!quick) return r_;
    const bool spentAtFirst = spent();
    if (spentAtFirst)
      log_(p_.numOps() > kQuickFloorOps
               ? "the budget is spent: lower bound, baseline and search skipped"
               : "the budget is spent: baseline and search skipped (the bound's quick floors only)");
    // The bound runs beside everything else from here (an anytime task), but when nothing else runs.
    guard_.setOnRaise([this](double b, const std::string& who) { logBound(b, who); });
    if (spentAtFirst && p_.numOps() <= kQuickFloorOps) startBound(true);
    if (!spentAtFirst) startBound();
    Schedule& base = baseline(*quick);
    // After a signal, go straight to the final write; with the budget spent, too.
    if (!dl_.stopRequested() && !spent()) {
      offerBaseline(base, *quick);
      if (opt_.exact && !r_.optimal && !dl_.stopRequested()) exact(base);
      search(base);
    }
    finish();
    if (callback_error_) std::rethrow_exception(callback_error_);
    return r_;
  }

 private:
  // A margin not below the budget is halved; stale temporary files of killed runs are removed;
  // the trace and the output are opened (checked) before any search: a directory or an
  // unwritable place is an error at once.
  void open() {
    if (cfg_.margin_s >= budget_) {
      // The search would stop before it starts and only the first schedule would be written.
      log_.warn(fmt::format("search.margin_s ({} s) is not below the budget ({} s): using {} s",
                            formatDouble(cfg_.margin_s), formatDouble(budget_), formatDouble(budget_ / 2)));
      cfg_.margin_s = budget_ / 2;
    }
    // Temporary files of earlier runs killed during a write (their process is gone).
    if (!opt_.out.empty())
      if (int n = removeStaleTemps(opt_.out))
        log_(fmt::format("removed {} stale temporary file(s) of '{}'", n, opt_.out));
    // The trace covers the whole run (engine/search/run_state.h, TraceFile): the search's rows go to the same file.
    trace_ = opt_.trace.empty() ? nullptr : TraceFile::open(opt_.trace, p_.name);
    out_ = std::make_unique<OutputWriter>(p_, cfg_.model, opt_.out, cfg_.write_interval_s, &dl_);
    out_->setStopMargin(cfg_.margin_s);
    out_->setLog(log_.sink());
    // Every new best: held against the bound (bound_guard.h), then the caller's callback.
    out_->setOnBest([this](const Schedule& s, double lat, const std::vector<double>& sub, const std::string& who) {
      guard_.check(s, lat, sub);
      if (opt_.on_improvement) onBest(s, lat, who);
    });
    if (out_->inPlace()) log_("'" + opt_.out + "' is not a regular file: it is written in place, once, at the end");
    r_.threads = resolveThreads(opt_.threads);
    log_(fmt::format("mlsys " MLSYS_VERSION ": {}, {} ops, {} tensors; budget {} s; threads {}; seed {}{}; model {}",
                     printable(p_.name), p_.numOps(), p_.numTensors(), formatDouble(budget_), r_.threads, opt_.seed,
                     opt_.max_evals > 0 ? fmt::format("; max-evals {}", opt_.max_evals) : "", cfg_.model.describe()));
    // What a repeat of the run needs besides the seed: the config file, the keys it (or --set, or
    // a flag) moved off the defaults, and the --set arguments as given.
    std::string keys;
    for (const auto& [k, v] : nonDefaultKeys(cfg_)) keys += fmt::format("{}{}={}", keys.empty() ? "" : ", ", k, v);
    std::string sets;
    for (const std::string& s : opt_.set) sets += fmt::format("{}--set {}", sets.empty() ? "" : " ", s);
    log_(fmt::format("config {}; non-default keys: {}{}", opt_.config.empty() ? "built-in defaults" : opt_.config,
                     keys.empty() ? "none" : keys, sets.empty() ? "" : "; " + sets));
  }

  // --init: the schedule, read and checked by the full evaluator under the run's model, within
  // `seconds`: Valid (s and ev set), Invalid or unreadable (warned), or Late (not done in time).
  enum class Init { None, Valid, Invalid, Late };
  Init readInit(double seconds, Schedule& s, Evaluation& ev) {
    if (opt_.init.empty() && !opt_.init_schedule) return Init::None;
    const std::string name = opt_.init.empty() ? std::string("the initial schedule") : "--init '" + opt_.init + "'";
    const double until = dl_.elapsed() + seconds;
    const std::function<bool()> giveUp = [&] { return dl_.stopRequested() || dl_.elapsed() > until; };
    try {
      ReadLimits lim;
      lim.give_up_at = monotonicSeconds() + std::min(10.0, std::max(0.0, seconds));
      lim.stop = giveUp;
      s = opt_.init.empty() ? *opt_.init_schedule : parseScheduleFile(opt_.init, p_, lim);
      ev = evaluateSchedule(p_, s, cfg_.model, CostMethod::Auto, dl_.stopToken(), giveUp);
      if (ev.interrupted) return Init::Late;
      if (ev.valid) return Init::Valid;
      log_.warn(fmt::format("{} is not a valid schedule (rule {}: {}); starting from the usual first schedule", name,
                            ruleName(ev.rule), ev.reason));
    } catch (const ReadInterrupted&) {
      return Init::Late;
    } catch (const std::exception& e) {
      log_.warn(fmt::format("{} cannot be read ({}); starting from the usual first schedule", name, e.what()));
    }
    return Init::Invalid;
  }
  // A small --init (in memory, or a file up to 1 MiB) is tried within 50 ms: checked, it is the
  // first schedule written. A larger or slower one comes after the usual first schedule is on disk
  // (a valid file at once), within a quarter of the budget, and is written when it is better.
  bool smallInit() const {
    if (opt_.init.empty()) return opt_.init_schedule.has_value();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(opt_.init, ec)) return false;  // a pipe: read after the first write
    const auto size = std::filesystem::file_size(opt_.init, ec);
    return !ec && size <= (1u << 20);
  }
  void lateInit() {
    // Held by the run (leaked at its end with leak_at_end): freeing a million-subgraph schedule
    // and its evaluation took ~0.1 s, out of the 0.2 s a signal allows.
    late_ = std::make_unique<std::pair<Schedule, Evaluation>>();
    Schedule& s = late_->first;
    Evaluation& ev = late_->second;
    const Init got = readInit(0.25 * budget_, s, ev);
    const std::string name = opt_.init.empty() ? std::string("the initial schedule") : "--init '" + opt_.init + "'";
    if (got == Init::Late && !dl_.stopRequested())
      log_.warn(fmt::format("{} was not checked within a quarter of the budget; going on without it", name));
    if (got != Init::Valid) return;
    const double lat = out_->offerEvaluated(s, ev, dl_.elapsed(), true, "init");
    const bool better = lat >= 0 && lat < first_lat_;
    log_(fmt::format("{} is valid, latency {}: {}", name, humanLatency(ev.total),
                     better ? "written; the run goes on from it" : "not better than the first schedule"));
    if (!better) return;
    quick_ = std::make_unique<Schedule>(std::move(s));
    first_lat_ = lat;
    if (trace_) trace_->row(dl_.elapsed(), "init", lat);
  }

  // 1. A valid schedule on disk at once: a small --init schedule if it is valid (checked within
  // 50 ms), else each op alone at the largest granularity that fits, then a larger --init
  // (lateInit). Null when the run ends here (a signal during the write, an internal error, an
  // unwritable output).
  const Schedule* first() {
    Schedule init;
    Evaluation initEv;
    const Init early = smallInit() ? readInit(0.05, init, initEv) : Init::None;
    if (early == Init::Valid) {
      log_(fmt::format("{} is valid, latency {}: the run starts from it",
                       opt_.init.empty() ? std::string("the initial schedule") : "--init '" + opt_.init + "'",
                       humanLatency(initEv.total)));
      quick_ = std::make_unique<Schedule>(std::move(init));
      first_lat_ = out_->offerEvaluated(*quick_, initEv, dl_.elapsed(), true, traceTagName(TraceTag::First));
    } else {
      quick_ = std::make_unique<Schedule>(quickSchedule(p_, cfg_.model));
      first_lat_ = out_->offer(*quick_, dl_.elapsed(), true, traceTagName(TraceTag::First));
    }
    if (first_lat_ == OutputWriter::kInterrupted) {
      r_.exit_code = 128 + dl_.stopSignal();
      return nullptr;
    }
    if (first_lat_ < 0) {
      emitLine(log_.sink(), "mlsys: internal error: the first schedule is invalid");
      r_.exit_code = 1;
      return nullptr;
    }
    if (!out_->inPlace() && out_->writtenBest() < 0) {
      // Nothing is on disk and nothing was searched: the output cannot be written (a full disk, a
      // file system that refuses the name).
      emitLine(log_.sink(), "mlsys: error: " + out_->writeError());
      r_.exit_code = 1;
      return nullptr;
    }
    traceRow(TraceTag::First, first_lat_);
    log_(fmt::format("{}: latency {}", out_->inPlace() ? "first schedule ready" : "first schedule written",
                     humanLatency(first_lat_)));
    r_.model = cfg_.model.describe();
    if (early == Init::None || early == Init::Late) lateInit();
    return quick_.get();
  }

  // The ruler (cost/bound/bound.h) beside the baseline, --exact and the search, from the first
  // schedule on, on a thread of its own at the workers' priority: each value it proves goes to the
  // guard at once (the log, the gap, the stop at optimal). It stops at search.bound_share of the
  // budget in CPU time of its thread and twice that in wall-clock time (thread_cpu_budget.h), at
  // the run's end, at optimal or when the guard drops it; the components left keep their quick
  // floors. Its relaxations' part floors use oneTBB (with every worker busy, on its thread). With
  // the budget spent (`now`, or share 0): its global and quick floors only, at once.
  void startBound(bool now = false) {
    BoundOptions bo;
    bo.args = opt_.bound_args;
    guard_.setOptions(bo);
    if (now || cfg_.bound_share <= 0) {
      bo.give_up = [] { return true; };
      guard_.raise(lowerBound(p_, cfg_.model, bo).value(), "the lower bound");
      return;
    }
    bound_thread_ = std::thread([this, bo]() mutable {
      auto cpu = std::make_shared<ThreadCpuBudget>(cfg_.bound_share * budget_, dl_.elapsed());
      bo.stop_now = [this] { return bound_stop_.load(std::memory_order_relaxed) || dl_.stopRequested(); };
      bo.give_up = [this, cpu, stop = bo.stop_now] {
        return stop() || guard_.optimal() || guard_.dropped() || cpu->spent(dl_.elapsed());
      };
      bo.on_value = [this](double v) { guard_.raise(v, "the lower bound"); };
      try {
        const LowerBound lb = lowerBound(p_, cfg_.model, bo);
        guard_.setComponents(BoundGuard::componentsOf(p_, lb));
      } catch (const std::exception& e) {
        log_.warn(fmt::format("the lower bound stopped: {}", e.what()));
      }
      bound_done_.store(true);
      logBound(guard_.bound(), "");  // the last value, if a throttled line held it back
    });
  }
  void stopBound() {
    bound_stop_.store(true);
    if (bound_thread_.joinable()) bound_thread_.join();
  }

  // One line per value the bound proves, at most one every 0.25 s (and the last one).
  void logBound(double b, const std::string& who) {
    std::lock_guard<std::mutex> lk(bound_log_mu_);
    if (b <= 0 || b <= logged_bound_) return;
    const double now = dl_.elapsed();
    const bool last = who.empty();
    if (!last && who == "the lower bound" && logged_bound_ > 0 && now - logged_at_ < 0.25) return;
    if (who != "the lower bound" && !last) return;  // the exact solver's raises have lines of their own
    const double best = out_->best();
    if (logged_bound_ <= 0) {
      const bool rises = searchRaisesBound(p_, cfg_, r_.threads, opt_.max_evals > 0) ||
                         (opt_.exact && cfg_.exact_full_space && p_.numOps() <= kExactMaxOps);
      log_(fmt::format("lower bound {} ({}{}); gap {}", humanLatency(b), bound_done_.load() ? "" : "rising; ",
                       rises ? "the exact solver may raise it" : "only the bound raises it", gapText(best, b)));
    } else {
      log_(fmt::format("lower bound {} ({}); gap {}", humanLatency(b), last ? "its last value" : "proven so far",
                       gapText(best, b)));
    }
    logged_bound_ = b;
    logged_at_ = now;
  }

  // 2. The baseline: best granularity per op, plus retention where it helps; at most a quarter of
  // the budget.
  Schedule& baseline(const Schedule& quick) {
    const Deadline baseDl = dl_.child(std::min(dl_.remaining() - out_->stopMargin(cfg_.margin_s), 0.25 * budget_));
    base_ = std::make_unique<Schedule>();
    Schedule& base = *base_;
    if (spent()) {
      base = quick;
    } else {
      tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(r_.threads));
      base = baselineSchedule(p_, cfg_.model, &baseDl, &quick, p_.numOps() > cfg_.baseline_full_walk_ops);
    }
    return base;
  }

  // The baseline is written at once (not throttled): with --exact it is what the file holds while
  // the exact solver runs. Nothing to re-check when it was stopped before it changed anything.
  void offerBaseline(Schedule& base, const Schedule& quick) {
    double blat = base.subgraphs == quick.subgraphs
                      ? first_lat_
                      : out_->offer(base, dl_.elapsed(), true, traceTagName(TraceTag::Baseline));
    if (blat >= 0 && blat < first_lat_) r_.best_found_s = dl_.elapsed();
    if (blat >= 0) log_("baseline: latency " + humanLatency(blat) + "; gap " + gapText(blat, guard_.bound()));
    if (blat < 0 || blat > first_lat_) base = quick;
    traceRow(TraceTag::Baseline, out_->best());
    if (meetsBound(out_->best(), guard_.bound())) r_.optimal = true;
  }

  // 3. --exact: the exact solver, from the baseline, within search.exact_share of the budget
  // left; the search runs after it for the rest (see below why even when it completed).
  void exact(Schedule& base) {
    ExactOptions eo;
    eo.incumbent = &base;
    eo.full_space = cfg_.exact_full_space;
    const double left = dl_.remaining() - out_->stopMargin(cfg_.margin_s);
    const double stopAt = dl_.remaining() - std::max(0.0, left) * cfg_.exact_share;
    ExactResult ex = solveExact(p_, cfg_.model, eo, [&] {
      return dl_.stopRequested() || dl_.remaining() <= std::max(stopAt, out_->stopMargin(cfg_.margin_s));
    });
    const double before = out_->best();
    // Over the spec's whole space (search.exact_full_space) its lower bound holds for every
    // schedule and raises the run's bound (the improvement callback sees it with the schedule).
    // Its restricted space (the smallest tile side per tile count) proves nothing beyond it: the
    // search goes on, and has found better schedules outside it (bench/RESULTS.md, issue 36). The
    // run is proven optimal when the best meets the bound.
    // Its proofs count only if it never priced a configuration below a floor it pruned with.
    if (ex.stats.lb_violations > 0)
      guard_.exactViolation("the exact solver (--exact)", static_cast<long>(ex.stats.lb_violations), &base,
                            out_->best());
    const bool raises = eo.full_space && ex.found && ex.stats.lb_violations == 0 && ex.lower_bound > guard_.bound();
    // Raised before its schedule is offered, so that the callback sees the proof with it; a raise
    // above the best valid schedule (the run's or the solver's own) is a false certificate.
    const double least = ex.found ? std::min(out_->best(), ex.latency) : out_->best();
    bool raised = false;
    if (raises && least < ex.lower_bound * (1 - 1e-9)) {
      const Schedule s = ex.found && ex.latency < out_->best() ? ex.schedule : out_->bestSchedule();
      guard_.exactViolation("the exact solver (--exact) raised the bound above a valid schedule", 0, &s, least);
    } else if (raises) {
      raised = guard_.raise(ex.lower_bound, "the exact solver (--exact)");
    }
    if (ex.found && out_->offer(ex.schedule, dl_.elapsed(), true, traceTagName(TraceTag::Exact)) >= 0 &&
        !worsens(ex.latency, out_->best(), 1e-12))
      base = ex.schedule;
    if (out_->best() < before) {
      traceRow(TraceTag::Exact, out_->best());
      r_.best_found_s = dl_.elapsed();
    }
    if (raised)
      log_(fmt::format("lower bound raised to {} by the exact solver; gap {}", humanLatency(guard_.bound()),
                       gapText(out_->best(), guard_.bound())));
    if (meetsBound(out_->best(), guard_.bound())) r_.optimal = true;
    log_(fmt::format("exact solver: {}, latency {} ({} states expanded, {} s)",
                     ex.proven_optimal ? std::string(eo.full_space ? "optimal over the spec's whole space"
                                                                   : "optimal over its space; the search goes on")
                     : ex.status == ExactStatus::Bounded  ? std::string("complete, with a gap to its lower bound")
                     : ex.status == ExactStatus::TooLarge ? fmt::format("too large (over {} ops)", kExactMaxOps)
                                                          : std::string("stopped before the proof"),
                     ex.found ? humanLatency(ex.latency) : "-", humanCount(ex.stats.states_expanded),
                     formatDouble(std::round(ex.stats.seconds * 1000) / 1000)));
  }

  // 4. The search, unless the best is proven optimal already.
  void search(const Schedule& base) {
    if (!r_.optimal && !guard_.optimal() && !targetMet() && !dl_.stopRequested())
      r_.search = runSearch(p_, opt_, cfg_, r_.threads, dl_, *out_, base, guard_, trace_.get(), log_.sink());
    if (r_.search.optimal) r_.optimal = true;
    // When the search improved on the start, its own time; otherwise that of the phase above.
    if (r_.search.best_found_s > 0) r_.best_found_s = r_.search.best_found_s;
  }

  // The final write and the outcome. After a signal, the best is written whatever the time;
  // otherwise if the write ends inside the budget (plus a small grace, so that a late process
  // still writes a small schedule).
  void finish() {
    bound_stop_.store(true);
    if (!out_->flushFinal(dl_.stopSignal() != 0) && out_->writeError().empty())
      log_("a better schedule (latency " + humanLatency(out_->best()) +
           ") was not written: the write would have ended past the budget");
    r_.searched = true;
    r_.written_best = out_->writtenBest();
    r_.write_error = out_->writeError();
    r_.best = out_->best();
    if (trace_) r_.trace_error = trace_->error();
    // Another process (a second run on the same output) may have replaced the file since.
    r_.on_disk = r_.written_best >= 0 && out_->stillOnDisk();
    if (r_.written_best >= 0 && !r_.on_disk)
      log_.warn("'" + opt_.out + "' was replaced or removed by someone else after this run's last write: " +
                "this run's best is not on disk");
    traceRow(TraceTag::End, r_.written_best);
    r_.first_write_s = out_->firstWriteTime();
    r_.writes = out_->writes();
    stopBound();
    if (guard_.optimal()) r_.optimal = true;
    // After a violation the bound is 0 (unknown) and nothing the run found is a proof.
    r_.bound_violation = guard_.violation();
    if (r_.bound_violation) r_.optimal = false;
    r_.lower_bound = guard_.bound();
    if (dl_.stopSignal()) r_.stop_reason = StopReason::Signal;
    else if (callback_stopped_) r_.stop_reason = StopReason::Callback;
    else if (r_.optimal) r_.stop_reason = StopReason::Optimal;
    else if (targetMet()) r_.stop_reason = StopReason::Target;
    else if (r_.search.stalled) r_.stop_reason = StopReason::Stall;
    else if (r_.search.max_evals_hit) r_.stop_reason = StopReason::MaxEvals;
    else if (dl_.stopRequested()) r_.stop_reason = StopReason::Stopped;
    else r_.stop_reason = StopReason::Deadline;
    r_.schedule = out_->bestSchedule();
    r_.subgraph_latencies = out_->bestLatencies();
    r_.gap = r_.best >= 0 ? gapOf(r_.best, r_.lower_bound) : 1;
    if (r_.optimal) r_.gap = 0;
    r_.seconds = dl_.elapsed();
    if (r_.optimal) log_(fmt::format("optimal: latency {} meets the lower bound", humanLatency(r_.written_best)));
  }

  // The improvement callback (through the writer's on-best hook): false or an exception stops
  // the run through the deadline's stop source.
  void onBest(const Schedule& s, double lat, const std::string& who) {
    if (callback_stopped_) return;
    bool go_on = false;
    try {
      go_on = opt_.on_improvement(Improvement{s, lat, dl_.elapsed(), who, guard_.bound()});
    } catch (...) {
      callback_error_ = std::current_exception();
    }
    if (!go_on) {
      callback_stopped_ = true;
      if (StopSource* src = dl_.stopSource()) src->request();
    }
  }

  bool spent() const { return dl_.remaining() <= out_->stopMargin(cfg_.margin_s); }
  // --target: the best checked schedule is at or below it.
  bool targetMet() const { return opt_.target >= 0 && out_->hasBest() && out_->best() <= opt_.target; }
  void traceRow(TraceTag tag, double latency) {
    if (trace_ && latency >= 0) trace_->row(dl_.elapsed(), traceTagName(tag), latency);
  }

  const Problem& p_;
  const SolveOptions& opt_;
  Deadline& dl_;
  const RunLog& log_;
  SearchConfig cfg_;
  BoundGuard guard_;          // the bound, and the check of every new best against it
  std::thread bound_thread_;  // the bound beside the search (startBound)
  std::atomic<bool> bound_stop_{false}, bound_done_{false};
  std::mutex bound_log_mu_;
  double logged_bound_ = 0, logged_at_ = 0;
  double budget_ = 0;
  std::unique_ptr<TraceFile> trace_;
  std::unique_ptr<OutputWriter> out_;
  std::unique_ptr<Schedule> quick_, base_;                 // the first schedule and the baseline
  std::unique_ptr<std::pair<Schedule, Evaluation>> late_;  // a late --init and its evaluation
  std::atomic<bool> callback_stopped_{false};
  std::exception_ptr callback_error_;
  double first_lat_ = -1;  // the first schedule's latency
  SolveOutcome r_;
};

}  // namespace

SolveOutcome solve(const Problem& p, const SolveOptions& opt, Deadline& deadline, const RunLog& log) {
  return SolveRun(p, opt, deadline, log).run();
}

SolveOutcome solve(const Problem& p, const SolveOptions& opt) {
  checkSolveOptions(opt);
  StopSource own;
  Deadline dl(nullptr, opt.stop ? opt.stop : &own);
  // The caller's log sink may throw, on any of the run's threads (the monitor's, the bound's): the
  // first exception stops the run and is rethrown here after the final write, never terminate().
  std::mutex mu;
  std::exception_ptr logError;
  LogSink sink;
  if (opt.log)
    sink = [&](const std::string& line) {
      try {
        opt.log(line);
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu);
        if (!logError) logError = std::current_exception();
        dl.stopSource()->request();
      }
    };
  const RunLog log(dl, opt.quiet, sink);
  SolveOutcome r = solve(p, opt, dl, log);
  if (logError) std::rethrow_exception(logError);
  return r;
}

}  // namespace mlsys
