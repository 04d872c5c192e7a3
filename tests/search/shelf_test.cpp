// The shelf of real models (instances/models/, imported from ONNX by bench/models/make_models.py):
// each problem parses with its node names (one per op), and a short solve writes a schedule the
// full evaluator finds valid. No torch or onnx is needed: the imported problems are committed.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cost/pricing/evaluator.h"
#include "engine/search/solve.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

TEST(Shelf, EveryModelParsesWithNamesAndSolvesValid) {
  const std::filesystem::path dir = std::filesystem::path(test::sourceDir()) / "instances" / "models";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    ++n;
    const Problem p = parseProblemFile(e.path().string());
    ASSERT_EQ(p.op_names.size(), static_cast<size_t>(p.numOps())) << p.name;
    SolveOptions o;
    o.seconds = 20;
    o.threads = 1;
    o.max_evals = 300;
    o.quiet = true;
    const SolveOutcome r = solve(p, o);
    ASSERT_GT(r.best, 0) << p.name;
    const Evaluation ev = evaluateSchedule(p, r.schedule, {});
    EXPECT_TRUE(ev.valid) << p.name << ": " << ev.reason;
    EXPECT_NEAR(ev.total, r.best, 1e-9 * r.best) << p.name;
  }
  EXPECT_GE(n, 8) << "instances/models/ holds the 8 shelf models";
}

}  // namespace
}  // namespace mlsys
