// The A-1 / A-2 model option (spec sections 6 L5 and 8): MatMul compute per k-step is
// base_cost*|k_j|/K by default (matmul_compute=reduction_depth) and base_cost*|k_j|/N under
// matmul_compute=native_depth. Only K != N tells them apart, so every problem here has K = 256.
// Bandwidth is huge so that every step is compute-bound and the latency is pure compute.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "cost/bound/bound.h"
#include "tests/test_util.h"

// Readable parameter names in test output (found by argument-dependent lookup).
namespace mlsys {
[[maybe_unused]] static void PrintTo(CostMethod m, std::ostream* os) {
  *os << (m == CostMethod::Auto ? "Auto" : m == CostMethod::Walk ? "Walk" : "Fast");
}
}  // namespace mlsys

using namespace mlsys;

namespace {

// One MatMul: T0 (128x256, HxW) x T1 (256x128) -> T2 (128x128); K = 256, base cost 8000.
const char* kSingle = R"({"widths": [256, 128, 128], "heights": [128, 256, 128],
  "inputs": [[0, 1]], "outputs": [[2]], "base_costs": [8000], "op_types": ["MatMul"],
  "fast_memory_capacity": 100000, "slow_memory_bandwidth": 1000000, "native_granularity": [128, 128]})";

// A chain (A-2): op 0 upstream T0 (128x128) x T1 (128x256) -> T2 (128x256, K_q = 128);
// op 1 accumulating T2 x T3 (256x128) -> T4 (128x128, K_acc = 256). 4000 each.
const char* kChain = R"({"widths": [128, 256, 256, 128, 128], "heights": [128, 128, 128, 256, 128],
  "inputs": [[0, 1], [2, 3]], "outputs": [[2], [4]], "base_costs": [4000, 4000], "op_types": ["MatMul", "MatMul"],
  "fast_memory_capacity": 100000, "slow_memory_bandwidth": 1000000, "native_granularity": [128, 128]})";

ModelOptions native() {
  ModelOptions m;
  m.matmul_compute = ModelOptions::MatmulCompute::NativeDepth;
  return m;
}

std::string schedAt(int k, const char* ops = "[[0]]") {
  return std::string(R"({"subgraphs": )") + ops + R"(, "granularities": [[128, 128, )" + std::to_string(k) +
         R"(]], "tensors_to_retain": [[]], "traversal_orders": [null], "subgraph_latencies": [0]})";
}

Evaluation evalWith(const char* problem, const std::string& schedule, const ModelOptions& m, CostMethod method) {
  Problem p = test::problemFromJson(problem);
  Schedule s = test::scheduleFromJson(schedule, p);
  return evaluateSchedule(p, s, m, method);
}

class ModelOption : public ::testing::TestWithParam<CostMethod> {};

TEST_P(ModelOption, SingleMatmulK256AtK64) {
  // 4 k-steps. Per step: 8000*64/256 = 2000 by default, 8000*64/128 = 4000 under native_depth.
  Evaluation d = evalWith(kSingle, schedAt(64), ModelOptions{}, GetParam());
  Evaluation n = evalWith(kSingle, schedAt(64), native(), GetParam());
  ASSERT_TRUE(d.valid) << d.reason;
  ASSERT_TRUE(n.valid) << n.reason;
  for (const Evaluation* ev : {&d, &n}) {
    EXPECT_EQ(ev->subgraphs[0].nk, 4);
    EXPECT_EQ(ev->subgraphs[0].cost.steps, 4);
    EXPECT_EQ(ev->subgraphs[0].cost.compute_bound_steps, 4);
    // LHS 128x64 + RHS 64x128 + the 128x128 accumulator.
    EXPECT_EQ(ev->subgraphs[0].cost.peak_ws, 8192 + 8192 + 16384);
  }
  EXPECT_EQ(d.subgraphs[0].cost.latency, 4 * 2000.0);
  EXPECT_EQ(n.subgraphs[0].cost.latency, 4 * 4000.0);
  EXPECT_EQ(d.total, 8000);
  EXPECT_EQ(n.total, 16000);
  EXPECT_EQ(d.model.describe(), "matmul_compute=reduction_depth matmul_chains=literal k_limit=native");
  EXPECT_EQ(n.model.describe(), "matmul_compute=native_depth matmul_chains=literal k_limit=native");
}

