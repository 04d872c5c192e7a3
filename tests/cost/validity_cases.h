// The validity tests' shared helpers (validity_test.cpp: V1-V7; validity_grid_test.cpp: V8-V11,
// E2, A-6): problems and schedules written as JSON, evaluated by both pricing methods.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "cost/model/json_util.h"
#include "cost/pricing/evaluator.h"
#include "tests/test_util.h"

namespace mlsys::validity {

// ---- problems ---------------------------------------------------------------------------------

inline std::string example(const std::string& name) {
  return test::readText(test::instancePath("examples/" + name + ".json"));
}

inline std::string problemJson(const std::string& widths, const std::string& heights, const std::string& inputs,
                               const std::string& outputs, const std::string& costs, const std::string& types,
                               long capacity, long bandwidth = 10) {
  return "{\"widths\": " + widths + ", \"heights\": " + heights + ", \"inputs\": " + inputs +
         ", \"outputs\": " + outputs + ", \"base_costs\": " + costs + ", \"op_types\": " + types +
         ", \"fast_memory_capacity\": " + std::to_string(capacity) +
         ", \"slow_memory_bandwidth\": " + std::to_string(bandwidth) + ", \"native_granularity\": [128, 128]}";
}

// T0 -> T1 -> T2 -> T3, three Pointwise ops, all 128x128.
inline std::string chain3() {
  return problemJson("[128,128,128,128]", "[128,128,128,128]", "[[0],[1],[2]]", "[[1],[2],[3]]", "[100,100,100]",
                     "[\"Pointwise\",\"Pointwise\",\"Pointwise\"]", 50000);
}

// Ex 3 / Ex 4 with another capacity.
inline std::string withCapacity(const std::string& json, long from, long to) {
  std::string s = json;
  auto pos = s.find(std::to_string(from));
  EXPECT_NE(pos, std::string::npos);
  if (pos != std::string::npos) s.replace(pos, std::to_string(from).size(), std::to_string(to));
  return s;
}

// ---- schedules --------------------------------------------------------------------------------

// Number of top-level entries of a JSON list literal like "[[0],[1,2]]".
inline int topLevelCount(const std::string& list) {
  int depth = 0, n = 0;
  bool any = false;
  for (char c : list) {
    if (c == '[') {
      if (depth == 1) ++n;
      ++depth;
    } else if (c == ']') {
      --depth;
    } else if (depth == 1 && c != ' ' && c != ',') {
      any = true;
    }
  }
  return n ? n : (any ? 1 : 0);
}

inline std::string sched(const std::string& subgraphs, const std::string& grans, const std::string& retain,
                         const std::string& trav = "") {
  int n = topLevelCount(subgraphs);
  std::string lat = "[";
  for (int i = 0; i < n; ++i) lat += i ? ", 0" : "0";
  lat += "]";
  std::string s =
      "{\"subgraphs\": " + subgraphs + ", \"granularities\": " + grans + ", \"tensors_to_retain\": " + retain;
  if (!trav.empty()) s += ", \"traversal_orders\": " + trav;
  return s + ", \"subgraph_latencies\": " + lat + "}";
}

// ---- evaluation helpers -----------------------------------------------------------------------

inline Evaluation eval(const std::string& problem, const std::string& schedule) {
  Problem p = test::problemFromJson(problem);
  Schedule s = test::scheduleFromJson(schedule, p);
  Evaluation a = evaluateSchedule(p, s, ModelOptions{}, CostMethod::Auto);
  Evaluation w = evaluateSchedule(p, s, ModelOptions{}, CostMethod::Walk);
  // The walk (oracle) and the step-class pricing agree on the verdict and the number.
  EXPECT_EQ(a.valid, w.valid);
  EXPECT_EQ(a.rule, w.rule);
  EXPECT_EQ(a.reason, w.reason);
  if (a.valid) {
    EXPECT_EQ(a.total, w.total);
  }
  return a;
}

inline void expectInvalid(const Evaluation& ev, const std::string& rule, int subgraph,
                          std::initializer_list<const char*> mentions) {
  EXPECT_FALSE(ev.valid);
  EXPECT_EQ(ruleName(ev.rule), rule) << ev.reason;
  EXPECT_EQ(ev.bad_subgraph, subgraph) << ev.reason;
  if (subgraph >= 0) {
    EXPECT_EQ(ev.reason.rfind("subgraph " + std::to_string(subgraph) + ": ", 0), 0u) << ev.reason;
  }
  for (const char* m : mentions)
    EXPECT_NE(ev.reason.find(m), std::string::npos) << "expected \"" << m << "\" in: " << ev.reason;
}

inline void expectValid(const Evaluation& ev) { EXPECT_TRUE(ev.valid) << ev.rule << ": " << ev.reason; }

// Parse error (rule V1): returns the InputError message.
inline std::string v1Error(const std::string& problem, const std::string& schedule) {
  Problem p = test::problemFromJson(problem);
  try {
    test::scheduleFromJson(schedule, p);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "schedule was accepted: " << schedule;
  return "";
}

inline void expectV1(const std::string& msg, std::initializer_list<const char*> mentions) {
  EXPECT_NE(msg.find("rule V1"), std::string::npos) << msg;
  for (const char* m : mentions) EXPECT_NE(msg.find(m), std::string::npos) << "expected \"" << m << "\" in: " << msg;
}

inline const char* kG1 = "[[128,128,1]]";
inline const char* kG2 = "[[128,128,1],[128,128,1]]";
inline const char* kG3 = "[[128,128,1],[128,128,1],[128,128,1]]";

}  // namespace mlsys::validity
