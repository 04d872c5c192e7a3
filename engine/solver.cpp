#include "engine/solver.h"

#include <iostream>

#include "cost/json_util.h"
#include "engine/construct.h"
#include "engine/output.h"
#include "engine/search.h"

namespace mlsys {

double contestLimitSeconds(int n) {
  if (n <= 5) return 2;
  if (n <= 20) return 5;
  if (n <= 32) return 15;
  if (n <= 63) return 30;
  if (n <= 103) return 60;
  return 120;
}

double defaultBudgetSeconds(int n) {
  // Stay well inside the limit: the harness kills at the limit and machines differ.
  double lim = contestLimitSeconds(n);
  return lim <= 2 ? lim - 0.5 : lim * 0.9;
}

int solve(const Problem& p, const SolveOptions& opt, Deadline& deadline) {
  double budget = opt.seconds > 0 ? opt.seconds : defaultBudgetSeconds(p.numOps());
  deadline.setBudget(budget);
  OutputWriter out(p, opt.model, opt.out);
  auto log = [&](const std::string& s) {
    if (!opt.quiet) std::cerr << "[" << formatDouble(static_cast<double>(static_cast<long long>(deadline.elapsed() * 1000)) / 1000) << "s] " << s << "\n";
  };
  log("problem " + p.name + ": " + std::to_string(p.numOps()) + " ops, " + std::to_string(p.numTensors()) +
      " tensors; budget " + formatDouble(budget) + " s; model " + opt.model.describe());
  Schedule base = baselineSchedule(p, opt.model);
  double lat = out.offer(base, deadline.elapsed(), true);
  if (lat < 0) {
    std::cerr << "mlsys: internal error: the baseline schedule is invalid\n";
    return 1;
  }
  log("baseline written: latency " + formatDouble(lat));
  SearchResult res = runSearch(p, opt, deadline, out, base);
  out.flush();
  log("best latency " + formatDouble(out.best()) + " (" + std::to_string(out.writes()) + " writes, " +
      std::to_string(res.evaluations) + " evaluations)");
  int sig = Deadline::signal_received.load();
  return sig ? 128 + sig : 0;
}

}  // namespace mlsys
