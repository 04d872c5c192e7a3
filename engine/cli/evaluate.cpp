// mlsys evaluate PROBLEM.json SOLUTION.json [--json] [--walk] [--model K=V]: every validity rule
// and the exact price of a schedule, as a per-subgraph table or as JSON.
#include <iostream>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "cost/model/json_util.h"
#include "cost/model/number_format.h"
#include "cost/pricing/evaluator.h"
#include "engine/cli/commands.h"
#include "engine/cli/json_out.h"
#include "engine/report/schedule_facts.h"

namespace mlsys {
namespace {

std::string opsList(const std::vector<OpId>& ops) { return fmt::format("[{}]", fmt::join(ops, ",")); }

// "compute", "memory", "mostly compute (3/4 compute)", ... or "INVALID".
std::string boundText(const SubgraphCost& c) {
  switch (boundOf(c)) {
    case SubgraphBound::Invalid: return "INVALID";
    case SubgraphBound::Compute: return "compute";
    case SubgraphBound::Memory: return "memory";
    case SubgraphBound::Mixed: break;
  }
  return fmt::format("{} ({}/{} compute)",
                     c.compute_bound_steps >= c.memory_bound_steps ? "mostly compute" : "mostly memory",
                     c.compute_bound_steps, c.steps);
}

void printTable(const Problem& p, const Schedule& s, const Evaluation& ev, const ModelOptions& m,
                const std::vector<std::string>& warnings) {
  std::cout << "model: " << m.describe() << "\n";
  std::cout << fmt::format("capacity: {}  bandwidth: {}  native: {}\n", p.capacity, p.bandwidth, p.native);
  // Columns are padded and always separated by a space: a count wider than its column (millions of
  // steps) pushes the row right rather than running into the next number.
  const char* row = "{:<4} {:<21} {:<15} {:<9} {:<7} {:<10} {:<15} {:<10} {}\n";
  std::cout << fmt::format(fmt::runtime(row), "sg", "ops", "[w,h,k]", "tiles", "ksteps", "steps", "latency", "peak_ws",
                           "bound");
  for (size_t i = 0; i < ev.subgraphs.size(); ++i) {
    const auto& rp = ev.subgraphs[i];
    const auto& g = s.subgraphs[i].gran;
    std::string ops = opsList(s.subgraphs[i].ops);
    if (ops.size() > 20) ops = ops.substr(0, 17) + "...";
    std::cout << fmt::format(fmt::runtime(row), i, ops, fmt::format("[{},{},{}]", g.w, g.h, g.k),
                             fmt::format("{}x{}", rp.ntw, rp.nth), rp.nk, humanCount(rp.cost.steps),
                             humanLatency(rp.cost.latency), humanCount(rp.cost.peak_ws), boundText(rp.cost));
  }
  // An invalid schedule has no latency to speak of (the subgraph rows show what could be priced).
  // People's numbers (at most 8 significant digits); --json has the exact values.
  if (ev.valid) std::cout << "total latency: " << humanLatency(ev.total) << "\n";
  else std::cout << "total latency: - (the schedule is invalid)\n";
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  if (ev.valid) std::cout << "valid: yes\n";
  else {
    std::cout << "valid: no (" << ev.violations.size() << (ev.violations.size() == 1 ? " violation" : " violations")
              << ")\n";
    for (const Violation& v : ev.violations)
      std::cout << "invalid (rule " << ruleName(v.rule) << "): " << v.reason << "\n";
  }
}

}  // namespace

int cmdEvaluate(int argc, char** argv) {
  cxxopts::Options o("mlsys evaluate", "Check a schedule against every validity rule and price it exactly.");
  o.add_options()("json", "Print the result as JSON on stdout")(
      "walk", "Price every subgraph by walking each step (the oracle) instead of step classes")("h,help", "Show help");
  auto r = parseFileCommand(o, argc, argv, "PROBLEM.json SOLUTION.json", true);
  if (r.count("help"))
    return printHelp(
        o, "evaluate",
        "Examples:\n"
        "  mlsys evaluate instances/examples/ex5.json instances/examples/ex5b.schedule.json\n"
        "  mlsys evaluate P.json S.json --json --model k_limit=reduction   # exact values, every violation\n");
  auto files = positionals(
      r, 2, "mlsys evaluate PROBLEM.json SOLUTION.json [-c CONFIG] [--set model.K=V]... [--model K=V]... [--json]");
  ModelOptions m = modelFromConfigAndFlags(r);
  // No budget: a FIFO or pipe is waited for 10 s at most.
  const ReadLimits lim = readLimits(r, 10);
  Problem p = parseProblemFile(files[0], lim);
  Schedule s = parseScheduleFile(files[1], p, lim);
  Evaluation ev = evaluateSchedule(p, s, m, r.count("walk") ? CostMethod::Walk : CostMethod::Auto);
  std::vector<std::string> warnings = ev.warnings;
  for (std::string& w : reportedLatencyWarnings(s, ev)) warnings.push_back(std::move(w));
  if (r.count("json")) std::cout << evaluationJson(ev, m, warnings);
  else printTable(p, s, ev, m, warnings);
  if (!ev.valid) std::cerr << "mlsys: invalid schedule (rule " << ruleName(ev.rule) << "): " << ev.reason << "\n";
  return ev.valid ? 0 : 1;
}

}  // namespace mlsys
