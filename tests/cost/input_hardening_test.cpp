// Regression tests for hostile or sloppy input (issue 11): deep nesting, duplicate keys, huge
// unknown keys, a one-entry native_granularity, non-integer YAML integers, and integer fields
// quoted as written ("got 128.0", not "got 128").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cost/model/problem.h"
#include "cost/model/schedule.h"
#include "engine/io/config.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

// Ex 1 (two Pointwise ops) with `extra` inserted as the first members of the top-level object.
std::string problemJson(const std::string& extra = "", const std::string& widths = "[128, 128, 128]",
                        const std::string& native = "[128, 128]") {
  return "{" + extra + "\n  \"widths\": " + widths +
         ",\n  \"heights\": [128, 128, 128],\n  \"inputs\": [[0], [1]],\n  \"outputs\": [[1], [2]],\n"
         "  \"base_costs\": [1000, 100],\n  \"op_types\": [\"Pointwise\", \"Pointwise\"],\n"
         "  \"fast_memory_capacity\": 50000,\n  \"slow_memory_bandwidth\": 10,\n  \"native_granularity\": " +
         native + "\n}\n";
}

std::string scheduleJson(const std::string& extra = "", const std::string& gran = "[128, 128, 1]") {
  return "{" + extra + "\"subgraphs\": [[0, 1]], \"granularities\": [" + gran +
         "], \"tensors_to_retain\": [[]], \"traversal_orders\": [null], \"subgraph_latencies\": [3276.8]}";
}

// The message of the InputError thrown by f, or "" (a test failure) if none.
template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError thrown";
  return "";
}

#define EXPECT_MENTIONS(msg, part) \
  EXPECT_NE((msg).find(part), std::string::npos) << "expected \"" << (part) << "\" in: " << (msg)

std::string nested(size_t n) { return std::string(n, '[') + std::string(n, ']'); }

std::string ex(const std::string& f) { return test::instancePath("examples/" + f); }

// ---- 1. Deep nesting -------------------------------------------------------------------------

TEST(InputHardening, DeepNestingIsAnInputErrorNotACrash) {
  const std::string text = "{\"widths\": " + nested(150000) + "}";
  std::string msg = errorOf([&] { parseProblemText(text, "deep"); });
  EXPECT_EQ(msg, "deep: JSON nested deeper than 64 levels at line 1 (offset 74)");
  Problem p = parseProblemFile(ex("ex1.json"));
  msg = errorOf([&] { parseScheduleText("{\"subgraphs\": " + nested(150000) + "}", p, "deep"); });
  EXPECT_MENTIONS(msg, "deep: JSON nested deeper than 64 levels");
}

TEST(InputHardening, NestingLimitIs64Levels) {
  // The top-level object is level 1: 63 brackets reach level 64 (accepted by the JSON reader,
  // then rejected as a non-integer width), 64 brackets reach level 65.
  std::string msg = errorOf([&] { parseProblemText("{\"widths\": " + nested(63) + "}", "p"); });
  EXPECT_MENTIONS(msg, "p: missing key \"heights\"");  // nesting accepted: the next check fails
  msg = errorOf([&] { parseProblemText("{\"widths\": " + nested(64) + "}", "p"); });
  EXPECT_EQ(msg, "p: JSON nested deeper than 64 levels at line 1 (offset 74)");
  // Also inside an unknown key, whose value is otherwise skipped.
  msg = errorOf([&] { parseProblemText(problemJson("\"junk\": " + nested(100000) + ","), "p"); });
  EXPECT_MENTIONS(msg, "p: JSON nested deeper than 64 levels at line 1 (offset 72)");
}

