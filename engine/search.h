// The search: construction heuristics, then parallel workers until the deadline.
#pragma once
#include "engine/output.h"
#include "engine/solver.h"

namespace mlsys {

struct SearchResult {
  int64_t evaluations = 0;
};

SearchResult runSearch(const Problem& p, const SolveOptions& opt, Deadline& deadline, OutputWriter& out,
                       const Schedule& start);

}  // namespace mlsys
