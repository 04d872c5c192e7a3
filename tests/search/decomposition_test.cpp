// Decomposition by fusion components (lns.component_regions, engine/search/regions.h): a block put
// back among the other subgraphs of its range in an order their tensors allow (interleavedSplice,
// engine/search/window.h), and a component re-optimised on its own and spliced back.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"
#include "cost/pricing/incremental.h"
#include "engine/construct/construct.h"
#include "engine/generate/generator.h"
#include "engine/io/config.h"
#include "engine/search/regions.h"
#include "engine/search/window.h"
#include "tests/test_util.h"

using namespace mlsys;

namespace {

// Six Pointwise ops on 128 x 128 tensors: a1 (op 0) -> a2 (op 1) -> b1 (op 3), b2 (op 4) -> a3
// (op 5), and b0 (op 2) alone. The schedule runs a1, b0, a2, b1, b2, a3, one op per subgraph.
const char* kInterleave = R"({"widths": [128, 128, 128, 128, 128, 128, 128, 128, 128],
 "heights": [128, 128, 128, 128, 128, 128, 128, 128, 128],
 "inputs": [[0], [1], [3], [2], [6], [7]], "outputs": [[1], [2], [4], [5], [7], [8]],
 "base_costs": [100, 100, 100, 100, 100, 100], "op_types": ["Pointwise", "Pointwise", "Pointwise", "Pointwise",
 "Pointwise", "Pointwise"], "fast_memory_capacity": 100000, "slow_memory_bandwidth": 10, "native_granularity": [128, 128]})";

Schedule oneOpPerSubgraph(const std::vector<OpId>& order) {
  Schedule s;
  for (OpId o : order) s.subgraphs.push_back({{o}, {128, 128, 1}, {}, {}});
  return s;
}

int positionOf(const Schedule& s, OpId o) {
  for (size_t i = 0; i < s.subgraphs.size(); ++i)
    if (s.subgraphs[i].ops.front() == o) return static_cast<int>(i);
  return -1;
}

}  // namespace

// A block for the window {a1}, {a2}, {a3} (positions 0, 2, 5) that runs a1 and a2 together: as one
// unit it fits neither where the window starts (a3 would run before b2, which makes its input) nor
// where it ends (b1 would run before a2, which makes its input); interleaved, {a1, a2} goes before
// b1 and {a3} after b2, valid and cheaper by T1's store and load. The block's subgraphs that do not
// depend on each other may come in either order.
TEST(Window, AnInterleavedSpliceFitsABlockAmongTheRestOfTheRange) {
  const Problem p = test::problemFromJson(kInterleave);
  const Schedule start = oneOpPerSubgraph({0, 2, 1, 3, 4, 5});
  const double was = evaluateSchedule(p, start, {}).total;
  const std::vector<int> window = {0, 2, 5};
  const std::vector<SubgraphSched> merged = {{{0, 1}, {128, 128, 1}, {}, {}}, {{5}, {128, 128, 1}, {}, {}}};
  for (bool swapped : {false, true}) {
    const std::vector<SubgraphSched> block = swapped ? std::vector<SubgraphSched>{merged[1], merged[0]} : merged;
    IncrementalEvaluator inc(p, {}, 64);
    inc.reset(start);
    ASSERT_TRUE(inc.valid());
    EXPECT_FALSE(bestSplice(p, inc, window, block).delta.valid);
    const Splice sp = interleavedSplice(p, inc, window, block);
    const std::vector<int>& at = sp.at;
    ASSERT_TRUE(sp.delta.valid) << "swapped " << swapped;
    EXPECT_NEAR(sp.delta.delta, -2 * 16384.0 / 10, 1e-6);
    inc.apply(sp.change, sp.delta);
    const Schedule& got = inc.schedule();
    ASSERT_EQ(at.size(), 2u);
    const int ab = positionOf(got, 0), a3 = positionOf(got, 5);
    EXPECT_EQ(got.subgraphs[static_cast<size_t>(ab)].ops, (std::vector<OpId>{0, 1}));
    EXPECT_LT(ab, positionOf(got, 3)) << "a2 before b1, which reads it";
    EXPECT_GT(a3, positionOf(got, 4)) << "a3 after b2, which makes its input";
    const Evaluation check = evaluateSchedule(p, got, {});
    EXPECT_TRUE(check.valid) << check.reason;
    EXPECT_NEAR(check.total, was - 2 * 16384.0 / 10, 1e-9 * was);
  }
}

