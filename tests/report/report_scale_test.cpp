// `mlsys report` at scale (issue 36, item 9): start times in one linear pass, a million-row trace
// thinned to a page of a few hundred KB, -s bounding the lower bound; and (item 12) file names and
// other text that are not UTF-8 turned into valid UTF-8 on the page.
// No timing assertions: linearity is checked by its outcome on inputs the quadratic code could not
// finish within the CTest timeout (600 s), and by the exactness of the one-pass helper.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/model/problem.h"
#include "cost/pricing/evaluator.h"
#include "engine/report/report_format.h"
#include "engine/report/report_page.h"
#include "tests/report/report_test_util.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

size_t countOf(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + needle.size())) ++n;
  return n;
}

// Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool validUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    unsigned cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < len; ++k) {
      const unsigned x = static_cast<unsigned char>(s[i + k]);
      if ((x & 0xC0) != 0x80) return false;
      cp = cp << 6 | (x & 0x3F);
    }
    const unsigned minCp = len == 1 ? 0 : len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < minCp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// A chain of n Pointwise ops on 128x128 tensors, one op per subgraph. Base costs alternate 1000
// and 5000: the subgraphs cost 3276.8 (memory-bound: 32768 elements / bandwidth 10) and 5000.
struct Files {
  std::string problem, schedule;
};
Files writeChain(const std::string& tag, int n) {
  std::string w, in, out, costs, types, sgs, grans, ret, trav, lat;
  for (int i = 0; i <= n; ++i) w += (i ? ",128" : "128");
  for (int i = 0; i < n; ++i) {
    const char* sep = i ? "," : "";
    in += sep + ("[" + std::to_string(i) + "]");
    out += sep + ("[" + std::to_string(i + 1) + "]");
    costs += sep + std::string(i % 2 ? "5000" : "1000");
    types += sep + std::string("\"Pointwise\"");
    sgs += sep + ("[" + std::to_string(i) + "]");
    grans += sep + std::string("[128,128,1]");
    ret += sep + std::string("[]");
    trav += sep + std::string("null");
    lat += sep + std::string(i % 2 ? "5000" : "3276.8");
  }
  Files f{test::tempPath(tag + "_problem.json"), test::tempPath(tag + "_schedule.json")};
  test::writeText(
      f.problem, "{\"widths\":[" + w + "],\"heights\":[" + w + "],\"inputs\":[" + in + "],\"outputs\":[" + out +
                     "],\"base_costs\":[" + costs + "],\"op_types\":[" + types +
                     "],\"fast_memory_capacity\":50000,\"slow_memory_bandwidth\":10,\"native_granularity\":[128,128]}");
  test::writeText(f.schedule, "{\"subgraphs\":[" + sgs + "],\"granularities\":[" + grans + "],\"tensors_to_retain\":[" +
                                  ret + "],\"traversal_orders\":[" + trav + "],\"subgraph_latencies\":[" + lat + "]}");
  return f;
}

// ---------------------------------------------------------------- item 9: start times

// The one-pass prefix sums are exactTotal of every prefix, bit for bit: exact rationals while they
// fit 128 bits, the long-double sum from the first prefix that does not (a denominator that
// overflows the common one, an invalid subgraph with den 0 or below).
TEST(ReportScale, PrefixTotalsAreExactTotalOfEveryPrefix) {
  std::mt19937_64 rng(36);
  for (int scenario = 0; scenario < 60; ++scenario) {
    const int n = 1 + static_cast<int>(rng() % 300);
    std::vector<SubgraphReport> sg(static_cast<size_t>(n));
    for (auto& r : sg) {
      const int kind = static_cast<int>(rng() % 100);
      const i64 small[] = {1, 2, 3, 5, 7, 10, 12, 125, 1000003};
      i64 den = small[rng() % 9];
      if (scenario % 3 == 1 && kind < 3)
        den = static_cast<i64>(rng() >> 2) | 1;                     // huge: the common denominator overflows
      if (scenario % 3 == 2 && kind < 2) den = kind == 0 ? 0 : -7;  // an invalid subgraph
      r.cost.num = static_cast<i128>(rng() % 1000000007) * static_cast<i128>(den > 0 ? 1 + rng() % 1000 : 1);
      r.cost.den = den;
      r.cost.latency = den > 0
                           ? static_cast<double>(static_cast<long double>(r.cost.num) / static_cast<long double>(den))
                           : static_cast<double>(rng() % 1000) / 3;
    }
    const std::vector<double> pre = exactPrefixTotals(sg);
    ASSERT_EQ(pre.size(), sg.size() + 1);
    std::vector<SubgraphReport> prefix;
    long double latencySum = 0;
    bool invalidSeen = false;  // small denominators only: the sum falls back from the first invalid one
    for (size_t k = 0; k <= sg.size(); ++k) {
      EXPECT_EQ(pre[k], exactTotal(prefix)) << "scenario " << scenario << ", prefix " << k;
      if (scenario % 3 == 2 && invalidSeen) {
        EXPECT_EQ(pre[k], static_cast<double>(latencySum)) << "scenario " << scenario << ", prefix " << k;
      }
      if (k == sg.size()) break;
      prefix.push_back(sg[k]);
      latencySum += sg[k].cost.latency;
      invalidSeen |= sg[k].cost.den <= 0;
    }
  }
}

