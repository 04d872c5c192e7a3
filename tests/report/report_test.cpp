// `mlsys report`: the HTML page (structure, numbers, invalid schedules, traces, usage errors). The
// screenshots through headless Chromium are report_screenshot_test.cpp.
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

using test::kInvalid;
using test::kProblem;
using test::kSchedule;
using test::kStats;

using test::countOf;
using test::Files;
using test::writeInstance;

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

// A problem imported from a model carries its node names (`op_names`): each op's chip shows the
// last parts of its name, and its tooltip the whole name (escaped).
TEST(Report, ShowsTheModelsNodeNames) {
  std::string problem = kProblem;
  problem.insert(problem.rfind('}'), R"(,"op_names":["/encoder/layer.0/attn/MatMul","/head/<Relu>"])");
  Files f = writeInstance("names", problem, kSchedule);
  std::string html = test::reportHtml("names", {f.problem, f.schedule});
  ASSERT_FALSE(html.empty());
  EXPECT_NE(html.find("op 0 Pointwise /encoder/layer.0/attn/MatMul"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"nm\">attn/MatMul</span>"), std::string::npos);
  EXPECT_NE(html.find("/head/&lt;Relu&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<Relu>"), std::string::npos);
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
  for (const char* col : {">compute</th>", ">memory</th>", ">loaded</th>", ">stored</th>", ">retained&nbsp;in</th>",
                          ">retained&nbsp;out</th>"})
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

}  // namespace
}  // namespace mlsys
