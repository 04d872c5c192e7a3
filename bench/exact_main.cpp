// mlsys_exact: the exact solver (engine/exact.h) on one problem, for bench/exact_sweep.py.
//
//   mlsys_exact PROBLEM.json OUT.json [--seconds S] [--incumbent SCHEDULE.json] [--model K=V]
//               [--max-subgraph-ops N] [--no-snakes] [--verify] [--every-side] [--full-space]
//
// --verify: no pruning by bounds (slow); every bound is checked instead (lb_violations).
// --every-side: every w, h, k allowed by V8, not only the smallest side per count.
// --full-space: the spec's whole space, every order included (exact.h, full_space): a certificate.
// Writes the schedule (contest format) to OUT.json and one JSON object of results to stdout.
// Exit 0 when a schedule was written, 1 otherwise (bad input, nothing found), 2 on usage errors.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"
#include "engine/exact/exact.h"

using namespace mlsys;

namespace {

int usage() {
  std::cerr << "usage: mlsys_exact PROBLEM.json OUT.json [--seconds S] [--incumbent SCHEDULE.json] "
               "[--model K=V] [--max-subgraph-ops N] [--no-snakes] [--verify] [--every-side] [--full-space]\n";
  return 2;
}

std::string jsonString(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      o += ' ';
      continue;
    }
    o += c;
  }
  return o + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string problemPath, outPath, incPath;
  double seconds = 10;
  ModelOptions model;
  ExactOptions opt;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw InputError("missing value after " + a);
        return argv[++i];
      };
      if (a == "--seconds") seconds = std::stod(next());
      else if (a == "--incumbent") incPath = next();
      else if (a == "--model") model.setAssignment(next());
      else if (a == "--max-subgraph-ops") opt.max_subgraph_ops = std::stoi(next());
      else if (a == "--no-snakes") opt.snakes = false;
      else if (a == "--verify") opt.verify = true;
      else if (a == "--every-side") opt.every_side = true;
      else if (a == "--full-space") opt.full_space = true;
      else if (a == "-h" || a == "--help") return usage(), 0;
      else if (!a.empty() && a[0] == '-') return usage();
      else if (problemPath.empty()) problemPath = a;
      else if (outPath.empty()) outPath = a;
      else return usage();
    }
  } catch (const std::exception& e) {
    std::cerr << "mlsys_exact: " << e.what() << "\n";
    return 2;
  }
  if (problemPath.empty() || outPath.empty()) return usage();
  try {
    Problem p = parseProblemFile(problemPath);
    Schedule inc;
    if (!incPath.empty()) {
      inc = parseScheduleFile(incPath, p);
      opt.incumbent = &inc;
    }
    const auto deadline =
        t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    ExactResult r = solveExact(p, model, opt, [&] { return std::chrono::steady_clock::now() >= deadline; });
    if (r.found) {
      Evaluation ev = evaluateSchedule(p, r.schedule, model);
      std::vector<double> lat;
      for (const auto& s : ev.subgraphs) lat.push_back(s.cost.latency);
      std::ofstream(outPath) << scheduleToJson(r.schedule, p, lat);
    }
    const ExactStats& s = r.stats;
    std::printf(
        "{\"problem\": %s, \"ops\": %d, \"found\": %s, \"latency\": %.17g, \"proven_optimal\": %s, \"lower_bound\": %.17g, "
        "\"stop_reason\": %s, \"exact_arithmetic\": %s, \"subgraphs\": %zu, \"seconds\": %.6f, \"states_generated\": %lld, "
        "\"states_expanded\": %lld, \"transitions\": %lld, \"subgraphs_priced\": %lld, \"plans\": %lld, \"configs_priced\": %lld, "
        "\"incumbent_updates\": %lld, \"lb_violations\": %lld, \"connected_subgraphs\": %d}\n",
        jsonString(problemPath).c_str(), p.numOps(), r.found ? "true" : "false", r.latency,
        r.proven_optimal ? "true" : "false", r.lower_bound,
        jsonString(r.message.empty() ? std::string(exactStatusName(r.status)) : r.message).c_str(),
        r.exact_arithmetic ? "true" : "false", r.schedule.subgraphs.size(), s.seconds,
        static_cast<long long>(s.states_generated), static_cast<long long>(s.states_expanded),
        static_cast<long long>(s.transitions), static_cast<long long>(s.subgraphs_priced),
        static_cast<long long>(s.plans), static_cast<long long>(s.configs_priced),
        static_cast<long long>(s.incumbent_updates), static_cast<long long>(s.lb_violations), s.connected_subgraphs);
    return r.found ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "mlsys_exact: " << e.what() << "\n";
    return 1;
  }
}
