// Malformed input: every class of bad problem or schedule file gets a precise message (naming
// the field and index) and exit code 1 from every command that reads it; the library throws
// InputError with the same message. Usage errors exit 2; --help and --version exit 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/test_util.h"

using namespace mlsys;

namespace {

// A valid problem (Ex 1) as a list of "key": value lines, so cases can replace one field.
struct Fields {
  std::string widths = "[128, 128, 128]", heights = "[128, 128, 128]", inputs = "[[0], [1]]", outputs = "[[1], [2]]",
              base_costs = "[1000, 100]", op_types = "[\"Pointwise\", \"Pointwise\"]", capacity = "50000",
              bandwidth = "10", native = "[128, 128]";
  std::string json(const std::string& omit = "") const {
    std::vector<std::pair<std::string, std::string>> kv = {{"widths", widths},
                                                           {"heights", heights},
                                                           {"inputs", inputs},
                                                           {"outputs", outputs},
                                                           {"base_costs", base_costs},
                                                           {"op_types", op_types},
                                                           {"fast_memory_capacity", capacity},
                                                           {"slow_memory_bandwidth", bandwidth},
                                                           {"native_granularity", native}};
    std::string s = "{\n";
    bool first = true;
    for (const auto& [k, v] : kv) {
      if (k == omit) continue;
      s += (first ? "  \"" : ",\n  \"") + k + "\": " + v;
      first = false;
    }
    return s + "\n}\n";
  }
};

struct BadProblem {
  std::string name;
  std::string json;
  std::vector<std::string> mentions;  // substrings of the message
};

Fields matmul() {
  Fields f;  // Ex 4 shape: T0 x T1 -> T2
  f.inputs = "[[0, 1]]";
  f.outputs = "[[2]]";
  f.base_costs = "[1500]";
  f.op_types = "[\"MatMul\"]";
  return f;
}

// Malformed JSON, missing keys, lists of the wrong shape, tensor indices out of range.
void addBadShapes(std::vector<BadProblem>& v) {
  auto add = [&](const std::string& name, const std::string& json, std::vector<std::string> m) {
    v.push_back({name, json, std::move(m)});
  };
  add("NotJson", "{\"widths\": [128, 128,\n  oops", {"not valid JSON at line 2"});
  add("EmptyFile", "", {"not valid JSON at line 1"});
  add("TopLevelArray", "[1, 2, 3]", {"top level must be a JSON object"});
  for (const char* key : {"widths", "heights", "inputs", "outputs", "base_costs", "op_types", "fast_memory_capacity",
                          "slow_memory_bandwidth", "native_granularity"})
    add(std::string("Missing_") + key, Fields{}.json(key), {std::string("missing key \"") + key + "\""});
  {
    Fields f;
    f.heights = "[128, 128]";
    add("HeightsShorter", f.json(), {"\"widths\" has 3 entries but \"heights\" has 2"});
  }
  {
    Fields f;
    f.base_costs = "[1000]";
    add("BaseCostsShorter", f.json(), {"\"base_costs\" has 1 entries but \"op_types\" has 2"});
  }
  {
    Fields f;
    f.inputs = "[[0], [1], [2]]";
    add("InputsLonger", f.json(), {"\"inputs\" has 3 entries but \"op_types\" has 2"});
  }
  {
    Fields f;
    f.widths = "[128, 128.5, 128]";
    add("NonIntegerWidth", f.json(), {"widths[1]: must be an integer, got 128.5"});
  }
  {
    Fields f;
    f.heights = "[128, 128, \"128\"]";
    add("StringHeight", f.json(), {"heights[2]: must be an integer"});
  }
  {
    Fields f;
    f.widths = "[128, 128, 0]";
    add("ZeroWidth", f.json(), {"widths[2]: 0 is out of range [1,"});
  }
  {
    Fields f;
    f.heights = "[-128, 128, 128]";
    add("NegativeHeight", f.json(), {"heights[0]: -128 is out of range"});
  }
  {
    Fields f;
    f.capacity = "0";
    add("ZeroCapacity", f.json(), {"fast_memory_capacity: 0 is out of range"});
  }
  {
    Fields f;
    f.bandwidth = "10.5";
    add("NonIntegerBandwidth", f.json(), {"slow_memory_bandwidth: must be an integer, got 10.5"});
  }
  {
    Fields f;
    f.base_costs = "[1000, -1]";
    add("NegativeBaseCost", f.json(), {"base_costs[1]: -1 is out of range"});
  }
  {
    Fields f;
    f.native = "[128, 64]";
    add("UnequalNative", f.json(), {"native_granularity [128,64] must have equal entries"});
  }
  {
    // Four ops; op 3's second input is tensor 9 of 5.
    Fields f;
    f.widths = f.heights = "[128, 128, 128, 128, 128]";
    f.inputs = "[[0], [1], [2], [3, 9]]";
    f.outputs = "[[1], [2], [3], [4]]";
    f.base_costs = "[1, 1, 1, 1]";
    f.op_types = "[\"Pointwise\", \"Pointwise\", \"Pointwise\", \"Pointwise\"]";
    add("InputIndexOutOfRange", f.json(), {"inputs[3][1]: tensor index 9 is out of range [0, 4]"});
  }
}

// The rest: indices, op types and values that no schedule can meet.
void addBadValues(std::vector<BadProblem>& v) {
  auto add = [&](const std::string& name, const std::string& json, std::vector<std::string> m) {
    v.push_back({name, json, std::move(m)});
  };
  {
    Fields f;
    f.outputs = "[[1], [-1]]";
    add("OutputIndexNegative", f.json(), {"outputs[1][0]: tensor index -1 is out of range [0, 2]"});
  }
  {
    Fields f;
    f.op_types = "[\"Pointwise\", \"Conv\"]";
    add("UnknownOpType", f.json(), {"op_types[1]: unknown op type \"Conv\""});
  }
  {
    Fields f;
    f.op_types = "[\"Pointwise\", 1]";
    add("OpTypeNotString", f.json(), {"op_types[1]: must be a string"});
  }
  {
    Fields f = matmul();
    f.widths = f.heights = "[128, 128, 128, 128]";
    f.inputs = "[[0, 1, 3]]";
    add("MatMulThreeInputs", f.json(), {"inputs[0]: MatMul needs exactly 2 inputs, got 3"});
  }
  {
    Fields f = matmul();
    f.inputs = "[[0]]";
    add("MatMulOneInput", f.json(), {"inputs[0]: MatMul needs exactly 2 inputs, got 1"});
  }
  {
    Fields f = matmul();
    f.heights = "[128, 64, 128]";  // RHS is 64 x 128 but LHS is 128 wide
    add("MatMulInnerMismatch", f.json(),
        {"op 0 (MatMul): shape mismatch: LHS tensor 0 width 128 != RHS tensor 1 height 64"});
  }
  {
    Fields f = matmul();
    f.widths = "[128, 128, 256]";
    add("MatMulOutputMismatch", f.json(),
        {"op 0 (MatMul): shape mismatch: output tensor 2 width 256 != RHS tensor 1 width 128"});
  }
  {
    Fields f;
    f.heights = "[128, 128, 64]";
    add("PointwiseMismatch", f.json(),
        {"op 1 (Pointwise): shape mismatch", "tensor 1 is 128x128 (HxW) but output tensor 2 is 64x128"});
  }
  {
    Fields f;
    f.outputs = "[[1], [1]]";
    f.inputs = "[[0], [2]]";
    add("TensorProducedTwice", f.json(), {"outputs[1]: tensor 1 is already produced by op 0"});
  }
  {
    Fields f;  // op 0: (T0, T2) -> T1, op 1: T1 -> T2
    f.inputs = "[[0, 2], [1]]";
    add("Cycle", f.json(), {"the graph has a cycle", "op 0"});
  }
  {
    Fields f;
    f.inputs = "[[0], [2]]";
    add("SelfLoop", f.json(), {"inputs[1]: tensor 2 is both an input and an output of the op (a cycle)"});
  }
  {
    Fields f;
    f.inputs = "[[0, 0], [1]]";
    add("SameTensorTwice", f.json(), {"inputs[0]: tensor 0 is listed twice"});
  }
  {
    Fields f = matmul();
    f.capacity = "2";
    add("CannotFit", f.json(),
        {"op 0 cannot fit in fast memory at any granularity", "3 elements", "fast_memory_capacity is 2"});
  }
  {
    Fields f;
    f.inputs = "[[0], []]";
    add("NoInputs", f.json(), {"inputs[1]: an op needs at least one input"});
  }
}

std::vector<BadProblem> badProblems() {
  std::vector<BadProblem> v;
  addBadShapes(v);
  addBadValues(v);
  return v;
}

void PrintTo(const BadProblem& b, std::ostream* os) { *os << b.name; }

void expectMentions(const std::string& text, const std::vector<std::string>& m) {
  for (const auto& s : m) EXPECT_NE(text.find(s), std::string::npos) << "expected \"" << s << "\" in: " << text;
}

std::string ex(const std::string& f) { return test::instancePath("examples/" + f); }

class BadProblemTest : public ::testing::TestWithParam<BadProblem> {};

TEST_P(BadProblemTest, LibraryThrowsInputError) {
  const BadProblem& b = GetParam();
  try {
    parseProblemText(b.json, "bad");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("bad: ", 0), 0u) << msg;  // the context names the input
    expectMentions(msg, b.mentions);
  }
}

