// The large-parts relaxation (cost/bound/lp_relaxation.cpp, boundedRelaxation; `large-parts`):
// the cover's relaxation over a component's parts of at most K ops, each op that lies in a valid
// part of K + 1 ops capped at its share. Checked on random graphs drawn independently of `mlsys
// generate`'s families (tests/soundness/random_problem.h) against the cheapest schedule of the
// brute-force reference (tests/soundness), which shares no code with the bound: the caps are what
// keeps it sound (without them the same small-part relaxation claims more than a valid schedule
// costs), and it raises components above their share bound. The whole bound with it alone among
// the component arguments is in BoundSoundness (tests/bound_check, the "large-parts" variants).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/bound/internal.h"
#include "tests/bound_check/bound_check.h"
#include "tests/soundness/random_problem.h"

namespace mlsys::soundness {
namespace {

using bound_detail::LD;

// The bound of p priced by the share bound and the large-parts relaxation (K ops), every
// component large: no exact cover, no relaxation of groups.
BoundOptions largeOnly(int K) {
  BoundOptions bo;
  bo.max_cover_ops = 0;
  bo.args.disable(BoundArg::Lp);
  bo.large_from = 1;
  bo.large_part_ops = K;
  return bo;
}

// A component's local neighbours along its fusable edges (as the bound grows its parts).
std::vector<std::vector<int32_t>> aroundOf(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops) {
  std::vector<int> local(p.numOps(), -1);
  for (size_t j = 0; j < ops.size(); ++j) local[ops[j]] = static_cast<int>(j);
  std::vector<std::vector<int32_t>> around(ops.size());
  for (size_t j = 0; j < ops.size(); ++j)
    for (TensorId t : p.ops[ops[j]].outputs)
      for (OpId d : p.consumers[t])
        if (local[d] >= 0 && bound_detail::fusableEdge(p, m, ops[j], d)) {
          around[j].push_back(local[d]);
          around[local[d]].push_back(static_cast<int32_t>(j));
        }
  return around;
}

std::vector<LD> computeFloors(const Problem& p, const ModelOptions& m) {
  const OpComputeFloor f = opComputeFloor(p, m);
  std::vector<LD> c(p.numOps());
  for (OpId o = 0; o < p.numOps(); ++o)
    c[o] = static_cast<LD>(f.min_tiles[o]) * bound_detail::computePerTile(p, m, f, o);
  return c;
}

bool above(double claim, double cost) { return claim > cost * (1 + 1e-9) + 1e-9; }

// On graphs where the relaxation over the parts of one op (the singletons) claims more than the
// cheapest schedule, the same relaxation with the caps claims no more. Without the caps
// (boundedRelaxation with every share infinite is relaxationEstimate) this test fails.
TEST(LargeParts, TheCapsKeepTheSmallPartsRelaxationBelowTheOptimum) {
  const ModelOptions m;
  int overclaims = 0, checked = 0;
  for (uint64_t seed = 1; seed <= 400 && overclaims < 12; ++seed) {
    const Problem p = randomProblem(seed);
    const LowerBound lb = lowerBound(p, m, largeOnly(1));
    const std::vector<LD> compute = computeFloors(p, m);
    const GraphBest best = bestSchedule(p, m, Space::ci(), 0);
    if (!best.found) continue;
    for (const BoundComponent& c : lb.components) {
      if (c.ops.size() < 2 || c.op_shares.size() != c.ops.size()) continue;
      const auto around = aroundOf(p, m, c.ops);
      const bound_detail::LpCover plain =
          bound_detail::relaxationEstimate(p, m, c.ops, around, compute, 1, 1'000'000, {});
      if (!plain.done || !above(static_cast<double>(plain.value), best.total)) continue;
      ++overclaims;
      const std::vector<LD> shares(c.op_shares.begin(), c.op_shares.end());
      const bound_detail::LpCover capped =
          bound_detail::boundedRelaxation(p, m, c.ops, around, compute, 1, shares, 1'000'000, {});
      ASSERT_TRUE(capped.done) << "seed " << seed;
      ++checked;
      EXPECT_FALSE(above(static_cast<double>(capped.value), best.total))
          << "seed " << seed << ": capped " << static_cast<double>(capped.value) << " against the optimum "
          << best.total << " (uncapped " << static_cast<double>(plain.value) << ")";
      // y = s is feasible: never below the share bound.
      LD sum = 0;
      for (LD s : shares) sum += s;
      EXPECT_GE(static_cast<double>(capped.value), static_cast<double>(sum) * (1 - 1e-9)) << "seed " << seed;
    }
  }
  EXPECT_GE(overclaims, 3) << "too few graphs where the uncapped relaxation overclaims: the test checks nothing";
  EXPECT_EQ(checked, overclaims);
}

// With every component large (large_from 1), the relaxation over parts of up to 2 or 3 ops sets
// some components above their share bound and floors, and the bound stays at or below the
// cheapest schedule on every graph.
TEST(LargeParts, RaisesComponentsAboveTheirSharesAndStaysBelowTheOptimum) {
  const ModelOptions m;
  int raised = 0;
  std::vector<std::string> violations;
  for (uint64_t seed = 1000; seed < 1150; ++seed) {
    const Problem p = randomProblem(seed);
    const GraphBest best = bestSchedule(p, m, Space::ci(), 0);
    if (!best.found) continue;
    for (int K : {2, 3}) {
      const LowerBound lb = lowerBound(p, m, largeOnly(K));
      for (const BoundComponent& c : lb.components) raised += c.by_large_parts ? 1 : 0;
      if (above(lb.value(), best.total))
        violations.push_back("seed " + std::to_string(seed) + " K " + std::to_string(K) + ": " +
                             std::to_string(lb.value()) + " above " + std::to_string(best.total));
      BoundOptions off = largeOnly(K);
      off.args.disable(BoundArg::LargeParts);
      const LowerBound without = lowerBound(p, m, off);
      EXPECT_LE(without.value(), lb.value() * (1 + 1e-12)) << "seed " << seed << ": switching it off raised the bound";
      for (const BoundComponent& c : without.components) EXPECT_FALSE(c.by_large_parts) << "seed " << seed;
    }
  }
  EXPECT_GT(raised, 5) << "the large-parts relaxation raised too few components: the test checks nothing";
  EXPECT_TRUE(violations.empty()) << violations.size() << " bounds above a valid schedule; the first: "
                                  << (violations.empty() ? "" : violations.front());
}

// At the default threshold a small graph has no large component: the bound is the same with the
// argument on and off.
TEST(LargeParts, SmallComponentsAreLeftAlone) {
  const ModelOptions m;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Problem p = randomProblem(seed);
    BoundOptions off;
    off.args.disable(BoundArg::LargeParts);
    EXPECT_EQ(lowerBound(p, m).value(), lowerBound(p, m, off).value()) << "seed " << seed;
  }
}

}  // namespace
}  // namespace mlsys::soundness
