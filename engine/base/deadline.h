// One wall-clock deadline, created first thing in main (before parsing), covering the process.
// It carries the run's stop request (cost/model/stop.h): expired() is true once a stop is requested.
// Its clock is a seam: tests hand it a FakeClock and move time by hand instead of sleeping.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "cost/model/stop.h"

namespace mlsys {

// Where a Deadline reads the time: the steady clock unless a test hands it another source.
class TimeSource {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~TimeSource() = default;
  virtual Clock::time_point now() const = 0;
};

// A clock that moves only when told to (tests of time limits): by hand (advance, set), and by
// `step` seconds at every reading when a step is given, so that a run which keeps checking its
// deadline reaches it after a known number of checks, whatever the machine's load.
class FakeClock final : public TimeSource {
 public:
  explicit FakeClock(double step_seconds = 0) : step_ns_(static_cast<long long>(step_seconds * 1e9)) {}
  Clock::time_point now() const override {
    return Clock::time_point(std::chrono::nanoseconds(ns_.fetch_add(step_ns_, std::memory_order_relaxed)));
  }
  void advance(double seconds) { ns_.fetch_add(static_cast<long long>(seconds * 1e9)); }

 private:
  static constexpr long long kOrigin = 1'000'000'000'000LL;  // far from 0: start - process age stays valid
  const long long step_ns_;
  mutable std::atomic<long long> ns_{kOrigin};
};

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  // Starts now on `time` (the steady clock when null), with no budget and no stop source.
  explicit Deadline(const TimeSource* time = nullptr, StopSource* stop = nullptr)
      : time_(time), stop_(stop), start_(now()), end_(Clock::time_point::max()) {}
  // The process's deadline: its clock starts when the process started (fork), not at main(): a
  // harness measures its limit from the spawn, and loading shared libraries can take tens of ms.
  static Deadline sinceProcessStart(StopSource* stop = nullptr) {
    Deadline d(nullptr, stop);
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
  // A deadline of `seconds` from now, on the same clock and with the same stop source.
  Deadline child(double seconds) const {
    Deadline d(time_, stop_);
    d.setBudget(seconds);
    return d;
  }
  double elapsed() const { return std::chrono::duration<double>(now() - start_).count(); }
  double remaining() const {
    if (end_ == Clock::time_point::max()) return 1e18;
    return std::chrono::duration<double>(end_ - now()).count();
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
  bool expired() const { return stopRequested() || now() >= end_; }

  // The run's stop request (none without a source).
  bool stopRequested() const { return stop_ != nullptr && stop_->requested(); }
  int stopSignal() const { return stop_ != nullptr ? stop_->signal() : 0; }
  StopToken stopToken() const { return stop_ != nullptr ? stop_->token() : StopToken(); }
  StopSource* stopSource() const { return stop_; }
  const TimeSource* timeSource() const { return time_; }

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
  Clock::time_point now() const { return time_ != nullptr ? time_->now() : Clock::now(); }

  const TimeSource* time_ = nullptr;
  StopSource* stop_ = nullptr;
  Clock::time_point start_, end_;
};

}  // namespace mlsys
