#include "moves/moves.h"

namespace mlsys {

// Cut subgraph s's op list at a random position into two subgraphs (prefix first). Retained
// tensors stay with the part that produces them, if it is the second part.
bool SplitMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n)));
  const auto& S = ev.schedule().subgraphs[s];
  if (S.ops.size() < 2) return false;
  const size_t cut = 1 + randBelow(rng, S.ops.size() - 1);
  SubgraphSched a, b;
  a.ops.assign(S.ops.begin(), S.ops.begin() + static_cast<long>(cut));
  b.ops.assign(S.ops.begin() + static_cast<long>(cut), S.ops.end());
  a.gran = b.gran = S.gran;
  b.retain = S.retain;
  return proposePair(ev, s, 1, std::move(a), std::move(b), out);
}

}  // namespace mlsys
