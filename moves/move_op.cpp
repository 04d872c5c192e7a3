#include "moves/moves.h"

namespace mlsys {

// Move the last op of s to the front of s+1, or the first op of s+1 to the end of s.
bool MoveOpMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  if (n < 2) return false;
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n - 1)));
  SubgraphSched a = ev.schedule().subgraphs[s];
  SubgraphSched b = ev.schedule().subgraphs[s + 1];
  if (rng() & 1) {
    if (a.ops.size() < 2) return false;
    b.ops.insert(b.ops.begin(), a.ops.back());
    a.ops.pop_back();
  } else {
    if (b.ops.size() < 2) return false;
    a.ops.push_back(b.ops.front());
    b.ops.erase(b.ops.begin());
  }
  b.ops = uniqueOps(b.ops);
  return proposePair(ev, s, 2, std::move(a), std::move(b), out);
}

}  // namespace mlsys
