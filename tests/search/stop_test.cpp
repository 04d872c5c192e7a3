// Time limits and stop requests without wall-clock slack: Deadline on a FakeClock, the run's
// StopSource, StopPolicy, and whole solve() runs whose clock moves by a fixed step at every
// reading (so a run ends after a known amount of *its own* time, whatever the machine's load).
#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <sstream>
#include <thread>

#include "cost/model/problem.h"
#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"
#include "engine/base/deadline.h"
#include "engine/construct/construct.h"
#include "engine/generate/generator.h"
#include "engine/io/config.h"
#include "engine/io/output.h"
#include "engine/search/run_state.h"
#include "engine/search/solve.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

TEST(Deadline, FollowsItsClock) {
  FakeClock clock;
  Deadline d(&clock);
  EXPECT_EQ(d.elapsed(), 0);
  EXPECT_EQ(d.fraction(), 0) << "no budget yet";
  EXPECT_FALSE(d.expired());
  d.setBudget(10);
  clock.advance(4);
  EXPECT_DOUBLE_EQ(d.elapsed(), 4);
  EXPECT_DOUBLE_EQ(d.remaining(), 6);
  EXPECT_DOUBLE_EQ(d.total(), 10);
  EXPECT_DOUBLE_EQ(d.fraction(), 0.4);
  EXPECT_FALSE(d.expired());
  clock.advance(6);
  EXPECT_TRUE(d.expired());
  clock.advance(5);
  EXPECT_DOUBLE_EQ(d.fraction(), 1) << "clamped";
  EXPECT_DOUBLE_EQ(d.remaining(), -5);
}

TEST(Deadline, BudgetsBeyondTheClockMeanNoDeadline) {
  FakeClock clock;
  Deadline d(&clock);
  d.setBudget(2e9);
  clock.advance(1e6);
  EXPECT_FALSE(d.expired());
  EXPECT_EQ(d.remaining(), 1e18);
  EXPECT_EQ(d.fraction(), 0);
}

TEST(Deadline, SteppingClockMovesAtEveryReading) {
  FakeClock clock(0.25);
  Deadline d(&clock);  // one reading: the start
  d.setBudget(1);
  EXPECT_DOUBLE_EQ(d.elapsed(), 0.25);
  EXPECT_DOUBLE_EQ(d.elapsed(), 0.5);
  EXPECT_FALSE(d.expired());  // reads 0.75
  EXPECT_TRUE(d.expired());   // reads 1.0
}

TEST(Deadline, StopRequestExpiresItAndItsChildren) {
  FakeClock clock;
  StopSource stop;
  Deadline d(&clock, &stop);
  d.setBudget(100);
  clock.advance(10);
  const Deadline child = d.child(5);
  EXPECT_DOUBLE_EQ(child.elapsed(), 0) << "a child starts when it is made";
  EXPECT_DOUBLE_EQ(child.remaining(), 5);
  clock.advance(5);
  EXPECT_TRUE(child.expired()) << "the child has its own budget";
  EXPECT_FALSE(d.expired());
  const Deadline other = d.child(50);
  EXPECT_FALSE(other.expired());
  EXPECT_FALSE(d.stopToken().stopRequested());
  stop.request(SIGTERM);
  EXPECT_TRUE(d.expired());
  EXPECT_TRUE(other.expired()) << "a child shares its parent's stop source";
  EXPECT_TRUE(d.stopToken().stopRequested());
  EXPECT_EQ(d.stopSignal(), SIGTERM);
  EXPECT_EQ(other.stopSignal(), SIGTERM);
  stop.reset();
  EXPECT_FALSE(d.expired());
  EXPECT_EQ(d.stopSignal(), 0);
}

TEST(StopToken, DefaultNeverStopsAndSourceMarksResults) {
  StopToken none;
  EXPECT_FALSE(none.stopRequested());
  EXPECT_EQ(none.signal(), 0);
  StopSource s;
  StopToken t = s.token();
  EXPECT_FALSE(t.stopRequested());
  EXPECT_FALSE(s.resultExists());
  s.markResultExists();
  EXPECT_TRUE(s.resultExists());
  s.request();  // a stop by other means than a signal
  EXPECT_TRUE(t.stopRequested());
  EXPECT_EQ(t.signal(), 0);
}

// The evaluator abandons a long evaluation on a stop request (checked every 64 subgraphs).
TEST(StopToken, AbandonsAFullEvaluation) {
  const Problem p = generateProblem("random", 200, 1);
  const Schedule s = quickSchedule(p, {});
  ASSERT_GE(s.subgraphs.size(), 64u) << "the token is checked every 64 subgraphs";
  StopSource stop;
  Evaluation ev = evaluateSchedule(p, s, {}, CostMethod::Auto, stop.token());
  EXPECT_FALSE(ev.interrupted);
  stop.request(SIGINT);
  ev = evaluateSchedule(p, s, {}, CostMethod::Auto, stop.token());
  EXPECT_TRUE(ev.interrupted);
  EXPECT_FALSE(ev.valid);
  EXPECT_EQ(ev.rule, Rule::Interrupted);
}

