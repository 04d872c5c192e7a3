// The shared-weight family, modelled on contest instance mlsys-2026-13: b branches, branch i
// x_i (H x K) @ W_0 @ ... @ W_{L-1}, where the weights of a layer are one tensor shared by every
// branch (W_0, W_1 in 13, 4096 x 4096 each) or a private tensor per branch (v_i in 13); the
// branch results are summed by Pointwise ops. The capacity lies between |x_i| and the shared
// K x K weights, so a shared weight never fits in fast memory while a branch input does: the
// graphs exercise lower-bound arguments about re-loading weights larger than the memory.
// Dimensions stay small (K <= 512) so that the exact solver finishes on graphs of 3-11 ops.
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/generate/generator_internal.h"

namespace mlsys::generate_detail {
namespace {

struct Layer {
  bool shared = true;
  i64 width = 0;         // the weight is K x width
  TensorId weight = -1;  // the shared weight (shared layers only)
};

// The layers of a branch: K x K weights, shared by every branch at least in one layer; the last
// layer may instead project to R columns with a private weight per branch (v_i in 13).
std::vector<Layer> drawLayers(Rng& r, int L, i64 K, i64 R) {
  std::vector<Layer> layers(static_cast<size_t>(L));
  for (int l = 0; l + 1 < L; ++l) layers[static_cast<size_t>(l)] = {r.chance(0.8), K};
  Layer& last = layers.back();
  if (L == 1) {
    last = {true, K};
  } else {
    const i64 u = r.below(10);
    last = u < 5 ? Layer{false, R} : u < 8 ? Layer{true, K} : Layer{true, R};
  }
  // At least one shared K x K weight; layer 0 is K x K whenever L > 1.
  if (std::none_of(layers.begin(), layers.end(), [&](const Layer& y) { return y.shared && y.width == K; }))
    layers[0].shared = true;
  return layers;
}

// Sums the branch results with two-input Pointwise ops: a chain (acc + y_i, as in 13) or a
// balanced tree of pairwise adds.
void join(Builder& b, std::vector<TensorId> ys, bool tree) {
  if (!tree) {
    for (size_t i = 1; i < ys.size(); ++i) ys[0] = b.pointwise({ys[0], ys[i]});
    return;
  }
  while (ys.size() > 1) {
    std::vector<TensorId> next;
    for (size_t i = 0; i + 1 < ys.size(); i += 2) next.push_back(b.pointwise({ys[i], ys[i + 1]}));
    if (ys.size() % 2) next.push_back(ys.back());
    ys = std::move(next);
  }
}

}  // namespace

i64 genSharedWeight(Builder& b, Rng& r, int size) {
  // Dimensions: |x_i| = H*K < capacity < |W| = K*K.
  const i64 K = r.chance(0.2) ? r.pick(std::vector<i64>{320, 448}) : r.pick(std::vector<i64>{256, 384, 512});
  i64 H = r.pick(std::vector<i64>{128, 128, 128, 128, 64, 256});
  if (105 * H * K >= 100 * (K * K - 1)) H = 128;  // no room between 1.05|x_i| and |W|
  const i64 R = r.pick(std::vector<i64>{128, 128, 64});
  // Two branches of L MatMuls and their join take 2L + 1 ops; below 3 ops, one branch.
  const double epi = r.pick(std::vector<double>{0, 0.3, 0.6});  // Pointwise epilogues per branch
  int L, branches;
  if (size < 3) {
    L = size;
    branches = 1;
  } else {
    L = static_cast<int>(r.range(1, size >= 7 ? 3 : size >= 5 ? 2 : 1));
    branches = std::max(2, static_cast<int>(std::lround((size + 1.0) / (L + 1 + epi))));
  }
  std::vector<Layer> layers = drawLayers(r, L, K, R);
  for (Layer& y : layers)
    if (y.shared) y.weight = b.tensor(K, y.width);
  int spare = size - (branches * (L + 1) - 1);
  std::vector<TensorId> ys;
  for (int i = 0; i < branches; ++i) {
    // Epilogues fill the ops left over by the rounding, spread over the branches.
    const double p = std::max(epi, static_cast<double>(spare) / (branches - i));
    const int epiAfter = spare > 0 && r.chance(p) ? static_cast<int>(r.below(L)) : -1;
    if (epiAfter >= 0) --spare;
    TensorId y = b.tensor(H, K);  // x_i
    for (int l = 0; l < L; ++l) {
      const Layer& ly = layers[static_cast<size_t>(l)];
      y = b.matmul(y, ly.shared ? ly.weight : b.tensor(K, ly.width));
      if (l == epiAfter) y = b.pw1(y);
    }
    ys.push_back(y);
  }
  join(b, std::move(ys), r.chance(0.5));
  // The capacity: between 1.05|x_i| and min(2|x_i|, |W| - 1), often rounded like the benchmarks.
  const i64 lo = (105 * H * K + 99) / 100, hi = std::min(2 * H * K, K * K - 1);
  i64 cap = r.range(lo, hi);
  if (r.chance(0.7) && cap / 1000 * 1000 >= lo) cap = cap / 1000 * 1000;
  return cap;
}

}  // namespace mlsys::generate_detail