TEST_P(ModelOption, TotalPerTileIsIndependentOfK) {
  // Default: an output tile costs base_cost whatever k is; native_depth: base_cost*K/N.
  for (int k : {32, 64, 128}) {
    EXPECT_EQ(evalWith(kSingle, schedAt(k), ModelOptions{}, GetParam()).total, 8000) << "k = " << k;
    EXPECT_EQ(evalWith(kSingle, schedAt(k), native(), GetParam()).total, 16000) << "k = " << k;
  }
}

TEST_P(ModelOption, ShorterLastStrip) {
  // L6 / A-5: k = 96 does not divide 256: strips 96, 96, 64.
  // Default 3000 + 3000 + 2000; native_depth 6000 + 6000 + 4000.
  Evaluation d = evalWith(kSingle, schedAt(96), ModelOptions{}, GetParam());
  Evaluation n = evalWith(kSingle, schedAt(96), native(), GetParam());
  ASSERT_TRUE(d.valid) << d.reason;
  EXPECT_EQ(d.subgraphs[0].nk, 3);
  EXPECT_EQ(d.total, 8000);
  EXPECT_EQ(n.total, 16000);
}

TEST_P(ModelOption, UpstreamMatmulInChain) {
  // A-2: the upstream MatMul is priced with the accumulating MatMul's denominator:
  // per step (4000 + 4000)*64/256 = 2000 by default, (4000 + 4000)*64/128 = 4000 under native_depth.
  Evaluation d = evalWith(kChain, schedAt(64, "[[0, 1]]"), ModelOptions{}, GetParam());
  Evaluation n = evalWith(kChain, schedAt(64, "[[0, 1]]"), native(), GetParam());
  ASSERT_TRUE(d.valid) << d.reason;
  ASSERT_TRUE(n.valid) << n.reason;
  EXPECT_EQ(d.subgraphs[0].nk, 4);
  EXPECT_EQ(d.subgraphs[0].cost.compute_bound_steps, 4);
  EXPECT_EQ(d.total, 8000);
  EXPECT_EQ(n.total, 16000);
  // T0 whole (h x K_q) + T1 strip 128x64 + T3 strip 64x128 + T4 accumulator.
  EXPECT_EQ(d.subgraphs[0].cost.peak_ws, 16384 + 8192 + 8192 + 16384);
}

TEST_P(ModelOption, KEqualsNativeGivesTheSameNumbers) {
  // Section 9: with K = N both readings coincide (Ex 5B).
  Problem p = parseProblemFile(test::instancePath("examples/ex5.json"));
  Schedule s = parseScheduleFile(test::instancePath("examples/ex5b.schedule.json"), p);
  EXPECT_EQ(evaluateSchedule(p, s, ModelOptions{}, GetParam()).total, 6915.2);
  EXPECT_EQ(evaluateSchedule(p, s, native(), GetParam()).total, 6915.2);
}

INSTANTIATE_TEST_SUITE_P(Methods, ModelOption, ::testing::Values(CostMethod::Auto, CostMethod::Walk, CostMethod::Fast),
                         [](const ::testing::TestParamInfo<CostMethod>& i) {
                           return i.param == CostMethod::Auto ? "Auto" : i.param == CostMethod::Walk ? "Walk" : "Fast";
                         });

TEST(ModelOptionPlan, Denominator) {
  Problem p = test::problemFromJson(kSingle);
  SubgraphPlan d = planSubgraph(p, ModelOptions{}, {0}, {128, 128, 64}, {}, {});
  SubgraphPlan n = planSubgraph(p, native(), {0}, {128, 128, 64}, {}, {});
  ASSERT_TRUE(d.valid && n.valid);
  EXPECT_EQ(d.Kacc, 256);
  EXPECT_EQ(d.D, 256);
  EXPECT_EQ(n.D, 128);
  EXPECT_EQ(d.mm_coef, 8000);
}

