// The share bound's newer arguments (cost/bound/forced_shapes.cpp, cost/bound/share_modes.cpp,
// cost/bound/part_floor.cpp's step-by-step band floor), each checked against the evaluator's own plans
// or schedules: forced output shapes and forced outputs against every valid subgraph of small
// generated graphs, the band floors of a lone MatMul (its part's, and its joint floor's with the
// stores of each step) against every granularity and traversal the spec offers it, and the shares of a
// mlsys-2026-9-like chain against the whole space's optimum.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/bound/internal.h"
#include "cost/model/problem.h"
#include "cost/pricing/evaluator.h"
#include "cost/pricing/subgraph.h"
#include "engine/exact/exact.h"
#include "engine/generate/generator.h"
#include "tests/test_util.h"

using namespace mlsys;

namespace {

// Every connected op set of at most maxOps ops (linked by a tensor one makes and another reads,
// V4), each sorted.
std::vector<std::vector<OpId>> connectedSets(const Problem& p, size_t maxOps) {
  std::set<std::vector<OpId>> seen;
  std::vector<std::vector<OpId>> out;
  for (OpId o = 0; o < p.numOps(); ++o)
    if (seen.insert({o}).second) out.push_back({o});
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].size() >= maxOps) continue;
    const std::vector<OpId> S = out[i];
    for (OpId v : S) {
      std::vector<OpId> nbs;
      for (TensorId t : p.ops[v].outputs)
        for (OpId d : p.consumers[t]) nbs.push_back(d);
      for (TensorId t : p.ops[v].inputs)
        if (p.producer[t] >= 0) nbs.push_back(p.producer[t]);
      for (OpId nb : nbs) {
        if (std::find(S.begin(), S.end(), nb) != S.end()) continue;
        std::vector<OpId> grown = S;
        grown.insert(std::upper_bound(grown.begin(), grown.end(), nb), nb);
        if (seen.insert(grown).second) out.push_back(std::move(grown));
      }
    }
  }
  return out;
}

std::vector<OpId> topological(const Problem& p, std::vector<OpId> S) {
  std::sort(S.begin(), S.end(), [&](OpId a, OpId b) { return p.topo_pos[a] < p.topo_pos[b]; });
  return S;
}

}  // namespace

// Over every connected set of up to 4 ops of small generated graphs (7 families, both readings),
// whenever the evaluator accepts the set at one of a range of granularities: no two of its
// ops have disjoint forced shapes (else the share bound would price them apart), and each op's
// forced outputs include a tensor the plan writes (no retention asked, so the non-ephemeral
// outputs are the written ones). And the arguments bite: some pairs are kept apart.
TEST(ForcedShapes, AgreeWithEveryValidSubgraphOfSmallGraphs) {
  int valid = 0, apart = 0, forced = 0;
  for (const std::string& family : generatorFamilies())
    for (int size : {5, 8})
      for (uint64_t seed : {1u, 2u})
        for (bool reduction : {false, true}) {
          const Problem p = generateProblem(family, size, seed);
          ModelOptions m;
          if (reduction) m.k_limit = ModelOptions::KLimit::Reduction;
          std::vector<std::optional<std::vector<bound_detail::Shape>>> shapes;
          std::vector<std::optional<std::vector<TensorId>>> outs;
          for (OpId o = 0; o < p.numOps(); ++o) {
            shapes.push_back(bound_detail::forcedShapes(p, o));
            outs.push_back(bound_detail::forcedOutputs(p, o));
          }
          for (OpId a = 0; a < p.numOps(); ++a)
            for (OpId b = a + 1; b < p.numOps(); ++b)
              apart += bound_detail::mayShareSubgraph(shapes[a], shapes[b]) ? 0 : 1;
          i64 kmax = 1;
          for (const Op& op : p.ops) kmax = std::max(kmax, op.K);
          const std::vector<Granularity> grans = {{128, 128, 1}, {64, 64, 16}, {128, 128, 128}, {32, 32, 64},
                                                  {16, 16, 512}, {8, 8, kmax}, {128, 128, kmax}};
          for (const std::vector<OpId>& set : connectedSets(p, 4)) {
            const std::vector<OpId> S = topological(p, set);
            for (const Granularity& g : grans) {
              const SubgraphPlan pl = planSubgraph(p, m, S, g, {}, {});
              if (!pl.valid || !costSubgraph(p, pl, Traversal{}).valid) continue;  // V11 too
              ++valid;
              std::string ops;
              for (OpId v : S) ops += " " + std::to_string(v);
              SCOPED_TRACE(family + " size " + std::to_string(size) + " seed " + std::to_string(seed) +
                           (reduction ? " reduction" : " spec") + ": ops" + ops + " at [" + std::to_string(g.w) + "," +
                           std::to_string(g.h) + "," + std::to_string(g.k) + "]");
              for (OpId a : S)
                for (OpId b : S) EXPECT_TRUE(bound_detail::mayShareSubgraph(shapes[a], shapes[b])) << a << ", " << b;
              for (OpId v : S) {
                if (!outs[v]) continue;
                ++forced;
                bool hit = false;
                for (TensorId t : *outs[v])
                  hit = hit || std::find(pl.written.begin(), pl.written.end(), t) != pl.written.end();
                std::string fs, ws;
                for (TensorId t : *outs[v]) fs += " " + std::to_string(t);
                for (TensorId t : pl.written) ws += " " + std::to_string(t);
                EXPECT_TRUE(hit) << "op " << v << " forced" << fs << " written" << ws;
              }
              break;  // one valid granularity is enough: the arguments do not depend on it
            }
          }
        }
  EXPECT_GE(valid, 500);
  EXPECT_GE(forced, 500);
  EXPECT_GE(apart, 1);
}

