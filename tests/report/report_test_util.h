// Shared by the report tests (report_test.cpp, report_compare_test.cpp): run `mlsys report` and
// read the page it wrote.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace mlsys::test {

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

}  // namespace mlsys::test
