#include "cost/bound.h"

#include <algorithm>
#include <limits>

namespace mlsys {

LowerBound lowerBound(const Problem& p, const ModelOptions& m) {
  LowerBound lb;
  const i64 N = p.native;
  const int no = p.numOps();
  auto nativeTiles = [&](TensorId t) { return ((p.widths[t] + N - 1) / N) * ((p.heights[t] + N - 1) / N); };
  // Compute floor. An op is charged per tile of its subgraph's grid, not of its own output:
  // Pointwise base_cost per tile (L5, padded), every MatMul base_cost * Kacc / D per tile over its
  // k-steps (L5: D = Kacc by default, N under native_depth; an upstream MatMul in a chain is
  // charged per tile of the accumulating MatMul's grid, Ex 5B). The grid is the shape of O(S)
  // (E1), and O(S) holds a tensor downstream of the op (its own output, or, when that is
  // ephemeral, the end of a consumer path inside S, which must reach O(S)). Tiles are at most
  // N x N (V8). So an op costs at least base_cost x the fewest native tiles among the tensors
  // reachable from its outputs (itself included), and under native_depth a MatMul also x K/N for
  // the least K among itself and the MatMuls downstream of it (Kacc is the K of an accumulating
  // MatMul, which is the op itself or lies on its path to O(S)). Recomputation only adds compute.
  // (A bound from each op's own tiles alone is wrong for chains: see tests/bound_test.cpp.)
  std::vector<i64> minTiles(no, std::numeric_limits<i64>::max()), minK(no, std::numeric_limits<i64>::max());
  for (auto it = p.topo.rbegin(); it != p.topo.rend(); ++it) {
    const OpId o = *it;
    const Op& op = p.ops[o];
    if (op.type == OpType::MatMul) minK[o] = op.K;
    for (TensorId t : op.outputs) {
      minTiles[o] = std::min(minTiles[o], nativeTiles(t));
      for (OpId c : p.consumers[t]) {
        minTiles[o] = std::min(minTiles[o], minTiles[c]);
        minK[o] = std::min(minK[o], minK[c]);
      }
    }
  }
  long double compute = 0;
  for (int o = 0; o < no; ++o) {
    const Op& op = p.ops[o];
    long double per = static_cast<long double>(op.base_cost);
    if (op.type == OpType::MatMul && m.matmul_compute == ModelOptions::MatmulCompute::NativeDepth)
      per = per * static_cast<long double>(minK[o]) / static_cast<long double>(N);
    compute += static_cast<long double>(minTiles[o]) * per;
  }
  // Traffic floor: every graph input is read from slow memory at least once (it is never
  // produced, so never ephemeral, and never retained: V6), and every graph output is written at
  // least once (V7). Transfers are elements / B (L3, L4).
  long double elems = 0;
  for (int t = 0; t < p.numTensors(); ++t)
    if (p.is_graph_input[t] || p.is_graph_output[t]) elems += p.size(t);
  lb.compute = static_cast<double>(compute);
  lb.traffic = static_cast<double>(elems / p.bandwidth);
  return lb;
}

}  // namespace mlsys
