// Helpers shared by the tests: locating instances, running the CLI, temp files.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cost/pricing/evaluator.h"

namespace mlsys::test {

std::string sourceDir();                               // the project root
std::string sharedBenchmarksDir();                     // ../shared/benchmarks ("" if absent)
std::vector<std::string> sharedBenchmarks();           // sorted paths; empty if the folder is absent
std::string sharedBenchmark(const std::string& stem);  // e.g. "mlsys-2026-5"; "" if absent
std::string instancePath(const std::string& rel);      // instances/<rel>
std::string tempPath(const std::string& name);         // a fresh path under the test temp dir
void writeText(const std::string& path, const std::string& text);
std::string readText(const std::string& path);

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};
// Runs the mlsys binary with `args` (no shell), capturing stdout and stderr; `prefix` is a
// command put in front (e.g. {"taskset", "-c", "0"}).
RunResult runMlsys(const std::vector<std::string>& args, const std::vector<std::string>& prefix = {});
// Runs any command (argv[0] looked up in PATH), capturing stdout and stderr; the exit code is
// 128 + N if it was killed by signal N (tests/child_process.h, child::run).
RunResult runCommand(const std::vector<std::string>& argv);
// The "evaluated" column of a move's row in solve's closing move table on stderr (0 if the
// move has no row: disabled, or never run).
long movesEvaluated(const std::string& err, const std::string& move);

// The stop function of a solver the test expects to finish: never fires. No test bounds a solver
// by wall-clock time (a loaded machine would turn that into a failure); CTest's timeout is the net.
std::function<bool()> neverStop();

// The significant digits of a number as printed for people ("16,284,058" -> 8, "0.00012" -> 2,
// "123,456,790" -> 8: trailing zeros of an integer do not count).
int significantDigits(const std::string& token);

Problem problemFromJson(const std::string& json);
// The model options of one reading: the spec's, or k_limit=reduction.
ModelOptions reading(bool reduction);
Schedule scheduleFromJson(const std::string& json, const Problem& p);

}  // namespace mlsys::test
