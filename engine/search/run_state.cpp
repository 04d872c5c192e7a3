#include "engine/search/run_state.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "cost/bound/bound.h"
#include "cost/model/json_util.h"
#include "cost/model/number_format.h"

namespace mlsys {

void RunStats::addMoves(const std::string& move, const MoveStats& m) {
  std::lock_guard<std::mutex> lk(mu_);
  MoveStats& t = moves_[move];
  t.evaluations += m.evaluations;
  t.valid += m.valid;
  t.applied += m.applied;
  t.improvements += m.improvements;
}

void RunStats::noteBest(const std::string& who, double lat) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = best_by_kind_.find(who);
  if (it == best_by_kind_.end() || lat < it->second) best_by_kind_[who] = lat;
}

bool RunStats::takeBudgeted(int worker, long n, int64_t limit) {
  long cur = evaluations.load(std::memory_order_relaxed);
  do {
    if (n > limit - cur) return false;
  } while (!evaluations.compare_exchange_weak(cur, cur + n, std::memory_order_relaxed));
  if (worker >= 0 && worker < workers_) by_worker_[worker].n.fetch_add(n, std::memory_order_relaxed);
  return true;
}

std::vector<long> RunStats::evaluationsByWorker() const {
  std::vector<long> v;
  for (int i = 0; i < workers_; ++i) v.push_back(by_worker_[i].n.load(std::memory_order_relaxed));
  return v;
}

std::map<std::string, MoveStats> RunStats::moves() const {
  std::lock_guard<std::mutex> lk(mu_);
  return moves_;
}

std::map<std::string, double> RunStats::bestByKind() const {
  std::lock_guard<std::mutex> lk(mu_);
  return best_by_kind_;
}

bool StopPolicy::stopNow() const {
  if (dl_.stopRequested()) return true;
  if (stats_.optimal.load(std::memory_order_relaxed) || (guard_ && guard_->optimal())) return true;
  if (stats_.target_hit.load(std::memory_order_relaxed) || stats_.stalled(dl_.elapsed())) return true;
  // Whichever limit comes first: --max-evals never switches the wall clock off.
  if (max_evals_ > 0 && stats_.evaluations.load(std::memory_order_relaxed) >= max_evals_) return true;
  return secondsLeft() <= 0;
}

double StopPolicy::fraction() const {
  if (max_evals_ > 0)
    return std::min(1.0, static_cast<double>(stats_.evaluations.load()) / static_cast<double>(max_evals_));
  const double total = dl_.total();
  if (!(total < 1e17)) return 0;
  const double span = total - start_s_;
  return span > 0 ? std::clamp((dl_.elapsed() - start_s_) / span, 0.0, 1.0) : 1.0;
}

double gapOf(double latency, double bound) {
  if (!(latency > 0) || !(bound > 0)) return 1;
  return std::max(0.0, (latency - bound) / latency);
}

std::string gapText(double latency, double bound) { return fmt::format("{:.2f}%", 100 * gapOf(latency, bound)); }

std::unique_ptr<TraceFile> TraceFile::open(const std::string& path, const std::string& instance) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw InputError("--trace: cannot write '" + path + "': " + std::strerror(errno));
  std::unique_ptr<TraceFile> t(new TraceFile(f));
  // The header is flushed now: a file that cannot take it (/dev/full, a full disk) is an error
  // before the search, not a silent empty trace.
  std::string head = "seconds,worker,latency\n";
  if (!instance.empty()) {
    head += "# instance: ";
    for (char c : instance) head += c == '\n' || c == '\r' ? ' ' : c;  // one line
    head += "\n";
  }
  if (std::fputs(head.c_str(), f) < 0 || std::fflush(f) != 0)
    throw InputError("--trace: cannot write '" + path + "': " + std::strerror(errno));
  return t;
}

std::string TraceFile::error() const {
  std::lock_guard<std::mutex> lk(mu_);
  return error_;
}

TraceFile::~TraceFile() { std::fclose(f_); }

void TraceFile::row(double seconds, const std::string& who, double latency) {
  std::lock_guard<std::mutex> lk(mu_);
  const std::string line = fmt::format("{:.4f},{},{}\n", seconds, who, formatDouble(latency));
  if (std::fputs(line.c_str(), f_) < 0 || std::fflush(f_) != 0) {
    if (error_.empty()) {
      error_ = std::string("cannot write a row: ") + std::strerror(errno);
      std::cerr << "mlsys: warning: --trace: " << error_ << "\n";
    }
    std::clearerr(f_);
  }
}

Progress::Progress(const Deadline& dl, OutputWriter& out, RunStats& stats, TraceFile* trace, BoundGuard& guard,
                   bool quiet, LogSink log)
    : dl_(dl),
      out_(out),
      stats_(stats),
      trace_(trace),
      best_(out.best()),
      guard_(guard),
      quiet_(quiet),
      log_(std::move(log)) {}

void Progress::improved(const Schedule& s, double lat, const std::string& who) {
  stats_.noteBest(who, lat);
  const auto useful = [&] { return lat < best_ && (!pending_ || lat < pending_->lat); };
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!useful()) return;
  }
  Schedule copy = s;  // outside the lock: a huge schedule takes ms
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!useful()) return;
    // The time is taken under the lock, so that the times of the hand-overs checked (and of the
    // trace rows) never go back.
    pending_ = Handover{std::move(copy), lat, dl_.elapsed(), who};
  }
  handed_.notify_one();
}