namespace {

// The share bound's invariant, which every argument of it (shares.cpp, joint_floors.cpp,
// beside.cpp, share_modes.cpp, pressure.cpp) must keep: every valid subgraph
// pays at least the shares of its ops. Over every connected set of at most maxOps ops of p, at
// each granularity and both snake orders, whenever the evaluator accepts the set, its latency
// alone (no tensor retained into it, which only adds loads) is at least the sum of its ops'
// shares (every component priced by the share bound). Counts the sets checked and those within
// 1% of their shares.
void checkSharesPaid(const Problem& p, const ModelOptions& m, int parts, const std::vector<Granularity>& grans,
                     size_t maxOps, const std::string& label, int& checked, int& tight) {
  BoundOptions bo;
  bo.max_cover_ops = 0;
  bo.share_parts = parts;
  const LowerBound lb = lowerBound(p, m, bo);
  std::vector<double> share(p.numOps(), 0);
  for (const BoundComponent& c : lb.components)
    for (size_t i = 0; i < c.op_shares.size(); ++i) share[c.ops[i]] = c.op_shares[i];
  for (const std::vector<OpId>& set : connectedSets(p, maxOps)) {
    const std::vector<OpId> S = topological(p, set);
    double sum = 0;
    for (OpId v : S) sum += share[v];
    for (const Granularity& g : grans) {
      const SubgraphPlan pl = planSubgraph(p, m, S, g, {}, {});
      if (!pl.valid) continue;
      for (TraversalKind t : {TraversalKind::RowSnake, TraversalKind::ColSnake}) {
        const SubgraphCost c = costSubgraph(p, pl, Traversal{t, {}});
        if (!c.valid) continue;
        ++checked;
        tight += sum >= 0.99 * c.latency ? 1 : 0;
        std::string ops;
        for (OpId v : S) ops += " " + std::to_string(v);
        EXPECT_LE(sum, c.latency * (1 + 1e-9))
            << label << " share_parts " << parts << ": ops" << ops << " at [" << g.w << "," << g.h << "," << g.k << "]";
      }
    }
  }
}

}  // namespace

// The invariant (checkSharesPaid) on small generated graphs: 7 families, both readings, every op
// open and the default share_parts, sets of up to 4 ops. And it bites: some sets are within 1% of
// their shares.
TEST(ShareBound, EveryValidSubgraphPaysItsShares) {
  int checked = 0, tight = 0;
  for (const std::string& family : generatorFamilies())
    for (int size : {5, 8})
      for (uint64_t seed : {1u, 2u})
        for (bool reduction : {false, true})
          for (int parts : {0, 24}) {
            const Problem p = generateProblem(family, size, seed);
            i64 kmax = 1;
            for (const Op& op : p.ops) kmax = std::max(kmax, op.K);
            const std::vector<Granularity> grans = {{128, 128, 1}, {64, 64, 16}, {128, 128, 128},  {32, 32, 64},
                                                    {16, 16, 512}, {8, 8, kmax}, {128, 128, kmax}, {96, 80, 256}};
            checkSharesPaid(p, test::reading(reduction), parts, grans, 4,
                            family + " size " + std::to_string(size) + " seed " + std::to_string(seed) +
                                (reduction ? " reduction" : " spec"),
                            checked, tight);
          }
  EXPECT_GE(checked, 1000);
  EXPECT_GE(tight, 10);
}

