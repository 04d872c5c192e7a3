// Sub-commands implemented outside cli.cpp, and what the commands share. Each takes the arguments after the command
// name (argv[0] is the command) and returns the exit code; bad input throws InputError.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "cost/model/model.h"
#include "engine/search/solve.h"

namespace mlsys {

// A command-line mistake: runCli prints "mlsys: usage error: <what>" and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Shared by every command (defined in engine/cli/cli.cpp).
// `base` with the --model assignments applied; bad values are UsageError.
ModelOptions modelFrom(const cxxopts::ParseResult& r, ModelOptions base = {});
// The --set values as given (cxxopts would split a list value such as [beam,sa] at its commas).
std::vector<std::string> setArguments(const cxxopts::ParseResult& r);
// The config of -c (a bare name also looks in the bundle's configs/) with --set applied; a
// malformed --set is a UsageError, a bad file or value an InputError naming the key.
SearchConfig configFrom(const cxxopts::ParseResult& r);
// The model a command that prices schedules uses: --model over --set over -c's file over the
// built-in default, as in solve (evaluate, bound and report price what solve wrote under one
// config the same way).
ModelOptions modelFromConfigAndFlags(const cxxopts::ParseResult& r);
// The exit codes of all commands (`mlsys --help`).
extern const char* const kExitCodesHelp;
// The exit codes of one command ("solve", "evaluate", "bound", "report", "generate"; "" for all).
std::string exitCodesHelp(const std::string& command);
// `--help` of a command: every option of `o`, then `notes` (its examples, if any), then its exit
// codes, on stdout. Returns 0, the exit code of --help.
int printHelp(const cxxopts::Options& o, const std::string& command, const std::string& notes = "");
cxxopts::ParseResult parseOrThrow(cxxopts::Options& o, int argc, char** argv);  // cxxopts errors -> UsageError
// The most seconds a budget may have (-s of every command, search.seconds): beyond ~9.2e9 s the
// deadline would overflow the clock's 64-bit nanoseconds.
inline constexpr double kMaxSeconds = 1e9;
// A -s/--seconds argument, strictly: one finite number in (0, kMaxSeconds], nothing around it;
// UsageError naming `flag` otherwise.
double parseSecondsText(const std::string& text, const std::string& flag);
// -s/--seconds of a command that declares it as a string option (nullopt when absent).
std::optional<double> secondsArg(const cxxopts::ParseResult& r, const std::string& flag);
// The end of the option setup of a command that reads files (solve, evaluate, bound, report):
// after the command's own options, the ones they share (-c --config FILE, --set KEY=VALUE and
// --model KEY=VALUE, both repeatable, --max-input-mb N: the largest input file read), and the
// file arguments (`filesHelp` in the usage line, read by `positionals`); then parseOrThrow.
// `modelOnly`: the command reads only the config's model (evaluate, bound, report), which its
// help for -c and --set says.
cxxopts::ParseResult parseFileCommand(cxxopts::Options& o, int argc, char** argv, const std::string& filesHelp,
                                      bool modelOnly);
// The read limits of a command: --max-input-mb (default ReadLimits::kDefaultMaxMb) and a wait
// for data (a FIFO or pipe) of at most `wait_s` seconds from now.
ReadLimits readLimits(const cxxopts::ParseResult& r, double wait_s);
// The positional file arguments; exactly n of them, or UsageError naming `usage`.
std::vector<std::string> positionals(const cxxopts::ParseResult& r, size_t n, const std::string& usage);

int cmdEvaluate(int argc, char** argv);  // engine/cli/evaluate.cpp
int cmdReport(int argc, char** argv);    // engine/cli/report_command.cpp
int cmdGenerate(int argc, char** argv);  // engine/cli/generate.cpp
int cmdImport(int argc, char** argv);    // engine/cli/import.cpp (runs the Python importer in its place)

// The end of `solve` (engine/cli/solve_report.cpp): the summary and the move table on stderr
// (unless quiet), --stats; returns the exit code (128+N after signal N).
int reportSolve(const Problem& p, const SolveOptions& opt, const std::string& stats, const Deadline& deadline,
                const RunLog& log, const SolveOutcome& o);

}  // namespace mlsys
