// Random tiny problems for the exact solver's tests (exact_test.cpp, exact_full_test.cpp):
// 2-5 ops over small dimensions, so that unpruned and whole-space searches stay fast.
#pragma once
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cost/model/problem.h"

namespace mlsys::test {

// A random tiny problem: 2-5 ops, small dimensions (some not multiples of N, some above N), so
// that the unpruned search (every configuration of every transition) stays fast.
inline Problem tinyProblem(uint64_t seed) {
  std::mt19937_64 g(seed);
  auto pick = [&](std::vector<i64> v) { return v[g() % v.size()]; };
  Problem p;
  p.native = pick({8, 16, 32});
  auto tensor = [&](i64 h, i64 w) {
    p.heights.push_back(h);
    p.widths.push_back(w);
    return static_cast<TensorId>(p.widths.size() - 1);
  };
  auto dim = [&] { return pick({4, 8, 12, 16, 20, 24, 32, 40}); };
  std::vector<TensorId> avail{tensor(dim(), dim())};
  const int nops = 2 + static_cast<int>(g() % 4);
  for (int i = 0; i < nops; ++i) {
    TensorId a = avail[g() % avail.size()];
    Op op;
    if (g() % 2) {
      op.type = OpType::MatMul;
      TensorId b = -1;
      for (TensorId t : avail)
        if (t != a && p.heights[t] == p.widths[a] && g() % 2) b = t;
      if (b < 0) b = tensor(p.widths[a], dim());
      op.inputs = {a, b};
      op.outputs = {tensor(p.heights[a], p.widths[b])};
      op.base_cost = static_cast<i64>(50 + g() % 3000);
    } else {
      op.type = OpType::Pointwise;
      op.inputs = {a};
      for (TensorId t : avail)
        if (t != a && p.heights[t] == p.heights[a] && p.widths[t] == p.widths[a] && g() % 3 == 0) {
          op.inputs.push_back(t);
          break;
        }
      op.outputs = {tensor(p.heights[a], p.widths[a])};
      op.base_cost = static_cast<i64>(g() % 400);
    }
    avail.push_back(op.outputs[0]);
    p.ops.push_back(std::move(op));
  }
  p.bandwidth = pick({1, 2, 5, 10});
  i64 ref = 0;
  for (const Op& op : p.ops) {
    i64 n = std::min<i64>(p.native, p.heights[op.outputs[0]]), w = std::min<i64>(p.native, p.widths[op.outputs[0]]);
    ref = std::max<i64>(ref, n * w * static_cast<i64>(op.inputs.size() + 1));
  }
  p.capacity = std::max<i64>(4, ref * pick({1, 2, 3, 5, 10}) / 4);
  p.name = "tiny-" + std::to_string(seed);
  finalizeProblem(p, p.name);
  return p;
}

// The first `n` seeds' tiny problems that are problems (an op that does not fit at [1,1,1] is
// not), with their seeds.
inline std::vector<std::pair<uint64_t, Problem>> tinyProblems(size_t n) {
  std::vector<std::pair<uint64_t, Problem>> v;
  for (uint64_t seed = 1; seed <= 100 && v.size() < n; ++seed) {
    try {
      v.emplace_back(seed, tinyProblem(seed));
    } catch (const InputError&) {
    }
  }
  return v;
}

}  // namespace mlsys::test
