// Writes the best schedule so far: re-checked by the full evaluator, atomically replaced,
// throttled. The file on disk is always a complete, valid schedule.
#pragma once
#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cost/pricing/evaluator.h"
#include "engine/base/deadline.h"
#include "engine/base/log_sink.h"
#include "engine/io/files.h"

namespace mlsys {

class OutputWriter {
 public:
  // offer() results besides a latency.
  static constexpr double kInvalid = -1, kInterrupted = -2;
  // Seconds a final write may end past the deadline: a small schedule is still written when the
  // process runs late (a loaded or stopped machine); the harness scores the last complete file
  // and a kill during the write leaves the previous one (atomic rename).
  static constexpr double kFinalGraceS = 0.1;

  // With a deadline, a write that is estimated to end after it is not started (the previous file
  // stays): schedules with explicit traversal orders on huge tile grids can take tens of MB.
  // The target is opened (checked) here: an unwritable path throws InputError before any search.
  // A target written once (a pipe, a FIFO, a device: OutputTarget::writeOnce) gets the final flush.
  // An empty path keeps the best in memory only (the library's solve without a file): every
  // "write" succeeds at once and touches no file.
  OutputWriter(const Problem& p, const ModelOptions& m, const std::string& path, double min_interval_s = 0.1,
               const Deadline* deadline = nullptr);
  // With a deadline: its stop token abandons the re-check of an offer on a stop request, and the
  // first accepted schedule marks its stop source's result as existing (from then on a signal ends
  // the run through the normal path, the best written; before, the CLI's handler exits at once).

  // Offers a schedule. It is re-evaluated from scratch; if valid and better than the best so far
  // it becomes the best and is written now if `force_write` or if the last write is at least
  // min_interval old (otherwise by the next flushDue). Returns its evaluated latency, kInvalid,
  // or kInterrupted (a signal stopped the evaluation).
  // A failed write never throws: it is reported on stderr (once per message), the best stays
  // pending and is written at the next improvement or by the final flush (see writeError).
  // `who` names the finder for the on-best hook.
  double offer(const Schedule& s, double now_s, bool force_write = false, const std::string& who = "");
  // The same for a schedule the caller has just evaluated with the full evaluator under the
  // writer's model (`ev`): not evaluated again (a warm start of a million subgraphs).
  double offerEvaluated(const Schedule& s, const Evaluation& ev, double now_s, bool force_write = false,
                        const std::string& who = "");
  // Called after each new best with it, its latency and `who` (the offer's): in the order the
  // bests were accepted, never two at a time, outside the writer's lock (a slow hook delays only
  // the thread that offered). A best overtaken before its call is skipped. Set before any offer.
  using OnBest = std::function<void(const Schedule& s, double latency, const std::vector<double>& subgraph_latencies,
                                    const std::string& who)>;
  void setOnBest(OnBest hook) { on_best_ = std::move(hook); }
  // Where the writer's warnings go (stderr by default). Set before any offer.
  void setLog(LogSink log) { log_ = std::move(log); }
  // The best schedule offered (empty before the first) and its subgraph latencies.
  Schedule bestSchedule() const;
  std::vector<double> bestLatencies() const;
  // Writes the pending best if the last write is at least min_interval old and the write fits
  // before the deadline. Called periodically (every 20 ms) while the search runs, so that a new
  // best is on disk within min_interval (+ the period) of being found.
  void flushDue(double now_s);
  // When the pending best may be written (seconds since the start; +infinity if none is pending).
  double pendingDueAt() const;
  // The last write of a run: writes the pending best if it fits before the deadline plus
  // kFinalGraceS, or unconditionally after a signal. Returns false if a pending best was left
  // unwritten.
  bool flushFinal(bool after_signal);
  // The last write's error ("" if it succeeded or none failed): set while the best is not on disk
  // because a write failed.
  std::string writeError() const;
  int failedWrites() const;
  // False when the file this run wrote last was replaced or removed by someone else since (two
  // runs on one output: the other one's schedule is on disk now).
  bool stillOnDisk() const;
  double best() const;         // the best valid schedule offered (written or pending)
  double writtenBest() const;  // the latency of the schedule on disk, -1 if none
  bool hasBest() const;
  bool inPlace() const { return in_place_; }  // written once, at the end (OutputTarget::writeOnce)
  bool inMemory() const { return memory_; }   // no file: the empty path
  int writes() const { return writes_; }
  double firstWriteTime() const { return first_write_s_; }
  // Seconds to keep free before the deadline for the end of a search: a worker's step that cannot
  // be interrupted (an evaluator rebuild costs about two full evaluations), the check of its last
  // improvement (one full evaluation), and the final write, from the slowest measured so far and
  // the estimate for the best. No other write can be running then: a write during the search is
  // started only if it should end before the search stops (see setStopMargin).
  double reserveSeconds() const {
    double w = std::max(write_s_.load(std::memory_order_relaxed), best_write_est_.load(std::memory_order_relaxed));
    return 3 * eval_s_.load(std::memory_order_relaxed) + w;
  }
  // How long before the deadline a search must stop: the configured margin, or 1.5x the reserve.
  double stopMargin(double margin_s) const { return std::max(margin_s, 1.5 * reserveSeconds() + 0.01); }
  // The search's configured stop margin (search.margin_s; 0 until set): every write but the first
  // and the final one is started only if it should end before deadline - stopMargin(margin_s),
  // so that none is running when the search stops (the best found by then waits for the final
  // write). Schedules with explicit orders on huge tile grids take about a second to write.
  void setStopMargin(double margin_s) { stop_margin_s_ = margin_s; }

