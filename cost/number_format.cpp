#include "cost/number_format.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace mlsys {

namespace {

// "1234567" -> "1,234,567" (digits only).
std::string groupThousands(const std::string& digits) {
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string humanLatency(double v, int significant) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  const bool neg = v < 0;
  double a = std::fabs(v);
  // Digits before the point; values above 10^significant are rounded to a multiple of a power of
  // ten (123456789 -> 123,456,790 at 8 digits).
  int mag = static_cast<int>(std::floor(std::log10(a))) + 1;
  int decimals = significant - mag;
  if (decimals < 0) {
    const double unit = std::pow(10.0, -decimals);
    a = std::round(a / unit) * unit;
    decimals = 0;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, a);
  std::string s(buf);
  std::string intPart = s, frac;
  if (const size_t dot = s.find('.'); dot != std::string::npos) {
    intPart = s.substr(0, dot);
    frac = s.substr(dot + 1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
  }
  std::string out = groupThousands(intPart);
  if (!frac.empty()) out += "." + frac;
  if (neg && out != "0") out = "-" + out;
  return out;
}

std::string humanCount(long long v) {
  const std::string digits =
      std::to_string(v < 0 ? -static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v));
  return (v < 0 ? "-" : "") + groupThousands(digits);
}

std::string humanSeconds(double s) {
  if (!std::isfinite(s)) return "- s";
  char buf[64];
  if (s < 100) std::snprintf(buf, sizeof buf, "%.*f s", s < 1 ? 2 : 1, s);
  else std::snprintf(buf, sizeof buf, "%.0f s", s);
  return buf;
}

}  // namespace mlsys
