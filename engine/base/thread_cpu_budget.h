// A budget of CPU time for one thread, asked from any thread (the bound's poll runs on oneTBB's
// threads too): engine/search/solve.cpp gives the bound beside the search search.bound_share of the
// run's budget in CPU time of its thread. Where the workers take every core the bound's thread
// gets a part of one, and a wall-clock share left large graphs' bounds unfinished (random-n5000,
// 2 threads on 2 cores: 2,296.1M at 7.5 s of a 30 s run, 2,335.7M at 9.1 s with this budget).
#pragma once
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <limits>

namespace mlsys {

class ThreadCpuBudget {
 public:
  // On the thread whose CPU time counts: `seconds` of it from now (`wall`, the caller's wall-clock
  // seconds), and at most twice that in wall-clock time; without a CPU clock, `seconds` of that.
  ThreadCpuBudget(double seconds, double wall) : wall_share_(wall + seconds), wall_cap_(wall + 2 * seconds) {
    valid_ = pthread_getcpuclockid(pthread_self(), &clock_) == 0;
    until_ = (valid_ ? now() : 0) + seconds;
  }
  // Whether the thread has spent the budget at `wall`. The CPU clock is a system call where the
  // wall clock is not: it is read at most every 5 ms of wall-clock time.
  bool spent(double wall) {
    if (spent_.load(std::memory_order_relaxed)) return true;
    if (wall > wall_cap_ || (!valid_ && wall > wall_share_)) return true;
    if (!valid_ || wall - checked_.load(std::memory_order_relaxed) < 0.005) return false;
    checked_.store(wall, std::memory_order_relaxed);
    if (now() <= until_) return false;
    spent_.store(true, std::memory_order_relaxed);
    return true;
  }

 private:
  // A thread that has ended: Linux drops its clock (the read fails: spent); a kernel that keeps
  // it frozen (the CI's sandbox) leaves the wall-clock cap to end the budget.
  double now() const {
    timespec ts{};
    if (clock_gettime(clock_, &ts) != 0) return std::numeric_limits<double>::infinity();
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  double wall_share_, wall_cap_;
  clockid_t clock_{};
  bool valid_ = false;
  double until_ = 0;
  std::atomic<double> checked_{-1.0};
  std::atomic<bool> spent_{false};
};

}  // namespace mlsys
