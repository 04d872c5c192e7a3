// Shared by the search room's unit tests (engine_units_test.cpp, construct_test.cpp): the spec's
// example graphs and small schedule helpers. Every figure the tests use is derived in a comment from
// the spec (../shared/spec/cost-model.md; B = 10, N = 128: a full 128x128 tensor moves in
// 16384 / 10 = 1638.4, a 128x64 half in 819.2, a 128x32 strip in 409.6).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cost/model/problem.h"
#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"
#include "cost/pricing/incremental.h"
#include "tests/test_util.h"

namespace mlsys::units {
// ---------------------------------------------------------------------------------------------
// The spec's example graphs (section 9; the same as instances/examples/ex*.json).

// Example 1: op0 Pointwise T0 -> T1 (cost 1000), op1 Pointwise T1 -> T2 (cost 100), all 128x128.
inline Problem ex1(long capacity = 50000) {
  return test::problemFromJson(R"({"widths": [128, 128, 128], "heights": [128, 128, 128],
    "inputs": [[0], [1]], "outputs": [[1], [2]], "base_costs": [1000, 100],
    "op_types": ["Pointwise", "Pointwise"], "fast_memory_capacity": )" +
                               std::to_string(capacity) +
                               R"(, "slow_memory_bandwidth": 10, "native_granularity": [128, 128]})");
}

// Example 3: op0 T0 -> T1, op1 T1 -> T2, op2 (T1, T2) -> T3, Pointwise, cost 1500 each, 128x128.
inline Problem ex3() {
  return test::problemFromJson(R"({"widths": [128, 128, 128, 128], "heights": [128, 128, 128, 128],
    "inputs": [[0], [1], [1, 2]], "outputs": [[1], [2], [3]], "base_costs": [1500, 1500, 1500],
    "op_types": ["Pointwise", "Pointwise", "Pointwise"], "fast_memory_capacity": 50000,
    "slow_memory_bandwidth": 10, "native_granularity": [128, 128]})");
}

// Example 5: op0 MatMul T0 x T1 -> T3, op1 MatMul T3 x T2 -> T4, cost 2000 each, all 128x128
// (K = 128), capacity 45000.
inline Problem ex5() {
  return test::problemFromJson(R"({"widths": [128, 128, 128, 128, 128], "heights": [128, 128, 128, 128, 128],
    "inputs": [[0, 1], [3, 2]], "outputs": [[3], [4]], "base_costs": [2000, 2000],
    "op_types": ["MatMul", "MatMul"], "fast_memory_capacity": 45000, "slow_memory_bandwidth": 10,
    "native_granularity": [128, 128]})");
}

// A DAG of Pointwise ops over 128x128 tensors with the given operands (for the topological orders).
inline Problem pointwiseDag(const std::string& inputs, const std::string& outputs, int tensors, int ops) {
  std::string dims, costs, types;
  for (int t = 0; t < tensors; ++t) dims += (t ? ", " : "") + std::string("128");
  for (int o = 0; o < ops; ++o) {
    costs += (o ? ", " : "") + std::string("100");
    types += (o ? ", " : "") + std::string("\"Pointwise\"");
  }
  return test::problemFromJson(R"({"widths": [)" + dims + R"(], "heights": [)" + dims + R"(], "inputs": )" + inputs +
                               R"(, "outputs": )" + outputs + R"(, "base_costs": [)" + costs + R"(], "op_types": [)" +
                               types + R"(], "fast_memory_capacity": 1000000, "slow_memory_bandwidth": 10,
                               "native_granularity": [128, 128]})");
}

// ---------------------------------------------------------------------------------------------
// Helpers.

inline SubgraphSched sg(std::vector<OpId> ops, Granularity g, std::vector<TensorId> retain = {}) {
  return SubgraphSched{std::move(ops), g, {}, std::move(retain)};
}

inline Schedule schedule(std::vector<SubgraphSched> v) {
  Schedule s;
  s.subgraphs = std::move(v);
  return s;
}

// The schedule a move's change `c` turns `s` into (subgraphs [first, first + count) replaced).
inline Schedule applied(const Schedule& s, const Change& c) {
  Schedule a = s;
  a.subgraphs.erase(a.subgraphs.begin() + c.first, a.subgraphs.begin() + c.first + c.count);
  a.subgraphs.insert(a.subgraphs.begin() + c.first, c.repl.begin(), c.repl.end());
  return a;
}

// "[0,1]@128,128,1 r[1] snake" per subgraph, for readable failures.
inline std::string str(const Schedule& s) {
  std::ostringstream os;
  for (const auto& x : s.subgraphs) {
    os << '[';
    for (size_t i = 0; i < x.ops.size(); ++i) os << (i ? "," : "") << x.ops[i];
    os << "]@" << x.gran.w << ',' << x.gran.h << ',' << x.gran.k << " r[";
    for (size_t i = 0; i < x.retain.size(); ++i) os << (i ? "," : "") << x.retain[i];
    os << "] " << traversalName(x.trav.kind) << "; ";
  }
  return os.str();
}

inline ::testing::AssertionResult sameSchedule(const Schedule& got, const Schedule& want) {
  if (got.subgraphs == want.subgraphs) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got  " << str(got) << "\nwant " << str(want);
}

// Structural checks shared by every constructor: valid under the full evaluator, every op in
// some subgraph; returns the full evaluator's total (-1 if invalid).
inline double fullTotal(const Problem& p, const Schedule& s) {
  Evaluation e = evaluateSchedule(p, s, ModelOptions{});
  EXPECT_TRUE(e.valid) << e.reason << "\n" << str(s);
  std::set<OpId> covered;
  for (const auto& x : s.subgraphs) covered.insert(x.ops.begin(), x.ops.end());
  EXPECT_EQ(static_cast<int>(covered.size()), p.numOps()) << str(s);
  return e.valid ? e.total : -1;
}

inline std::vector<double> fullLatencies(const Problem& p, const Schedule& s) {
  std::vector<double> v;
  for (const auto& r : evaluateSchedule(p, s, ModelOptions{}).subgraphs) v.push_back(r.cost.latency);
  return v;
}

inline bool isTopological(const Problem& p, const std::vector<OpId>& order) {
  if (static_cast<int>(order.size()) != p.numOps()) return false;
  std::vector<int> pos(p.numOps(), -1);
  for (int i = 0; i < static_cast<int>(order.size()); ++i) {
    if (order[i] < 0 || order[i] >= p.numOps() || pos[order[i]] >= 0) return false;
    pos[order[i]] = i;
  }
  for (int o = 0; o < p.numOps(); ++o)
    for (TensorId t : p.ops[o].inputs)
      if (p.producer[t] >= 0 && pos[p.producer[t]] > pos[o]) return false;
  return true;
}

inline const std::function<bool()> kNever = [] { return false; };
inline const std::function<bool()> kAlways = [] { return true; };

}  // namespace mlsys::units
