// The pricing's phases stop where they are told to (issue 51 item 1): a stop that fires at the
// N-th poll, for every N, ends the baseline's granularity choice and the check of an --init
// schedule promptly, and what they return then is still true (a valid choice priced exactly, or
// no verdict at all; never a verdict from a half-priced schedule).
#include <gtest/gtest.h>

#include <string>

#include "cost/model/problem.h"
#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"
#include "cost/pricing/granularity.h"
#include "cost/pricing/subgraph.h"

namespace mlsys {
namespace {

// Issue 51's two-op graph at half its size: tensor 1 is read by the MatMul and by the Pointwise,
// so its subgraph is priced by the step walk (43 s for every candidate at full size before the
// walk polled its stop).
Problem twoRoles() {
  return parseProblemText(
      R"({"widths":[256,64,64,64],"heights":[256,256,256,256],"inputs":[[0,1],[2,1]],"outputs":[[2],[3]],)"
      R"("base_costs":[5000,100],"op_types":["MatMul","Pointwise"],"fast_memory_capacity":65536,)"
      R"("slow_memory_bandwidth":5,"native_granularity":[128,128]})");
}

// A stop that answers true from its n-th poll on, and counts the polls after that.
struct NthPoll {
  long n, polls = 0, after = 0;
  bool operator()() {
    ++polls;
    if (polls < n) return false;
    ++after;
    return true;
  }
};

// n subgraphs, each op 0 or op 1 alone at [64,128,128], in turn: a long --init schedule.
std::string longScheduleText(int n) {
  std::string subgraphs, grans, retain, lats;
  for (int i = 0; i < n; ++i) {
    const char* sep = i ? "," : "";
    subgraphs += std::string(sep) + (i % 2 ? "[1]" : "[0]");
    grans += std::string(sep) + "[64,128,128]";
    retain += std::string(sep) + "[]";
    lats += std::string(sep) + "0";
  }
  return R"({"subgraphs":[)" + subgraphs + R"(],"granularities":[)" + grans + R"(],"tensors_to_retain":[)" + retain +
         R"(],"subgraph_latencies":[)" + lats + "]}";
}

TEST(StopSeams, TheBaselinesGranularityChoiceStopsAtAnyPoll) {
  const Problem p = twoRoles();
  const ModelOptions m;
  NthPoll all{1L << 40};
  const GranChoice full = bestGranularity(p, m, {0, 1}, {}, {}, std::ref(all));
  ASSERT_TRUE(full.found);
  ASSERT_GT(all.polls, 3) << "the choice should poll its stop more than a few times";
  for (long n = 1; n <= all.polls; n += std::max(1L, all.polls / 12)) {
    NthPoll stop{n};
    const GranChoice g = bestGranularity(p, m, {0, 1}, {}, {}, std::ref(stop));
    // One true answer ends it: the walk's, then the traversal scan's and the candidate scan's checks.
    EXPECT_LE(stop.after, 3) << "stopped at poll " << n;
    if (!g.found) continue;
    EXPECT_TRUE(g.cost.valid) << "stopped at poll " << n;
    // What it returns is priced exactly: the same as pricing it again without a stop.
    const SubgraphPlan pl = planSubgraph(p, m, {0, 1}, g.g, {}, {});
    const SubgraphCost again = costSubgraph(p, pl, g.trav);
    EXPECT_TRUE(again.valid);
    EXPECT_EQ(again.latency, g.cost.latency) << "stopped at poll " << n;
    EXPECT_GE(g.cost.latency, full.cost.latency) << "stopped at poll " << n;
  }
}

TEST(StopSeams, CheckingALongInitScheduleStopsAtAnyPoll) {
  const Problem p = twoRoles();
  // A long schedule: each op alone, many times over.
  const Schedule s = parseScheduleText(longScheduleText(4096), p);
  NthPoll all{1L << 40};
  const Evaluation full = evaluateSchedule(p, s, ModelOptions{}, CostMethod::Auto, {}, std::ref(all));
  ASSERT_FALSE(full.interrupted);
  ASSERT_GT(all.polls, 3);
  for (long k = 1; k <= all.polls; k += std::max(1L, all.polls / 40)) {
    NthPoll stop{k};
    const Evaluation ev = evaluateSchedule(p, s, ModelOptions{}, CostMethod::Auto, {}, std::ref(stop));
    EXPECT_LE(stop.after, 2) << "stopped at poll " << k;
    // Stopped before its end it gives no verdict; it never calls a half-priced schedule valid.
    if (ev.interrupted) {
      EXPECT_FALSE(ev.valid) << "stopped at poll " << k;
    } else {
      EXPECT_EQ(ev.valid, full.valid);
      EXPECT_EQ(ev.total, full.total);
    }
  }
}

// Reading a long --init stops too: the parse polls about every 4,096 arrays, the read-out every
// 4,096 subgraphs; a stop ends it with ReadInterrupted (never a verdict on half a file).
TEST(StopSeams, ParsingALongScheduleStopsAtAnyPoll) {
  const Problem p = twoRoles();
  const int n = 50000;
  const std::string text = longScheduleText(n);
  NthPoll all{1L << 40};
  const Schedule whole = parseScheduleText(text, p, "schedule", std::ref(all));
  EXPECT_EQ(whole.subgraphs.size(), static_cast<size_t>(n));
  ASSERT_GT(all.polls, 20) << "the parse should poll its stop as it goes";
  for (long k = 1; k <= all.polls; k += std::max(1L, all.polls / 20)) {
    NthPoll stop{k};
    EXPECT_THROW(parseScheduleText(text, p, "schedule", std::ref(stop)), ReadInterrupted) << "stopped at poll " << k;
    EXPECT_EQ(stop.after, 1) << "stopped at poll " << k;
  }
}

}  // namespace
}  // namespace mlsys