// The start times of a schedule of 200,000 subgraphs, computed by viewSchedule (what report
// shows). The landed code summed every prefix again (exactTotal per subgraph: 13 s at 20,000
// subgraphs, quadratic), about 20 minutes here: past the CTest timeout. Each start is checked
// against its closed form, rounded once from the exact rational.
TEST(ReportScale, StartTimesOf200kSubgraphsAreExact) {
  const int n = 200000;
  Files f = writeChain("chain200k", n);
  Problem p = parseProblemFile(f.problem);
  ScheduleView v = viewSchedule(p, f.problem, ModelOptions{}, f.schedule);
  ASSERT_TRUE(v.ev.valid) << v.ev.reason;
  ASSERT_EQ(v.sg.size(), static_cast<size_t>(n));
  EXPECT_TRUE(v.warnings.empty()) << v.warnings.front();
  for (int i = 0; i < n; ++i) {
    const i64 tenths = static_cast<i64>(i / 2) * 82768 + (i % 2) * 32768;  // (i/2) * 8276.8 + 3276.8 if odd
    const double want = static_cast<double>(static_cast<long double>(tenths) / 10.0L);
    if (v.sg[static_cast<size_t>(i)].start != want) {
      ADD_FAILURE() << "subgraph " << i << ": start " << v.sg[static_cast<size_t>(i)].start << ", want " << want;
      break;
    }
  }
  EXPECT_EQ(v.ev.total, static_cast<double>(static_cast<long double>(static_cast<i64>(n / 2) * 82768) / 10.0L));
}

// ---------------------------------------------------------------- item 9: -s

// -s bounds the lower bound as in `mlsys bound`: a budget already spent when the bound starts
// gives every component its quick floor (the page says so), a large one the exact covers. Both
// are deterministic: the process cannot reach the bound within 1 ms of its start.
TEST(ReportScale, SecondsBudgetDegradesTheBoundToQuickFloors) {
  const std::string problem = test::tempPath("budget_problem.json"), schedule = test::tempPath("budget_schedule.json");
  auto gen = test::runMlsys({"generate", "--family", "random", "--size", "300", "--seed", "3", "-o", problem});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto solve = test::runMlsys({"solve", problem, schedule, "-s", "0.3", "-q"});
  ASSERT_EQ(solve.exit_code, 0) << solve.err;
  Problem p = parseProblemFile(problem);
  BoundOptions floorsOnly;
  floorsOnly.give_up = [] { return true; };
  const double full = lowerBound(p, ModelOptions{}).value(), quick = lowerBound(p, ModelOptions{}, floorsOnly).value();
  ASSERT_LT(quick, full) << "the instance must have components whose exact cover beats the quick floor";
  auto card = [](const std::string& html) {
    const size_t at = html.find("<div class=\"k\">lower bound</div>");
    return at == std::string::npos ? std::string() : html.substr(at, html.find("</div></div>", at) - at);
  };
  test::ReportPage tight = test::reportPage("budget_tight", {problem, schedule, "-s", "0.001"});
  EXPECT_EQ(tight.run.exit_code, 0) << tight.run.err;
  EXPECT_NE(card(tight.html).find(">" + humanNumber(quick) + "<"), std::string::npos) << card(tight.html);
  EXPECT_NE(card(tight.html).find("quick floors past the 0.001 s budget (-s)"), std::string::npos) << card(tight.html);
  EXPECT_NE(tight.run.err.find("quick floors"), std::string::npos) << tight.run.err;
  test::ReportPage ample = test::reportPage("budget_ample", {problem, schedule, "-s", "100000"});
  EXPECT_EQ(ample.run.exit_code, 0) << ample.run.err;
  EXPECT_NE(card(ample.html).find(">" + humanNumber(full) + "<"), std::string::npos) << card(ample.html);
  EXPECT_EQ(ample.html.find("quick floors"), std::string::npos);
  // The comparison page says it too; bad budgets are usage errors.
  test::ReportPage cmp = test::reportPage("budget_cmp", {problem, schedule, schedule, "-s", "0.001"});
  EXPECT_NE(cmp.html.find("the same for both &middot; quick floors"), std::string::npos);
  for (const char* bad : {"0", "-1", "abc", "nan"})
    EXPECT_EQ(test::runMlsys({"report", problem, schedule, "-o", test::tempPath("bad_s.html"), "-s", bad}).exit_code, 2)
        << bad;
}