TEST_P(BadProblemTest, EveryCommandExitsOne) {
  const BadProblem& b = GetParam();
  std::string path = test::tempPath("bad_" + b.name + ".json");
  test::writeText(path, b.json);
  std::string out = test::tempPath("bad_" + b.name + ".out.json");
  std::vector<std::vector<std::string>> cmds = {
      {"evaluate", path, ex("ex1a.schedule.json")},
      {"bound", path},
      {"solve", path, out, "--seconds", "1", "--threads", "1"},
      {path, out},  // contest form
  };
  for (const auto& c : cmds) {
    test::RunResult r = test::runMlsys(c);
    EXPECT_EQ(r.exit_code, 1) << c[0] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("mlsys: error: problem '" + path + "': ", 0), 0u) << c[0] << ": " << r.err;
    expectMentions(r.err, b.mentions);
  }
  EXPECT_FALSE(std::filesystem::exists(out)) << "solve wrote output for a bad problem";
}

INSTANTIATE_TEST_SUITE_P(Problems, BadProblemTest, ::testing::ValuesIn(badProblems()),
                         [](const ::testing::TestParamInfo<BadProblem>& i) { return i.param.name; });

TEST(MalformedProblem, UnreadableFile) {
  std::string missing = test::tempPath("does_not_exist.json");
  for (const std::vector<std::string>& c : {std::vector<std::string>{"evaluate", missing, ex("ex1a.schedule.json")},
                                            {"bound", missing},
                                            {"solve", missing, test::tempPath("never.json"), "--seconds", "1"}}) {
    test::RunResult r = test::runMlsys(c);
    EXPECT_EQ(r.exit_code, 1) << c[0];
    EXPECT_NE(r.err.find("problem: cannot open '" + missing + "': No such file or directory"), std::string::npos)
        << r.err;
  }
  std::string dir = test::tempPath("a_directory");
  std::filesystem::create_directories(dir);
  test::RunResult r = test::runMlsys({"bound", dir});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot open '" + dir + "': it is a directory"), std::string::npos) << r.err;
  EXPECT_THROW(parseProblemFile(missing), InputError);
}

