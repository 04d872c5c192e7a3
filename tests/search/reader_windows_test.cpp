// Reader windows (lns.reader_window_seconds): the window from a subgraph far above its part floor
// to the maker of a tensor it loads and the tensor's other readers, and the slices of them; and the
// region and reader windows over a tensor with thousands of readers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/pricing/evaluator.h"
#include "engine/search/lns.h"
#include "tests/search/one_worker.h"
#include "tests/test_util.h"

using namespace mlsys;
using test::OneWorker;

// Four Pointwise ops: op 1 makes T2, which op 2 and op 3 read.
static Problem readerProblem() {
  return test::problemFromJson(R"({"widths": [256, 256, 256, 256, 256, 256],
 "heights": [256, 256, 256, 256, 256, 256], "inputs": [[0], [1], [2], [2, 4]], "outputs": [[1], [2], [3], [5]],
 "base_costs": [100, 100, 100, 100], "op_types": ["Pointwise", "Pointwise", "Pointwise", "Pointwise"],
 "fast_memory_capacity": 400000, "slow_memory_bandwidth": 10, "native_granularity": [128, 128]})");
}

// A reader window: T2 (op 1's output) is read by op 2 and op 3 in two other subgraphs. From either
// reader's subgraph the window is the maker's, op 3's and op 2's subgraphs; from the maker's, which
// loads only a graph input, there is none.
TEST(Lns, AReaderWindowHoldsTheMakerAndEveryReaderOfTheLoadedTensor) {
  const Problem p = readerProblem();
  OneWorker w(p, SearchConfig{});
  Schedule s;
  s.subgraphs = {{{0, 1}, {128, 128, 1}, {}, {}}, {{3}, {128, 128, 1}, {}, {}}, {{2}, {128, 128, 1}, {}, {}}};
  w.ev.reset(s);
  ASSERT_TRUE(w.ev.valid());
  Lns lns(w.run, 0);
  EXPECT_EQ(lns.readerWindow(w.ev, 2), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(lns.readerWindow(w.ev, 1), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(lns.readerWindow(w.ev, 0).empty());
  EXPECT_TRUE(lns.readerWindow(w.ev, 3).empty());
  // T2's load (65,536 / 10) must be at least half of what the subgraph pays above its floor.
  EXPECT_EQ(lns.readerWindow(w.ev, 2, 13000), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(lns.readerWindow(w.ev, 2, 14000).empty());
}

// A slice of reader windows (lns.adaptive with lns.reader_window_seconds): from the schedule above,
// the window of all three subgraphs is solved and spliced in (cheaper), counted as lns-reader; the
// slice ends by itself once every subgraph above its floor has been tried. Off (0): nothing runs.
TEST(Lns, AReaderSliceSolvesReaderWindowsUntilNoSeedIsLeft) {
  const Problem p = readerProblem();
  Schedule s;
  s.subgraphs = {{{0, 1}, {128, 128, 1}, {}, {}}, {{3}, {128, 128, 1}, {}, {}}, {{2}, {128, 128, 1}, {}, {}}};
  const double before = evaluateSchedule(p, s, {}).total;
  for (double seconds : {0.0, 5.0}) {
    SearchConfig cfg;
    cfg.lns_reader_window_seconds = seconds;
    OneWorker w(p, cfg);
    Lns lns(w.run, 0);
    Schedule start = s;
    lns.readerWindows(w.ev, start, 1e300);  // returns without a time limit: no seed is left
    lns.reportStats();
    const Evaluation e = evaluateSchedule(p, start, {});
    ASSERT_TRUE(e.valid) << e.reason;
    const auto moves = w.run.stats.moves();
    if (seconds == 0) {
      EXPECT_EQ(e.total, before);
      EXPECT_EQ(moves.count("lns-reader"), 0u);
    } else {
      EXPECT_LT(e.total, before);
      ASSERT_EQ(moves.count("lns-reader"), 1u);
      EXPECT_GE(moves.at("lns-reader").improvements, 1);
    }
  }
}

// Op 0 makes T1, which `readers` Pointwise ops read, each alone in its subgraph (T0 256x256,
// every tensor 256x256, capacity for a few tiles).
static Problem fanOut(int readers) {
  std::string w, ins, outs, costs, types;
  for (int t = 0; t < readers + 2; ++t) w += std::string(t ? "," : "") + "256";
  ins = "[0]";
  outs = "[1]";
  costs = "100";
  types = "\"Pointwise\"";
  for (int r = 0; r < readers; ++r) {
    ins += ",[1]";
    outs += ",[" + std::to_string(r + 2) + "]";
    costs += ",100";
    types += ",\"Pointwise\"";
  }
  return test::problemFromJson("{\"widths\":[" + w + "],\"heights\":[" + w + "],\"inputs\":[" + ins +
                               "],\"outputs\":[" + outs + "],\"base_costs\":[" + costs + "],\"op_types\":[" + types +
                               "],\"fast_memory_capacity\":400000,\"slow_memory_bandwidth\":10,"
                               "\"native_granularity\":[128,128]}");
}

// A region grown over a tensor with 3,000 readers: from the maker's subgraph or from a reader's,
// a connected region of exactly `size` ops (the maker and readers), the seed's subgraph in it.
// The reader window from a reader holds the maker and every reader: far over the exact solver's
// ops, so none.
TEST(Lns, WindowsOverATensorWithThousandsOfReaders) {
  const int readers = 3000;
  const Problem p = fanOut(readers);
  OneWorker w(p, SearchConfig{});
  Schedule s;
  for (int o = 0; o <= readers; ++o) s.subgraphs.push_back({{o}, {128, 128, 1}, {}, {}});
  w.ev.reset(s);
  ASSERT_TRUE(w.ev.valid());
  Lns lns(w.run, 0);
  for (int seed : {0, 1, 1500, readers}) {
    for (int size : {2, 6, 14}) {
      const std::vector<int> idx = lns.regionWindow(w.ev, size, seed);
      ASSERT_EQ(static_cast<int>(idx.size()), size) << "seed " << seed << " size " << size;
      EXPECT_TRUE(std::is_sorted(idx.begin(), idx.end()));
      EXPECT_TRUE(std::find(idx.begin(), idx.end(), seed) != idx.end());
      // Connected through T1: a region of readers holds their maker (subgraph 0).
      EXPECT_EQ(idx.front(), 0);
    }
  }
  EXPECT_TRUE(lns.readerWindow(w.ev, 7).empty());
}
