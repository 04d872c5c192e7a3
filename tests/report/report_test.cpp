// `mlsys report`: the HTML page (structure, numbers, invalid schedules, traces, usage errors) and a
// screenshot smoke test through headless Chromium when it is installed.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/report/report_test_util.h"
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
  std::string html = test::reportHtml("valid", {f.problem, f.schedule});
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
  std::string html = test::invalidReportHtml("invalid", {f.problem, f.schedule}, "V8");
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
  std::string html = test::reportHtml("trace", {f.problem, f.schedule, "--trace", trace});
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
  std::string problem =
      "{\"widths\":[" + w + "],\"heights\":[" + h + "],\"inputs\":[" + in + "],\"outputs\":[" + out +
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

// Retains t1 from subgraph 0 into subgraph 1: it is neither stored by 0 nor loaded by 1.
const char* kRetained = R"({"subgraphs":[[0],[1]],"granularities":[[128,128,1],[128,128,1]],
  "tensors_to_retain":[[1],[]],"traversal_orders":[null,null],"subgraph_latencies":[1638.4,1638.4]})";

// The HTML of table row `id` ("sg-1"): from <tr id="sg-1" to its </tr>.
std::string rowOf(const std::string& html, const std::string& id) {
  auto a = html.find("<tr id=\"" + id + "\"");
  if (a == std::string::npos) return "";
  return html.substr(a, html.find("</tr>", a) - a);
}

TEST(Report, PerSubgraphTimeTrafficAndRetention) {
  Files f = writeInstance("columns", kProblem, kRetained);
  std::string html = test::reportHtml("columns", {f.problem, f.schedule});
  for (const char* col :
       {">compute</th>", ">memory</th>", ">loaded</th>", ">stored</th>", ">retained in</th>", ">retained out</th>"})
    EXPECT_NE(html.find(col), std::string::npos) << col;
  // Subgraph 0 loads t0 (16,384 elements, 1,638.4 time units), computes 1,000, stores nothing
  // (t1 is retained out); subgraph 1 loads nothing (t1 retained in) and stores t2.
  std::string r0 = rowOf(html, "sg-0"), r1 = rowOf(html, "sg-1");
  ASSERT_FALSE(r0.empty());
  ASSERT_FALSE(r1.empty());
  EXPECT_NE(r0.find("<em>1,000</em>"), std::string::npos) << r0;  // compute
  EXPECT_NE(r0.find(">1,638.4</td><td class=\"n\">16,384</td><td class=\"n\">0</td>"), std::string::npos) << r0;
  EXPECT_NE(r1.find(">1,638.4</td><td class=\"n\">0</td><td class=\"n\">16,384</td>"), std::string::npos) << r1;
  EXPECT_NE(r0.find("<td class=\"ret\"></td><td class=\"ret\">t1 (128\xC3\x97"
                    "128)</td>"),
            std::string::npos)
      << r0;
  EXPECT_NE(r1.find("<td class=\"ret\">t1 (128\xC3\x97"
                    "128)</td><td class=\"ret\"></td>"),
            std::string::npos)
      << r1;
  // The header cards: totals of compute / memory time and of elements moved.
  EXPECT_NE(html.find("2,000 / 3,277"), std::string::npos);
  EXPECT_NE(html.find("loaded 16,384 &middot; stored 16,384"), std::string::npos);
  // The tooltip says it too.
  EXPECT_NE(html.find("loaded 16,384, stored 0 elements"), std::string::npos);
}

const char* kStats = R"({
  "instance": "stats_problem", "best_latency": 6553.6, "first_write_s": 0.0123456, "best_found_s": 0.5,
  "elapsed_s": 4, "evaluations": 1234567, "evals_per_s": 308642, "writes": 3, "threads": 2, "seed": 1,
  "lower_bound": 6553.6, "gap": 0.0123, "optimal": false, "stop_reason": "deadline", "model": "m", "version": "0.1.0"
})";

