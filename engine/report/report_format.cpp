#include "engine/report/report_format.h"

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

std::vector<double> axisTicks(double lo, double hi, int maxTicks) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  const double raw = (hi - lo) / std::max(1, maxTicks);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  // The smallest step 1, 2, 5 x 10^n of at least `raw`, then smaller while fewer than 3 ticks.
  std::vector<double> steps;
  for (double m = mag / 10; steps.size() < 8; m *= 10)
    for (double f : {1.0, 2.0, 5.0}) steps.push_back(f * m);  // 1,2,5 x mag/10 .. 5 x 10^6 mag
  size_t k = 0;
  while (k + 1 < steps.size() && steps[k] < raw * (1 - 1e-12)) ++k;
  std::vector<double> t;
  for (;; --k) {
    t.clear();
    const double st = steps[k];
    for (double i = std::ceil(lo / st - 1e-9); i * st <= hi + 1e-12 * std::fabs(hi); ++i) t.push_back(i * st);
    if (t.size() >= 3 || k == 0) break;
  }
  return t;
}

std::vector<double> logAxisTicks(double lo, double hi, int maxTicks) {
  if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi)) return {lo};
  const int e0 = static_cast<int>(std::floor(std::log10(lo))), e1 = static_cast<int>(std::ceil(std::log10(hi)));
  auto inRange = [&](double x) { return x >= lo * (1 - 1e-9) && x <= hi * (1 + 1e-9); };
  std::vector<double> powers, ones;
  for (int e = e0; e <= e1; ++e) {
    const double p = std::pow(10.0, e);
    if (inRange(p)) powers.push_back(p);
    for (double f : {1.0, 2.0, 5.0})
      if (inRange(f * p)) ones.push_back(f * p);
  }
  if (ones.size() >= 3 && ones.size() <= static_cast<size_t>(std::max(3, maxTicks)) + 1) return ones;
  if (powers.size() >= 3) {
    const size_t every = (powers.size() + 9) / 10;  // at most 10
    std::vector<double> t;
    for (size_t i = 0; i < powers.size(); i += every) t.push_back(powers[i]);
    return t;
  }
  if (ones.size() >= 3) return ones;  // too many for maxTicks, but fewer than 3 powers of ten
  return axisTicks(lo, hi, maxTicks);
}

int tickDecimals(const std::vector<double>& ticks) {
  double step = 0;
  for (size_t i = 1; i < ticks.size(); ++i) {
    const double d = std::fabs(ticks[i] - ticks[i - 1]);
    if (d > 0 && (step == 0 || d < step)) step = d;
  }
  if (step == 0 || step >= 1) return 0;
  return std::min(kMaxSignificantDigits, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (1 to 4), or 0 if there is none; then
// `bad` is the length of its maximal ill-formed subpart (the bytes one U+FFFD stands for, as the
// WHATWG decoder and Unicode's "substitution of maximal subparts" count them: at least 1).
size_t utf8Sequence(const std::string& s, size_t i, size_t& bad) {
  const auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = b(0);
  bad = 1;
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;  // 80-C1 (continuation, overlong), F5-FF: never start a character
  for (size_t k = 1; k < len; ++k) {
    const unsigned x = b(k);
    if (x < (k == 1 ? lo : 0x80u) || x > (k == 1 ? hi : 0xBFu)) return 0;
    bad = k + 1;
  }
  return len;
}

}  // namespace

// & < > " ' as entities, and valid UTF-8 whatever the input (file names, trace worker names, JSON
// strings are bytes): each ill-formed byte sequence (its maximal subpart, as browsers decode) and
// each C0 control character but tab, LF and CR becomes U+FFFD.
std::string esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t bad = 1;
    const size_t len = utf8Sequence(s, i, bad);
    const char c = s[i];
    if (len == 0 || (len == 1 && static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
      o += "\xEF\xBF\xBD";  // U+FFFD for each ill-formed subpart and each control character but tab, LF, CR
      i += len == 0 ? bad : 1;
      continue;
    }
    if (len > 1) {
      o.append(s, i, len);
      i += len;
      continue;
    }
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
    ++i;
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
