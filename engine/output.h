// Writes the best schedule so far: re-checked by the full evaluator, atomically replaced,
// throttled. The file on disk is always a complete, valid schedule.
#pragma once
#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

#include "cost/evaluator.h"
#include "engine/deadline.h"

namespace mlsys {

class OutputWriter {
 public:
  // With a deadline, a write that is estimated to end after it is not started (the previous file
  // stays): schedules with explicit traversal orders on huge tile grids can take tens of MB.
  OutputWriter(const Problem& p, const ModelOptions& m, std::string path, double min_interval_s = 0.1,
               const Deadline* deadline = nullptr)
      : p_(p), m_(m), path_(std::move(path)), min_interval_(min_interval_s), dl_(deadline) {}

  // Offers a schedule. It is re-evaluated from scratch; if valid and better than the best so far
  // it becomes the best and is written (now, or at the next flush if a write happened less than
  // min_interval ago). Returns its evaluated latency, or -1 if it was invalid.
  double offer(const Schedule& s, double now_s, bool force_write = false);
  // Writes the pending best, if any, unless the write would end past the deadline (and
  // may_overrun is false). Safe to call from the signal-exit path.
  void flush(bool may_overrun = false);
  double best() const;         // the best valid schedule offered (written or pending)
  double writtenBest() const;  // the latency of the schedule on disk, -1 if none
  bool hasBest() const;
  const Schedule& bestSchedule() const { return best_; }
  int writes() const { return writes_; }
  double firstWriteTime() const { return first_write_s_; }
  // Seconds to keep free before the deadline for the end of a search: one more offer's full
  // evaluation plus two writes, from the slowest measured so far and the estimate for the best.
  double reserveSeconds() const {
    double w = std::max(write_s_.load(std::memory_order_relaxed), best_write_est_.load(std::memory_order_relaxed));
    return eval_s_.load(std::memory_order_relaxed) + 2 * w;
  }
  // How long before the deadline a search must stop: the configured margin, or 1.5x the reserve.
  double stopMargin(double margin_s) const { return std::max(margin_s, 1.5 * reserveSeconds() + 0.01); }

 private:
  void writeLocked();
  // Estimated seconds to serialise and write the best schedule (from its size and the slowest
  // measured seconds per byte).
  double estimateWriteLocked() const;
  bool fitsLocked() const;
  const Problem& p_;
  ModelOptions m_;
  std::string path_;
  double min_interval_;
  const Deadline* dl_;
  mutable std::mutex mu_;
  Schedule best_;
  std::vector<double> best_lat_;
  double best_total_ = -1, written_total_ = -1;
  bool pending_ = false;
  double last_write_s_ = -1e9;
  double first_write_s_ = -1;
  int writes_ = 0;
  double sec_per_byte_ = 5e-9;  // slowest measured, at least 5 ns/byte (serialise + write + fsync)
  std::atomic<double> eval_s_{0}, write_s_{0};  // slowest full evaluation / write so far
  std::atomic<double> best_write_est_{0};       // estimated write time of the best schedule
};

}  // namespace mlsys
