// `mlsys solve --trace`: the trace is the whole run. Its first rows are the first schedule and the
// baseline, its last row is `end` with the latency on disk at the end of the run (also after a
// signal and after proven optimality), and the latency column never rises before `end`.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace mlsys {
namespace {

struct Row {
  double seconds;
  std::string worker;
  double latency;
};

std::vector<Row> readRows(const std::string& path, std::string* header) {
  std::istringstream in(test::readText(path));
  std::string line;
  std::vector<Row> rows;
  std::getline(in, *header);
  bool named = false;
  while (std::getline(in, line)) {
    if (line.rfind("# instance: ", 0) == 0 && rows.empty()) {  // right after the header
      named = true;
      continue;
    }
    size_t a = line.find(','), b = line.rfind(',');
    EXPECT_TRUE(a != std::string::npos && b != a) << "malformed row: " << line;
    if (a == std::string::npos || b == a) continue;
    rows.push_back({std::stod(line.substr(0, a)), line.substr(a + 1, b - a - 1), std::stod(line.substr(b + 1))});
  }
  EXPECT_TRUE(named) << "no `# instance: NAME` line after the header";
  return rows;
}

double latencyOnDisk(const std::string& problem, const std::string& out) {
  auto r = test::runMlsys({"evaluate", problem, out, "--json"});  // the exact value (the text rounds)
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto pos = r.out.find("\"total_latency\": ");
  return pos == std::string::npos ? -1 : std::stod(r.out.substr(pos + 17));
}

// The shape every complete trace has.
void checkWholeRun(const std::vector<Row>& rows, const std::string& header, double onDisk) {
  EXPECT_EQ(header, "seconds,worker,latency") << "the header is unchanged";
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows[0].worker, "first");
  EXPECT_EQ(rows[1].worker, "baseline");
  EXPECT_LE(rows[1].latency, rows[0].latency);
  EXPECT_EQ(rows.back().worker, "end");
  EXPECT_DOUBLE_EQ(rows.back().latency, onDisk) << "the end row holds the latency of the file on disk";
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_GE(rows[i].seconds, rows[i - 1].seconds) << "row " << i;
    if (i + 1 < rows.size()) {
      EXPECT_LE(rows[i].latency, rows[i - 1].latency) << "row " << i << " (" << rows[i].worker << ") rises";
      EXPECT_NE(rows[i].worker, "end") << "only the last row is the end";
    }
  }
}

TEST(Trace, CoversTheWholeRunToTheDeadline) {
  std::string p = test::instancePath("examples/ex5.json"), out = test::tempPath("trace_deadline.json"),
              trace = test::tempPath("trace_deadline.csv"), stats = test::tempPath("trace_deadline.stats.json");
  // (Without the whole-space certificate, which proves ex5 optimal at once and ends the run.)
  auto r = test::runMlsys({"solve", p, out, "--seconds", "1", "--threads", "2", "--trace", trace, "--stats", stats,
                           "-q", "--set", "search.exact_full_space=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string header;
  auto rows = readRows(trace, &header);
  checkWholeRun(rows, header, latencyOnDisk(p, out));
  ASSERT_FALSE(rows.empty());
  EXPECT_NE(test::readText(stats).find("\"stop_reason\": \"deadline\""), std::string::npos);
  // The end row is the run's last act before the stats (written with the process's elapsed time).
  // When, within the budget, the run ends is checked on a fake clock, whatever the machine's load:
  // tests/search/stop_test.cpp, SolveClock.RunEndsInsideItsBudgetOnItsOwnClock.
  const std::string st = test::readText(stats);
  const std::string key = "\"elapsed_s\": ";
  const size_t at = st.find(key);
  ASSERT_NE(at, std::string::npos) << st;
  const double elapsed = std::stod(st.substr(at + key.size()));
  // (Rows print 4 decimals, rounded: hence the half unit of the last one.)
  EXPECT_LE(rows.back().seconds, elapsed + 0.5e-4) << "the end row is written before the stats";
}

TEST(Trace, EndsWhenTheRunIsProvenOptimal) {
  std::string p = test::instancePath("examples/ex1.json"), out = test::tempPath("trace_opt.json"),
              trace = test::tempPath("trace_opt.csv"), stats = test::tempPath("trace_opt.stats.json");
  auto r = test::runMlsys({"solve", p, out, "--seconds", "30", "--trace", trace, "--stats", stats, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(test::readText(stats).find("\"stop_reason\": \"optimal\""), std::string::npos) << test::readText(stats);
  std::string header;
  auto rows = readRows(trace, &header);
  checkWholeRun(rows, header, latencyOnDisk(p, out));
}

TEST(Trace, EndsAfterASignal) {
  std::string p = test::instancePath("examples/ex5.json"), out = test::tempPath("trace_sig.json"),
              trace = test::tempPath("trace_sig.csv");
  // (Without the whole-space certificate: with it the LNS worker proves ex5 optimal in
  // milliseconds and the run ends before the signal.)
  auto r = test::runMlsys({"solve", p, out, "--seconds", "600", "--threads", "2", "--trace", trace, "-q", "--set",
                           "search.exact_full_space=false"},
                          {"timeout", "--preserve-status", "-s", "TERM", "1"});
  ASSERT_EQ(r.exit_code, 143) << r.err;
  std::string header;
  auto rows = readRows(trace, &header);
  checkWholeRun(rows, header, latencyOnDisk(p, out));
  ASSERT_FALSE(rows.empty());
  // Not at the 600 s budget (the fake-clock version: SolveClock.StopRequestEndsARunThatNeverReachesItsDeadline).
  EXPECT_LT(rows.back().seconds, 300) << "the end row is written at the signal, not at the budget";
}

TEST(Trace, ExactSolverRowWhenItImproves) {
  // ex3 with --exact: the exact solver improves on the baseline (8192 -> 4500) and proves it
  // optimal: an `exact` row right after the baseline, then the end.
  std::string p = test::instancePath("examples/ex3.json"), out = test::tempPath("trace_exact.json"),
              trace = test::tempPath("trace_exact.csv");
  auto r = test::runMlsys({"solve", p, out, "--seconds", "10", "--exact", "--trace", trace, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string header;
  auto rows = readRows(trace, &header);
  checkWholeRun(rows, header, latencyOnDisk(p, out));
  ASSERT_GE(rows.size(), 4u);
  EXPECT_EQ(rows[2].worker, "exact");
  EXPECT_LT(rows[2].latency, rows[1].latency);
}

TEST(Trace, UnwritableTraceIsAnErrorBeforeAnyWork) {
  std::string p = test::instancePath("examples/ex5.json"), out = test::tempPath("trace_bad.json");
  auto r = test::runMlsys({"solve", p, out, "--seconds", "1", "--trace", test::tempPath("no/such/dir/t.csv"), "-q"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--trace: cannot write"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out)) << "no schedule is written when the trace cannot be";
}

}  // namespace
}  // namespace mlsys