// Pointwise ops beside a class in step mode split what a subgraph pays beyond the class's step
// floor by how many of them may be in it (besideStepShare's n). Where no tile slice fits beside
// one MatMul's bands, that count is the Pointwise ops that need no slice with one op of the class
// (besideStep's Crowd): in mlsys-2026-10, under k_limit=reduction, one (the Pointwise making its
// LHS, or making another one's), not the 11 that may meet the class. Checked: at such tiles no
// valid subgraph holds one of the second MatMuls with two Pointwise ops; and the share bound that
// count gives with the arguments below and the adds' loads (besideLoads), without the cover's
// linear relaxation that now prices this graph (BoundOptions::lp_parts 0): 8,215,107.66 (8,010,381
// with 11 and none of them).
TEST(ShareBound, WhereNoTileSliceFitsOnePointwiseOpSharesAMatMul) {
  const std::string file = test::sharedBenchmark("mlsys-2026-10");
  if (file.empty()) GTEST_SKIP() << "../shared/benchmarks is absent";
  const Problem p = parseProblemFile(file);
  const ModelOptions m = test::reading(true);
  const std::set<OpId> second = {2, 5, 8, 11, 14, 17};
  int checked = 0;
  // Tiles where W2's band (1024 w), the LHS band (1024 h) and two tiles exceed the capacity.
  for (const Granularity& g :
       std::vector<Granularity>{{79, 107, 1024}, {72, 115, 1024}, {70, 114, 1024}, {64, 120, 1024}, {90, 96, 1024}})
    for (const std::vector<OpId>& set : connectedSets(p, 4)) {
      int mm = 0, pw = 0;
      for (OpId v : set) mm += second.count(v) ? 1 : 0, pw += p.ops[v].type == OpType::Pointwise ? 1 : 0;
      if (mm != 1 || pw < 2 || set.size() != static_cast<size_t>(mm + pw)) continue;
      ++checked;
      const std::vector<OpId> S = topological(p, set);
      std::string ops;
      for (OpId v : S) ops += " " + std::to_string(v);
      const SubgraphPlan pl = planSubgraph(p, m, S, g, {}, {});
      EXPECT_FALSE(pl.valid && costSubgraph(p, pl, Traversal{}).valid)
          << "ops" << ops << " at [" << g.w << "," << g.h << "]";
    }
  EXPECT_GE(checked, 20);
  BoundOptions sharesAlone;
  sharesAlone.lp_parts = 0;
  EXPECT_NEAR(lowerBound(p, m, sharesAlone).value(), 8215107.657, 1e-2);
}

// Two more of the same graph (mlsys-2026-10, k_limit=reduction). A gelu that feeds a second
// MatMul (K = 1024) is never beside that class at nk > 1 (Beside::nkOne: with k < 1024 it cannot
// be in S with the MatMul it feeds, V9, nor reach another op of the class): the slack there is
// split among the 5 Pointwise ops left, not 11. And its input, made by the first MatMul (closed:
// all its parts are listed) and claimed by the MatMul it feeds, is loaded whole wherever neither
// is in S (closedClaimedLoads): with no joint op beside it. Checked: no valid subgraph holds a
// gelu and a second MatMul at k < 1024; the gelus' shares (8,090,663.68 without the first,
// 8,095,555.2 without the second).
TEST(ShareBound, AGeluThatFeedsTheClassIsBesideItOnlyAtTheFullReduction) {
  const std::string file = test::sharedBenchmark("mlsys-2026-10");
  if (file.empty()) GTEST_SKIP() << "../shared/benchmarks is absent";
  const Problem p = parseProblemFile(file);
  const ModelOptions m = test::reading(true);
  const std::set<OpId> second = {2, 5, 8, 11, 14, 17}, gelu = {1, 4, 7, 10, 13, 16};
  int checked = 0, valid = 0;
  for (const Granularity& g :
       std::vector<Granularity>{{128, 128, 128}, {128, 128, 512}, {64, 64, 1023}, {128, 64, 256}, {70, 114, 1024}})
    for (const std::vector<OpId>& set : connectedSets(p, 3)) {
      const bool both = std::any_of(set.begin(), set.end(), [&](OpId v) { return second.count(v) > 0; }) &&
                        std::any_of(set.begin(), set.end(), [&](OpId v) { return gelu.count(v) > 0; });
      if (!both) continue;
      const std::vector<OpId> S = topological(p, set);
      const SubgraphPlan pl = planSubgraph(p, m, S, g, {}, {});
      const bool ok = pl.valid && costSubgraph(p, pl, Traversal{}).valid;
      if (g.k < 1024) {
        ++checked;
        EXPECT_FALSE(ok) << "a gelu and a second MatMul at k = " << g.k;
      } else {
        valid += ok ? 1 : 0;  // at k = K they do meet
      }
    }
  EXPECT_GE(checked, 40);
  EXPECT_GE(valid, 1);
  const LowerBound b = lowerBound(p, m);
  ASSERT_EQ(b.components.size(), 1u);
  for (OpId v : gelu) EXPECT_NEAR(b.components[0].op_shares[static_cast<size_t>(v)], 28531.2, 1e-2) << "gelu " << v;
}

