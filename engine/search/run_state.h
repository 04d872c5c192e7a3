// The state a search run shares between its worker threads, in three parts:
//   StopPolicy  when the run stops (a signal, --max-evals, or the deadline minus the output
//               writer's stop margin) and how far along it is (the annealing temperature);
//   RunStats    counters: evaluations, accepted moves, per move kind, best per worker kind;
//   Progress    the best so far: a worker hands an improvement over and goes on; the monitor
//               thread re-checks it with the full evaluator (through the output writer, which
//               writes it) and records it (--trace file, TraceFile; the progress line).
// SearchRun bundles them with the problem, the config and the elite pool; every worker gets it.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/base/deadline.h"
#include "engine/base/limits.h"
#include "engine/base/log_sink.h"
#include "engine/base/worker_kind.h"
#include "engine/io/config.h"
#include "engine/io/output.h"
#include "engine/search/bound_guard.h"
#include "engine/search/pool.h"

namespace mlsys {

struct MoveStats {
  long evaluations = 0, valid = 0, applied = 0, improvements = 0;
};

struct WorkerEvaluations {
  WorkerKind kind = WorkerKind::BeamThen;
  long evaluations = 0;
};

// What a search run reports at its end.
struct SearchResult {
  long evaluations = 0;
  // Per worker thread (index = thread): its kind as configured (beam, sa, lns) and the
  // evaluations it made; they add up to `evaluations` less any made outside the workers.
  std::vector<WorkerEvaluations> workers;
  double best_found_s = 0;  // when the final best was found
  std::map<std::string, MoveStats> moves;
  std::map<std::string, double> best_by_kind;  // worker kind (or constructor) -> best latency it reached
  bool optimal = false;                        // stopped because the best met the lower bound
  bool max_evals_hit = false;
  bool target_hit = false;  // --target reached (the run stops)
  bool stalled = false;     // --stall-seconds without an improvement (the run stopped)
  double lower_bound = 0;   // the bound at the end (raised during the run: Progress::raiseBound)
};

class RunStats {
 public:
  std::atomic<long> evaluations{0};  // move evaluations, all workers (the --max-evals unit)
  // Counts n evaluations by worker `worker` into `evaluations` and into the worker's own
  // counter (one cache line each, so workers do not contend on it).
  void countEvaluations(int worker, long n) {
    evaluations.fetch_add(n, std::memory_order_relaxed);
    if (worker >= 0 && worker < workers_) by_worker_[worker].n.fetch_add(n, std::memory_order_relaxed);
  }
  // --max-evals: takes n evaluations out of a budget of `limit` (> 0) before they are made, and
  // counts them as countEvaluations does; false, counting nothing, when fewer than n are left.
  // Every worker takes before it prices, so a run makes at most `limit` evaluations, however
  // many threads race for the last ones. limit <= 0: no budget (counts and returns true).
  bool takeEvaluations(int worker, long n, int64_t limit) {
    if (limit > 0) return takeBudgeted(worker, n, limit);
    countEvaluations(worker, n);  // inline: the annealer's path per move without a budget
    return true;
  }
  // Before the workers start: one counter per worker.
  void setWorkers(int n) {
    workers_ = n > 0 ? n : 0;
    by_worker_ = std::make_unique<WorkerCount[]>(static_cast<size_t>(workers_));
  }
  int workers() const { return workers_; }  // setWorkers' count (0 before it)
  std::vector<long> evaluationsByWorker() const;
  std::atomic<long> accepted{0};     // applied annealing moves
  std::atomic<bool> optimal{false};  // the best meets the lower bound: the run stops
  // --target and --stall-seconds (set before the workers start; < 0: off). Progress marks the
  // target reached and the time of each improvement it checks; StopPolicy reads them.
  double target = -1, stall_s = -1;
  std::atomic<bool> target_hit{false};
  std::atomic<double> last_improvement_s{0};
  // The stall condition at `now` (seconds since the process start).
  bool stalled(double now) const {
    return stall_s > 0 && now - last_improvement_s.load(std::memory_order_relaxed) >= stall_s;
  }
  // Adds a worker's counters for one move kind (at the worker's end).
  void addMoves(const std::string& move, const MoveStats& m);
  // `who` (a worker kind or a constructor) reached latency `lat`.
  void noteBest(const std::string& who, double lat);
  std::map<std::string, MoveStats> moves() const;
  std::map<std::string, double> bestByKind() const;