TEST(ModelOptionPlan, BoundFollowsTheModel) {
  Problem p = test::problemFromJson(kSingle);
  EXPECT_EQ(lowerBound(p, ModelOptions{}).compute, 8000);
  EXPECT_EQ(lowerBound(p, native()).compute, 16000);
}

TEST(ModelOptionParse, SetAndDescribe) {
  ModelOptions m;
  EXPECT_EQ(m.describe(), "matmul_compute=reduction_depth matmul_chains=literal k_limit=native");
  m.setAssignment("matmul_compute=native_depth");
  EXPECT_EQ(m, native());
  EXPECT_EQ(m.describe(), "matmul_compute=native_depth matmul_chains=literal k_limit=native");
  m.set("matmul_compute", "reduction_depth");
  EXPECT_EQ(m, ModelOptions{});
  EXPECT_THROW(m.set("matmul_compute", "nope"), InputError);
  EXPECT_THROW(m.setAssignment("matmul_compute"), InputError);
  EXPECT_THROW(m.setAssignment("=native_depth"), InputError);
  EXPECT_THROW(m.set("ephemeral_reuse", "cached"), InputError);
  EXPECT_EQ(m, ModelOptions{});  // failed assignments change nothing
}

// ---- through the CLI --------------------------------------------------------------------------

struct Files {
  std::string problem, schedule;
};

Files writeSingle() {
  Files f{test::tempPath("model_single.json"), test::tempPath("model_single.schedule.json")};
  test::writeText(f.problem, kSingle);
  test::writeText(f.schedule, schedAt(64));
  return f;
}

TEST(ModelOptionCli, EvaluatePrintsTheModel) {
  Files f = writeSingle();
  test::RunResult d = test::runMlsys({"evaluate", f.problem, f.schedule});
  EXPECT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.out.rfind("model: matmul_compute=reduction_depth matmul_chains=literal k_limit=native\n", 0), 0u)
      << d.out;
  EXPECT_NE(d.out.find("total latency: 8,000\n"), std::string::npos) << d.out;
  test::RunResult n = test::runMlsys({"evaluate", f.problem, f.schedule, "--model", "matmul_compute=native_depth"});
  EXPECT_EQ(n.exit_code, 0) << n.err;
  EXPECT_EQ(n.out.rfind("model: matmul_compute=native_depth matmul_chains=literal k_limit=native\n", 0), 0u) << n.out;
  EXPECT_NE(n.out.find("total latency: 16,000\n"), std::string::npos) << n.out;
  n = test::runMlsys({"evaluate", "--walk", "--model", "matmul_compute=native_depth", f.problem, f.schedule});
  EXPECT_NE(n.out.find("total latency: 16,000\n"), std::string::npos) << n.out;
  test::RunResult j =
      test::runMlsys({"evaluate", "--json", f.problem, f.schedule, "--model", "matmul_compute=native_depth"});
  EXPECT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("\"model\": \"matmul_compute=native_depth matmul_chains=literal k_limit=native\""),
            std::string::npos)
      << j.out;
  EXPECT_NE(j.out.find("\"total_latency\": 16000,"), std::string::npos) << j.out;
}

TEST(ModelOptionCli, BoundPrintsTheModel) {
  Files f = writeSingle();
  test::RunResult d = test::runMlsys({"bound", f.problem});
  EXPECT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find("model: matmul_compute=reduction_depth"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("compute: 8,000 "), std::string::npos) << d.out;
  test::RunResult n = test::runMlsys({"bound", f.problem, "--model", "matmul_compute=native_depth"});
  EXPECT_EQ(n.exit_code, 0) << n.err;
  EXPECT_NE(n.out.find("model: matmul_compute=native_depth"), std::string::npos) << n.out;
  EXPECT_NE(n.out.find("compute: 16,000 "), std::string::npos) << n.out;
}

