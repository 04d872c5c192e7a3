// The short fuzz run of CI: tests/fuzz/run.sh builds the three libFuzzer targets (clang, ASan +
// UBSan) in <build>/fuzz and runs each for a few seconds from the seed corpus; it fails on any
// crash, sanitizer report, leak, timeout or fuzz-harness check (e.g. closed form != walk).
// Longer runs: tests/fuzz/run.sh SECONDS (see tests/fuzz/README.md and bench/RESULTS.md).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "tests/test_util.h"

TEST(FuzzSmoke, EveryTargetRunsCleanForAFewSeconds) {
  if (std::system("command -v clang++ >/dev/null 2>&1 || command -v clang++-14 >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "clang++ not found (apt-get install clang libclang-rt-14-dev); fuzz smoke run skipped";
  const std::string log = mlsys::test::tempPath("fuzz_smoke.log");
  const std::string cmd = "MLSYS_FUZZ_BUILD_DIR='" + std::string(MLSYS_BINARY_DIR) + "/fuzz' bash '" +
                          mlsys::test::sourceDir() + "/tests/fuzz/run.sh' 5 >'" + log + "' 2>&1";
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc)) << cmd;
  EXPECT_EQ(WEXITSTATUS(rc), 0) << "tests/fuzz/run.sh failed:\n" << mlsys::test::readText(log);
}
