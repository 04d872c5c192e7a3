#include "engine/cli/cli.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include <cxxopts.hpp>
#include <fmt/format.h>
#include <oneapi/tbb/global_control.h>

#include "cost/bound/bound.h"
#include "cost/model/json_util.h"
#include "cost/model/number_format.h"
#include "cost/pricing/evaluator.h"
#include "engine/cli/commands.h"
#include "engine/cli/json_out.h"
#include "engine/io/config.h"
#include "engine/io/files.h"
#include "engine/io/output.h"

namespace mlsys {

ModelOptions modelFrom(const cxxopts::ParseResult& r, ModelOptions base) {
  ModelOptions m = base;
  if (r.count("model"))
    for (const auto& kv : r["model"].as<std::vector<std::string>>()) {
      try {
        m.setAssignment(kv);
      } catch (const InputError& e) {
        throw UsageError(std::string("--model: ") + e.what());
      }
    }
  return m;
}

std::vector<std::string> setArguments(const cxxopts::ParseResult& r) {
  std::vector<std::string> sets;
  for (const cxxopts::KeyValue& kv : r.arguments())
    if (kv.key() == "set") sets.push_back(kv.value());
  return sets;
}

SearchConfig configFrom(const cxxopts::ParseResult& r) {
  const std::string path = r.count("config") ? findConfig(r["config"].as<std::string>()) : "";
  try {
    return loadConfig(path, setArguments(r));
  } catch (const ConfigOverrideSyntaxError& e) {
    throw UsageError(e.what());
  }
}

ModelOptions modelFromConfigAndFlags(const cxxopts::ParseResult& r) { return modelFrom(r, configFrom(r).model); }

const char* const kExitCodesHelp =
    "Exit codes:\n"
    "  0      success (evaluate, report: the schedule is valid)\n"
    "  1      bad input (problem, schedule, config or --set value: the message names the field), an invalid\n"
    "         schedule, or a runtime error\n"
    "  2      usage error (unknown command or option, missing or malformed arguments)\n"
    "  128+N  stopped by signal N (143 SIGTERM, 130 SIGINT, 129 SIGHUP); solve writes its best schedule first\n";

std::string exitCodesHelp(const std::string& command) {
  const std::string bad = "bad input (a file, the config or a --set value: the message names the field and index)";
  const std::string usage = "  2      usage error (unknown option, missing or malformed arguments)\n";
  if (command == "solve")
    return "Exit codes:\n"
           "  0      a valid schedule is on disk (whatever stopped the run: deadline, optimal, target, stall, ...)\n"
           "  1      " +
           bad +
           ",\n"
           "         or the best schedule, --stats or --trace could not be written\n" +
           usage +
           "  128+N  stopped by signal N (143 SIGTERM, 130 SIGINT, 129 SIGHUP), the best schedule written first\n";
  if (command == "evaluate")
    return "Exit codes:\n"
           "  0      the schedule is valid\n"
           "  1      the schedule is invalid (every violation is listed), or " +
           bad + "\n" + usage;
  if (command == "bound") return "Exit codes:\n  0      the bound is printed\n  1      " + bad + "\n" + usage;
  if (command == "report")
    return "Exit codes:\n"
           "  0      the page is written and every schedule is valid\n"
           "  1      a schedule is invalid (the page is still written), or " +
           bad + "\n" + usage;
  if (command == "generate")
    return "Exit codes:\n  0      the problem is written\n  1      the output cannot be written\n" + usage;
  return kExitCodesHelp;
}

int printHelp(const cxxopts::Options& o, const std::string& command, const std::string& notes) {
  std::cout << o.help() << "\n" << notes << (notes.empty() ? "" : "\n") << exitCodesHelp(command);
  return 0;
}

cxxopts::ParseResult parseOrThrow(cxxopts::Options& o, int argc, char** argv) {
  try {
    return o.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    throw UsageError(e.what());
  }
}

// A positive finite number, the whole argument: "1 2", "1s", "0x10", "nan" and "inf" are refused
// (a strtod-style parse would take the "1" of "1s" and drop the rest). `what`: "seconds", ...
double parsePositiveText(const std::string& text, const std::string& flag, const std::string& what) {
  double v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto [ptr, ec] = std::from_chars(b, e, v, std::chars_format::general);
  if (text.empty() || ec != std::errc() || ptr != e || !std::isfinite(v))
    throw UsageError(flag + ": expected a number of " + what + ", got '" + printable(text) + "'");
  if (!(v > 0)) throw UsageError(flag + " must be positive, got '" + printable(text) + "'");
  return v;
}

double parseSecondsText(const std::string& text, const std::string& flag) {
  const double v = parsePositiveText(text, flag, "seconds");
  // As search.seconds: past ~9.2e9 s the budget overflows the clock's 64-bit nanoseconds.
  if (v > kMaxSeconds)
    throw UsageError(flag + " must be at most " + fmt::format("{:.0f}", kMaxSeconds) + " (about 31 years), got '" +
                     printable(text) + "'");
  return v;
}

cxxopts::ParseResult parseFileCommand(cxxopts::Options& o, int argc, char** argv, const std::string& filesHelp,
                                      bool modelOnly) {
  o.add_options()("c,config",
                  modelOnly ? "YAML config file: its model section applies (the file is checked whole), as in solve"
                            : "YAML config file (see configs/ and README); the flags and --set override it",
                  cxxopts::value<std::string>())(
      "set",
      modelOnly ? "Override a key of the config, KEY=VALUE (repeatable); only model keys matter here: "
                  "--set model.k_limit=reduction"
                : "Override one config key, KEY=VALUE (repeatable; checked like the file): --set sa.t0=0.001, "
                  "--set search.workers=[beam,sa]",
      cxxopts::value<std::vector<std::string>>())("model",
                                                  "Model option KEY=VALUE (repeatable): " + ModelOptions::choicesText(),
                                                  cxxopts::value<std::vector<std::string>>())(
      "max-input-mb", "Largest input file read, in MiB (default 512); a bigger one, or /dev/zero, is an error",
      cxxopts::value<std::string>())("positional", "", cxxopts::value<std::vector<std::string>>());
  o.parse_positional({"positional"});
  o.positional_help(filesHelp);
  return parseOrThrow(o, argc, argv);
}

ReadLimits readLimits(const cxxopts::ParseResult& r, double wait_s) {
  ReadLimits lim;
  if (r.count("max-input-mb")) {
    const std::string text = r["max-input-mb"].as<std::string>();
    double v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::general);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v) || !(v > 0) ||
        v > 1e7)
      throw UsageError("--max-input-mb: expected a number of MiB in (0, 1e7], got '" + printable(text) + "'");
    lim.max_bytes = v * 1024 * 1024;
  }
  lim.give_up_at = monotonicSeconds() + wait_s;
  return lim;
}

