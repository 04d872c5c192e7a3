#include <algorithm>

#include "cost/pricing/granularity.h"
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
  else {
    g.k = pickSide(rng, g.k, kmax, kmax);
    // Above N (k_limit=reduction) half the time the larger tile side follows k along the
    // fast-memory frontier: a single MatMul's step holds about w*k + k*h + w*h (V11), kept as it
    // was, so a larger k is paired with the side that still fits and a smaller one with a
    // larger side.
    if (kmax > p.native && g.k != S.gran.k && randBelow(rng, 2) == 0) {
      const bool hSide = g.h >= g.w;
      const i64 a = hSide ? g.h : g.w, b = hSide ? g.w : g.h, top = std::min(p.native, hSide ? H : W);
      const i64 ws = b * S.gran.k + S.gran.k * a + a * b;
      (hSide ? g.h : g.w) = std::clamp<i64>((ws - b * g.k) / (g.k + b), 1, top);
    }
  }
  if (g == S.gran) return false;
  S.gran = g;
  out.first = s;
  out.count = 1;
  out.repl = {std::move(S)};
  return true;
}

}  // namespace mlsys
