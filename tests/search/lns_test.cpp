// The deep search (issue 14): windows (sub-problems of a part of a schedule), the LNS worker that
// re-optimises them exactly, the traversal orders from every corner, and the portfolio keys.
#include "engine/search/lns.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <sstream>
#include <string>

#include <rapidjson/document.h>

#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"
#include "cost/pricing/granularity.h"
#include "engine/construct/construct.h"
#include "engine/exact/exact.h"
#include "engine/generate/generator.h"
#include "engine/io/config.h"
#include "engine/search/order_beam.h"
#include "engine/search/search.h"
#include "engine/search/window.h"
#include "tests/search/one_worker.h"
#include "tests/test_util.h"

using namespace mlsys;
using test::OneWorker;

namespace {

double statsLatency(const std::string& stats) {
  rapidjson::Document d;
  const std::string text = test::readText(stats);
  d.Parse(text.c_str(), text.size());
  return d.IsObject() && d.HasMember("best_latency") ? d["best_latency"].GetDouble() : -1;
}

}  // namespace

// A window's sub-problem: the tensors it reads from outside are its graph inputs; the tensors it
// produces that the rest of the schedule reads are graph outputs (written, never retained); the
// window's own subgraphs are a valid schedule of it, and map back to themselves.
TEST(Window, SubProblemOfAPartOfASchedule) {
  Problem p = generateProblem("transformer", 20, 1);
  Schedule s = baselineSchedule(p, {});
  ASSERT_TRUE(evaluateSchedule(p, s, {}).valid);
  ASSERT_GE(s.subgraphs.size(), 6u);
  const std::vector<int> idx = {2, 3, 5};
  std::vector<OpId> ops;
  for (int i : idx) ops.insert(ops.end(), s.subgraphs[i].ops.begin(), s.subgraphs[i].ops.end());
  SubProblem w = extractSubProblem(p, ops);
  ASSERT_EQ(w.p.numOps(), static_cast<int>(ops.size()));
  std::vector<char> inWin(p.numOps(), 0);
  for (OpId o : ops) inWin[o] = 1;
  for (TensorId st = 0; st < w.p.numTensors(); ++st) {
    const TensorId t = w.tensor_of[st];
    EXPECT_EQ(w.p.widths[st], p.widths[t]);
    EXPECT_EQ(w.p.heights[st], p.heights[t]);
    const bool producedInside = p.producer[t] >= 0 && inWin[p.producer[t]];
    EXPECT_EQ(w.p.producer[st] >= 0, producedInside) << "tensor " << t;
    if (!producedInside) continue;
    bool readOutside = p.is_graph_output[t];
    for (OpId c : p.consumers[t]) readOutside |= !inWin[c];
    EXPECT_EQ(static_cast<bool>(w.p.is_graph_output[st]), readOutside) << "tensor " << t;
  }
  Schedule sub = toSub(w, s, idx);
  EXPECT_TRUE(evaluateSchedule(w.p, sub, {}).valid);
  Schedule back = toFull(w, sub);
  ASSERT_EQ(back.subgraphs.size(), idx.size());
  for (size_t j = 0; j < idx.size(); ++j) EXPECT_EQ(back.subgraphs[j].ops, s.subgraphs[idx[j]].ops);
}