std::optional<double> secondsArg(const cxxopts::ParseResult& r, const std::string& flag) {
  if (!r.count("seconds")) return std::nullopt;
  return parseSecondsText(r["seconds"].as<std::string>(), flag);
}

std::vector<std::string> positionals(const cxxopts::ParseResult& r, size_t n, const std::string& usage) {
  std::vector<std::string> v;
  if (r.count("positional")) v = r["positional"].as<std::vector<std::string>>();
  if (v.size() != n) throw UsageError("expected " + std::to_string(n) + " file arguments\nusage: " + usage);
  return v;
}

namespace {

const char* const kCommands = "solve, evaluate, bound, report, generate, import";

std::string usageText() {
  return "mlsys " MLSYS_VERSION
         " - schedule search for the MLSys 2026 graph-scheduling problem\n"
         "\n"
         "Usage:\n"
         "  mlsys PROBLEM.json OUT.json                 contest form: solve with the default budget\n"
         "  mlsys solve PROBLEM.json OUT.json [options] search; a valid schedule is on disk within 100 ms up to\n"
         "                                              ~10,000 ops (0.3 s at 100,000, 1.6 s at 300,000: see engine/cli/REFERENCE.md)\n"
         "  mlsys evaluate PROBLEM.json SOLUTION.json   check validity and price a schedule\n"
         "  mlsys bound PROBLEM.json [-s S]             a lower bound on the latency\n"
         "  mlsys report PROBLEM.json SOLUTION.json [B.json] -o report.html   an HTML picture of a schedule, or of two compared\n"
         "  mlsys generate --family F --size N [--seed S] [-o FILE]  write a generated problem\n"
         "  mlsys import MODEL.onnx -o PROBLEM.json [--dim NAME=VALUE]  a problem from an ONNX model (python3-onnx)\n"
         "  mlsys --help | --version\n"
         "\n"
         "Run 'mlsys COMMAND --help' for the options of a command. A short option means the same in every\n"
         "command that has it: -s --seconds (a time budget), -t --threads, -c --config, -o --output,\n"
         "-q --quiet, -h --help.\n"
         "\n" +
         exitCodesHelp("");
}

int cmdBound(int argc, char** argv) {
  cxxopts::Options o("mlsys bound", "A lower bound on the latency of any valid schedule.");
  o.add_options()("h,help", "Show help")("json", "Print the bound and its parts as JSON")(
      "s,seconds",
      "Time budget from the start of reading; past it the remaining components get their quick floors "
      "(reading and the floors take time linear in the size: 0.36 s at 100,000 ops with -s 0.3)",
      cxxopts::value<std::string>()->default_value("10"))(
      "cover-limit",
      "Components of up to N ops get the exact cover; larger ones the floors and the share bound. Lower "
      "values check the large-component arguments on small graphs (0: none covered)",
      cxxopts::value<int>()->default_value("20"))(
      "share-parts",
      "The share bound treats an op as closed when it lies in at most N possible parts (lower values "
      "check the open ops' arguments on small graphs)",
      cxxopts::value<int>()->default_value("24"))(
      "t,threads", "Threads for the linear relaxations' part floors, 0 = every CPU this process may use",
      cxxopts::value<int>()->default_value("0"))(
      "lp-parts",
      "A group of ops beyond the cover limit (up to 64 ops) gets the cover's linear relaxation when at most N "
      "sets of its ops are grown to list its valid parts (0: none; with --cover-limit 0 it checks that "
      "argument on small graphs)",
      cxxopts::value<long>()->default_value("300000"))(
      "large-from",
      "A component of at least N ops beyond the cover gets the large-parts relaxation: its parts of up to "
      "--large-part-ops ops listed, its ops in larger parts capped at their shares (lower values check that "
      "argument on small graphs)",
      cxxopts::value<int>()->default_value("65"))(
      "large-part-ops",
      "The largest parts the large-parts relaxation lists: rounds of 4, 5, ... up to N ops in time (0: off)",
      cxxopts::value<int>()->default_value("8"))(
      "without",
      "Switch one argument of the bound off (repeatable): " + boundArgList() +
          ". The bound then rests on the others (README, \"The lower bound\")",
      cxxopts::value<std::vector<std::string>>());
  auto r = parseFileCommand(o, argc, argv, "PROBLEM.json", true);
  if (r.count("help"))
    return printHelp(
        o, "bound",
        "Examples:\n"
        "  mlsys bound instances/examples/ex5.json\n"
        "  mlsys bound P.json --json --model k_limit=reduction   # each part with the argument that priced it\n"
        "  mlsys bound P.json --without cover --without lp       # the bound without two of its arguments\n");
  auto files =
      positionals(r, 1, "mlsys bound PROBLEM.json [-s S] [--json] [-c CONFIG] [--set model.K=V]... [--model K=V]...");
  const double seconds = parseSecondsText(r["seconds"].as<std::string>(), "--seconds");
  ModelOptions m = modelFromConfigAndFlags(r);
  Deadline dl;
  dl.setBudget(seconds);
  Problem p = parseProblemFile(files[0], readLimits(r, seconds));
  BoundOptions bo;
  bo.give_up = [&] { return dl.expired(); };
  bo.max_cover_ops = r["cover-limit"].as<int>();
  if (bo.max_cover_ops < 0 || bo.max_cover_ops > 20)
    throw UsageError("--cover-limit must be an integer from 0 to 20, got " + std::to_string(bo.max_cover_ops));
  bo.share_parts = r["share-parts"].as<int>();
  if (bo.share_parts < 0 || bo.share_parts > 1000)
    throw UsageError("--share-parts must be an integer from 0 to 1000, got " + std::to_string(bo.share_parts));
  if (r["threads"].as<int>() < 0) throw UsageError("--threads must be >= 0");
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism,
                         static_cast<size_t>(resolveThreads(r["threads"].as<int>())));
  bo.lp_parts = r["lp-parts"].as<long>();
  if (bo.lp_parts < 0 || bo.lp_parts > 100'000'000)
    throw UsageError("--lp-parts must be an integer from 0 to 100000000, got " + std::to_string(bo.lp_parts));
  bo.large_from = r["large-from"].as<int>(), bo.large_part_ops = r["large-part-ops"].as<int>();
  if (bo.large_from < 1 || bo.large_part_ops < 0 || bo.large_part_ops > 12)
    throw UsageError("--large-from must be at least 1 and --large-part-ops from 0 to 12, got " +
                     std::to_string(bo.large_from) + " and " + std::to_string(bo.large_part_ops));
  if (r.count("without"))
    for (const std::string& name : r["without"].as<std::vector<std::string>>()) {
      const std::optional<BoundArg> a = boundArgByName(name);
      if (!a) throw UsageError("--without: unknown argument '" + name + "'; the arguments are: " + boundArgList());
      bo.args.disable(*a);
    }
  LowerBound lb = lowerBound(p, m, bo);
  if (r.count("json")) {
    std::cout << boundJson(lb, m, bo.args, attributeBound(p, m, bo, lb));
    return 0;
  }
  auto count = [](size_t n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); };
  auto ms = [](double s) { return s < 1 ? fmt::format("{:.1f} ms", s * 1e3) : humanSeconds(s); };
  int covers = 0, floors = 0, lps = 0, shares = 0, large = 0;
  for (const BoundComponent& c : lb.components) {
    for (const BoundGroup& g : c.groups)
      (g.method == BoundMethod::Cover ? covers : g.method == BoundMethod::Lp ? lps : floors)++;
    shares += c.by_shares && !c.by_large_parts ? 1 : 0;
    large += c.by_large_parts ? 1 : 0;
  }
  std::cout << "model: " << m.describe() << "\n"
            << "compute: " << humanLatency(lb.compute)
            << "  (each op: base_cost per native tile of the smallest grid it can be charged on)\n"
            << "traffic: " << humanLatency(lb.traffic) << "  (graph inputs loaded once + graph outputs stored once)\n"
            << "parts: " << humanLatency(lb.parts) << "  (" << count(lb.components.size(), "fusion component") << "; "
            << count(covers, "group") << " priced by the cheapest cover, "
            << (lps ? std::to_string(lps) + " by its linear relaxation, " : std::string()) << floors << " by floors"
            << (shares ? "; " + count(shares, "component") + " raised by the share bound" : std::string())
            << (large ? "; " + count(large, "component") + " by the large-parts relaxation" : std::string())
            << "; --json lists them)\n"
            << "lower bound: " << humanLatency(lb.value()) << "  (--json: the exact value)\n"
            << (bo.args.off ? "without: " + offArgs(bo.args) + "\n" : std::string()) << "time: floors "
            << ms(lb.timing.floors_s) << ", components " << ms(lb.timing.components_s) << ", shares "
            << ms(lb.timing.shares_s) << ", priced passes " << ms(lb.timing.prices_s) << " (" << lb.timing.price_passes
            << "), linear relaxations " << ms(lb.timing.lp_s) << "\n";
  return 0;
}

