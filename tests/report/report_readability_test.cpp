// What a person reads on `mlsys report`'s pages (issue 35, item 4): consistent cards for an
// invalid schedule, the solver's workers as a small table, constructors labelled as such and
// drawn as points, round axis ticks, the log time axis (automatic or forced), and no number with
// more than 8 significant digits on the pages of two benchmarks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "engine/report/report_format.h"
#include "engine/report/report_page.h"
#include "tests/report/report_test_util.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

using test::countOf;
using test::Files;
using test::kProblem;
using test::kSchedule;
using test::writeInstance;

// The header cards of a page: from <div class="cards"> to the first section.
std::string cardsOf(const std::string& html) {
  const size_t a = html.find("<div class=\"cards\">");
  return a == std::string::npos ? "" : html.substr(a, html.find("<section>", a) - a);
}

// The convergence <svg> of a page.
std::string convergenceOf(const std::string& html) {
  const size_t a = html.find("<svg id=\"convergence\"");
  return a == std::string::npos ? "" : html.substr(a, html.find("</svg>", a) - a);
}

TEST(ReportReadability, InvalidScheduleCardsShowNoTotalAndNoGap) {
  // Both subgraphs break V8 (w = 256 > native 128): two violations.
  Files f = writeInstance("cards_bad", kProblem, R"({"subgraphs":[[0],[1]],"granularities":[[256,128,1],[256,128,1]],
    "tensors_to_retain":[[],[]],"traversal_orders":[null,null],"subgraph_latencies":[3276.8,3276.8]})");
  const std::string html = test::invalidReportHtml("cards_bad", {f.problem, f.schedule}, "V8");
  const std::string cards = cardsOf(html);
  ASSERT_FALSE(cards.empty());
  // Subgraph 0 breaks V8 and so never writes t1 (which subgraph 1 reads): 2 or more violations.
  EXPECT_TRUE(std::regex_search(
      cards, std::regex("validity</div><div class=\"v\">INVALID</div><div class=\"d\">[2-9] violations \\(rules? V8")))
      << cards;
  EXPECT_NE(cards.find("total latency</div><div class=\"v\">invalid</div>"), std::string::npos) << cards;
  EXPECT_EQ(cards.find("gap to bound"), std::string::npos) << cards;
  EXPECT_EQ(cards.find("latency / bound"), std::string::npos) << cards;
  EXPECT_NE(html.find("<title>mlsys report: cards_bad_problem &mdash; INVALID</title>"), std::string::npos);
  // A valid schedule keeps its total and gap.
  Files g = writeInstance("cards_ok", kProblem, kSchedule);
  const std::string ok = cardsOf(test::reportHtml("cards_ok", {g.problem, g.schedule}));
  EXPECT_NE(ok.find("total latency</div><div class=\"v\">6,553.6</div>"), std::string::npos) << ok;
  EXPECT_NE(ok.find("gap to bound"), std::string::npos) << ok;
}

TEST(ReportReadability, WorkersAreASmallTableNotJson) {
  Files f = writeInstance("workers", kProblem, kSchedule);
  const std::string stats = test::tempPath("workers.stats.json");
  test::writeText(stats, R"({"instance":"workers_problem","best_latency":6553.6,"threads":2,
    "workers":[{"kind":"beam","evaluations":942815},{"kind":"lns","evaluations":192748}],
    "non_default":{"search.seconds":"5"},"set":[],"config":""})");
  const std::string html = test::reportHtml("workers", {f.problem, f.schedule, "--stats", stats});
  EXPECT_NE(
      html.find("<tr><td>workers</td><td><table class=\"mini\"><thead><tr><th class=\"n\">worker</th><th>kind</th>"
                "<th class=\"n\">evaluations</th></tr></thead>"),
      std::string::npos)
      << html.substr(html.find("id=\"stats\""));
  EXPECT_NE(html.find("<tr><td class=\"n\">0</td><td>beam</td><td class=\"n\">942,815</td></tr>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td class=\"n\">1</td><td>lns</td><td class=\"n\">192,748</td></tr>"), std::string::npos);
  EXPECT_NE(html.find("<td>search.seconds</td><td>5</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>set</td><td>none</td>"), std::string::npos);
  for (const char* json : {"{&quot;", "[{", "&quot;kind&quot;", "\"kind\":", "[]"})
    EXPECT_EQ(html.find(json), std::string::npos) << "raw JSON on the page: " << json;
}

