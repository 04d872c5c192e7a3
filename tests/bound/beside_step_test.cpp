// The step-mode share of a Pointwise op beside a class (cost/bound/joint_floors.cpp,
// besideStepRows and besideStepShare): the rows are listed once per class, and the share of each
// op skips the step-by-step rows whose floor (JointCfg::perKind for stepwise) is already at or
// above the least so far. This checks the skipping against the plain least over every row, each
// priced in full, over ops of many computes, slice counts and nk = 1 flags.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "cost/bound/internal.h"
#include "cost/model/problem.h"
#include "tests/test_util.h"

using namespace mlsys;
using bound_detail::LD;

namespace {

// A MatMul (K = 128, so nk = 1 classes exist at every k limit) whose output is a graph output
// (forced stores) and whose operands are graph inputs.
Problem matMul(long capacity, long bandwidth) {
  return test::problemFromJson(R"({"widths":[128,1024,1024],"heights":[640,128,640],
      "inputs":[[0,1]],"outputs":[[2]],"base_costs":[6000],"op_types":["MatMul"],"fast_memory_capacity":)" +
                               std::to_string(capacity) + R"(,"slow_memory_bandwidth":)" + std::to_string(bandwidth) +
                               R"(,"native_granularity":[128,128]})");
}

// The plain least: every row that the op fits, its share in full (the formulas of besideStepShare's
// terms, written out again here).
LD plainLeast(const Problem& p, const bound_detail::BesideStepRows& rows, const bound_detail::Beside& x) {
  const LD inf = std::numeric_limits<LD>::infinity();
  LD least = inf;
  for (const bound_detail::BesideStepRow& row : rows.rows) {
    const bound_detail::JointCfg& c = row.c;
    if (c.one ? c.ws + x.slicesAt(c.together) * c.tile > p.capacity : x.nkOne) continue;
    LD v = 0;
    if (row.term == 0) v = static_cast<LD>(c.tiles) * x.cx + (c.compute - rows.y) / row.nn;
    else if (row.term == 1) v = (c.memory - rows.y) / row.nn;
    else if (row.term == 2) {
      const LD M = static_cast<LD>(c.together);
      v = M * (std::max(c.memory, c.stepwise(c.perTile + x.cx / M, true)) - row.F) + (row.F - rows.y) / row.nn;
    }
    least = std::min(least, std::max<LD>(0, v));
  }
  return least < inf ? least : 0;
}

}  // namespace

TEST(BesideStep, SkippingStepByStepRowsKeepsThePlainLeast) {
  long checked = 0, stepRows = 0, positive = 0;
  for (long capacity : {40000L, 90000L, 200000L})
    for (long bandwidth : {5L, 40L, 400L})
      for (bool reduction : {false, true}) {
        const Problem p = matMul(capacity, bandwidth);
        ModelOptions m;
        if (reduction) m.k_limit = ModelOptions::KLimit::Reduction;
        const bound_detail::JointFrontier f = bound_detail::jointFrontier(p, m, 0, {true, true}, {false, false}, true);
        if (f.points.empty()) continue;
        for (i64 n : {1, 3, 12})
          for (LD cref : {LD(1), LD(50), LD(700)}) {
            const bound_detail::BesideStepRows rows = bound_detail::besideStepRows(p, m, 0, f, cref, n, {});
            for (const auto& row : rows.rows) stepRows += row.term == 2 ? 1 : 0;
            for (LD cx : {LD(1), LD(7), LD(50), LD(300), LD(700), LD(5000), LD(40000)})
              for (i64 slices : {0, 1, 3})
                for (bool nkOne : {false, true}) {
                  bound_detail::Beside x;
                  x.cx = cx, x.cref = cref, x.nkOne = nkOne;
                  if (slices > 0) x.slices = {slices, slices + 1};
                  SCOPED_TRACE("C=" + std::to_string(capacity) + " B=" + std::to_string(bandwidth) +
                               " n=" + std::to_string(n) + " cx=" + std::to_string(static_cast<double>(cx)));
                  const LD plain = plainLeast(p, rows, x);
                  EXPECT_EQ(bound_detail::besideStepShare(p, rows, x), plain);
                  positive += plain > 0 ? 1 : 0;
                  ++checked;
                }
          }
      }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(stepRows, 0);   // the skipping has step-by-step rows to skip
  EXPECT_GT(positive, 50);  // and the least is not 0 everywhere
}
