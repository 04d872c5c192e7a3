// The pressure share of a graph input read by several alike MatMuls (internal.h,
// gridPressure; the share bound that uses it is argued at the top of shares.cpp).
#include <algorithm>
#include <functional>
#include <limits>
#include <set>

#include "cost/bound/internal.h"

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
// When the other operands are distinct and each d_c's share is at most its mixture with that
// operand v_c loaded once (rhsReload(d_c) = |v_c|, else 0: its RHS claimed for it alone, so its
// joint floor loads v_c once per tile row with nk > 1, its output one tile row high, and that
// row's compute at most that load, so that its least mixture, in every mode, is at most the
// one-row point's), S at h with
// R = ceil(H / h) tile rows makes every d_c load v_c R times while d_c takes at most one: the
// m readers also take (R - 1) |v_c| each, as their share of S's traffic: T |u| + m (R - 1) |v|.
LD gridPressure(const Problem& p, const std::vector<OpId>& readers, const std::function<LD(OpId)>& rhsReload) {
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
  LD perRow = std::numeric_limits<LD>::infinity();  // the least |v_c|, in loads of u
  for (OpId c : readers) perRow = std::min(perRow, distinct ? rhsReload(p.consumers[p.ops[c].outputs[0]][0]) : LD(0));
  perRow /= static_cast<LD>(p.size(first.inputs[1]));
  LD least = 1;
  for (i64 n = 2; n <= static_cast<i64>(readers.size()); ++n) {
    const i64 d = distinct ? n : 1;
    LD cost = -1;  // < 0: m readers never fit in one subgraph
    for (i64 h = 1; h <= std::min(p.native, H); ++h) {
      const i64 left = p.capacity - n * h * K - K;
      if (left < n * h + d) break;  // w >= 1 fails, and more so for a larger h
      const i64 w = std::min({p.native, W, left / (n * h + d)});
      const i64 rows = (H + h - 1) / h;
      const LD c = static_cast<LD>(rows * ((W + w - 1) / w)) + static_cast<LD>(n * (rows - 1)) * perRow;
      if (cost < 0 || c < cost) cost = c;
    }
    if (cost < 0) break;  // nor do more readers
    least = std::min(least, cost / static_cast<LD>(n));
  }
  return least;
}

}  // namespace mlsys::bound_detail
