#include <algorithm>

#include "moves/moves.h"

namespace mlsys {

std::vector<TensorId> retainableIntoNext(const IncrementalEvaluator& ev, int s) {
  const Problem& p = ev.problem();
  const auto& next = ev.info(s + 1).boundary;
  std::vector<TensorId> v;
  for (OpId o : ev.schedule().subgraphs[s].ops)
    for (TensorId t : p.ops[o].outputs)
      if (!p.is_graph_output[t] && std::find(next.begin(), next.end(), t) != next.end() &&
          std::find(v.begin(), v.end(), t) == v.end())
        v.push_back(t);
  return v;
}

// Toggle one tensor of retain[s]: candidates are tensors s produces that s+1 reads (or that
// are currently retained). The evaluator re-costs s+1 as the neighbour.
bool RetainMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  if (n < 2) return false;
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n - 1)));
  SubgraphSched S = ev.schedule().subgraphs[s];
  std::vector<TensorId> cands = S.retain;
  for (TensorId t : retainableIntoNext(ev, s))
    if (std::find(cands.begin(), cands.end(), t) == cands.end()) cands.push_back(t);
  if (cands.empty()) return false;
  TensorId t = cands[randBelow(rng, cands.size())];
  auto it = std::find(S.retain.begin(), S.retain.end(), t);
  if (it != S.retain.end()) S.retain.erase(it);
  else S.retain.push_back(t);
  std::sort(S.retain.begin(), S.retain.end());
  out.first = s;
  out.count = 1;
  out.repl = {std::move(S)};
  return true;
}

}  // namespace mlsys