namespace {

// A region search on a 300-op random graph from its baseline: one worker, a budget of 60 s,
// nothing written. improve(n) runs n regions of 0.2 s and checks what they leave: a valid schedule,
// priced by the evaluator as the full evaluator prices it; returns how many were cheaper.
struct RegionRun {
  explicit RegionRun(const std::string& config)
      : p(generateProblem("random", 300, 2)),
        cfg(loadConfigText(config)),
        dl(budget()),
        out(p, cfg.model, ""),
        run(p, cfg, 7, dl, out, 0, nullptr, 0.0, true),
        ev(p, cfg.model, 4096),
        regions(run, 0, 1),
        s(baselineSchedule(p, cfg.model)),
        before(evaluateSchedule(p, s, cfg.model).total) {
    run.stats.setWorkers(1);
  }
  static Deadline budget() {
    Deadline d;
    d.setBudget(60);
    return d;
  }
  int improve(int n) {
    int cheaper = 0;
    for (int i = 0; i < n; ++i) cheaper += regions.run(ev, s, dl.elapsed() + 0.2);
    const Evaluation after = evaluateSchedule(p, s, cfg.model);
    EXPECT_TRUE(after.valid) << after.reason;
    EXPECT_NEAR(ev.total(), after.total, 1e-6 * after.total);
    last = after.total;
    return cheaper;
  }
  const Problem p;
  SearchConfig cfg;
  Deadline dl;
  OutputWriter out;
  SearchRun run;
  IncrementalEvaluator ev;
  RegionSearch regions;
  Schedule s;
  double before, last = 0;
};

}  // namespace

// Decomposition (lns.region_ops): a run of consecutive subgraphs annealed as a problem of its own
// and spliced back. From the baseline of a 300-op graph, a few regions of 36 ops lower the latency;
// the regions apply only to graphs of at least kRegionsPerGraph times lns.region_ops ops, never
// with 0.
TEST(Regions, ARegionAnnealedOnItsOwnSplicesBackCheaperAndValid) {
  RegionRun r("lns: {region_ops: 36, component_regions: false}\n");
  SearchConfig cfg = r.cfg;
  ASSERT_TRUE(RegionSearch::applies(r.p, cfg));
  cfg.lns_region_ops = r.p.numOps() / kRegionsPerGraph + 1;
  EXPECT_FALSE(RegionSearch::applies(r.p, cfg));
  cfg.lns_region_ops = 0;
  EXPECT_FALSE(RegionSearch::applies(r.p, cfg));
  EXPECT_GT(r.improve(6), 0);
  EXPECT_LT(r.last, r.before);
}

// lns.component_regions (on by default, graphs of 200 ops or more): before the run's bound has
// ended no region applies; then a region is one fusion component of the bound (its subgraphs
// wherever they lie in the schedule), re-optimised by LNS windows on its own and spliced back among
// the rest, valid and cheaper (the move table's lns-component row).
TEST(Regions, AComponentRegionSplicesBackAmongTheRestCheaperAndValid) {
  RegionRun r("lns: {}\n");
  ASSERT_TRUE(RegionSearch::applies(r.p, r.cfg));
  EXPECT_FALSE(RegionSearch::applies(generateProblem("random", 100, 2), r.cfg));
  EXPECT_FALSE(r.regions.ready());
  EXPECT_EQ(r.improve(1), 0);
  BoundOptions bo;
  const auto stopAt = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bo.give_up = [stopAt] { return std::chrono::steady_clock::now() > stopAt; };
  const auto comps = BoundGuard::componentsOf(r.p, lowerBound(r.p, r.cfg.model, bo));
  ASSERT_EQ(comps->of_op.size(), static_cast<size_t>(r.p.numOps()));
  int counted = 0;
  for (int n : comps->size) counted += n;
  EXPECT_EQ(counted, r.p.numOps()) << "the components partition the ops";
  r.run.progress.guard().setComponents(comps);
  EXPECT_TRUE(r.regions.ready());
  EXPECT_GT(r.improve(8), 0);
  EXPECT_LT(r.last, r.before);
  r.regions.reportStats();
  EXPECT_GT(r.run.stats.moves()["lns-component"].applied, 0);
}

// The adaptive LNS worker runs region slices on a graph large enough (the move table's
// lns-region row), and the schedule it writes is valid.
TEST(Regions, TheAdaptiveWorkerRunsRegionSlices) {
  const std::string f = test::tempPath("regions.json");
  ASSERT_EQ(test::runMlsys({"generate", "--family", "transformer", "--size", "150", "--seed", "3", "-o", f}).exit_code,
            0);
  const std::string cfg = test::tempPath("regions.yaml"), out = test::tempPath("regions.out.json");
  test::writeText(cfg, "search: {workers: [lns]}\nlns: {whole_graph_ops: 0, slice_seconds: 0.1, region_ops: 15}\n");
  auto r = test::runMlsys({"solve", f, out, "--seconds", "3", "--threads", "1", "-c", cfg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(test::movesEvaluated(r.err, "lns-region"), 0) << r.err;
  EXPECT_EQ(test::runMlsys({"evaluate", f, out}).exit_code, 0);
}
