// The cover's linear relaxation (cost/bound/lp_relaxation.cpp): shares y >= 0 that every valid connected
// part pays over its unforced ops, found by CLP over the parts grown from every op. Checked
// against every connected part of small generated graphs (so a part the growth misses, or a
// solution the repair leaves above a floor, fails), against the exact solver's optimum with the
// exact cover switched off, and on the contest graphs where it closes the gap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/bound/internal.h"
#include "cost/model/problem.h"
#include "engine/exact/exact.h"
#include "engine/generate/generator.h"
#include "tests/test_util.h"

using namespace mlsys;
using bound_detail::LD;

namespace {

// The whole graph as one group: ops in topological order, each op's neighbours by a tensor.
std::vector<uint64_t> aroundOf(const Problem& p) {
  std::vector<uint64_t> around(p.numOps(), 0);
  auto bit = [&](OpId o) { return uint64_t{1} << p.topo_pos[o]; };
  for (OpId o = 0; o < p.numOps(); ++o)
    for (TensorId t : p.ops[o].outputs)
      for (OpId d : p.consumers[t]) around[p.topo_pos[o]] |= bit(d), around[p.topo_pos[d]] |= bit(o);
  return around;
}

// Each op's compute floor per run, as the bound's (base_cost per tile of its fewest native tiles;
// the graphs here are under the default matmul_compute).
std::vector<LD> computeFloors(const Problem& p, const ModelOptions& m) {
  const OpComputeFloor f = opComputeFloor(p, m);
  std::vector<LD> c(p.numOps());
  for (OpId o = 0; o < p.numOps(); ++o) c[o] = static_cast<LD>(f.min_tiles[o]) * static_cast<LD>(p.ops[o].base_cost);
  return c;
}

bool connected(uint64_t S, const std::vector<uint64_t>& around) {
  uint64_t reached = S & (~S + 1), frontier = reached;
  while (frontier) {
    uint64_t next = 0;
    for (uint64_t f = frontier; f; f &= f - 1) next |= around[__builtin_ctzll(f)];
    next &= S & ~reached;
    reached |= next;
    frontier = next;
  }
  return reached == S;
}

}  // namespace

// Every connected set of ops of small generated graphs (both readings): where its floor is finite,
// its unforced ops' shares are at most that floor, and the relaxation's value is their sum.
TEST(LpBound, EveryValidPartPaysItsShares) {
  int graphs = 0, parts = 0, tight = 0, readerShares = 0;
  for (const char* family : {"transformer", "random", "cnn", "mixer", "shared-weight", "odd-k", "gemm-chain"})
    for (int seed = 1; seed <= 2; ++seed)
      for (bool reduction : {false, true}) {
        const Problem p = generateProblem(family, 9, static_cast<uint64_t>(seed));
        if (p.numOps() > 12) continue;
        const ModelOptions m = test::reading(reduction);
        SCOPED_TRACE(std::string(family) + " seed " + std::to_string(seed) + " " + m.describe());
        const std::vector<uint64_t> around = aroundOf(p);
        const bound_detail::LpCover lp =
            bound_detail::lpCover(p, m, p.topo, around, computeFloors(p, m), 1'000'000, nullptr);
        ASSERT_TRUE(lp.done);
        ++graphs;
        LD sum = 0;
        for (LD y : lp.shares) {
          EXPECT_GE(y, 0);
          sum += y;
        }
        for (LD y : lp.reader_shares) {
          EXPECT_GE(y, 0);
          sum += y;
        }
        readerShares += !lp.reader_shares.empty();
        EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(lp.value), 1e-6 * static_cast<double>(lp.value));
        const int n = p.numOps();
        for (uint64_t S = 1; S < (uint64_t{1} << n); ++S) {
          if (!connected(S, around)) continue;
          std::vector<OpId> part;
          for (int j = 0; j < n; ++j)
            if (S >> j & 1) part.push_back(p.topo[j]);
          const double floor = partFloor(p, m, part).value;
          if (!std::isfinite(floor)) continue;
          std::vector<char> forced(p.numOps(), 0);
          for (OpId o : forcedOps(p, part)) forced[o] = 1;
          LD paid = 0;
          for (int j = 0; j < n; ++j)
            if ((S >> j & 1) && !forced[p.topo[j]]) paid += lp.shares[j];
          // and the shares of the reader elements it serves (readers.cpp)
          int elements = 0;
          const std::vector<std::vector<int32_t>> served = bound_detail::readerElements(p, p.topo, {S}, elements);
          for (int32_t e : served[0]) paid += lp.reader_shares.at(static_cast<size_t>(e - n));
          EXPECT_EQ(lp.reader_shares.size(), static_cast<size_t>(elements));
          EXPECT_LE(static_cast<double>(paid), floor * (1 + 1e-12)) << "part of " << part.size() << " ops";
          ++parts;
          tight += static_cast<double>(paid) > floor * (1 - 1e-9);
        }
      }
  EXPECT_GE(graphs, 20);
  EXPECT_GT(tight, 0);
  EXPECT_GT(readerShares, 0);  // some graph has an unretainable output with two readers or more
  std::printf("%d graphs (%d with reader elements), %d valid parts, %d tight\n", graphs, readerShares, parts, tight);
}

