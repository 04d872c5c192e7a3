// Adversarial inputs for the parser, the evaluator and `mlsys solve`: ops that cannot fit, tensors
// of 1x1 and 16384x16384, deep chains, wide fan-out/fan-in, unconnected components, dead tensors,
// base costs at and beyond the limit, bandwidth 1, minimal capacity, values at the parser limits.
// Every accepted input must be solved within the budget (+1 s) into a schedule that
// `mlsys evaluate` accepts; every rejected one must exit 1 with a precise message and no output.
// Budget: about 2 s per solve, well under a minute in total.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>

#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"
#include "engine/base/deadline.h"
#include "engine/generate/generator.h"
#include "engine/search/solve.h"
#include "tests/child_process.h"
#include "tests/test_util.h"

using namespace mlsys;
namespace fs = std::filesystem;

namespace {

constexpr double kBudget = 2.0;

// Builds a Problem in code; tensors are (H, W).
struct PB {
  Problem p;
  explicit PB(i64 capacity, i64 bandwidth = 10, i64 native = 128) {
    p.capacity = capacity;
    p.bandwidth = bandwidth;
    p.native = native;
  }
  TensorId t(i64 H, i64 W) {
    p.heights.push_back(H);
    p.widths.push_back(W);
    return static_cast<TensorId>(p.widths.size() - 1);
  }
  TensorId op(OpType ty, std::vector<TensorId> in, i64 cost, i64 H, i64 W) {
    TensorId out = t(H, W);
    Op o;
    o.type = ty;
    o.inputs = std::move(in);
    o.outputs = {out};
    o.base_cost = cost;
    p.ops.push_back(std::move(o));
    return out;
  }
  TensorId mm(TensorId a, TensorId b, i64 cost = 1000) {
    return op(OpType::MatMul, {a, b}, cost, p.heights[a], p.widths[b]);
  }
  TensorId pw(std::vector<TensorId> in, i64 cost = 100) {
    TensorId a = in[0];
    return op(OpType::Pointwise, std::move(in), cost, p.heights[a], p.widths[a]);
  }
  std::string json() const { return problemToJson(p); }
};

bool leftoverTemp(const std::string& out) {
  const std::string stem = fs::path(out).filename().string() + ".tmp.";
  for (const auto& e : fs::directory_iterator(fs::path(out).parent_path()))
    if (e.path().filename().string().rfind(stem, 0) == 0) return true;
  return false;
}

// Runs the mlsys binary like test::runMlsys, but SIGKILLs it after `limit_s` seconds so that a
// hung solver fails this test quickly instead of stalling the whole suite (exit_code -9 then).
test::RunResult runWithKill(const std::vector<std::string>& args, double limit_s) {
  std::vector<std::string> argv{MLSYS_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  test::child::RunOpts o;
  o.limit_s = limit_s;
  test::child::Captured r = test::child::run(argv, o);
  if (r.timed_out) r.exit_code = -9;
  return r;
}

// The same solve in process, on a clock that moves 20 us at every reading: it must end inside its
// budget on its own clock. (The process's wall-clock time is not asserted: a loaded machine moves
// it; bench/signal_latency.sh and the harness measure it.)
void solveOnFakeClock(const std::string& json, const std::string& out, double budget) {
  const Problem p = test::problemFromJson(json);
  FakeClock clock(20e-6);
  StopSource stop;
  Deadline dl(&clock, &stop);
  SolveOptions opt;
  opt.out = out;
  opt.seconds = budget;
  opt.threads = 2;
  opt.quiet = true;
  const SolveOutcome r = solve(p, opt, dl, RunLog(dl, true));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_LE(dl.elapsed(), budget) << "solve overran its budget of " << budget << " s on its own clock";
  const Evaluation ev = evaluateSchedule(p, parseScheduleFile(out, p), {});
  EXPECT_TRUE(ev.valid) << ev.reason;
}

// Solves `json` with the default budget checks: exit 0, a schedule `evaluate` accepts, and (in
// process, on a fake clock) inside the budget.
void solveAndCheck(const std::string& name, const std::string& json, double budget = kBudget) {
  SCOPED_TRACE(name);
  const std::string P = test::tempPath(name + ".json"), OUT = test::tempPath(name + ".out.json");
  test::writeText(P, json);
  // The kill is a net for a hung solver (-9), far beyond any load's delay.
  auto r = runWithKill({"solve", P, OUT, "--seconds", std::to_string(budget), "--quiet"}, budget + 120);
  EXPECT_NE(r.exit_code, -9) << "solve hung: killed after " << budget + 120 << " s";
  EXPECT_EQ(r.exit_code, 0) << "stderr: " << r.err;
  solveOnFakeClock(json, test::tempPath(name + ".fake.json"), budget);
  ASSERT_TRUE(fs::exists(OUT)) << "no output written; stderr: " << r.err;
  auto e = runWithKill({"evaluate", P, OUT}, 30);
  EXPECT_EQ(e.exit_code, 0) << e.out << e.err;
  EXPECT_NE(e.out.find("valid: yes"), std::string::npos) << e.out;
}

// A rejected problem: the parser throws InputError containing every `parts`, and `mlsys solve`
// exits 1 with that message on stderr, writing nothing.
void expectRejected(const std::string& name, const std::string& json, const std::vector<std::string>& parts) {
  SCOPED_TRACE(name);
  try {
    parseProblemText(json, "adv");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    for (const auto& s : parts) EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
  }
  const std::string P = test::tempPath(name + ".json"), OUT = test::tempPath(name + ".out.json");
  test::writeText(P, json);
  auto r = runWithKill({"solve", P, OUT, "--seconds", "2", "--quiet"}, 10);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  for (const auto& s : parts) EXPECT_NE(r.err.find(s), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(OUT)) << "a rejected problem must not produce an output file";
  EXPECT_FALSE(leftoverTemp(OUT)) << "temporary output file left behind";
}

}  // namespace

TEST(Adversarial, OpThatCannotFitIsRejected) {
  {
    PB b(2);  // Pointwise with 2 inputs + 1 output needs 3 elements at [1,1,1]
    TensorId a = b.t(128, 128), c = b.t(128, 128);
    b.pw({a, c});
    expectRejected("nofit_pw", b.json(),
                   {"op 0 cannot fit in fast memory at any granularity",
                    "smallest working set is 3 elements at [1,1,1]", "fast_memory_capacity is 2"});
  }
  {
    PB b(2);  // a fitting Pointwise first, then a MatMul that needs 3
    TensorId a = b.t(1, 1), c = b.t(1, 1);
    TensorId x = b.pw({a});
    b.mm(x, c);
    expectRejected("nofit_mm", b.json(), {"op 1 cannot fit", "is 3 elements", "fast_memory_capacity is 2"});
  }
}

TEST(Adversarial, ValuesBeyondTheLimitsAreRejectedPrecisely) {
  auto base = [](i64 cost, i64 w, i64 bw, i64 cap) {
    PB b(cap, bw);
    TensorId a = b.t(128, w);
    b.pw({a}, cost);
    return b.json();
  };
  const std::string big = std::to_string(kMaxBaseCost + 1);
  expectRejected("cost_beyond", base(kMaxBaseCost + 1, 128, 10, 100000),
                 {"base_costs[0]: " + big + " is out of range [0, " + std::to_string(kMaxBaseCost) + "]"});
  // Parser-only checks (no process needed).
  auto rejects = [](const std::string& json, const std::string& part) {
    try {
      parseProblemText(json, "adv");
      ADD_FAILURE() << "accepted; expected: " << part;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  rejects(base(-1, 128, 10, 100000), "base_costs[0]: -1 is out of range");
  rejects(base(1, kMaxDim + 1, 10, 100000), "widths[0]: " + std::to_string(kMaxDim + 1) + " is out of range");
  rejects(base(1, 128, 0, 100000), "slow_memory_bandwidth: 0 is out of range");
  rejects(base(1, 128, kMaxBandwidth + 1, 100000), "slow_memory_bandwidth: " + std::to_string(kMaxBandwidth + 1));
  rejects(base(1, 128, 10, 0), "fast_memory_capacity: 0 is out of range");
  // At the limits: accepted.
  EXPECT_NO_THROW(parseProblemText(base(kMaxBaseCost, kMaxDim, kMaxBandwidth, kMaxCapacity), "adv"));
}

TEST(Adversarial, TinyTensors1x1) {
  PB b(3, 1, 128);  // capacity 3: exactly one MatMul at [1,1,1]
  TensorId a = b.t(1, 1), c = b.t(1, 1);
  TensorId x = b.mm(a, c, 7);
  TensorId y = b.pw({x}, 1);
  b.mm(y, b.t(1, 1), 0);
  solveAndCheck("tiny", b.json());
}

TEST(Adversarial, HugeTensors16384) {
  PB b(60000, 20);
  TensorId a = b.t(16384, 16384), w = b.t(16384, 16384);
  TensorId x = b.mm(a, w, 4000);
  TensorId y = b.pw({x}, 300);
  b.pw({y, a}, 200);
  solveAndCheck("huge", b.json());
}

TEST(Adversarial, DeepChain2000) {
  PB b(50000, 15);
  TensorId x = b.t(128, 256);
  for (int i = 0; i < 2000; ++i) {
    if (i % 4 == 3) x = b.mm(x, b.t(b.p.widths[x], i % 8 == 3 ? 128 : 256), 1500);
    else x = b.pw({x}, 100 + i % 7);
  }
  ASSERT_EQ(b.p.numOps(), 2000);
  solveAndCheck("deep", b.json());
}

TEST(Adversarial, WideFanOutAndFanIn) {
  PB b(1 << 20, 25);
  TensorId hub = b.t(256, 256);
  std::vector<TensorId> outs;
  for (int i = 0; i < 300; ++i) outs.push_back(b.pw({hub}, 50 + i % 13));
  b.pw(outs, 400);  // one Pointwise with 300 inputs
  TensorId w = b.t(256, 128);
  for (int i = 0; i < 50; ++i) b.mm(hub, w, 900);  // fan-out of the same two operands
  solveAndCheck("fan", b.json());
}

TEST(Adversarial, UnconnectedComponents) {
  PB b(200000, 30);
  const i64 dims[] = {96, 128, 200, 1000, 37};
  for (int c = 0; c < 60; ++c) {
    i64 H = dims[c % 5], K = dims[(c + 1) % 5], W = dims[(c + 2) % 5];
    TensorId x = b.mm(b.t(H, K), b.t(K, W), 500 + c);
    b.pw({x}, 60);
  }
  solveAndCheck("components", b.json());
}

TEST(Adversarial, DeadTensors) {
  PB b(100000, 10);
  for (int i = 0; i < 500; ++i) b.t(i % 2 ? 16384 : 1, i % 3 ? 16384 : 7);  // never used
  TensorId a = b.t(128, 128);
  b.pw({b.pw({a})});
  for (int i = 0; i < 500; ++i) b.t(300, 300);
  solveAndCheck("dead", b.json());
}

TEST(Adversarial, BaseCostsAtTheLimit) {
  PB b(100000, 1);
  TensorId x = b.t(4096, 4096);
  for (int i = 0; i < 6; ++i) x = (i % 2) ? b.pw({x}, kMaxBaseCost) : b.mm(x, b.t(4096, 4096), kMaxBaseCost);
  solveAndCheck("maxcost", b.json());
}

TEST(Adversarial, Bandwidth1) {
  solveAndCheck("bw1", [] {
    Problem p = generateProblem("transformer", 30, 7);
    p.bandwidth = 1;
    return problemToJson(p);
  }());
}

TEST(Adversarial, MinimalCapacityForcesTinyGranules) {
  // Capacity 3: every op runs at [1,1,1]; ~10^9 steps per MatMul subgraph.
  PB b(3, 10);
  TensorId x = b.t(1000, 1000);
  for (int i = 0; i < 4; ++i) x = b.mm(x, b.t(1000, 1000), 2000);
  solveAndCheck("mincap", b.json());
}

// Values at the parser limits must not overflow the exact arithmetic: the evaluator must give a
// verdict (exit 0 or 1 with a message, never a signal) and a valid schedule a positive latency.
TEST(Adversarial, LimitValuesDoNotOverflowTheEvaluator) {
  const i64 K = kMaxDim;
  struct Case {
    std::string name;
    std::function<Problem()> make;
    std::string schedule;
    int exit_code;  // the verdict: 0 (priced) or 1 (refused with rule `range`)
  };
  std::vector<Case> cases;
  // D * bandwidth = 2^24 * 2^40 does not fit 64 bits.
  cases.push_back(
      {"den",
       [&] {
         PB b(1000, kMaxBandwidth);
         b.mm(b.t(1, K), b.t(K, 1));
         return b.p;
       },
       R"({"subgraphs":[[0]],"granularities":[[1,1,128]],"tensors_to_retain":[[]],"subgraph_latencies":[0]})", 0});
  // 2^48 steps of compute 2^40 each with native size 1 (2^80 each over the denominator D * B = 2^40):
  // a numerator over D * B would need 128 bits; kept in lowest terms the sum is 2^88, exactly.
  cases.push_back({"num",
                   [&] {
                     PB b(kMaxCapacity, kMaxBandwidth, 1);
                     b.pw({b.t(K, K)}, kMaxBaseCost);
                     return b.p;
                   },
                   R"({"subgraphs":[[0]],"granularities":[[1,1,1]],"tensors_to_retain":[[]],"subgraph_latencies":[0]})",
                   0});
  // 2^72 steps: more than 64-bit step counts hold, refused (never a saturated count).
  cases.push_back({"steps",
                   [&] {
                     PB b(kMaxCapacity, 1);
                     b.mm(b.t(K, K), b.t(K, K), kMaxBaseCost);
                     return b.p;
                   },
                   R"({"subgraphs":[[0]],"granularities":[[1,1,1]],"tensors_to_retain":[[]],"subgraph_latencies":[0]})",
                   1});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string P = test::tempPath("limit_" + c.name + ".json"),
                      S = test::tempPath("limit_" + c.name + ".sched.json");
    test::writeText(P, problemToJson(c.make()));
    test::writeText(S, c.schedule);
    auto e = runWithKill({"evaluate", P, S}, 20);
    // Each case's verdict is known: priced exactly, or refused with rule `range` (never a signal,
    // never a wrapped sum).
    ASSERT_EQ(e.exit_code, c.exit_code) << e.out << e.err;
    if (c.exit_code == 0) {
      EXPECT_EQ(e.out.find("total latency: 0\n"), std::string::npos) << e.out;
    }
    if (c.name == "num") {
      EXPECT_NE(e.out.find("total latency: 3.0948501e+26\n"), std::string::npos) << e.out;  // 2^88
    }
    if (c.exit_code == 1) {
      EXPECT_NE(e.err.find("range"), std::string::npos) << e.err;
    }
  }
}

// Number literals with hundreds of digits or a tiny exponent (run in a child process: a crash must not take the test
// binary down). Anything but a clean verdict (exit 0, or 1 with a message) is a bug.
TEST(Adversarial, LongNumberLiteralsDoNotCrashTheParsers) {
  const std::string longFrac = "0." + std::string(400, '0') + "1", longInt = std::string(400, '9'),
                    tinyExp = "0." + std::string(30, '0') + "12e-326";
  PB b(100000, 10);
  b.pw({b.t(128, 128)});
  const std::string good = b.json();
  // {name, problem text, the expected verdict: 0, or 1 with this text in the message}
  const std::vector<std::tuple<std::string, std::string, std::string>> probs{
      {"frac_unknown_key", "{\"note\": " + longFrac + ", " + good.substr(1), ""},
      {"frac_base_cost", std::string(good).replace(good.find("\"base_costs\": [") + 15, 3, longFrac),
       "must be an integer"},
      {"int_capacity", std::string(good).replace(good.find("100000"), 6, longInt), "Number too big"},
      {"tiny_exponent", "{\"note\": " + tinyExp + ", " + good.substr(1), ""},
      {"digits17_exponent", "{\"note\": 0.0000080721100500516772e-00000000328, " + good.substr(1), ""},
  };
  for (const auto& [name, json, why] : probs) {
    SCOPED_TRACE(name);
    const std::string P = test::tempPath("longnum_" + name + ".json"), OUT = test::tempPath("longnum_" + name + ".out");
    test::writeText(P, json);
    auto r = runWithKill({"solve", P, OUT, "--seconds", "1", "--quiet"}, 10);
    EXPECT_EQ(r.exit_code, why.empty() ? 0 : 1) << "solve (exit " << r.exit_code << "): " << r.err;
    if (!why.empty()) {
      EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    }
  }
  // A schedule with a long latency literal, against a valid problem.
  const std::string P = test::tempPath("longnum_ok.json"), S = test::tempPath("longnum_sched.json");
  test::writeText(P, good);
  test::writeText(
      S, R"({"subgraphs":[[0]],"granularities":[[128,128,1]],"tensors_to_retain":[[]],"subgraph_latencies":[)" +
             longFrac + "]}");
  auto e = runWithKill({"evaluate", P, S}, 10);
  EXPECT_EQ(e.exit_code, 0) << "evaluate (exit " << e.exit_code << "): " << e.err;
}

// ---------------------------------------------------------------------------------------------
// The generator itself (engine/generate/generator.h) and `mlsys generate`.

TEST(Generator, DeterministicValidAndVaried) {
  for (const auto& fam : generatorFamilies()) {
    SCOPED_TRACE(fam);
    bool tight = false, loose = false, odd = false, aligned = false;
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      Problem p = generateProblem(fam, 40, seed);
      EXPECT_EQ(problemToJson(p), problemToJson(generateProblem(fam, 40, seed)));
      EXPECT_GE(p.numOps(), 10);
      EXPECT_LE(p.numOps(), 80);
      // Round trip through the contest format.
      Problem q = parseProblemText(problemToJson(p), "gen");
      EXPECT_EQ(q.widths, p.widths);
      EXPECT_EQ(q.capacity, p.capacity);
      for (int t = 0; t < p.numTensors(); ++t) (p.widths[t] % 128 || p.heights[t] % 128 ? odd : aligned) = true;
      (p.capacity < 3 * p.native * p.native ? tight : loose) = true;
    }
    EXPECT_NE(problemToJson(generateProblem(fam, 40, 1)), problemToJson(generateProblem(fam, 40, 2)));
    EXPECT_TRUE(odd && aligned) << "dimensions should mix multiples of 128 and others";
    EXPECT_TRUE(tight && loose) << "capacity should vary from tight to loose";
  }
  for (int size : {1, 2, 1000}) EXPECT_NO_THROW(generateProblem("random", size, 3));
}

// shared-weight (mlsys-2026-13 in small): a weight larger than the fast memory is the RHS of
// MatMuls in several branches, while a branch's input fits.
TEST(Generator, SharedWeightsAreLargerThanTheMemoryAndBranchInputsFit) {
  for (int size = 3; size <= 14; ++size)
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      const std::string name = "shared-weight-" + std::to_string(size) + "-s" + std::to_string(seed);
      Problem p;
      ASSERT_NO_THROW(p = generateProblem("shared-weight", size, seed)) << name;
      EXPECT_LE(std::abs(p.numOps() - size), 2) << name;
      auto elems = [&](TensorId t) { return p.heights[t] * p.widths[t]; };
      std::map<TensorId, int> rhsReads;
      bool inputFits = false;
      for (const Op& op : p.ops) {
        if (op.type != OpType::MatMul) continue;
        if (p.is_graph_input[op.inputs[1]]) ++rhsReads[op.inputs[1]];
        if (p.is_graph_input[op.inputs[0]] && elems(op.inputs[0]) <= p.capacity) inputFits = true;
      }
      bool sharedTooLarge = false;
      for (auto [t, n] : rhsReads) sharedTooLarge |= n >= 2 && elems(t) > p.capacity;
      EXPECT_TRUE(sharedTooLarge) << name << ": no weight larger than the capacity is shared by two MatMuls";
      EXPECT_TRUE(inputFits) << name << ": no branch input fits in the capacity";
    }
}

