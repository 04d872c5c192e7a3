#include <algorithm>

#include "moves/moves.h"

namespace mlsys {

// Fuse subgraph s and s+1 into one (ops concatenated, which stays topological). The fused
// subgraph keeps s+1's retained set; the granularity is the better of the two, repaired.
bool MergeMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  if (n < 2) return false;
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n - 1)));
  const auto& A = ev.schedule().subgraphs[s];
  const auto& B = ev.schedule().subgraphs[s + 1];
  const Problem& p = ev.problem();
  // They must share a tensor (A produces something B consumes) to stay connected.
  bool linked = false;
  for (OpId a : A.ops)
    for (TensorId t : p.ops[a].outputs)
      for (OpId b : B.ops)
        if (std::find(p.ops[b].inputs.begin(), p.ops[b].inputs.end(), t) != p.ops[b].inputs.end()) linked = true;
  if (!linked) return false;
  SubgraphSched m = unionOf(p, A, B, B.retain);
  m.trav = B.trav.kind == TraversalKind::Custom ? Traversal{} : B.trav;
  if (!bestRepairedOf(ev, m, ev.retainedInto(s), {A.gran, B.gran})) return false;
  out.first = s;
  out.count = 2;
  out.repl = {std::move(m)};
  return true;
}

}  // namespace mlsys
