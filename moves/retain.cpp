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

namespace {

// Drops tensors of `retain` (largest first) until `extra` plus what is left fits the capacity; true
// when it dropped any.
bool dropUntilFits(const Problem& p, std::vector<TensorId>& retain, i64 extra) {
  i64 held = extra;
  for (TensorId u : retain) held += p.size(u);
  if (held <= p.capacity) return false;
  std::sort(retain.begin(), retain.end(), [&](TensorId a, TensorId b) { return p.size(a) > p.size(b); });
  while (!retain.empty() && held > p.capacity) {
    held -= p.size(retain.front());
    retain.erase(retain.begin());
  }
  std::sort(retain.begin(), retain.end());
  return true;
}

}  // namespace

// Toggle one tensor of retain[s]: candidates are tensors s produces that s+1 reads (or that
// are currently retained). The evaluator re-costs s+1 as the neighbour.
// Keeping t out of s counts |t| whole in the working sets of s and s+1 (W1), beside the tensors
// retained into s (from s-1) and out of s+1, also whole: where those and t cannot fit together,
// the plain toggle is invalid whatever the granularity, so the move trades them instead: it drops
// the largest of them (s-1 or s+1 then writes them, and their readers load them) until t fits, and
// the change spans s-1 .. s+1 as needed (a chain of retentions whose best link is elsewhere).
bool RetainMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  if (n < 2) return false;
  const Problem& p = ev.problem();
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n - 1)));
  const auto& sched = ev.schedule().subgraphs;
  SubgraphSched S = sched[s];
  std::vector<TensorId> cands = S.retain;
  for (TensorId t : retainableIntoNext(ev, s))
    if (std::find(cands.begin(), cands.end(), t) == cands.end()) cands.push_back(t);
  if (cands.empty()) return false;
  TensorId t = cands[randBelow(rng, cands.size())];
  auto it = std::find(S.retain.begin(), S.retain.end(), t);
  const bool adding = it == S.retain.end();
  if (!adding) S.retain.erase(it);
  else S.retain.push_back(t);
  std::sort(S.retain.begin(), S.retain.end());
  out.first = s;
  out.count = 1;
  out.repl = {std::move(S)};
  if (!adding) return true;
  // What s already keeps out (t included) and what s-1 keeps into s share s's working set.
  i64 out_s = 0;
  for (TensorId u : out.repl[0].retain) out_s += p.size(u);
  if (s > 0 && !sched[s - 1].retain.empty()) {
    SubgraphSched prev = sched[s - 1];
    if (dropUntilFits(p, prev.retain, out_s)) {
      out.first = s - 1;
      out.repl.insert(out.repl.begin(), std::move(prev));
    }
  }
  if (!sched[s + 1].retain.empty()) {
    SubgraphSched next = sched[s + 1];
    if (dropUntilFits(p, next.retain, p.size(t))) out.repl.push_back(std::move(next));
  }
  out.count = static_cast<int>(out.repl.size());
  return true;
}

}  // namespace mlsys
