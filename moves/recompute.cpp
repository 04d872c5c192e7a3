#include <algorithm>

#include "moves/moves.h"

namespace mlsys {

// Duplicate the producer of one of s's boundary inputs into s (at the front), so the tensor
// becomes ephemeral there (recomputation, spec Ex 3B).
bool RecomputeMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n)));
  const auto& bnd = ev.info(s).boundary;
  const Problem& p = ev.problem();
  std::vector<OpId> prods;
  for (TensorId t : bnd)
    if (p.producer[t] >= 0) prods.push_back(p.producer[t]);
  if (prods.empty()) return false;
  OpId q = prods[randBelow(rng, prods.size())];
  SubgraphSched S = ev.schedule().subgraphs[s];
  if (std::find(S.ops.begin(), S.ops.end(), q) != S.ops.end()) return false;
  S.ops.insert(S.ops.begin(), q);
  if (!repairGranularity(ev, S, ev.retainedInto(s))) return false;
  out.first = s;
  out.count = 1;
  out.repl = {std::move(S)};
  return true;
}

// Remove one occurrence of an op that appears in several subgraphs. A subgraph left empty
// disappears. (An op runs at most once per subgraph, so "in another subgraph too" is its run count
// above 1: the evaluator's index, not a scan of the schedule.)
bool UncomputeMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n)));
  const auto& S = ev.schedule().subgraphs[s];
  std::vector<size_t> dup;
  for (size_t i = 0; i < S.ops.size(); ++i)
    if (ev.runs(S.ops[i]) > 1) dup.push_back(i);
  if (dup.empty()) return false;
  SubgraphSched T = S;
  T.ops.erase(T.ops.begin() + static_cast<long>(dup[randBelow(rng, dup.size())]));
  out.first = s;
  out.count = 1;
  out.repl.clear();
  if (!T.ops.empty()) {
    pruneRetain(ev.problem(), T);
    if (!repairGranularity(ev, T, ev.retainedInto(s))) return false;
    out.repl.push_back(std::move(T));
  }
  return true;
}

}  // namespace mlsys