// Too many sets to grow: nothing from the relaxation (the group keeps its floors).
TEST(LpBound, GivesUpBeyondItsBudget) {
  const Problem p = generateProblem("random", 8, 1);
  const ModelOptions m;
  const bound_detail::LpCover lp = bound_detail::lpCover(p, m, p.topo, aroundOf(p), computeFloors(p, m), 3, nullptr);
  EXPECT_FALSE(lp.done);
  BoundOptions bo;
  bo.max_cover_ops = 0;
  bo.lp_parts = 0;
  for (const BoundComponent& c : lowerBound(p, m, bo).components)
    for (const BoundGroup& g : c.groups) EXPECT_NE(g.method, BoundMethod::Lp);
}

// With the exact cover switched off (--cover-limit 0) the relaxation prices the small graphs: at
// or below the whole space's proven optimum, and on most of them at it (the cover's relaxation is
// often integral).
TEST(LpBound, BelowTheOptimumWithoutTheCover) {
  BoundOptions bo;
  bo.max_cover_ops = 0;
  int runs = 0, byLp = 0, atOptimum = 0;
  for (const char* family : {"random", "cnn", "shared-weight", "odd-k"})
    for (int seed = 1; seed <= 2; ++seed)
      for (bool reduction : {false, true}) {
        const Problem p = generateProblem(family, 5, static_cast<uint64_t>(seed));
        const ModelOptions m = test::reading(reduction);
        SCOPED_TRACE(std::string(family) + " seed " + std::to_string(seed) + " " + m.describe());
        ExactOptions o;
        o.full_space = true;
        const ExactResult r = solveExact(p, m, o, [] { return false; });
        if (!r.proven_optimal) continue;
        const LowerBound lb = lowerBound(p, m, bo);
        EXPECT_LE(lb.value(), r.latency * (1 + 1e-9));
        for (const BoundComponent& c : lb.components)
          for (const BoundGroup& g : c.groups) byLp += g.method == BoundMethod::Lp;
        atOptimum += lb.value() >= r.latency * (1 - 1e-6);
        ++runs;
      }
  EXPECT_GE(runs, 12);
  EXPECT_GE(byLp, runs / 2);
  EXPECT_GE(atOptimum, runs / 2);
}

// The contest graphs of 21 to 64 ops in one component. mlsys-2026-10 under k_limit=reduction: six
// branches MatMul -> GELU -> MatMul at k = K = 1024, their sums added in a tree; each add beside
// its MatMul squeezes the tile that fits (more tiles), alone it loads two tensors: the share bound
// priced that at 8,215,107.66, the relaxation at 8,415,344 (the best schedule known 8,427,764.55,
// 0.15% above). mlsys-2026-14 meets its best schedule under both readings (2,771,788.8 and
// 2,665,304: proven optimal; the share bound was 0.03% and 0.59% below).
TEST(LpBound, ContestGraphsBeyondTheCover) {
  const std::string ten = test::sharedBenchmark("mlsys-2026-10"), fourteen = test::sharedBenchmark("mlsys-2026-14");
  if (ten.empty() || fourteen.empty()) GTEST_SKIP() << "../shared/benchmarks is absent";
  const LowerBound b10 = lowerBound(parseProblemFile(ten), test::reading(true));
  EXPECT_NEAR(b10.value(), 8415344.0, 1.0);
  ASSERT_EQ(b10.components.size(), 1u);
  ASSERT_EQ(b10.components[0].groups.size(), 1u);
  EXPECT_EQ(b10.components[0].groups[0].method, BoundMethod::Lp);
  const Problem p14 = parseProblemFile(fourteen);
  EXPECT_NEAR(lowerBound(p14, test::reading(false)).value(), 2771788.8, 1.0);
  EXPECT_NEAR(lowerBound(p14, test::reading(true)).value(), 2665304.0, 1.0);
}

