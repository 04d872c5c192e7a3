// The JSON documents besides schedules (`solve --stats`, `evaluate --json`) are valid JSON for any
// instance name and any message: quotes, backslashes, control characters, invalid UTF-8.
#include <gtest/gtest.h>

#include <filesystem>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cost/model/json_util.h"
#include "engine/cli/json_out.h"
#include "tests/test_util.h"

using namespace mlsys;
namespace fs = std::filesystem;

namespace {

// Quotes, backslashes (also before a letter that would make an escape: \n, \t, \u), and control
// characters (written with \u00XX or a short escape).
const std::string kNasty = std::string("we\"ird\\name\\n\\u0041 \x01\x1f\t\n\r\b\f end");

rapidjson::Document parse(const std::string& text) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseValidateEncodingFlag>(text.c_str(), text.size());
  EXPECT_FALSE(d.HasParseError()) << "offset " << d.GetErrorOffset() << " in:\n" << text;
  return d;
}

std::string str(const rapidjson::Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

}  // namespace

TEST(JsonOutput, StatsEscapeTheInstanceName) {
  SolveStats s;
  s.instance = kNasty;
  s.best_latency = 6915.2;
  s.first_write_s = 0.001;
  s.best_found_s = 0.25;
  s.elapsed_s = 1.5;
  s.evaluations = 123456;
  s.evals_per_s = 82304;
  s.writes = 3;
  s.threads = 2;
  s.workers = {{WorkerKind::BeamThen, 100000}, {WorkerKind::Lns, 23456}};
  s.seed = 18446744073709551615ULL;
  s.config = kNasty;
  s.non_default = {{"sa.t0", "0.001"}, {"search.workers", "[sa, lns]"}};
  s.set = {"sa.t0=0.001"};
  const std::string text = statsJson(s);
  rapidjson::Document d = parse(text);
  ASSERT_TRUE(d.IsObject()) << text;
  EXPECT_EQ(str(d["instance"]), kNasty);
  EXPECT_EQ(d["best_latency"].GetDouble(), 6915.2);
  EXPECT_EQ(d["first_write_s"].GetDouble(), 0.001);
  EXPECT_EQ(d["best_found_s"].GetDouble(), 0.25);
  EXPECT_EQ(d["elapsed_s"].GetDouble(), 1.5);
  EXPECT_EQ(d["evaluations"].GetInt64(), 123456);
  EXPECT_EQ(d["evals_per_s"].GetDouble(), 82304);
  EXPECT_EQ(d["writes"].GetInt(), 3);
  EXPECT_EQ(d["threads"].GetInt(), 2);
  ASSERT_TRUE(d["workers"].IsArray());
  ASSERT_EQ(d["workers"].Size(), 2u);
  EXPECT_EQ(str(d["workers"][1]["kind"]), "lns");
  EXPECT_EQ(d["workers"][1]["evaluations"].GetInt64(), 23456);
  EXPECT_EQ(d["seed"].GetUint64(), 18446744073709551615ULL);
  // The keys in their documented order; numbers as the evaluator prints them.
  std::vector<std::string> keys;
  for (const auto& m : d.GetObject()) keys.push_back(str(m.name));
  EXPECT_EQ(keys,
            (std::vector<std::string>{"instance",        "best_latency", "on_disk",     "first_write_s", "best_found_s",
                                      "elapsed_s",       "evaluations",  "evals_per_s", "writes",        "threads",
                                      "workers",         "seed",         "lower_bound", "gap",           "optimal",
                                      "bound_violation", "stop_reason",  "model",       "version",       "config",
                                      "non_default",     "set"}));
  EXPECT_TRUE(d["bound_violation"].IsNull());
  // What a repeat of the run needs: the config file, the keys off their default, the --set arguments.
  EXPECT_EQ(str(d["config"]), kNasty);
  EXPECT_EQ(str(d["non_default"]["search.workers"]), "[sa, lns]");
  ASSERT_EQ(d["set"].Size(), 1u);
  EXPECT_EQ(str(d["set"][0]), "sa.t0=0.001");
  EXPECT_NE(text.find("\"best_latency\": 6915.2,\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\"evals_per_s\": 82304,\n"), std::string::npos) << text;
}

