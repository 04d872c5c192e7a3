#include "engine/generate/generator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "engine/generate/generator_internal.h"

namespace mlsys {
namespace {

using generate_detail::Builder;
using generate_detail::Rng;
using generate_detail::Style;

Style drawStyle(Rng& r) {
  Style s;
  s.N = std::vector<i64>{128, 128, 128, 128, 128, 128, 128, 128, 64, 256, 32}[static_cast<size_t>(r.below(11))];
  s.odd_dims = std::vector<double>{0, 0, 0.15, 0.35, 0.7}[static_cast<size_t>(r.below(5))];
  switch (r.below(6)) {
    case 0:
      s.mm_lo = 100;
      s.mm_hi = 1000;
      break;
    case 1:
      s.mm_lo = 2000;
      s.mm_hi = 10000;
      break;
    case 2:
      s.mm_lo = 1000;
      s.mm_hi = 1000000;
      break;  // wide spread
    default: break;
  }
  if (r.chance(0.2)) {
    s.pw_lo = 1;
    s.pw_hi = 50;
  }
  if (r.chance(0.1)) s.zero_cost = 0.1;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Families

void genTransformer(Builder& b, Rng& r, int size) {
  const i64 S = b.dim(128, 2048), D = b.dim(256, 2048), F = b.dim(512, 4096);
  const bool ln = size >= 14 && r.chance(0.6);
  int heads = static_cast<int>(r.range(1, 4));
  auto perBlock = [&](int h) { return h * 7 + 1 + 4 + (ln ? 2 : 0); };
  while (heads > 1 && perBlock(heads) > size) --heads;
  const i64 Dh = std::max<i64>(1, b.dim(64, 256) / (heads > 2 ? 2 : 1));
  const int blocks = std::max(1, static_cast<int>(std::lround(static_cast<double>(size) / perBlock(heads))));
  TensorId x = b.tensor(S, D);
  // K^T is projected from a transposed copy of the input activations (the format has no transpose op).
  TensorId xT = b.tensor(D, S);
  for (int blk = 0; blk < blocks; ++blk) {
    TensorId h = ln ? b.pw1(x) : x;
    std::vector<TensorId> sum;
    for (int hd = 0; hd < heads; ++hd) {
      TensorId q = b.matmulW(h, Dh);        // S x Dh
      TensorId kT = b.matmulWLeft(Dh, xT);  // Dh x S
      TensorId v = b.matmulW(h, Dh);        // S x Dh
      TensorId sc = b.matmul(q, kT);        // S x S   (QK^T)
      TensorId sm = b.pw1(sc);              // softmax
      TensorId av = b.matmul(sm, v);        // S x Dh
      sum.push_back(b.matmulW(av, D));      // output projection, S x D
    }
    sum.push_back(x);
    TensorId res = b.pointwise(sum);  // residual add (+ head sum)
    TensorId h2 = ln ? b.pw1(res) : res;
    TensorId up = b.matmulW(h2, F);
    TensorId act = b.pw1(up);
    TensorId down = b.matmulW(act, D);
    x = b.pointwise({down, res});
  }
}

void genMixer(Builder& b, Rng& r, int size) {
  const i64 P = b.dim(128, 1024), C = b.dim(128, 1024), Tk = b.dim(128, 2048), Dc = b.dim(256, 4096);
  const bool head = size >= 12 && r.chance(0.7);
  const int blocks = std::max(1, static_cast<int>(std::lround((size - (head ? 2 : 0)) / 10.0)));
  TensorId x = b.tensor(P, C);
  for (int blk = 0; blk < blocks; ++blk) {
    TensorId n1 = b.pw1(x);               // layer norm
    TensorId t1 = b.matmulWLeft(Tk, n1);  // token mixing: W1^T (Tk x P) @ x (P x C)
    TensorId a1 = b.pw1(t1);
    TensorId t2 = b.matmulWLeft(P, a1);  // W2^T (P x Tk) @ h (Tk x C)
    TensorId r1 = b.pointwise({t2, x});
    TensorId n2 = b.pw1(r1);
    TensorId c1 = b.matmulW(n2, Dc);  // channel mixing
    TensorId a2 = b.pw1(c1);
    TensorId c2 = b.matmulW(a2, C);
    x = b.pointwise({c2, r1});
  }
  if (head) {
    TensorId pooled = b.matmulWLeft(1, x);  // 1 x C: mean over patches
    b.matmulW(pooled, r.chance(0.5) ? 1000 : 10);
  }
}

void genGemmChain(Builder& b, Rng& r, int size) {
  TensorId x = b.tensor(b.dim(128, 2048), b.dim(128, 2048));
  const double epi = r.pick(std::vector<double>{0, 0.2, 0.4});
  while (b.numOps() < size) {
    if (r.chance(0.2)) x = b.matmulWLeft(b.dim(128, 2048), x);
    else x = b.matmulW(x, b.dim(128, 4096));
    if (b.numOps() < size && r.chance(epi)) x = r.chance(0.5) ? b.pw1(x) : b.pointwise({x, b.tensor(b.H(x), b.W(x))});
  }
}

// Reduction lengths that are not multiples of 128 (issue 33): a MatMul chain whose K are drawn
// from 160-1000, with Pointwise prologues on the LHS (under the spec they cannot share the
// MatMul's subgraph when K > N; under k_limit=reduction they can, at k = K) and epilogues. The
// two k_limit readings differ on these graphs: k <= 128 pads the last k-step and repeats every
// prologue per k-step, while k = K does neither.
void genOddK(Builder& b, Rng& r, int size) {
  static const std::vector<i64> oddK{160, 200, 240, 300, 320, 400, 450, 500, 600, 700, 1000};
  TensorId x = b.tensor(b.dim(128, 1024), r.pick(oddK));
  const double pro = r.pick(std::vector<double>{0.3, 0.6}), epi = r.pick(std::vector<double>{0, 0.3});
  while (b.numOps() < size) {
    if (b.numOps() + 1 < size && r.chance(pro))
      x = r.chance(0.5) ? b.pw1(x) : b.pointwise({x, b.tensor(b.H(x), b.W(x))});
    x = b.matmulW(x, r.chance(0.7) ? r.pick(oddK) : b.dim(128, 1024));
    if (b.numOps() < size && r.chance(epi)) x = b.pw1(x);
  }
}

void genCnn(Builder& b, Rng& r, int size) {
  static const std::vector<i64> pixels{196, 784, 1024, 3136, 4096, 256, 512};
  const i64 P = r.pick(pixels);
  const bool head = size >= 10 && r.chance(0.6);
  const int body = size - (head ? 2 : 0);
  TensorId x = b.tensor(P, r.pick(std::vector<i64>{3, 16, 64, 128}));
  i64 C = b.dim(64, 512);
  x = b.pw1(b.matmulW(x, C));                       // stem: 1x1 conv + BN/ReLU
  std::map<i64, std::vector<TensorId>> byChannels;  // earlier stage outputs, for long skips
  while (b.numOps() < body) {
    const int left = body - b.numOps();
    if (left >= 8 && r.chance(0.75)) {
      // Bottleneck residual block.
      i64 Cm = std::max<i64>(1, C / r.pick(std::vector<i64>{1, 2, 4}));
      TensorId a = b.pw1(b.matmulW(x, Cm));
      TensorId c = b.pw1(b.matmulW(a, Cm));
      TensorId d = b.matmulW(c, C);
      std::vector<TensorId> add{d, x};
      auto& same = byChannels[C];
      if (!same.empty() && r.chance(0.3)) {
        TensorId old = r.pick(same);
        if (old != x) add.push_back(old);  // a long skip
      }
      x = b.pw1(b.pointwise(add));
      same.push_back(x);
    } else if (left >= 2 && r.chance(0.5)) {
      // Stage transition: a 1x1 conv to new channels, then BN.
      C = b.dim(64, 1024);
      x = b.pw1(b.matmulW(x, C));
      byChannels[C].push_back(x);
    } else {
      // A Pointwise chain (scale, shift, activation) with an occasional short skip.
      TensorId start = x;
      int n = static_cast<int>(std::min<i64>(left, r.range(1, 4)));
      for (int i = 0; i < n; ++i) x = (i == n - 1 && i > 0 && r.chance(0.5)) ? b.pointwise({x, start}) : b.pw1(x);
    }
  }
  if (head) {
    TensorId pooled = b.matmulWLeft(1, x);  // global average pool as a 1 x P weight
    b.matmulW(pooled, r.pick(std::vector<i64>{10, 100, 1000}));
  }
}

void genRandom(Builder& b, Rng& r, int size) {
  std::map<std::pair<i64, i64>, std::vector<TensorId>> byShape;
  std::map<i64, std::vector<TensorId>> byHeight;
  std::vector<TensorId> all, recent;
  const double hubP = r.pick(std::vector<double>{0, 0.1, 0.3});  // fan-out from one hub tensor
  const double newComp = r.pick(std::vector<double>{0, 0.02, 0.1});
  TensorId hub = -1;
  auto note = [&](TensorId t) {
    byShape[{b.H(t), b.W(t)}].push_back(t);
    byHeight[b.H(t)].push_back(t);
    all.push_back(t);
    recent.push_back(t);
    if (recent.size() > 8) recent.erase(recent.begin());
  };
  auto input = [&](i64 h, i64 w) {
    TensorId t = b.tensor(h, w);
    note(t);
    return t;
  };
  auto pickAny = [&]() -> TensorId {
    if (hub >= 0 && r.chance(hubP)) return hub;
    if (!recent.empty() && r.chance(0.7)) return r.pick(recent);
    return r.pick(all);
  };
  input(b.dim(), b.dim());
  hub = all[0];
  while (b.numOps() < size) {
    if (r.chance(newComp)) input(b.dim(), b.dim());  // a new, unconnected component starts here
    TensorId a = pickAny();
    TensorId out;
    if (r.chance(0.45)) {
      // MatMul: a is the LHS (H x K); the RHS is an existing K x W tensor or a fresh weight.
      const i64 K = b.W(a);
      TensorId rhs = -1;
      auto it = byHeight.find(K);
      if (it != byHeight.end() && r.chance(0.5)) {
        TensorId c = r.pick(it->second);
        if (c != a) rhs = c;
      }
      if (rhs < 0) rhs = input(K, b.dim());
      out = b.matmul(a, rhs);
    } else {
      std::vector<TensorId> ins{a};
      const int arity = static_cast<int>(r.weighted({6, 3, 1}) + 1);
      auto& same = byShape[{b.H(a), b.W(a)}];
      for (int i = 1; i < arity; ++i) {
        TensorId c = r.pick(same);
        if (std::find(ins.begin(), ins.end(), c) != ins.end()) c = input(b.H(a), b.W(a));
        ins.push_back(c);
      }
      out = b.pointwise(ins);
    }
    note(out);
  }
}

// ---------------------------------------------------------------------------------------------

void finishMachine(Problem& p, Rng& r, i64 N) {
  p.native = N;
  static const std::vector<i64> bws{1, 5, 10, 15, 20, 25, 40, 50, 80, 100, 200, 1000};
  static const std::vector<double> bww{1, 2, 6, 6, 6, 4, 4, 4, 3, 3, 2, 1};
  p.bandwidth = bws[r.weighted(bww)];
  // Reference: the largest single-op working set at the native granularity.
  i64 ref = 1, minReq = 1;
  for (const Op& op : p.ops) {
    TensorId out = op.outputs[0];
    i64 h = std::min(N, p.heights[out]), w = std::min(N, p.widths[out]);
    i64 ws;
    if (op.type == OpType::MatMul) {
      i64 k = std::min(N, p.widths[op.inputs[0]]);
      ws = h * k + k * w + h * w;
    } else {
      ws = static_cast<i64>(op.inputs.size() + op.outputs.size()) * h * w;
    }
    ref = std::max(ref, ws);
    minReq = std::max(minReq, static_cast<i64>(op.inputs.size() + op.outputs.size()));
  }
  static const std::vector<double> factors{0.1, 0.25, 0.5, 0.8, 1.0, 1.2, 2, 4, 10, 100};
  static const std::vector<double> fw{1, 2, 3, 3, 3, 3, 3, 3, 2, 1};
  i64 cap;
  if (r.chance(0.03)) {
    cap = minReq * r.range(1, 4);  // extreme: only tiny granules fit
  } else {
    double f = factors[r.weighted(fw)];
    cap = static_cast<i64>(std::llround(f * static_cast<double>(ref)));
    if (cap > 20000 && r.chance(0.7)) cap = cap / 1000 * 1000;  // round like the benchmarks
  }
  p.capacity = std::max(cap, minReq);
}

void addDeadTensors(Builder& b, Rng& r) {
  if (!r.chance(0.25)) return;
  int n = static_cast<int>(r.range(1, 3));
  for (int i = 0; i < n; ++i) b.tensor(b.dim(), b.dim());
}

// Renumbers the ops in a random order (the format does not require topological numbering).
void shuffleOps(Problem& p, Rng& r) {
  for (size_t i = p.ops.size(); i > 1; --i)
    std::swap(p.ops[i - 1], p.ops[static_cast<size_t>(r.below(static_cast<i64>(i)))]);
}

}  // namespace

const std::vector<std::string>& generatorFamilies() {
  static const std::vector<std::string> f{"transformer", "mixer", "gemm-chain",   "cnn",
                                          "random",      "odd-k", "shared-weight"};
  return f;
}

Problem generateProblem(const std::string& family, int size, uint64_t seed) {
  const auto& fams = generatorFamilies();
  if (std::find(fams.begin(), fams.end(), family) == fams.end()) {
    std::string known;
    for (const auto& f : fams) known += (known.empty() ? "" : ", ") + f;
    throw InputError("unknown generator family \"" + family + "\" (known: " + known + ")");
  }
  if (size < 1) throw InputError("generator size must be >= 1, got " + std::to_string(size));
  // Mix the family into the seed so that families with the same seed are independent.
  uint64_t s = seed;
  for (char c : family) s = s * 1099511628211ULL + static_cast<unsigned char>(c);
  Rng r(s);
  Style st = drawStyle(r);
  Builder b(r, st);
  i64 capacity = 0;  // a family's own capacity, when it needs one
  if (family == "transformer") genTransformer(b, r, size);
  else if (family == "mixer") genMixer(b, r, size);
  else if (family == "gemm-chain") genGemmChain(b, r, size);
  else if (family == "cnn") genCnn(b, r, size);
  else if (family == "odd-k") genOddK(b, r, size);
  else if (family == "shared-weight") capacity = generate_detail::genSharedWeight(b, r, size);
  else genRandom(b, r, size);
  addDeadTensors(b, r);
  if (r.chance(0.25)) shuffleOps(b.p, r);
  Problem p = std::move(b.p);
  finishMachine(p, r, st.N);
  if (capacity > 0) p.capacity = capacity;  // finalizeProblem checks that every op still fits
  p.name = family + "-" + std::to_string(size) + "-s" + std::to_string(seed);
  finalizeProblem(p, "generated " + p.name);
  return p;
}

}  // namespace mlsys
