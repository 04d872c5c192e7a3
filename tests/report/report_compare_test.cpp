// `mlsys report PROBLEM A.json B.json -o cmp.html`: the comparison page (both totals, the
// difference, per-subgraph differences of the subgraphs with the same op set, the unmatched ones),
// its traces and stats, and its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/report/report_test_util.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

// Three chained Pointwise ops on 128x128 tensors, bandwidth 10: alone, each subgraph costs
// 3276.8 (load + store 32768 / 10 > compute 1000).
const char* kProblem = R"({"widths":[128,128,128,128],"heights":[128,128,128,128],
  "inputs":[[0],[1],[2]],"outputs":[[1],[2],[3]],"base_costs":[1000,1000,1000],"op_types":["Pointwise","Pointwise","Pointwise"],
  "fast_memory_capacity":80000,"slow_memory_bandwidth":10,"native_granularity":[128,128]})";

// A: every op alone (3 x 3276.8 = 9830.4).
const char* kA = R"({"subgraphs":[[0],[1],[2]],"granularities":[[128,128,1],[128,128,1],[128,128,1]],
  "tensors_to_retain":[[],[],[]],"traversal_orders":[null,null,null],"subgraph_latencies":[3276.8,3276.8,3276.8]})";

// B: op 0 alone but retaining t1 (load 1638.4), ops 1 and 2 fused (t1 from fast memory, store t3:
// max(2000, 1638.4) = 2000). Total 3638.4. Op 0 is shared; {1} and {2} only in A, {1,2} only in B.
const char* kB = R"({"subgraphs":[[0],[1,2]],"granularities":[[128,128,1],[128,128,1]],
  "tensors_to_retain":[[1],[]],"traversal_orders":[null,null],"subgraph_latencies":[1638.4,2000]})";

struct Files {
  std::string problem, a, b;
};

Files writeFiles(const std::string& tag, const std::string& b = kB) {
  Files f{test::tempPath(tag + "_problem.json"), test::tempPath(tag + "_a.json"), test::tempPath(tag + "_b.json")};
  test::writeText(f.problem, kProblem);
  test::writeText(f.a, kA);
  test::writeText(f.b, b);
  return f;
}

TEST(ReportCompare, BothTotalsAndTheDifference) {
  Files f = writeFiles("cmp");
  auto pg = test::reportPage("cmp", {f.problem, f.a, f.b});
  ASSERT_EQ(pg.run.exit_code, 0) << pg.run.err;
  const std::string& html = pg.html;
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("mlsys comparison"), std::string::npos);
  EXPECT_NE(html.find("A total latency</div><div class=\"v\">9,830.4</div>"), std::string::npos);
  EXPECT_NE(html.find("B total latency</div><div class=\"v\">3,638.4</div>"), std::string::npos);
  // 3638.4 - 9830.4 = -6192, -62.99% of A.
  EXPECT_NE(html.find("difference B &minus; A</div><div class=\"v\">&minus;6,192 (&minus;62.99%)</div>"),
            std::string::npos);
  EXPECT_NE(html.find("B is faster"), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"timeline-a\""), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"timeline-b\""), std::string::npos);
  // The split of the difference: shared {0}: 1638.4 - 3276.8; gone {1}, {2}: 6553.6; new {1,2}: 2000.
  EXPECT_NE(html.find("shared subgraphs (1): B &minus; A</td><td class=\"n better\">&minus;1,638.4 (&minus;50%)"),
            std::string::npos);
  EXPECT_NE(html.find("only in A (2): their latency, gone in B</td><td class=\"n\">&minus;6,553.6"), std::string::npos);
  EXPECT_NE(html.find("only in B (1): their latency, new in B</td><td class=\"n\">+2,000"), std::string::npos);
  // No scripts, no network.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_NE(pg.run.err.find("9,830.4 vs 3,638.4"), std::string::npos) << pg.run.err;
}

TEST(ReportCompare, SharedSubgraphsSideBySideAndUnmatchedApart) {
  Files f = writeFiles("match");
  std::string html = test::reportHtml("match", {f.problem, f.a, f.b});
  // The shared subgraph (op 0): both latencies, the difference, A's and B's retention.
  auto row = html.find("<tr id=\"a-sg-0\"><td><span id=\"b-sg-0\"></span>");
  ASSERT_NE(row, std::string::npos);
  std::string tr = html.substr(row, html.find("</tr>", row) - row);
  EXPECT_NE(tr.find("0:PW"), std::string::npos) << tr;
  EXPECT_NE(tr.find(">3,276.8</td><td class=\"n\">1,638.4</td>"), std::string::npos) << tr;
  EXPECT_NE(tr.find("&minus;1,638.4 (&minus;50%)"), std::string::npos) << tr;
  EXPECT_NE(tr.find("16,384 / 16,384</td><td class=\"n\">16,384 / 0</td>"), std::string::npos)
      << tr;                                               // loaded / stored
  EXPECT_NE(tr.find("t1 (128"), std::string::npos) << tr;  // B retains t1
  EXPECT_EQ(tr.find(">same<"), std::string::npos) << "the retention differs";
  EXPECT_NE(html.find("<h2>Shared subgraphs (1)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Only in A (2)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Only in B (1)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<tr id=\"a-sg-1\">"), std::string::npos);
  EXPECT_NE(html.find("<tr id=\"a-sg-2\">"), std::string::npos);
  EXPECT_NE(html.find("<tr id=\"b-sg-1\">"), std::string::npos);
  // A's subgraph 1 (op 1) runs in B's subgraph 1.
  auto a1 = html.find("<tr id=\"a-sg-1\">");
  std::string tr1 = html.substr(a1, html.find("</tr>", a1) - a1);
  EXPECT_NE(tr1.find("<a href=\"#b-sg-1\">#1</a>"), std::string::npos) << tr1;

  // A schedule compared with itself: everything shared and "same", difference 0.
  html = test::reportHtml("match", {f.problem, f.a, f.a});
  EXPECT_NE(html.find("<h2>Shared subgraphs (3)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Only in A (0)</h2>"), std::string::npos);
  EXPECT_NE(html.find("difference B &minus; A</div><div class=\"v\">0 (0%)</div>"), std::string::npos);
  EXPECT_NE(html.find("equal totals"), std::string::npos);
  EXPECT_NE(html.find(">same<"), std::string::npos);
}

