// Direct tests of the search's units (issue 12): the elite pool (engine/search/pool.h), progress,
// the granularity polish and the beam (engine/search/beam.h), on tiny graphs with hand-computed
// expectations (after PyVRP's operator tests). Every figure is derived in a comment from the spec
// (see tests/unit_graphs.h) or is a structural property checked against the full evaluator
// (valid, every op covered, the same total). The constructors: construct_test.cpp; the fuse move:
// tests/moves/fuse_move_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cost/pricing/evaluator.h"
#include "cost/pricing/granularity.h"
#include "cost/pricing/incremental.h"
#include "engine/base/deadline.h"
#include "engine/construct/construct.h"
#include "engine/construct/topo_order.h"
#include "engine/io/config.h"
#include "engine/io/output.h"
#include "engine/search/beam.h"
#include "engine/search/lns.h"
#include "engine/search/pool.h"
#include "engine/search/run_state.h"
#include "moves/moves.h"
#include "tests/test_util.h"
#include "tests/unit_graphs.h"

using namespace mlsys;
using namespace mlsys::units;

namespace {

// ---------------------------------------------------------------------------------------------
// The elite pool. Its schedules need not be valid for any problem: the pool only ranks them.

// Distinct schedules: one subgraph of op `id` (the encoding starts with the op id, so ids order
// the keys: "0,|..." < "1,|...").
Schedule elite(OpId id) { return schedule({sg({id}, {128, 128, 1})}); }

// The index pool.h promises for a draw: floor(size * u^2), u = rand01 of the same generator.
size_t predictedIndex(const ElitePool& pool, const Rng& rng) {
  Rng copy = rng;
  double u = rand01(copy);
  return std::min<size_t>(pool.size() - 1, static_cast<size_t>(pool.size() * u * u));
}

// The pool's ranking, read back through sample(): draws until every index has been seen and
// files each draw at its predicted index.
std::vector<double> contents(const ElitePool& pool) {
  std::vector<double> lat(pool.size(), -1);
  Rng rng(1);
  for (int draw = 0; draw < 10000 && std::count(lat.begin(), lat.end(), -1.0) > 0; ++draw) {
    size_t i = predictedIndex(pool, rng);
    Schedule s;
    double l = 0;
    EXPECT_TRUE(pool.sample(rng, s, l));
    lat[i] = l;
  }
  return lat;
}

TEST(EngineUnitsPool, EmptyPoolSamplesNothing) {
  ElitePool pool(3);
  Rng rng(5);
  Schedule s;
  double lat = 0;
  EXPECT_EQ(pool.size(), 0);
  EXPECT_FALSE(pool.sample(rng, s, lat));
}

TEST(EngineUnitsPool, CapacityBelowOneKeepsOne) {
  ElitePool pool(0);
  EXPECT_TRUE(pool.offer(elite(0), 10));
  EXPECT_EQ(pool.size(), 1);
  EXPECT_FALSE(pool.offer(elite(1), 11));  // worse than the one kept
  EXPECT_TRUE(pool.offer(elite(2), 9));    // better: replaces it
  EXPECT_EQ(pool.size(), 1);
  Rng rng(3);
  Schedule s;
  double lat = 0;
  ASSERT_TRUE(pool.sample(rng, s, lat));
  EXPECT_EQ(lat, 9);
  EXPECT_TRUE(sameSchedule(s, elite(2)));
}

TEST(EngineUnitsPool, DuplicatesAreTheSameEncodingWhateverTheLatency) {
  ElitePool pool(10);
  Schedule a = elite(0);
  EXPECT_TRUE(pool.offer(a, 10));
  EXPECT_FALSE(pool.offer(a, 5));  // same schedule, better latency: still a duplicate
  EXPECT_FALSE(pool.offer(a, 10));
  Schedule r = a;
  r.reported = {123.0};  // reported latencies are not part of the schedule
  EXPECT_FALSE(pool.offer(r, 10));
  EXPECT_EQ(pool.size(), 1);
  // Everything the contest output holds makes a distinct schedule: the ops, [w,h,k], the
  // traversal and the retained tensors.
  Schedule ops = schedule({sg({0, 1}, {128, 128, 1})});
  Schedule gran = schedule({sg({0}, {128, 64, 1})});
  Schedule trav = a;
  trav.subgraphs[0].trav.kind = TraversalKind::RowSnake;
  Schedule custom = a;
  custom.subgraphs[0].trav = {TraversalKind::Custom, {1, 0}};
  Schedule custom2 = a;
  custom2.subgraphs[0].trav = {TraversalKind::Custom, {0, 1}};
  Schedule keep = schedule({sg({0}, {128, 128, 1}, {1})});
  Schedule two = schedule({sg({0}, {128, 128, 1}), sg({1}, {128, 128, 1})});
  for (const Schedule* s : {&ops, &gran, &trav, &custom, &custom2, &keep, &two})
    EXPECT_TRUE(pool.offer(*s, 10)) << str(*s);
  EXPECT_EQ(pool.size(), 8);
  // The first latency offered stays: the only elite at 10 with a's encoding was never replaced.
  ElitePool one(1);
  EXPECT_TRUE(one.offer(a, 10));
  EXPECT_FALSE(one.offer(a, 5));
  EXPECT_EQ(contents(one), (std::vector<double>{10}));
}

TEST(EngineUnitsPool, KeepsTheKBestRankedByLatencyThenEncoding) {
  ElitePool pool(3);
  EXPECT_TRUE(pool.offer(elite(5), 50));
  EXPECT_TRUE(pool.offer(elite(2), 20));
  EXPECT_TRUE(pool.offer(elite(4), 40));  // full: {20, 40, 50}
  EXPECT_EQ(contents(pool), (std::vector<double>{20, 40, 50}));
  EXPECT_TRUE(pool.offer(elite(3), 30));  // enters, 50 drops out
  EXPECT_EQ(pool.size(), 3);
  EXPECT_EQ(contents(pool), (std::vector<double>{20, 30, 40}));
  EXPECT_FALSE(pool.offer(elite(5), 50));  // the dropped one does not come back
  EXPECT_FALSE(pool.offer(elite(6), 45));  // worse than the worst kept (40)
  // A tie with the worst (40, op 4) is decided by the encoding: op 7's key "7,|..." is greater,
  // op 1's "1,|..." smaller.
  EXPECT_FALSE(pool.offer(elite(7), 40));
  EXPECT_TRUE(pool.offer(elite(1), 40));
  EXPECT_EQ(pool.size(), 3);
  // {20 (op 2), 30 (op 3), 40 (op 1)}: op 4 went out. Check the schedule at the worst rank.
  Rng rng(1);
  Schedule s;
  double lat = 0;
  for (int draw = 0; draw < 1000; ++draw) {
    size_t i = predictedIndex(pool, rng);
    ASSERT_TRUE(pool.sample(rng, s, lat));
    if (i == 2) break;
  }
  EXPECT_EQ(lat, 40);
  EXPECT_TRUE(sameSchedule(s, elite(1)));
}

TEST(EngineUnitsPool, EqualLatenciesRankByEncoding) {
  ElitePool pool(3);
  EXPECT_TRUE(pool.offer(elite(2), 7));
  EXPECT_TRUE(pool.offer(elite(0), 7));
  EXPECT_TRUE(pool.offer(elite(1), 7));
  Rng rng(9);
  std::vector<OpId> seen(3, -1);
  for (int draw = 0; draw < 1000; ++draw) {
    size_t i = predictedIndex(pool, rng);
    Schedule s;
    double lat = 0;
    ASSERT_TRUE(pool.sample(rng, s, lat));
    EXPECT_EQ(lat, 7);
    seen[i] = s.subgraphs[0].ops[0];
  }
  EXPECT_EQ(seen, (std::vector<OpId>{0, 1, 2}));  // by key, not by offer order
}

TEST(EngineUnitsPool, SampleIsBiasedToTheBest) {
  // Full pool of K = 4 at latencies 1..4. Index floor(4 u^2) for u uniform in [0,1):
  // P(0) = P(u < 1/2) = 0.5, P(1) = P(u < sqrt(2)/2) - 0.5 = 0.207, P(2) = sqrt(3)/2 - sqrt(2)/2
  // = 0.159, P(3) = 1 - sqrt(3)/2 = 0.134. Over 20000 draws the counts are about 10000, 4142,
  // 3178 and 2679 (standard deviations under 71).
  ElitePool pool(4);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(pool.offer(elite(i), i + 1));
  Rng rng(42);
  std::vector<int> count(4, 0);
  for (int draw = 0; draw < 20000; ++draw) {
    size_t want = predictedIndex(pool, rng);
    Schedule s;
    double lat = 0;
    ASSERT_TRUE(pool.sample(rng, s, lat));
    ASSERT_EQ(lat, static_cast<double>(want + 1)) << "draw " << draw;  // rank i holds latency i+1
    ASSERT_TRUE(sameSchedule(s, elite(static_cast<OpId>(want))));
    ++count[static_cast<size_t>(lat) - 1];
  }
  EXPECT_NEAR(count[0], 10000, 400);
  EXPECT_NEAR(count[1], 4142, 400);
  EXPECT_NEAR(count[2], 3178, 400);
  EXPECT_NEAR(count[3], 2679, 400);
  EXPECT_GT(count[0], count[1]);
  EXPECT_GT(count[1], count[2]);
  EXPECT_GT(count[2], count[3]);
}

TEST(EngineUnitsPool, DeterministicForAFixedRngWhateverTheOfferOrder) {
  // Ranking is by (latency, encoding), so two pools offered the same schedules in opposite
  // orders hold the same ranking, and the same seed draws the same sequence.
  ElitePool a(5), b(5);
  const double lat[] = {3, 1, 4, 1.5, 9, 2.6};
  for (int i = 0; i < 6; ++i) a.offer(elite(i), lat[i]);
  for (int i = 5; i >= 0; --i) b.offer(elite(i), lat[i]);
  ASSERT_EQ(a.size(), 5);
  ASSERT_EQ(b.size(), 5);
  EXPECT_EQ(contents(a), (std::vector<double>{1, 1.5, 2.6, 3, 4}));  // 9 did not make the 5 best
  Rng ra(2024), rb(2024);
  std::set<double> drawn;
  for (int draw = 0; draw < 200; ++draw) {
    Schedule sa, sb;
    double la = 0, lb = 0;
    ASSERT_TRUE(a.sample(ra, sa, la));
    ASSERT_TRUE(b.sample(rb, sb, lb));
    ASSERT_EQ(la, lb);
    ASSERT_TRUE(sameSchedule(sa, sb));
    drawn.insert(la);
  }
  EXPECT_EQ(drawn.size(), 5u);  // and the draws are not all the same one
}

// Pool isolation (pool.isolate_first): an isolated worker 0 reads only what it offered itself;
// the other workers read every offer, worker 0's included. Without isolation every worker reads
// the shared pool.
TEST(EngineUnitsPool, IsolatedFirstWorkerReadsOnlyItsOwnOffers) {
  const Problem p = ex1();
  SearchConfig cfg;
  Deadline dl;
  OutputWriter out(p, ModelOptions{}, "/dev/null");
  SearchRun run(p, cfg, 1, dl, out, 0, nullptr, 0, /*quiet=*/true);
  run.isolateFirstWorker();
  run.offer(0, elite(0), 10);  // worker 0's
  run.offer(1, elite(1), 5);   // another worker's, better
  Schedule s;
  double l = 0;
  ASSERT_TRUE(run.poolOf(0).best(s, l));
  EXPECT_EQ(l, 10);
  EXPECT_TRUE(sameSchedule(s, elite(0)));
  EXPECT_EQ(run.poolOf(0).size(), 1);
  ASSERT_TRUE(run.poolOf(1).best(s, l));
  EXPECT_EQ(l, 5);
  EXPECT_EQ(run.poolOf(1).size(), 2);  // worker 0's offer reached the shared pool too
  EXPECT_EQ(&run.poolOf(2), &run.pool);
  // Not isolated: worker 0 reads the shared pool, the other worker's best included.
  SearchRun shared(p, cfg, 1, dl, out, 0, nullptr, 0, true);
  shared.offer(0, elite(0), 10);
  shared.offer(1, elite(1), 5);
  ASSERT_TRUE(shared.poolOf(0).best(s, l));
  EXPECT_EQ(l, 5);
  EXPECT_EQ(&shared.poolOf(0), &shared.pool);
}

// adoptIfBetter counts what each worker gains by adopting (SearchRun::adoptedGain): the adaptive
// LNS worker's slices leave it out of their yields, so that a slice is not credited with another
// worker's improvement (slices.cpp).
TEST(EngineUnitsPool, AdoptionGainsAreCountedPerWorker) {
  struct Quiet {  // a run on ex1 that writes nowhere
    Problem p = ex1();
    SearchConfig cfg;
    Deadline dl;
    OutputWriter out{p, ModelOptions{}, "/dev/null"};
    SearchRun run{p, cfg, 1, dl, out, 0, nullptr, 0, /*quiet=*/true};
  } q;
  SearchRun& run = q.run;
  run.offer(0, elite(0), 7);
  Schedule s;
  EXPECT_FALSE(run.adoptIfBetter(1, 7, s));  // not better: nothing adopted, nothing counted
  EXPECT_EQ(run.adoptedGain(1), 0);
  EXPECT_TRUE(run.adoptIfBetter(1, 10, s));
  EXPECT_EQ(run.adoptedGain(1), 3);
  EXPECT_TRUE(run.adoptIfBetter(1, 9.5, s));
  EXPECT_EQ(run.adoptedGain(1), 5.5);
  EXPECT_EQ(run.adoptedGain(0), 0);  // per worker
}

// A worker hands an improvement over and goes on: the output writer sees it only when the
// monitor checks it (Progress::checkPending, or monitor()'s last check as the workers end); of two
// hand-overs not yet checked only the better claim is kept.
TEST(EngineUnitsProgress, WorkersHandImprovementsOverWithoutWaiting) {
  const Problem p = ex1();
  const Schedule unfused = schedule({sg({0}, {128, 128, 1}), sg({1}, {128, 128, 1})});  // 6553.6
  const Schedule fused = schedule({sg({0, 1}, {128, 128, 1})});                         // 3276.8
  ASSERT_DOUBLE_EQ(fullTotal(p, unfused), 6553.6);
  ASSERT_DOUBLE_EQ(fullTotal(p, fused), 3276.8);
  Deadline dl;
  OutputWriter out(p, ModelOptions{}, test::tempPath("progress_handover.json"));
  ASSERT_DOUBLE_EQ(out.offer(unfused, 0, /*force_write=*/true), 6553.6);
  RunStats stats;
  BoundGuard guard(p, ModelOptions{});
  Progress pr(dl, out, stats, nullptr, guard, /*quiet=*/true);
  pr.improved(fused, 3276.8, "sa");
  EXPECT_DOUBLE_EQ(out.best(), 6553.6);  // handed over, not checked: the worker did not wait
  pr.improved(unfused, 5000, "lns");     // a worse claim than the pending one: dropped
  pr.checkPending();
  EXPECT_DOUBLE_EQ(out.best(), 3276.8);
  EXPECT_EQ(stats.bestByKind().at("lns"), 5000);  // the claim is still counted for its worker
  // The monitor checks the last hand-over when the workers have ended.
  OutputWriter out2(p, ModelOptions{}, test::tempPath("progress_handover2.json"));
  out2.offer(unfused, 0, true);
  Progress pr2(dl, out2, stats, nullptr, guard, true);
  pr2.improved(fused, 3276.8, "sa");
  std::atomic<int> running{0};
  ElitePool pool(4);
  pr2.monitor(running, 1, /*quiet=*/true, pool);
  EXPECT_DOUBLE_EQ(out2.best(), 3276.8);
  EXPECT_TRUE(out2.flushFinal(false));
  EXPECT_DOUBLE_EQ(out2.writtenBest(), 3276.8);
}

// The granularity polish moves w and h together along the fast-memory frontier. Three MatMuls
// (K = 128) and the Pointwise that adds their outputs and a graph input, one subgraph over
// 2048 x 2048 outputs (a block of transformer-n120-s10 from bench/midsize.py): memory-bound, so
// the best tiles fill the fast memory. From [176, 256, 128] (12 x 8 tiles, where one search run
// left it), changing one side at a time stops above [207, 228, 128] (a 10 x 9 grid whose working
// set is 261,432 of 262,000): from there the polish must reach a latency at or below that one's.
TEST(EngineUnitsPolish, FrontierMovesBothTileSidesAtOnce) {
  const Problem p = test::problemFromJson(R"({
    "widths": [128, 2048, 2048, 128, 2048, 2048, 128, 2048, 2048, 2048, 2048],
    "heights": [2048, 128, 2048, 2048, 128, 2048, 2048, 128, 2048, 2048, 2048],
    "inputs": [[0, 1], [3, 4], [6, 7], [5, 8, 2, 9]], "outputs": [[2], [5], [8], [10]],
    "base_costs": [8200, 5100, 9500, 420], "op_types": ["MatMul", "MatMul", "MatMul", "Pointwise"],
    "fast_memory_capacity": 262000, "slow_memory_bandwidth": 10, "native_granularity": [256, 256]})");
  // From [176, 256, 128], one side at a time (the cheapest change of w, then of h, until none
  // lowers the latency) ends at a fixpoint above the frontier point.
  Schedule from = schedule({{{0, 1, 2, 3}, {176, 256, 128}, {}, {}}});
  const Schedule frontier = schedule({{{0, 1, 2, 3}, {207, 228, 128}, {}, {}}});
  IncrementalEvaluator probe(p, ModelOptions{});
  probe.reset(from);
  ASSERT_TRUE(probe.valid());
  for (bool changed = true; changed;) {
    changed = false;
    for (int side = 0; side < 2; ++side) {
      Change best;
      DeltaEval bestD;
      for (i64 v = 1; v <= 256; ++v) {
        Change c;
        c.first = 0;
        c.count = 1;
        c.repl = probe.schedule().subgraphs;
        (side == 0 ? c.repl[0].gran.w : c.repl[0].gran.h) = v;
        DeltaEval d = probe.evaluate(c);
        if (d.valid && d.delta < 0 && (!bestD.valid || d.delta < bestD.delta))
          bestD = std::move(d), best = std::move(c);
      }
      if (bestD.valid) probe.apply(best, bestD), changed = true;
    }
  }
  from = probe.schedule();
  const double start = fullTotal(p, from), target = fullTotal(p, frontier);
  ASSERT_LT(target, start) << str(from);
  SearchConfig cfg;
  Deadline dl;
  OutputWriter out(p, ModelOptions{}, "/dev/null");
  SearchRun run(p, cfg, 1, dl, out, 0, nullptr, 0, /*quiet=*/true);
  Lns lns(run, 1);
  IncrementalEvaluator ev(p, ModelOptions{});
  Schedule s = from;
  EXPECT_TRUE(lns.polishGranularities(ev, s, 1e9));
  EXPECT_LE(fullTotal(p, s), target + 1e-9 * target) << str(s);
  EXPECT_NEAR(ev.total(), fullTotal(p, s), 1e-9 * target);
}

