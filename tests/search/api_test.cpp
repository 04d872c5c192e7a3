// solve() as a library call (engine/search/solve.h): in memory, with a callback, a stop source, a
// log sink and an in-memory warm start; the CLI's path is tested in tests/cli.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cost/pricing/evaluator.h"
#include "engine/generate/generator.h"
#include "engine/search/solve.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {
using test::instancePath;
using test::tempPath;

Problem ex5() { return parseProblemFile(instancePath("examples/ex5.json")); }

SolveOptions quickOptions(double seconds = 0.5) {
  SolveOptions o;
  o.seconds = seconds;
  o.threads = 1;
  o.quiet = true;
  return o;
}

TEST(Api, SolvesInMemoryWithoutTouchingAFile) {
  const Problem p = ex5();
  const std::filesystem::path dir = tempPath("api-cwd");
  std::filesystem::create_directories(dir);
  const std::filesystem::path old = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  SolveOutcome r = solve(p, quickOptions());
  std::filesystem::current_path(old);
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "an in-memory solve wrote a file";
  ASSERT_GT(r.best, 0);
  const Evaluation ev = evaluateSchedule(p, r.schedule, {});
  ASSERT_TRUE(ev.valid) << ev.reason;
  EXPECT_DOUBLE_EQ(ev.total, r.best);
  ASSERT_EQ(r.subgraph_latencies.size(), r.schedule.subgraphs.size());
  EXPECT_NEAR(r.best, 6734.4, 1e-6);  // the best known (the README's quick start)
  // One thread runs the LNS worker's portfolio after its beam (beam.then: auto), whose whole-graph
  // exact solve may prove ex5 optimal before the budget ends.
  EXPECT_TRUE(r.stop_reason == StopReason::Deadline || r.stop_reason == StopReason::Optimal);
  EXPECT_GT(r.lower_bound, 0);
  EXPECT_DOUBLE_EQ(r.gap, (r.best - r.lower_bound) / r.best);
}

TEST(Api, CallbackSeesEveryBestInOrderAndCanStopTheRun) {
  const Problem p = parseProblemFile(instancePath("examples/ex4.json"));
  std::vector<double> seen;
  std::vector<std::string> who;
  SolveOptions o = quickOptions(5);
  o.on_improvement = [&](const Improvement& imp) {
    EXPECT_TRUE(evaluateSchedule(p, imp.schedule, {}).valid);
    seen.push_back(imp.latency);
    who.push_back(imp.found_by);
    return false;  // stop at the first
  };
  SolveOutcome r = solve(p, o);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(who[0], "first");
  EXPECT_EQ(r.stop_reason, StopReason::Callback);
  EXPECT_LT(r.seconds, 4.0);

  seen.clear();
  o.on_improvement = [&](const Improvement& imp) {
    seen.push_back(imp.latency);
    return true;
  };
  o.seconds = 0.5;
  r = solve(ex5(), o);
  ASSERT_GE(seen.size(), 2u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_LT(seen[i], seen[i - 1]);
  EXPECT_DOUBLE_EQ(seen.back(), r.best);
}

// The callback's `bound` is the bound at that moment: 0 before it is computed, then the static
// bound, then what the exact solver proves (shared-weight-8-s3: 25,335 over a static 24,266),
// which the exact solver's schedule is handed over with.
TEST(Api, CallbackSeesTheBoundAsItRises) {
  const Problem p = generateProblem("shared-weight", 8, 3);
  SolveOptions o = quickOptions(60);
  o.exact = true;
  std::vector<std::pair<std::string, double>> seen;
  o.on_improvement = [&](const Improvement& imp) {
    seen.push_back({imp.found_by, imp.bound});
    return true;
  };
  SolveOutcome r = solve(p, o);
  ASSERT_EQ(r.stop_reason, StopReason::Optimal) << stopReasonName(r.stop_reason);
  EXPECT_NEAR(r.lower_bound, 25335, 1e-3);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen.front().second, 0);  // the first schedule comes before the bound
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].second, seen[i - 1].second);
  ASSERT_EQ(seen.back().first, "exact");
  EXPECT_NEAR(seen.back().second, r.lower_bound, 1e-3) << "the exact solver's best did not see its proof";
}