namespace {
// The one piece of process-wide state: where a signal is routed. cmdSolve points it at its run's
// stop source before it installs the handler; nothing below the CLI reads it.
std::atomic<StopSource*> g_signal_target{nullptr};
}  // namespace

extern "C" void onSignal(int sig) {
  StopSource* stop = g_signal_target.load();
  // Before the first schedule exists there is nothing to write: say so and exit at once (only
  // async-signal-safe calls: no stdio, no allocation).
  if (stop == nullptr || !stop->resultExists()) {
    static constexpr char head[] = "mlsys: stopped by signal ";
    static constexpr char tail[] = " before the first schedule existed; nothing written\n";
    const char num[2] = {static_cast<char>('0' + sig / 10 % 10), static_cast<char>('0' + sig % 10)};
    ssize_t ignored = ::write(STDERR_FILENO, head, sizeof head - 1);
    ignored = ::write(STDERR_FILENO, sig < 10 ? num + 1 : num, sig < 10 ? 1 : 2);
    ignored = ::write(STDERR_FILENO, tail, sizeof tail - 1);
    (void)ignored;
    ::_exit(128 + sig);
  }
  // The search, the evaluators and the writer see it through the run's Deadline and tokens.
  stop->request(sig);
}

// Refuses (usage error) when two of the named files are one: a run must never overwrite its
// problem, nor write its stats or trace over its output.
void checkDistinctFiles(const std::vector<std::pair<std::string, std::string>>& files) {
  for (size_t i = 0; i < files.size(); ++i)
    for (size_t j = i + 1; j < files.size(); ++j)
      if (!files[i].second.empty() && !files[j].second.empty() && sameFile(files[i].second, files[j].second))
        throw UsageError(files[i].first + " ('" + files[i].second + "') and " + files[j].first + " ('" +
                         files[j].second + "') are the same file");
}

