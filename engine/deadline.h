// One wall-clock deadline, created first thing in main (before parsing), covering the process.
#pragma once
#include <atomic>
#include <chrono>

namespace mlsys {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  Deadline() : start_(Clock::now()), end_(Clock::time_point::max()) {}
  void setBudget(double seconds) {
    end_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double remaining() const {
    if (end_ == Clock::time_point::max()) return 1e18;
    return std::chrono::duration<double>(end_ - Clock::now()).count();
  }
  // Fraction of the budget used, in [0, 1].
  double fraction() const {
    if (end_ == Clock::time_point::max()) return 0;
    double total = std::chrono::duration<double>(end_ - start_).count();
    double f = total > 0 ? elapsed() / total : 1;
    return f < 0 ? 0 : (f > 1 ? 1 : f);
  }
  bool expired() const { return stop_requested.load(std::memory_order_relaxed) || Clock::now() >= end_; }

  // Set by the SIGTERM/SIGINT handler (and by --max-evals exhaustion).
  static inline std::atomic<bool> stop_requested{false};
  static inline std::atomic<int> signal_received{0};

 private:
  Clock::time_point start_, end_;
};

}  // namespace mlsys
