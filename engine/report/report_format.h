// How `mlsys report` writes numbers and text into its HTML: one number format for the whole page
// (humanNumber), round axis ticks, HTML escaping, and SVG coordinates.
#pragma once
#include <string>
#include <vector>

#include "cost/types.h"

namespace mlsys {

// The most significant digits of any number on the page (issue 35: a person reads 8 at most).
inline constexpr int kMaxSignificantDigits = 8;

// Every number a person reads on the report page: thousands separators, at most `decimals`
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

// Round axis ticks. axisTicks: the multiples of one step 1, 2 or 5 x 10^n within [lo, hi], the
// largest such step that gives at least 3 ticks and at most about maxTicks (lo < hi; else {lo}).
std::vector<double> axisTicks(double lo, double hi, int maxTicks);
// Ticks of a logarithmic axis over [lo, hi] (0 < lo < hi): the values 1, 2, 5 x 10^n within it
// when there are 3 to maxTicks + 1 of them, else the powers of ten when there are at least 3
// (every k-th when there are more than 10), else axisTicks(lo, hi, maxTicks) (a narrow range:
// evenly spaced round values).
std::vector<double> logAxisTicks(double lo, double hi, int maxTicks);
// The decimals that tell the ticks of one axis apart: 0 for steps of 1 and more, else enough for
// the step (0.05 -> 2).
int tickDecimals(const std::vector<double>& ticks);

// Text for HTML content and attribute values.
std::string esc(const std::string& s);

// An SVG coordinate: at most 2 decimals, locale-independent ("12.5", "0").
std::string px(double v);

}  // namespace mlsys
