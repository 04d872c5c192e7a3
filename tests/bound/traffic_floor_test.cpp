// The part floor's pruning on traffic (cost/bound/part_floor.cpp, scan; part_traffic.cpp,
// ClassFloor::leastTraffic): scan passes over a class pair, or over the rest of a row of them, or
// over one choice before fitted's bisections, on floors of the traffic. Each rests on a claim
// about ClassFloor::traffic, checked here on the soundness generator's random problems
// (tests/soundness: tensors read in several roles, capacities around a tile's working set), every
// connected part of up to four ops, both plan classes (nk > 1 and nk = 1), under each model
// setting, at every side class pair, every retention choice, and the sides of the class (its least,
// middle and largest: the last bands from the class's least to its largest):
// - leastTraffic(g0) is at most traffic(g, kept), both figures (k = a tile side or not);
// - traffic(g0, kept) is at most traffic(g, kept) (g0's last bands are the class's least: what
//   reachedAtG0 prunes on);
// - within a grid case, leastTraffic never falls as the tile counts grow (the breaks).
// A failure prints the problem's seed, the part and the grid.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/bound/class_floor.h"
#include "cost/pricing/granularity.h"
#include "tests/bound_check/bound_check.h"
#include "tests/soundness/random_problem.h"

namespace mlsys::bound_detail {
namespace {

using soundness::randomProblem;

// The ops of `mask` are connected through the tensors they share.
bool connected(const Problem& p, uint32_t mask) {
  const int n = p.numOps();
  int first = -1;
  for (int i = 0; i < n && first < 0; ++i)
    if (mask >> i & 1) first = i;
  uint32_t seen = 1u << first, grew = seen;
  while (grew) {
    grew = 0;
    for (int a = 0; a < n; ++a) {
      if (!(seen >> a & 1)) continue;
      for (int b = 0; b < n; ++b) {
        if (!(mask >> b & 1) || (seen >> b & 1)) continue;
        bool linked = false;
        for (TensorId t : p.ops[a].outputs)
          for (TensorId u : p.ops[b].inputs) linked = linked || t == u;
        for (TensorId t : p.ops[b].outputs)
          for (TensorId u : p.ops[a].inputs) linked = linked || t == u;
        if (linked) grew |= 1u << b;
      }
    }
    seen |= grew;
  }
  return seen == mask;
}

struct Checked {
  long grids = 0, violations = 0;
  std::string first;
};

void checkClass(const ClassFloor& cf, const std::string& where, Checked& out) {
  const Problem& p = cf.p;
  const std::vector<ClassFloor::SideClass> ws = ClassFloor::sideClasses(cf.pl.W, p.native),
                                           hs = ClassFloor::sideClasses(cf.pl.H, p.native);
  const uint32_t choices = cf.relaxed ? 1u : 1u << cf.choices.size();
  auto fail = [&](const std::string& what) {
    if (out.violations++ == 0) out.first = where + ": " + what;
  };
  for (size_t i = 0; i < ws.size(); ++i)
    for (size_t j = 0; j < hs.size(); ++j) {
      const ClassFloor::Grid g0 = cf.gridOf(ws[i], hs[j]);
      const LD least = cf.leastTraffic(g0);
      // Monotone: the next class pair along h, and along w, in the same grid case.
      for (auto [di, dj] : {std::pair<size_t, size_t>{0, 1}, {1, 0}}) {
        if (i + di >= ws.size() || j + dj >= hs.size()) continue;
        const ClassFloor::Grid next = cf.gridOf(ws[i + di], hs[j + dj]);
        if ((next.nth == 1) != (g0.nth == 1) || (next.ntw == 1) != (g0.ntw == 1)) continue;
        if (cf.leastTraffic(next) < least)
          fail("leastTraffic falls from " + std::to_string(g0.ntw) + "x" + std::to_string(g0.nth) + " to " +
               std::to_string(next.ntw) + "x" + std::to_string(next.nth));
      }
      for (uint32_t kept = 0; kept < choices; ++kept)
        for (i64 h : {hs[j].lo, (hs[j].lo + hs[j].hi) / 2, hs[j].hi})
          for (i64 w : {ws[i].lo, (ws[i].lo + ws[i].hi) / 2, ws[i].hi}) {
            // The grid at sides (w, h): its last bands those of the class's largest sides, h and w.
            ClassFloor::Grid g = g0;
            g.rowLast = cf.pl.H - (g.nth - 1) * h;
            g.colLast = cf.pl.W - (g.ntw - 1) * w;
            for (bool kEqualSide : {false, true}) {
              const LD at = cf.traffic(cf.withK(g, cf.kHi), kept, nullptr, kEqualSide);
              const LD atG0 = cf.traffic(cf.withK(g0, cf.kHi), kept, nullptr, kEqualSide);
              ++out.grids;
              if (least > at)
                fail("leastTraffic " + std::to_string(static_cast<double>(least)) + " above traffic " +
                     std::to_string(static_cast<double>(at)) + " (kept " + std::to_string(kept) + ", sides " +
                     std::to_string(w) + "x" + std::to_string(h) + ")");
              if (atG0 > at)
                fail("traffic at g0 " + std::to_string(static_cast<double>(atG0)) + " above " +
                     std::to_string(static_cast<double>(at)) + " at sides " + std::to_string(w) + "x" +
                     std::to_string(h) + " (kept " + std::to_string(kept) + ")");
            }
          }
    }
}

TEST(TrafficFloor, NeverAboveTheTrafficOfAnyChoiceAtAnyGridOfItsClassPair) {
  Checked out;
  long parts = 0;
  for (const auto& [name, m] : soundness::modelSettings())
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      const Problem p = randomProblem(90'000 + seed);
      const int n = p.numOps();
      for (uint32_t mask = 1; mask < (1u << n); ++mask) {
        if (__builtin_popcount(mask) > 4 || !connected(p, mask)) continue;
        std::vector<OpId> ops;
        for (int i = 0; i < n; ++i)
          if (mask >> i & 1) ops.push_back(i);
        const i64 N = p.native, kmax = reductionLimit(p, m, ops);
        const std::string where = name + " seed " + std::to_string(90'000 + seed) + " part " + std::to_string(mask);
        // The two plan classes as partFloor builds them.
        SubgraphPlan multi = planSubgraph(p, m, ops, {N, N, 1}, {}, {});
        if (!multi.valid && multi.rule == Rule::V9 && std::min(kmax, multi.Kacc - 1) > 1)
          multi = planSubgraph(p, m, ops, {N, N, std::min(kmax, multi.Kacc - 1)}, {}, {});
        if (multi.valid && multi.nk > 1) {
          ++parts;
          checkClass(ClassFloor(p, multi, true, std::min(kmax, multi.Kacc - 1), nullptr), where + " nk>1", out);
        }
        const SubgraphPlan one = planSubgraph(p, m, ops, {N, N, kmax ? kmax : 1}, {}, {});
        if (one.valid && one.nk == 1) {
          ++parts;
          checkClass(ClassFloor(p, one, false, one.Kacc ? one.Kacc : 1, nullptr), where + " nk=1", out);
        }
      }
    }
  EXPECT_GT(parts, 500);
  EXPECT_GT(out.grids, 100'000);
  EXPECT_EQ(out.violations, 0) << out.first;
}

}  // namespace
}  // namespace mlsys::bound_detail