TEST(JsonOutput, InvalidUtf8InANameBecomesAReplacementCharacter) {
  SolveStats s;
  s.instance =
      "a\xff"
      "b\xc3(c\xe2\x82";  // a stray byte, a cut 2-byte and a cut 3-byte sequence
  rapidjson::Document d = parse(statsJson(s));
  EXPECT_EQ(str(d["instance"]),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD(c\xEF\xBF\xBD\xEF\xBF\xBD");
  s.instance = "caf\xc3\xa9 \xe2\x82\xac";  // valid UTF-8 passes unchanged
  EXPECT_EQ(str(parse(statsJson(s))["instance"]), s.instance);
}

TEST(JsonOutput, EvaluationEscapesRuleReasonAndWarnings) {
  Evaluation ev;
  ev.valid = false;
  ev.rule = Rule::A6;
  ev.reason = "subgraph 0: " + kNasty;
  ev.total = 3276.8;
  SubgraphReport rp;
  rp.cost.valid = false;
  rp.cost.latency = 3276.8;
  rp.cost.steps = 4;
  rp.ntw = 2;
  rp.nth = 3;
  rp.nk = 5;
  rp.cost.peak_ws = 65536;
  rp.cost.compute_bound_steps = 1;
  rp.cost.memory_bound_steps = 3;
  ev.subgraphs.push_back(rp);
  const std::vector<std::string> warnings = {kNasty, "plain", std::string("nul \0 inside", 12)};
  const std::string text = evaluationJson(ev, ModelOptions{}, warnings);
  rapidjson::Document d = parse(text);
  ASSERT_TRUE(d.IsObject()) << text;
  EXPECT_FALSE(d["valid"].GetBool());
  EXPECT_EQ(str(d["model"]), ModelOptions{}.describe());
  EXPECT_EQ(str(d["rule"]), "A-6");
  EXPECT_EQ(str(d["reason"]), ev.reason);
  EXPECT_EQ(d["total_latency"].GetDouble(), 3276.8);
  ASSERT_EQ(d["subgraphs"].Size(), 1u);
  const auto& sg = d["subgraphs"][0];
  EXPECT_EQ(sg["index"].GetInt(), 0);
  EXPECT_FALSE(sg["valid"].GetBool());
  EXPECT_EQ(sg["latency"].GetDouble(), 3276.8);
  EXPECT_EQ(sg["steps"].GetInt(), 4);
  ASSERT_EQ(sg["tiles"].Size(), 2u);
  EXPECT_EQ(sg["tiles"][0].GetInt(), 2);
  EXPECT_EQ(sg["tiles"][1].GetInt(), 3);
  EXPECT_EQ(sg["k_steps"].GetInt(), 5);
  EXPECT_EQ(sg["peak_working_set"].GetInt(), 65536);
  EXPECT_EQ(sg["compute_bound_steps"].GetInt(), 1);
  EXPECT_EQ(sg["memory_bound_steps"].GetInt(), 3);
  ASSERT_EQ(d["warnings"].Size(), warnings.size());
  for (size_t i = 0; i < warnings.size(); ++i) EXPECT_EQ(str(d["warnings"][static_cast<unsigned>(i)]), warnings[i]);
}

// A schedule of ex5 with three violations, each of another rule and place: subgraph 0 overflows
// the fast memory (V11), subgraph 1 has w = 200 > N (V8), and so the graph output T4 is never
// written (V7, the schedule as a whole). `evaluate` lists all three, in the text and in --json,
// each with its rule; the first is still `rule` / `reason`.
TEST(JsonOutput, EvaluateListsEveryViolationWithItsRule) {
  const std::string problem = test::instancePath("examples/ex5.json"), sched = test::tempPath("three_violations.json");
  test::writeText(sched, R"({"subgraphs":[[0],[1]],"granularities":[[128,128,128],[200,128,1]],
    "tensors_to_retain":[[],[]],"traversal_orders":[null,null],"subgraph_latencies":[0,0]})");
  test::RunResult t = test::runMlsys({"evaluate", problem, sched});
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.out.find("valid: no (3 violations)"), std::string::npos) << t.out;
  for (const char* line : {"invalid (rule V11): subgraph 0: working set", "invalid (rule V8): subgraph 1: w = 200",
                           "invalid (rule V7): graph output tensor 4"})
    EXPECT_NE(t.out.find(line), std::string::npos) << line << "\n" << t.out;
  EXPECT_NE(t.out.find("total latency: - (the schedule is invalid)\n"), std::string::npos) << t.out;
  // The problem file given as the schedule: a hint, not "missing key subgraphs".
  test::RunResult swapped = test::runMlsys({"evaluate", problem, problem});
  EXPECT_EQ(swapped.exit_code, 1);
  EXPECT_NE(swapped.err.find("looks like a problem file"), std::string::npos) << swapped.err;
  test::RunResult j = test::runMlsys({"evaluate", "--json", problem, sched});
  rapidjson::Document d = parse(j.out);
  ASSERT_TRUE(d.IsObject()) << j.out;
  EXPECT_EQ(str(d["rule"]), "V11");
  ASSERT_EQ(d["violations"].Size(), 3u) << j.out;
  const char* rules[] = {"V11", "V8", "V7"};
  const int places[] = {0, 1, -1};
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_EQ(str(d["violations"][i]["rule"]), rules[i]);
    EXPECT_EQ(d["violations"][i]["subgraph"].GetInt(), places[i]);
  }
}