// Re-optimising a window exactly and splicing it back keeps the whole schedule valid, and the
// window's part of the cost never rises (the incumbent is the window itself).
TEST(Window, ExactWindowSplicesBackValidAndNoWorse) {
  for (uint64_t seed : {1, 2, 3}) {
    Problem p = generateProblem("gemm-chain", 12, seed);
    Schedule s = baselineSchedule(p, {});
    const Evaluation before = evaluateSchedule(p, s, {});
    ASSERT_TRUE(before.valid);
    const int first = 1, last = std::min<int>(4, static_cast<int>(s.subgraphs.size()) - 1);
    std::vector<int> idx(last - first + 1);
    std::iota(idx.begin(), idx.end(), first);
    std::vector<OpId> ops;
    for (int i : idx) ops.insert(ops.end(), s.subgraphs[i].ops.begin(), s.subgraphs[i].ops.end());
    SubProblem w = extractSubProblem(p, ops);
    Schedule inc = toSub(w, s, idx);
    ExactOptions o;
    o.incumbent = &inc;
    ExactResult r = solveExact(w.p, {}, o, test::neverStop());
    ASSERT_TRUE(r.found);
    EXPECT_LE(r.latency, evaluateSchedule(w.p, inc, {}).total + 1e-9);
    Schedule spliced = s;
    std::vector<SubgraphSched> block = toFull(w, r.schedule).subgraphs;
    spliced.subgraphs.erase(spliced.subgraphs.begin() + first, spliced.subgraphs.begin() + last + 1);
    spliced.subgraphs.insert(spliced.subgraphs.begin() + first, block.begin(), block.end());
    if (first > 0) spliced.subgraphs[first - 1].retain.clear();
    const Evaluation after = evaluateSchedule(p, spliced, {});
    EXPECT_TRUE(after.valid) << "seed " << seed << ": " << after.reason;
    EXPECT_LE(after.total, before.total + 1e-9 * before.total) << "seed " << seed;
  }
}

namespace {

// Five ops of generated gemm-chain-n5000 seed 9001 (ops 298, 1406, 4966, 4856, 4310 there, ids
// not in topological order: op 0 runs last, as op 298 did): op 2 makes T4 (1,500 x 4,096), op 3
// reads it and makes T6 (2,000 x 2,048), which op 4 reads, and op 0 reads op 4's output. Either T4
// is retained into op 3's subgraph or T6 out of it, never both: 3,072,000 + 4,096,000 > 4,915,000.
const char* kRetainEither = R"({"widths": [4096, 1500, 1500, 1500, 1500, 2000, 2000, 4096, 4096, 4096, 4096],
 "heights": [2048, 4096, 2048, 2048, 2048, 1500, 2048, 2000, 2048, 2048, 2048],
 "inputs": [[8, 9], [0, 1], [2, 3], [4, 5], [6, 7]], "outputs": [[10], [2], [4], [6], [8]],
 "base_costs": [190, 5100, 290, 3000, 5900], "op_types": ["Pointwise", "MatMul", "Pointwise", "MatMul", "MatMul"],
 "fast_memory_capacity": 4915000, "slow_memory_bandwidth": 50, "native_granularity": [128, 128]})";

// The schedule the search had reached there: T4 retained into {3}, T6 written and read back.
Schedule retainEitherSchedule() {
  Schedule s;
  s.subgraphs = {{{1, 2}, {128, 128, 128}, {}, {4}}, {{3}, {125, 128, 128}, {}, {}}, {{4, 0}, {128, 128, 128}, {}, {}}};
  return s;
}

}  // namespace

// A window whose best block retains a tensor out of its first subgraph, which has no room for it
// beside the tensor the subgraph before retains into it: the splice is priced with that retention
// dropped too (measured on gemm-chain-n5000: 1.31M of 10.66M there), and is valid and cheaper.
TEST(Window, TheSpliceDropsARetentionIntoTheWindowThatLeavesNoRoom) {
  const Problem p = test::problemFromJson(kRetainEither);
  const Schedule s = retainEitherSchedule();
  const Evaluation before = evaluateSchedule(p, s, {});
  ASSERT_TRUE(before.valid) << before.reason;
  const std::vector<int> idx = {1, 2};
  SubProblem w = extractSubProblem(p, {3, 4, 0});
  Schedule inc = toSub(w, s, idx);
  ExactOptions o;
  o.incumbent = &inc;
  ExactResult r = solveExact(w.p, {}, o, test::neverStop());
  ASSERT_TRUE(r.found);
  const std::vector<SubgraphSched> block = toFull(w, r.schedule).subgraphs;
  ASSERT_EQ(block.front().retain, std::vector<TensorId>{6}) << "the block keeps T6 for op 4";
  IncrementalEvaluator ev(p, {}, 64);
  ev.reset(s);
  ASSERT_TRUE(ev.valid());
  Splice sp = bestSplice(p, ev, idx, block);
  ASSERT_TRUE(sp.delta.valid);
  EXPECT_LT(sp.delta.delta, -1e6);
  EXPECT_TRUE(sp.change.repl[0].retain.empty()) << "T4 is written instead of retained";
  ev.apply(sp.change, sp.delta);
  const Evaluation after = evaluateSchedule(p, ev.schedule(), {});
  ASSERT_TRUE(after.valid) << after.reason;
  EXPECT_NEAR(after.total, before.total + sp.delta.delta, 1e-6 * before.total);
}

