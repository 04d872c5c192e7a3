#include <algorithm>

#include "moves/moves.h"

namespace mlsys {

namespace {
// A new value for a side of length `dim` capped at `top`: half the time a "nice" value
// (power of two or balanced divisor), otherwise any integer in [1, top] or a +-1 step.
i64 pickSide(Rng& rng, i64 cur, i64 dim, i64 top) {
  uint64_t r = randBelow(rng, 4);
  if (r <= 1) {
    std::vector<i64> nice;
    for (i64 x = 1; x <= top; x *= 2) nice.push_back(x);
    nice.push_back(top);
    for (i64 tiles = 1; tiles <= 64; ++tiles) {
      i64 v = (dim + tiles - 1) / tiles;
      if (v <= top) nice.push_back(v);
    }
    return nice[randBelow(rng, nice.size())];
  }
  if (r == 2) return 1 + static_cast<i64>(randBelow(rng, static_cast<uint64_t>(top)));
  i64 v = cur + ((rng() & 1) ? 1 : -1);
  return std::clamp<i64>(v, 1, top);
}
}  // namespace

bool GranularityMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n)));
  const Problem& p = ev.problem();
  SubgraphSched S = ev.schedule().subgraphs[s];
  i64 kmax = p.native;
  bool anyMM = false;
  for (OpId o : S.ops)
    if (p.ops[o].type == OpType::MatMul) { anyMM = true; kmax = std::min(kmax, p.ops[o].K); }
  // Grid shape: from the first op whose output is written or retained (all share one shape).
  const auto& w = ev.info(s).written;
  TensorId ref = !w.empty() ? w[0] : (!S.retain.empty() ? S.retain[0] : p.ops[S.ops.back()].outputs[0]);
  const i64 W = p.widths[ref], H = p.heights[ref];
  uint64_t which = randBelow(rng, anyMM ? 3 : 2);
  Granularity g = S.gran;
  if (which == 0) g.w = pickSide(rng, g.w, W, std::min(p.native, W));
  else if (which == 1) g.h = pickSide(rng, g.h, H, std::min(p.native, H));
  else g.k = pickSide(rng, g.k, kmax, kmax);
  if (g == S.gran) return false;
  S.gran = g;
  out.first = s;
  out.count = 1;
  out.repl = {std::move(S)};
  return true;
}

}  // namespace mlsys
