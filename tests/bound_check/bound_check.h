// Every argument of the lower bound against the brute-force reference (tests/soundness), on one
// problem under one model (issue 50, item 4). The reference shares no code with the bound; every
// number it reports is a valid schedule's cost, so a sound argument never claims more:
//  - each part floor (the floor of an op set over every granularity, order and retention), in
//    every variant of its own arguments (all on; each of order floors, step floors, band reloads
//    and the retention choice off; each alone), against the cheapest subgraph of those ops the
//    reference finds over its space of granularities, orders and retained sets;
//  - the whole bound in every variant of the component arguments (all on; each off; each alone
//    with the part floors and the global floors; the exact cover off, so that the share bound and
//    the linear relaxation price these small graphs; the share bound with 2 parts per closed op,
//    so that its open-op arguments do), against the cheapest schedule the reference finds.
// A violation names the problem (contest JSON), the model, the variant and the two numbers.
#pragma once
#include <string>
#include <vector>

#include "cost/bound/bound.h"
#include "tests/soundness/brute_force.h"

namespace mlsys::soundness {

struct BoundVariant {
  std::string name;
  BoundOptions bo;
};
enum class CheckLevel { Quick, Full };
// The whole-bound variants (Quick: all on, each off, cover off, cover off with 2 share parts;
// Full: also each alone, and each off with the cover off).
std::vector<BoundVariant> boundVariants(CheckLevel level);
// The part-floor variants: the part floor's own arguments (each off, each alone, all on).
std::vector<std::pair<std::string, BoundArgs>> partVariants(CheckLevel level);

struct CheckResult {
  long part_checks = 0, bound_checks = 0;  // comparisons made
  bool reference_found = false;            // the reference found a complete schedule
  double optimum = 0;                      // its total (the space's cheapest)
  double bound = 0;                        // the full bound
  std::vector<std::string> violations;     // empty: sound here
};
CheckResult checkBound(const Problem& p, const ModelOptions& m, const Space& space, CheckLevel level,
                       double reference_seconds = 0);

// The three model settings of issue 50: the spec, k_limit=reduction, matmul_compute=native_depth.
std::vector<std::pair<std::string, ModelOptions>> modelSettings();

}  // namespace mlsys::soundness