// lns.guided seeds a window at the subgraph farthest above its part floor ({4, 0}, which pays
// T6's load that a retention would save; its floor is priced over its ops in topological order,
// not by id, which would make it infinite and the subgraph never a seed).
TEST(Lns, TheGuidedSeedIsTheSubgraphFarthestAboveItsFloor) {
  const Problem p = test::problemFromJson(kRetainEither);
  OneWorker w(p, SearchConfig{});
  w.ev.reset(retainEitherSchedule());
  Lns lns(w.run, 0);
  size_t key = 0;
  EXPECT_EQ(lns.guidedSeed(w.ev, key), 2);
}

// A window gain the LNS worker made on its own schedule is replayed on a schedule it adopts that
// still runs the window's subgraphs as they were: windows() from the old schedule again returns
// it cheaper, and the move table's lns-replay row counts the replay.
TEST(Lns, AWindowGainIsReplayedOnAnAdoptedSchedule) {
  const Problem p = test::problemFromJson(kRetainEither);
  OneWorker w(p, loadConfigText("lns: {guided: 1, window_ops_min: 3}\n"));
  Lns lns(w.run, 0);
  const Schedule s0 = retainEitherSchedule();
  const double before = evaluateSchedule(p, s0, {}).total;
  Schedule s = s0;
  lns.windows(w.ev, s, w.dl.elapsed() + 1.0);
  ASSERT_LT(evaluateSchedule(p, s, {}).total, before - 1e6) << "the windows find the retention";
  s = s0;  // as if another worker's schedule, with those subgraphs, had been adopted
  lns.windows(w.ev, s, w.dl.elapsed() + 0.05);  // the replay runs first, before any window
  const Evaluation replayed = evaluateSchedule(p, s, {});
  ASSERT_TRUE(replayed.valid) << replayed.reason;
  EXPECT_LT(replayed.total, before - 1e6);
  lns.reportStats();
  EXPECT_GT(w.run.stats.moves()["lns-replay"].applied, 0);
}

// The corner variants of a walk are permutations of the tiles, and mirroring twice is the identity.
TEST(Traversal, MirroredOrdersArePermutations) {
  const i64 ntw = 6, nth = 12;
  for (TraversalKind k : {TraversalKind::Raster, TraversalKind::RowSnake, TraversalKind::ColSnake}) {
    const std::vector<int32_t> base = traversalOrder({k, {}}, ntw, nth);
    for (int how = 0; how < 8; ++how) {
      std::vector<int32_t> m = mirroredOrder(base, ntw, nth, how & 1, how & 2, how & 4);
      std::vector<int32_t> sorted = m;
      std::sort(sorted.begin(), sorted.end());
      for (int32_t i = 0; i < ntw * nth; ++i) ASSERT_EQ(sorted[i], i);
      EXPECT_EQ(mirroredOrder(m, ntw, nth, how & 1, how & 2, how & 4), base);
    }
  }
  // A row snake mirrored both ways starts at the clipped bottom-right tile.
  EXPECT_EQ(mirroredOrder(traversalOrder({TraversalKind::RowSnake, {}}, ntw, nth), ntw, nth, true, true, false).front(),
            ntw * nth - 1);
}

