// TraceFile (engine/search/run_state.h): the --trace CSV. The header is written and flushed when
// the file is opened, every row is flushed as it is written (readable before the file is closed),
// seconds have four decimals and latencies the shortest round-trip decimal. Files go to the test
// temp dir.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cost/model/types.h"
#include "engine/search/run_state.h"
#include "tests/test_util.h"

using namespace mlsys;

namespace {
const std::string kHeader = "seconds,worker,latency\n";
}  // namespace

TEST(TraceFile, OpeningWritesTheHeaderAtOnceAndTruncates) {
  const std::string path = test::tempPath("trace_header.csv");
  test::writeText(path, "stale contents\n1,sa,2\n");
  auto t = TraceFile::open(path);
  ASSERT_TRUE(t);
  EXPECT_EQ(test::readText(path), kHeader);  // flushed before any row, the old rows gone
  EXPECT_EQ(t->error(), "");
}

TEST(TraceFile, EachRowIsFlushedAsItIsWritten) {
  const std::string path = test::tempPath("trace_rows.csv");
  auto t = TraceFile::open(path);
  t->row(0, traceTagName(TraceTag::First), 6553.6);
  EXPECT_EQ(test::readText(path), kHeader + "0.0000,first,6553.6\n");
  t->row(0.5, traceTagName(TraceTag::Baseline), 3276.8);
  t->row(1.23456, "sa", 0.1 + 0.2);     // seconds rounded to 4 decimals; latency round-trips
  t->row(2.00004, "order-beam", 7096);  // an integral latency has no decimals
  t->row(3, traceTagName(TraceTag::End), 7096);
  const std::string all = kHeader +
                          "0.0000,first,6553.6\n"
                          "0.5000,baseline,3276.8\n"
                          "1.2346,sa,0.30000000000000004\n"
                          "2.0000,order-beam,7096\n"
                          "3.0000,end,7096\n";
  EXPECT_EQ(test::readText(path), all);
  EXPECT_EQ(t->error(), "");
  t.reset();  // closing adds nothing
  EXPECT_EQ(test::readText(path), all);
}

TEST(TraceFile, TheInstanceNameFollowsTheHeaderAsAComment) {
  const std::string path = test::tempPath("trace_instance.csv");
  auto t = TraceFile::open(path, "mlsys-2026-13\nx");
  t->row(0, traceTagName(TraceTag::First), 6553.6);
  EXPECT_EQ(test::readText(path), kHeader + "# instance: mlsys-2026-13 x\n0.0000,first,6553.6\n");
}

TEST(TraceFile, TheTagsOfTheRowsSolveWrites) {
  EXPECT_STREQ(traceTagName(TraceTag::First), "first");
  EXPECT_STREQ(traceTagName(TraceTag::Baseline), "baseline");
  EXPECT_STREQ(traceTagName(TraceTag::Exact), "exact");
  EXPECT_STREQ(traceTagName(TraceTag::End), "end");
}

TEST(TraceFile, AnUnwritablePathIsAnInputError) {
  const std::string path = test::tempPath("no_such_dir/trace.csv");
  try {
    TraceFile::open(path);
    FAIL() << "opened " << path;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--trace: cannot write '" + path + "'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(TraceFile, AFileThatCannotTakeTheHeaderIsAnInputError) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  EXPECT_THROW(TraceFile::open("/dev/full"), InputError);
}
