// mlsys_poll_gaps: how often each long phase of a run polls its stop (issue 51: "every phase polls
// the run's stop at least every 10 ms"), measured from the polls themselves.
//
//   mlsys_poll_gaps [--seconds S] [--without ARG]... [--catch MS] PROBLEM.json...
//
// For each problem, four phases, each given a budget of S seconds (default 0.5) through the same
// seam a run uses: the lower bound (BoundOptions::give_up), the baseline (its Deadline, on a clock
// that records every reading), the full evaluator on the baseline's schedule (its give_up; it is
// never told to stop, so every gap is seen) and, on graphs of up to 20 ops, the exact solver over
// the spec's whole space (its stop, as `solve` runs it on the whole graph). Prints one Markdown row per phase: the
// polls, the longest gap between two polls, the time from the last poll to the phase's return, and the wall time. A
// phase that keeps the deadline has small gaps and a short tail; the tail after a stop is what a signal waits for.
//
// --catch MS: when a phase goes MS milliseconds without polling, a watchdog thread interrupts it
// (SIGPROF) and its stack goes to stderr, at most one trace per gap; read the offsets with
// `addr2line -f -C -e build/release/bench/mlsys_poll_gaps OFFSET...`. It tells where a gap is.
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cost/bound/args.h"
#include "cost/bound/bound.h"
#include "cost/model/problem.h"
#include "cost/pricing/evaluator.h"
#include "engine/base/deadline.h"
#include "engine/construct/construct.h"
#include "engine/exact/exact.h"

using namespace mlsys;
using Clock = std::chrono::steady_clock;

namespace {

// --catch: the watchdog's signal handler prints the interrupted thread's stack.
void printStack(int) {
  void* frames[48];
  const int n = backtrace(frames, 48);
  const char head[] = "gap: the stack, innermost first (binary(+offset): addr2line -f -C -e BINARY OFFSET)\n";
  (void)!write(2, head, sizeof head - 1);
  backtrace_symbols_fd(frames + 2, n - 2, 2);  // past the handler and the signal frame
}

// Every reading of the time is a poll: the longest gap between two of them, and the last one.
class Polls final : public TimeSource {
 public:
  Clock::time_point now() const override {
    const Clock::time_point t = Clock::now();
    note(t);
    return t;
  }
  void note(Clock::time_point t) const {
    if (n_ > 0) max_gap_ = std::max(max_gap_, t - last_);
    last_ = t;
    ++n_;
    seen_.store(t.time_since_epoch().count(), std::memory_order_relaxed);
  }
  // The last poll, for the watchdog's thread.
  long long lastSeen() const { return seen_.load(std::memory_order_relaxed); }
  long polls() const { return n_; }
  double maxGapMs() const { return std::chrono::duration<double, std::milli>(max_gap_).count(); }
  double sinceLastMs(Clock::time_point end) const {
    return n_ ? std::chrono::duration<double, std::milli>(end - last_).count() : 0;
  }

 private:
  mutable long n_ = 0;
  mutable Clock::time_point last_{};
  mutable Clock::duration max_gap_{0};
  mutable std::atomic<long long> seen_{Clock::now().time_since_epoch().count()};
};

// --catch MS: while a phase runs, a thread that interrupts it (SIGPROF: printStack) whenever it
// has gone MS ms without a poll, once per gap.
class Watchdog {
 public:
  Watchdog(const Polls& polls, double ms) {
    if (ms <= 0) return;
    signal(SIGPROF, printStack);
    const pthread_t self = pthread_self();
    thread_ = std::thread([this, &polls, ms, self] {
      long long caught = 0;
      while (!done_.load()) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        const long long last = polls.lastSeen();
        const double gap =
            std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch() - Clock::duration(last)).count();
        if (gap > ms && last != caught && !done_.load()) {
          caught = last;
          pthread_kill(self, SIGPROF);
        }
      }
    });
  }
  ~Watchdog() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

void row(const std::string& name, const char* phase, const Polls& polls, Clock::time_point start,
         Clock::time_point end) {
  std::printf("| %s | %s | %ld | %.2f | %.2f | %.1f |\n", name.c_str(), phase, polls.polls(), polls.maxGapMs(),
              polls.sinceLastMs(end), std::chrono::duration<double, std::milli>(end - start).count());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0.5;
  std::vector<std::string> files;
  BoundArgs args;
  double catchMs = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--catch") && i + 1 < argc) {
      catchMs = std::atof(argv[++i]);
      continue;
    }
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--without") && i + 1 < argc) {
      const auto a = boundArgByName(argv[++i]);
      if (!a) {
        std::fprintf(stderr, "mlsys_poll_gaps: unknown argument '%s' (%s)\n", argv[i], boundArgList().c_str());
        return 1;
      }
      args.disable(*a);
    } else if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
      std::printf("usage: mlsys_poll_gaps [--seconds S] [--without ARG]... [--catch MS] PROBLEM.json...\n");
      return 0;
    } else files.push_back(argv[i]);
  }
  std::printf("| problem | phase | polls | longest gap (ms) | after the last poll (ms) | wall (ms) |\n");
  std::printf("|---|---|--:|--:|--:|--:|\n");
  const ModelOptions m;
  for (const std::string& f : files) {
    Problem p;
    try {
      p = parseProblemFile(f);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mlsys_poll_gaps: %s\n", e.what());
      return 1;
    }
    const std::string name = p.name.empty() ? f : p.name;
    {  // the bound, with its budget
      Polls polls;
      const Clock::time_point start = Clock::now(), until = start + std::chrono::duration_cast<Clock::duration>(
                                                                        std::chrono::duration<double>(seconds));
      BoundOptions bo;
      bo.args = args;
      bo.give_up = [&] {
        const Clock::time_point t = Clock::now();
        polls.note(t);
        return t > until;
      };
      const Watchdog dog(polls, catchMs);
      (void)lowerBound(p, m, bo);
      row(name, "bound", polls, start, Clock::now());
    }
    Schedule base;
    {  // the baseline, on its deadline
      Polls polls;
      Deadline dl(&polls);
      dl.setBudget(seconds);
      const Clock::time_point start = Clock::now();
      const Watchdog dog(polls, catchMs);
      base = baselineSchedule(p, m, &dl);
      row(name, "baseline", polls, start, Clock::now());
    }
    if (p.numOps() <= kExactMaxOps) {  // the exact solver, with its budget
      Polls polls;
      const Clock::time_point start = Clock::now(), until = start + std::chrono::duration_cast<Clock::duration>(
                                                                        std::chrono::duration<double>(seconds));
      ExactOptions o;
      o.incumbent = &base;
      o.full_space = true;
      const Watchdog dog(polls, catchMs);
      (void)solveExact(p, m, o, [&] {
        const Clock::time_point t = Clock::now();
        polls.note(t);
        return t > until;
      });
      row(name, "exact", polls, start, Clock::now());
    }
    {  // the full evaluator on the baseline's schedule (never stopped)
      Polls polls;
      const Clock::time_point start = Clock::now();
      (void)evaluateSchedule(p, base, m, CostMethod::Auto, {}, [&] {
        polls.note(Clock::now());
        return false;
      });
      row(name, "evaluate", polls, start, Clock::now());
    }
  }
  return 0;
}