TEST(ReportReadability, ConstructorsAreLabelledAndDrawnAsPoints) {
  Files f = writeInstance("ctor", kProblem, kSchedule);
  const std::string trace = test::tempPath("ctor.csv");
  test::writeText(trace,
                  "seconds,worker,latency\n0.01,first,9000\n0.02,baseline,8500\n0.03,chain,8200\n0.04,greedy,8000\n"
                  "0.5,sa,7000\n2,lns,6553.6\n5,end,6553.6\n");
  const std::string html = test::reportHtml("ctor", {f.problem, f.schedule, "--trace", trace});
  EXPECT_NE(html.find("constructor greedy</span>"), std::string::npos);
  EXPECT_NE(html.find("constructor chain</span>"), std::string::npos);
  EXPECT_NE(html.find("worker sa</span>"), std::string::npos);
  EXPECT_EQ(html.find("worker greedy"), std::string::npos) << "a constructor is not a worker";
  EXPECT_EQ(html.find("worker chain"), std::string::npos);
  const std::string svg = convergenceOf(html);
  EXPECT_EQ(countOf(svg, "class=\"ctor\""), 2u) << "one point per constructor schedule";
  EXPECT_NE(svg.find("<title>constructor greedy at 0.04 s: 8,000</title>"), std::string::npos) << svg;
  // Step lines: the search workers only (sa, lns), none for a constructor across the run.
  EXPECT_EQ(countOf(svg, "stroke-width=\"1.6\""), 2u) << svg;
  EXPECT_NE(html.find("2 improvements from 2 worker(s) and 2 constructor schedule(s)"), std::string::npos);
}

// The ticks' labels of one axis ("ytick" or "xtick") as numbers.
std::vector<double> tickLabels(const std::string& svg, const std::string& axis) {
  std::vector<double> v;
  const std::regex re("class=\"" + axis + "\"[^>]*/><text[^>]*>([0-9.,]+)</text>");
  for (std::sregex_iterator it(svg.begin(), svg.end(), re), end; it != end; ++it) {
    std::string s = (*it)[1];
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    v.push_back(std::stod(s));
  }
  return v;
}

// A tick is round: 1, 2 or 5 x 10^n, or a multiple of the axis' one step 1, 2 or 5 x 10^n.
TEST(ReportReadability, AxisTicksAreRound) {
  Files f = writeInstance("ticks", kProblem, kSchedule);
  const std::string trace = test::tempPath("ticks.csv");
  // 22,411,472 down to 6,553.6 (the first row of mlsys-2026-13 gave a tick at 22,411,472).
  test::writeText(trace,
                  "seconds,worker,latency\n0.0208,first,22411472\n0.8,sa,1000000\n3.3,lns,6553.6\n4.887,end,6553.6\n");
  for (const char* axis : {"linear", "log"}) {
    SCOPED_TRACE(axis);
    const std::string svg =
        convergenceOf(test::reportHtml("ticks", {f.problem, f.schedule, "--trace", trace, "--time-axis", axis}));
    for (const char* which : {"ytick", "xtick"}) {
      const std::vector<double> t = tickLabels(svg, which);
      ASSERT_GE(t.size(), 3u) << which << "\n" << svg;
      for (double v : t) {
        if (v == 0) continue;
        const double m = v / std::pow(10.0, std::floor(std::log10(v)));  // the mantissa, in [1, 10)
        const bool oneTwoFive = std::fabs(m - 1) < 1e-9 || std::fabs(m - 2) < 1e-9 || std::fabs(m - 5) < 1e-9;
        const double step = t.size() > 1 ? std::fabs(t[1] - t[0]) : v;
        EXPECT_TRUE(oneTwoFive || std::fabs(v / step - std::round(v / step)) < 1e-6) << which << " tick " << v;
        EXPECT_LE(m * 10 - std::floor(m * 10 + 1e-9), 1e-6) << which << " tick " << v << ": more than 2 digits";
      }
    }
  }
}