// evaluate, bound and report take the model of a config (-c) and --set as solve does, with
// --model over --set over the file: a schedule solve wrote under a config is priced the same way.
TEST(ModelOptionCli, EvaluateBoundAndReportTakeTheModelOfAConfig) {
  Files f = writeSingle();
  const std::string cfg = test::tempPath("model_native.yaml");
  test::writeText(cfg, "model:\n  matmul_compute: native_depth\n");
  const std::string html = test::tempPath("model_native.html");
  const std::string native = "model: matmul_compute=native_depth matmul_chains=literal k_limit=native\n";
  for (const std::vector<std::string>& how : std::vector<std::vector<std::string>>{
           {"-c", cfg}, {"--config", cfg}, {"--set", "model.matmul_compute=native_depth"}}) {
    std::vector<std::string> ev = {"evaluate", f.problem, f.schedule};
    ev.insert(ev.end(), how.begin(), how.end());
    test::RunResult e = test::runMlsys(ev);
    EXPECT_EQ(e.exit_code, 0) << how[0] << ": " << e.err;
    EXPECT_EQ(e.out.rfind(native, 0), 0u) << how[0] << ": " << e.out;
    EXPECT_NE(e.out.find("total latency: 16,000\n"), std::string::npos) << how[0] << ": " << e.out;
    std::vector<std::string> bd = {"bound", f.problem};
    bd.insert(bd.end(), how.begin(), how.end());
    test::RunResult b = test::runMlsys(bd);
    EXPECT_EQ(b.exit_code, 0) << how[0] << ": " << b.err;
    EXPECT_NE(b.out.find("compute: 16,000 "), std::string::npos) << how[0] << ": " << b.out;
    std::vector<std::string> rp = {"report", f.problem, f.schedule, "-o", html};
    rp.insert(rp.end(), how.begin(), how.end());
    test::RunResult r = test::runMlsys(rp);
    EXPECT_EQ(r.exit_code, 0) << how[0] << ": " << r.err;
    EXPECT_NE(test::readText(html).find("matmul_compute=native_depth"), std::string::npos) << how[0];
  }
  // --model wins over the file and --set; --set over the file.
  test::RunResult e =
      test::runMlsys({"evaluate", f.problem, f.schedule, "-c", cfg, "--model", "matmul_compute=reduction_depth"});
  EXPECT_NE(e.out.find("total latency: 8,000\n"), std::string::npos) << e.out;
  e = test::runMlsys({"evaluate", f.problem, f.schedule, "-c", cfg, "--set", "model.matmul_compute=reduction_depth"});
  EXPECT_NE(e.out.find("total latency: 8,000\n"), std::string::npos) << e.out;
  // Errors as in solve: an unknown key names it (exit 1), a malformed --set is a usage error (2),
  // a missing file names it (1).
  e = test::runMlsys({"evaluate", f.problem, f.schedule, "--set", "model.nosuch=1"});
  EXPECT_EQ(e.exit_code, 1) << e.err;
  EXPECT_NE(e.err.find("nosuch"), std::string::npos) << e.err;
  e = test::runMlsys({"bound", f.problem, "--set", "novalue"});
  EXPECT_EQ(e.exit_code, 2) << e.err;
  e = test::runMlsys({"report", f.problem, f.schedule, "-o", html, "-c", test::tempPath("no_such_config.yaml")});
  EXPECT_EQ(e.exit_code, 1) << e.err;
  EXPECT_NE(e.err.find("no_such_config.yaml"), std::string::npos) << e.err;
}

TEST(ModelOptionCli, SolveUnderNativeDepthReportsThatModelsLatencies) {
  Files f = writeSingle();
  std::string out = test::tempPath("model_single.out.json");
  test::RunResult s = test::runMlsys(
      {"solve", f.problem, out, "--seconds", "1", "--threads", "1", "--model", "matmul_compute=native_depth"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.err.find("matmul_compute=native_depth matmul_chains=literal k_limit=native"), std::string::npos) << s.err;
  // Its subgraph_latencies are the native_depth figures: no mismatch under that model ...
  test::RunResult n = test::runMlsys({"evaluate", f.problem, out, "--model", "matmul_compute=native_depth"});
  EXPECT_EQ(n.exit_code, 0) << n.err;
  EXPECT_EQ(n.err.find("differs from the computed"), std::string::npos) << n.err;
  // ... and every schedule of this problem costs at least 16000 under it (8000 per tile x K/N).
  Problem p = parseProblemFile(f.problem);
  Schedule sch = parseScheduleFile(out, p);
  Evaluation ev = evaluateSchedule(p, sch, native());
  ASSERT_TRUE(ev.valid) << ev.reason;
  EXPECT_GE(ev.total, 16000);
  ASSERT_EQ(sch.reported.size(), ev.subgraphs.size());
  for (size_t i = 0; i < sch.reported.size(); ++i) EXPECT_EQ(sch.reported[i], ev.subgraphs[i].cost.latency) << i;
}

}  // namespace

