#include "cost/bound.h"

namespace mlsys {

LowerBound lowerBound(const Problem& p, const ModelOptions& m) {
  LowerBound lb;
  const i64 N = p.native;
  long double compute = 0;
  for (const Op& op : p.ops) {
    // Every op computes each output element once; a tile covers at most N x N, and each tile
    // costs at least base_cost (padding), MatMul base_cost*K/N under native_depth.
    TensorId out = op.outputs[0];
    long double tiles = static_cast<long double>((p.widths[out] + N - 1) / N) * ((p.heights[out] + N - 1) / N);
    long double per = static_cast<long double>(op.base_cost);
    if (op.type == OpType::MatMul && m.matmul_compute == ModelOptions::MatmulCompute::NativeDepth)
      per = per * op.K / N;
    compute += tiles * per;
  }
  long double elems = 0;
  for (int t = 0; t < p.numTensors(); ++t)
    if (p.is_graph_input[t] || p.is_graph_output[t]) elems += p.size(t);
  lb.compute = static_cast<double>(compute);
  lb.traffic = static_cast<double>(elems / p.bandwidth);
  return lb;
}

}  // namespace mlsys