int cmdSolve(int argc, char** argv, Deadline& deadline, bool contestForm) {
  // Only solve catches SIGTERM/SIGINT/SIGHUP (to write its best and exit 128+N); other commands die.
  g_signal_target.store(deadline.stopSource());
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  cxxopts::Options o("mlsys solve", "Search for the lowest-latency valid schedule within a wall-clock budget.");
  o.add_options()("s,seconds",
                  "Wall-clock budget for the whole process (default: search.seconds of the config, else from the "
                  "instance size, inside the contest limit)",
                  cxxopts::value<std::string>())(
      "t,threads", "Worker threads, 0 = every CPU this process may use (default: search.threads, else 0)",
      cxxopts::value<int>())("seed", "Random seed (default: search.seed, else 1)", cxxopts::value<uint64_t>())(
      "max-evals", "Stop after N move evaluations (with --threads 1: byte-identical output)",
      cxxopts::value<int64_t>())("target",
                                 "Stop as soon as a schedule at or below this latency is written (stop reason "
                                 "`target`)",
                                 cxxopts::value<std::string>())(
      "stall-seconds", "Stop after this many seconds without an improvement (stop reason `stall`)",
      cxxopts::value<std::string>())("init",
                                     "Start from this schedule (checked: if it is not valid, a warning says why and "
                                     "the run starts as usual)",
                                     cxxopts::value<std::string>())(
      "stats", "Write a JSON summary (best latency, time to first write and to best, evaluations/s) to this file",
      cxxopts::value<std::string>())("print-config",
                                     "Print the resolved config (file, --set and flags) as YAML and exit")(
      "trace", "Write a CSV of improvements (seconds, worker, latency) to this file", cxxopts::value<std::string>())(
      "exact",
      "Run the exact solver first (graphs of up to 20 ops), within search.exact_share of the budget; the search runs after it")(
      "q,quiet", "No progress on stderr")(
      "v,verbose",
      "After each progress row, the best per worker kind and constructor, the share of accepted annealing moves "
      "and the elite pool's size")("h,help", "Show help");
  auto r = parseFileCommand(o, argc, argv, "PROBLEM.json OUT.json", false);
  if (r.count("help"))
    return printHelp(o, "solve",
                     "Precedence: a flag, then --set, then the --config file, then the built-in default.\n"
                     "Examples:\n"
                     "  mlsys solve instances/examples/ex5.json out.json -s 2 -t 2\n"
                     "  mlsys solve P.json out.json -c contest --stats s.json --trace t.csv   # then: mlsys report\n"
                     "  mlsys solve P.json out.json --init best.json --target 6734.4 --stall-seconds 5\n"
                     "  mlsys solve P.json out.json --set sa.t0=0.001 --model k_limit=reduction\n");
  std::vector<std::string> files;
  if (r.count("print-config") && !r.count("positional")) files = {"", ""};
  else
    files =
        positionals(r, 2, contestForm ? "mlsys PROBLEM.json OUT.json" : "mlsys solve PROBLEM.json OUT.json [options]");
  SolveOptions so;
  so.out = files[1];
  // The self-check's test seam (tests/cli/bound_violation_test.cpp): a wrong argument planted in
  // the bound, every part floor multiplied. Never set outside the tests.
  if (const char* plant = std::getenv("MLSYS_TEST_PLANT_PART_SCALE")) so.bound_args.test_part_scale = std::atof(plant);
  // Flags are checked before the config is read: a usage error is reported as such (exit 2).
  const std::optional<double> seconds = secondsArg(r, "--seconds");
  if (r.count("threads") && r["threads"].as<int>() < 0) throw UsageError("--threads must be >= 0");
  if (r.count("max-evals")) {
    so.max_evals = r["max-evals"].as<int64_t>();
    if (so.max_evals <= 0) throw UsageError("--max-evals must be positive");
  }
  if (r.count("target")) {
    so.target = parsePositiveText(r["target"].as<std::string>(), "--target", "latency units");
  }
  if (r.count("stall-seconds")) {
    so.stall_s = parseSecondsText(r["stall-seconds"].as<std::string>(), "--stall-seconds");
  }
  if (r.count("trace")) so.trace = r["trace"].as<std::string>();
  const std::string stats = r.count("stats") ? r["stats"].as<std::string>() : std::string();
  if (r.count("init")) so.init = r["init"].as<std::string>();
  so.quiet = r.count("quiet") > 0;
  so.verbose = r.count("verbose") > 0;
  so.exact = r.count("exact") > 0;
  // The settings: built-in defaults < the config file < --set < flags. Config errors before any work.
  SearchConfig cfg = configFrom(r);
  if (seconds) cfg.seconds = *seconds;
  if (r.count("threads")) cfg.threads = r["threads"].as<int>();
  if (r.count("seed")) cfg.seed = r["seed"].as<uint64_t>();
  cfg.model = modelFrom(r, cfg.model);
  if (r.count("print-config")) {
    std::cout << configToYaml(cfg);
    return 0;
  }
  useConfig(so, cfg);  // solve() does not read the file again
  // Named in the start line and --stats (solve() does not read them again).
  so.config = r.count("config") ? findConfig(r["config"].as<std::string>()) : "";
  so.set = setArguments(r);
  // solve() caps the count (resolveThreads); say so before the run starts.
  if (so.threads > maxThreads())
    std::cerr << fmt::format("mlsys: {} {} capped to {}\n", r.count("threads") ? "--threads" : "search.threads",
                             so.threads, maxThreads());
  checkDistinctFiles({{"the problem", files[0]}, {"the output", so.out}, {"--stats", stats}, {"--trace", so.trace}});
  // Every output path is checked before the problem is read and the search starts (a directory, a
  // missing or read-only directory): an error now, not after the budget is spent.
  OutputTarget::open(so.out, "cannot write the output");
  if (!stats.empty()) {
    OutputTarget::open(stats, "--stats: cannot write");
    // Temporary files of earlier runs killed during a write (their process is gone).
    if (int n = removeStaleTemps(stats))
      if (!so.quiet) std::cerr << fmt::format("removed {} stale temporary file(s) of '{}'\n", n, stats);
  }
  // Not destroyed (see solve): the process ends with _Exit.
  // A FIFO or pipe as the problem is waited for within the budget (10 s when it is "auto").
  const Problem& p =
      *new Problem(parseProblemFile(files[0], readLimits(r, cfg.seconds > 0 ? cfg.seconds - deadline.elapsed() : 10)));
  RunLog log(deadline, so.quiet);
  so.leak_at_end = true;  // the process ends with _Exit (see SolveOptions)
  SolveOutcome outcome = solve(p, so, deadline, log);
  return reportSolve(p, so, stats, deadline, log, outcome);
}

}  // namespace