// beam.then: auto (the default) gives a beam worker the LNS worker's portfolio, beside an LNS
// worker too (then the first worker runs what one thread runs), and leaves it annealing when the
// budget is --max-evals (reproducible runs).
TEST(Portfolio, BeamThenAutoRunsTheLnsPortfolioUnlessTheBudgetIsEvaluations) {
  const SearchConfig d = loadConfigText("");
  EXPECT_EQ(d.beam_then, WorkerKind::BeamThen);  // auto
  EXPECT_EQ(beamThen(d, 1, false), WorkerKind::Lns);
  EXPECT_EQ(beamThen(d, 2, false), WorkerKind::Lns);       // [beam, lns]: both run the LNS portfolio
  EXPECT_EQ(beamThen(d, 1, true), WorkerKind::Annealing);  // --max-evals
  EXPECT_EQ(beamThen(d, 2, true), WorkerKind::Annealing);
  const SearchConfig annealers = loadConfigText("search: {workers: [beam, sa]}\n");
  EXPECT_EQ(beamThen(annealers, 2, false), WorkerKind::Lns);
  EXPECT_EQ(beamThen(loadConfigText("beam: {then: sa}\n"), 1, false), WorkerKind::Annealing);
  EXPECT_EQ(beamThen(loadConfigText("beam: {then: lns}\n"), 2, true), WorkerKind::Lns);
  EXPECT_EQ(configToYaml(loadConfigText(configToYaml(d))), configToYaml(d)) << "auto round-trips";
}