// ---------------------------------------------------------------------------------------------
// The beam (beamConstruct) over the parser's topological order.

struct BeamResult {
  bool ok = false;
  Schedule s;
  double latency = 0;
};

BeamResult runBeam(const Problem& p, int maxSegment = 8, int width = 4, const std::function<bool()>& stop = kNever) {
  SearchConfig cfg;
  cfg.beam_max_segment = maxSegment;
  cfg.beam_width = width;
  IncrementalEvaluator ev(p, ModelOptions{});
  BeamResult r;
  r.ok = beamConstruct(p, cfg, p.topo, stop, ev, r.s, r.latency);
  if (r.ok) {
    EXPECT_NEAR(r.latency, fullTotal(p, r.s), 1e-9) << "the beam's sum is not the full evaluator's";
  }
  return r;
}

TEST(EngineUnitsBeam, Ex1FusesWhereOnlyFusionReaches3276_8) {
  // Example 1 with capacity 20000: 128x128 tiles no longer fit (T0 + T1 tiles = 32768).
  // - Fused [0,1] at [128,64,1] (2 tiles; T1 ephemeral; WS 8192 + 8192 = 16384):
  //   2 x max(1000 + 100, 819.2 + 819.2) = 3276.8. [64,128,1] ties; w comes first in the
  //   candidate order, so [128,64,1].
  // - Unfused at [128,64,1]: 2 x max(1000, 1638.4) + 2 x max(100, 1638.4) = 6553.6.
  // - Retaining T1 needs 16384 resident plus a tile of <= 3616 (2048 among the candidates): 8
  //   tiles of op0 at 1000 each already cost 8000.
  BeamResult r = runBeam(ex1(20000));
  ASSERT_TRUE(r.ok);
  EXPECT_DOUBLE_EQ(r.latency, 3276.8);
  EXPECT_TRUE(sameSchedule(r.s, schedule({sg({0, 1}, {128, 64, 1})})));
  // With one op per segment the beam cannot fuse: it finds the unfused 6553.6.
  BeamResult one = runBeam(ex1(20000), 1);
  ASSERT_TRUE(one.ok);
  EXPECT_DOUBLE_EQ(one.latency, 6553.6);
  EXPECT_TRUE(sameSchedule(one.s, schedule({sg({0}, {128, 64, 1}), sg({1}, {128, 64, 1})})));
}