TraceRun runOf(const Trace& t) { return {"", &t}; }

Trace traceAt(const std::vector<double>& seconds) {
  Trace t;
  for (double s : seconds) t.points.push_back({s, "sa", 100 - s});
  return t;
}

TEST(ReportReadability, LogTimeAxisWhenImprovementsClusterEarly) {
  // The median row (0.9 s, 1.1 s) against 10% of a 10 s run.
  const Trace early = traceAt({0.02, 0.5, 0.9, 5, 9}), late = traceAt({0.02, 0.5, 1.1, 5, 9});
  EXPECT_TRUE(logTimeAxis({runOf(early)}, 10, TimeAxis::Auto));
  EXPECT_FALSE(logTimeAxis({runOf(late)}, 10, TimeAxis::Auto));
  EXPECT_FALSE(logTimeAxis({runOf(early)}, 10, TimeAxis::Linear)) << "forced linear";
  EXPECT_TRUE(logTimeAxis({runOf(late)}, 10, TimeAxis::Log)) << "forced log";
  // A comparison: each run's own median; one run clustering early is enough (pooled, the rows of
  // these three have their median at 4 s).
  EXPECT_TRUE(logTimeAxis({runOf(early), runOf(traceAt({3, 4, 6})), runOf(traceAt({3, 4}))}, 10, TimeAxis::Auto));
  EXPECT_FALSE(logTimeAxis({runOf(late), runOf(traceAt({3, 4}))}, 10, TimeAxis::Auto));
  // The plot's end is the last row when the horizon is earlier.
  EXPECT_FALSE(logTimeAxis({runOf(early)}, 5, TimeAxis::Auto));
  EXPECT_TRUE(logTimeAxis({runOf(traceAt({0.02, 0.5, 0.9, 5, 20}))}, 5, TimeAxis::Auto));
  // No row after 0 s: no log axis, even forced.
  EXPECT_FALSE(logTimeAxis({runOf(traceAt({0, 0}))}, 10, TimeAxis::Log));
  TimeAxis a = TimeAxis::Auto;
  EXPECT_TRUE(parseTimeAxis("log", a) && a == TimeAxis::Log);
  EXPECT_TRUE(parseTimeAxis("linear", a) && a == TimeAxis::Linear);
  EXPECT_TRUE(parseTimeAxis("auto", a) && a == TimeAxis::Auto);
  EXPECT_FALSE(parseTimeAxis("LOG", a));
}

TEST(ReportReadability, TimeAxisFlag) {
  Files f = writeInstance("taxis", kProblem, kSchedule);
  const std::string trace = test::tempPath("taxis.csv");
  // mlsys-2026-13's shape: every improvement within the first 4% of a 4.9 s run.
  test::writeText(trace,
                  "seconds,worker,latency\n0.0208,first,9000\n0.0369,baseline,8000\n0.0397,chain,7000\n"
                  "0.1798,beam,6553.6\n4.887,end,6553.6\n");
  auto page = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {f.problem, f.schedule, "--trace", trace};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::reportHtml("taxis", args);
  };
  std::string html = page({});
  EXPECT_NE(convergenceOf(html).find(">seconds (log scale)</text>"), std::string::npos) << "auto: log";
  EXPECT_NE(html.find("the improvements cluster early"), std::string::npos);
  html = page({"--time-axis", "linear"});
  EXPECT_EQ(convergenceOf(html).find("log scale)</text>"), std::string::npos);
  EXPECT_NE(convergenceOf(html).find(">seconds</text>"), std::string::npos);
  EXPECT_NE(convergenceOf(page({"--time-axis", "log"})).find(">seconds (log scale)</text>"), std::string::npos);
  const auto r = test::reportPage("taxis", {f.problem, f.schedule, "--trace", trace, "--time-axis", "sideways"}).run;
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--time-axis must be log, linear or auto"), std::string::npos) << r.err;
  const auto help = test::runMlsys({"report", "--help"});
  EXPECT_NE(help.out.find("--time-axis"), std::string::npos) << help.out;
}

