// mlsys_relaxation_estimate: how much of a gap the bound could at best recover (issue 53, item 1).
//
//   mlsys_relaxation_estimate PROBLEM.json [--part-ops K] [--seconds S] [--bound-seconds S] [--model K=V]
//                             [--cover FILE] [--bounded]
//
// Runs the bound (lowerBound, --bound-seconds, default 10), then, for each fusion component too
// large for the exact cover (more than 20 ops), the cover's linear relaxation over the component's
// valid parts of at most K ops (default 6; cost/bound/internal.h, relaxationEstimate). That figure
// is NOT a lower bound: the parts of more than K ops are left out, and listing them could only
// lower it. It is an upper limit of what the cover's relaxation (the bound's own method for groups
// of 21-64 ops) could certify for the component, and equal to it where no larger part binds. So
// on a schedule's gap: (estimate - bound) is at most what a complete relaxation could add to the
// bound, and (latency - estimate) is left to the search or to the relaxation's integrality gap
// whatever the bound does. bench/gap_split.py --estimate K prints the split per component.
//
// Prints one JSON object: the bound, the total with each component at the larger of its bound and
// its estimate, and per component its ops, bound value and estimate (null where not computed: the
// exact cover priced it, the budget --seconds ran out, or the parts were more than 50,000,000).
// With --cover FILE, also writes the relaxed covers' parts of positive weight (per estimated component:
// ops, weight, part floor; and per op of the component, `lp_shares`, the relaxation's share y_o, and
// `op_shares`, the share bound's) as JSON to FILE, to set beside a schedule's subgraphs (where does the
// schedule pay more than the relaxation's parts for the same ops?).
// With --bounded, the figure per component is instead the large-parts relaxation at K (internal.h,
// boundedRelaxation: a lower bound, the bound's step 9 at one K), with the component's shares as caps.
// Exit 0 on success, 1 on bad input, 2 on usage errors.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/bound/internal.h"
#include "cost/model/problem.h"

using namespace mlsys;
using bound_detail::LD;

namespace {

int usage() {
  std::cerr << "usage: mlsys_relaxation_estimate PROBLEM.json [--part-ops K] [--seconds S] [--bound-seconds S] "
               "[--model K=V] [--cover FILE] [--bounded]\n";
  return 2;
}

// One estimated component's entry of the --cover file.
std::string coverJson(const BoundComponent& c, const bound_detail::LpCover& lp) {
  std::string out = "  {\"first_op\": " + std::to_string(c.ops.front()) + ", \"parts\": [";
  for (size_t i = 0; i < lp.cover.size(); ++i) {
    const auto& part = lp.cover[i];
    out += i ? ",\n    {\"ops\": [" : "\n    {\"ops\": [";
    for (size_t j = 0; j < part.ops.size(); ++j) out += (j ? ", " : "") + std::to_string(part.ops[j]);
    char b[96];
    std::snprintf(b, sizeof b, "], \"weight\": %.17g, \"floor\": %.17g}", part.weight, part.floor);
    out += b;
  }
  out += "],\n   \"ops\": [";
  for (size_t j = 0; j < c.ops.size(); ++j) out += (j ? ", " : "") + std::to_string(c.ops[j]);
  // Per op (the component's order): the relaxation's share y_o and the share bound's.
  auto figures = [&](const char* name, auto&& at) {
    out += std::string("],\n   \"") + name + "\": [";
    for (size_t j = 0; j < c.ops.size(); ++j) {
      char b[40];
      std::snprintf(b, sizeof b, "%s%.17g", j ? ", " : "", static_cast<double>(at(j)));
      out += b;
    }
  };
  figures("lp_shares", [&](size_t j) { return j < lp.shares.size() ? lp.shares[j] : LD(0); });
  figures("op_shares", [&](size_t j) { return j < c.op_shares.size() ? c.op_shares[j] : 0.0; });
  return out + "]}";
}

}  // namespace

