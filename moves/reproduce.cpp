#include <algorithm>

#include "moves/moves.h"

namespace mlsys {

namespace {

bool has(const std::vector<TensorId>& v, TensorId t) { return std::find(v.begin(), v.end(), t) != v.end(); }

}  // namespace

// Re-produce a tensor t that subgraph s loads from slow memory: a new subgraph N = [q] just before
// s runs t's producer q again and retains t into s (V6), where it is resident and free (L3, Ex 3C).
// It pays where t is loaded many times over (the LHS of a split-K MatMul is reloaded in every
// tile: a LayerNorm before an MLP's first MatMul) but cannot be retained by the subgraph that made
// it, because t has a reader further on (V6 keeps a retained tensor out of slow memory); the
// earlier write stays for that reader. q's inputs that s-1 makes but does not write (consumed
// inside it) are retained by s-1 into N, and, half the time, so are those it writes (then no longer
// written: the evaluator rejects the change if another subgraph reads them). What s-1 retained into
// s and N does not read is dropped (written instead, where s-1 writes it at all).
bool ReproduceMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  if (n == 0) return false;
  const Problem& p = ev.problem();
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n)));
  const auto& sched = ev.schedule().subgraphs;
  const auto& rin = ev.retainedInto(s);
  std::vector<TensorId> cands;
  for (TensorId t : ev.info(s).boundary)
    if (p.producer[t] >= 0 && !p.is_graph_output[t] && !has(rin, t)) cands.push_back(t);
  if (cands.empty()) return false;
  const TensorId t = cands[randBelow(rng, cands.size())];
  const OpId q = p.producer[t];

  SubgraphSched N;
  N.ops = {q};
  N.retain = {t};
  N.gran = sched[s].gran;
  std::vector<TensorId> intoN;
  bool prevChanged = false;
  SubgraphSched prev;
  if (s > 0) {
    prev = sched[s - 1];
    const auto& written = ev.info(s - 1).written;
    std::vector<TensorId> keep;
    for (TensorId u : prev.retain)
      if (has(p.ops[q].inputs, u)) keep.push_back(u);
    for (TensorId u : p.ops[q].inputs) {
      if (has(keep, u)) continue;
      const OpId pu = p.producer[u];
      if (pu < 0 || !has(prev.ops, pu) || p.is_graph_output[u]) continue;
      if (!has(written, u) || (rng() & 1)) keep.push_back(u);
    }
    std::sort(keep.begin(), keep.end());
    prevChanged = keep != prev.retain;
    prev.retain = keep;
    intoN = keep;
  }
  if (!repairGranularity(ev, N, intoN)) return false;
  SubgraphSched S = sched[s];
  if (!repairGranularity(ev, S, N.retain)) return false;
  out.first = prevChanged ? s - 1 : s;
  out.count = prevChanged ? 2 : 1;
  out.repl.clear();
  if (prevChanged) {
    if (!repairGranularity(ev, prev, ev.retainedInto(s - 1))) return false;
    out.repl.push_back(std::move(prev));
  }
  out.repl.push_back(std::move(N));
  out.repl.push_back(std::move(S));
  return true;
}

}  // namespace mlsys
