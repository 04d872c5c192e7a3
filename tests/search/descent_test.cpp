// bestGranularityDescent (cost/pricing/granularity.h): the baseline's walk on large graphs. It
// descends through the same candidate lists as bestGranularity's full walk, so on every op of
// generated graphs it gives a valid choice, priced as the evaluator prices it, never cheaper than
// the full walk's optimum over those lists, and with far fewer pricings; and baselineSchedule
// with `descent` is a valid schedule that search.baseline_full_walk_ops switches on.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "cost/pricing/evaluator.h"
#include "cost/pricing/granularity.h"
#include "cost/pricing/subgraph.h"
#include "engine/construct/construct.h"
#include "engine/generate/generator.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

std::vector<Problem> graphs() {
  std::vector<Problem> v;
  for (const char* f : {"transformer", "cnn", "mixer", "gemm-chain", "random", "odd-k"})
    for (uint64_t seed : {11, 12}) v.push_back(generateProblem(f, 40, seed));
  return v;
}

TEST(Descent, ValidNeverBelowTheFullWalkAndClose) {
  static const std::vector<TensorId> kNone;
  double sumRatio = 0;
  int n = 0, equal = 0;
  for (const Problem& p : graphs())
    for (OpId o = 0; o < p.numOps(); ++o) {
      const std::vector<OpId> ops = {o};
      const GranChoice full = bestGranularity(p, {}, ops, kNone, kNone);
      const GranChoice d = bestGranularityDescent(p, {}, ops, kNone, kNone);
      ASSERT_TRUE(full.found && d.found) << p.name << " op " << o;
      // The op alone, priced afresh (a one-op schedule is not a schedule of the graph: V2).
      const SubgraphCost again = costSubgraph(p, planSubgraph(p, {}, ops, d.g, kNone, kNone), d.trav);
      ASSERT_TRUE(again.valid) << p.name << " op " << o;
      EXPECT_DOUBLE_EQ(again.latency, d.cost.latency) << p.name << " op " << o;
      EXPECT_GE(d.cost.latency, full.cost.latency * (1 - 1e-12)) << p.name << " op " << o;
      sumRatio += d.cost.latency / full.cost.latency;
      equal += d.cost.latency <= full.cost.latency * (1 + 1e-12);
      ++n;
    }
  ASSERT_GT(n, 100);
  // A local optimum of the same lists: mostly the optimum itself, on average within 2% of it.
  EXPECT_LT(sumRatio / n, 1.02);
  EXPECT_GT(equal, n / 2);
}

TEST(Descent, BaselineWithDescentIsValidAndNoWorseThanQuick) {
  for (const Problem& p : graphs()) {
    const Schedule q = quickSchedule(p, {});
    const Schedule b = baselineSchedule(p, {}, nullptr, &q, true);
    const Evaluation ev = evaluateSchedule(p, b, {}), eq = evaluateSchedule(p, q, {});
    ASSERT_TRUE(ev.valid) << p.name;
    EXPECT_LE(ev.total, eq.total * (1 + 1e-12)) << p.name;
  }
}

}  // namespace
}  // namespace mlsys