// The invariant on the contest graphs where the newer arguments fire (mlsys-2026-9, 10 and 13:
// residual chains, branches added up, shared weights), both readings, sets of up to 3 ops, at the
// granularities their best schedules use and others.
TEST(ShareBound, EveryValidSubgraphOfTheContestGraphsPaysItsShares) {
  if (test::sharedBenchmark("mlsys-2026-10").empty()) GTEST_SKIP() << "../shared/benchmarks is absent";
  const std::vector<Granularity> grans = {{128, 128, 128},  {128, 128, 8},  {70, 114, 1024}, {106, 79, 1024},
                                          {103, 128, 1024}, {64, 64, 1024}, {81, 64, 4096},  {128, 10, 1},
                                          {30, 30, 4096},   {128, 32, 128}};
  int checked = 0, tight = 0;
  for (const char* name : {"mlsys-2026-9", "mlsys-2026-10", "mlsys-2026-13"}) {
    const Problem p = parseProblemFile(test::sharedBenchmark(name));
    for (bool reduction : {false, true})
      checkSharesPaid(p, test::reading(reduction), 24, grans, 3,
                      std::string(name) + (reduction ? " reduction" : " spec"), checked, tight);
  }
  EXPECT_GE(checked, 500);
  EXPECT_GE(tight, 10);
}

// The same at k < kSplit (forcedShapes with kSplit, forced_shapes.cpp: a Pointwise of S never feeds
// a MatMul of S with K > N and K >= kSplit there), for every kSplit among the graph's K above the
// granularity's k, over every granularity the evaluator accepts; and it bites: some pairs that
// may meet at some k are apart below some kSplit (the residual chains of the ffn families).
TEST(ForcedShapes, BelowASplitKAgreeWithEveryValidSubgraph) {
  int checked = 0, apartOnlySplit = 0;
  for (const std::string& family : generatorFamilies())
    for (int size : {5, 8})
      for (uint64_t seed : {1u, 2u}) {
        const Problem p = generateProblem(family, size, seed);
        ModelOptions m;
        m.k_limit = ModelOptions::KLimit::Reduction;
        std::set<i64> splits;
        for (const Op& op : p.ops)
          if (op.type == OpType::MatMul) splits.insert(op.K);
        std::map<std::pair<OpId, i64>, std::optional<std::vector<bound_detail::Shape>>> shapes;
        for (OpId o = 0; o < p.numOps(); ++o)
          for (i64 k : splits) shapes[{o, k}] = bound_detail::forcedShapes(p, o, k);
        for (i64 k : splits)
          for (OpId a = 0; a < p.numOps(); ++a)
            for (OpId b = a + 1; b < p.numOps(); ++b) {
              const auto whole = bound_detail::forcedShapes(p, a), other = bound_detail::forcedShapes(p, b);
              apartOnlySplit += bound_detail::mayShareSubgraph(whole, other) &&
                                        !bound_detail::mayShareSubgraph(shapes[{a, k}], shapes[{b, k}])
                                    ? 1
                                    : 0;
            }
        const std::vector<Granularity> grans = {{128, 128, 1}, {64, 64, 16},  {128, 128, 128},
                                                {32, 32, 64},  {16, 16, 256}, {16, 16, 512},
                                                {8, 8, 1024},  {96, 96, 256}, {64, 64, 512}};
        for (const std::vector<OpId>& set : connectedSets(p, 4)) {
          const std::vector<OpId> S = topological(p, set);
          for (const Granularity& g : grans) {
            const SubgraphPlan pl = planSubgraph(p, m, S, g, {}, {});
            if (!pl.valid || !costSubgraph(p, pl, Traversal{}).valid) continue;
            for (i64 k : splits) {
              if (g.k >= k) continue;
              ++checked;
              for (OpId a : S)
                for (OpId b : S)
                  EXPECT_TRUE(bound_detail::mayShareSubgraph(shapes[{a, k}], shapes[{b, k}]))
                      << family << " size " << size << " seed " << seed << ": ops " << a << ", " << b << " at k " << g.k
                      << " < " << k;
            }
          }
        }
      }
  EXPECT_GE(checked, 500);
  EXPECT_GE(apartOnlySplit, 1);
}

