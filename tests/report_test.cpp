// `mlsys report`: the HTML page (structure, numbers, invalid schedules, traces, usage errors) and a
// screenshot smoke test through headless Chromium when it is installed.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/test_util.h"

namespace mlsys {
namespace {

// Two chained Pointwise ops on 128x128 tensors. Per subgraph: load 16384/10 + store 16384/10 =
// 3276.8 > compute 1000, so both are memory-bound and the total is 6553.6.
const char* kProblem = R"({"widths":[128,128,128],"heights":[128,128,128],
  "inputs":[[0],[1]],"outputs":[[1],[2]],"base_costs":[1000,1000],"op_types":["Pointwise","Pointwise"],
  "fast_memory_capacity":50000,"slow_memory_bandwidth":10,"native_granularity":[128,128]})";

const char* kSchedule = R"({"subgraphs":[[0],[1]],"granularities":[[128,128,1],[128,128,1]],
  "tensors_to_retain":[[],[]],"traversal_orders":[null,null],"subgraph_latencies":[3276.8,3276.8]})";

// w = 256 exceeds the native size: rule V8.
const char* kInvalid = R"({"subgraphs":[[0],[1]],"granularities":[[128,128,1],[256,128,1]],
  "tensors_to_retain":[[],[]],"traversal_orders":[null,null],"subgraph_latencies":[3276.8,3276.8]})";

size_t countOf(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + needle.size())) ++n;
  return n;
}

struct Files {
  std::string problem, schedule;
};

Files writeInstance(const std::string& tag, const std::string& problem, const std::string& schedule) {
  Files f{test::tempPath(tag + "_problem.json"), test::tempPath(tag + "_schedule.json")};
  test::writeText(f.problem, problem);
  test::writeText(f.schedule, schedule);
  return f;
}

TEST(Report, ValidScheduleHasTimelineOccupancyAndTable) {
  Files f = writeInstance("valid", kProblem, kSchedule);
  std::string out = test::tempPath("valid.html");
  auto r = test::runMlsys({"report", f.problem, f.schedule, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = test::readText(out);
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"timeline\""), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"occupancy\""), std::string::npos);
  EXPECT_EQ(countOf(html, "<rect class=\"sg "), 2u);  // one timeline rect per subgraph
  EXPECT_NE(html.find("data-sg=\"0\""), std::string::npos);
  EXPECT_NE(html.find("data-sg=\"1\""), std::string::npos);
  EXPECT_NE(html.find("6,553.6"), std::string::npos);  // total latency
  EXPECT_NE(html.find("3,276.8"), std::string::npos);  // a subgraph latency
  EXPECT_NE(html.find(">valid<"), std::string::npos);
  EXPECT_NE(html.find("matmul_compute=reduction_depth"), std::string::npos);
  EXPECT_NE(html.find("lower bound"), std::string::npos);
  EXPECT_NE(html.find("id=\"sg-1\""), std::string::npos);  // table rows
  EXPECT_NE(html.find("0:PW"), std::string::npos);
  EXPECT_NE(html.find("<title>subgraph 0 (memory)"), std::string::npos);  // tooltip
  EXPECT_NE(html.find("[w,h,k] = [128,128,1]"), std::string::npos);
  EXPECT_EQ(html.find("INVALID schedule"), std::string::npos);
  EXPECT_EQ(html.find("id=\"convergence\""), std::string::npos);  // no --trace
  // Self-contained: no scripts, no external resources.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(Report, InvalidScheduleIsShownAndExitsOne) {
  Files f = writeInstance("invalid", kProblem, kInvalid);
  std::string out = test::tempPath("invalid.html");
  auto r = test::runMlsys({"report", f.problem, f.schedule, "-o", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("V8"), std::string::npos) << r.err;
  std::string html = test::readText(out);
  ASSERT_FALSE(html.empty()) << "the page is written even for an invalid schedule";
  EXPECT_NE(html.find("INVALID schedule"), std::string::npos);
  EXPECT_NE(html.find("rule V8"), std::string::npos);
  EXPECT_NE(html.find("256"), std::string::npos);
  EXPECT_NE(html.find("class=\"badrow\""), std::string::npos);
  EXPECT_EQ(countOf(html, "<rect class=\"sg "), 2u);
}