// ---------------------------------------------------------------- item 9: thinning

// Up to maxExact vertices: all of them. Beyond: the first, the last, every vertex at least
// minStepPx from the last one kept; so every vertex is within minStepPx of the last kept one at
// or before it (the drawn line is within minStepPx of the exact one), and a monotone line of
// height H keeps at most H / minStepPx + 2.
TEST(ReportScale, ThinStepsKeepsFirstLastAndVisibleChanges) {
  std::vector<double> few = {1, 1.01, 1.02, 5};
  EXPECT_EQ(thinSteps(few, 0.1, 2000), (std::vector<size_t>{0, 1, 2, 3}));
  std::mt19937_64 rng(9);
  for (int round = 0; round < 5; ++round) {
    const size_t n = 50000 + rng() % 100000;
    std::vector<double> y(n);
    double at = 14;
    for (size_t i = 0; i < n; ++i) {
      at += (rng() % 50 == 0 ? 2.0 : 0.004) * static_cast<double>(rng() % 1000) /
            1000;  // mostly invisible steps, a few jumps
      y[i] = std::min(at, 274.0);
    }
    const std::vector<size_t> keep = thinSteps(y, 0.1, 2000);
    ASSERT_GE(keep.size(), 2u);
    EXPECT_EQ(keep.front(), 0u);
    EXPECT_EQ(keep.back(), n - 1);
    EXPECT_LE(static_cast<double>(keep.size()), (y.back() - y.front()) / 0.1 + 2);
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
      while (k + 1 < keep.size() && keep[k + 1] <= i) ++k;
      ASSERT_LT(std::fabs(y[i] - y[keep[k]]), 0.1 + 1e-12) << "vertex " << i;
    }
  }
}

