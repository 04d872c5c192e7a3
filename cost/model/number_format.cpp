#include "cost/model/number_format.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace mlsys {
namespace {

// "-1234567.5" -> "-1,234,567.5".
std::string groupThousands(const std::string& s) {
  size_t start = !s.empty() && s[0] == '-' ? 1 : 0;
  size_t end = s.find('.');
  if (end == std::string::npos) end = s.size();
  std::string o = s.substr(0, start);
  for (size_t i = start; i < end; ++i) {
    if (i > start && (end - i) % 3 == 0) o += ',';
    o += s[i];
  }
  return o + s.substr(end);
}

}  // namespace

std::string humanNumber(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  int d = std::clamp(decimals, 0, kMaxSignificantDigits);
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e18 || a < 1e-12)) return fmt::format("{:.{}g}", v, std::max(1, d));
  if (a >= 1) {
    // Digits of the integer part, from the value rounded as it will be printed (999.99996 has 4).
    int intDigits = static_cast<int>(std::floor(std::log10(a))) + 1;
    if (intDigits > kMaxSignificantDigits) {
      const double unit = std::pow(10.0, intDigits - kMaxSignificantDigits);
      return groupThousands(fmt::format("{:.0f}", std::copysign(std::round(a / unit) * unit, v)));
    }
    d = std::min(d, kMaxSignificantDigits - intDigits);
  } else if (d > 0 && a > 0) {
    d += static_cast<int>(-std::floor(std::log10(a))) - 1;
  }
  // Halves round away from zero (1234.5 -> "1,235"), as people round; printf would round to even.
  const double scale = std::pow(10.0, d), scaled = v * scale;
  std::string s = fmt::format("{:.{}f}", std::fabs(scaled) < 0x1p52 ? std::round(scaled) / scale : v, d);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return groupThousands(s);
}

std::string humanNumber(i64 v) {
  // The magnitude as unsigned: -2^63 has no positive i64.
  uint64_t a = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  uint64_t limit = 1;
  for (int k = 0; k < kMaxSignificantDigits; ++k) limit *= 10;
  if (a >= limit) {
    uint64_t unit = 1;
    while (a / unit >= limit) unit *= 10;
    const uint64_t q = a / unit, r = a % unit;
    a = (q + (r >= unit - r ? 1 : 0)) * unit;  // half away from zero; below 2^64 (a < 2^63 + 5 * 10^10)
  }
  return groupThousands(fmt::format("{}{}", v < 0 ? "-" : "", a));
}

std::string humanNumber(int v) { return humanNumber(static_cast<i64>(v)); }

std::string humanPercent(double fraction, int decimals) { return humanNumber(100 * fraction, decimals) + "%"; }

std::string humanSeconds(double s) {
  if (!std::isfinite(s)) return "- s";
  if (s < 100) return fmt::format("{:.{}f} s", s, s < 1 ? 2 : 1);
  return fmt::format("{:.0f} s", s);
}

}  // namespace mlsys