namespace {

// The least latency over every schedule of one subgraph holding the lone MatMul of p: sides in
// steps of 8, three k, four traversals (raster, both snakes, column-major).
double bestLoneMatMul(const Problem& p, const ModelOptions& m) {
  const i64 W = p.widths[p.ops[0].outputs[0]], H = p.heights[p.ops[0].outputs[0]];
  double best = 1e300;
  for (i64 k : {128, 512, 1024})
    for (i64 w = 8; w <= 128; w += 8)
      for (i64 h = 8; h <= 128; h += 8)
        for (TraversalKind t :
             {TraversalKind::Raster, TraversalKind::RowSnake, TraversalKind::ColSnake, TraversalKind::Custom}) {
          Schedule s;
          Traversal trav{t, {}};
          if (t == TraversalKind::Custom) {  // column-major
            const i64 ntw = (W + w - 1) / w, nth = (H + h - 1) / h;
            for (i64 c = 0; c < ntw; ++c)
              for (i64 r = 0; r < nth; ++r) trav.order.push_back(static_cast<int32_t>(r * ntw + c));
          }
          s.subgraphs.push_back({{0}, {w, h, k}, trav, {}});
          const Evaluation ev = evaluateSchedule(p, s, m);
          if (ev.valid) best = std::min(best, ev.total);
        }
  return best;
}

Problem loneMatMul(long capacity) {
  return test::problemFromJson(R"({"widths":[1024,512,512],"heights":[384,1024,384],
      "inputs":[[0,1]],"outputs":[[2]],"base_costs":[4000],"op_types":["MatMul"],"fast_memory_capacity":)" +
                               std::to_string(capacity) +
                               R"(,"slow_memory_bandwidth":20,"native_granularity":[128,128]})");
}

}  // namespace

// A lone MatMul whose operands are too large to be resident whole, under k_limit=reduction with
// k = K (its only k-step loads whole row and column bands): the bound and the part floor, which
// count per step the compute and the excess of each band a run of tiles starts (part_floor.cpp,
// bandExcess), and the joint floor's step by step with forced stores (joint_floors.cpp,
// JointCfg::stepwise: the output is a graph output, never retained; both operands are graph
// inputs larger than C, claimed) stay at or below every schedule of every granularity and of the
// four traversals offered; the part floor lies above the larger of its compute and traffic floors
// on some capacity, and the joint floor with stores above the one without (both arguments bite).
TEST(ForcedShapes, TheStepByStepFloorsOfALoneMatMul) {
  int bites = 0, storesBite = 0;
  for (long capacity : {160000L, 200000L, 240000L}) {
    const Problem p = loneMatMul(capacity);
    ModelOptions m;
    m.k_limit = ModelOptions::KLimit::Reduction;
    const double best = bestLoneMatMul(p, m);
    ASSERT_LT(best, 1e300);
    SCOPED_TRACE("C=" + std::to_string(capacity));
    EXPECT_LE(lowerBound(p, m).value(), best * (1 + 1e-9));
    const PartFloor f = partFloor(p, m, {0});
    EXPECT_LE(f.value, best * (1 + 1e-9));
    bites += f.value > std::max(f.compute, f.traffic) * (1 + 1e-9) ? 1 : 0;
    const bound_detail::JointFrontier with = bound_detail::jointFrontier(p, m, 0, {true, true}, {false, false}, true);
    const bound_detail::JointFrontier without =
        bound_detail::jointFrontier(p, m, 0, {true, true}, {false, false}, false);
    EXPECT_LE(static_cast<double>(with.step_floor), best * (1 + 1e-9));
    EXPECT_GE(with.step_floor, without.step_floor);
    storesBite += with.step_floor > without.step_floor * (1 + 1e-9) ? 1 : 0;
  }
  EXPECT_GE(bites, 1);
  EXPECT_GE(storesBite, 1);
}
