#include "engine/cli/report_format.h"

#include <cmath>

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
  int d = std::max(0, decimals);
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e18 || a < 1e-12)) return fmt::format("{:.{}g}", v, std::max(1, d));
  if (d > 0 && a > 0 && a < 1) d += static_cast<int>(-std::floor(std::log10(a))) - 1;
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

std::string humanNumber(i64 v) { return groupThousands(fmt::format("{}", v)); }

std::string humanNumber(int v) { return humanNumber(static_cast<i64>(v)); }

std::string humanPercent(double fraction, int decimals) { return humanNumber(100 * fraction, decimals) + "%"; }

std::string esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string px(double v) {
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

}  // namespace mlsys
