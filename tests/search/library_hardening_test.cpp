// The library never crashes on what a caller hands it (issue 51, item 4): a log sink that throws
// on the monitor thread stops the run and the exception comes back from solve() (it used to
// terminate the process, rc 134), as it does from the caller's thread; a schedule with an op or
// tensor index out of range is a V1 verdict of evaluateSchedule (it was a SIGSEGV), and as an
// initial schedule it is refused with a warning.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "cost/pricing/evaluator.h"
#include "engine/search/solve.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

Problem ex5() { return parseProblemFile(test::instancePath("examples/ex5.json")); }

TEST(LibraryHardening, ALogSinkThatThrowsOnTheMonitorThreadComesBackFromSolve) {
  const Problem p = parseProblemFile(test::instancePath("generated/random-30.json"));
  SolveOptions o;
  o.seconds = 3;
  o.threads = 1;
  o.log = [](const std::string& line) {
    if (line.find("incumbent") != std::string::npos) throw std::runtime_error("sink full");
  };
  EXPECT_THROW(
      {
        try {
          solve(p, o);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "sink full");
          throw;
        }
      },
      std::runtime_error);
}

TEST(LibraryHardening, ALogSinkThatThrowsOnTheCallersThreadPropagates) {
  SolveOptions o;
  o.seconds = 0.3;
  o.threads = 1;
  o.log = [](const std::string&) { throw std::logic_error("no"); };
  EXPECT_THROW(solve(ex5(), o), std::logic_error);
}

TEST(LibraryHardening, IndicesOutOfRangeAreAVerdictNotACrash) {
  const Problem p = ex5();
  Schedule s = parseScheduleFile(test::instancePath("examples/ex5b.schedule.json"), p);
  s.subgraphs[0].ops.push_back(99);
  Evaluation ev = evaluateSchedule(p, s, {});
  EXPECT_FALSE(ev.valid);
  EXPECT_EQ(ev.rule, Rule::V1);
  EXPECT_NE(ev.reason.find("op index 99"), std::string::npos) << ev.reason;
  s.subgraphs[0].ops.pop_back();
  s.subgraphs[0].ops.push_back(-3);
  EXPECT_EQ(evaluateSchedule(p, s, {}).rule, Rule::V1);
  s.subgraphs[0].ops.pop_back();
  s.subgraphs[0].retain.push_back(1000);
  ev = evaluateSchedule(p, s, {});
  EXPECT_EQ(ev.rule, Rule::V1);
  EXPECT_NE(ev.reason.find("tensor index 1000"), std::string::npos) << ev.reason;
  // As an initial schedule: refused with a warning, the run goes on.
  SolveOptions o;
  o.seconds = 0.3;
  o.threads = 1;
  o.init_schedule = s;
  std::vector<std::string> lines;
  o.log = [&](const std::string& l) { lines.push_back(l); };
  const SolveOutcome r = solve(p, o);
  EXPECT_GT(r.best, 0);
  bool warned = false;
  for (const std::string& l : lines) warned = warned || l.find("tensor index 1000") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace mlsys
