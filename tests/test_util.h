// Helpers shared by the tests: locating instances, running the CLI, temp files.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cost/evaluator.h"

namespace mlsys::test {

std::string sourceDir();                 // the project root
std::string sharedBenchmarksDir();       // ../shared/benchmarks ("" if absent)
std::vector<std::string> sharedBenchmarks();  // sorted paths; empty if the folder is absent
std::string sharedBenchmark(const std::string& stem);  // e.g. "mlsys-2026-5"; "" if absent
std::string instancePath(const std::string& rel);  // instances/<rel>
std::string tempPath(const std::string& name);     // a fresh path under the test temp dir
void writeText(const std::string& path, const std::string& text);
std::string readText(const std::string& path);

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};
// Runs the mlsys binary with `args` (shell-quoted), capturing stdout and stderr; `prefix` is a
// command put in front (e.g. {"taskset", "-c", "0"}).
RunResult runMlsys(const std::vector<std::string>& args, const std::vector<std::string>& prefix = {});
// Runs any command (argv[0] looked up in PATH), capturing stdout and stderr.
RunResult runCommand(const std::vector<std::string>& argv);
// The "evaluated" column of a move's row in solve's closing move table on stderr (0 if the
// move has no row: disabled, or never run).
long movesEvaluated(const std::string& err, const std::string& move);

// A stop function firing after `seconds` (a safety net for solvers the tests expect to finish).
std::function<bool()> after(double seconds);

Problem problemFromJson(const std::string& json);
Schedule scheduleFromJson(const std::string& json, const Problem& p);

}  // namespace mlsys::test
