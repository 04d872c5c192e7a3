// The people's number format (cost/model/number_format.h): at most 8 significant digits, separators.
#include "cost/model/number_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "tests/test_util.h"

namespace mlsys {
namespace {

TEST(NumberFormat, LatenciesFromTheIssue) {
  EXPECT_EQ(humanLatency(88493.0666666666729412), "88,493.067");
  EXPECT_EQ(humanLatency(1249553.0666666667), "1,249,553.1");
  EXPECT_EQ(humanLatency(10737418.239989262), "10,737,418");
  EXPECT_EQ(humanLatency(16284057.600000001), "16,284,058");
  EXPECT_EQ(humanLatency(16284057.6), humanLatency(16284057.600000001));
  EXPECT_EQ(humanLatency(6734.4), "6,734.4");
  EXPECT_EQ(humanLatency(655.36), "655.36");
}

TEST(NumberFormat, EdgeCases) {
  EXPECT_EQ(humanLatency(0), "0");
  EXPECT_EQ(humanLatency(-2.5), "-2.5");
  EXPECT_EQ(humanLatency(123456789), "123,456,790");
  EXPECT_EQ(humanLatency(99999999.7), "100,000,000");
  EXPECT_EQ(humanLatency(0.000123456789), "0.00012345679");
  EXPECT_EQ(humanLatency(-0.0), "0");
  EXPECT_EQ(humanLatency(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(humanLatency(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(humanCount(0), "0");
  EXPECT_EQ(humanCount(1234567), "1,234,567");
  EXPECT_EQ(humanCount(-1000), "-1,000");
  EXPECT_EQ(humanSeconds(0.4712), "0.47 s");
  EXPECT_EQ(humanSeconds(12.34), "12.3 s");
  EXPECT_EQ(humanSeconds(125.4), "125 s");
}

TEST(NumberFormat, NeverMoreThanEightSignificantDigits) {
  double v = 1e-6;
  for (int i = 0; i < 4000; ++i, v *= 1.0123456789) {
    const std::string s = humanLatency(v);
    EXPECT_LE(test::significantDigits(s), 8) << v << " -> " << s;
    std::string plain;
    for (char c : s)
      if (c != ',') plain += c;
    EXPECT_NEAR(std::stod(plain), v, v * 1e-7) << s;
  }
}

}  // namespace
}  // namespace mlsys
