// Numbers for people (issue 35): the one format of latencies in the log, `evaluate`'s table,
// `bound`, the report and the tuner. JSON keeps the exact round-trip value (formatDouble).
#pragma once
#include <string>

namespace mlsys {

// At most `significant` significant digits (8 by default), thousands separators, trailing zeros
// dropped: 16284057.600000001 -> "16,284,058", 1249553.0666666667 -> "1,249,553.1",
// 88493.0666666666729412 -> "88,493.067", 6734.4 -> "6,734.4", 0.000123456789 -> "0.00012345679",
// -2.5 -> "-2.5", 0 -> "0"; nan and inf as "nan", "inf", "-inf".
std::string humanLatency(double v, int significant = 8);

// "12,345": an integer with thousands separators.
std::string humanCount(long long v);

// Seconds for the log: "0.47 s", "12.3 s", "125 s" (3 significant digits, at least one decimal
// below 100 s).
std::string humanSeconds(double s);

}  // namespace mlsys