TEST(Report, StatsAreShown) {
  Files f = writeInstance("stats", kProblem, kSchedule);
  std::string stats = test::tempPath("stats.json");
  test::writeText(stats, kStats);
  std::string html = test::reportHtml("stats", {f.problem, f.schedule, "--stats", stats});
  EXPECT_NE(html.find("<h2>Solver statistics</h2>"), std::string::npos);
  EXPECT_NE(html.find("id=\"stats\""), std::string::npos);
  EXPECT_NE(html.find("<td>evaluations</td><td>1,234,567</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>evals per second</td><td>308,642</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>first write</td><td>0.0123 s</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>gap</td><td>1.23%</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>stop reason</td><td>deadline</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>optimal</td><td>no</td>"), std::string::npos);
  // Written for another instance name (the problem file is stats_problem.json): a warning, not an error.
  EXPECT_EQ(html.find("is for instance"), std::string::npos);
  test::writeText(stats, std::string(kStats).replace(std::string(kStats).find("stats_problem"), 13, "other"));
  auto pg = test::reportPage("stats", {f.problem, f.schedule, "--stats", stats});
  ASSERT_EQ(pg.run.exit_code, 0) << pg.run.err;
  EXPECT_NE(pg.html.find("is for instance &#39;other&#39;"), std::string::npos);
  EXPECT_NE(pg.run.err.find("is for instance 'other'"), std::string::npos) << pg.run.err;
  // Without --stats there is no such section.
  EXPECT_EQ(test::reportHtml("stats", {f.problem, f.schedule}).find("Solver statistics"), std::string::npos);
}

// A trace names its instance (`# instance: NAME` after the header): one of another instance gives
// a warning on the page and on stderr; the rows are read as usual; one of the same instance, or
// of an older version without the line, gives none.
TEST(Report, ATraceOfAnotherInstanceIsAWarning) {
  Files f = writeInstance("trace_inst", kProblem, kSchedule);
  const std::string trace = test::tempPath("trace_inst.csv");
  const std::string rows = "0.01,first,9000\n0.5,sa,6553.6\n";
  test::writeText(trace, "seconds,worker,latency\n# instance: other\n" + rows);
  auto pg = test::reportPage("trace_inst", {f.problem, f.schedule, "--trace", trace});
  ASSERT_EQ(pg.run.exit_code, 0) << pg.run.err;
  EXPECT_NE(pg.run.err.find("--trace '" + trace + "' is for instance 'other'"), std::string::npos) << pg.run.err;
  EXPECT_NE(pg.html.find("is for instance &#39;other&#39;"), std::string::npos);
  for (const std::string& head : {std::string("seconds,worker,latency\n# instance: trace_inst_problem\n"),
                                  std::string("seconds,worker,latency\n")}) {
    test::writeText(trace, head + rows);
    pg = test::reportPage("trace_inst", {f.problem, f.schedule, "--trace", trace});
    ASSERT_EQ(pg.run.exit_code, 0) << pg.run.err;
    EXPECT_EQ(pg.run.err.find("is for instance"), std::string::npos) << head << pg.run.err;
  }
}

TEST(Report, BadStatsAreErrors) {
  Files f = writeInstance("badstats", kProblem, kSchedule);
  std::string stats = test::tempPath("badstats.json");
  auto run = [&](const std::string& text) {
    test::writeText(stats, text);
    return test::reportPage("badstats", {f.problem, f.schedule, "--stats", stats}).run;
  };
  auto r = run("{\"best_latency\": ");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("stats '" + stats + "'"), std::string::npos) << r.err;
  r = run("[1, 2]");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("must be a JSON object"), std::string::npos) << r.err;
  r = run("{\"subgraphs\": []}");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a file written by 'mlsys solve --stats'"), std::string::npos) << r.err;
  r = test::reportPage("badstats", {f.problem, f.schedule, "--stats", test::tempPath("no_stats.json")}).run;
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos) << r.err;
}

TEST(Report, ScheduleOfAnotherProblem) {
  // Op 5 does not exist in a 2-op problem.
  Files f =
      writeInstance("other", kProblem, R"({"subgraphs":[[5]],"granularities":[[128,128,1]],"tensors_to_retain":[[]],
    "traversal_orders":[null],"subgraph_latencies":[1]})");
  auto pg = test::reportPage("other", {f.problem, f.schedule});
  EXPECT_EQ(pg.run.exit_code, 1);
  EXPECT_NE(pg.run.err.find("(op index)"), std::string::npos) << pg.run.err;
  EXPECT_NE(pg.run.err.find("another problem? '" + f.problem + "' has 2 ops and 3 tensors"), std::string::npos)
      << pg.run.err;
  EXPECT_TRUE(pg.html.empty()) << "no page for a schedule that cannot be read";
  // In range but not a schedule of this problem (op 1 never runs, latencies far off): the page
  // says so, exit 1.
  Files g =
      writeInstance("other2", kProblem, R"({"subgraphs":[[0]],"granularities":[[128,128,1]],"tensors_to_retain":[[]],
    "traversal_orders":[null],"subgraph_latencies":[99999]})");
  std::string html = test::invalidReportHtml("other", {g.problem, g.schedule}, "V2");
  EXPECT_NE(html.find("INVALID schedule"), std::string::npos);
  EXPECT_NE(html.find("is the schedule for another problem or another model"), std::string::npos);
}