TEST(ReportCompare, TracesAndStatsOfBothRuns) {
  Files f = writeFiles("cmptrace");
  std::string ta = test::tempPath("cmp_a.csv"), tb = test::tempPath("cmp_b.csv"),
              sa = test::tempPath("cmp_a.stats.json"), sb = test::tempPath("cmp_b.stats.json");
  test::writeText(ta, "seconds,worker,latency\n0.01,first,9830.4\n0.1,baseline,9830.4\n1,end,9830.4\n");
  test::writeText(tb,
                  "seconds,worker,latency\n0.01,first,9830.4\n0.1,baseline,5000\n0.7,anneal,3638.4\n3,end,3638.4\n");
  test::writeText(sa, R"({"instance":"cmptrace_problem","best_latency":9830.4,"evaluations":10,"elapsed_s":1})");
  test::writeText(sb, R"({"instance":"cmptrace_problem","best_latency":3638.4,"evaluations":123456,"elapsed_s":3})");
  std::string html =
      test::reportHtml("cmptrace", {f.problem, f.a, f.b, "--trace", ta, "--trace", tb, "--stats", sa, "--stats", sb});
  EXPECT_NE(html.find("<svg id=\"convergence\""), std::string::npos);
  EXPECT_NE(html.find("A: best 9,830.4"), std::string::npos);
  EXPECT_NE(html.find("B: best 3,638.4"), std::string::npos);
  EXPECT_NE(html.find("<th>A</th><th>B</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>evaluations</td><td>10</td><td>123,456</td>"), std::string::npos);
  // Stats given in the wrong order: each schedule gets a warning that its stats report another best.
  auto pg = test::reportPage("cmptrace", {f.problem, f.a, f.b, "--stats", sb, "--stats", sa});
  ASSERT_EQ(pg.run.exit_code, 0) << pg.run.err;
  EXPECT_NE(pg.html.find("A: --stats"), std::string::npos);
  EXPECT_NE(pg.run.err.find("reports best latency 3,638.4"), std::string::npos) << pg.run.err;
}

TEST(ReportCompare, InvalidScheduleIsShownAndExitsOne) {
  // B with w = 256 > native: V8.
  Files f = writeFiles("cmpbad", R"({"subgraphs":[[0],[1,2]],"granularities":[[256,128,1],[128,128,1]],
    "tensors_to_retain":[[1],[]],"traversal_orders":[null,null],"subgraph_latencies":[1638.4,2000]})");
  std::string html = test::invalidReportHtml("cmpbad", {f.problem, f.a, f.b}, "V8");
  EXPECT_NE(html.find("B is INVALID &mdash; rule V8"), std::string::npos);
  // Consistent cards (issue 35): B has no total and no gap, "invalid" with its violations; no
  // difference of totals.
  EXPECT_NE(html.find("B total latency</div><div class=\"v\">invalid</div><div class=\"d\">1 violation (rule V8)"),
            std::string::npos);
  EXPECT_NE(html.find("A total latency</div><div class=\"v\">9,830.4</div>"), std::string::npos);
  EXPECT_NE(html.find("difference B &minus; A</div><div class=\"v\">n/a</div><div class=\"d\">B invalid"),
            std::string::npos);
  EXPECT_NE(html.find("<h3>B &mdash; invalid</h3>"), std::string::npos);
  const size_t at = html.find("B total latency");
  ASSERT_NE(at, std::string::npos);
  const std::string bCard = html.substr(at, html.find("</div></div>", at) - at);
  EXPECT_EQ(bCard.find("gap"), std::string::npos) << bCard;
}

TEST(ReportCompare, InputErrors) {
  Files f = writeFiles("cmperr");
  auto pg = test::reportPage("cmperr", {f.problem, f.a, test::tempPath("missing_b.json")});
  EXPECT_EQ(pg.run.exit_code, 1);
  EXPECT_NE(pg.run.err.find("cannot open"), std::string::npos) << pg.run.err;
  EXPECT_NE(pg.run.err.find("missing_b.json"), std::string::npos) << pg.run.err;
  EXPECT_TRUE(pg.html.empty());
  // B is a schedule of a bigger problem (op 7).
  Files g = writeFiles("cmperr2", R"({"subgraphs":[[7]],"granularities":[[128,128,1]],"tensors_to_retain":[[]],
    "traversal_orders":[null],"subgraph_latencies":[1]})");
  pg = test::reportPage("cmperr", {g.problem, g.a, g.b});
  EXPECT_EQ(pg.run.exit_code, 1);
  EXPECT_NE(pg.run.err.find("schedule '" + g.b + "'"), std::string::npos) << pg.run.err;
  EXPECT_NE(pg.run.err.find("another problem?"), std::string::npos) << pg.run.err;
  EXPECT_TRUE(pg.html.empty());
  // Three --stats for two schedules: usage.
  std::string s = test::tempPath("cmperr.stats.json");
  test::writeText(s, R"({"best_latency":1})");
  auto r = test::reportPage("cmperr", {f.problem, f.a, f.b, "--stats", s, "--stats", s, "--stats", s}).run;
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("3 --stats files for 2 schedule(s)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace mlsys
