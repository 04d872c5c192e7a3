// Writes the best schedule so far: re-checked by the full evaluator, atomically replaced,
// throttled. The file on disk is always a complete, valid schedule.
#pragma once
#include <mutex>
#include <string>

#include "cost/evaluator.h"

namespace mlsys {

class OutputWriter {
 public:
  OutputWriter(const Problem& p, const ModelOptions& m, std::string path, double min_interval_s = 0.1)
      : p_(p), m_(m), path_(std::move(path)), min_interval_(min_interval_s) {}

  // Offers a schedule. It is re-evaluated from scratch; if valid and better than the best so far
  // it becomes the best and is written (now, or at the next flush if a write happened less than
  // min_interval ago). Returns its evaluated latency, or -1 if it was invalid.
  double offer(const Schedule& s, double now_s, bool force_write = false);
  // Writes the pending best, if any. Safe to call from the signal-exit path.
  void flush();
  double best() const;
  bool hasBest() const;
  const Schedule& bestSchedule() const { return best_; }
  int writes() const { return writes_; }
  double firstWriteTime() const { return first_write_s_; }

 private:
  void writeLocked();
  const Problem& p_;
  ModelOptions m_;
  std::string path_;
  double min_interval_;
  mutable std::mutex mu_;
  Schedule best_;
  std::vector<double> best_lat_;
  double best_total_ = -1;
  bool pending_ = false;
  double last_write_s_ = -1e9;
  double first_write_s_ = -1;
  int writes_ = 0;
};

}  // namespace mlsys
