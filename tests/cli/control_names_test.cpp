// A problem's name is its file's stem, and a file name may hold any byte but '/' and NUL (issue 51
// item 6): solve's first line and report's summary print control bytes as \xNN (a raw ESC would
// drive the terminal, a raw newline would forge a log line), and report compares the --stats
// instance with the problem's name without a false warning.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/test_util.h"

namespace mlsys {
namespace {

TEST(ControlNames, SolveAndReportEscapeTheNameAndAgreeOnIt) {
  const std::string dir = test::tempPath("control_names");
  std::filesystem::create_directories(dir);
  for (const std::string& stem : {std::string("na\x1bme\nx"), std::string("cr\rname"), std::string("bad\xff\xfeutf")}) {
    SCOPED_TRACE("the stem starting with '" + stem.substr(0, 2) + "'");
    const std::string problem = dir + "/" + stem + ".json", out = dir + "/out.json", stats = dir + "/stats.json",
                      page = dir + "/page.html";
    test::writeText(problem, test::readText(test::instancePath("examples/ex1.json")));
    const test::RunResult s = test::runMlsys({"solve", problem, out, "-s", "0.3", "--stats", stats});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    const std::string first = s.err.substr(0, s.err.find('\n'));
    EXPECT_NE(first.find("mlsys "), std::string::npos) << first;
    for (char c : first) {
      EXPECT_FALSE(c == '\x1b' || c == '\r') << "a raw control byte in: " << first;
    }
    if (stem[0] == 'n') {
      EXPECT_NE(first.find("na\\x1bme\\x0ax"), std::string::npos) << first;
    }
    if (stem[0] == 'c') {
      EXPECT_NE(first.find("cr\\x0dname"), std::string::npos) << first;
    }
    const test::RunResult r = test::runMlsys({"report", problem, out, "--stats", stats, "-o", page});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("is for instance"), std::string::npos) << "a false warning: " << r.err;
    for (char c : r.err) {
      EXPECT_FALSE(c == '\x1b' || c == '\r') << "a raw control byte in: " << r.err;
    }
  }
}

}  // namespace
}  // namespace mlsys
