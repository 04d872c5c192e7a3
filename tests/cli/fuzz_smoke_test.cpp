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
  if (mlsys::test::runCommand({"sh", "-c", "command -v clang++ || command -v clang++-14"}).exit_code != 0)
    GTEST_SKIP() << "clang++ not found (apt-get install clang libclang-rt-14-dev); fuzz smoke run skipped";
  const auto r = mlsys::test::runCommand({"env", "MLSYS_FUZZ_BUILD_DIR=" + std::string(MLSYS_BINARY_DIR) + "/fuzz",
                                          "bash", mlsys::test::sourceDir() + "/tests/fuzz/run.sh", "5"});
  EXPECT_EQ(r.exit_code, 0) << "tests/fuzz/run.sh failed:\n" << r.out << r.err;
}