TEST(InputHardening, DeepNestingThroughTheCli) {
  const std::string path = test::tempPath("deep_problem.json");
  test::writeText(path, "{\"widths\": " + nested(150000) + "}");
  const std::string out = test::tempPath("deep_out.json");
  for (const auto& args : {std::vector<std::string>{"evaluate", path, ex("ex1a.schedule.json")},
                           std::vector<std::string>{"solve", path, out, "--seconds", "1", "--threads", "1"}}) {
    test::RunResult r = test::runMlsys(args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    EXPECT_MENTIONS(r.err,
                    "mlsys: error: problem '" + path + "': JSON nested deeper than 64 levels at line 1 (offset 74)");
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  const std::string spath = test::tempPath("deep_schedule.json");
  test::writeText(spath, "{\"subgraphs\": " + nested(150000) + "}");
  test::RunResult r = test::runMlsys({"evaluate", ex("ex1.json"), spath});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_MENTIONS(r.err, "schedule '" + spath + "': JSON nested deeper than 64 levels");
}

// ---- 2. Duplicate keys -----------------------------------------------------------------------

TEST(InputHardening, DuplicateProblemKeyIsRejected) {
  std::string msg = errorOf([&] { parseProblemText(problemJson("\"fast_memory_capacity\": 1,"), "p"); });
  EXPECT_MENTIONS(msg, "p: duplicate key \"fast_memory_capacity\" at line 8");
  // Unknown keys too (they are skipped, but a repeated one is still ambiguous JSON).
  msg = errorOf([&] { parseProblemText(problemJson("\"note\": 1, \"note\": 2,"), "p"); });
  EXPECT_MENTIONS(msg, "p: duplicate key \"note\" at line 1");
  // Nested objects (not part of the format, but rejected the same way before anything else).
  msg = errorOf([&] { parseProblemText(problemJson("", "{\"a\": 1, \"b\": {\"c\": 1, \"c\": 2}}"), "p"); });
  EXPECT_MENTIONS(msg, "p: duplicate key \"c\"");
}

TEST(InputHardening, DuplicateScheduleKeyIsRejected) {
  Problem p = parseProblemFile(ex("ex1.json"));
  std::string msg = errorOf([&] { parseScheduleText(scheduleJson("\"granularities\": [[1, 1, 1]], "), p, "s"); });
  EXPECT_MENTIONS(msg, "s: duplicate key \"granularities\"");
}

TEST(InputHardening, DuplicateKeyThroughTheCli) {
  const std::string path = test::tempPath("dup_problem.json");
  test::writeText(path, problemJson("\"fast_memory_capacity\": 1000000,"));
  const std::string out = test::tempPath("dup_out.json");
  test::RunResult r = test::runMlsys({"solve", path, out, "--seconds", "1", "--threads", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_MENTIONS(r.err, "problem '" + path + "': duplicate key \"fast_memory_capacity\"");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(InputHardening, DuplicateYamlKeyIsRejected) {
  std::string msg = errorOf([] { loadConfigText("beam:\n  width: 4\n  width: 8\n", "cfg"); });
  EXPECT_MENTIONS(msg, "cfg: line 3: beam.width: duplicate key (first at line 2)");
  msg = errorOf([] { loadConfigText("sa:\n  t0: 0.1\nbeam:\n  width: 4\nsa:\n  t1: 0.0001\n", "cfg"); });
  EXPECT_MENTIONS(msg, "cfg: line 5: sa: duplicate key (first at line 1)");
  msg = errorOf([] { loadConfigText("sa:\n  moves:\n    merge: 1\n    merge: 0\n", "cfg"); });
  EXPECT_MENTIONS(msg, "cfg: line 4: sa.moves.merge: duplicate key (first at line 3)");
  msg = errorOf([] { loadConfigText("model:\n  matmul_chains: reject\n  matmul_chains: literal\n", "cfg"); });
  EXPECT_MENTIONS(msg, "cfg: line 3: model.matmul_chains: duplicate key (first at line 2)");
}

// ---- 3. Huge unknown keys --------------------------------------------------------------------

// Peak RSS growth (bytes) while running f, or -1 if /proc/self/clear_refs cannot reset the peak.
template <class F>
long peakGrowth(F&& f) {
  auto kb = [](const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::string(field).size()));
    return -1L;
  };
  {
    std::ofstream c("/proc/self/clear_refs");
    if (!(c << "5" << std::flush)) return -1;
  }
  long before = kb("VmRSS:");
  if (before < 0 || kb("VmHWM:") > before + 1024) return -1;  // the reset did not take
  f();
  return (kb("VmHWM:") - before) * 1024;
}

TEST(InputHardening, UnknownKeysAreNotStored) {
  // 4M numbers (8 MB of text): a DOM for them alone would take 64 MB plus its build stack.
  std::string junk = "\"junk\": [";
  for (int i = 0; i < 4'000'000; ++i) junk += "0,";
  junk.back() = ']';
  const std::string ptext = problemJson(junk + ",");
  long grow = peakGrowth([&] {
    Problem p = parseProblemText(ptext, "p");
    EXPECT_EQ(p.numOps(), 2);
  });
  if (grow < 0) GTEST_SKIP() << "cannot reset the peak RSS";
  EXPECT_LT(grow, 4L << 20) << "parsing a problem with an 8 MB unknown key grew the peak RSS by " << grow << " bytes";
  Problem p = parseProblemFile(ex("ex1.json"));
  const std::string stext = scheduleJson(junk + ",");
  grow = peakGrowth([&] {
    Schedule s = parseScheduleText(stext, p, "s");
    EXPECT_EQ(s.subgraphs.size(), 1u);
  });
  EXPECT_LT(grow, 4L << 20) << "parsing a schedule with an 8 MB unknown key grew the peak RSS by " << grow << " bytes";
  // A top-level array (not a problem at all) is not stored either.
  const std::string atext = junk.substr(junk.find('['));
  grow = peakGrowth(
      [&] { EXPECT_MENTIONS(errorOf([&] { parseProblemText(atext, "p"); }), "p: top level must be a JSON object"); });
  EXPECT_LT(grow, 4L << 20) << "parsing an 8 MB top-level array as a problem grew the peak RSS by " << grow << " bytes";
}

TEST(InputHardening, UnknownKeysMustStillBeValidJson) {
  std::string msg = errorOf([] { parseProblemText(problemJson("\"junk\": [1, 2,,"), "p"); });
  EXPECT_MENTIONS(msg, "p: not valid JSON at line 1");
  EXPECT_NO_THROW(
      parseProblemText(problemJson("\"junk\": {\"a\": [1, {\"b\": null}], \"s\": \"x\"}, \"z\": 1.5,"), "p"));
}

// ---- 4. native_granularity -------------------------------------------------------------------

TEST(InputHardening, NativeGranularityNeedsExactlyTwoEntries) {
  std::string msg = errorOf([] { parseProblemText(problemJson("", "[128, 128, 128]", "[128]"), "p"); });
  EXPECT_EQ(msg, "p: \"native_granularity\" must have 2 entries, got 1");
  msg = errorOf([] { parseProblemText(problemJson("", "[128, 128, 128]", "[]"), "p"); });
  EXPECT_EQ(msg, "p: \"native_granularity\" must have 2 entries, got 0");
  msg = errorOf([] { parseProblemText(problemJson("", "[128, 128, 128]", "[128, 128, 128]"), "p"); });
  EXPECT_EQ(msg, "p: \"native_granularity\" must have 2 entries, got 3");
}

// ---- 5. YAML integers ------------------------------------------------------------------------

TEST(InputHardening, YamlIntegerKeysRejectFractions) {
  struct Case {
    const char* yaml;
    const char* mention;
  };
  for (const Case& c :
       {Case{"beam:\n  width: 2.7\n", "cfg: line 2: beam.width: expected an integer, got \"2.7\""},
        Case{"beam:\n  max_segment: 8.0\n", "cfg: line 2: beam.max_segment: expected an integer, got \"8.0\""},
        Case{"sa:\n  t0: 0.1\n  restart_after: 2.5e4\n",
             "cfg: line 3: sa.restart_after: expected an integer, got \"2.5e4\""},
        Case{"sa:\n  sync_every: 1000.5\n", "cfg: line 2: sa.sync_every: expected an integer, got \"1000.5\""},
        Case{"pool:\n  size: 3.9\n", "cfg: line 2: pool.size: expected an integer, got \"3.9\""},
        Case{"cache:\n  entries: 65536.5\n", "cfg: line 2: cache.entries: expected an integer, got \"65536.5\""}}) {
    std::string msg = errorOf([&] { loadConfigText(c.yaml, "cfg"); });
    EXPECT_MENTIONS(msg, c.mention);
  }
  SearchConfig cfg = loadConfigText(
      "beam:\n  width: 3\n  max_segment: 5\nsa:\n  restart_after: 100\n"
      "pool:\n  size: 2\ncache:\n  entries: 4096\n");
  EXPECT_EQ(cfg.beam_width, 3);
  EXPECT_EQ(cfg.beam_max_segment, 5);
  EXPECT_EQ(cfg.sa_restart_after, 100);
  EXPECT_EQ(cfg.pool_size, 2);
  EXPECT_EQ(cfg.cache_entries, 4096);
  std::string msg = errorOf([] { loadConfigText("beam:\n  width: 0\n", "cfg"); });
  EXPECT_MENTIONS(msg, "cfg: line 2: beam.width: value 0 is out of range [1, 1024]");
}

TEST(InputHardening, YamlNonScalarValuesNameTheKey) {
  // These used to escape as yaml-cpp's "bad conversion", naming neither the file nor the key.
  std::string msg = errorOf([] { loadConfigText("search:\n  workers: [[sa]]\n", "cfg"); });
  EXPECT_MENTIONS(msg, "cfg: line 2: search.workers: expected a worker kind (beam, sa, lns), got a non-scalar");
  msg = errorOf([] { loadConfigText("model:\n  matmul_compute: [a]\n", "cfg"); });
  EXPECT_MENTIONS(msg, "cfg: line 2: model.matmul_compute: expected a scalar value");
}

// ---- 6. Literals as written ------------------------------------------------------------------

TEST(InputHardening, NonIntegerLiteralsAreQuotedAsWritten) {
  struct Case {
    const char* widths;
    const char* mention;
  };
  for (const Case& c :
       {Case{"[128, 128.0, 128]", "p: widths[1]: must be an integer, got 128.0"},
        Case{"[1e2, 128, 128]", "p: widths[0]: must be an integer, got 1e2"},
        Case{"[128, 128, 2.50]", "p: widths[2]: must be an integer, got 2.50"},
        Case{"[128, 128, -1.5E+3]", "p: widths[2]: must be an integer, got -1.5E+3"},
        Case{"[128, 99999999999999999999, 128]", "p: widths[1]: 99999999999999999999 is out of range [1, "},
        Case{"[128, 18446744073709551615, 128]", "p: widths[1]: 18446744073709551615 is out of range [1, "}}) {
    std::string msg = errorOf([&] { parseProblemText(problemJson("", c.widths), "p"); });
    EXPECT_MENTIONS(msg, c.mention);
  }
  std::string msg = errorOf([] {
    parseProblemText(
        "{\"fast_memory_capacity\": 50000.000, \"slow_memory_bandwidth\": 10, \"widths\": [128],"
        " \"heights\": [128], \"inputs\": [], \"outputs\": [], \"base_costs\": [], \"op_types\": [],"
        " \"native_granularity\": [128, 128]}",
        "p");
  });
  EXPECT_MENTIONS(msg, "p: fast_memory_capacity: must be an integer, got 50000.000");
  msg = errorOf(
      [] { parseProblemText(problemJson().replace(problemJson().find("[[0], [1]]"), 10, "[[0.0], [1]]"), "p"); });
  EXPECT_MENTIONS(msg, "p: inputs[0][0]: tensor index must be an integer, got 0.0");
  msg = errorOf([] { parseProblemText(problemJson().replace(problemJson().find("[[1], [2]]"), 10, "[1, 2.0]"), "p"); });
  EXPECT_MENTIONS(msg, "p: outputs[1][0]: tensor index must be an integer, got 2.0");
  Problem p = parseProblemFile(ex("ex1.json"));
  msg = errorOf([&] { parseScheduleText(scheduleJson("", "[128.0, 128, 1]"), p, "s"); });
  EXPECT_MENTIONS(msg, "s: rule V1: granularities[0][0] (w): must be an integer, got 128.0");
  // Doubles elsewhere keep their value (the reported latency).
  Schedule s = parseScheduleText(scheduleJson(), p, "s");
  ASSERT_EQ(s.reported.size(), 1u);
  EXPECT_EQ(s.reported[0], 3276.8);
}

TEST(InputHardening, NonIntegerLiteralThroughTheCli) {
  const std::string path = test::tempPath("gran_128_0.json");
  test::writeText(path, scheduleJson("", "[128, 128.0, 1]"));
  test::RunResult r = test::runMlsys({"evaluate", ex("ex1.json"), path});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_MENTIONS(r.err, "granularities[0][1] (h): must be an integer, got 128.0");
}

}  // namespace
}  // namespace mlsys