// StopPolicy: a stop request, proven optimality, --max-evals, or the deadline less the writer's
// stop margin; fraction() from the search's own start.
struct PolicyFixture {
  FakeClock clock;
  StopSource stop;
  Deadline dl{&clock, &stop};
  Problem p = parseProblemFile(test::instancePath("examples/ex1.json"));
  OutputWriter out{p, {}, test::tempPath("stop_policy_out.json"), 0.0, &dl};
  RunStats stats;
  // A 10 s budget on the fake clock.
  PolicyFixture() { dl.setBudget(10); }
  StopPolicy policy(double margin_s, int64_t max_evals) const { return {dl, out, stats, margin_s, max_evals}; }
};

TEST(StopPolicy, StopsAtTheDeadlineLessTheMargin) {
  PolicyFixture f;
  f.clock.advance(2);
  const StopPolicy policy = f.policy(0.5, 0);
  EXPECT_FALSE(policy.byEvaluations());
  EXPECT_FALSE(policy.stopNow());
  EXPECT_DOUBLE_EQ(policy.fraction(), 0) << "counted from the search's start, not the process's";
  f.clock.advance(4);
  EXPECT_DOUBLE_EQ(policy.fraction(), 0.5);
  f.clock.advance(3.4);  // 0.6 s left: above the 0.5 s margin
  EXPECT_FALSE(policy.stopNow());
  f.clock.advance(0.2);  // 0.4 s left
  EXPECT_TRUE(policy.stopNow());
}

TEST(StopPolicy, StopsOnARequestAndOnOptimality) {
  PolicyFixture f;
  const StopPolicy policy = f.policy(0.1, 0);
  EXPECT_FALSE(policy.stopNow());
  f.stats.optimal.store(true);
  EXPECT_TRUE(policy.stopNow());
  f.stats.optimal.store(false);
  EXPECT_FALSE(policy.stopNow());
  f.stop.request(SIGHUP);
  EXPECT_TRUE(policy.stopNow());
}

TEST(StopPolicy, MaxEvalsKeepsTheClock) {
  PolicyFixture f;
  const StopPolicy policy = f.policy(0.1, 100);
  EXPECT_TRUE(policy.byEvaluations());
  f.stats.countEvaluations(-1, 50);
  EXPECT_DOUBLE_EQ(policy.fraction(), 0.5) << "by evaluations, not time";
  EXPECT_FALSE(policy.stopNow());
  f.clock.advance(9.95);
  EXPECT_TRUE(policy.stopNow()) << "whichever limit comes first: the clock";
  f.clock.advance(-9.95);
  EXPECT_FALSE(policy.stopNow());
  f.stats.countEvaluations(-1, 50);
  EXPECT_TRUE(policy.stopNow()) << "whichever limit comes first: the evaluations";
  EXPECT_DOUBLE_EQ(policy.fraction(), 1);
}

// --target and --stall-seconds: the flags Progress sets (target reached, time of the last
// improvement) stop the policy, on the fake clock.
TEST(StopPolicy, StopsAtTheTargetAndAfterAStall) {
  PolicyFixture f;
  const StopPolicy policy = f.policy(0.1, 0);
  f.stats.stall_s = 2;
  f.stats.last_improvement_s = f.dl.elapsed();
  f.clock.advance(1.99);
  EXPECT_FALSE(policy.stopNow());
  f.stats.last_improvement_s = f.dl.elapsed();  // an improvement at 1.99 s
  f.clock.advance(1.99);
  EXPECT_FALSE(policy.stopNow()) << "1.99 s since the last improvement";
  f.clock.advance(0.01);
  EXPECT_TRUE(policy.stopNow()) << "2 s without an improvement";
  f.stats.stall_s = -1;
  EXPECT_FALSE(policy.stopNow()) << "off";
  f.stats.target_hit.store(true);
  EXPECT_TRUE(policy.stopNow());
}

struct Row {
  double seconds;
  std::string tag;
  double latency;
};

std::vector<Row> traceRows(const std::string& path) {
  std::istringstream in(test::readText(path));
  std::string line;
  std::vector<Row> rows;
  std::getline(in, line);
  EXPECT_EQ(line, "seconds,worker,latency");
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '#') continue;  // `# instance: NAME`
    const size_t a = line.find(','), b = line.rfind(',');
    if (a == std::string::npos || b == a) {
      ADD_FAILURE() << "malformed row: " << line;
      continue;
    }
    rows.push_back({std::stod(line.substr(0, a)), line.substr(a + 1, b - a - 1), std::stod(line.substr(b + 1))});
  }
  return rows;
}

SolveOptions inProcessOptions(const std::string& name, int threads) {
  SolveOptions opt;
  opt.out = test::tempPath(name + ".json");
  opt.trace = test::tempPath(name + ".csv");
  opt.threads = threads;
  opt.quiet = true;
  // These runs must last until their deadline or a signal: without the whole-space certificate,
  // with which the LNS worker proves ex5 optimal in milliseconds and ends the run.
  opt.set = {"search.exact_full_space=false"};
  return opt;
}