// The solver's y is repaired part by part. On `generate transformer 100 --seed 9001` (whose seed gives
// some MatMuls base_cost 0) the group {2, 8, 88, 104} has an op whose own part's floor is 0; CLP left
// ~1e-12 on it, and scaling all of y by that part's ratio (the repair before) gave the group 0: it kept
// its floors, 3,358.72. Scaling only the parts above their floors keeps the relaxation, 3,403. Every
// valid part still pays its shares (EveryValidPartPaysItsShares checks the repair on every part).
TEST(LpBound, ASolverResidueOnAFreeOpDoesNotVoidTheShares) {
  const Problem p = generateProblem("transformer", 100, 9001);
  const ModelOptions m;
  std::vector<OpId> ops = {2, 8, 88, 104};
  std::sort(ops.begin(), ops.end(), [&](OpId a, OpId b) { return p.topo_pos[a] < p.topo_pos[b]; });
  std::vector<uint64_t> around(ops.size(), 0);
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t j = 0; j < ops.size(); ++j)
      for (TensorId t : p.ops[ops[i]].outputs)
        for (OpId d : p.consumers[t])
          if (d == ops[j]) around[i] |= uint64_t{1} << j, around[j] |= uint64_t{1} << i;
  bool freeOp = false;
  for (OpId o : ops) freeOp = freeOp || partFloor(p, m, {o}).value == 0;
  ASSERT_TRUE(freeOp) << "the generator no longer gives this group a free op";
  const bound_detail::LpCover lp = bound_detail::lpCover(p, m, ops, around, computeFloors(p, m), 1'000'000, nullptr);
  ASSERT_TRUE(lp.done);
  EXPECT_NEAR(static_cast<double>(lp.value), 3403.0, 0.01);
}

// bench/relaxation_estimate's figure (NOT a bound): the same relaxation over sets of op indices (forced
// ops and reader elements included). With every part listed it is the bound's relaxation; with the
// parts capped at K ops, constraints are only left out, so it is never below that.
TEST(LpBound, TheEstimateIsTheRelaxationWhenEveryPartIsListed) {
  int graphs = 0, above = 0;
  for (const char* family : {"transformer", "random", "cnn", "mixer", "gemm-chain"})
    for (int seed = 1; seed <= 2; ++seed) {
      const Problem p = generateProblem(family, 9, static_cast<uint64_t>(seed));
      if (p.numOps() > 12) continue;
      const ModelOptions m;
      SCOPED_TRACE(std::string(family) + " seed " + std::to_string(seed));
      const std::vector<uint64_t> around = aroundOf(p);
      std::vector<std::vector<int32_t>> lists(around.size());
      for (size_t j = 0; j < around.size(); ++j)
        for (int i = 0; i < 64; ++i)
          if (around[j] >> i & 1) lists[j].push_back(i);
      const std::vector<LD> compute = computeFloors(p, m);
      const bound_detail::LpCover full = bound_detail::lpCover(p, m, p.topo, around, compute, 1'000'000, nullptr);
      const bound_detail::LpCover all =
          bound_detail::relaxationEstimate(p, m, p.topo, lists, compute, 0, 1'000'000, {});
      const bound_detail::LpCover pairs =
          bound_detail::relaxationEstimate(p, m, p.topo, lists, compute, 2, 1'000'000, {});
      ASSERT_TRUE(full.done && all.done && pairs.done);
      EXPECT_NEAR(static_cast<double>(all.value), static_cast<double>(full.value),
                  1e-6 * static_cast<double>(full.value));
      EXPECT_GE(static_cast<double>(pairs.value), static_cast<double>(full.value) * (1 - 1e-9));
      above += pairs.value > full.value * (1 + 1e-6L);
      ++graphs;
    }
  EXPECT_GE(graphs, 6);
  EXPECT_GT(above, 0);  // capping the parts does leave binding constraints out somewhere
}

