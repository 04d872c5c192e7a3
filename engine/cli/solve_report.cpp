// The end of `mlsys solve`: the summary on stderr (best latency, writes, evaluations, the table of
// move kinds), the --stats JSON, and the exit code.
#include <cmath>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "cost/model/json_util.h"
#include "cost/model/number_format.h"
#include "engine/cli/commands.h"
#include "engine/cli/json_out.h"
#include "engine/io/config_keys.h"
#include "engine/io/files.h"

namespace mlsys {

namespace {

// The last line of a run stopped by a signal, even with --quiet: it explains the exit code 128+N.
void logSignalStop(const Deadline& deadline, int sig, bool written) {
  RunLog(deadline, false)(
      fmt::format("stopped by signal {} ({}); {}", sig, strsignal(sig),
                  written ? "the best schedule is on disk" : "before the first schedule was written; nothing written"));
}

}  // namespace

int reportSolve(const Problem& p, const SolveOptions& opt, const std::string& stats, const Deadline& deadline,
                const RunLog& log, const SolveOutcome& o) {
  const int sig = deadline.stopSignal();
  if (!o.searched) {
    if (sig && o.exit_code == 128 + sig) logSignalStop(deadline, sig, false);
    return o.exit_code;
  }
  const SearchResult& res = o.search;
  bool failed = false;
  double el = deadline.elapsed();
  const long evalsPerS = std::lround(res.evaluations / std::max(1e-9, el));  // the log and --stats alike
  if (!opt.quiet) {
    log(fmt::format(
        "done ({}): best latency {}, lower bound {}, gap {}{}; found at {} s; {} writes; {} evaluations ({}/s)",
        stopReasonName(o.stop_reason), humanLatency(o.written_best),
        o.lower_bound > 0 ? humanLatency(o.lower_bound) : std::string(o.bound_violation ? "dropped" : "-"),
        o.lower_bound > 0 ? gapText(o.written_best, o.lower_bound) : std::string("unknown"),
        o.optimal ? ", optimal" : "", formatDouble(std::round(o.best_found_s * 1000) / 1000), o.writes,
        humanCount(res.evaluations), humanCount(evalsPerS)));
    // The moves that ran and the workers (none when the first schedule was proven at once).
    std::string table;
    for (const auto& [name, m] : res.moves)
      if (m.evaluations > 0)
        table += fmt::format("  {:<12} {:>11} {:>10} {:>10} {:>9}\n", name, humanCount(m.evaluations),
                             humanCount(m.valid), humanCount(m.applied), humanCount(m.improvements));
    if (!table.empty()) table = "  move           evaluated      valid    applied  improved\n" + table;
    if (res.evaluations > 0) {
      table += "  worker  kind   evaluated\n";
      for (size_t i = 0; i < res.workers.size(); ++i)
        table += fmt::format("  {:<7} {:<5} {:>10}\n", i, workerKindName(res.workers[i].kind),
                             humanCount(res.workers[i].evaluations));
    }
    if (!table.empty()) emitLine(log.sink(), table.substr(0, table.size() - 1));
  }
  if (!stats.empty()) {
    SolveStats s;
    s.instance = p.name;
    s.best_latency = o.written_best;
    s.first_write_s = o.first_write_s;
    s.best_found_s = o.best_found_s;
    s.on_disk = o.on_disk;
    s.write_error = o.write_error;
    s.elapsed_s = el;
    s.evaluations = res.evaluations;
    s.evals_per_s = static_cast<double>(evalsPerS);
    s.writes = o.writes;
    s.threads = o.threads;
    s.workers = res.workers;
    s.seed = opt.seed;
    s.lower_bound = o.lower_bound;
    s.gap = gapOf(o.written_best, o.lower_bound);
    s.optimal = o.optimal;
    s.bound_violation = o.bound_violation;
    s.stop_reason = stopReasonName(o.stop_reason);
    s.model = o.model;
    s.version = MLSYS_VERSION;
    s.config = opt.config;
    if (opt.resolved) s.non_default = nonDefaultKeys(*opt.resolved);
    s.set = opt.set;
    try {
      writeFileAtomic(stats, statsJson(s));
    } catch (const std::exception& e) {
      std::cerr << "mlsys: error: --stats: " << e.what() << "\n";
      failed = true;
    }
  }
  if (!o.write_error.empty()) {
    // The search went on after a failed write; its best never reached the file.
    std::cerr << "mlsys: error: the best schedule (latency " << humanLatency(o.best)
              << ") is not on disk: " << o.write_error
              << (o.written_best >= 0 ? "; the file holds an earlier one (latency " + humanLatency(o.written_best) + ")"
                                      : "")
              << "\n";
    failed = true;
  }
  if (!o.trace_error.empty()) {
    std::cerr << "mlsys: error: --trace: " << o.trace_error << "\n";
    failed = true;
  }
  // Nothing may be printed after this line.
  if (sig) logSignalStop(deadline, sig, o.written_best >= 0 && o.write_error.empty());
  if (failed) return 1;
  return sig ? 128 + sig : 0;
}

}  // namespace mlsys
