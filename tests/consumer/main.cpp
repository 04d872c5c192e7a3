// A program outside the tree that uses mlsys as a library (tests/consumer/*/CMakeLists.txt build
// it against the installed package and through add_subdirectory): it reads a problem, bounds it,
// solves it in memory for half a second (printing each new best from the callback), checks the
// result with the evaluator and writes it.
#include <cstdio>
#include <fstream>

#include "cost/bound/bound.h"
#include "cost/model/problem.h"
#include "cost/pricing/evaluator.h"
#include "engine/search/solve.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: consumer PROBLEM.json OUT.json\n");
    return 2;
  }
  const mlsys::Problem p = mlsys::parseProblemFile(argv[1]);
  const double bound = mlsys::lowerBound(p, {}).value();
  mlsys::SolveOptions opt;  // no `out`: in memory
  opt.seconds = 0.5;
  opt.threads = 1;
  opt.quiet = true;
  opt.on_improvement = [](const mlsys::Improvement& imp) {
    std::printf("%.3f s: %.1f (%s)\n", imp.seconds, imp.latency, imp.found_by.c_str());
    return true;  // false would stop the run
  };
  const mlsys::SolveOutcome r = mlsys::solve(p, opt);
  const mlsys::Evaluation ev = mlsys::evaluateSchedule(p, r.schedule, {});
  std::ofstream(argv[2]) << mlsys::scheduleToJson(r.schedule, p, r.subgraph_latencies);
  std::printf("%s: bound %.1f, solved %.1f (gap %.2f%%, stop %s), valid %d\n", p.name.c_str(), bound, r.best,
              100 * r.gap, mlsys::stopReasonName(r.stop_reason), ev.valid ? 1 : 0);
  return ev.valid && ev.total == r.best && r.best >= bound * (1 - 1e-9) ? 0 : 1;
}
