// Hardening of `mlsys solve` at the CLI level: timely writes, colliding output paths, large
// inputs, signals (STOP/CONT, TERM, HUP, KILL, PIPE), absurd thread counts and configs whose moves
// never apply (special output files and temporary files: hardening_files_test.cpp). Every test runs the real binary
// (MLSYS_BIN) in a child process, with generous time limits; children still running at the end are killed.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <rapidjson/document.h>

#include "cost/pricing/incremental.h"
#include "tests/child_process.h"
#include "tests/test_util.h"

using namespace mlsys;
using namespace mlsys::test::child;
namespace fs = std::filesystem;

namespace {

// A problem of 200,000 ops (generated once per test binary run).
std::string bigInstance() {
  static std::string path = [] {
    std::string d = freshDir("big");
    std::string p = d + "/big.json";
    auto r = test::runMlsys({"generate", "--family", "random", "--size", "200000", "--seed", "1", "-o", p});
    return r.exit_code == 0 ? p : std::string();
  }();
  return path;
}

}  // namespace

// 1a. Every improvement reaches the file within write_interval_s (0.1 s) of being found.
// mlsys-2026-21 improves once, at ~0.08 s: whether that lands inside the throttle interval of the
// first write depends on the machine, so mlsys-2026-2 (improvements at ~5 ms) is checked too.
static void checkPromptWrites(const std::string& p) {
  SCOPED_TRACE(p);
  std::string d = freshDir("timely"), out = d + "/out.json", trace = d + "/trace.csv";
  Child c;
  spawn(c, {"solve", p, out, "--seconds", "3", "--threads", "2", "--trace", trace, "-q"}, errFile(d + "/err.txt"));
  struct Poll {
    double t, lat;
  };
  std::vector<Poll> polls;
  int unparsable = 0;  // ignored (the writes are atomic renames, so there should be none)
  for (;;) {
    bool done = c.wait(0);
    double t = secondsSince(c.start);
    if (fs::exists(out)) {
      if (auto l = latencyOfFile(out)) polls.push_back({t, *l});
      else ++unparsable;
    }
    if (done || t > 60) break;
    sleepFor(0.02);
  }
  ASSERT_TRUE(c.wait(0)) << "solve --seconds 3 still running after 60 s";
  ASSERT_EQ(c.code(), 0) << c.describe() << "\n" << test::readText(d + "/err.txt");
  auto rows = readTrace(trace);
  ASSERT_FALSE(rows.empty()) << "the trace has no improvements";
  ASSERT_FALSE(polls.empty()) << "the output was never readable";
  const double slack = 0.1 /*write_interval_s*/ + 0.35;
  int late = 0;
  std::ostringstream why;
  for (const auto& r : rows) {
    double seen = -1;
    for (const auto& pl : polls)
      if (leq(pl.lat, r.latency)) {
        seen = pl.t;
        break;
      }
    if (seen < 0 || seen > r.seconds + slack) {
      if (++late <= 5)
        why << "  improvement to " << formatNum(r.latency) << " found at " << r.seconds << " s (worker " << r.worker
            << ") was " << (seen < 0 ? std::string("never on disk") : "first on disk at " + std::to_string(seen) + " s")
            << "\n";
    }
  }
  EXPECT_EQ(late, 0) << late << " of " << rows.size() << " improvements were on disk later than found + " << slack
                     << " s (" << polls.size() << " polls, " << unparsable << " unparsable):\n"
                     << why.str();
}

TEST(HardeningCli, ImprovementsAreWrittenPromptly) {
  if (test::sharedBenchmark("mlsys-2026-21").empty()) GTEST_SKIP() << kNoBench;
  for (const char* stem : {"mlsys-2026-21", "mlsys-2026-2"})
    if (std::string p = test::sharedBenchmark(stem); !p.empty()) checkPromptWrites(p);
}

