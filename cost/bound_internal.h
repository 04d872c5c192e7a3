// Internal to the lower bound (cost/bound.cpp, the component bound; cost/bound_part.cpp, the
// floor of one part): what both files price with.
#pragma once
#include "cost/problem.h"

namespace mlsys::bound_detail {

using LD = long double;

// A tensor is *retainable* when some schedule could keep it in fast memory across a boundary:
// only produced tensors (V6: never graph inputs), never graph outputs (V7), and only if it fits
// (W1 counts a retained tensor in full). The bound lets every retainable tensor cross every
// boundary for free (no store in its producer's subgraph, no load in its consumer's): a
// relaxation, so sound; it costs tightness only where capacity allows retention.
inline bool retainable(const Problem& p, TensorId t) {
  return !p.is_graph_input[t] && !p.is_graph_output[t] && p.size(t) <= p.capacity;
}

}  // namespace mlsys::bound_detail
