// The output writer: every file on disk is a complete, valid schedule; writes are throttled; and
// with a deadline a write that would end past it is not started (the previous file stays).
#include "engine/io/output.h"

#include <gtest/gtest.h>

#include "cost/model/json_util.h"
#include "tests/test_util.h"

using namespace mlsys;

namespace {

struct Ex1 {
  Problem p = parseProblemFile(test::instancePath("examples/ex1.json"));
  Schedule worse = parseScheduleFile(test::instancePath("examples/ex1a.schedule.json"), p);   // 6553.6
  Schedule better = parseScheduleFile(test::instancePath("examples/ex1b.schedule.json"), p);  // 3276.8
};

double onDisk(const std::string& path, const Problem& p) {
  Evaluation ev = evaluateSchedule(p, parseScheduleFile(path, p), ModelOptions{});
  EXPECT_TRUE(ev.valid) << ev.reason;
  return ev.total;
}

// Ex 1's worse schedule forced onto disk (the first schedule is always written), then its better
// one offered: what is on disk after it depends on the writer's throttle and deadline.
void offerWorseThenBetter(OutputWriter& w, const Ex1& e) {
  w.offer(e.worse, 0, /*force_write=*/true);
  w.offer(e.better, 0);
}

// A writer into the temp file `name` whose deadline is `budget_s` away, and whose search stops
// `stop_margin_s` before it, after offerWorseThenBetter.
struct TimedWriter {
  Deadline dl;
  std::string path;
  OutputWriter w;
  TimedWriter(const Ex1& e, const std::string& name, double budget_s, double stop_margin_s = 0)
      : path(test::tempPath(name)), w(e.p, ModelOptions{}, path, 0, &dl) {
    dl.setBudget(budget_s);
    w.setStopMargin(stop_margin_s);
    offerWorseThenBetter(w, e);
  }
};

}  // namespace

TEST(OutputWriter, WritesTheBestAndThrottles) {
  Ex1 e;
  std::string path = test::tempPath("writer_throttle.json");
  OutputWriter w(e.p, ModelOptions{}, path, /*min_interval_s=*/1000);
  EXPECT_DOUBLE_EQ(w.offer(e.worse, 0, /*force_write=*/true), 6553.6);
  EXPECT_EQ(w.writes(), 1);
  EXPECT_DOUBLE_EQ(onDisk(path, e.p), 6553.6);
  // Better, but inside the interval: pending until the flush.
  EXPECT_DOUBLE_EQ(w.offer(e.better, 1), 3276.8);
  EXPECT_EQ(w.writes(), 1);
  EXPECT_DOUBLE_EQ(w.best(), 3276.8);
  EXPECT_DOUBLE_EQ(w.writtenBest(), 6553.6);
  w.flushDue(500);  // still inside the interval
  EXPECT_EQ(w.writes(), 1);
  w.flushDue(1000);  // the periodic flush writes it once the interval has passed
  EXPECT_EQ(w.writes(), 2);
  EXPECT_DOUBLE_EQ(w.writtenBest(), 3276.8);
  EXPECT_DOUBLE_EQ(onDisk(path, e.p), 3276.8);
  // A worse offer changes nothing.
  EXPECT_DOUBLE_EQ(w.offer(e.worse, 2000), 6553.6);
  w.flushDue(3000);
  EXPECT_TRUE(w.flushFinal(false));
  EXPECT_EQ(w.writes(), 2);
}

TEST(OutputWriter, RejectsAnInvalidSchedule) {
  Ex1 e;
  std::string path = test::tempPath("writer_invalid.json");
  OutputWriter w(e.p, ModelOptions{}, path);
  Schedule bad = e.better;
  bad.subgraphs[0].gran.k = 0;  // V8
  EXPECT_LT(w.offer(bad, 0, true), 0);
  EXPECT_FALSE(w.hasBest());
  EXPECT_EQ(w.writes(), 0);
}

TEST(OutputWriter, DoesNotStartAWritePastTheDeadline) {
  Ex1 e;
  std::string path = test::tempPath("writer_deadline.json");
  Deadline dl;
  dl.setBudget(-1);  // expired a second ago: no write can end inside it, even with the final grace
  OutputWriter w(e.p, ModelOptions{}, path, 0, &dl);
  w.offer(e.worse, 0, /*force_write=*/true);  // the first schedule is always written
  EXPECT_EQ(w.writes(), 1);
  w.offer(e.better, 0);
  EXPECT_EQ(w.writes(), 1);
  w.flushDue(5);
  EXPECT_EQ(w.writes(), 1);
  EXPECT_FALSE(w.flushFinal(false));
  EXPECT_EQ(w.writes(), 1);
  EXPECT_DOUBLE_EQ(w.best(), 3276.8);
  EXPECT_DOUBLE_EQ(w.writtenBest(), 6553.6);
  EXPECT_DOUBLE_EQ(onDisk(path, e.p), 6553.6);
  EXPECT_TRUE(w.flushFinal(/*after_signal=*/true));  // the signal path writes whatever the time
  EXPECT_EQ(w.writes(), 2);
  EXPECT_DOUBLE_EQ(onDisk(path, e.p), 3276.8);

  // With time left, the same offer is written (now or at the flush).
  TimedWriter later(e, "writer_deadline2.json", 60);
  later.w.flushFinal(false);
  EXPECT_EQ(later.w.writes(), 2);
  EXPECT_DOUBLE_EQ(onDisk(later.path, e.p), 3276.8);
}

// Issue 11: a process that runs late (stopped, loaded machine) still writes a small pending best
// at the end instead of exiting with an older schedule on disk.
TEST(OutputWriter, FinalFlushWritesASmallBestJustPastTheDeadline) {
  Ex1 e;
  TimedWriter late(e, "writer_late.json", 0);  // just expired
  EXPECT_EQ(late.w.writes(), 1);
  EXPECT_TRUE(late.w.flushFinal(false));
  EXPECT_EQ(late.w.writes(), 2);
  EXPECT_DOUBLE_EQ(onDisk(late.path, e.p), 3276.8);
}

// A write during the search is started only if it should end before the search stops
// (deadline - stopMargin): none is then running when the final write is due. The best waits for
// the final write.
TEST(OutputWriter, DefersAWriteThatWouldRunPastTheSearchStop) {
  Ex1 e;
  TimedWriter stopping(e, "writer_stop.json", 2, 5);  // the search stops 5 s before the deadline: already past
  stopping.w.flushDue(1e9);                           // long past the write throttle's interval
  EXPECT_EQ(stopping.w.writes(), 1);
  EXPECT_DOUBLE_EQ(stopping.w.writtenBest(), 6553.6);
  EXPECT_TRUE(stopping.w.flushFinal(false));  // the final write fits before the deadline
  EXPECT_EQ(stopping.w.writes(), 2);
  EXPECT_DOUBLE_EQ(onDisk(stopping.path, e.p), 3276.8);
  // Without that margin the same flush writes it.
  TimedWriter searching(e, "writer_stop2.json", 2);
  searching.w.flushDue(1e9);
  EXPECT_EQ(searching.w.writes(), 2);
  EXPECT_DOUBLE_EQ(onDisk(searching.path, e.p), 3276.8);
}
