// Topological orders of the ops, for the constructors that walk the graph in one order.
#pragma once
#include <vector>

#include "cost/model/problem.h"

namespace mlsys {

// A topological order that keeps producer->consumer chains together (DFS-like): after an op,
// its ready consumer with the lowest position in p.topo, else the lowest ready op. O(n log n).
std::vector<OpId> chainTopoOrder(const Problem& p);

}  // namespace mlsys
