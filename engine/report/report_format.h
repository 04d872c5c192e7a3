// How `mlsys report` writes numbers and text into its HTML: one number format for the whole page
// (humanNumber), HTML escaping, and SVG coordinates.
#pragma once
#include <string>

#include "cost/types.h"

namespace mlsys {

// Every number a person reads on the report page: thousands separators, at most `decimals`
// decimals (trailing zeros dropped). Below 1 in magnitude the decimals count from the first
// significant digit, so small values keep `decimals` significant digits:
//   2118743.04 -> "2,118,743.04", 1234.56789 -> "1,234.5679", 0.000123456 -> "0.0001235",
//   humanNumber(1234.5, 0) -> "1,235" (no small-value rule with 0 decimals), -0.0 -> "0"; nan and
//   inf as "nan", "inf", "-inf"; beyond 1e18 and below 1e-12 in magnitude, scientific ("1.5e+20").
std::string humanNumber(double v, int decimals = 4);
// Integers exactly (above 2^53 a double would not be): 4611686018427387904 -> "4,611,686,018,427,387,904".
std::string humanNumber(i64 v);
std::string humanNumber(int v);
// A share in [0, 1] as a percentage: humanPercent(0.1234) -> "12.3%".
std::string humanPercent(double fraction, int decimals = 1);

// Text for HTML content and attribute values.
std::string esc(const std::string& s);

// An SVG coordinate: at most 2 decimals, locale-independent ("12.5", "0").
std::string px(double v);

}  // namespace mlsys