TEST(Generator, UnknownFamilyListsTheKnownOnes) {
  try {
    generateProblem("resnet", 10, 1);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    std::string m = e.what();
    for (const auto& f : generatorFamilies()) EXPECT_NE(m.find(f), std::string::npos) << m;
  }
  EXPECT_THROW(generateProblem("random", 0, 1), InputError);
}

TEST(Generator, CommandLine) {
  const std::string OUT = test::tempPath("gen_cli.json");
  auto r = test::runMlsys({"generate", "--family", "cnn", "--size", "24", "--seed", "5", "-o", OUT});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::readText(OUT), problemToJson(generateProblem("cnn", 24, 5)));
  auto s = test::runMlsys({"generate", "--family", "cnn", "--size", "24", "--seed", "5"});
  EXPECT_EQ(s.exit_code, 0);
  EXPECT_EQ(s.out, test::readText(OUT));
  EXPECT_EQ(test::runMlsys({"generate", "--help"}).exit_code, 0);
  auto bad = test::runMlsys({"generate", "--family", "nope", "--size", "3"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("transformer"), std::string::npos) << bad.err;
  EXPECT_EQ(test::runMlsys({"generate", "--size", "3"}).exit_code, 2);
  EXPECT_EQ(test::runMlsys({"generate", "--family", "random"}).exit_code, 2);
  EXPECT_EQ(test::runMlsys({"generate", "--family", "random", "--size", "0"}).exit_code, 2);
  EXPECT_EQ(test::runMlsys({"generate", "--family", "random", "--size", "3", "stray"}).exit_code, 2);
}

TEST(Generator, CommittedInstancesAreCurrent) {
  // instances/generated/<family>-<size>.json were written by `mlsys generate --seed 1`.
  int n = 0;
  for (const auto& fam : generatorFamilies())
    for (int size : {8, 16, 20, 24, 30}) {
      std::string path = test::instancePath("generated/" + fam + "-" + std::to_string(size) + ".json");
      if (!fs::exists(path)) continue;
      ++n;
      EXPECT_EQ(test::readText(path), problemToJson(generateProblem(fam, size, 1)))
          << path << " is stale: regenerate with mlsys generate --family " << fam << " --size " << size
          << " --seed 1 -o " << path;
    }
  EXPECT_GE(n, 5);
}
