// Properties of `mlsys solve` on generated graphs (every generator family, two sizes, two
// seeds): the schedule it writes is valid under the full evaluator, its reported latencies are
// the evaluator's, and the lower bound never exceeds its latency.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cost/bound/bound.h"
#include "engine/generate/generator.h"
#include "tests/test_util.h"

using namespace mlsys;

TEST(Property, SolveOnGeneratedGraphsIsValidAndAboveTheBound) {
  int solved = 0;
  for (const auto& fam : generatorFamilies())
    for (int size : {8, 40})
      for (uint64_t seed : {11u, 12u}) {
        const std::string name = fam + "-" + std::to_string(size) + "-s" + std::to_string(seed);
        Problem p = generateProblem(fam, size, seed);
        const std::string prob = test::tempPath("prop_" + name + ".json"),
                          out = test::tempPath("prop_" + name + ".out.json");
        test::writeText(prob, problemToJson(p));
        auto r = test::runMlsys(
            {"solve", prob, out, "--threads", "1", "--seed", "3", "--max-evals", "1500", "--seconds", "30", "-q"});
        ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
        Problem q = parseProblemFile(prob);
        Schedule s = parseScheduleFile(out, q);
        Evaluation ev = evaluateSchedule(q, s, ModelOptions{});
        ASSERT_TRUE(ev.valid) << name << ": " << ev.rule << ": " << ev.reason;
        ASSERT_EQ(s.reported.size(), ev.subgraphs.size()) << name;
        for (size_t i = 0; i < ev.subgraphs.size(); ++i)
          EXPECT_NEAR(s.reported[i], ev.subgraphs[i].cost.latency, 1e-9 * std::max(1.0, ev.subgraphs[i].cost.latency))
              << name << " subgraph " << i;
        double lb = lowerBound(q, ModelOptions{}).value();
        EXPECT_LE(lb, ev.total * (1 + 1e-12)) << name << ": lower bound above a valid schedule's latency";
        ++solved;
      }
  EXPECT_EQ(solved, static_cast<int>(generatorFamilies().size()) * 4);
}