 private:
  // Writes the best; false (error recorded and reported) if the write failed.
  // `final`: the last write of the run (a failure is reported by the caller, not as a warning).
  bool writeLocked(double now_s, double grace_s = 0, bool final = false);
  // The best becomes the written one (after a write, or at once in memory).
  bool markWrittenLocked(double now_s);
  // Makes `s` (evaluated as `ev`) the best, writes it if due; returns its sequence number.
  long acceptLocked(const Schedule& s, const Evaluation& ev, double now_s, bool force_write);
  bool dueLocked(double now_s) const;
  double interval() const;  // the current write throttle
  // Estimated seconds to serialise and write the best schedule (from its size and the slowest
  // measured seconds per byte).
  double estimateWriteLocked() const;
  bool fitsLocked(double grace_s = 0) const;
  bool fitsBeforeStopLocked() const;  // fitsLocked before the search's stop point
  // What `read()` returns, read under the lock (the getters above).
  template <class Read>
  auto locked(Read read) const {
    std::lock_guard<std::mutex> lk(mu_);
    return read();
  }
  const Problem& p_;
  ModelOptions m_;
  OutputTarget target_;
  double min_interval_;
  const Deadline* dl_;
  bool in_place_ = false;
  bool memory_ = false;
  double stop_margin_s_ = 0;
  OnBest on_best_;
  LogSink log_;
  std::mutex hook_mu_;   // one on-best call at a time
  long best_seq_ = 0;    // bests accepted (under mu_)
  long hooked_seq_ = 0;  // the last one the hook was called with (under hook_mu_)
  mutable std::mutex mu_;
  Schedule best_;
  std::vector<double> best_lat_;
  double best_total_ = -1, written_total_ = -1;
  bool pending_ = false;
  bool retry_ = true;  // a failed write is retried once a better schedule comes (or by the final flush)
  std::string write_error_;
  int failed_writes_ = 0;
  double last_write_s_ = -1e9;
  double first_write_s_ = -1;
  int writes_ = 0;
  double sec_per_byte_ = 5e-9;                  // slowest measured, at least 5 ns/byte (serialise + write + fsync)
  std::atomic<double> eval_s_{0}, write_s_{0};  // slowest full evaluation / write so far
  std::atomic<double> best_write_est_{0};       // estimated write time of the best schedule
};

}  // namespace mlsys