TEST(MalformedProblem, ValidControlIsAccepted) {
  // The base of every case above is a valid problem: the failures come from the one change.
  EXPECT_NO_THROW(parseProblemText(Fields{}.json(), "ok"));
  EXPECT_NO_THROW(parseProblemText(matmul().json(), "ok"));
  test::RunResult r = test::runMlsys({"bound", ex("ex1.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // A bare output index (not a list) is accepted leniently (F4 says lists).
  Fields f;
  f.outputs = "[1, 2]";
  EXPECT_NO_THROW(parseProblemText(f.json(), "ok"));
}

// ---- malformed schedules ----------------------------------------------------------------------

struct BadSchedule {
  std::string name, json;
  std::vector<std::string> mentions;
};
void PrintTo(const BadSchedule& b, std::ostream* os) { *os << b.name; }

std::vector<BadSchedule> badSchedules() {
  return {
      {"NotJson", "{\"subgraphs\": [[0]", {"not valid JSON at line 1"}},
      {"TopLevelArray", "[]", {"rule V1: top level must be a JSON object"}},
      {"MissingSubgraphs",
       R"({"granularities": [[128,128,1]], "tensors_to_retain": [[]], "subgraph_latencies": [0]})",
       {"rule V1: missing key \"subgraphs\""}},
      {"MissingLatencies",
       R"({"subgraphs": [[0,1]], "granularities": [[128,128,1]], "tensors_to_retain": [[]]})",
       {"rule V1: missing key \"subgraph_latencies\""}},
      // Found by fuzz_schedule: this literal reads as infinity and was re-emitted as "inf".
      {"InfiniteLatency",
       R"({"subgraphs": [[0,1]], "granularities": [[128,128,1]], "tensors_to_retain": [[]], "subgraph_latencies": [5922337203685471e300]})",
       {"subgraph_latencies[0] is out of the range of a double"}},
      {"SubgraphsNotArray",
       R"({"subgraphs": 3, "granularities": [[128,128,1]], "tensors_to_retain": [[]], "subgraph_latencies": [0]})",
       {"rule V1: \"subgraphs\" must be an array"}},
      {"LengthMismatch",
       R"({"subgraphs": [[0],[1]], "granularities": [[128,128,1]], "tensors_to_retain": [[],[]], "subgraph_latencies": [0,0]})",
       {"\"granularities\" has 1 entries but \"subgraphs\" has 2"}},
      {"FloatGranularity",
       R"({"subgraphs": [[0,1]], "granularities": [[128,128.0,1]], "tensors_to_retain": [[]], "subgraph_latencies": [0]})",
       {"granularities[0][1] (h): must be an integer"}},
      {"OpIndexOutOfRange",
       R"({"subgraphs": [[0],[1,5]], "granularities": [[128,128,1],[128,128,1]], "tensors_to_retain": [[],[]], "subgraph_latencies": [0,0]})",
       {"subgraphs[1][1] (op index): 5 is out of range [0, 1]"}},
      {"TensorIndexOutOfRange",
       R"({"subgraphs": [[0],[1]], "granularities": [[128,128,1],[128,128,1]], "tensors_to_retain": [[3],[]], "subgraph_latencies": [0,0]})",
       {"tensors_to_retain[0][0] (tensor index): 3 is out of range [0, 2]"}},
      {"TraversalNotList",
       R"({"subgraphs": [[0,1]], "granularities": [[128,128,1]], "tensors_to_retain": [[]], "traversal_orders": ["raster"], "subgraph_latencies": [0]})",
       {"traversal_orders[0] must be null or an array"}},
  };
}

class BadScheduleTest : public ::testing::TestWithParam<BadSchedule> {};

TEST_P(BadScheduleTest, LibraryAndCli) {
  const BadSchedule& b = GetParam();
  Problem p = parseProblemFile(ex("ex1.json"));
  try {
    parseScheduleText(b.json, p, "sched");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    expectMentions(e.what(), b.mentions);
  }
  std::string path = test::tempPath("badsched_" + b.name + ".json");
  test::writeText(path, b.json);
  test::RunResult r = test::runMlsys({"evaluate", ex("ex1.json"), path});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("mlsys: error: schedule '" + path + "': ", 0), 0u) << r.err;
  expectMentions(r.err, b.mentions);
}

INSTANTIATE_TEST_SUITE_P(Schedules, BadScheduleTest, ::testing::ValuesIn(badSchedules()),
                         [](const ::testing::TestParamInfo<BadSchedule>& i) { return i.param.name; });

TEST(MalformedSchedule, UnreadableFile) {
  std::string missing = test::tempPath("no_such_schedule.json");
  test::RunResult r = test::runMlsys({"evaluate", ex("ex1.json"), missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("schedule: cannot open '" + missing + "': No such file or directory"), std::string::npos)
      << r.err;
}

TEST(MalformedSchedule, InvalidScheduleExitsOneWithRule) {
  // Well-formed but invalid (V2): exit 1 and the rule on stderr, not a parse error.
  std::string path = test::tempPath("v2.json");
  test::writeText(
      path,
      R"({"subgraphs": [[0]], "granularities": [[128,128,1]], "tensors_to_retain": [[]], "subgraph_latencies": [0]})");
  test::RunResult r = test::runMlsys({"evaluate", ex("ex1.json"), path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("mlsys: invalid schedule (rule V2): op 1 appears in no subgraph"), std::string::npos) << r.err;
}

// ---- usage ------------------------------------------------------------------------------------

TEST(Usage, ErrorsExitTwo) {
  struct U {
    std::vector<std::string> args;
    std::string mention;
  };
  std::vector<U> cases = {
      {{}, "Usage:"},
      {{"solve", "onlyone.json"}, "expected 2 file arguments"},
      {{"onlyone.json"}, "expected 2 file arguments"},
      {{"evaluate", ex("ex1.json")}, "expected 2 file arguments"},
      {{"evaluate", ex("ex1.json"), ex("ex1a.schedule.json"), "extra.json"}, "expected 2 file arguments"},
      {{"bound"}, "expected 1 file arguments"},
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"evaluate", "--bogus", ex("ex1.json"), ex("ex1a.schedule.json")}, "bogus"},
      {{"solve", ex("ex1.json"), test::tempPath("u.json"), "--seconds=-1"}, "--seconds must be positive"},
      {{"solve", ex("ex1.json"), test::tempPath("u.json"), "--seconds", "abc"}, "abc"},
      {{"solve", ex("ex1.json"), test::tempPath("u.json"), "--threads=-2"}, "--threads must be >= 0"},
  };
  for (const auto& c : cases) {
    test::RunResult r = test::runMlsys(c.args);
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    EXPECT_EQ(r.exit_code, 2) << shown << "\n" << r.err;
    EXPECT_NE(r.err.find(c.mention), std::string::npos) << shown << "\n" << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(test::tempPath("u.json")));
}

TEST(Usage, BadModelOptionIsRejected) {
  test::RunResult r =
      test::runMlsys({"evaluate", ex("ex1.json"), ex("ex1a.schedule.json"), "--model", "matmul_compute=bogus"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("matmul_compute: unknown value \"bogus\""), std::string::npos) << r.err;
  r = test::runMlsys({"bound", ex("ex1.json"), "--model", "nosuch=1"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("unknown model option \"nosuch\""), std::string::npos) << r.err;
  r = test::runMlsys({"bound", ex("ex1.json"), "--model", "novalue"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("expected KEY=VALUE"), std::string::npos) << r.err;
}

TEST(Usage, HelpAndVersionExitZero) {
  test::RunResult r = test::runMlsys({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mlsys evaluate PROBLEM.json SOLUTION.json"), std::string::npos) << r.out;
  r = test::runMlsys({"-h"});
  EXPECT_EQ(r.exit_code, 0);
  r = test::runMlsys({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("mlsys " MLSYS_VERSION " (git ", 0), 0u) << r.out;
  for (const char* cmd : {"evaluate", "solve", "bound"}) {
    r = test::runMlsys({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("--model"), std::string::npos) << cmd << ": " << r.out;
  }
}

}  // namespace