// The portfolio keys: lns section, beam.then, the worker kind "lns"; bad values name the key.
TEST(Portfolio, ConfigKeys) {
  SearchConfig c = loadConfigText(
      "search: {workers: [lns, beam, sa]}\nbeam: {then: lns}\nlns: {whole_graph_ops: 0, window_ops_min: 4, "
      "window_ops_max: 9, window_seconds: 0.25, stall_windows: 7, every_side: true}\n");
  ASSERT_EQ(c.workers.size(), 3u);
  EXPECT_EQ(c.workers[0], WorkerKind::Lns);
  EXPECT_EQ(c.beam_then, WorkerKind::Lns);
  EXPECT_EQ(c.lns_whole_graph_ops, 0);
  EXPECT_EQ(c.lns_window_ops_min, 4);
  EXPECT_EQ(c.lns_window_ops_max, 9);
  EXPECT_DOUBLE_EQ(c.lns_window_seconds, 0.25);
  EXPECT_EQ(c.lns_stall_windows, 7);
  EXPECT_TRUE(c.lns_every_side);
  EXPECT_EQ(configToYaml(loadConfigText(configToYaml(c))), configToYaml(c)) << "round trip";
  auto fails = [](const std::string& yaml, const std::string& key) {
    try {
      loadConfigText(yaml);
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      return true;
    }
    return false;
  };
  EXPECT_TRUE(fails("lns: {window_ops_min: 9, window_ops_max: 4}\n", "lns.window_ops_min"));
  EXPECT_TRUE(fails("lns: {window_ops_max: 21}\n", "lns.window_ops_max"));
  EXPECT_TRUE(fails("beam: {then: beam}\n", "beam.then"));
  EXPECT_TRUE(fails("lns: {every_side: maybe}\n", "lns.every_side"));
  EXPECT_TRUE(fails("lns: {adaptive: 1}\n", "lns.adaptive"));
  EXPECT_TRUE(fails("lns: {slice_seconds: 0}\n", "lns.slice_seconds"));
  EXPECT_TRUE(loadConfigText("").lns_adaptive);
  EXPECT_FALSE(loadConfigText("lns: {adaptive: false}\n").lns_adaptive);
  EXPECT_DOUBLE_EQ(loadConfigText("lns: {slice_seconds: 0.25}\n").lns_slice_seconds, 0.25);
  EXPECT_TRUE(loadConfigText("").sa_adopt_pool_best);
  EXPECT_FALSE(loadConfigText("sa: {adopt_pool_best: false}\n").sa_adopt_pool_best);
  EXPECT_TRUE(fails("sa: {adopt_pool_best: yes please}\n", "sa.adopt_pool_best"));
  EXPECT_TRUE(fails("search: {workers: [lnx]}\n", "lns"));  // the message lists the known kinds
  EXPECT_TRUE(fails("lns: {window: 3}\n", "lns.window"));
  EXPECT_TRUE(loadConfigText("").pool_isolate_first);
  EXPECT_FALSE(loadConfigText("pool: {isolate_first: false}\n").pool_isolate_first);
  EXPECT_TRUE(fails("pool: {isolate_first: 0}\n", "pool.isolate_first"));
  // lns.moves: weights of the LNS workers' annealing, over sa.moves; other annealers keep sa.moves.
  SearchConfig m = loadConfigText("sa: {moves: {fuse: 0, merge: 5}}\nlns: {moves: {fuse: 2}}\n");
  EXPECT_DOUBLE_EQ(m.annealWeights(true).at("fuse"), 2);
  EXPECT_DOUBLE_EQ(m.annealWeights(true).at("merge"), 5);
  EXPECT_DOUBLE_EQ(m.annealWeights(false).at("fuse"), 0);
  EXPECT_EQ(configToYaml(loadConfigText(configToYaml(m))), configToYaml(m)) << "round trip";
  EXPECT_EQ(loadConfigText("").lns_move_weights,
            (std::map<std::string, double>{{"fuse", 1}, {"fuse-far", 2}}));  // the default
  EXPECT_DOUBLE_EQ(loadConfigText("").annealWeights(true).at("fuse"), 1);
  EXPECT_DOUBLE_EQ(loadConfigText("").annealWeights(false).at("fuse"), 0);
  EXPECT_TRUE(loadConfigText("").lns_polish);
  EXPECT_FALSE(loadConfigText("lns: {polish: false}\n").lns_polish);
  EXPECT_TRUE(fails("lns: {polish: 2}\n", "lns.polish"));
  EXPECT_EQ(loadConfigText("").lns_region_ops, 0);  // off by default
  EXPECT_EQ(loadConfigText("lns: {region_ops: 400}\n").lns_region_ops, 400);
  EXPECT_TRUE(fails("lns: {region_ops: -1}\n", "lns.region_ops"));
  EXPECT_DOUBLE_EQ(loadConfigText("lns: {guided: 0.25}\n").lns_guided, 0.25);
  EXPECT_TRUE(fails("lns: {guided: 1.5}\n", "lns.guided"));
  EXPECT_TRUE(fails("lns: {moves: {fusion: 1}}\n", "lns.moves.fusion"));
  EXPECT_TRUE(fails("lns: {moves: {merge: -1}}\n", "lns.moves.merge"));
  EXPECT_TRUE(
      fails("sa: {moves: {merge: 1, fuse: 0, fuse-far: 0, split: 0, move-op: 0, recompute: 0, uncompute: 0, "
            "granularity: 0, traversal: 0, retain: 0, reorder: 0, reproduce: 0}}\n"
            "lns: {moves: {merge: 0, fuse: 0, fuse-far: 0}}\n",
            "lns.moves"));
}

