#include <algorithm>

#include "cost/granularity.h"
#include "moves/moves.h"

namespace mlsys {

namespace {
// A new value for a side of length `dim` capped at `top`: half the time a "nice" value
// (power of two or balanced divisor), otherwise any integer in [1, top] or a +-1 step.
i64 pickSide(Rng& rng, i64 cur, i64 dim, i64 top) {
  uint64_t r = randBelow(rng, 4);
  if (r <= 1) {
    std::vector<i64> nice = niceSides(dim, top);
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
  const i64 kmax = reductionLimit(p, ev.model(), S.ops);  // 0: no MatMul, k stays 1
  const auto [W, H] = outputShape(ev, s);
  uint64_t which = randBelow(rng, kmax ? 3 : 2);
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
