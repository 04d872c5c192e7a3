// The optional `op_names` key (Problem::op_names, written by `mlsys import`): kept when well
// formed, refused with the field and index when not, written back by problemToJson, and absent
// from problems that never had it (the contest format).
#include <gtest/gtest.h>

#include <string>

#include "cost/model/problem.h"

namespace mlsys {
namespace {

std::string problemWith(const std::string& names) {
  return R"({"widths":[128,128,128],"heights":[128,128,128],"inputs":[[0],[1]],"outputs":[[1],[2]],)"
         R"("base_costs":[10,10],"op_types":["Pointwise","Pointwise"],"fast_memory_capacity":50000,)"
         R"("slow_memory_bandwidth":10,"native_granularity":[128,128])" +
         (names.empty() ? std::string() : ",\"op_names\":" + names) + "}";
}

std::string errorOf(const std::string& text) {
  try {
    parseProblemText(text, "p");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(OpNames, KeptAndWrittenBack) {
  const Problem p = parseProblemText(problemWith(R"(["/layer1/relu", "a \"quoted\"\nname"])"));
  ASSERT_EQ(p.op_names.size(), 2u);
  EXPECT_EQ(p.op_names[0], "/layer1/relu");
  EXPECT_EQ(p.op_names[1], "a \"quoted\"\nname");
  const Problem q = parseProblemText(problemToJson(p));
  EXPECT_EQ(q.op_names, p.op_names);
}

TEST(OpNames, AbsentStaysAbsent) {
  const Problem p = parseProblemText(problemWith(""));
  EXPECT_TRUE(p.op_names.empty());
  EXPECT_EQ(problemToJson(p).find("op_names"), std::string::npos);
}

TEST(OpNames, BadOnesNameTheField) {
  EXPECT_NE(errorOf(problemWith(R"(["only one"])")).find("\"op_names\" has 1 entries but \"op_types\" has 2"),
            std::string::npos);
  EXPECT_NE(errorOf(problemWith(R"(["a", 3])")).find("op_names[1]: must be a string"), std::string::npos);
  EXPECT_NE(errorOf(problemWith(R"("ab")")).find("\"op_names\" must be an array"), std::string::npos);
  EXPECT_NE(
      errorOf(problemWith("[\"a\", \"" + std::string(kMaxOpNameBytes + 1, 'x') + "\"]")).find("op_names[1]: longer"),
      std::string::npos);
}

TEST(OpNames, FinalizeChecksTheCount) {
  Problem p = parseProblemText(problemWith(R"(["a", "b"])"));
  p.op_names.pop_back();
  EXPECT_THROW(finalizeProblem(p), InputError);
}

}  // namespace
}  // namespace mlsys
