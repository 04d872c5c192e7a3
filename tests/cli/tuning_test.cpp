// The tuner's multi-machine mode (README "Tuning"): tests/tune_pg_test.py starts a throwaway
// PostgreSQL server (its socket reachable by its own user only: a 0700 folder and socket, no TCP),
// runs bench/tune.py workers against one study, kills one mid-trial and checks that every worker
// contributed trials, that the killed trial failed and ran again, that every other failed trial was
// a live worker's, failed as stale by a late heartbeat on a loaded machine, and ran again too,
// and that the study resumes. tests/tune_secrets_test.py checks that tune.py masks the --storage password in its
// messages and passes the URL to its worker processes in the environment, not on their command
// lines. tests/tune_output_test.py checks what a person reads: values rounded to their key's
// resolution, tied trials raced (irace-style), --trials on the main command, the dashboard line.
// Skipped, with the script's message, where PostgreSQL, python3-optuna or psycopg2 are
// missing (the scripts exit 77).
#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace mlsys {

TEST(Tuning, PostgresStudySharedByWorkersSurvivesAKill) {
  const std::string script = test::sourceDir() + "/tests/tune_pg_test.py";
  test::RunResult r = test::runCommand({"python3", script, "--mlsys", MLSYS_BIN});
  if (r.exit_code == 77) GTEST_SKIP() << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(Tuning, StoragePasswordNeitherPrintedNorOnWorkerCommandLines) {
  const std::string script = test::sourceDir() + "/tests/tune_secrets_test.py";
  test::RunResult r = test::runCommand({"python3", script, "--mlsys", MLSYS_BIN});
  if (r.exit_code == 77) GTEST_SKIP() << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(Tuning, OutputRoundedRacedAndCounted) {
  const std::string script = test::sourceDir() + "/tests/tune_output_test.py";
  test::RunResult r = test::runCommand({"python3", script, "--mlsys", MLSYS_BIN});
  if (r.exit_code == 77) GTEST_SKIP() << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

}  // namespace mlsys
