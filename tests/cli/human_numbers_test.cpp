// Issue 35: no number with more than 8 significant digits in any human-facing output (the solve
// log and summary, `evaluate`'s table, `bound`'s text), on two shared benchmarks. The report and
// the tuner summary have their own scans (tests/report/report_readability_test.cpp,
// tests/tune_output_test.py). JSON outputs keep exact values and are not scanned.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace mlsys {
namespace {

// Every number token of `text` (not part of a word or a path: "mlsys-2026-13", "ex5" are skipped;
// nor lists in brackets: op ids "[13,14,16]", granularities "[128,128,128]", which a thousands
// separator would make look like one number) with more than 8 significant digits.
std::vector<std::string> longNumbers(const std::string& raw) {
  static const std::regex bracketed(R"(\[[^\]\n]*\])");
  static const std::regex number(R"((^|[\s(=:,;])(-?\d[\d,]*(\.\d+)?)(?=$|[\s),;:%]))");
  const std::string text = std::regex_replace(raw, bracketed, "[]");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it) {
    std::string tok = (*it)[2];
    while (!tok.empty() && tok.back() == ',') tok.pop_back();
    if (test::significantDigits(tok) > 8) out.push_back(tok);
  }
  return out;
}

TEST(HumanNumbers, TheScannerFindsLongNumbers) {
  EXPECT_EQ(longNumbers("incumbent 16284057.600000001  gap 34%").size(), 1u);
  EXPECT_EQ(longNumbers("latency 88493.0666666666729412\n").size(), 1u);
  EXPECT_TRUE(longNumbers("incumbent 16,284,058  bound 10,737,418 [0.012s] mlsys-2026-13 123,456,790").empty());
  EXPECT_TRUE(longNumbers("0    [13,14,16,17,18]   [128,128,128]   32x1").empty());
}

TEST(HumanNumbers, LogEvaluateAndBoundKeepToEightDigits) {
  bool any = false;
  for (const std::string stem : {"mlsys-2026-13", "mlsys-2026-5"}) {
    const std::string prob = test::sharedBenchmark(stem);
    if (prob.empty()) continue;
    any = true;
    const std::string out = test::tempPath(stem + "-hn.json");
    test::RunResult s =
        test::runMlsys({"solve", prob, out, "-s", "2.5", "-t", "2", "--set", "search.log_interval_s=0.5"});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    test::RunResult e = test::runMlsys({"evaluate", prob, out});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    test::RunResult b = test::runMlsys({"bound", prob});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    for (const auto& [what, text] : {std::pair<std::string, std::string>{"solve's log", s.err},
                                     {"evaluate", e.out + e.err},
                                     {"bound", b.out + b.err}}) {
      const std::vector<std::string> longs = longNumbers(text);
      EXPECT_TRUE(longs.empty()) << stem << ": " << what << " prints " << longs.size() << " numbers of more than 8 "
                                 << "significant digits, e.g. " << (longs.empty() ? "" : longs[0]) << ":\n"
                                 << text;
    }
    EXPECT_NE(s.err.find("since best"), std::string::npos) << "no progress table:\n" << s.err;
    EXPECT_EQ(s.err.find("bests: "), std::string::npos) << "detail lines without -v:\n" << s.err;
    // -v: a detail line under each row, in the same format.
    test::RunResult v =
        test::runMlsys({"solve", prob, out, "-s", "1.5", "-t", "2", "-v", "--set", "search.log_interval_s=0.4"});
    ASSERT_EQ(v.exit_code, 0) << v.err;
    EXPECT_NE(v.err.find("bests: "), std::string::npos) << v.err;
    EXPECT_NE(v.err.find("; accepted "), std::string::npos) << v.err;
    const std::vector<std::string> vlongs = longNumbers(v.err);
    EXPECT_TRUE(vlongs.empty()) << stem << ": solve -v prints " << (vlongs.empty() ? "" : vlongs[0]) << ":\n" << v.err;
  }
  if (!any) GTEST_SKIP() << "the shared benchmarks are absent (" << test::sharedBenchmarksDir() << ")";
}

// evaluate's table keeps its columns apart when a count outgrows its column: 16,777,216 steps
// and a ten-digit latency (a 4096 x 4096 Pointwise at [1,1,1]) used to print as one token.
TEST(HumanNumbers, EvaluateColumnsNeverRunTogether) {
  const std::string prob = test::tempPath("wide-columns.json"), sched = test::tempPath("wide-columns.out.json");
  std::ofstream(prob) << R"({"widths":[4096,4096],"heights":[4096,4096],"inputs":[[0]],"outputs":[[1]],
    "base_costs":[100],"op_types":["Pointwise"],"fast_memory_capacity":100000,"slow_memory_bandwidth":10,
    "native_granularity":[128,128]})";
  std::ofstream(sched) << R"({"subgraphs":[[0]],"granularities":[[1,1,1]],"tensors_to_retain":[[]],
    "traversal_orders":[null],"subgraph_latencies":[1677721600]})";
  test::RunResult e = test::runMlsys({"evaluate", prob, sched});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  std::istringstream rows(e.out);
  std::string line;
  bool found = false;
  while (std::getline(rows, line))
    if (line.rfind("0 ", 0) == 0) {
      found = true;
      std::istringstream fields(line);
      std::vector<std::string> f;
      for (std::string x; fields >> x;) f.push_back(x);
      ASSERT_EQ(f.size(), 9u) << line;  // sg ops [w,h,k] tiles ksteps steps latency peak_ws bound
      EXPECT_EQ(f[5], "16,777,216") << line;
      EXPECT_EQ(f[6], "1,677,721,600") << line;
    }
  EXPECT_TRUE(found) << e.out;
}

}  // namespace
}  // namespace mlsys