// A small graph under the default portfolio: the LNS worker solves the whole graph exactly, so
// solve reaches the exact optimum (or better, with a tile side outside the exact space).
TEST(Lns, SmallGraphReachesTheExactOptimum) {
  for (const char* fam : {"random", "cnn"}) {
    const std::string f = test::tempPath(std::string("lns_small_") + fam + ".json");
    const std::string out = f + ".out.json", stats = f + ".stats.json";
    ASSERT_EQ(test::runMlsys({"generate", "--family", fam, "--size", "5", "--seed", "4", "-o", f}).exit_code, 0);
    auto r = test::runMlsys({"solve", f, out, "--seconds", "10", "--threads", "2", "--stats", stats, "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExactResult ex = solveExact(parseProblemFile(f), {}, {}, test::neverStop());
    ASSERT_TRUE(ex.proven_optimal);
    EXPECT_LE(statsLatency(stats), ex.latency * (1 + 1e-9)) << fam;
  }
}

// The LNS worker alone (windows only, one thread) improves a benchmark's construction: on
// mlsys-2026-5 the windows re-partition the tail that the constructors leave.
TEST(Lns, WindowsImproveTheConstruction) {
  std::string f = test::sharedBenchmark("mlsys-2026-5");
  if (f.empty()) GTEST_SKIP() << "../shared/benchmarks is absent";
  const std::string cfgLns = test::tempPath("lns_only.yaml");
  test::writeText(cfgLns, "search: {workers: [lns]}\nlns: {whole_graph_ops: 0, adaptive: false}\n");
  const std::string out = test::tempPath("lns5.json"), stats = test::tempPath("lns5.stats.json");
  auto r = test::runMlsys({"solve", f, out, "--seconds", "8", "--threads", "1", "-c", cfgLns, "--stats", stats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("found by lns"), std::string::npos) << r.err;
  EXPECT_LT(statsLatency(stats), 689220.27) << "no better than the search before LNS";
  auto e = test::runMlsys({"evaluate", f, out});
  EXPECT_EQ(e.exit_code, 0) << e.err;
}

// The adaptive LNS worker spends slices on windows and on annealing (the annealing moves run);
// with lns.adaptive false the same worker runs windows only. Both write a valid schedule.
TEST(Lns, AdaptiveWorkerRunsWindowsAndAnnealing) {
  const std::string f = test::tempPath("lns_adaptive.json");
  ASSERT_EQ(test::runMlsys({"generate", "--family", "random", "--size", "40", "--seed", "3", "-o", f}).exit_code, 0);
  for (bool adaptive : {true, false}) {
    const std::string cfg = test::tempPath("lns_adaptive.yaml"), out = test::tempPath("lns_adaptive.out.json");
    test::writeText(cfg,
                    std::string("search: {workers: [lns]}\nlns: {whole_graph_ops: 0, slice_seconds: 0.1, adaptive: ") +
                        (adaptive ? "true" : "false") + "}\n");
    auto r = test::runMlsys({"solve", f, out, "--seconds", "2", "--threads", "1", "-c", cfg});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_GT(test::movesEvaluated(r.err, "lns-window"), 0) << r.err;
    if (adaptive) EXPECT_GT(test::movesEvaluated(r.err, "granularity"), 0) << r.err;
    else EXPECT_EQ(test::movesEvaluated(r.err, "granularity"), 0) << r.err;
    EXPECT_EQ(test::runMlsys({"evaluate", f, out}).exit_code, 0);
  }
}

// The adaptive LNS worker's third kind of slice (lns.polish), the granularity polish (coordinate
// descent over w, h and k of one subgraph after another): it runs, and with the annealer unable to change a
// granularity (sa.moves.granularity 0) it lowers the latency of the schedule it starts from
// (counted in its "improved" column of the move table), and the result is valid.
TEST(Lns, GranularityPolishRunsAndImproves) {
  const std::string f = test::tempPath("lns_polish.json");
  ASSERT_EQ(test::runMlsys({"generate", "--family", "random", "--size", "40", "--seed", "3", "-o", f}).exit_code, 0);
  const std::string cfg = test::tempPath("lns_polish.yaml"), out = test::tempPath("lns_polish.out.json");
  test::writeText(
      cfg,
      "search: {workers: [lns]}\nsa: {moves: {granularity: 0}}\nlns: {whole_graph_ops: 0, slice_seconds: 0.1, polish: true}\n");
  auto r = test::runMlsys({"solve", f, out, "--seconds", "3", "--threads", "1", "-c", cfg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(test::movesEvaluated(r.err, "lns-polish"), 0) << r.err;
  // The row: name, evaluated, valid, applied, improved.
  const size_t at = r.err.find("\n  lns-polish ");
  ASSERT_NE(at, std::string::npos) << r.err;
  std::string text = r.err.substr(at + 1, r.err.find('\n', at + 1) - at - 1);
  std::erase(text, ',');  // the counts are printed with thousands separators
  std::istringstream row(text);
  std::string name;
  long evaluated = 0, valid = 0, applied = 0, improved = 0;
  row >> name >> evaluated >> valid >> applied >> improved;
  EXPECT_GT(applied, 0) << r.err;
  EXPECT_GT(improved, 0) << r.err;
  EXPECT_EQ(test::runMlsys({"evaluate", f, out}).exit_code, 0);
}

// The candidate library: connected, convex sets whose ephemeral tensors nobody outside reads;
// the order-aware beam's schedule is valid and its latency is the full evaluator's.
TEST(OrderBeam, LibraryAndBeamGiveValidSchedules) {
  for (const char* fam : {"transformer", "mixer", "gemm-chain", "cnn", "random"}) {
    Problem p = generateProblem(fam, 24, 2);
    SCOPED_TRACE(p.name);
    CandidateLibrary lib(p, {}, 4, [] { return false; });
    ASSERT_TRUE(lib.complete());
    ASSERT_GE(lib.candidates().size(), static_cast<size_t>(p.numOps()));  // every op alone at least
    for (const Candidate& c : lib.candidates()) {
      ASSERT_LE(c.ops.size(), 4u);
      for (size_t i = 1; i < c.ops.size(); ++i) EXPECT_LT(p.topo_pos[c.ops[i - 1]], p.topo_pos[c.ops[i]]);
      for (OpId o : c.ops)
        for (TensorId t : p.ops[o].outputs) {
          bool in = false, out = false;
          for (OpId x : p.consumers[t]) (std::find(c.ops.begin(), c.ops.end(), x) != c.ops.end() ? in : out) = true;
          EXPECT_FALSE(in && out) << "ephemeral tensor " << t << " read outside";
        }
    }
    Schedule s;
    double lat = 0;
    ASSERT_TRUE(orderBeam(
        p, lib, 8, [] { return false; }, s, lat));
    const Evaluation e = evaluateSchedule(p, s, {});
    ASSERT_TRUE(e.valid) << e.reason;
    EXPECT_NEAR(e.total, lat, 1e-9 * lat);
    // A wider beam never does worse on these (dominance and width only add states).
    Schedule s2;
    double lat2 = 0;
    ASSERT_TRUE(orderBeam(
        p, lib, 64, [] { return false; }, s2, lat2));
    EXPECT_LE(lat2, lat * (1 + 1e-12));
  }
}

// The full-range chooser is never worse than the trimmed one, and finds the balanced side
// that the trimmed candidates miss on mlsys-2026-5 (86 = ceil(512 / 6)).
TEST(OrderBeam, FullRangeChooserFindsBalancedSides) {
  std::string f = test::sharedBenchmark("mlsys-2026-5");
  if (f.empty()) GTEST_SKIP() << "../shared/benchmarks is absent";
  Problem p = parseProblemFile(f);
  GranResult g = exactGranularity(p, {}, {0, 1}, {}, {}, [] { return false; });
  ASSERT_TRUE(g.found);
  EXPECT_TRUE(g.proven);
  EXPECT_EQ(g.g, (Granularity{86, 86, 128}));
  const GranChoice trimmed = bestGranularity(p, {}, {0, 1}, {}, {});
  ASSERT_TRUE(trimmed.found);
  EXPECT_LE(g.latency, trimmed.cost.latency);
}

// --threads 0 follows the CPUs the process may use: under `taskset -c 0` one worker.
TEST(Portfolio, ThreadsZeroFollowsTheAffinityMask) {
  if (test::runCommand({"taskset", "-c", "0", "true"}).exit_code != 0) GTEST_SKIP() << "taskset is not available";
  const std::string f = test::instancePath("examples/ex1.json"), out = test::tempPath("affinity.out.json");
  auto r = test::runMlsys({"solve", f, out, "--threads", "0", "--seconds", "0.5"}, {"taskset", "-c", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("threads 1;"), std::string::npos) << r.err;
}
