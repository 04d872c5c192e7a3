// How `mlsys report` writes numbers and text into its HTML: the people's number format of the
// whole program (humanNumber, cost/model/number_format.h), round axis ticks, HTML escaping, and SVG
// coordinates.
#pragma once
#include <string>
#include <vector>

#include "cost/model/number_format.h"
#include "cost/model/types.h"

namespace mlsys {

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