// The significant digits of the longest number in `text` and that number ("" if none): digit
// runs with thousands separators and decimals; trailing zeros of an integer do not count.
std::pair<int, std::string> mostDigits(const std::string& text) {
  std::pair<int, std::string> most{0, ""};
  const std::regex num("[0-9]+(,[0-9]{3})*(\\.[0-9]+)?");
  for (std::sregex_iterator it(text.begin(), text.end(), num), end; it != end; ++it) {
    std::string d = it->str();
    d.erase(std::remove(d.begin(), d.end(), ','), d.end());
    if (d.find('.') == std::string::npos)
      while (d.size() > 1 && d.back() == '0') d.pop_back();
    d.erase(std::remove(d.begin(), d.end(), '.'), d.end());
    d.erase(0, std::min(d.find_first_not_of('0'), d.size()));
    if (static_cast<int>(d.size()) > most.first) most = {static_cast<int>(d.size()), it->str()};
  }
  return most;
}

// What a person reads: the text of the page (tags and the stylesheet removed; SVG <title>
// tooltips are text and stay), without the [w,h,k] lists.
std::string visibleText(const std::string& html) {
  std::string text;
  const size_t styleEnd = html.find("</style>");
  size_t i = styleEnd == std::string::npos ? 0 : styleEnd;
  for (bool inTag = false; i < html.size(); ++i) {
    if (html[i] == '<') inTag = true;
    if (!inTag) text += html[i];
    if (html[i] == '>') inTag = false, text += ' ';
  }
  // Granularities [w,h,k] are lists, not numbers with thousands separators.
  return std::regex_replace(text, std::regex("\\[[0-9,]*\\]"), " ");
}

// Issue 35: no number with more than 8 significant digits anywhere on the pages or in the
// command's stderr, on two benchmarks (a generated one when ../shared is absent).
TEST(ReportReadability, NoNumberWithMoreThanEightSignificantDigits) {
  for (const std::string stem : {"mlsys-2026-13", "mlsys-2026-5"}) {
    SCOPED_TRACE(stem);
    std::string problem = test::sharedBenchmark(stem);
    if (problem.empty()) {
      problem = test::tempPath(stem + "_gen.json");
      ASSERT_EQ(test::runMlsys({"generate", "--family", "transformer", "--size", "40", "--seed", "3", "-o", problem})
                    .exit_code,
                0);
    }
    const std::string a = test::tempPath(stem + "_a.json"), b = test::tempPath(stem + "_b.json"),
                      trace = test::tempPath(stem + ".csv"), stats = test::tempPath(stem + ".stats.json");
    ASSERT_EQ(test::runMlsys({"solve", problem, a, "--seconds", "0.05", "-q"}).exit_code, 0);
    ASSERT_EQ(
        test::runMlsys({"solve", problem, b, "--seconds", "1", "--trace", trace, "--stats", stats, "-q"}).exit_code, 0);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{problem, b, "--trace", trace, "--stats", stats},
          std::vector<std::string>{problem, a, b, "--trace", trace, "--trace", trace, "--stats", stats}}) {
      const test::ReportPage pg = test::reportPage(stem, args);
      ASSERT_EQ(pg.run.exit_code, 0) << pg.run.err;
      const auto [digits, number] = mostDigits(visibleText(pg.html));
      EXPECT_LE(digits, kMaxSignificantDigits) << "on the page: " << number;
      const auto [errDigits, errNumber] = mostDigits(pg.run.err);
      EXPECT_LE(errDigits, kMaxSignificantDigits) << "on stderr: " << errNumber << "\n" << pg.run.err;
    }
  }
}

}  // namespace
}  // namespace mlsys
