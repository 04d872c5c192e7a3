// mlsys_soundness_sweep: every argument of the lower bound against the brute-force reference on
// many random graphs drawn outside `mlsys generate`'s families (tests/soundness, tests/bound_check).
//
//   mlsys_soundness_sweep [--graphs N] [--seed S] [--models default,k_limit=reduction,...]
//                         [--space ci|deep] [--level quick|full] [--min-ops A] [--max-ops B]
//                         [--max-dim D] [--threads T] [--violations FILE]
//
// Prints per model: graphs checked, part-floor and bound comparisons, violations, the reference
// found / not, and geomean(reference optimum / bound) (how tight the bound is on these graphs);
// every violation (problem JSON, model, variant, numbers) goes to FILE (default stderr). Exit 1 on
// any violation.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include "tests/bound_check/bound_check.h"
#include "tests/soundness/random_problem.h"

using namespace mlsys;
using namespace mlsys::soundness;

namespace {

struct Args {
  long graphs = 200;
  uint64_t seed = 1;
  std::string models = "default,k_limit=reduction,matmul_compute=native_depth";
  std::string space = "ci", level = "quick", violations;
  int min_ops = 1, max_ops = 6, threads = 0;
  i64 max_dim = 0;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "mlsys_soundness_sweep: " << why
            << "\nusage: mlsys_soundness_sweep [--graphs N] [--seed S] [--models M1,M2] [--space ci|deep] "
               "[--level quick|full] [--min-ops A] [--max-ops B] [--max-dim D] [--threads T] [--violations FILE]\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "-h" || k == "--help") usage("help");
    if (i + 1 >= argc) usage(k + " needs a value");
    const std::string v = argv[++i];
    try {
      if (k == "--graphs") a.graphs = std::stol(v);
      else if (k == "--seed") a.seed = std::stoull(v);
      else if (k == "--models") a.models = v;
      else if (k == "--space") a.space = v;
      else if (k == "--level") a.level = v;
      else if (k == "--min-ops") a.min_ops = std::stoi(v);
      else if (k == "--max-ops") a.max_ops = std::stoi(v);
      else if (k == "--max-dim") a.max_dim = std::stoll(v);
      else if (k == "--threads") a.threads = std::stoi(v);
      else if (k == "--violations") a.violations = v;
      else usage("unknown option " + k);
    } catch (const std::exception&) {
      usage("bad value for " + k + ": " + v);
    }
  }
  if (a.space != "ci" && a.space != "deep") usage("--space is ci or deep");
  if (a.level != "quick" && a.level != "full") usage("--level is quick or full");
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  const Space space = a.space == "ci" ? Space::ci() : Space::deep();
  const CheckLevel level = a.level == "quick" ? CheckLevel::Quick : CheckLevel::Full;
  RandomSpec spec;
  spec.min_ops = a.min_ops;
  spec.max_ops = a.max_ops;
  spec.max_dim = a.max_dim;
  // The settings named (in their own order); every name must be one of them: a misspelt one would
  // silently check nothing.
  std::set<std::string> wanted;
  {
    std::stringstream names(a.models);
    for (std::string name; std::getline(names, name, ',');) wanted.insert(name);
  }
  std::vector<std::pair<std::string, ModelOptions>> models;
  std::string known;
  for (const auto& [name, m] : modelSettings()) {
    known += (known.empty() ? "" : ", ") + name;
    if (wanted.erase(name)) models.push_back({name, m});
  }
  if (!wanted.empty()) usage("--models: unknown model \"" + *wanted.begin() + "\" (" + known + ")");
  if (models.empty()) usage("--models names none of " + known);
  std::ofstream vf;
  if (!a.violations.empty()) vf.open(a.violations);
  std::ostream& vout = a.violations.empty() ? std::cerr : vf;
  std::unique_ptr<tbb::global_control> gc;
  if (a.threads > 0)
    gc = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, a.threads);
  long total_violations = 0;
  std::cout << "| model | graphs | part floors checked | bounds checked | reference found | violations | "
               "geomean(optimum / bound) | seconds |\n|---|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& [name, m] : models) {
    const auto t0 = std::chrono::steady_clock::now();
    std::atomic<long> parts{0}, bounds{0}, found{0}, bad{0}, ratios{0};
    std::mutex mu;
    double logSum = 0;
    tbb::parallel_for(0L, a.graphs, [&](long i) {
      const Problem p = randomProblem(a.seed + static_cast<uint64_t>(i), spec);
      CheckResult r;
      try {
        r = checkBound(p, m, space, level);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lk(mu);
        vout << "ERROR (seed " << a.seed + i << ", " << name << "): " << e.what() << "\n";
        ++bad;
        return;
      }
      parts += r.part_checks;
      bounds += r.bound_checks;
      found += r.reference_found ? 1 : 0;
      std::lock_guard<std::mutex> lk(mu);
      if (r.reference_found && r.bound > 0) {
        logSum += std::log(r.optimum / r.bound);
        ++ratios;
      }
      for (const std::string& v : r.violations) vout << "VIOLATION (seed " << a.seed + i << "): " << v << "\n";
      bad += static_cast<long>(r.violations.size());
    });
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char geo[32];
    std::snprintf(geo, sizeof geo, "%.4f", ratios ? std::exp(logSum / static_cast<double>(ratios)) : 0.0);
    std::cout << "| " << name << " | " << a.graphs << " | " << parts << " | " << bounds << " | " << found << " | "
              << bad << " | " << geo << " | " << static_cast<long>(secs) << " |\n"
              << std::flush;
    total_violations += bad;
  }
  return total_violations ? 1 : 0;
}