void Progress::checkPending() {
  std::lock_guard<std::mutex> one(check_mu_);
  Handover h;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!pending_) return;
    h = std::move(*pending_);
    pending_.reset();
  }
  const double checked = out_.offer(h.s, dl_.elapsed(), false, h.who);
  if (checked == OutputWriter::kInterrupted) return;  // a signal: the run is ending
  std::lock_guard<std::mutex> lk(mu_);
  if (checked < 0) {
    emitLine(log_, "mlsys: internal error: " + h.who + " produced a schedule the full evaluator rejects; ignored");
    return;
  }
  if (checked < best_) {
    best_ = checked;
    best_found_s_ = h.found_s;
    best_who_ = h.who;
    stats_.last_improvement_s.store(h.found_s, std::memory_order_relaxed);
    if (stats_.target >= 0 && checked <= stats_.target) stats_.target_hit.store(true, std::memory_order_relaxed);
    if (!quiet_)
      emitLine(log_,
               fmt::format("[{}s] incumbent {}  gap {}  found by {}", formatDouble(std::round(h.found_s * 1000) / 1000),
                           humanLatency(checked), gapText(checked, guard_.bound()), h.who));
    if (meetsBound(checked, guard_.bound())) stats_.optimal.store(true);
    if (trace_) trace_->row(h.found_s, h.who, checked);
  }
}

void Progress::warnOnce(const std::string& text) {
  std::lock_guard<std::mutex> lk(mu_);
  if (warned_.insert(text).second) emitLine(log_, "warning: " + text);
}

void Progress::raiseBound(double bound, const std::string& who) {
  // The guard checks it against the best valid schedule (a raise above it is a violation).
  if (!guard_.raise(bound, who)) return;
  std::lock_guard<std::mutex> lk(mu_);
  if (!quiet_)
    emitLine(log_, fmt::format("[{}s] bound raised to {}  gap {}  by {}",
                               formatDouble(std::round(dl_.elapsed() * 1000) / 1000), humanLatency(bound),
                               gapText(best_, bound), who));
  if (meetsBound(best_, bound)) stats_.optimal.store(true);
}

double Progress::bound() const { return guard_.bound(); }

double Progress::bestFoundS() const {
  std::lock_guard<std::mutex> lk(mu_);
  return best_found_s_;
}

// The progress table: one header, then a line every log_interval_s in fixed columns.
namespace {
constexpr const char* kProgressRow = "{:>9}  {:>12}  {:>14}  {:>7}  {:>10}  {:>9}  {}";
}  // namespace

std::string Progress::progressHeader() const {
  return fmt::format(kProgressRow, "time", "incumbent", bound_dynamic_ ? "bound" : "bound (static)", "gap",
                     "since best", "evals/s", "found by");
}

void Progress::monitor(const std::atomic<int>& running, double log_interval_s, bool quiet, const ElitePool& pool) {
  double next = log_interval_s;
  long lastEvals = 0, lastAcc = 0;
  double lastT = 0;
  bool header = false;
  while (running.load() > 0) {
    // Wake when a worker hands an improvement over, or when a deferred best falls due (at most
    // every 20 ms): it is then on disk within write_interval_s of being found, plus about a
    // millisecond, not plus a whole period.
    double wait = std::clamp(out_.pendingDueAt() - dl_.elapsed(), 0.001, 0.02);
    {
      std::unique_lock<std::mutex> lk(mu_);
      handed_.wait_for(lk, std::chrono::duration<double>(wait), [&] { return pending_.has_value(); });
    }
    checkPending();
    double t = dl_.elapsed();
    if (!dl_.stopRequested()) out_.flushDue(t);
    if (t < next || quiet) continue;
    const long e = stats_.evaluations.load(), acc = stats_.accepted.load();
    const double rate = (e - lastEvals) / std::max(1e-9, t - lastT);
    const double accepted = e > lastEvals ? static_cast<double>(acc - lastAcc) / static_cast<double>(e - lastEvals) : 0;
    lastEvals = e;
    lastAcc = acc;
    lastT = t;
    next = t + log_interval_s;
    std::lock_guard<std::mutex> lk(mu_);
    if (!header) emitLine(log_, progressHeader());
    header = true;
    const double since = t - stats_.last_improvement_s.load(std::memory_order_relaxed);
    const double bound = guard_.bound();
    emitLine(log_,
             fmt::format(kProgressRow, humanSeconds(t), humanLatency(best_), bound > 0 ? humanLatency(bound) : "-",
                         bound > 0 ? gapText(best_, bound) : "-", humanSeconds(std::max(0.0, since)),
                         humanCount(std::llround(rate)), best_who_.empty() ? "-" : best_who_));
    if (verbose_) {
      std::string bests;
      for (const auto& [k, v] : stats_.bestByKind())
        bests += fmt::format("{}{} {}", bests.empty() ? "" : ", ", k, humanLatency(v));
      emitLine(log_, fmt::format("{:>9}  bests: {}; accepted {}; pool {}", "", bests.empty() ? "-" : bests,
                                 humanPercent(accepted), pool.size()));
    }
  }
  checkPending();  // a worker's last improvement, handed over as it stopped
}

}  // namespace mlsys