// 1b. A process stopped past its deadline still writes its best when it resumes.
static void checkStopCont(const std::string& p) {
  SCOPED_TRACE(p);
  std::string d = freshDir("stopcont"), out = d + "/out.json", trace = d + "/trace.csv";
  Child c;
  spawn(c, {"solve", p, out, "--seconds", "2", "--trace", trace}, errFile(d + "/err.txt"));
  // Stop once the baseline is done (at least 0.5 s in): a slow build (TSan) or a loaded machine
  // would otherwise stop it mid-baseline and resume it past the deadline with the baseline's
  // schedule unwritten, which is the budget wall working, not what this test is about.
  for (int i = 0; i < 2000 && test::readText(d + "/err.txt").find("] baseline:") == std::string::npos && c.running();
       ++i)
    sleepFor(0.01);
  sleepFor(std::max(0.0, 0.5 - secondsSince(c.start)));
  c.signal(SIGSTOP);
  sleepFor(2.0);
  c.signal(SIGCONT);
  ASSERT_TRUE(c.wait(60)) << "no exit within 60 s of SIGCONT";
  EXPECT_EQ(c.code(), 0) << c.describe() << "\n" << test::readText(d + "/err.txt");
  auto rows = readTrace(trace);
  ASSERT_FALSE(rows.empty()) << "the trace has no improvements";
  double best = rows[0].latency;
  for (const auto& r : rows) best = std::min(best, r.latency);
  auto l = latencyOfFile(out);
  ASSERT_TRUE(l.has_value()) << "the output is not a schedule";
  EXPECT_TRUE(same(*l, best)) << "on disk " << formatNum(*l) << ", best in the trace " << formatNum(best);
  EXPECT_EQ(evaluateExit(p, out), 0);
}

TEST(HardeningCli, StopContPastTheDeadlineWritesTheBest) {
  if (test::sharedBenchmark("mlsys-2026-21").empty()) GTEST_SKIP() << kNoBench;
  for (const char* stem : {"mlsys-2026-21", "mlsys-2026-2"})
    if (std::string p = test::sharedBenchmark(stem); !p.empty()) checkStopCont(p);
}

// A solve of the 200,000-op instance into <d>/out.json, <d> a fresh folder named `name`, with a
// budget of `seconds` on two threads.
struct LargeRun {
  std::string big, d, out;
  Child c;
};
static void startLarge(LargeRun& r, const std::string& name, const char* seconds) {
  r.big = bigInstance();
  ASSERT_FALSE(r.big.empty()) << "mlsys generate --family random --size 200000 failed";
  r.d = freshDir(name);
  r.out = r.d + "/out.json";
  spawn(r.c, {"solve", r.big, r.out, "--seconds", seconds, "--threads", "2", "-q"}, errFile(r.d + "/err.txt"));
}

// The run ends (within a 120 s net for a hang under a loaded ctest; it is killed otherwise) with
// exit code `code` and, if `wrote`, a valid schedule, removed after (~8 MB); else no file.
static void expectLargeRunEnds(LargeRun& r, int code, bool wrote = true) {
  bool exited = r.c.wait(120);
  double t = secondsSince(r.c.start);
  r.c.killAndReap();
  ASSERT_TRUE(exited) << "solve on 200,000 ops still running after 120 s (killed)";
  EXPECT_EQ(r.c.code(), code) << r.c.describe() << " after " << t << " s\n" << test::readText(r.d + "/err.txt");
  if (!wrote) {
    EXPECT_FALSE(fs::exists(r.out));
    return;
  }
  std::string msg;
  EXPECT_EQ(evaluateExit(r.big, r.out, &msg), 0) << msg.substr(0, 2000);
  if (!::testing::Test::HasFailure()) fs::remove(r.out);
}

// 5a. A 200,000-op problem ends by itself (exit 0, not killed) with a valid schedule. How close
// to its 2 s budget it ends is a timing goal, measured by bench/scale.sh (status "overrun" past
// budget + 0.1 s), not asserted here: the 120 s wait is only a net for a hang under a loaded ctest.
TEST(HardeningCli, LargeInputKeepsTheBudget) {
  LargeRun r;
  ASSERT_NO_FATAL_FAILURE(startLarge(r, "bigbudget", "2"));
  expectLargeRunEnds(r, 0);
}

// 5b. ... and answers SIGTERM promptly.
TEST(HardeningCli, LargeInputAnswersSigtermPromptly) {
  LargeRun r;
  ASSERT_NO_FATAL_FAILURE(startLarge(r, "bigterm", "600"));
  // Signal once the first schedule is on disk (before it, there is nothing to write and the run
  // exits at once: see FirstScheduleNotReadyExitsAtOnce), in the middle of the baseline.
  for (int i = 0; i < 12000 && !fs::exists(r.out) && r.c.running(); ++i) sleepFor(0.01);
  ASSERT_TRUE(fs::exists(r.out)) << "no first schedule within 120 s";
  sleepFor(0.3);
  ASSERT_TRUE(r.c.running()) << "exited before SIGTERM: " << r.c.describe() << "\n" << test::readText(r.d + "/err.txt");
  r.c.signal(SIGTERM);
  // It exits because of the signal (143), long before its 600 s budget. How promptly (within
  // 0.2 s) is a timing goal, measured by bench/signal_latency.sh, not asserted under a loaded ctest.
  expectLargeRunEnds(r, 143);
}

