#include <algorithm>

#include "moves/moves.h"

namespace mlsys {

namespace {
constexpr int kMaxSpan = 256;  // the partner is at most this many subgraphs later
}  // namespace

// Fuse subgraph s with a later subgraph t that reads one of its outputs, however far apart, by
// reordering what lies between: the subgraphs between s and t that t needs (its inputs' makers,
// transitively) go before the fused subgraph, those that need s (transitively) after it, the rest
// before it, each group in its order. No subgraph may be in both groups (it would need s and be
// needed by t), nor read what s makes for t (ephemeral once fused): then nothing is proposed. Retention across the
// reordered range is dropped (it links neighbours); the retain move may add it back. The evaluator checks availability
// (V5) as for any change. FuseMove, its near neighbour, keeps the subgraphs between in place.
bool FuseFarMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  if (n < 3) return false;
  const Problem& p = ev.problem();
  const auto& sgs = ev.schedule().subgraphs;
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n - 2)));
  std::vector<int> partners;
  for (TensorId x : ev.info(s).written)
    for (int r : ev.boundaryReaders(x))
      if (r > s + 1 && r - s <= kMaxSpan) partners.push_back(r);
  if (partners.empty()) return false;
  const int t = partners[randBelow(rng, partners.size())];
  const int span = t - s - 1;
  // after[i]: subgraph s+1+i needs s (it goes after the fused subgraph; the others go before it).
  std::vector<char> after(span, 0);
  std::vector<TensorId> made;  // outputs of s and of the subgraphs after it
  auto addOutputs = [&](const SubgraphSched& sg, std::vector<TensorId>& into) {
    for (OpId o : sg.ops)
      for (TensorId x : p.ops[o].outputs) into.push_back(x);
  };
  auto readsAny = [&](const SubgraphSched& sg, const std::vector<TensorId>& xs) {
    for (OpId o : sg.ops)
      for (TensorId x : p.ops[o].inputs)
        if (std::find(xs.begin(), xs.end(), x) != xs.end()) return true;
    return false;
  };
  addOutputs(sgs[s], made);
  // What s makes and t reads stays inside the fused subgraph (ephemeral): a subgraph between that
  // reads it would find it nowhere (V5), wherever it goes.
  std::vector<TensorId> hidden;
  for (TensorId x : made)
    for (OpId o : sgs[t].ops)
      if (std::find(p.ops[o].inputs.begin(), p.ops[o].inputs.end(), x) != p.ops[o].inputs.end()) hidden.push_back(x);
  for (int i = 0; i < span; ++i)
    if (readsAny(sgs[s + 1 + i], hidden)) return false;
  for (int i = 0; i < span; ++i)
    if (readsAny(sgs[s + 1 + i], made)) {
      after[i] = 1;
      addOutputs(sgs[s + 1 + i], made);
    }
  std::vector<TensorId> needed;  // inputs of t and of the subgraphs before it
  for (OpId o : sgs[t].ops)
    for (TensorId x : p.ops[o].inputs) needed.push_back(x);
  for (int i = span - 1; i >= 0; --i) {
    std::vector<TensorId> outs;
    addOutputs(sgs[s + 1 + i], outs);
    bool feeds = false;
    for (TensorId x : outs)
      if (std::find(needed.begin(), needed.end(), x) != needed.end()) feeds = true;
    if (!feeds) continue;
    if (after[i]) return false;  // t needs it and it needs s
    for (OpId o : sgs[s + 1 + i].ops)
      for (TensorId x : p.ops[o].inputs) needed.push_back(x);
  }
  SubgraphSched m = unionOf(p, sgs[s], sgs[t], {});
  if (!bestRepairedOf(ev, m, {}, {sgs[s].gran, sgs[t].gran})) return false;
  // What s-1 retains into s would now be kept into another subgraph: the range starts at s-1.
  const int first = s > 0 && !ev.retainedInto(s).empty() ? s - 1 : s;
  out.first = first;
  out.count = t - first + 1;
  out.repl.clear();
  if (first < s) out.repl.push_back(sgs[s - 1]);
  for (int i = 0; i < span; ++i)
    if (!after[i]) out.repl.push_back(sgs[s + 1 + i]);
  out.repl.push_back(std::move(m));
  for (int i = 0; i < span; ++i)
    if (after[i]) out.repl.push_back(sgs[s + 1 + i]);
  for (SubgraphSched& sg : out.repl) sg.retain.clear();
  return true;
}

}  // namespace mlsys
