#include "engine/report/report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace mlsys {
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