TEST(Report, OutputMustNotBeAnInput) {
  Files f = writeInstance("sameout", kProblem, kSchedule);
  auto r = test::runMlsys({"report", f.problem, f.schedule, "-o", f.schedule});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("would be overwritten"), std::string::npos) << r.err;
  EXPECT_EQ(test::readText(f.schedule), kSchedule);
  std::string trace = test::tempPath("sameout.csv");
  test::writeText(trace, "seconds,worker,latency\n");
  EXPECT_EQ(test::runMlsys({"report", f.problem, f.schedule, "-o", trace, "--trace", trace}).exit_code, 2);
  // One --trace / --stats per schedule at most; a problem and one or two schedules.
  EXPECT_EQ(test::runMlsys(
                {"report", f.problem, f.schedule, "-o", test::tempPath("x.html"), "--trace", trace, "--trace", trace})
                .exit_code,
            2);
  EXPECT_EQ(test::runMlsys({"report", f.problem, f.schedule, f.schedule, f.schedule, "-o", test::tempPath("x.html")})
                .exit_code,
            2);
}

// A trace of a whole run (solve --trace): construction rows as marked points, the x axis up to
// the end row, a note with the end of the run.
TEST(Report, WholeRunTraceSpansTheRun) {
  Files f = writeInstance("wholerun", kProblem, kSchedule);
  std::string trace = test::tempPath("wholerun.csv");
  test::writeText(
      trace,
      "seconds,worker,latency\n0.01,first,9000\n0.2,baseline,8000\n0.5,anneal,7000.5\n1.5,lns,6553.6\n4,end,6553.6\n");
  std::string html = test::reportHtml("wholerun", {f.problem, f.schedule, "--trace", trace});
  std::string svg = html.substr(html.find("<svg id=\"convergence\""));
  svg = svg.substr(0, svg.find("</svg>"));
  EXPECT_EQ(countOf(svg, "class=\"cons\""), 2u);  // first, baseline
  EXPECT_NE(svg.find(">4</text>"), std::string::npos) << "the x axis reaches the end row (4 s)";
  EXPECT_NE(html.find("2 improvements from 2 worker(s)"), std::string::npos);
  EXPECT_NE(html.find("the run ended at 4 s with 6,553.6 on disk"), std::string::npos);
  EXPECT_NE(html.find("worker anneal"), std::string::npos);
  EXPECT_EQ(html.find("worker first"), std::string::npos) << "construction rows are not workers";
  // Without an end row the axis stops just past the last row; --stats gives the run's length.
  test::writeText(trace, "seconds,worker,latency\n0.01,first,9000\n1.5,lns,6553.6\n");
  std::string stats = test::tempPath("wholerun.stats.json");
  test::writeText(stats, kStats);  // elapsed_s 4
  html = test::reportHtml("wholerun", {f.problem, f.schedule, "--trace", trace});
  EXPECT_EQ(html.find(">4</text>"), std::string::npos);
  EXPECT_NE(html.find("the trace has no end row"), std::string::npos);
  EXPECT_NE(test::reportHtml("wholerun", {f.problem, f.schedule, "--trace", trace, "--stats", stats}).find(">4</text>"),
            std::string::npos);
}