TEST(EngineUnitsBeam, Ex1RetentionAlsoReaches3276_8) {
  // Capacity 50000, one op per segment: no fusion, but op0 retains T1 (Ex 3C's pattern):
  // SG0 max(1000, 1638.4 load, no store) = 1638.4 (WS 16384 + 16384 retained);
  // SG1 max(100, 0 load + 1638.4 store) = 1638.4. Total 3276.8 = Ex 1B's fused figure, against
  // 6553.6 (Ex 1A) without retention.
  Problem p = ex1();
  BeamResult one = runBeam(p, 1);
  ASSERT_TRUE(one.ok);
  EXPECT_DOUBLE_EQ(one.latency, 3276.8);
  EXPECT_TRUE(sameSchedule(one.s, schedule({sg({0}, {128, 128, 1}, {1}), sg({1}, {128, 128, 1})})));
  EXPECT_EQ(fullLatencies(p, one.s), (std::vector<double>{1638.4, 1638.4}));
  // With fusion allowed, Ex 1B (fused, 3276.8) and the retention schedule tie; nothing is
  // cheaper (T0 must be loaded and T2 stored: 3276.8). The beam returns one of the two.
  BeamResult r = runBeam(p);
  ASSERT_TRUE(r.ok);
  EXPECT_DOUBLE_EQ(r.latency, 3276.8);
  EXPECT_TRUE(sameSchedule(r.s, schedule({sg({0, 1}, {128, 128, 1})})) || sameSchedule(r.s, one.s)) << str(r.s);
}

