#include "engine/cli.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <cxxopts.hpp>

#include "cost/bound.h"
#include "cost/evaluator.h"
#include "cost/interrupt.h"
#include "cost/json_util.h"
#include "engine/commands.h"
#include "engine/config.h"
#include "engine/files.h"
#include "engine/output.h"
#include "engine/solver.h"

namespace mlsys {

ModelOptions modelFrom(const cxxopts::ParseResult& r) {
  ModelOptions m;
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

void addModelOption(cxxopts::Options& o) {
  o.add_options()("model", "Model option KEY=VALUE (repeatable): matmul_compute=reduction_depth|native_depth",
                  cxxopts::value<std::vector<std::string>>());
}

cxxopts::ParseResult parseOrThrow(cxxopts::Options& o, int argc, char** argv) {
  try {
    return o.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    throw UsageError(e.what());
  }
}

std::vector<std::string> positionals(const cxxopts::ParseResult& r, size_t n, const std::string& usage) {
  std::vector<std::string> v;
  if (r.count("positional")) v = r["positional"].as<std::vector<std::string>>();
  if (v.size() != n) throw UsageError("expected " + std::to_string(n) + " file arguments\nusage: " + usage);
  return v;
}

namespace {

const char* kUsage =
    "mlsys " MLSYS_VERSION " - schedule search for the MLSys 2026 graph-scheduling problem\n"
    "\n"
    "Usage:\n"
    "  mlsys PROBLEM.json OUT.json                 contest form: solve with the default budget\n"
    "  mlsys solve PROBLEM.json OUT.json [options] search; a valid schedule is on disk within 100 ms\n"
    "  mlsys evaluate PROBLEM.json SOLUTION.json   check validity and price a schedule\n"
    "  mlsys bound PROBLEM.json                    a lower bound on the latency\n"
    "  mlsys report PROBLEM.json SOLUTION.json -o report.html   an HTML picture of a schedule\n"
    "  mlsys generate --family F --size N --seed S [-o FILE]     write a generated problem\n"
    "  mlsys --help | --version\n"
    "\n"
    "Run 'mlsys COMMAND --help' for the options of a command.\n"
    "Exit codes: 0 ok, 1 bad input / invalid schedule / runtime error, 2 usage, 128+N on signal N.\n";

std::string opsList(const std::vector<OpId>& ops) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < ops.size(); ++i) os << (i ? "," : "") << ops[i];
  os << "]";
  return os.str();
}

int cmdEvaluate(int argc, char** argv) {
  cxxopts::Options o("mlsys evaluate", "Check a schedule against every validity rule and price it exactly.");
  o.add_options()("json", "Print the result as JSON on stdout")(
      "walk", "Price every subgraph by walking each step (the oracle) instead of step classes")(
      "h,help", "Show help")("positional", "", cxxopts::value<std::vector<std::string>>());
  addModelOption(o);
  o.parse_positional({"positional"});
  o.positional_help("PROBLEM.json SOLUTION.json");
  auto r = parseOrThrow(o, argc, argv);
  if (r.count("help")) { std::cout << o.help() << "\nExit codes: 0 valid, 1 invalid or bad input, 2 usage.\n"; return 0; }
  auto files = positionals(r, 2, "mlsys evaluate PROBLEM.json SOLUTION.json [--model K=V]... [--json]");
  ModelOptions m = modelFrom(r);
  Problem p = parseProblemFile(files[0]);
  Schedule s = parseScheduleFile(files[1], p);
  Evaluation ev = evaluateSchedule(p, s, m, r.count("walk") ? CostMethod::Walk : CostMethod::Auto);
  std::vector<std::string> warnings = ev.warnings;
  for (size_t i = 0; i < ev.subgraphs.size() && i < s.reported.size(); ++i) {
    double got = s.reported[i], want = ev.subgraphs[i].cost.latency;
    if (ev.subgraphs[i].cost.valid && std::abs(got - want) > 1e-9 * std::max(1.0, std::abs(want)))
      warnings.push_back("subgraph " + std::to_string(i) + ": reported latency " + formatDouble(got) +
                         " differs from the computed " + formatDouble(want));
  }
  if (r.count("json")) {
    std::ostringstream os;
    os << "{\n  \"valid\": " << (ev.valid ? "true" : "false") << ",\n  \"model\": \"" << m.describe() << "\"";
    if (!ev.valid) {
      std::string reason;
      for (char c : ev.reason) {
        if (c == '"' || c == '\\') reason += '\\';
        reason += c;
      }
      os << ",\n  \"rule\": \"" << ev.rule << "\",\n  \"reason\": \"" << reason << "\"";
    }
    os << ",\n  \"total_latency\": " << formatDouble(ev.total) << ",\n  \"subgraphs\": [";
    for (size_t i = 0; i < ev.subgraphs.size(); ++i) {
      const auto& rp = ev.subgraphs[i];
      os << (i ? "," : "") << "\n    {\"index\": " << i << ", \"valid\": " << (rp.cost.valid ? "true" : "false")
         << ", \"latency\": " << formatDouble(rp.cost.latency) << ", \"steps\": " << rp.cost.steps
         << ", \"tiles\": [" << rp.ntw << ", " << rp.nth << "], \"k_steps\": " << rp.nk
         << ", \"peak_working_set\": " << rp.cost.peak_ws << ", \"compute_bound_steps\": " << rp.cost.compute_bound_steps
         << ", \"memory_bound_steps\": " << rp.cost.memory_bound_steps << "}";
    }
    os << "\n  ],\n  \"warnings\": [";
    for (size_t i = 0; i < warnings.size(); ++i) os << (i ? ", " : "") << "\"" << warnings[i] << "\"";
    os << "]\n}\n";
    std::cout << os.str();
  } else {
    std::cout << "model: " << m.describe() << "\n";
    std::cout << "capacity: " << p.capacity << "  bandwidth: " << p.bandwidth << "  native: " << p.native << "\n";
    std::cout << std::left << std::setw(5) << "sg" << std::setw(22) << "ops" << std::setw(16) << "[w,h,k]" << std::setw(10)
              << "tiles" << std::setw(8) << "ksteps" << std::setw(9) << "steps" << std::setw(16) << "latency"
              << std::setw(11) << "peak_ws" << "bound\n";
    for (size_t i = 0; i < ev.subgraphs.size(); ++i) {
      const auto& rp = ev.subgraphs[i];
      const auto& g = s.subgraphs[i].gran;
      std::string ops = opsList(s.subgraphs[i].ops);
      if (ops.size() > 20) ops = ops.substr(0, 17) + "...";
      std::ostringstream gs, ts;
      gs << "[" << g.w << "," << g.h << "," << g.k << "]";
      ts << rp.ntw << "x" << rp.nth;
      std::string bound = !rp.cost.valid ? "INVALID"
                          : rp.cost.memory_bound_steps == 0 ? "compute"
                          : rp.cost.compute_bound_steps == 0 ? "memory"
                          : (rp.cost.compute_bound_steps >= rp.cost.memory_bound_steps ? "mostly compute" : "mostly memory");
      if (rp.cost.valid && rp.cost.compute_bound_steps && rp.cost.memory_bound_steps)
        bound += " (" + std::to_string(rp.cost.compute_bound_steps) + "/" + std::to_string(rp.cost.steps) + " compute)";
      std::cout << std::setw(5) << i << std::setw(22) << ops << std::setw(16) << gs.str() << std::setw(10) << ts.str()
                << std::setw(8) << rp.nk << std::setw(9) << rp.cost.steps << std::setw(16) << formatDouble(rp.cost.latency)
                << std::setw(11) << rp.cost.peak_ws << bound << "\n";
    }
    std::cout << "total latency: " << formatDouble(ev.total) << "\n";
    for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
    if (ev.valid) std::cout << "valid: yes\n";
    else std::cout << "valid: no\ninvalid (rule " << ev.rule << "): " << ev.reason << "\n";
  }
  if (!ev.valid) std::cerr << "mlsys: invalid schedule (rule " << ev.rule << "): " << ev.reason << "\n";
  return ev.valid ? 0 : 1;
}

int cmdBound(int argc, char** argv) {
  cxxopts::Options o("mlsys bound", "A lower bound on the latency of any valid schedule.");
  o.add_options()("h,help", "Show help")("positional", "", cxxopts::value<std::vector<std::string>>());
  addModelOption(o);
  o.parse_positional({"positional"});
  o.positional_help("PROBLEM.json");
  auto r = parseOrThrow(o, argc, argv);
  if (r.count("help")) { std::cout << o.help(); return 0; }
  auto files = positionals(r, 1, "mlsys bound PROBLEM.json [--model K=V]...");
  ModelOptions m = modelFrom(r);
  Problem p = parseProblemFile(files[0]);
  LowerBound lb = lowerBound(p, m);
  std::cout << "model: " << m.describe() << "\n"
            << "compute: " << formatDouble(lb.compute) << "  (sum over ops of base_cost per native output tile)\n"
            << "traffic: " << formatDouble(lb.traffic) << "  (graph inputs loaded once + graph outputs stored once)\n"
            << "lower bound: " << formatDouble(lb.value()) << "\n";
  return 0;
}

extern "C" void onSignal(int sig) {
  // Before the first schedule exists there is nothing to write: exit at once (async-signal-safe).
  if (!OutputWriter::has_schedule.load()) ::_exit(128 + sig);
  Deadline::signal_received.store(sig);
  Deadline::stop_requested.store(true);
  g_interrupt.store(true);  // abandon long evaluations (cost/interrupt.h)
}

// Refuses (usage error) when two of the named files are one: a run must never overwrite its
// problem, nor write its stats or trace over its output.
void checkDistinctFiles(const std::vector<std::pair<std::string, std::string>>& files) {
  for (size_t i = 0; i < files.size(); ++i)
    for (size_t j = i + 1; j < files.size(); ++j)
      if (!files[i].second.empty() && !files[j].second.empty() && sameFile(files[i].second, files[j].second))
        throw UsageError(files[i].first + " ('" + files[i].second + "') and " + files[j].first + " ('" + files[j].second +
                         "') are the same file");
}

int cmdSolve(int argc, char** argv, Deadline& deadline, bool contestForm) {
  // Only solve catches SIGTERM/SIGINT/SIGHUP (to write its best and exit 128+N); other commands die.
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  cxxopts::Options o("mlsys solve", "Search for the lowest-latency valid schedule within a wall-clock budget.");
  o.add_options()("s,seconds", "Wall-clock budget for the whole process (default: from the instance size, inside the contest limit)",
                  cxxopts::value<double>())("t,threads", "Worker threads (0 = all cores)", cxxopts::value<int>()->default_value("0"))(
      "seed", "Random seed", cxxopts::value<uint64_t>()->default_value("1"))(
      "max-evals", "Stop after N move evaluations (with --threads 1: byte-identical output)", cxxopts::value<int64_t>())(
      "c,config", "YAML config file (see configs/)", cxxopts::value<std::string>())(
      "stats", "Write a JSON summary (best latency, time to first write and to best, evaluations/s) to this file",
      cxxopts::value<std::string>())("print-config", "Print the resolved config (YAML) and exit")(
      "trace", "Write a CSV of improvements (seconds, worker, latency) to this file", cxxopts::value<std::string>())(
      "q,quiet", "No progress on stderr")("h,help", "Show help")("positional", "", cxxopts::value<std::vector<std::string>>());
  addModelOption(o);
  o.parse_positional({"positional"});
  o.positional_help("PROBLEM.json OUT.json");
  auto r = parseOrThrow(o, argc, argv);
  if (r.count("help")) { std::cout << o.help(); return 0; }
  std::vector<std::string> files;
  if (r.count("print-config") && !r.count("positional")) files = {"", ""};
  else files = positionals(r, 2, contestForm ? "mlsys PROBLEM.json OUT.json" : "mlsys solve PROBLEM.json OUT.json [options]");
  SolveOptions so;
  so.model = modelFrom(r);
  so.out = files[1];
  if (r.count("seconds")) {
    so.seconds = r["seconds"].as<double>();
    if (!(so.seconds > 0)) throw UsageError("--seconds must be positive");
  }
  so.threads = r["threads"].as<int>();
  if (so.threads < 0) throw UsageError("--threads must be >= 0");
  if (so.threads > maxThreads()) {
    std::cerr << "mlsys: --threads " << so.threads << " capped to " << maxThreads() << "\n";
    so.threads = maxThreads();
  }
  so.seed = r["seed"].as<uint64_t>();
  if (r.count("max-evals")) {
    so.max_evals = r["max-evals"].as<int64_t>();
    if (so.max_evals <= 0) throw UsageError("--max-evals must be positive");
  }
  if (r.count("config")) so.config = r["config"].as<std::string>();
  if (r.count("trace")) so.trace = r["trace"].as<std::string>();
  if (r.count("stats")) so.stats = r["stats"].as<std::string>();
  so.quiet = r.count("quiet") > 0;
  so.model_set = r.count("model") > 0;
  SearchConfig cfg = resolveConfig(so);  // config errors before any work
  if (r.count("print-config")) {
    std::cout << configToYaml(cfg);
    return 0;
  }
  checkDistinctFiles({{"the problem", files[0]}, {"the output", so.out}, {"--stats", so.stats}, {"--trace", so.trace}});
  // Not destroyed (see solve): the process ends with _Exit.
  const Problem& p = *new Problem(parseProblemFile(files[0]));
  return solve(p, so, deadline);
}


}  // namespace

int runCli(int argc, char** argv, Deadline& deadline) {
  try {
    if (argc < 2) {
      std::cerr << kUsage;
      return 2;
    }
    std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
      std::cout << kUsage;
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
    if (cmd == "solve") return cmdSolve(argc - 1, argv + 1, deadline, false);
    if (!cmd.empty() && cmd[0] != '-') return cmdSolve(argc, argv, deadline, true);
    throw UsageError("unknown option '" + cmd + "'");
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
