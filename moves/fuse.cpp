#include <algorithm>

#include "moves/moves.h"

namespace mlsys {

namespace {
constexpr int kReach = 8;  // the partner is at most this many subgraphs later
}  // namespace

// Fuse subgraph s with a later, non-adjacent subgraph t that shares an op with it (a recomputed
// op is then computed once) or reads one of its outputs. The fused subgraph takes t's place or
// s's, at the better of the two granularities (repaired), as merge does.
bool FuseMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  if (n < 3) return false;
  const Problem& p = ev.problem();
  const auto& sgs = ev.schedule().subgraphs;
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n - 2)));
  const auto& A = sgs[s];
  auto inA = [&](OpId o) { return std::find(A.ops.begin(), A.ops.end(), o) != A.ops.end(); };
  std::vector<int> partners;
  for (int t = s + 2; t < std::min(n, s + 2 + kReach); ++t) {
    bool linked = false;
    for (OpId b : sgs[t].ops) {
      if (inA(b)) linked = true;
      for (TensorId x : p.ops[b].inputs)
        if (p.producer[x] >= 0 && inA(p.producer[x])) linked = true;
      if (linked) break;
    }
    if (linked) partners.push_back(t);
  }
  if (partners.empty()) return false;
  const int t = partners[randBelow(rng, partners.size())];
  const auto& B = sgs[t];
  const bool atT = rng() & 1;
  SubgraphSched m = unionOf(p, A, B, atT ? B.retain : A.retain);
  if (!bestRepairedOf(ev, m, ev.retainedInto(atT ? t : s), {A.gran, B.gran})) return false;
  out.first = s;
  out.count = t - s + 1;
  out.repl.clear();
  if (!atT) out.repl.push_back(std::move(m));
  for (int i = s + 1; i < t; ++i) out.repl.push_back(sgs[i]);
  if (atT) out.repl.push_back(std::move(m));  // NOLINT(bugprone-use-after-move): exclusive with the !atT push above
  return true;
}

}  // namespace mlsys
