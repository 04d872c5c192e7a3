// `mlsys bound --without ARG` and `--json`'s attribution (issue 50, item 3): every argument can be
// switched off by name, each switch only ever lowers the bound, an unknown name is a usage error
// naming the arguments, and --json says which argument set each component and what each added.
#include <gtest/gtest.h>

#include <string>

#include "cost/bound/args.h"
#include "cost/model/json_util.h"
#include "tests/test_util.h"

namespace mlsys {
namespace {

double boundOf(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"bound", test::instancePath("generated/transformer-20.json"), "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = test::runMlsys(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return parseJsonText(r.out, "bound --json")["lower_bound"].GetDouble();
}

TEST(BoundArgsCli, EveryArgumentSwitchesOffAndOnlyLowersTheBound) {
  const double all = boundOf({});
  ASSERT_GT(all, 0);
  for (std::string_view name : kBoundArgNames) {
    const double without = boundOf({"--without", std::string(name)});
    EXPECT_LE(without, all * (1 + 1e-12)) << name;
  }
  // Everything off but the global floors' arguments: the part floors give nothing.
  EXPECT_LT(boundOf({"--without", "part-floors", "--without", "shares", "--without", "lp"}), all);
}

TEST(BoundArgsCli, AnUnknownArgumentIsAUsageErrorNamingThem) {
  const auto r = test::runMlsys({"bound", test::instancePath("examples/ex5.json"), "--without", "covers"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown argument 'covers'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(boundArgList()), std::string::npos) << r.err;
}

TEST(BoundArgsCli, JsonSaysWhatSetEachComponentAndWhatEachArgumentGave) {
  const auto r =
      test::runMlsys({"bound", test::instancePath("generated/transformer-20.json"), "--json", "--without", "lp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const rapidjson::Document d = parseJsonText(r.out, "bound --json");
  ASSERT_TRUE(d["without"].IsArray());
  ASSERT_EQ(d["without"].Size(), 1u);
  EXPECT_EQ(std::string(d["without"][0].GetString()), "lp");
  EXPECT_EQ(std::string(d["attribution"].GetString()), "complete");
  ASSERT_TRUE(d["raised_by"].IsObject());
  EXPECT_TRUE(d["raised_by"].HasMember("part-floors"));  // without them the cover proves nothing
  EXPECT_FALSE(d["raised_by"].HasMember("lp"));          // switched off: never credited
  for (const auto& c : d["components"].GetArray()) {
    const std::string by = c["set_by"].GetString();
    EXPECT_TRUE(by == "cover" || by == "floors" || by == "shares" || by == "edge-floors" || by == "lp" ||
                by.find('+') != std::string::npos)
        << by;
    ASSERT_TRUE(c["raised_by"].IsObject());
  }
}

}  // namespace
}  // namespace mlsys