 private:
  bool takeBudgeted(int worker, long n, int64_t limit);  // takeEvaluations with limit > 0
  struct alignas(64) WorkerCount {
    std::atomic<long> n{0};
  };
  std::unique_ptr<WorkerCount[]> by_worker_;
  int workers_ = 0;
  mutable std::mutex mu_;
  std::map<std::string, MoveStats> moves_;
  std::map<std::string, double> best_by_kind_;
};

class StopPolicy {
 public:
  StopPolicy(const Deadline& dl, const OutputWriter& out, const RunStats& stats, double margin_s, int64_t max_evals,
             const BoundGuard* guard = nullptr)
      : dl_(dl),
        out_(out),
        stats_(stats),
        margin_s_(margin_s),
        max_evals_(max_evals),
        start_s_(dl.elapsed()),
        guard_(guard) {}
  // A signal, the best proven optimal (it meets the lower bound), --target reached, no
  // improvement for --stall-seconds, or the budget is spent: --max-evals evaluations if given,
  // or the time up to the writer's stop margin (room to re-check and write the best),
  // whichever comes first.
  bool stopNow() const;
  // The part of the search's budget used, in [0, 1]: of the evaluations with --max-evals, else of
  // the time from the search's start (the policy's construction) to the deadline, so that a search
  // that starts late (after --exact's phase) still cools over its whole span.
  double fraction() const;
  // Seconds until stopNow() turns true by the clock (the deadline less the writer's stop margin).
  double secondsLeft() const { return dl_.remaining() - out_.stopMargin(margin_s_); }
  // The budget is --max-evals evaluations (deterministic runs), not time.
  bool byEvaluations() const { return max_evals_ > 0; }
  int64_t maxEvals() const { return max_evals_; }

 private:
  const Deadline& dl_;
  const OutputWriter& out_;
  const RunStats& stats_;
  double margin_s_;
  int64_t max_evals_;
  double start_s_;           // when the search started (seconds since the process start)
  const BoundGuard* guard_;  // the run's bound (its optimal(): the bound may rise beside the search)
};

// The --trace CSV `seconds,worker,latency`, the whole run, one row per event, each flushed as it
// is written (the trace survives a SIGKILL). The latency column is always the best so far, so it
// never rises (except `end`, see below). Rows, in time order:
//   first       the first schedule (on disk within milliseconds);
//   baseline    the best after the baseline construction (= first if the baseline did not improve);
//   exact       with --exact, the best after the exact solver, if it improved;
//   <worker>    an improvement found by the search: the worker kind or constructor that found it;
//   end         the end of the run: the latency of the schedule on disk at the last moment
//               (above the last improvement only if that one was not written, see
//               engine/cli/REFERENCE.md, "The trace").
// A run stopped before its first schedule existed leaves the header alone.
// solve() opens the file before the first schedule and hands it to the search's Progress.
// The rows solve() writes itself (the search's rows carry a worker kind or constructor name).
enum class TraceTag { First, Baseline, Exact, End };
// "first", "baseline", "exact", "end": the `worker` column of those rows (report reads them back).
inline const char* traceTagName(TraceTag t) {
  switch (t) {
    case TraceTag::First: return "first";
    case TraceTag::Baseline: return "baseline";
    case TraceTag::Exact: return "exact";
    case TraceTag::End: return "end";
  }
  return "?";
}

class TraceFile {
 public:
  // Creates (truncates) `path` and writes the header and, with an instance name, the comment line
  // `# instance: NAME` (report warns on a trace of another instance; CSV readers that skip '#'
  // lines see only the rows); throws InputError if it cannot be written.
  static std::unique_ptr<TraceFile> open(const std::string& path, const std::string& instance = "");
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  // Appends a row and flushes it. A failed write is remembered (error()), reported once on
  // stderr, and ends the run with exit code 1; it does not stop the search.
  void row(double seconds, const std::string& who, double latency);
  std::string error() const;

