// Internal to the generator (engine/generate/generator.cpp: the families and the machine;
// engine/generate/generator_shared.cpp: the shared-weight family): the portable random source,
// the per-instance style and the graph builder every family uses.
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "cost/model/problem.h"

namespace mlsys::generate_detail {

// Portable mappings over std::mt19937_64 (whose output sequence the standard fixes), so that a
// (family, size, seed) triple gives the same problem with every standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  i64 below(i64 n) { return static_cast<i64>(g_() % static_cast<uint64_t>(n)); }  // [0, n), n > 0
  i64 range(i64 lo, i64 hi) { return lo + below(hi - lo + 1); }                   // [lo, hi]
  double unit() { return static_cast<double>(g_() >> 11) * 0x1.0p-53; }           // [0, 1)
  bool chance(double p) { return unit() < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(below(static_cast<i64>(v.size())))];
  }
  // Index drawn with the given relative weights.
  size_t weighted(const std::vector<double>& w) {
    double total = 0;
    for (double x : w) total += x;
    double u = unit() * total;
    for (size_t i = 0; i < w.size(); ++i) {
      if (u < w[i]) return i;
      u -= w[i];
    }
    return w.size() - 1;
  }

 private:
  std::mt19937_64 g_;
};

// Per-instance choices shared by every family.
struct Style {
  i64 N = 128;
  double odd_dims = 0;  // probability that a drawn dimension is not a multiple of 128
  i64 mm_lo = 500, mm_hi = 6000;
  i64 pw_lo = 50, pw_hi = 500;
  double zero_cost = 0;  // probability of a zero base cost
};

class Builder {
 public:
  Builder(Rng& r, const Style& st) : r_(r), st_(st) {}

  // A dimension: mostly 128-multiples of typical model sizes, sometimes odd sizes.
  i64 dim(i64 lo_hint = 128, i64 hi_hint = 2048) {
    if (r_.chance(st_.odd_dims)) {
      static const std::vector<i64> odd{1,   3,   37,  48,  96,   100,  160,  200, 300,
                                        384, 500, 640, 768, 1000, 1500, 2000, 3000};
      std::vector<i64> ok;
      for (i64 d : odd)
        if (d >= lo_hint / 4 && d <= hi_hint * 2) ok.push_back(d);
      if (!ok.empty()) return r_.pick(ok);
    }
    std::vector<i64> v;
    for (i64 d = 128; d <= 4096; d *= 2)
      if (d >= lo_hint && d <= hi_hint) v.push_back(d);
    if (v.empty()) v.push_back(std::clamp<i64>(lo_hint, 1, 4096));
    return r_.pick(v);
  }

  i64 mmCost() {
    if (r_.chance(st_.zero_cost)) return 0;
    i64 c = r_.range(st_.mm_lo, st_.mm_hi);
    return c >= 1000 ? c / 100 * 100 : c;
  }
  i64 pwCost() {
    if (r_.chance(st_.zero_cost)) return 0;
    i64 c = r_.range(st_.pw_lo, st_.pw_hi);
    return c >= 100 ? c / 10 * 10 : c;
  }

  TensorId tensor(i64 H, i64 W) {
    p.heights.push_back(H);
    p.widths.push_back(W);
    return static_cast<TensorId>(p.widths.size() - 1);
  }
  i64 H(TensorId t) const { return p.heights[t]; }
  i64 W(TensorId t) const { return p.widths[t]; }

  TensorId matmul(TensorId a, TensorId b) {
    TensorId out = tensor(H(a), W(b));
    Op op;
    op.type = OpType::MatMul;
    op.inputs = {a, b};
    op.outputs = {out};
    op.base_cost = mmCost();
    p.ops.push_back(std::move(op));
    return out;
  }
  // x @ (fresh weight K x W)
  TensorId matmulW(TensorId x, i64 Wout) { return matmul(x, tensor(W(x), Wout)); }
  // (fresh weight Hout x K) @ x
  TensorId matmulWLeft(i64 Hout, TensorId x) { return matmul(tensor(Hout, H(x)), x); }

  TensorId pointwise(std::vector<TensorId> ins) {
    TensorId out = tensor(H(ins[0]), W(ins[0]));
    Op op;
    op.type = OpType::Pointwise;
    op.inputs = std::move(ins);
    op.outputs = {out};
    op.base_cost = pwCost();
    p.ops.push_back(std::move(op));
    return out;
  }
  TensorId pw1(TensorId x) { return pointwise({x}); }

  int numOps() const { return p.numOps(); }

  Problem p;

 private:
  Rng& r_;
  const Style& st_;
};

// The families outside generator.cpp. Each adds its ops to b.p and returns the fast-memory
// capacity it needs, or 0 to let the machine draw one.
i64 genSharedWeight(Builder& b, Rng& r, int size);

}  // namespace mlsys::generate_detail