// End to end, 2 threads: --stats lists each worker thread's kind and evaluations, and they add
// up to the run's evaluations (every worker counts through RunStats::countEvaluations).
TEST(JsonOutput, StatsCountEvaluationsPerWorker) {
  const std::string problem = test::instancePath("examples/ex5.json");
  const std::string out = test::tempPath("per_worker.json"), stats = test::tempPath("per_worker.stats.json");
  test::RunResult r =
      test::runMlsys({"solve", problem, out, "--threads", "2", "--max-evals", "3000", "--stats", stats, "--set",
                      "lns.whole_graph_ops=0"});  // no proof ends the run before both workers evaluate
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document s = parse(test::readText(stats));
  ASSERT_TRUE(s.IsObject());
  ASSERT_TRUE(s["workers"].IsArray());
  ASSERT_EQ(s["workers"].Size(), 2u);
  EXPECT_EQ(str(s["workers"][0]["kind"]), "beam");
  EXPECT_EQ(str(s["workers"][1]["kind"]), "lns");
  int64_t sum = 0;
  for (const auto& w : s["workers"].GetArray()) sum += w["evaluations"].GetInt64();
  EXPECT_EQ(sum, s["evaluations"].GetInt64());
  EXPECT_GT(s["workers"][0]["evaluations"].GetInt64(), 0);
  // stderr's closing table has a row per worker.
  EXPECT_NE(r.err.find("  worker  kind   evaluated\n  0       beam "), std::string::npos) << r.err;
}

// End to end: a problem file named `we"ird\name<TAB><0x01>.json`; --stats names it, and
// `evaluate --json` of a schedule whose reported latencies are off carries the warnings.
TEST(JsonOutput, CliOutputsParseForANastyFileName) {
  const std::string dir = test::tempPath("json_output_dir");
  fs::create_directories(dir);
  const std::string stem = "we\"ird\\name\t\x01";
  const std::string problem = dir + "/" + stem + ".json", out = dir + "/out.json", stats = dir + "/stats.json";
  fs::copy_file(test::instancePath("examples/ex5.json"), problem, fs::copy_options::overwrite_existing);
  test::RunResult r =
      test::runMlsys({"solve", problem, out, "--threads", "1", "--max-evals", "500", "--stats", stats, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document s = parse(test::readText(stats));
  ASSERT_TRUE(s.IsObject());
  EXPECT_EQ(str(s["instance"]), stem);
  EXPECT_EQ(s["threads"].GetInt(), 1);
  EXPECT_EQ(s["seed"].GetInt(), 1);
  EXPECT_GE(s["evaluations"].GetInt64(), 500);

  // The same schedule with every reported latency off by one: one warning per subgraph.
  rapidjson::Document sched = parse(test::readText(out));
  for (auto& l : sched["subgraph_latencies"].GetArray()) l.SetDouble(l.GetDouble() + 1);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  sched.Accept(w);
  const std::string off(buf.GetString(), buf.GetSize());
  Problem p = parseProblemFile(problem);
  Schedule sch = parseScheduleFile(out, p);
  const std::string offPath = dir + "/" + stem + ".off.json";
  test::writeText(offPath, off);
  test::RunResult e = test::runMlsys({"evaluate", "--json", problem, offPath});
  rapidjson::Document j = parse(e.out);
  ASSERT_TRUE(j.IsObject()) << e.out << e.err;
  Evaluation ev = evaluateSchedule(p, parseScheduleFile(offPath, p), ModelOptions{});
  EXPECT_EQ(e.exit_code, ev.valid ? 0 : 1) << e.err;
  EXPECT_EQ(j["valid"].GetBool(), ev.valid);
  EXPECT_EQ(j["total_latency"].GetDouble(), ev.total);
  ASSERT_EQ(j["subgraphs"].Size(), sch.subgraphs.size());
  ASSERT_EQ(j["warnings"].Size(), ev.warnings.size() + sch.subgraphs.size()) << e.out;
  const auto& last = j["warnings"][j["warnings"].Size() - 1];
  EXPECT_EQ(str(last), "subgraph " + std::to_string(sch.subgraphs.size() - 1) + ": reported latency " +
                           formatDouble(sch.reported.back() + 1) + " differs from the computed " +
                           formatDouble(ev.subgraphs.back().cost.latency));
}
