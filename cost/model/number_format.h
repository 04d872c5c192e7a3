// Numbers for people (issue 35): one format for the log, `evaluate`'s table, `bound`, the report
// and the tuner. JSON keeps the exact round-trip value (formatDouble, cost/model/json_util.h).
#pragma once
#include <string>

#include "cost/model/types.h"

namespace mlsys {

// The most significant digits of any number a person reads (issue 35: 8 at most).
inline constexpr int kMaxSignificantDigits = 8;

// Every number a person reads: thousands separators, at most `decimals`
// decimals (trailing zeros dropped) and at most kMaxSignificantDigits significant digits (the
// decimals go first; an integer part of more digits is rounded). Below 1 in magnitude the decimals
// count from the first significant digit, so small values keep `decimals` significant digits:
//   16284057.600000001 -> "16,284,058", 2118743.04 -> "2,118,743", 1234.56789 -> "1,234.5679",
//   6553.6 -> "6,553.6", 813940736.0 -> "813,940,740", 0.000123456 -> "0.0001235",
//   humanNumber(1234.5, 0) -> "1,235" (no small-value rule with 0 decimals), -0.0 -> "0"; nan and
//   inf as "nan", "inf", "-inf"; beyond 1e18 and below 1e-12 in magnitude, scientific ("1.5e+20").
std::string humanNumber(double v, int decimals = 4);
// Integers up to kMaxSignificantDigits digits exactly; longer ones rounded (half away from zero)
// in integer arithmetic, exact above 2^53 where a double would not be:
// 123456789 -> "123,456,790", 4611686018427387904 -> "4,611,686,000,000,000,000".
std::string humanNumber(i64 v);
std::string humanNumber(int v);
// A share in [0, 1] as a percentage: humanPercent(0.1234) -> "12.3%".
std::string humanPercent(double fraction, int decimals = 1);

// A latency (or any value) with as many decimals as its 8 significant digits allow:
// 16284057.600000001 -> "16,284,058", 1249553.0666666667 -> "1,249,553.1", 88493.0666 ->
// "88,493.067", 6734.4 -> "6,734.4".
inline std::string humanLatency(double v) { return humanNumber(v, kMaxSignificantDigits); }
// A count: 1234567 -> "1,234,567".
inline std::string humanCount(long long v) { return humanNumber(static_cast<i64>(v)); }
// Seconds for the log: "0.47 s", "12.3 s", "125 s".
std::string humanSeconds(double s);

}  // namespace mlsys
