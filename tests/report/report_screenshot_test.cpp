// `mlsys report` through headless Chromium at 1400 px wide (skipped when /usr/bin/chromium is not
// installed): screenshots of the page of one schedule and of the comparison page, each neither
// missing nor blank, and the layout measured in the browser: every table fits the page's width.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "tests/report/report_test_util.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

using test::Files;
using test::kProblem;
using test::kSchedule;
using test::kStats;
using test::writeInstance;

// The size of a PNG of a blank page at 1400 x 1600 (once per test binary).
uintmax_t blankSize() {
  static const uintmax_t size = [] {
    const std::string blank = test::tempPath("blank.html"), png = test::tempPath("blank.png");
    test::writeText(blank, "<!DOCTYPE html><html><body></body></html>\n");
    test::runChromium(blank, "--screenshot=" + png, 1600, "blank");
    return std::filesystem::exists(png) ? std::filesystem::file_size(png) : uintmax_t{0};
  }();
  return size;
}

// A screenshot of `html` named `name`: neither missing nor blank (a blank page compresses to a
// tiny PNG, the report with its text, bars and colours to a much larger one). With
// MLSYS_KEEP_SCREENSHOTS=DIR the PNG is kept there as DIR/<name>.png.
void checkScreenshot(const std::string& html, const std::string& name, int height) {
  SCOPED_TRACE(name);
  ASSERT_GT(blankSize(), 0u) << "chromium wrote no screenshot of a blank page";
  const std::string png = test::tempPath(name + ".png");
  test::runChromium(html, "--screenshot=" + png, height, name);
  ASSERT_TRUE(std::filesystem::exists(png)) << "chromium wrote no screenshot";
  const std::string data = test::readText(png);
  ASSERT_GE(data.size(), 8u);
  EXPECT_EQ(data.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  const auto size = std::filesystem::file_size(png);
  EXPECT_GT(size, 20000u) << "the screenshot looks blank";
  EXPECT_GT(size, 5 * blankSize()) << "the screenshot (" << size << " bytes) is not much richer than a blank page ("
                                   << blankSize() << " bytes)";
  if (const char* keep = std::getenv("MLSYS_KEEP_SCREENSHOTS"); keep && *keep)
    std::filesystem::copy_file(png, std::string(keep) + "/" + name + ".png",
                               std::filesystem::copy_options::overwrite_existing);
}

// A real run of a benchmark: the largest shared one (or a generated 150-op graph when ../shared
// is absent), a longer and a shorter run with their traces and stats.
struct Runs {
  std::string problem, longOut, longTrace, longStats, shortOut, shortTrace, shortStats;
};

const Runs& benchmarkRuns() {
  static const Runs runs = [] {
    Runs r;
    r.problem = test::sharedBenchmark("mlsys-2026-21");
    if (r.problem.empty()) {
      r.problem = test::tempPath("shot_large_problem.json");
      test::runMlsys({"generate", "--family", "transformer", "--size", "150", "--seed", "1", "-o", r.problem});
    }
    r.longOut = test::tempPath("shot_long.json"), r.longTrace = test::tempPath("shot_long.csv");
    r.longStats = test::tempPath("shot_long.stats.json"), r.shortOut = test::tempPath("shot_short.json");
    r.shortTrace = test::tempPath("shot_short.csv"), r.shortStats = test::tempPath("shot_short.stats.json");
    test::runMlsys(
        {"solve", r.problem, r.longOut, "--seconds", "3", "--trace", r.longTrace, "--stats", r.longStats, "-q"});
    test::runMlsys(
        {"solve", r.problem, r.shortOut, "--seconds", "0.2", "--trace", r.shortTrace, "--stats", r.shortStats, "-q"});
    return r;
  }();
  return runs;
}

// The page of one schedule: a small instance with a hand-written trace and stats, and a real run
// (bench/report-small.png, bench/report-large.png with MLSYS_KEEP_SCREENSHOTS=bench).
TEST(Report, ScreenshotIsNotBlank) {
  if (test::chromium().empty()) GTEST_SKIP() << "no /usr/bin/chromium; install it with apt-get install -y chromium";
  Files f = writeInstance("shot", kProblem, kSchedule);
  std::string trace = test::tempPath("shot_trace.csv"), stats = test::tempPath("shot_stats.json");
  test::writeText(trace,
                  "seconds,worker,latency\n0.01,first,9000\n0.2,baseline,8000\n0.5,anneal,6553.6\n2,end,6553.6\n");
  test::writeText(stats, kStats);
  std::string html = test::tempPath("shot.html");
  auto r = test::runMlsys({"report", f.problem, f.schedule, "-o", html, "--trace", trace, "--stats", stats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  checkScreenshot(html, "report-small", 1600);

  const Runs& b = benchmarkRuns();
  ASSERT_TRUE(std::filesystem::exists(b.longOut)) << "the run of " << b.problem << " wrote no schedule";
  html = test::tempPath("shot_large.html");
  r = test::runMlsys({"report", b.problem, b.longOut, "-o", html, "--trace", b.longTrace, "--stats", b.longStats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  checkScreenshot(html, "report-large", 2000);
}

// The comparison page of a shorter and a longer run (bench/report-compare.png).
TEST(Report, CompareScreenshotIsNotBlank) {
  if (test::chromium().empty()) GTEST_SKIP() << "no /usr/bin/chromium; install it with apt-get install -y chromium";
  const Runs& b = benchmarkRuns();
  ASSERT_TRUE(std::filesystem::exists(b.shortOut) && std::filesystem::exists(b.longOut));
  const std::string html = test::tempPath("shot_compare.html");
  auto r = test::runMlsys({"report", b.problem, b.shortOut, b.longOut, "-o", html, "--trace", b.shortTrace, "--trace",
                           b.longTrace, "--stats", b.shortStats, "--stats", b.longStats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  checkScreenshot(html, "report-compare", 2200);
}

// Every table of a page at 1400 px: its content width (scrollWidth) within its box (clientWidth
// of its scroll container), measured by a script added to a copy of the page (the page itself
// runs none) and read back from the DOM Chromium dumps. "TABLE-ID scroll/client" per table.
void expectTablesFit(const std::string& page, const std::string& tag) {
  SCOPED_TRACE(tag);
  std::string html = test::readText(page);
  const std::string probe =
      "<script>var r=[];document.querySelectorAll('table').forEach(function(t){if(t.closest('table.mini'))return;"
      "r.push((t.id||t.className||'table')+' '+t.scrollWidth+'/'+t.parentElement.clientWidth);});"
      "var p=document.createElement('pre');p.id='fit';p.textContent=r.join(';');document.body.appendChild(p);"
      "</script>";
  html.insert(html.rfind("</body>"), probe);
  const std::string copy = test::tempPath(tag + "-probe.html");
  test::writeText(copy, html);
  const test::RunResult r = test::runChromium(copy, "--dump-dom", 2400, tag + "-probe");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("<pre id=\"fit\">([^<]*)</pre>"))) << r.err;
  const std::string fit = m[1];
  int tables = 0;
  const std::regex entry("([^ ;]+) ([0-9]+)/([0-9]+)");
  for (std::sregex_iterator it(fit.begin(), fit.end(), entry), end; it != end; ++it, ++tables)
    EXPECT_LE(std::stoi((*it)[2]), std::stoi((*it)[3]))
        << "table " << (*it)[1] << " is wider than its box at 1400 px: columns hidden behind a scrollbar";
  EXPECT_GE(tables, 1) << fit;
}

// Issue 35: the subgraph table was 1,579 px wide at 1400 px, hiding peak working set, traversal
// and retention; the comparison's tables as well.
TEST(Report, TablesFitAt1400Px) {
  if (test::chromium().empty()) GTEST_SKIP() << "no /usr/bin/chromium; install it with apt-get install -y chromium";
  const Runs& b = benchmarkRuns();
  ASSERT_TRUE(std::filesystem::exists(b.shortOut) && std::filesystem::exists(b.longOut));
  const std::string one = test::tempPath("fit_one.html"), two = test::tempPath("fit_two.html");
  auto r = test::runMlsys({"report", b.problem, b.longOut, "-o", one, "--stats", b.longStats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expectTablesFit(one, "fit-one");
  r = test::runMlsys(
      {"report", b.problem, b.shortOut, b.longOut, "-o", two, "--stats", b.shortStats, "--stats", b.longStats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expectTablesFit(two, "fit-two");
}

}  // namespace
}  // namespace mlsys
