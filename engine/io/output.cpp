#include "engine/io/output.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>

#include "cost/model/json_util.h"
#include "cost/pricing/subgraph.h"
#include "engine/io/files.h"

namespace mlsys {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void raiseTo(std::atomic<double>& a, double v) {
  double cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

OutputWriter::OutputWriter(const Problem& p, const ModelOptions& m, const std::string& path, double min_interval_s,
                           const Deadline* deadline)
    : p_(p),
      m_(m),
      target_(path.empty() ? OutputTarget() : OutputTarget::open(path, "cannot write the output")),
      min_interval_(min_interval_s),
      dl_(deadline),
      in_place_(target_.writeOnce()),
      memory_(path.empty()) {}

double OutputWriter::offer(const Schedule& s, double now_s, bool force_write, const std::string& who) {
  auto t0 = std::chrono::steady_clock::now();
  Evaluation ev = evaluateSchedule(p_, s, m_, CostMethod::Auto, dl_ ? dl_->stopToken() : StopToken());
  if (ev.interrupted) return kInterrupted;
  raiseTo(eval_s_, secondsSince(t0));
  return offerEvaluated(s, ev, now_s, force_write, who);
}

double OutputWriter::offerEvaluated(const Schedule& s, const Evaluation& ev, double now_s, bool force_write,
                                    const std::string& who) {
  if (ev.interrupted) return kInterrupted;
  if (!ev.valid) return kInvalid;
  long seq = 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (best_total_ >= 0 && ev.total >= best_total_) return ev.total;
    seq = acceptLocked(s, ev, now_s, force_write);
  }
  if (on_best_) {
    // In order and one at a time; a best overtaken by a later one while this waited is skipped.
    std::lock_guard<std::mutex> hk(hook_mu_);
    if (seq > hooked_seq_) {
      hooked_seq_ = seq;
      std::vector<double> sub;
      sub.reserve(ev.subgraphs.size());
      for (const auto& r : ev.subgraphs) sub.push_back(r.cost.latency);
      on_best_(s, ev.total, sub, who);
    }
  }
  return ev.total;
}

long OutputWriter::acceptLocked(const Schedule& s, const Evaluation& ev, double now_s, bool force_write) {
  best_ = s;
  best_.reported.clear();
  best_lat_.clear();
  for (const auto& r : ev.subgraphs) best_lat_.push_back(r.cost.latency);
  best_total_ = ev.total;
  pending_ = true;
  retry_ = true;
  // From now on a signal stops the run gracefully (the best is written) instead of ending it.
  if (StopSource* stop = dl_ ? dl_->stopSource() : nullptr) stop->markResultExists();
  best_write_est_.store(estimateWriteLocked(), std::memory_order_relaxed);
  if (dl_) now_s = dl_->elapsed();  // another offer may have written while this one waited
  if (!in_place_ && (force_write || (dueLocked(now_s) && fitsBeforeStopLocked()))) writeLocked(now_s);
  return ++best_seq_;
}

void OutputWriter::flushDue(double now_s) {
  std::lock_guard<std::mutex> lk(mu_);
  if (pending_ && retry_ && !in_place_ && dueLocked(now_s) && fitsBeforeStopLocked()) writeLocked(now_s);
}

bool OutputWriter::flushFinal(bool after_signal) {
  std::lock_guard<std::mutex> lk(mu_);
  // After a signal a FIFO's reader and a full pipe get one more second at most.
  if (pending_ && (after_signal || fitsLocked(kFinalGraceS)))
    writeLocked(dl_ ? dl_->elapsed() : 0, after_signal ? 1.0 : kFinalGraceS, true);
  return !pending_;
}

double OutputWriter::pendingDueAt() const {
  std::lock_guard<std::mutex> lk(mu_);
  if (!pending_ || in_place_ || !retry_) return std::numeric_limits<double>::infinity();
  return last_write_s_ + interval();
}

double OutputWriter::interval() const {
  // At most one write per min_interval, and writing a third of the time at most when writes are slow.
  return std::max(min_interval_, 3 * write_s_.load(std::memory_order_relaxed));
}

bool OutputWriter::dueLocked(double now_s) const { return now_s - last_write_s_ >= interval(); }

double OutputWriter::estimateWriteLocked() const {
  double bytes = 64;
  for (const auto& sg : best_.subgraphs) {
    double tiles = 0;
    if (sg.trav.kind == TraversalKind::Custom) tiles = static_cast<double>(sg.trav.order.size());
    else if (sg.trav.kind != TraversalKind::Raster) {
      auto [ntw, nth] = subgraphGrid(p_, sg);
      tiles = static_cast<double>(ntw) * static_cast<double>(nth);
    }
    bytes += 64 + 8 * static_cast<double>(sg.ops.size() + sg.retain.size()) + 9 * tiles;
  }
  return bytes * sec_per_byte_;
}

bool OutputWriter::fitsLocked(double grace_s) const {
  // 1.5x: write speed varies with the page cache and the disk (88-128 MB took 0.24-0.67 s).
  return !dl_ || 1.5 * estimateWriteLocked() <= dl_->remaining() + grace_s;
}

bool OutputWriter::fitsBeforeStopLocked() const { return fitsLocked(-stopMargin(stop_margin_s_)); }

bool OutputWriter::writeLocked(double now_s, double grace_s, bool final) {
  if (memory_) return markWrittenLocked(now_s);
  auto t0 = std::chrono::steady_clock::now();
  std::string json = scheduleToJson(best_, p_, best_lat_);
  // A FIFO or pipe may wait for its reader until the deadline (plus the grace); with no deadline,
  // 10 s.
  const double give_up =
      monotonicSeconds() + (dl_ && dl_->remaining() < 1e17 ? std::max(0.0, dl_->remaining()) + grace_s : 10.0);
  try {
    target_.write(json, give_up);
  } catch (const std::exception& e) {
    // The search goes on; the best stays pending and is written at the next improvement or by the
    // final flush. Reported once per distinct message.
    ++failed_writes_;
    retry_ = false;
    if (write_error_ != e.what() && !final)
      emitLine(log_, std::string("mlsys: warning: ") + e.what() +
                         "; the search goes on, the write is retried at the next improvement");
    write_error_ = e.what();
    return false;
  }
  write_error_.clear();
  double dt = secondsSince(t0);
  raiseTo(write_s_, dt);
  if (json.size() >= (1 << 20)) sec_per_byte_ = std::max(sec_per_byte_, dt / static_cast<double>(json.size()));
  return markWrittenLocked(now_s);
}

bool OutputWriter::markWrittenLocked(double now_s) {
  written_total_ = best_total_;
  pending_ = false;
  ++writes_;
  last_write_s_ = now_s;
  if (first_write_s_ < 0) first_write_s_ = now_s;
  return true;
}

std::string OutputWriter::writeError() const {
  return locked([&] { return write_error_; });
}
int OutputWriter::failedWrites() const {
  return locked([&] { return failed_writes_; });
}
bool OutputWriter::stillOnDisk() const {
  return locked([&] { return memory_ || target_.stillOurs(); });
}
Schedule OutputWriter::bestSchedule() const {
  return locked([&] { return best_; });
}
std::vector<double> OutputWriter::bestLatencies() const {
  return locked([&] { return best_lat_; });
}
double OutputWriter::best() const {
  return locked([&] { return best_total_; });
}
double OutputWriter::writtenBest() const {
  return locked([&] { return written_total_; });
}
bool OutputWriter::hasBest() const {
  return locked([&] { return best_total_ >= 0; });
}

}  // namespace mlsys
