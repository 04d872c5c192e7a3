// The run's lower bound and the check that stands behind it (issue 50, item 5). A bound above a
// valid schedule would make the run say `optimal` and stop early: a false certificate. So every
// new best (re-checked by the full evaluator) is held against the bound, and each of its
// subgraphs against the part floor of its op set (the floor every argument of the bound rests
// on); the exact solver's prices against its own floors (lb_violations). On a violation the run
// logs `internal error: lower bound X is above a valid schedule Y (argument A) ...`, writes the
// problem and the schedule to a file named in that line, drops the bound for the rest of the run
// (the gap is unknown, it never says `optimal`, it does not stop early) and reports it in its
// outcome (`bound_violation`). Debug builds abort after writing the file.
//
// It is also the one holder of the bound during a run: each value the bound proves as it runs
// beside the search (anytime: cost/bound/bound.h, BoundOptions::on_value), every raise by the exact
// solver over the spec's whole space; read by the search's stop policy (optimal()), the progress
// lines and the improvement callback. Thread-safe.
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/model/schedule.h"
#include "engine/base/log_sink.h"

namespace mlsys {

struct BoundViolation {
  double bound = 0;      // the bound (or part floor) claimed
  double latency = 0;    // the valid schedule's latency (or its subgraph's) below it
  std::string argument;  // what the claim rested on, as far as the check can tell
  std::string file;      // where the problem and the schedule were written ("" if that failed)
};

class BoundGuard {
 public:
  // `bo`: the options the bound was computed with (the suspects' search reuses them, with a
  // time cap of its own); `log`: where the internal-error line goes (stderr when empty).
  BoundGuard(const Problem& p, const ModelOptions& m, LogSink log = {}) : p_(p), m_(m), log_(std::move(log)) {}
  BoundGuard(const BoundGuard&) = delete;
  BoundGuard& operator=(const BoundGuard&) = delete;

  // The options the bound is computed with (for naming a suspect argument later).
  void setOptions(const BoundOptions& bo);
  // The static bound: setOptions(bo) and raise(bound, "the lower bound").
  void setStatic(double bound, const BoundOptions& bo);
  // A sound bound proven during the run; true when it is higher than the current one (never once
  // dropped). Above the best valid schedule so far it is a violation (handled, false). Then
  // on_raise(bound, who) is called (outside the lock).
  bool raise(double bound, const std::string& who);
  // Called after each raise that took (the run's log line).
  void setOnRaise(std::function<void(double, const std::string&)> f) { on_raise_ = std::move(f); }
  // The best checked so far meets the bound (within 1e-9): the run may stop (never after a violation).
  bool optimal() const { return optimal_.load(std::memory_order_relaxed); }
  // The bound now: 0 before it is known and after a violation (then the gap is unknown).
  double bound() const;
  bool dropped() const;
  // A valid schedule (re-checked by the full evaluator) with its total and subgraph latencies:
  // false when it is below the bound or a subgraph below its part floor (then handled as above).
  bool check(const Schedule& s, double latency, const std::vector<double>& subgraph_latencies);
  // The exact solver (`who`) priced configurations below the floors it pruned with.
  void exactViolation(const std::string& who, long count, const Schedule* s, double latency);
  std::optional<BoundViolation> violation() const;

  // The bound's fusion components, for the search's guidance only (lns.component_regions; no claim
  // rests on them): per op its component (ops of two never share a subgraph), per component the
  // value the bound proved for it. Published when the bound ends (componentsOf); null before.
  struct Components {
    std::vector<int> of_op;
    std::vector<double> value;
    std::vector<int> size;  // ops per component
  };
  static std::shared_ptr<const Components> componentsOf(const Problem& p, const LowerBound& lb);
  void setComponents(std::shared_ptr<const Components> c);
  std::shared_ptr<const Components> components() const;

  // Test seam: abort in debug builds on a violation (default); off for the tests that plant one.
  void setAbortInDebug(bool on) { abort_in_debug_ = on; }
  // Part floors are checked on graphs up to this many ops, at most this many new op sets per check.
  static constexpr int kPartCheckOps = 400, kPartChecksPerBest = 64;

 private:
  void violated(double bound, double latency, const std::string& argument, const Schedule* s);
  std::string suspects(double latency);
  std::string writeReport(const BoundViolation& v, const Schedule* s) const;

  const Problem& p_;
  const ModelOptions& m_;
  LogSink log_;
  mutable std::mutex mu_;
  double bound_ = 0;
  std::string source_;  // "the lower bound" or who raised it
  BoundOptions bo_;
  double best_ = -1;                        // the best checked latency (-1: none yet)
  std::shared_ptr<const Schedule> best_s_;  // and its schedule (for a raise's report)
  std::atomic<bool> optimal_{false};
  std::function<void(double, const std::string&)> on_raise_;
  bool dropped_ = false;
  bool abort_in_debug_ = true;
  std::optional<BoundViolation> violation_;
  std::map<std::vector<OpId>, double> floors_;  // part floors checked so far, per sorted op set
  std::shared_ptr<const Components> components_;
};

}  // namespace mlsys
