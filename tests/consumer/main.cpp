// A program outside the tree that uses mlsys as a library (tests/consumer/*/CMakeLists.txt build
// it against the installed package and through add_subdirectory): it reads a problem, bounds it,
// solves it for a fraction of a second in memory and checks the schedule with the evaluator.
#include <cstdio>

#include "cost/bound.h"
#include "cost/evaluator.h"
#include "cost/problem.h"
#include "engine/base/deadline.h"
#include "engine/search/solve.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: consumer PROBLEM.json OUT.json\n");
    return 2;
  }
  const mlsys::Problem p = mlsys::parseProblemFile(argv[1]);
  const double bound = mlsys::lowerBound(p, {}).value();
  mlsys::SolveOptions opt;
  opt.out = argv[2];
  opt.seconds = 0.5;
  opt.threads = 1;
  opt.quiet = true;
  mlsys::Deadline dl;
  const mlsys::SolveOutcome r = mlsys::solve(p, opt, dl, mlsys::RunLog(dl, true));
  const mlsys::Evaluation ev = mlsys::evaluateSchedule(p, mlsys::parseScheduleFile(argv[2], p), {});
  std::printf("%s: bound %.1f, solved %.1f, valid %d\n", p.name.c_str(), bound, r.best, ev.valid ? 1 : 0);
  return ev.valid && ev.total >= bound * (1 - 1e-9) ? 0 : 1;
}