TEST(EngineUnitsBeam, Ex3SegmentLengthDecidesWhatItReaches) {
  Problem p = ex3();
  // Segments of one op: T1 has a reader two subgraphs on (op2), so op0 cannot retain it (it
  // would never be written); op1 retains T2 for op2.
  //   SG0 [0]: max(1500, 1638.4 + 1638.4) = 3276.8
  //   SG1 [1], retains T2: max(1500, 1638.4 + 0) = 1638.4
  //   SG2 [2], T2 resident: max(1500, 1638.4 (T1) + 1638.4 (T3)) = 3276.8      total 8192
  BeamResult one = runBeam(p, 1);
  ASSERT_TRUE(one.ok);
  EXPECT_DOUBLE_EQ(one.latency, 8192);
  EXPECT_TRUE(
      sameSchedule(one.s, schedule({sg({0}, {128, 128, 1}), sg({1}, {128, 128, 1}, {2}), sg({2}, {128, 128, 1})})));
  // Segments of two: [0,1] is inadmissible (T1 would be ephemeral but op2 reads it later), so
  // the best is Ex 3C: [0] retaining T1, then [1,2]: 1638.4 + max(3000, 0 + 1638.4) = 4638.4.
  BeamResult two = runBeam(p, 2);
  ASSERT_TRUE(two.ok);
  EXPECT_DOUBLE_EQ(two.latency, 4638.4);
  EXPECT_TRUE(sameSchedule(two.s, schedule({sg({0}, {128, 128, 1}, {1}), sg({1, 2}, {128, 128, 1})})));
  EXPECT_EQ(fullLatencies(p, two.s), (std::vector<double>{1638.4, 3000}));
  // Segments of three reach below the spec's Ex 3C: everything fused, T1 and T2 ephemeral:
  // max(3 x 1500, 1638.4 (T0) + 1638.4 (T3)) = 4500, WS 32768. Optimal: every op's compute
  // (1500 per tile, at least one tile) is paid somewhere, and steps do not overlap.
  BeamResult all = runBeam(p);
  ASSERT_TRUE(all.ok);
  EXPECT_DOUBLE_EQ(all.latency, 4500);
  EXPECT_TRUE(sameSchedule(all.s, schedule({sg({0, 1, 2}, {128, 128, 1})})));
}