// ---- decision 3: matmul_chains=literal|reject ---------------------------------------------------

// Three 128x128 MatMuls in a chain: T0 x T1 -> T4, T4 x T2 -> T5, T5 x T3 -> T6.
const char* kChain3 = R"({"widths": [128, 128, 128, 128, 128, 128, 128], "heights": [128, 128, 128, 128, 128, 128, 128],
  "inputs": [[0, 1], [4, 2], [5, 3]], "outputs": [[4], [5], [6]], "base_costs": [1000, 1000, 1000],
  "op_types": ["MatMul", "MatMul", "MatMul"],
  "fast_memory_capacity": 200000, "slow_memory_bandwidth": 10, "native_granularity": [128, 128]})";

ModelOptions rejectChains() {
  ModelOptions m;
  m.matmul_chains = ModelOptions::MatmulChains::Reject;
  return m;
}

TEST(ModelOptionChains, ThreeMatmulChainIsLiteralByDefaultAndRejectedOnRequest) {
  const std::string one = schedAt(128, "[[0, 1, 2]]");
  Evaluation lit = evalWith(kChain3, one, ModelOptions{}, CostMethod::Auto);
  ASSERT_TRUE(lit.valid) << lit.reason;
  ASSERT_EQ(lit.subgraphs.size(), 1u);
  EXPECT_FALSE(lit.subgraphs[0].warnings.empty());  // "priced literally ... likely optimistic"
  Evaluation rej = evalWith(kChain3, one, rejectChains(), CostMethod::Auto);
  EXPECT_FALSE(rej.valid);
  EXPECT_EQ(rej.rule, Rule::Chains) << rej.reason;
  // Two MatMuls in a subgraph are not a chain of three: valid under both.
  const std::string two = R"({"subgraphs": [[0, 1], [2]], "granularities": [[128, 128, 128], [128, 128, 128]],
    "tensors_to_retain": [[], []], "traversal_orders": [null, null], "subgraph_latencies": [0, 0]})";
  EXPECT_TRUE(evalWith(kChain3, two, rejectChains(), CostMethod::Auto).valid);
}

TEST(ModelOptionChains, ParseAndDescribe) {
  ModelOptions m;
  m.setAssignment("matmul_chains=reject");
  EXPECT_EQ(m, rejectChains());
  EXPECT_EQ(m.describe(), "matmul_compute=reduction_depth matmul_chains=reject k_limit=native");
  EXPECT_THROW(m.set("matmul_chains", "forbid"), InputError);
  EXPECT_EQ(m, rejectChains());
}

TEST(ModelOptionChains, SolveUnderRejectNeverUsesAThreeMatmulChain) {
  std::string prob = test::tempPath("model_chain3.json"), out = test::tempPath("model_chain3.out.json");
  test::writeText(prob, kChain3);
  Problem p = test::problemFromJson(kChain3);
  test::RunResult r = test::runMlsys(
      {"solve", prob, out, "--seconds", "1", "--threads", "1", "--quiet", "--model", "matmul_chains=reject"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Schedule sr = test::scheduleFromJson(test::readText(out), p);
  Evaluation ev = evaluateSchedule(p, sr, rejectChains());
  EXPECT_TRUE(ev.valid) << ev.reason;
  for (const auto& sg : sr.subgraphs) EXPECT_LT(sg.ops.size(), 3u);
}