// A trace of a million improvements (two workers) gives a page of a few hundred KB: the landed
// code drew every vertex, 30 MB. Each line keeps at most about 2,600 vertices (260 px / 0.1 px).
TEST(ReportScale, MillionRowTraceIsThinned) {
  Files f = writeChain("trace1m", 4);
  const std::string trace = test::tempPath("trace1m.csv");
  {
    std::FILE* out = std::fopen(trace.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fputs("seconds,worker,latency\n0.001,first,2000000\n0.002,baseline,1900000\n", out);
    double lat = 1900000;
    for (int i = 0; i < 1000000; ++i) {
      lat *= 0.999998;
      std::fprintf(out, "%.6f,%s,%.6f\n", 0.003 + 1e-5 * i, i % 2 ? "sa" : "beam", lat);
    }
    std::fprintf(out, "10.01,end,%.6f\n", lat);
    std::fclose(out);
  }
  std::string html = test::reportHtml("trace1m", {f.problem, f.schedule, "--trace", trace});
  std::filesystem::remove(trace);
  ASSERT_FALSE(html.empty());
  EXPECT_LT(html.size(), 1000000u) << "the page of a tiny schedule with a thinned trace";
  EXPECT_NE(html.find("1,000,000 improvements from 2 worker(s)"), std::string::npos);
  std::string svg = html.substr(html.find("<svg id=\"convergence\""));
  svg = svg.substr(0, svg.find("</svg>"));
  size_t lines = 0;
  for (size_t at = svg.find("<path d=\"M"); at != std::string::npos; at = svg.find("<path d=\"M", at + 1)) {
    const std::string d = svg.substr(at, svg.find('"', at + 9) - at);
    EXPECT_LE(countOf(d, " V"), 2610u);
    EXPECT_GE(countOf(d, " V"), 100u) << "a visible descent keeps its steps";
    ++lines;
  }
  EXPECT_EQ(lines, 3u) << "the overall best and one line per worker";
  EXPECT_EQ(countOf(svg, "class=\"cons\""), 2u);  // first, baseline
}

// ---------------------------------------------------------------- item 12: not UTF-8

TEST(ReportScale, EscapeMakesValidUtf8) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(esc("a\xff"
                "b"),
            "a" + fffd + "b");
  EXPECT_EQ(esc("<\"&'>"), "&lt;&quot;&amp;&#39;&gt;");
  EXPECT_EQ(esc("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xC3\x97"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xC3\x97");  // kept
  EXPECT_EQ(esc("\xE2\x82"
                "x"),
            fffd + "x");                                          // a truncated sequence: one U+FFFD
  EXPECT_EQ(esc("\xED\xA0\x80"), fffd + fffd + fffd);             // a surrogate: three (as browsers decode)
  EXPECT_EQ(esc("\xC0\xAF"), fffd + fffd);                        // an overlong '/'
  EXPECT_EQ(esc("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // past U+10FFFF
  EXPECT_EQ(esc(std::string("a\0b\x01\tc\nd\re", 10)), "a" + fffd + "b" + fffd + "\tc\nd\re");
  EXPECT_EQ(esc("\xF0\x9F\x98"), fffd);
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  EXPECT_TRUE(validUtf8(esc(all + all)));
}

// File names with bytes that are not UTF-8 (0xff, a truncated sequence) on the page of one
// schedule and on a comparison page: U+FFFD where they were, the page valid UTF-8.
TEST(ReportScale, NonUtf8FileNamesGiveValidUtf8Html) {
  Files f = writeChain("utf8", 2);
  const std::string dir = test::tempPath("");
  const std::string problem = dir + "/p\xff.json", a = dir + "/a\xfe\xc3.json", b = dir + "/b\xff\xff.json";
  const std::string trace = dir + "/t\xff.csv", stats = dir + "/s\xff.json";
  std::filesystem::copy_file(f.problem, problem);
  std::filesystem::copy_file(f.schedule, a);
  std::filesystem::copy_file(f.schedule, b);
  test::writeText(trace, "seconds,worker,latency\n0.01,first,9000\n0.5,w\xff,8276.8\n1,end,8276.8\n");
  test::writeText(stats, "{\"instance\":\"p\xff\",\"best_latency\":1,\"elapsed_s\":1}");
  std::string html = test::reportHtml("utf8_one", {problem, a, "--trace", trace, "--stats", stats});
  ASSERT_FALSE(html.empty());
  EXPECT_TRUE(validUtf8(html));
  EXPECT_NE(html.find("p\xEF\xBF\xBD.json"), std::string::npos);              // the problem's path
  EXPECT_NE(html.find("a\xEF\xBF\xBD\xEF\xBF\xBD.json"), std::string::npos);  // 0xfe, then 0xc3 cut short by '.'
  EXPECT_NE(html.find("worker w\xEF\xBF\xBD"), std::string::npos);            // a trace's worker name
  EXPECT_EQ(html.find('\xff'), std::string::npos);
  std::string cmp = test::reportHtml("utf8_cmp", {problem, a, b});
  ASSERT_FALSE(cmp.empty());
  EXPECT_TRUE(validUtf8(cmp));
  EXPECT_NE(cmp.find("b\xEF\xBF\xBD\xEF\xBF\xBD.json"), std::string::npos);
}

}  // namespace
}  // namespace mlsys