int main(int argc, char** argv) {
  std::string problemPath, coverPath;
  int partOps = 6;
  bool bounded = false;
  double seconds = 600, boundSeconds = 10;
  ModelOptions model;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw InputError("missing value after " + a);
        return argv[++i];
      };
      if (a == "--part-ops") partOps = std::stoi(next());
      else if (a == "--seconds") seconds = std::stod(next());
      else if (a == "--bound-seconds") boundSeconds = std::stod(next());
      else if (a == "--model") model.setAssignment(next());
      else if (a == "--cover") coverPath = next();
      else if (a == "--bounded") bounded = true;
      else if (a == "-h" || a == "--help") return usage(), 0;
      else if (!a.empty() && a[0] == '-') return usage();
      else if (problemPath.empty()) problemPath = a;
      else return usage();
    }
    if (partOps < 1) throw InputError("--part-ops must be at least 1");
  } catch (const std::exception& e) {
    std::cerr << "mlsys_relaxation_estimate: " << e.what() << "\n";
    return 2;
  }
  if (problemPath.empty()) return usage();
  try {
    const Problem p = parseProblemFile(problemPath);
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    auto after = [&](double s) {
      const auto end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
      return [end] { return Clock::now() >= end; };
    };
    BoundOptions bo;
    bo.give_up = after(boundSeconds);
    const LowerBound lb = lowerBound(p, model, bo);
    // Each op's compute floor per run, as the bound's (global_floors.cpp).
    const OpComputeFloor f = opComputeFloor(p, model);
    std::vector<LD> opCompute(p.numOps());
    for (OpId o = 0; o < p.numOps(); ++o)
      opCompute[o] = static_cast<LD>(f.min_tiles[o]) * bound_detail::computePerTile(p, model, f, o);
    const std::function<bool()> stop = after(boundSeconds + seconds);
    double total = 0;
    std::string comps, covers;
    std::vector<int> local(p.numOps(), -1);
    for (const BoundComponent& c : lb.components) {
      double estimate = -1;
      const bool covered = c.groups.size() == 1 && c.groups[0].method == BoundMethod::Cover;
      if (!covered && static_cast<int>(c.ops.size()) > bo.max_cover_ops && !stop()) {
        // The component's parts grow along every fusable edge between its ops (ruler.cpp).
        for (size_t j = 0; j < c.ops.size(); ++j) local[c.ops[j]] = static_cast<int>(j);
        std::vector<std::vector<int32_t>> around(c.ops.size());
        for (size_t j = 0; j < c.ops.size(); ++j)
          for (TensorId t : p.ops[c.ops[j]].outputs)
            for (OpId d : p.consumers[t])
              if (local[d] >= 0 && bound_detail::fusableEdge(p, model, c.ops[j], d)) {
                around[j].push_back(local[d]);
                around[local[d]].push_back(static_cast<int32_t>(j));
              }
        for (OpId o : c.ops) local[o] = -1;
        std::vector<LD> shares(c.ops.size(), 0);
        for (size_t j = 0; j < c.ops.size() && j < c.op_shares.size(); ++j) shares[j] = c.op_shares[j];
        const bound_detail::LpCover lp =
            bounded
                ? bound_detail::boundedRelaxation(p, model, c.ops, around, opCompute, partOps, shares, 50'000'000, stop)
                : bound_detail::relaxationEstimate(p, model, c.ops, around, opCompute, partOps, 50'000'000, stop);
        if (lp.done) {
          estimate = static_cast<double>(lp.value);
          covers += (covers.empty() ? "\n" : ",\n") + coverJson(c, lp);
        }
      }
      total += std::max(c.value, estimate);
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "%s\n  {\"first_op\": %d, \"ops\": %zu, \"bound\": %.17g, \"estimate\": ", comps.empty() ? "" : ",",
                    c.ops.front(), c.ops.size(), c.value);
      comps += buf;
      if (estimate >= 0) {
        std::snprintf(buf, sizeof buf, "%.17g}", estimate);
        comps += buf;
      } else {
        comps += "null}";
      }
    }
    // The bound's global floors stand beside the parts (bound.h: the larger of the three).
    const double withEstimates = std::max({lb.compute, lb.traffic, total});
    std::printf(
        "{\"problem\": \"%s\", \"part_ops\": %d, \"lower_bound\": %.17g, \"with_estimates\": %.17g, "
        "\"seconds\": %.3f, \"components\": [%s]}\n",
        problemPath.c_str(), partOps, lb.value(), withEstimates,
        std::chrono::duration<double>(Clock::now() - t0).count(), comps.c_str());
    if (!coverPath.empty()) {
      std::FILE* out = std::fopen(coverPath.c_str(), "w");
      if (!out) throw InputError("cannot write --cover file " + coverPath);
      std::fprintf(out, "{\"components\": [%s]}\n", covers.c_str());
      if (std::fclose(out) != 0) throw InputError("cannot write --cover file " + coverPath);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "mlsys_relaxation_estimate: " << e.what() << "\n";
    return 1;
  }
}