 private:
  explicit TraceFile(FILE* f) : f_(f) {}
  mutable std::mutex mu_;
  FILE* f_;
  std::string error_;
};

class Progress {
 public:
  // Writes improvements to `trace` (nullptr: no trace), which outlives it; its lines (incumbent,
  // bound, progress, warnings) go to `log` (stderr when empty), none but warnings when `quiet`.
  // The bound is the run's BoundGuard's (engine/search/bound_guard.h): it checks every new best.
  Progress(const Deadline& dl, OutputWriter& out, RunStats& stats, TraceFile* trace, BoundGuard& guard, bool quiet,
           LogSink log = {});
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // A worker found a schedule it believes is a new best: it is handed over (copied) and the worker
  // goes on. The monitor thread offers it to the writer, which re-checks it with the full
  // evaluator and writes it, and records it (trace line, incumbent line, time found = now). A
  // worker never waits for a full evaluation or a write (on huge tile grids they take ~0.1 s and
  // ~1 s). Only the best hand-over not yet checked is kept: a worse one is dropped at once.
  void improved(const Schedule& s, double lat, const std::string& who);
  // Checks the pending hand-over now, on the calling thread (monitor() does it as they come).
  void checkPending();
  // "warning: <text>" to the log, once per run.
  void warnOnce(const std::string& text);
  // Until `running` is 0: checks hand-overs as they come (improved), writes a best deferred by
  // the write throttle (every 20 ms), and unless `quiet` a progress line every log_interval_s;
  // then checks the last hand-over.
  void monitor(const std::atomic<int>& running, double log_interval_s, bool quiet, const ElitePool& pool);
  double bestFoundS() const;
  // The anytime bound: a sound lower bound proven during the run (e.g. by the exact solver over
  // the spec's whole space) replaces the bound when higher; logged with `who`; the run stops
  // when the best meets it. A raise above the best valid schedule is a violation (the guard's).
  void raiseBound(double bound, const std::string& who);
  BoundGuard& guard() { return guard_; }
  double bound() const;
  // Whether a part of this run can raise the bound (the exact solver on the whole graph in the
  // LNS worker): the progress table heads its column "bound" then, else "bound (static)".
  void setBoundDynamic(bool dynamic) { bound_dynamic_ = dynamic; }
  // solve -v: each progress row is followed by a detail line (the best per worker kind and
  // constructor, the share of accepted annealing moves, the elite pool's size).
  void setVerbose(bool verbose) { verbose_ = verbose; }
  std::string progressHeader() const;

 private:
  struct Handover {
    Schedule s;
    double lat = 0, found_s = 0;
    std::string who;
  };
  const Deadline& dl_;
  OutputWriter& out_;
  RunStats& stats_;
  mutable std::mutex mu_;           // best_, best_found_s_, warned_, pending_ and whole lines on stderr
  std::condition_variable handed_;  // a hand-over is pending (wakes the monitor)
  std::mutex check_mu_;             // one check at a time (pending_ is taken under mu_, checked under this)
  TraceFile* trace_;
  double best_;  // the best checked latency
  double best_found_s_ = 0;
  std::string best_who_;  // who found the best (the progress table's last column)
  bool bound_dynamic_ = false;
  BoundGuard& guard_;
  bool verbose_ = false;
  std::optional<Handover> pending_;
  std::set<std::string> warned_;
  bool quiet_;
  LogSink log_;
};

// "12.34%": (latency - bound) / latency, as MIP solvers print their gap.
std::string gapText(double latency, double bound);
double gapOf(double latency, double bound);

// A guard of SearchRun's own, for the runs without solve() (tests, tools): a base, so that it
// exists before the members that refer to it.
struct OwnedGuard {
  std::unique_ptr<BoundGuard> own_guard;
  OwnedGuard() = default;
  OwnedGuard(const Problem& p, const SearchConfig& cfg, double bound)
      : own_guard(std::make_unique<BoundGuard>(p, cfg.model)) {
    own_guard->setStatic(bound, {});
  }
};

struct SearchRun : private OwnedGuard {
  SearchRun(const Problem& problem, const SearchConfig& config, uint64_t seed_, const Deadline& deadline,
            OutputWriter& out, int64_t max_evals, TraceFile* trace, BoundGuard& guard, bool quiet, LogSink log = {})
      : p(problem),
        cfg(config),
        seed(seed_),
        dl(deadline),
        stop(deadline, out, stats, config.margin_s, max_evals, &guard),
        progress(deadline, out, stats, trace, guard, quiet, std::move(log)),
        pool(config.pool_size) {}
  // With a guard of its own holding `bound`.
  SearchRun(const Problem& problem, const SearchConfig& config, uint64_t seed_, const Deadline& deadline,
            OutputWriter& out, int64_t max_evals, TraceFile* trace, double bound, bool quiet, LogSink log = {})
      : OwnedGuard(problem, config, bound),
        p(problem),
        cfg(config),
        seed(seed_),
        dl(deadline),
        stop(deadline, out, stats, config.margin_s, max_evals, own_guard.get()),
        progress(deadline, out, stats, trace, *own_guard, quiet, std::move(log)),
        pool(config.pool_size) {}
  // With pool.isolate_first and more than one thread (call before the workers start), worker 0
  // gets a pool of its own: it reads only the elites it offered (and the start), so it runs the
  // 1-thread search; every offer still goes to the shared pool, which the other workers read.
  void isolateFirstWorker() { own0 = std::make_unique<ElitePool>(cfg.pool_size); }
  // The pool worker `id` reads (adopts and restarts from).
  ElitePool& poolOf(int id) { return id == 0 && own0 ? *own0 : pool; }
  // Worker `id` may make n more evaluations (RunStats::takeEvaluations under --max-evals): every
  // pricing of a move, a polish candidate, a beam candidate or an exact window's configuration
  // asks here first when the budget is evaluations, and stops when refused.
  bool takeEvaluations(int id, long n = 1) { return stats.takeEvaluations(id, n, stop.maxEvals()); }
  // Counts n evaluations worker `id` made in a batch without taking them one by one (an exact solve,
  // a beam pass); under --max-evals nothing, as each was taken before it was made.
  void countBatch(int id, long n) {
    if (!stop.byEvaluations()) stats.countEvaluations(id, n);
  }
  // Worker `id` offers a schedule: to the shared pool and, for an isolated worker 0, to its own.
  void offer(int id, const Schedule& s, double latency) {
    pool.offer(s, latency);
    if (id == 0 && own0) own0->offer(s, latency);
  }

