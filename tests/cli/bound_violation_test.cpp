// The self-check from the command line (issue 50, item 5): with a wrong argument planted in the
// bound (the test seam MLSYS_TEST_PLANT_PART_SCALE: every part floor tripled), `solve` logs the
// internal error naming the argument and the file, never says optimal, writes a valid schedule,
// and --stats carries bound_violation; without it, bound_violation is null.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "cost/model/json_util.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

TEST(BoundViolationCli, PlantedArgumentIsReportedInTheLogAndTheStats) {
  const std::string out = test::tempPath("bv_out.json"), stats = test::tempPath("bv_stats.json");
  const auto r =
      test::runMlsys({"solve", test::instancePath("examples/ex5.json"), out, "-s", "0.6", "-t", "1", "--stats", stats},
                     {"/usr/bin/env", "MLSYS_TEST_PLANT_PART_SCALE=3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m,
                                std::regex("internal error: lower bound [0-9.e+]+ is above a valid schedule [0-9.e+]+ "
                                           "\\(argument ([^)]*)\\); the problem and the schedule are in (\\S+);")))
      << r.err;
  EXPECT_NE(m[1].str().find("part-floors"), std::string::npos) << m[1];
  const std::string file = m[2].str();
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(r.err.find("optimal: latency"), std::string::npos) << r.err;
  EXPECT_EQ(test::runMlsys({"evaluate", test::instancePath("examples/ex5.json"), out}).exit_code, 0);
  const rapidjson::Document d = parseJsonFile(stats, "stats");
  ASSERT_TRUE(d["bound_violation"].IsObject());
  EXPECT_EQ(std::string(d["bound_violation"]["file"].GetString()), file);
  EXPECT_FALSE(d["optimal"].GetBool());
  EXPECT_EQ(d["lower_bound"].GetDouble(), 0);
  std::filesystem::remove(file);
}

TEST(BoundViolationCli, AnHonestRunHasNone) {
  const std::string out = test::tempPath("bv_out2.json"), stats = test::tempPath("bv_stats2.json");
  const auto r =
      test::runMlsys({"solve", test::instancePath("examples/ex5.json"), out, "-s", "0.3", "-t", "1", "--stats", stats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  const rapidjson::Document d = parseJsonFile(stats, "stats");
  EXPECT_TRUE(d["bound_violation"].IsNull());
}

}  // namespace
}  // namespace mlsys
