// One wall-clock deadline, created first thing in main (before parsing), covering the process.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <unistd.h>

namespace mlsys {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  Deadline() : start_(Clock::now()), end_(Clock::time_point::max()) {}
  // The process's deadline: its clock starts when the process started (fork), not at main(): a
  // harness measures its limit from the spawn, and loading shared libraries can take tens of ms.
  static Deadline sinceProcessStart() {
    Deadline d;
    d.start_ -= processAge();
    return d;
  }
  // Budgets past 1e9 s (or not finite) mean "no deadline": the end would overflow the clock's
  // 64-bit nanoseconds from ~9.2e9 s on. The CLI refuses them before they get here.
  void setBudget(double seconds) {
    if (!(seconds <= 1e9)) {
      end_ = Clock::time_point::max();
      return;
    }
    end_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double remaining() const {
    if (end_ == Clock::time_point::max()) return 1e18;
    return std::chrono::duration<double>(end_ - Clock::now()).count();
  }
  // Seconds from the start to the deadline (1e18 without one).
  double total() const {
    if (end_ == Clock::time_point::max()) return 1e18;
    return std::chrono::duration<double>(end_ - start_).count();
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
  // Seconds since the process started, from /proc/self/stat (start time in clock ticks since
  // boot, rounded down: the age errs long by up to a tick); 0 where unavailable or implausible.
  static Clock::duration processAge() {
    std::FILE* f = std::fopen("/proc/self/stat", "r");
    if (!f) return Clock::duration::zero();
    char buf[1024];
    size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = 0;
    const char* q = std::strrchr(buf, ')');  // the command name may hold spaces and parentheses
    unsigned long long ticks = 0;
    // Fields after the name: state(3) ... starttime(22), i.e. the 20th token after ')'.
    for (int field = 3; q && field <= 22; ++field) {
      q = std::strchr(q + 1, ' ');
      if (q && field == 22) ticks = std::strtoull(q + 1, nullptr, 10);
    }
    timespec ts{};
    long hz = ::sysconf(_SC_CLK_TCK);
    if (!ticks || hz <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &ts) != 0) return Clock::duration::zero();
    double age = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec) -
                 static_cast<double>(ticks) / static_cast<double>(hz);
    if (!(age >= 0 && age < 10)) return Clock::duration::zero();
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(age));
  }
  Clock::time_point start_, end_;
};

}  // namespace mlsys