// The readers argument in the relaxation (readers.cpp, lp_relaxation.cpp's reader elements): random,
// 5 ops, seed 1, with the exact cover off. A MatMul's output (96 x 768, too large to retain) is read
// by a MatMul and by a Pointwise; each reader's first subgraph gets it from a subgraph that runs its
// maker with that reader or with no reader of it (then it is written). Without the reader elements the
// relaxation does not beat the floors (42,606); with them it is the whole space's optimum, 45,830.4,
// under both readings.
TEST(LpBound, EachReaderOfAnUnretainableOutputIsServed) {
  const Problem p = generateProblem("random", 5, 1);
  BoundOptions bo;
  bo.max_cover_ops = 0;
  for (bool reduction : {false, true}) {
    const ModelOptions m = test::reading(reduction);
    SCOPED_TRACE(m.describe());
    ExactOptions o;
    o.full_space = true;
    const ExactResult r = solveExact(p, m, o, [] { return false; });
    ASSERT_TRUE(r.proven_optimal);
    EXPECT_NEAR(r.latency, 45830.4, 1e-6);
    const LowerBound with = lowerBound(p, m, bo);
    EXPECT_LE(with.value(), r.latency * (1 + 1e-12));
    EXPECT_GE(with.value(), r.latency * (1 - 1e-9));
    bool byLp = false;
    for (const BoundComponent& c : with.components)
      for (const BoundGroup& g : c.groups) byLp = byLp || g.method == BoundMethod::Lp;
    EXPECT_TRUE(byLp);
    BoundOptions without = bo;
    without.args.disable(BoundArg::Readers);
    EXPECT_LT(lowerBound(p, m, without).value(), r.latency * (1 - 0.05));
  }
}

// The cover's dp keeps at most 20 bits of ops and reader pairs: random, 24 ops, seed 1 has a 16-op
// component whose makers need more, so its cover (105,182) drops some pairs. Its relaxation keeps
// them all (107,471), and the larger counts: the bound is 121,664.96 (119,375.84 before; a 10 s
// solve finds 121,693), as with the cover off.
TEST(LpBound, TheRelaxationBeatsACoverThatDroppedReaderPairs) {
  const Problem p = generateProblem("random", 24, 1);
  const ModelOptions m;
  const LowerBound lb = lowerBound(p, m);
  EXPECT_NEAR(lb.value(), 121664.96, 0.01);
  bool lpGroup = false;
  for (const BoundComponent& c : lb.components)
    for (const BoundGroup& g : c.groups) lpGroup = lpGroup || (g.method == BoundMethod::Lp && g.ops.size() <= 20);
  EXPECT_TRUE(lpGroup);
  BoundOptions off;
  off.max_cover_ops = 0;
  EXPECT_NEAR(lowerBound(p, m, off).value(), lb.value(), 0.01);
  BoundOptions without;
  without.args.disable(BoundArg::Lp);
  EXPECT_NEAR(lowerBound(p, m, without).value(), 119375.84, 0.01);
}

// A component beyond the cover is cut at an edge floor, and each group's relaxation holds only
// beside the cap min(sum of the groups, edge floor): a subgraph may keep a cut edge inside. The
// component's own relaxation grows its parts along every edge, so it holds every subgraph and the
// cap goes (relaxations.cpp, relaxedCovers). The transformer of 12 ops, seed 2, with the cover
// off: {2, 5, ..., 11} is cut at 2,236,962.13 into {2} and the rest, whose relaxations add up to
// 3,347,996.27; the cap left it at its shares (3,343,726.4). Whole, it gets 3,347,996.27, and the
// bound stays below the exact solver's schedule.
TEST(LpBound, TheWholeComponentsRelaxationIsNotCappedByAnEdgeFloor) {
  const Problem p = generateProblem("transformer", 3, 2);
  const ModelOptions m;
  BoundOptions bo;
  bo.max_cover_ops = 0;
  const LowerBound lb = lowerBound(p, m, bo);
  int whole = 0;
  for (const BoundComponent& c : lb.components) {
    if (c.ops.size() != 8) continue;
    ++whole;
    ASSERT_EQ(c.groups.size(), 1u);
    EXPECT_EQ(c.groups[0].method, BoundMethod::Lp);
    EXPECT_TRUE(std::isinf(c.edge_floor));
    EXPECT_NEAR(c.value, 3347996.2666666666, 1e-3);
  }
  EXPECT_EQ(whole, 1);
  ExactOptions o;
  o.full_space = true;
  const ExactResult r = solveExact(p, m, o, [] { return false; });
  ASSERT_TRUE(r.found);
  EXPECT_LE(lb.value(), r.latency * (1 + 1e-9));
  EXPECT_NEAR(lb.value(), 5096988.2666666666, 1e-3);
}