TEST(EngineUnitsBeam, Ex5FindsRetentionWhichBeatsTheSplitKChain) {
  // The fused chain of Ex 5B ([0,1] at [128,128,32], 6915.2) is in the beam's candidate set
  // (k in {128,64,32,16,8}) and is the best fused choice: [128,128,64] needs 16384 (T0) +
  // 8192 + 8192 (strips) + 16384 (T4) = 49152 > 45000, and [128,128,16] costs
  // 2048 + 6 x 500 + 2048 = 7096. But retention does better:
  //   SG0 [0] at [128,128,64], retains T3 (WS 8192 + 8192 + 16384 = 32768): 2 k-steps of
  //     max(1000, 819.2 + 819.2), no store: 3276.8;
  //   SG1 [1] at [128,128,64], T3 resident (WS 16384 + 8192 + 16384 = 40960): step 1
  //     max(1000, 819.2) = 1000, step 2 max(1000, 819.2 + 1638.4) = 2457.6: 3457.6.
  //   Total 6734.4 < 6915.2. (Without retention: 2 x 4915.2 = 9830.4.)
  Problem p = ex5();
  IncrementalEvaluator ev(p, ModelOptions{});
  SubgraphSched fused = sg({0, 1}, {1, 1, 1});
  ASSERT_TRUE(bestGranularityCached(ev, fused, {}));
  EXPECT_EQ(fused.gran, (Granularity{128, 128, 32}));
  EXPECT_DOUBLE_EQ(ev.cost(fused, {}).latency, 6915.2);
  BeamResult r = runBeam(p);
  ASSERT_TRUE(r.ok);
  EXPECT_DOUBLE_EQ(r.latency, 6734.4);
  EXPECT_TRUE(sameSchedule(r.s, schedule({sg({0}, {128, 128, 64}, {3}), sg({1}, {128, 128, 64})})));
  EXPECT_EQ(fullLatencies(p, r.s), (std::vector<double>{3276.8, 3457.6}));
}

TEST(EngineUnitsBeam, WidthOneStillRetainsAndStopCutsItShort) {
  // Width 1 keeps only the cheapest partial schedule per prefix length. On Ex 3 with segments
  // of at most two: prefix 1 is [0] (3276.8); prefix 2 is [0][1] (6553.6; [0,1] is
  // inadmissible); prefix 3 is [0] retaining T1 + [1,2] = 1638.4 + 3000 = 4638.4, beating
  // [0][1,2] unretained (3276.8 + 3276.8) and [0][1 retaining T2][2] (8192). Retention rewrites
  // the previous subgraph while extending, so pruning to one state does not lose Ex 3C.
  BeamResult w1 = runBeam(ex3(), 2, 1);
  ASSERT_TRUE(w1.ok);
  EXPECT_DOUBLE_EQ(w1.latency, 4638.4);
  // A stop that is already true: no schedule.
  BeamResult stopped = runBeam(ex3(), 8, 4, kAlways);
  EXPECT_FALSE(stopped.ok);
}

}  // namespace