int runCli(int argc, char** argv, Deadline& deadline) {
  try {
    if (argc < 2) {
      std::cerr << usageText();
      return 2;
    }
    std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
      std::cout << usageText();
      return 0;
    }
    if (cmd == "--version" || cmd == "-V") {
      std::cout << "mlsys " << MLSYS_VERSION << " (git " << MLSYS_GIT_HASH << ")\n";
      return 0;
    }
    if (cmd == "evaluate") return cmdEvaluate(argc - 1, argv + 1);
    if (cmd == "bound") return cmdBound(argc - 1, argv + 1);
    if (cmd == "report") return cmdReport(argc - 1, argv + 1);
    if (cmd == "generate") return cmdGenerate(argc - 1, argv + 1);
    if (cmd == "import") return cmdImport(argc - 1, argv + 1);
    if (cmd == "solve") return cmdSolve(argc - 1, argv + 1, deadline, false);
    // The contest form, `mlsys PROBLEM.json OUT.json`: a first argument that names a file (a path,
    // a name with an extension, or an existing file). Any other word is a mistyped command.
    if (!cmd.empty() && cmd[0] != '-') {
      if (cmd.find_first_of("./") != std::string::npos || ::access(cmd.c_str(), F_OK) == 0)
        return cmdSolve(argc, argv, deadline, true);
      throw UsageError("unknown command '" + cmd + "' (commands: " + kCommands +
                       "; or the contest form 'mlsys PROBLEM.json OUT.json')");
    }
    throw UsageError("unknown option '" + cmd + "' (commands: " + std::string(kCommands) + ")");
  } catch (const UsageError& e) {
    std::cerr << "mlsys: usage error: " << e.what() << "\nRun 'mlsys --help' for usage.\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << "mlsys: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "mlsys: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace mlsys
