// Choosing [w,h,k] and a traversal for one subgraph.
#pragma once
#include <vector>

#include "cost/subgraph.h"

namespace mlsys {

// Candidate values for a tile side over a dimension of length `dim` (all <= min(N, dim)):
// powers of two, min(N, dim), and "balanced" sizes ceil(dim / ceil(dim / v)) that avoid waste.
std::vector<i64> sideCandidates(i64 dim, i64 N);

struct GranChoice {
  bool found = false;
  Granularity g;
  Traversal trav;
  SubgraphCost cost;
};

// Best valid granularity and traversal (raster, row-snake, col-snake) for a subgraph with the
// given retained-in / retained-out sets, by exact cost.
GranChoice bestGranularity(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                           const std::vector<TensorId>& rin, const std::vector<TensorId>& rout);

class IncrementalEvaluator;
// The same choice in the context of a search (costs through the worker's cache), over trimmed
// candidate sets (4 w x 4 h x 5 k, plus `extra`) in raster order, then the snakes for the winner.
bool bestGranularityCached(IncrementalEvaluator& ev, SubgraphSched& sg, const std::vector<TensorId>& rin,
                           const std::vector<Granularity>& extra = {});

}  // namespace mlsys