// A whole run on a clock that moves 20 us at every reading: it covers its budget (1 s of its own
// time) and ends inside it, whatever the machine's load (the old wall-clock version of this check
// failed under load).
TEST(SolveClock, RunEndsInsideItsBudgetOnItsOwnClock) {
  const Problem p = parseProblemFile(test::instancePath("examples/ex5.json"));
  FakeClock clock(20e-6);
  StopSource stop;
  Deadline dl(&clock, &stop);
  SolveOptions opt = inProcessOptions("stop_clock_run", 2);
  opt.seconds = 1;
  const SolveOutcome r = solve(p, opt, dl, RunLog(dl, true));
  ASSERT_TRUE(r.searched);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stop_reason, StopReason::Deadline) << "ex5 is not proven optimal";
  EXPECT_GT(r.search.evaluations, 0);
  const double end = dl.elapsed();
  EXPECT_LE(end, 1.0) << "the run ended past its budget on its own clock";
  const std::vector<Row> rows = traceRows(opt.trace);
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows.front().tag, "first");
  EXPECT_EQ(rows.back().tag, "end");
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_GE(rows[i].seconds, rows[i - 1].seconds) << "row " << i;
  EXPECT_GT(rows.back().seconds, 0.5) << "the run stopped long before its deadline (margin 0.15 s)";
  EXPECT_LE(rows.back().seconds, end + 0.5e-4) << "(rows print 4 decimals, rounded)";
  Evaluation ev = evaluateSchedule(p, parseScheduleFile(opt.out, p), {});
  ASSERT_TRUE(ev.valid) << ev.reason;
  EXPECT_EQ(ev.total, rows.back().latency) << "the end row holds the latency on disk";
}

// A stop request ends a run whose clock never moves (it would never reach its deadline): the
// best is written, the reason is the signal, and the trace's end row is at the moment of the stop.
TEST(SolveClock, StopRequestEndsARunThatNeverReachesItsDeadline) {
  const Problem p = parseProblemFile(test::instancePath("examples/ex5.json"));
  FakeClock clock;
  StopSource stop;
  Deadline dl(&clock, &stop);
  SolveOptions opt = inProcessOptions("stop_clock_signal", 2);
  opt.seconds = 30;
  SolveOutcome r;
  std::thread run([&] { r = solve(p, opt, dl, RunLog(dl, true)); });
  // Wait for the first schedule (an event, not a time window: the CTest timeout bounds a hang).
  while (!stop.resultExists()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  clock.advance(0.75);
  stop.request(SIGTERM);
  run.join();
  ASSERT_TRUE(r.searched);
  EXPECT_EQ(r.stop_reason, StopReason::Signal);
  EXPECT_GT(r.written_best, 0);
  const std::vector<Row> rows = traceRows(opt.trace);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.back().tag, "end");
  EXPECT_DOUBLE_EQ(rows.back().seconds, 0.75) << "the end row is written at the stop, on the run's clock";
  Evaluation ev = evaluateSchedule(p, parseScheduleFile(opt.out, p), {});
  ASSERT_TRUE(ev.valid) << ev.reason;
  EXPECT_EQ(ev.total, r.written_best);
}

// A run whose first schedule already meets --target ends without a search, stop reason target;
// a run with --stall-seconds on a clock that moves 20 us per reading ends once its own time
// since the last improvement reaches it, long before its 30 s budget, stop reason stall.
TEST(SolveClock, TargetAndStallEndTheRunWithTheirReasons) {
  const Problem p = parseProblemFile(test::instancePath("examples/ex5.json"));
  // A 30 s run on a clock that moves 20 us per reading; `set` adds the stop criterion.
  auto run = [&](const std::string& name, const std::function<void(SolveOptions&)>& set, double& ended) {
    FakeClock clock(20e-6);
    Deadline dl(&clock);
    SolveOptions opt = inProcessOptions(name, 2);
    opt.seconds = 30;
    set(opt);
    const SolveOutcome r = solve(p, opt, dl, RunLog(dl, true));
    ended = dl.elapsed();
    return r;
  };
  double ended = 0;
  const SolveOutcome t = run(
      "stop_target", [](SolveOptions& o) { o.target = 1e12; }, ended);
  ASSERT_TRUE(t.searched);
  EXPECT_EQ(t.stop_reason, StopReason::Target);
  EXPECT_EQ(t.search.evaluations, 0) << "the first schedule meets the target: no search";
  EXPECT_LE(t.written_best, 1e12);
  const SolveOutcome s = run(
      "stop_stall", [](SolveOptions& o) { o.stall_s = 0.5; }, ended);
  ASSERT_TRUE(s.searched);
  EXPECT_EQ(s.stop_reason, StopReason::Stall);
  EXPECT_TRUE(s.search.stalled);
  EXPECT_LT(ended, 29.0) << "the stall ended the run, not the budget";
  EXPECT_GE(ended - s.best_found_s, 0.5) << "it stopped only after 0.5 s of its own time without improving";
}

}  // namespace
}  // namespace mlsys