// Screenshots through headless Chromium of three pages: a small instance, the largest shared
// benchmark (or a generated graph when ../shared is absent) with a real run's trace and stats,
// and a comparison page. Each must be neither missing nor blank: a blank page compresses to a tiny
// PNG, the report (text, bars, colours) to a much larger one. With MLSYS_KEEP_SCREENSHOTS=DIR the
// PNGs are kept there (bench/report-small.png, report-large.png, report-compare.png).
TEST(Report, ScreenshotIsNotBlank) {
  const char* chromium = "/usr/bin/chromium";
  if (::access(chromium, X_OK) != 0)
    GTEST_SKIP() << "no " << chromium << "; install it with apt-get install -y chromium";
  auto shoot = [&](const std::string& page, const std::string& png, int height) {
    std::string profile = test::tempPath("chromium-profile-" + std::filesystem::path(png).stem().string());
    const int rc =
        test::runCommand({"timeout", "90", chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                          "--no-first-run", "--disable-background-networking", "--disable-component-update",
                          "--disable-sync", "--hide-scrollbars", "--user-data-dir=" + profile, "--screenshot=" + png,
                          "--window-size=1400," + std::to_string(height), "file://" + page})
            .exit_code;
    std::error_code ec;
    std::filesystem::remove_all(profile, ec);
    return rc;
  };
  std::string blank = test::tempPath("blank.html"), blank_png = test::tempPath("blank.png");
  test::writeText(blank, "<!DOCTYPE html><html><body></body></html>\n");
  shoot(blank, blank_png, 1600);
  ASSERT_TRUE(std::filesystem::exists(blank_png)) << "chromium wrote no screenshot of the blank page";
  const auto blank_size = std::filesystem::file_size(blank_png);
  const char* keep = std::getenv("MLSYS_KEEP_SCREENSHOTS");
  auto check = [&](const std::string& html, const std::string& name, int height) {
    SCOPED_TRACE(name);
    std::string png = test::tempPath(name + ".png");
    shoot(html, png, height);
    ASSERT_TRUE(std::filesystem::exists(png)) << "chromium wrote no screenshot";
    std::string data = test::readText(png);
    ASSERT_GE(data.size(), 8u);
    EXPECT_EQ(data.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    auto size = std::filesystem::file_size(png);
    EXPECT_GT(size, 20000u) << "the screenshot looks blank";
    EXPECT_GT(size, 5 * blank_size) << "the screenshot (" << size << " bytes) is not much richer than a blank page ("
                                    << blank_size << " bytes)";
    if (keep && *keep)
      std::filesystem::copy_file(png, std::string(keep) + "/" + name + ".png",
                                 std::filesystem::copy_options::overwrite_existing);
  };

  // Small: two subgraphs, a hand-written trace and stats.
  Files f = writeInstance("shot", kProblem, kSchedule);
  std::string trace = test::tempPath("shot_trace.csv"), stats = test::tempPath("shot_stats.json");
  test::writeText(trace,
                  "seconds,worker,latency\n0.01,first,9000\n0.2,baseline,8000\n0.5,anneal,6553.6\n2,end,6553.6\n");
  test::writeText(stats, kStats);
  std::string html = test::tempPath("shot.html");
  auto r = test::runMlsys({"report", f.problem, f.schedule, "-o", html, "--trace", trace, "--stats", stats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  check(html, "report-small", 1600);

  // Large: a real run on the largest shared benchmark (or a generated 150-op graph), and a
  // shorter run of it for the comparison.
  std::string problem = test::sharedBenchmark("mlsys-2026-21");
  if (problem.empty()) {
    problem = test::tempPath("shot_large_problem.json");
    ASSERT_EQ(test::runMlsys({"generate", "--family", "transformer", "--size", "150", "--seed", "1", "-o", problem})
                  .exit_code,
              0);
  }
  std::string longOut = test::tempPath("shot_long.json"), longTrace = test::tempPath("shot_long.csv"),
              longStats = test::tempPath("shot_long.stats.json"), shortOut = test::tempPath("shot_short.json"),
              shortTrace = test::tempPath("shot_short.csv"), shortStats = test::tempPath("shot_short.stats.json");
  r = test::runMlsys({"solve", problem, longOut, "--seconds", "3", "--trace", longTrace, "--stats", longStats, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::runMlsys(
      {"solve", problem, shortOut, "--seconds", "0.2", "--trace", shortTrace, "--stats", shortStats, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  html = test::tempPath("shot_large.html");
  r = test::runMlsys({"report", problem, longOut, "-o", html, "--trace", longTrace, "--stats", longStats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  check(html, "report-large", 2000);

  html = test::tempPath("shot_compare.html");
  r = test::runMlsys({"report", problem, shortOut, longOut, "-o", html, "--trace", shortTrace, "--trace", longTrace,
                      "--stats", shortStats, "--stats", longStats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  check(html, "report-compare", 2200);
}

}  // namespace
}  // namespace mlsys