// 5c. A signal before the first schedule exists (here while parsing and building it) ends the
// run at once with 128+N and leaves no file: there is nothing valid to write yet.
TEST(HardeningCli, FirstScheduleNotReadyExitsAtOnce) {
  LargeRun r;
  ASSERT_NO_FATAL_FAILURE(startLarge(r, "bigearly", "600"));
  // Signal once mlsys catches SIGTERM (its bit in /proc/PID/status SigCgt): before that the
  // default action ends it as killed by the signal, and a slow start (a TSan build) takes longer
  // than the 50 ms this test otherwise waits.
  auto catchesTerm = [&] {
    std::istringstream st(test::readText("/proc/" + std::to_string(r.c.pid) + "/status"));
    for (std::string line; std::getline(st, line);)
      if (line.rfind("SigCgt:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> (SIGTERM - 1)) & 1;
    return 0ull;
  };
  for (int i = 0; i < 500 && !catchesTerm() && r.c.running(); ++i) sleepFor(0.01);
  sleepFor(0.05);
  if (fs::exists(r.out)) GTEST_SKIP() << "the first schedule was already written when the signal was due";
  r.c.signal(SIGTERM);
  expectLargeRunEnds(r, 143, /*wrote=*/false);
}

// 6. A closed stderr (EPIPE) neither kills the process nor shortens the run.
TEST(HardeningCli, ClosedStderrPipeIsNotFatal) {
  std::string p = test::sharedBenchmark("mlsys-2026-5");
  std::string d = freshDir("sigpipe");
  if (p.empty()) p = ex5In(d);
  std::string out = d + "/out.json", stats = d + "/stats.json";
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ::close(fds[0]);  // no reader ever: every write to stderr gets EPIPE (or SIGPIPE)
  Child c;
  spawn(c, {"solve", p, out, "--seconds", "2", "--stats", stats}, errFd(fds[1]));
  ::close(fds[1]);
  ASSERT_TRUE(c.wait(60)) << "solve --seconds 2 still running after 60 s";
  double t = secondsSince(c.start);
  EXPECT_EQ(c.code(), 0) << c.describe() << " after " << t << " s";
  std::string msg;
  EXPECT_EQ(evaluateExit(p, out, &msg), 0) << msg;
  ASSERT_TRUE(fs::exists(stats)) << "no --stats file";
  rapidjson::Document s;
  std::string st = test::readText(stats);
  s.Parse(st.c_str(), st.size());
  ASSERT_FALSE(s.HasParseError()) << st;
  ASSERT_TRUE(s.IsObject() && s.HasMember("elapsed_s") && s["elapsed_s"].IsNumber()) << st;
  // The run ends by its own deadline, not by the first failed write to stderr (at ~0.02 s): the
  // stop reason says so, and the search ran (no wall-clock window: a loaded machine moves it).
  ASSERT_TRUE(s.HasMember("stop_reason") && s["stop_reason"].IsString()) << st;
  EXPECT_STREQ(s["stop_reason"].GetString(), "deadline") << st;
  ASSERT_TRUE(s.HasMember("evaluations") && s["evaluations"].IsNumber()) << st;
  EXPECT_GT(s["evaluations"].GetDouble(), 0) << "the run was cut short:\n" << st;
}

// 7. Output, --stats and --trace paths that name the problem (or each other) are refused.
TEST(HardeningCli, PathCollisionsAreRefused) {
  std::string d = freshDir("collide"), p = d + "/p.json", out = d + "/out.json", s = d + "/s.json";
  fs::create_directories(d + "/sub");
  std::string link = d + "/link.json";
  fs::create_symlink(p, link);
  struct Case {
    std::string name;
    std::vector<std::string> args;
  };
  std::vector<Case> cases = {
      {"solve P P", {p, p}},
      {"solve P OUT --stats P", {p, out, "--stats", p}},
      {"solve P OUT --trace P", {p, out, "--trace", p}},
      {"solve P OUT --stats OUT", {p, out, "--stats", out}},
      {"solve P OUT --trace OUT", {p, out, "--trace", out}},
      {"solve P OUT --stats S --trace S", {p, out, "--stats", s, "--trace", s}},
      {"solve P DIR/./sub/../p.json", {p, d + "/./sub/../p.json"}},
      {"solve P L (L -> P)", {p, link}},
  };
  for (const auto& k : cases) {
    test::writeText(p, kEx5);
    fs::remove(out);
    fs::remove(s);
    std::vector<std::string> args = {"solve"};
    args.insert(args.end(), k.args.begin(), k.args.end());
    for (const char* a : {"--seconds", "0.5", "-q"}) args.push_back(a);
    auto r = test::runMlsys(args);
    EXPECT_EQ(r.exit_code, 2) << k.name << "\n" << r.err;
    EXPECT_NE(r.err.find("same file"), std::string::npos) << k.name << ": stderr does not say \"same file\":\n"
                                                          << r.err;
    EXPECT_EQ(test::readText(p), kEx5) << k.name << ": the problem file was modified";
    struct stat st {};
    EXPECT_TRUE(::lstat(link.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) << k.name << ": the symlink was replaced";
    if (::lstat(link.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      fs::remove(link);
      fs::create_symlink(p, link);
    }
  }
}

// 8. SIGHUP is handled like SIGTERM: the best is written and the exit code is 128 + 1.
TEST(HardeningCli, SighupWritesTheBestAndExits129) {
  std::string p = test::sharedBenchmark("mlsys-2026-5");
  std::string d = freshDir("sighup");
  if (p.empty()) p = ex5In(d);
  std::string out = d + "/out.json";
  Child c;
  spawn(c, {"solve", p, out, "--seconds", "600", "-q"}, errFile(d + "/err.txt"));
  sleepFor(1.0);
  ASSERT_TRUE(c.running()) << "exited before SIGHUP: " << c.describe();
  c.signal(SIGHUP);
  bool exited = c.wait(120);  // the signal ends it, not the 600 s budget
  c.killAndReap();
  ASSERT_TRUE(exited) << "still running 120 s after SIGHUP (killed)";
  EXPECT_EQ(c.code(), 129) << c.describe() << "\n" << test::readText(d + "/err.txt");
  std::string msg;
  EXPECT_EQ(evaluateExit(p, out, &msg), 0) << msg;
}

// 9. The trace is on disk line by line: a SIGKILL loses nothing already found.
TEST(HardeningCli, TraceSurvivesSigkill) {
  std::string p = test::sharedBenchmark("mlsys-2026-5");
  if (p.empty()) GTEST_SKIP() << kNoBench;
  std::string d = freshDir("tracekill"), out = d + "/out.json", trace = d + "/trace.csv";
  Child c;
  spawn(c, {"solve", p, out, "--seconds", "10", "--threads", "2", "--trace", trace, "-q"}, errFile(d + "/err.txt"));
  sleepFor(2.0);
  ASSERT_TRUE(c.running()) << "exited before SIGKILL: " << c.describe();
  c.signal(SIGKILL);
  ASSERT_TRUE(c.wait(60));
  std::string header;
  auto rows = readTrace(trace, &header);
  EXPECT_EQ(header, "seconds,worker,latency") << "trace:\n" << test::readText(trace);
  EXPECT_GE(rows.size(), 1u) << "no data rows in the trace after SIGKILL at 2 s:\n" << test::readText(trace);
  EXPECT_EQ(evaluateExit(p, out), 0) << "after SIGKILL the file on disk is the last complete schedule";
}

// 10. An absurd thread count is capped (with a message), not obeyed.
TEST(HardeningCli, HugeThreadCountIsCapped) {
  std::string d = freshDir("threads"), p = ex5In(d), out = d + "/out.json", err = d + "/err.txt";
  Child c;
  spawn(c, {"solve", p, out, "--seconds", "1", "--threads", "2147483647"}, errFile(err));
  // Guard the machine: a process that tries to honour the count grows by ~0.5 GB/s.
  long peak_kb = 0;
  bool exited = false;
  for (auto t0 = Clock::now(); secondsSince(t0) < 60;) {
    if ((exited = c.wait(0.05))) break;
    peak_kb = std::max(peak_kb, rssKb(c.pid));
    if (peak_kb > 2L * 1024 * 1024) break;
  }
  c.killAndReap();
  ASSERT_LE(peak_kb, 2L * 1024 * 1024) << "solve --threads 2147483647 on ex5 used more than 2 GB (killed)";
  ASSERT_TRUE(exited) << "solve --threads 2147483647 --seconds 1 still running after 60 s (killed)";
  std::string e = test::readText(err);
  EXPECT_EQ(c.code(), 0) << c.describe() << "\n" << e.substr(0, 3000);
  EXPECT_NE(e.find("capped"), std::string::npos) << "no message that the thread count was capped:\n"
                                                 << e.substr(0, 3000);
  std::string msg;
  EXPECT_EQ(evaluateExit(p, out, &msg), 0) << msg;
}

// 11. A config whose only enabled move never applies: a warning, no spinning, exit 0.
TEST(HardeningCli, OnlyInapplicableMovesEnabledWarns) {
  std::string d = freshDir("nomoves"), p = ex5In(d), out = d + "/out.json", err = d + "/err.txt", cfg = d + "/cfg.yaml";
  test::writeText(cfg,
                  "sa:\n  moves:\n    merge: 0\n    split: 0\n    move-op: 0\n    recompute: 0\n    granularity: 0\n"
                  "    traversal: 0\n    retain: 0\n    reorder: 0\n    reproduce: 0\n    uncompute: 1\n"
                  // (the whole-space certificate would prove ex5 optimal before an annealer starts)
                  "search:\n  exact_full_space: false\n");
  Child c;
  // A budget far above what the warning needs: a loaded machine (a parallel ctest) has delayed
  // the first schedule of this 2-op graph past 1 s, leaving no time for the annealers to start.
  // The workers end at the warning, so the run ends long before the budget.
  spawn(c, {"solve", p, out, "-c", cfg, "--seconds", "10"}, errFile(err));
  bool exited = c.wait(30);
  c.killAndReap();
  ASSERT_TRUE(exited) << "solve --seconds 10 still running after 30 s (killed)";
  std::string e = test::readText(err);
  EXPECT_EQ(c.code(), 0) << c.describe() << "\n" << e;
  EXPECT_NE(e.find("no enabled move"), std::string::npos) << "no warning that no enabled move applies:\n" << e;
  std::string msg;
  EXPECT_EQ(evaluateExit(p, out, &msg), 0) << msg;
}

// 9. With the largest supported dimensions (2^24) the search found 1.2e14 but kept 7.4e18 on disk:
// its best used a snake order over 2^34 tiles, which the output format writes tile by tile, so
// the write never fitted (and the reserve for it stopped the search). The search now keeps to
// raster orders on grids of more than kMaxWrittenOrderTiles tiles, and its best is written.
namespace {
const char* kHuge = R"({"widths":[16777216,16777216,16777216],"heights":[16777216,16777216,16777216],
  "inputs":[[0,1]],"outputs":[[2]],"base_costs":[1000],"op_types":["MatMul"],
  "fast_memory_capacity":100000,"slow_memory_bandwidth":10,"native_granularity":[128,128]})";
}  // namespace

TEST(HardeningCli, LargestDimensionsBestIsWritten) {
  std::string d = freshDir("huge"), p = d + "/huge.json", out = d + "/out.json";
  test::writeText(p, kHuge);
  auto r = test::runMlsys({"solve", p, out, "--seconds", "1", "--threads", "2", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Problem prob = parseProblemFile(p);
  Evaluation ev = evaluateSchedule(prob, parseScheduleFile(out, prob), ModelOptions{});
  ASSERT_TRUE(ev.valid) << ev.reason;
  // The first schedule, [128,128,128], costs 7.38e18, which the bound proves optimal. (The baseline
  // once "reached" 1.5e14 with [16,16,1]: 2^64 steps, counted as 2^63 - 1 by a saturating count.
  // That schedule is now refused, rule range; see tests/cost/limits_test.cpp.)
  EXPECT_EQ(ev.total, 7378725776981491712.0);
  EXPECT_EQ(r.err.find("was not written"), std::string::npos) << r.err;
  const Evaluation wrong =
      evaluateSchedule(prob,
                       parseScheduleText(R"({"subgraphs":[[0]],"granularities":[[16,16,1]],"tensors_to_retain":[[]],)"
                                         R"("traversal_orders":[null],"subgraph_latencies":[147774295664236.8]})",
                                         prob),
                       ModelOptions{});
  EXPECT_EQ(wrong.rule, Rule::Range);
}

TEST(HardeningCli, SearchNeverPricesAnUnwritableOrder) {
  Problem p = test::problemFromJson(kHuge);
  IncrementalEvaluator ev(p, ModelOptions{});
  SubgraphSched sg;
  sg.ops = {0};
  sg.gran = {128, 128, 128};  // 2^34 tiles
  sg.trav = {TraversalKind::RowSnake, {}};
  const CachedCost& snake = ev.cost(sg, {});
  EXPECT_FALSE(snake.valid);
  EXPECT_EQ(snake.rule, Rule::OrderSize);
  sg.trav = {TraversalKind::Raster, {}};
  EXPECT_TRUE(ev.cost(sg, {}).valid) << "raster order needs no list of tiles";
}