TEST(Api, BadOptionsAreNamedBeforeAnySearch) {
  const Problem p = ex5();
  auto message = [&](SolveOptions o) {
    try {
      solve(p, o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SolveOptions o = quickOptions();
  o.seconds = 0;
  EXPECT_NE(message(o).find("SolveOptions::seconds"), std::string::npos) << message(o);
  o = quickOptions();
  o.threads = -2;
  EXPECT_NE(message(o).find("SolveOptions::threads"), std::string::npos) << message(o);
  o = quickOptions();
  o.stall_s = 0;
  EXPECT_NE(message(o).find("SolveOptions::stall_s"), std::string::npos) << message(o);
  o = quickOptions();
  o.max_evals = 0;
  EXPECT_NE(message(o).find("SolveOptions::max_evals"), std::string::npos) << message(o);
}

TEST(Api, CallbackExceptionStopsTheRunAndIsRethrown) {
  const Problem p = ex5();
  SolveOptions o = quickOptions(5);
  o.on_improvement = [](const Improvement&) -> bool { throw std::runtime_error("from the callback"); };
  EXPECT_THROW(solve(p, o), std::runtime_error);
}

TEST(Api, StopSourceFromAnotherThreadEndsTheRunWithItsBest) {
  // A graph the run does not prove within the test: only the stop ends it early.
  const Problem p = parseProblemFile(instancePath("generated/random-30.json"));
  StopSource stop;
  SolveOptions o = quickOptions(30);
  o.stop = &stop;
  std::atomic<bool> first{false};
  o.on_improvement = [&](const Improvement&) {
    first = true;
    return true;
  };
  std::thread t([&] {
    while (!first) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.request();
  });
  SolveOutcome r = solve(p, o);
  t.join();
  EXPECT_LT(r.seconds, 10.0);
  ASSERT_GT(r.best, 0);
  EXPECT_TRUE(evaluateSchedule(p, r.schedule, {}).valid);
  EXPECT_EQ(r.stop_reason, StopReason::Stopped) << stopReasonName(r.stop_reason);
}

TEST(Api, LogSinkGetsTheLinesAndStderrNone) {
  const Problem p = ex5();
  SolveOptions o = quickOptions();
  o.quiet = false;
  std::mutex mu;
  std::vector<std::string> lines;
  o.log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lk(mu);
    lines.push_back(line);
  };
  testing::internal::CaptureStderr();
  solve(p, o);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "");
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("mlsys "), std::string::npos) << lines[0];
  for (const std::string& l : lines) EXPECT_EQ(l.find('\n'), std::string::npos) << l;
}

TEST(Api, InMemoryWarmStartIsTheFirstBest) {
  const Problem p = ex5();
  const Schedule init = parseScheduleFile(instancePath("examples/ex5b.schedule.json"), p);
  const double initLat = evaluateSchedule(p, init, {}).total;
  SolveOptions o = quickOptions();
  o.init_schedule = init;
  std::vector<double> seen;
  o.on_improvement = [&](const Improvement& imp) {
    seen.push_back(imp.latency);
    return true;
  };
  solve(p, o);
  ASSERT_FALSE(seen.empty());
  EXPECT_DOUBLE_EQ(seen[0], initLat);

  // An invalid one: a warning in the log, and the run goes on from the usual first schedule.
  Schedule bad = init;
  bad.subgraphs[0].ops.clear();
  o.init_schedule = bad;
  o.quiet = false;
  std::vector<std::string> lines;
  o.log = [&](const std::string& line) { lines.push_back(line); };
  o.on_improvement = nullptr;
  SolveOutcome r = solve(p, o);
  EXPECT_GT(r.best, 0);
  bool warned = false;
  for (const std::string& l : lines) warned = warned || l.find("not a valid schedule") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace mlsys
