// The pressure share of a graph input read by several alike MatMuls (bound_internal.h,
// gridPressure; the share bound that uses it is argued at the top of bound_shares.cpp).
#include <algorithm>
#include <set>

#include "cost/bound_internal.h"

namespace mlsys::bound_detail {

// The pressure share per load of u when its readers are alike (one K, one output height H,
// and d_c's outputs one width W). m >= 2 of them in S share one tile grid of H x W (each d_c
// accumulates, nk > 1, upstream of nothing, so its output reaches the grid through Pointwise
// ops, F3), so in the first tile, h x w, every reader makes the same h rows: the working set
// holds h K of each LHS, a strip [0, K) x kappa of u (k >= 1) and, per d_c, its accumulator
// h w and a strip kappa x w of its other operand (counted once unless all are distinct):
// m h K + K + m h w + d w <= C. The tiles are at least ceil(H / h) ceil(W / w) at the best such
// h, w, and each loads u whole: m readers in S pay T(m) loads, and the least of T(m) / m (at most
// 1, which a lone reader pays) is a share every S meets. 0 when the readers differ.
LD gridPressure(const Problem& p, const std::vector<OpId>& readers) {
  constexpr size_t kMaxReaders = 64;  // beyond: the fractional share alone
  const Op& first = p.ops[readers[0]];
  const OpId d0 = p.consumers[first.outputs[0]][0];
  const i64 K = first.K, H = p.heights[first.outputs[0]], W = p.widths[p.ops[d0].outputs[0]];
  if (readers.size() > kMaxReaders || p.ops[d0].outputs.size() != 1) return 0;
  std::set<TensorId> others;
  for (OpId c : readers) {
    const OpId d = p.consumers[p.ops[c].outputs[0]][0];
    if (p.ops[c].K != K || p.heights[p.ops[c].outputs[0]] != H || p.ops[d].outputs.size() != 1 ||
        p.widths[p.ops[d].outputs[0]] != W)
      return 0;
    others.insert(p.ops[d].inputs[1]);
  }
  const bool distinct = others.size() == readers.size();
  LD least = 1;
  for (i64 n = 2; n <= static_cast<i64>(readers.size()); ++n) {
    const i64 d = distinct ? n : 1;
    i64 tiles = 0;  // 0: m readers never fit in one subgraph
    for (i64 h = 1; h <= std::min(p.native, H); ++h) {
      const i64 left = p.capacity - n * h * K - K;
      if (left < n * h + d) break;  // w >= 1 fails, and more so for a larger h
      const i64 w = std::min({p.native, W, left / (n * h + d)});
      const i64 t = ((H + h - 1) / h) * ((W + w - 1) / w);
      if (tiles == 0 || t < tiles) tiles = t;
    }
    if (tiles == 0) break;  // nor do more readers
    least = std::min(least, static_cast<LD>(tiles) / static_cast<LD>(n));
  }
  return least;
}

}  // namespace mlsys::bound_detail
