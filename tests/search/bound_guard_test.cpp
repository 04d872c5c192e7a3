// The run-time self-check of the lower bound (engine/search/bound_guard.h, issue 50 item 5): a
// wrong argument planted through the test seam (BoundArgs::test_part_scale: every part floor
// tripled) makes the bound rise above valid schedules; the run must log the internal error with
// the argument, write the problem and the schedule to the named file, drop the bound, never say
// optimal nor stop early, and report bound_violation. Debug builds abort (a death test below).
#include "engine/search/bound_guard.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cost/model/json_util.h"
#include "cost/pricing/evaluator.h"
#include "engine/search/solve.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

Problem ex5() { return parseProblemFile(test::instancePath("examples/ex5.json")); }

// A solve of ex5 with every part floor tripled (a wrong argument), its log collected.
struct PlantedRun {
  std::vector<std::string> lines;
  SolveOutcome r;
  explicit PlantedRun(const Problem& p, double seconds = 0.6) {
    SolveOptions o;
    o.seconds = seconds;
    o.threads = 1;
    o.bound_args.test_part_scale = 3;
    std::mutex mu;
    o.log = [&](const std::string& l) {
      std::lock_guard<std::mutex> lk(mu);
      lines.push_back(l);
    };
    r = solve(p, o);
  }
  std::string find(const std::string& needle) const {
    for (const std::string& l : lines)
      if (l.find(needle) != std::string::npos) return l;
    return "";
  }
};

TEST(BoundGuard, APlantedWrongArgumentIsCaughtNamedAndDropped) {
  const Problem p = ex5();
  // The honest bound is below the best known (6734.4); tripled, it is far above it.
  PlantedRun run(p);
  const SolveOutcome& r = run.r;
  ASSERT_GT(r.best, 0);
  ASSERT_TRUE(r.bound_violation.has_value());
  const BoundViolation& v = *r.bound_violation;
  EXPECT_GT(v.bound, v.latency);
  EXPECT_NE(v.argument.find("part-floors"), std::string::npos) << v.argument;
  // The line names the bound, the schedule, the argument and the file.
  const std::string line = run.find("internal error: lower bound");
  ASSERT_FALSE(line.empty());
  EXPECT_NE(line.find("part-floors"), std::string::npos) << line;
  ASSERT_FALSE(v.file.empty());
  EXPECT_NE(line.find(v.file), std::string::npos) << line;
  // The file holds the problem and a valid schedule at the latency named.
  const rapidjson::Document d = parseJsonFile(v.file, "report");
  ASSERT_TRUE(d.HasMember("problem") && d.HasMember("schedule"));
  rapidjson::StringBuffer pb, sb;
  {
    rapidjson::Writer<rapidjson::StringBuffer> w(pb);
    d["problem"].Accept(w);
    rapidjson::Writer<rapidjson::StringBuffer> w2(sb);
    d["schedule"].Accept(w2);
  }
  const Problem again = parseProblemText(pb.GetString());
  const Evaluation ev = evaluateSchedule(again, parseScheduleText(sb.GetString(), again), {});
  ASSERT_TRUE(ev.valid) << ev.reason;
  EXPECT_NEAR(ev.total, v.latency, 1e-9 * v.latency);
  std::filesystem::remove(v.file);
  // Dropped: no bound, no gap, never optimal, no early stop.
  EXPECT_EQ(r.lower_bound, 0);
  EXPECT_EQ(r.gap, 1);
  EXPECT_FALSE(r.optimal);
  EXPECT_EQ(r.stop_reason, StopReason::Deadline);
  EXPECT_TRUE(run.find("optimal: latency").empty());
}

TEST(BoundGuard, AnHonestRunReportsNoViolation) {
  SolveOptions o;
  o.seconds = 0.3;
  o.threads = 1;
  o.quiet = true;
  const SolveOutcome r = solve(ex5(), o);
  EXPECT_FALSE(r.bound_violation.has_value());
  EXPECT_GT(r.lower_bound, 0);
}

// Each subgraph against its part floor, and the exact solver's own check, by the guard directly.
TEST(BoundGuard, SubgraphBelowItsPartFloorAndExactViolations) {
  const Problem p = ex5();
  const ModelOptions m;
  SolveOptions o;
  o.seconds = 0.3;
  o.threads = 1;
  o.quiet = true;
  const SolveOutcome best = solve(p, o);
  ASSERT_GT(best.best, 0);
  {
    BoundGuard g(p, m, [](const std::string&) {});
    g.setAbortInDebug(false);
    BoundOptions bo;
    bo.args.test_part_scale = 3;  // the part floors the guard checks with are tripled
    g.setStatic(1, bo);           // a harmless total bound
    EXPECT_FALSE(g.check(best.schedule, best.best, best.subgraph_latencies));
    ASSERT_TRUE(g.violation().has_value());
    EXPECT_NE(g.violation()->argument.find("part-floors: subgraph"), std::string::npos) << g.violation()->argument;
    EXPECT_EQ(g.bound(), 0);
    EXPECT_FALSE(g.raise(1e9, "x"));  // dropped for good
    std::filesystem::remove(g.violation()->file);
  }
  {
    BoundGuard g(p, m, [](const std::string&) {});
    g.setAbortInDebug(false);
    g.setStatic(100, {});
    EXPECT_TRUE(g.check(best.schedule, best.best, best.subgraph_latencies));
    g.exactViolation("the exact solver (an LNS window)", 2, &best.schedule, best.best);
    ASSERT_TRUE(g.violation().has_value());
    EXPECT_NE(g.violation()->argument.find("lb_violations"), std::string::npos);
    EXPECT_EQ(g.bound(), 0);
    std::filesystem::remove(g.violation()->file);
  }
}

#ifndef NDEBUG
TEST(BoundGuardDeathTest, DebugBuildsAbort) {
  const Problem p = ex5();
  SolveOptions o;
  o.seconds = 0.3;
  o.threads = 1;
  o.quiet = true;
  const SolveOutcome best = solve(p, o);
  EXPECT_DEATH(
      {
        BoundGuard g(p, ModelOptions{}, [](const std::string&) {});
        g.setStatic(best.best * 2, {});
        g.check(best.schedule, best.best, best.subgraph_latencies);
      },
      "");
}
#endif

}  // namespace
}  // namespace mlsys