TEST(Report, TraceAddsConvergencePlot) {
  Files f = writeInstance("trace", kProblem, kSchedule);
  std::string trace = test::tempPath("trace.csv");
  test::writeText(trace, "seconds,worker,latency\n0.01,0,9000\n0.2,1,8000\n0.5,0,7000.5\n1.5,1,6553.6\n");
  std::string out = test::tempPath("trace.html");
  auto r = test::runMlsys({"report", f.problem, f.schedule, "-o", out, "--trace", trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = test::readText(out);
  EXPECT_NE(html.find("<svg id=\"convergence\""), std::string::npos);
  EXPECT_NE(html.find("worker 0"), std::string::npos);
  EXPECT_NE(html.find("worker 1"), std::string::npos);
  EXPECT_NE(html.find("4 improvements from 2 worker(s)"), std::string::npos);

  std::string bad = test::tempPath("bad_trace.csv");
  test::writeText(bad, "seconds,worker,latency\n0.1,0,abc\n");
  auto rb = test::runMlsys({"report", f.problem, f.schedule, "-o", test::tempPath("bad.html"), "--trace", bad});
  EXPECT_EQ(rb.exit_code, 1);
  EXPECT_NE(rb.err.find("line 2"), std::string::npos) << rb.err;
}

TEST(Report, ModelOptionIsShown) {
  Files f = writeInstance("model", kProblem, kSchedule);
  std::string out = test::tempPath("model.html");
  auto r = test::runMlsys({"report", f.problem, f.schedule, "-o", out, "--model", "matmul_compute=native_depth"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(test::readText(out).find("matmul_compute=native_depth"), std::string::npos);
  auto rb = test::runMlsys({"report", f.problem, f.schedule, "-o", out, "--model", "matmul_compute=bogus"});
  EXPECT_EQ(rb.exit_code, 2) << "a bad --model value is a usage error, as for solve and evaluate";
  EXPECT_NE(rb.err.find("matmul_compute"), std::string::npos) << rb.err;
}

TEST(Report, UsageAndInputErrors) {
  Files f = writeInstance("usage", kProblem, kSchedule);
  EXPECT_EQ(test::runMlsys({"report", f.problem, f.schedule}).exit_code, 2);  // no -o
  EXPECT_EQ(test::runMlsys({"report", f.problem, "-o", test::tempPath("x.html")}).exit_code, 2);
  EXPECT_EQ(test::runMlsys({"report", "--bogus"}).exit_code, 2);
  EXPECT_EQ(test::runMlsys({"report", "--help"}).exit_code, 0);
  auto r = test::runMlsys({"report", test::tempPath("missing.json"), f.schedule, "-o", test::tempPath("y.html")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(test::tempPath("y.html")));
}

// A chain of 150 Pointwise ops, one per subgraph: the page keeps one rect per subgraph.
TEST(Report, ManySubgraphs) {
  const int n = 150;
  std::string w, h, in, out, bc, ty, sg, gr, rt, tr, lat;
  for (int t = 0; t <= n; ++t) {
    w += (t ? "," : "") + std::string("128");
    h += (t ? "," : "") + std::string("128");
  }
  for (int i = 0; i < n; ++i) {
    std::string c = i ? "," : "";
    in += c + "[" + std::to_string(i) + "]";
    out += c + "[" + std::to_string(i + 1) + "]";
    bc += c + std::to_string(100 + 50 * (i % 7) * 100);
    ty += c + "\"Pointwise\"";
    sg += c + "[" + std::to_string(i) + "]";
    gr += c + "[128,128,1]";
    rt += c + "[]";
    tr += c + "null";
    lat += c + "0";
  }
  std::string problem = "{\"widths\":[" + w + "],\"heights\":[" + h + "],\"inputs\":[" + in + "],\"outputs\":[" + out +
                        "],\"base_costs\":[" + bc + "],\"op_types\":[" + ty +
                        "],\"fast_memory_capacity\":50000,\"slow_memory_bandwidth\":10,\"native_granularity\":[128,128]}";
  std::string schedule = "{\"subgraphs\":[" + sg + "],\"granularities\":[" + gr + "],\"tensors_to_retain\":[" + rt +
                         "],\"traversal_orders\":[" + tr + "],\"subgraph_latencies\":[" + lat + "]}";
  Files f = writeInstance("many", problem, schedule);
  std::string html_path = test::tempPath("many.html");
  auto r = test::runMlsys({"report", f.problem, f.schedule, "-o", html_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = test::readText(html_path);
  EXPECT_EQ(countOf(html, "<rect class=\"sg "), static_cast<size_t>(n));
  EXPECT_EQ(countOf(html, "<tr id=\"sg-"), static_cast<size_t>(n));
  EXPECT_NE(html.find("compute-bound"), std::string::npos);
  EXPECT_NE(html.find("class=\"sg cb"), std::string::npos);  // base cost 30100 > 3276.8: compute-bound
  EXPECT_NE(html.find("class=\"sg mb"), std::string::npos);  // base cost 100: memory-bound
}

// Screenshot smoke test: the rendered page is neither missing nor blank. A blank page compresses to
// a tiny PNG; the report (text, bars, colours) gives a much larger one.
TEST(Report, ScreenshotIsNotBlank) {
  const char* chromium = "/usr/bin/chromium";
  if (::access(chromium, X_OK) != 0) GTEST_SKIP() << "no " << chromium << "; install it with apt-get install -y chromium";
  Files f = writeInstance("shot", kProblem, kSchedule);
  std::string trace = test::tempPath("shot_trace.csv");
  test::writeText(trace, "seconds,worker,latency\n0.01,0,9000\n0.5,0,6553.6\n");
  std::string html = test::tempPath("shot.html");
  auto r = test::runMlsys({"report", f.problem, f.schedule, "-o", html, "--trace", trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string blank = test::tempPath("blank.html");
  test::writeText(blank, "<!DOCTYPE html><html><body></body></html>\n");

  auto shoot = [&](const std::string& page, const std::string& png) {
    std::string profile = test::tempPath("chromium-profile-" + std::filesystem::path(png).stem().string());
    std::string cmd = std::string("timeout 90 ") + chromium +
                      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
                      " --disable-component-update --disable-sync --hide-scrollbars --user-data-dir='" + profile +
                      "' --screenshot='" + png + "' --window-size=1200,900 'file://" + page + "' >/dev/null 2>&1";
    int rc = std::system(cmd.c_str());
    std::error_code ec;
    std::filesystem::remove_all(profile, ec);
    return rc;
  };
  std::string png = test::tempPath("report.png"), blank_png = test::tempPath("blank.png");
  shoot(html, png);
  shoot(blank, blank_png);
  ASSERT_TRUE(std::filesystem::exists(png)) << "chromium wrote no screenshot";
  ASSERT_TRUE(std::filesystem::exists(blank_png)) << "chromium wrote no screenshot of the blank page";
  std::string data = test::readText(png);
  ASSERT_GE(data.size(), 8u);
  EXPECT_EQ(data.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  auto size = std::filesystem::file_size(png), blank_size = std::filesystem::file_size(blank_png);
  EXPECT_GT(size, 20000u) << "the screenshot looks blank";
  EXPECT_GT(size, 5 * blank_size) << "the screenshot (" << size << " bytes) is not much richer than a blank page ("
                                  << blank_size << " bytes)";
}

}  // namespace
}  // namespace mlsys
