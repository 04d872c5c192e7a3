// Shared by the report tests (report_*_test.cpp): a small instance, run `mlsys report` and read
// the page it wrote, and headless Chromium (screenshots, layout measured at 1400 px).
#pragma once
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "tests/test_util.h"

namespace mlsys::test {

// Two chained Pointwise ops on 128x128 tensors. Per subgraph: load 16384/10 + store 16384/10 =
// 3276.8 > compute 1000, so both are memory-bound and the total is 6553.6.
inline const char* kProblem = R"({"widths":[128,128,128],"heights":[128,128,128],
  "inputs":[[0],[1]],"outputs":[[1],[2]],"base_costs":[1000,1000],"op_types":["Pointwise","Pointwise"],
  "fast_memory_capacity":50000,"slow_memory_bandwidth":10,"native_granularity":[128,128]})";

inline const char* kSchedule = R"({"subgraphs":[[0],[1]],"granularities":[[128,128,1],[128,128,1]],
  "tensors_to_retain":[[],[]],"traversal_orders":[null,null],"subgraph_latencies":[3276.8,3276.8]})";

// w = 256 exceeds the native size: rule V8.
inline const char* kInvalid = R"({"subgraphs":[[0],[1]],"granularities":[[128,128,1],[256,128,1]],
  "tensors_to_retain":[[],[]],"traversal_orders":[null,null],"subgraph_latencies":[3276.8,3276.8]})";

inline const char* kStats = R"({
  "instance": "stats_problem", "best_latency": 6553.6, "first_write_s": 0.0123456, "best_found_s": 0.5,
  "elapsed_s": 4, "evaluations": 1234567, "evals_per_s": 308642, "writes": 3, "threads": 2, "seed": 1,
  "lower_bound": 6553.6, "gap": 0.0123, "optimal": false, "stop_reason": "deadline", "model": "m", "version": "0.1.0"
})";

inline size_t countOf(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + needle.size())) ++n;
  return n;
}

struct Files {
  std::string problem, schedule;
};

inline Files writeInstance(const std::string& tag, const std::string& problem, const std::string& schedule) {
  Files f{tempPath(tag + "_problem.json"), tempPath(tag + "_schedule.json")};
  writeText(f.problem, problem);
  writeText(f.schedule, schedule);
  return f;
}

struct ReportPage {
  RunResult run;
  std::string html;  // "" if no page was written
};

// `mlsys report ARGS... -o <temp dir>/<tag>.html`.
inline ReportPage reportPage(const std::string& tag, std::vector<std::string> args) {
  const std::string out = tempPath(tag + ".html");
  std::filesystem::remove(out);
  args.insert(args.begin(), "report");
  args.insert(args.end(), {"-o", out});
  ReportPage pg;
  pg.run = runMlsys(args);
  if (std::filesystem::exists(out)) pg.html = readText(out);
  return pg;
}

// The page of `mlsys report ARGS...`, expecting exit code `exit_code` (a failure naming stderr
// otherwise).
inline std::string reportHtml(const std::string& tag, const std::vector<std::string>& args, int exit_code = 0) {
  ReportPage pg = reportPage(tag, args);
  EXPECT_EQ(pg.run.exit_code, exit_code) << pg.run.err;
  return pg.html;
}

// The page of `mlsys report ARGS...` for an invalid schedule: exit code 1 and `rule` (e.g. "V8")
// named on stderr; the page is still written.
inline std::string invalidReportHtml(const std::string& tag, const std::vector<std::string>& args,
                                     const std::string& rule) {
  ReportPage pg = reportPage(tag, args);
  EXPECT_EQ(pg.run.exit_code, 1) << pg.run.err;
  EXPECT_NE(pg.run.err.find(rule), std::string::npos) << pg.run.err;
  EXPECT_FALSE(pg.html.empty()) << "the page is written even for an invalid schedule";
  return pg.html;
}

// Headless Chromium, as the screenshot tests run it ("" when it is not installed).
inline std::string chromium() {
  const char* path = "/usr/bin/chromium";
  return ::access(path, X_OK) == 0 ? path : "";
}

// Chromium at 1400 px wide on `page`, with `mode` "--screenshot=PNG" or "--dump-dom"; a fresh
// profile each time (removed after).
inline RunResult runChromium(const std::string& page, const std::string& mode, int height, const std::string& tag) {
  const std::string profile = tempPath("chromium-profile-" + tag);
  RunResult r = runCommand(
      {"timeout", "90", chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
       "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
       "--user-data-dir=" + profile, mode, "--window-size=1400," + std::to_string(height), "file://" + page});
  std::error_code ec;
  std::filesystem::remove_all(profile, ec);
  return r;
}

}  // namespace mlsys::test