  // The one elite-sharing policy: when a worker takes the pool's best instead of going on with
  // its own schedule. Every worker asks here; no worker reads the pool's best elsewhere.
  //   - adoptIfBetter, at a worker's sync points (the annealer every sa.sync_every evaluations
  //     when sa.adopt_pool_best is on; the LNS worker before every window): the pool's best,
  //     only if it improves on the worker's `mine` by more than the tolerance (improves(),
  //     engine/base/limits.h), so that equal schedules found twice do not bounce between workers;
  //   - startFromBest, at the start of a slice of the adaptive LNS worker: the pool's best
  //     whatever it is (the slice measures its yield from there), or false on an empty pool.
  // (Restarts after a stall draw from the pool at random, biased to the best: ElitePool::sample.)
  bool adoptIfBetter(int id, double mine, Schedule& out) {
    if (!improves(poolOf(id).bestLatency(), mine)) return false;
    double latency;
    if (!poolOf(id).best(out, latency)) return false;
    countAdopted(id, mine - latency);
    return true;
  }
  // What worker `id` has gained so far by adoptIfBetter (latency it did not find itself): the
  // adaptive LNS worker's slices leave it out of their yields (slices.cpp).
  double adoptedGain(int id) {
    std::lock_guard<std::mutex> lock(adoptedMutex_);
    return adopted_[id];
  }
  bool startFromBest(int id, Schedule& out, double& latency) { return poolOf(id).best(out, latency); }
  // Worker `id` took `gain` of latency from another worker's schedule: by adoptIfBetter, or by a
  // region merged into the pool's best (regions.h).
  void countAdopted(int id, double gain) {
    std::lock_guard<std::mutex> lock(adoptedMutex_);
    adopted_[id] += gain;
  }
  const Problem& p;
  const SearchConfig& cfg;
  const uint64_t seed;
  const Deadline& dl;
  RunStats stats;
  StopPolicy stop;
  Progress progress;
  ElitePool pool;                   // the elite schedules workers restart from (every worker's offers)
  std::unique_ptr<ElitePool> own0;  // worker 0's own offers, when isolated (isolateFirstWorker)

 private:
  std::mutex adoptedMutex_;
  std::map<int, double> adopted_;  // per worker: latency gained by adoptIfBetter
};

}  // namespace mlsys
