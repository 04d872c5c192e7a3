// `mlsys report`: one self-contained HTML page (inline CSS + SVG, no scripts, no network) that
// shows a schedule as a person wants to read it: the headline numbers, a timeline of subgraphs
// with widths proportional to latency, the fast-memory occupancy of each subgraph, a table of
// every subgraph, and (with --trace) the convergence of the search.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "cost/bound.h"
#include "cost/evaluator.h"
#include "cost/json_util.h"
#include "engine/files.h"
#include "engine/cli/commands.h"
#include "engine/cli/schedule_facts.h"

namespace mlsys {
namespace {

// ---------------------------------------------------------------- formatting helpers

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

std::string groupDigits(const std::string& digits) {
  std::string o;
  size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) o += ',';
    o += digits[i];
  }
  return o;
}

// Exact value with thousands separators: 2118743.04 -> "2,118,743.04".
std::string fmtNum(double v) {
  std::string s = formatDouble(v);
  if (s.find_first_of("eEn") != std::string::npos) return s;  // exponent, nan, inf
  std::string sign;
  if (!s.empty() && s[0] == '-') { sign = "-"; s = s.substr(1); }
  auto dot = s.find('.');
  std::string ip = dot == std::string::npos ? s : s.substr(0, dot);
  std::string fp = dot == std::string::npos ? "" : s.substr(dot);
  return sign + groupDigits(ip) + fp;
}

std::string fmtInt(i64 v) { return v < 0 ? "-" + groupDigits(std::to_string(-v)) : groupDigits(std::to_string(v)); }

// `sig` significant digits with a k/M/G suffix, for axes and labels: 2118743 -> "2.12M".
std::string fmtSig(double v, int sig) {
  double a = std::fabs(v);
  const char* suf = "";
  double d = 1;
  if (a >= 1e9) { suf = "G"; d = 1e9; }
  else if (a >= 1e6) { suf = "M"; d = 1e6; }
  else if (a >= 1e3) { suf = "k"; d = 1e3; }
  double x = v / d, ax = std::fabs(x);
  int intDigits = ax >= 100 ? 3 : ax >= 10 ? 2 : 1;
  int dec = std::max(0, sig - intDigits);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", dec, x);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {  // 1.50 -> 1.5, 2.00 -> 2
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s + suf;
}

std::string fmtShort(double v) { return fmtSig(v, 3); }

// An axis tick at a multiple of `step`, with just enough decimals: 0.025 -> "0.025", 0.5 -> "0.5".
std::string fmtTick(double v, double step) {
  if (v >= 1000) return fmtShort(v);
  int dec = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9)) + 1;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", dec, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string fmtFixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// SVG coordinates: short, locale-independent.
std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

const char* opTypeShort(OpType t) { return t == OpType::MatMul ? "MM" : "PW"; }
const char* opTypeName(OpType t) { return t == OpType::MatMul ? "MatMul" : "Pointwise"; }

// ---------------------------------------------------------------- trace CSV

struct TracePoint {
  double seconds = 0;
  std::string worker;
  double latency = 0;
};

std::vector<TracePoint> readTrace(const std::string& path) {
  std::string text = readTextFile(path, "trace");
  std::istringstream in(text);
  std::string line;
  std::vector<TracePoint> pts;
  int lineno = 0;
  auto fail = [&](const std::string& why) {
    throw InputError("trace '" + path + "': line " + std::to_string(lineno) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) f.push_back(cell);
    if (lineno == 1 && !f.empty() && f[0] == "seconds") continue;  // header
    if (f.size() < 3) fail("expected 3 columns seconds,worker,latency, got " + std::to_string(f.size()));
    TracePoint tp;
    try {
      size_t used = 0;
      tp.seconds = std::stod(f[0], &used);
      if (used != f[0].size()) throw std::invalid_argument("trailing");
      tp.latency = std::stod(f[2], &used);
      if (used != f[2].size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      fail("not a number in \"" + line + "\"");
    }
    if (!std::isfinite(tp.seconds) || !std::isfinite(tp.latency) || tp.latency <= 0 || tp.seconds < 0)
      fail("seconds must be >= 0 and latency > 0 in \"" + line + "\"");
    tp.worker = f[1];
    pts.push_back(tp);
  }
  return pts;
}

// ---------------------------------------------------------------- per-subgraph facts

struct SgView {
  int index = 0;
  double start = 0, latency = 0;
  SubgraphBound bound = SubgraphBound::Compute;
  i64 retained_ws = 0;  // sum |t| of tensors retained into and out of the subgraph
};

const char* boundClass(SubgraphBound b) {
  switch (b) {
    case SubgraphBound::Compute: return "cb";
    case SubgraphBound::Memory: return "mb";
    case SubgraphBound::Mixed: return "mx";
    case SubgraphBound::Invalid: return "bad";
  }
  return "";
}

const char* boundLabel(SubgraphBound b) {
  switch (b) {
    case SubgraphBound::Compute: return "compute";
    case SubgraphBound::Memory: return "memory";
    case SubgraphBound::Mixed: return "mixed";
    case SubgraphBound::Invalid: return "INVALID";
  }
  return "";
}

struct Ctx {
  const Problem& p;
  const Schedule& s;
  const Evaluation& ev;
  LowerBound lb;
  std::vector<SgView> sg;
  std::vector<std::string> warnings;
  std::string problem_path, schedule_path;
};

std::string tensorsText(const Problem& p, const std::vector<TensorId>& ts) {
  if (ts.empty()) return "none";
  std::string o;
  for (size_t i = 0; i < ts.size(); ++i)
    o += (i ? ", " : "") + std::string("t") + std::to_string(ts[i]) + " (" + std::to_string(p.widths[ts[i]]) + "\xC3\x97" +
         std::to_string(p.heights[ts[i]]) + ")";
  return o;
}

// Multi-line tooltip of one subgraph (the content of an SVG <title>).
std::string tooltip(const Ctx& c, int i) {
  const auto& sg = c.s.subgraphs[i];
  const auto& rp = c.ev.subgraphs[i];
  std::ostringstream o;
  o << "subgraph " << i << " (" << boundLabel(c.sg[i].bound) << ")\n";
  o << "ops: ";
  for (size_t j = 0; j < sg.ops.size(); ++j) {
    if (j && j % 8 == 0) o << "\n     ";
    o << (j % 8 ? ", " : "") << sg.ops[j] << " " << opTypeName(c.p.ops[sg.ops[j]].type);
  }
  o << "\n[w,h,k] = [" << sg.gran.w << "," << sg.gran.h << "," << sg.gran.k << "]";
  o << "\ntiles " << rp.ntw << " x " << rp.nth << ", k-steps " << rp.nk << ", steps " << rp.cost.steps;
  o << "\nlatency " << fmtNum(rp.cost.latency);
  if (c.ev.total > 0) o << " (" << fmtFixed(100 * rp.cost.latency / c.ev.total, 1) << "% of total)";
  o << "\nstart " << fmtNum(c.sg[i].start);
  o << "\npeak working set " << fmtInt(rp.cost.peak_ws) << " / " << fmtInt(c.p.capacity) << " ("
    << fmtFixed(100.0 * static_cast<double>(rp.cost.peak_ws) / static_cast<double>(c.p.capacity), 1) << "%)";
  o << "\ncompute-bound steps " << rp.cost.compute_bound_steps << ", memory-bound steps " << rp.cost.memory_bound_steps;
  if (!sg.retain.empty()) o << "\nretains " << tensorsText(c.p, sg.retain);
  if (!rp.cost.valid) o << "\nINVALID (" << ruleName(rp.cost.rule) << "): " << rp.cost.reason;
  return esc(o.str());
}

// ---------------------------------------------------------------- page parts

const char* kCss = R"CSS(
:root{--cb:#2f6fd0;--mb:#e07b24;--mx:#8e5cc7;--bad:#d62728;--ret:#0f766e;--ws:#5eb8a6;--ink:#1d2433;--mute:#667085;--line:#e4e7ec}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:#f6f7f9}
header{background:#1d2433;color:#fff;padding:18px 28px 14px}
header h1{margin:0;font-size:22px;font-weight:650}
header .sub{color:#b8c0cc;font-size:12.5px;margin-top:3px;word-break:break-all}
main{padding:18px 28px 40px;max-width:1500px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:16px}
.card{flex:1 1 0;background:#fff;border:1px solid var(--line);border-radius:8px;padding:9px 12px;min-width:140px}
.card .k{font-size:11.5px;text-transform:uppercase;letter-spacing:.04em;color:var(--mute)}
.card .v{font-size:20px;white-space:nowrap;font-weight:650;font-variant-numeric:tabular-nums}
.card .d{font-size:12px;color:var(--mute)}
.card.ok .v{color:#157a3b}.card.no{border-color:var(--bad);background:#fff5f5}.card.no .v{color:var(--bad)}
.banner{border:2px solid var(--bad);background:#fff1f1;color:#8a1111;border-radius:8px;padding:12px 16px;margin-bottom:16px;font-size:15px}
.banner b{font-size:17px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin-bottom:16px}
section h2{font-size:16px;margin:0 0 4px}
section p.note{margin:0 0 8px;color:var(--mute);font-size:12.5px}
svg{display:block;width:100%;height:auto}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12.5px;color:var(--mute);margin:4px 0 8px}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-2px;margin-right:5px}
.cb{fill:var(--cb);background:var(--cb)}.mb{fill:var(--mb);background:var(--mb)}.mx{fill:var(--mx);background:var(--mx)}.bad{fill:var(--bad);background:var(--bad)}
rect.sg{stroke:#fff;stroke-width:.6}rect.sg:hover{stroke:#000;stroke-width:1.5}
rect.sg.badsg{stroke:#000;stroke-width:2}
rect.occ:hover,rect.occr:hover{opacity:.75}
table{border-collapse:collapse;width:100%;font-size:12.5px;font-variant-numeric:tabular-nums}
th{position:sticky;top:0;background:#eef1f5;text-align:left;font-weight:600;padding:5px 6px;border-bottom:1px solid #cfd5de;white-space:nowrap}
td{padding:4px 6px;border-bottom:1px solid var(--line);vertical-align:top}
td.n{text-align:right;white-space:nowrap}
tr:target{background:#fff7cc}
tr.badrow{background:#ffecec}
.chip{display:inline-block;padding:0 4px;margin:1px 2px 1px 0;border-radius:3px;font-size:11.5px;white-space:nowrap}
.chip.MM{background:#dde8fb;color:#1d4f9c}.chip.PW{background:#e3f4e6;color:#1f6a33}
.tag{display:inline-block;padding:0 6px;border-radius:9px;font-size:11px;color:#fff}
.bv{display:flex;align-items:center;justify-content:flex-end;gap:6px}
.bv em{font-style:normal;min-width:80px;text-align:right}
.bar{position:relative;height:11px;width:72px;flex:none;background:#eef1f5;border-radius:2px}
.bar span{position:absolute;left:0;top:0;bottom:0;border-radius:2px}
.lat{background:#9fb6d9}.occb{background:var(--ws)}.occr{fill:var(--ret)}.occ{fill:var(--ws)}.over{background:var(--bad);fill:var(--bad)}
.ret{color:var(--ret)}
.warn{color:#8a5a00}
details summary{cursor:pointer;color:var(--mute)}
footer{color:var(--mute);font-size:12px;padding:0 28px 24px}
)CSS";

std::string card(const std::string& cls, const std::string& key, const std::string& value, const std::string& detail) {
  return "<div class=\"card " + cls + "\"><div class=\"k\">" + key + "</div><div class=\"v\">" + value +
         "</div><div class=\"d\">" + detail + "</div></div>\n";
}

std::string renderHeader(const Ctx& c) {
  std::ostringstream o;
  int mm = 0;
  for (const auto& op : c.p.ops) mm += op.type == OpType::MatMul;
  o << "<header><h1>mlsys report &mdash; " << esc(c.p.name) << "</h1><div class=\"sub\">problem "
    << esc(c.problem_path) << " &middot; schedule " << esc(c.schedule_path) << " &middot; model "
    << esc(c.ev.model.describe()) << "</div></header>\n<main>\n";
  if (!c.ev.valid) {
    o << "<div class=\"banner\"><b>INVALID schedule &mdash; rule " << esc(ruleName(c.ev.rule)) << "</b><br>" << esc(c.ev.reason);
    if (c.ev.bad_subgraph >= 0)
      o << " <a href=\"#sg-" << c.ev.bad_subgraph << "\">(go to subgraph " << c.ev.bad_subgraph << ")</a>";
    o << "<br><small>Latencies below are what the cost model computes for each subgraph; the contest would score this "
         "schedule 0.</small></div>\n";
  }
  double lbv = c.lb.value();
  o << "<div class=\"cards\">\n";
  o << card(c.ev.valid ? "ok" : "no", "validity", c.ev.valid ? "valid" : "INVALID (" + esc(ruleName(c.ev.rule)) + ")",
            c.ev.valid ? "all rules V1&ndash;V11 hold" : "first violated rule");
  o << card("", "total latency", fmtNum(c.ev.total), esc(std::to_string(c.s.subgraphs.size())) + " subgraphs");
  o << card("", "lower bound", fmtNum(lbv),
            "compute " + fmtShort(c.lb.compute) + " &middot; traffic " + fmtShort(c.lb.traffic));
  o << card("", "gap to bound", lbv > 0 ? fmtFixed(100.0 * (c.ev.total - lbv) / lbv, 1) + "%" : "n/a",
            lbv > 0 ? "latency / bound = " + fmtFixed(c.ev.total / lbv, 3) : "");
  double tc = 0, tm = 0, tx = 0;
  for (const auto& v : c.sg) (v.bound == SubgraphBound::Compute ? tc : v.bound == SubgraphBound::Memory ? tm : tx) += v.latency;
  double tot = c.ev.total > 0 ? c.ev.total : 1;
  o << card("", "time by bound",
            "<span style=\"color:var(--cb)\">" + fmtFixed(100 * tc / tot, 0) + "%</span> / <span style=\"color:var(--mb)\">" +
                fmtFixed(100 * tm / tot, 0) + "%</span>",
            "compute- / memory-bound" + (tx > 0 ? ", " + fmtFixed(100 * tx / tot, 0) + "% mixed" : std::string()));
  o << card("", "problem", std::to_string(c.p.numOps()) + " ops",
            std::to_string(mm) + " MatMul, " + std::to_string(c.p.numOps() - mm) + " Pointwise, " +
                std::to_string(c.p.numTensors()) + " tensors");
  o << card("", "machine", fmtInt(c.p.capacity),
            "capacity &middot; bandwidth " + fmtInt(c.p.bandwidth) + " &middot; native " + std::to_string(c.p.native));
  o << "</div>\n";
  return o.str();
}

// Timeline: subgraphs in execution order, width proportional to latency, wrapped into rows that
// each cover about the same span of time (like lines of text), so that even ~150 subgraphs stay
// legible. One <rect class="sg"> per subgraph.
std::string renderTimeline(const Ctx& c) {
  const int n = static_cast<int>(c.sg.size());
  const double W = 1400, left = 64, right = 16, rowH = 40, gapH = 22, top = 8;
  const double plotW = W - left - right;
  double total = 0, maxLat = 0;
  for (const auto& v : c.sg) { total += v.latency; maxLat = std::max(maxLat, v.latency); }
  bool equal = !(total > 0);  // nothing to scale by: equal widths
  auto lat = [&](int i) { return equal ? 1.0 : c.sg[i].latency; };
  if (equal) total = n;
  int rows = std::clamp((n * 22 + static_cast<int>(plotW) - 1) / static_cast<int>(plotW), 1, 8);
  // Row of each subgraph: by the time of its midpoint.
  std::vector<int> row(n);
  std::vector<double> rowStart(rows, -1), rowEnd(rows, 0);
  double t = 0;
  for (int i = 0; i < n; ++i) {
    double mid = t + lat(i) / 2;
    row[i] = std::min(rows - 1, static_cast<int>(mid / (total / rows)));
    if (i > 0) row[i] = std::max(row[i], row[i - 1]);
    if (rowStart[row[i]] < 0) rowStart[row[i]] = t;
    t += lat(i);
    rowEnd[row[i]] = t;
  }
  // Drop empty rows (possible when one subgraph spans several rows' worth of time).
  std::vector<int> remap(rows, -1);
  int used = 0;
  for (int r = 0; r < rows; ++r)
    if (rowStart[r] >= 0) remap[r] = used++;
  double maxSpan = 0;
  std::vector<double> rs(used), re(used);
  for (int r = 0; r < rows; ++r)
    if (remap[r] >= 0) { rs[remap[r]] = rowStart[r]; re[remap[r]] = rowEnd[r]; maxSpan = std::max(maxSpan, rowEnd[r] - rowStart[r]); }
  double scale = maxSpan > 0 ? plotW / maxSpan : 0;
  double H = top + used * (rowH + gapH) + 4;
  std::ostringstream o;
  o << "<svg id=\"timeline\" viewBox=\"0 0 " << px(W) << " " << px(H) << "\" role=\"img\" aria-label=\"timeline\">\n";
  for (int r = 0; r < used; ++r) {
    double y = top + r * (rowH + gapH);
    double x1 = left + (re[r] - rs[r]) * scale;
    o << "<text x=\"" << px(left - 6) << "\" y=\"" << px(y + rowH / 2 + 4) << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#667085\">"
      << (equal ? "#" + std::to_string(static_cast<int>(rs[r])) : fmtShort(rs[r])) << "</text>\n";
    o << "<line x1=\"" << px(left) << "\" x2=\"" << px(x1) << "\" y1=\"" << px(y + rowH + 3) << "\" y2=\"" << px(y + rowH + 3)
      << "\" stroke=\"#cfd5de\"/>\n";
    o << "<text x=\"" << px(x1) << "\" y=\"" << px(y + rowH + 15) << "\" text-anchor=\"end\" font-size=\"10.5\" fill=\"#667085\">"
      << (equal ? "" : fmtShort(re[r])) << "</text>\n";
  }
  t = 0;
  std::ostringstream labels;
  for (int i = 0; i < n; ++i) {
    int r = remap[row[i]];
    double y = top + r * (rowH + gapH);
    double x = left + (t - rs[r]) * scale, w = lat(i) * scale;
    t += lat(i);
    const auto& v = c.sg[i];
    double wDraw = std::max(w, v.bound == SubgraphBound::Invalid ? 4.0 : 0.8);
    o << "<a href=\"#sg-" << i << "\"><rect class=\"sg " << boundClass(v.bound) << (i == c.ev.bad_subgraph ? " badsg" : "")
      << "\" data-sg=\"" << i << "\" x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(wDraw) << "\" height=\""
      << px(rowH) << "\"><title>" << tooltip(c, i) << "</title></rect></a>\n";
    std::string lab = std::to_string(i);
    if (w >= 7.0 * static_cast<double>(lab.size()) + 4)
      labels << "<text x=\"" << px(x + w / 2) << "\" y=\"" << px(y + rowH / 2 + 4) << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#fff\" pointer-events=\"none\">"
             << lab << "</text>\n";
    if (v.bound == SubgraphBound::Invalid)
      labels << "<path d=\"M" << px(x + wDraw / 2 - 6) << " " << px(y - 8) << " h12 l-6 7 z\" fill=\"#d62728\"/>\n";
  }
  o << labels.str() << "</svg>\n";
  return o.str();
}

// Peak fast-memory working set of each subgraph against the capacity, in subgraph order; the
// darker part is tensors retained into or out of the subgraph (resident for its whole run).
std::string renderOccupancy(const Ctx& c) {
  const int n = static_cast<int>(c.sg.size());
  const double W = 1400, left = 64, right = 16, top = 14, plotH = 130, bottom = 26;
  const double plotW = W - left - right;
  const double cap = static_cast<double>(c.p.capacity);
  double maxFrac = 1;
  for (int i = 0; i < n; ++i) maxFrac = std::max(maxFrac, static_cast<double>(c.ev.subgraphs[i].cost.peak_ws) / cap);
  double yTop = maxFrac > 1 ? maxFrac * 1.05 : 1.0;
  auto Y = [&](double frac) { return top + plotH * (1 - frac / yTop); };
  double bw = plotW / std::max(1, n);
  std::ostringstream o;
  o << "<svg id=\"occupancy\" viewBox=\"0 0 " << px(W) << " " << px(top + plotH + bottom) << "\" role=\"img\" aria-label=\"occupancy\">\n";
  for (double f : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    o << "<line x1=\"" << px(left) << "\" x2=\"" << px(W - right) << "\" y1=\"" << px(Y(f)) << "\" y2=\"" << px(Y(f))
      << "\" stroke=\"" << (f == 1.0 ? "#1d2433" : "#e4e7ec") << "\"" << (f == 1.0 ? " stroke-dasharray=\"5 3\"" : "") << "/>\n";
    o << "<text x=\"" << px(left - 6) << "\" y=\"" << px(Y(f) + 4) << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#667085\">"
      << static_cast<int>(f * 100) << "%</text>\n";
  }
  for (int i = 0; i < n; ++i) {
    const auto& cost = c.ev.subgraphs[i].cost;
    double frac = static_cast<double>(cost.peak_ws) / cap;
    double rfrac = std::min(frac, static_cast<double>(c.sg[i].retained_ws) / cap);
    double x = left + i * bw + (bw > 3 ? 0.5 : 0), w = std::max(0.6, bw - (bw > 3 ? 1 : 0));
    std::string tip = "subgraph " + std::to_string(i) + ": peak working set " + fmtInt(cost.peak_ws) + " of " +
                      fmtInt(c.p.capacity) + " (" + fmtFixed(100 * frac, 1) + "%)";
    if (c.sg[i].retained_ws > 0) tip += "\nretained tensors resident: " + fmtInt(c.sg[i].retained_ws);
    o << "<a href=\"#sg-" << i << "\"><g><title>" << esc(tip) << "</title>";
    o << "<rect class=\"" << (frac > 1 ? "over" : "occ") << "\" x=\"" << px(x) << "\" y=\"" << px(Y(frac)) << "\" width=\"" << px(w)
      << "\" height=\"" << px(Y(0) - Y(frac)) << "\"/>";
    if (rfrac > 0)
      o << "<rect class=\"occr\" x=\"" << px(x) << "\" y=\"" << px(Y(rfrac)) << "\" width=\"" << px(w) << "\" height=\""
        << px(Y(0) - Y(rfrac)) << "\"/>";
    if (!cost.valid)
      o << "<text x=\"" << px(x + w / 2) << "\" y=\"" << px(Y(0) - 4) << "\" text-anchor=\"middle\" font-size=\"12\" font-weight=\"700\" fill=\"#d62728\">&#215;</text>";
    o << "</g></a>\n";
  }
  o << "<text x=\"" << px(W - right) << "\" y=\"" << px(Y(1) - 4) << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#1d2433\">capacity "
    << fmtInt(c.p.capacity) << "</text>\n";
  int step = std::max(1, n / 20);
  for (int nice : {1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000})
    if (nice >= step) { step = nice; break; }
  for (int i = 0; i < n; i += step)
    o << "<text x=\"" << px(left + (i + 0.5) * bw) << "\" y=\"" << px(Y(0) + 15) << "\" text-anchor=\"middle\" font-size=\"10.5\" fill=\"#667085\">"
      << i << "</text>\n";
  o << "</svg>\n";
  return o.str();
}

// "Nice" tick values covering [lo, hi].
std::vector<double> niceTicks(double lo, double hi, int target) {
  std::vector<double> t;
  if (!(hi > lo)) { t.push_back(lo); return t; }
  double raw = (hi - lo) / target, mag = std::pow(10, std::floor(std::log10(raw)));
  double stepv = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) { stepv = m * mag; break; }
  for (double v = std::ceil(lo / stepv) * stepv; v <= hi * (1 + 1e-9); v += stepv) t.push_back(v);
  return t;
}

// Best latency over time, one step line per worker (running minimum of its improvements) and the
// overall best underneath; log-scaled latency axis; the lower bound as a dashed line.
std::string renderConvergence(const Ctx& c, const std::vector<TracePoint>& pts) {
  std::ostringstream o;
  if (pts.empty()) return "<p class=\"note\">The trace has no improvements.</p>\n";
  const double W = 1400, left = 74, right = 120, top = 14, plotH = 260, bottom = 34;
  const double plotW = W - left - right;
  std::map<std::string, std::vector<TracePoint>> byWorker;
  double xmax = 0, ymin = 1e300, ymax = 0;
  for (const auto& tp : pts) {
    byWorker[tp.worker].push_back(tp);
    xmax = std::max(xmax, tp.seconds);
    ymin = std::min(ymin, tp.latency);
    ymax = std::max(ymax, tp.latency);
  }
  double lbv = c.lb.value();
  bool showLb = lbv > 0 && lbv >= ymin / 20;
  if (showLb) ymin = std::min(ymin, lbv);
  if (xmax <= 0) xmax = 1;
  xmax *= 1.03;
  double ly0 = std::log10(ymin), ly1 = std::log10(ymax);
  if (ly1 - ly0 < 1e-3) { ly0 -= 0.01; ly1 += 0.01; }
  double pad = (ly1 - ly0) * 0.06;
  ly0 -= pad;
  ly1 += pad;
  auto X = [&](double s) { return left + plotW * s / xmax; };
  auto Y = [&](double v) { return top + plotH * (1 - (std::log10(v) - ly0) / (ly1 - ly0)); };
  o << "<svg id=\"convergence\" viewBox=\"0 0 " << px(W) << " " << px(top + plotH + bottom) << "\" role=\"img\" aria-label=\"convergence\">\n";
  o << "<rect x=\"" << px(left) << "\" y=\"" << px(top) << "\" width=\"" << px(plotW) << "\" height=\"" << px(plotH)
    << "\" fill=\"#fbfcfd\" stroke=\"#cfd5de\"/>\n";
  // Latency ticks: evenly spaced in log space, with as many significant digits as it takes to
  // tell neighbouring ticks apart (narrow ranges near the end of a search need more).
  std::vector<double> yt;
  for (int k = 0; k <= 5; ++k) yt.push_back(std::pow(10, ly0 + (ly1 - ly0) * (0.04 + 0.92 * k / 5)));
  int sig = 3;
  for (; sig < 9; ++sig) {
    bool distinct = true;
    for (size_t k = 1; k < yt.size(); ++k) distinct &= fmtSig(yt[k], sig) != fmtSig(yt[k - 1], sig);
    if (distinct) break;
  }
  for (double v : yt)
    o << "<line x1=\"" << px(left) << "\" x2=\"" << px(left + plotW) << "\" y1=\"" << px(Y(v)) << "\" y2=\"" << px(Y(v))
      << "\" stroke=\"#eceff3\"/><text x=\"" << px(left - 6) << "\" y=\"" << px(Y(v) + 4)
      << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#667085\">" << fmtSig(v, sig) << "</text>\n";
  std::vector<double> xt = niceTicks(0, xmax, 10);
  double xstep = xt.size() > 1 ? xt[1] - xt[0] : xmax;
  for (double s : xt)
    o << "<line x1=\"" << px(X(s)) << "\" x2=\"" << px(X(s)) << "\" y1=\"" << px(top) << "\" y2=\"" << px(top + plotH)
      << "\" stroke=\"#eceff3\"/><text x=\"" << px(X(s)) << "\" y=\"" << px(top + plotH + 15)
      << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#667085\">" << fmtTick(s, xstep) << "</text>\n";
  o << "<text x=\"" << px(left + plotW / 2) << "\" y=\"" << px(top + plotH + 30)
    << "\" text-anchor=\"middle\" font-size=\"11.5\" fill=\"#667085\">seconds</text>\n";
  if (showLb)
    o << "<line x1=\"" << px(left) << "\" x2=\"" << px(left + plotW) << "\" y1=\"" << px(Y(lbv)) << "\" y2=\"" << px(Y(lbv))
      << "\" stroke=\"#157a3b\" stroke-dasharray=\"6 4\"/><text x=\"" << px(left + plotW + 6) << "\" y=\"" << px(Y(lbv) + 14)
      << "\" font-size=\"11\" fill=\"#157a3b\">LB " << fmtNum(lbv) << "</text>\n";
  auto stepPath = [&](std::vector<TracePoint> v) {
    std::stable_sort(v.begin(), v.end(), [](const TracePoint& a, const TracePoint& b) { return a.seconds < b.seconds; });
    std::string d;
    double best = 1e300;
    for (const auto& tp : v) {
      if (tp.latency >= best) continue;
      if (d.empty()) d = "M" + px(X(tp.seconds)) + " " + px(Y(tp.latency));
      else d += " H" + px(X(tp.seconds)) + " V" + px(Y(tp.latency));
      best = tp.latency;
    }
    d += " H" + px(X(xmax));
    return std::make_pair(d, best);
  };
  auto overall = stepPath(pts);
  o << "<path d=\"" << overall.first << "\" fill=\"none\" stroke=\"#1d2433\" stroke-opacity=\".18\" stroke-width=\"7\"/>\n";
  static const char* kPalette[] = {"#2f6fd0", "#e07b24", "#2ca02c", "#d62728", "#8e5cc7", "#8c564b",
                                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  int wi = 0;
  std::ostringstream legend;
  for (const auto& [name, v] : byWorker) {
    const char* col = kPalette[wi % 10];
    auto sp = stepPath(v);
    o << "<path d=\"" << sp.first << "\" fill=\"none\" stroke=\"" << col << "\" stroke-width=\"1.6\"><title>worker "
      << esc(name) << ": best " << fmtNum(sp.second) << "</title></path>\n";
    if (pts.size() <= 600)
      for (const auto& tp : v)
        o << "<circle cx=\"" << px(X(tp.seconds)) << "\" cy=\"" << px(Y(tp.latency)) << "\" r=\"2\" fill=\"" << col << "\"/>";
    if (wi < 24) legend << "<span><i class=\"sw\" style=\"background:" << col << "\"></i>worker " << esc(name) << "</span>";
    ++wi;
  }
  if (wi > 24) legend << "<span>+" << wi - 24 << " more workers</span>";
  o << "\n";
  // Final best, inside the plot at its right end: below the line (every other line is above it),
  // unless that would collide with the bottom edge or the lower-bound line.
  double yb = Y(overall.second), by = yb + 17;
  if (by > top + plotH - 4 || (showLb && std::fabs(by - 4 - Y(lbv)) < 12)) by = yb - 7;
  o << "<text x=\"" << px(left + plotW - 6) << "\" y=\"" << px(by) << "\" text-anchor=\"end\" font-size=\"12\" font-weight=\"600\" "
       "fill=\"#1d2433\">best " << fmtNum(overall.second) << "</text>\n";
  o << "</svg>\n";
  std::string svg = o.str();
  o.str("");
  o << "<div class=\"legend\">" << legend.str()
    << "<span><i class=\"sw\" style=\"background:#1d2433;opacity:.25\"></i>best over all workers</span>"
    << (showLb ? "<span><i class=\"sw\" style=\"background:#157a3b\"></i>lower bound (dashed)</span>" : "") << "</div>\n"
    << svg;
  o << "<p class=\"note\">" << pts.size() << (pts.size() == 1 ? " improvement from " : " improvements from ") << byWorker.size() << " worker(s); last improvement at "
    << fmtFixed(xmax / 1.03, 2) << " s; first " << fmtNum(pts.front().latency) << " &rarr; best " << fmtNum(overall.second)
    << ".</p>\n";
  return o.str();
}

std::string renderTable(const Ctx& c) {
  std::ostringstream o;
  double maxLat = 0;
  for (const auto& v : c.sg) maxLat = std::max(maxLat, v.latency);
  o << "<table><thead><tr><th>#</th><th>start</th><th>latency</th><th>bound</th><th>ops (id:type)</th><th>[w,h,k]</th>"
       "<th>tiles</th><th>k-steps</th><th>steps</th><th>peak working set</th><th>traversal</th><th>retained into next</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < c.sg.size(); ++i) {
    const auto& sg = c.s.subgraphs[i];
    const auto& rp = c.ev.subgraphs[i];
    const auto& v = c.sg[i];
    double share = c.ev.total > 0 ? v.latency / c.ev.total : 0;
    double occ = static_cast<double>(rp.cost.peak_ws) / static_cast<double>(c.p.capacity);
    o << "<tr id=\"sg-" << i << "\"" << (rp.cost.valid ? "" : " class=\"badrow\"") << "><td class=\"n\">" << i << "</td><td class=\"n\">"
      << fmtNum(v.start) << "</td><td class=\"n\"><div class=\"bv\" title=\"" << fmtFixed(100 * share, 2)
      << "% of total\"><div class=\"bar\"><span class=\"lat\" style=\"width:" << fmtFixed(maxLat > 0 ? 100 * v.latency / maxLat : 0, 1)
      << "%\"></span></div><em>" << (rp.cost.valid ? fmtNum(v.latency) : "&mdash;") << "</em></div></td>";
    o << "<td><span class=\"tag " << boundClass(v.bound) << "\">" << boundLabel(v.bound) << "</span>";
    if (v.bound == SubgraphBound::Mixed) o << " <small>" << rp.cost.compute_bound_steps << "/" << rp.cost.steps << " compute</small>";
    if (!rp.cost.valid) o << "<br><small>" << esc(ruleName(rp.cost.rule)) << ": " << esc(rp.cost.reason) << "</small>";
    o << "</td><td>";
    for (OpId op : sg.ops) {
      const Op& opd = c.p.ops[op];
      TensorId out = opd.outputs.empty() ? -1 : opd.outputs[0];
      o << "<span class=\"chip " << opTypeShort(opd.type) << "\" title=\"op " << op << " " << opTypeName(opd.type);
      if (out >= 0) o << " &rarr; t" << out << " (" << c.p.widths[out] << "&times;" << c.p.heights[out] << ")";
      o << ", base cost " << fmtInt(opd.base_cost) << "\">" << op << ":" << opTypeShort(opd.type) << "</span>";
    }
    o << "</td><td class=\"n\">[" << sg.gran.w << "," << sg.gran.h << "," << sg.gran.k << "]</td><td class=\"n\">"
      << (rp.ntw > 0 ? std::to_string(rp.ntw) + "&times;" + std::to_string(rp.nth) : "&mdash;") << "</td><td class=\"n\">" << rp.nk << "</td><td class=\"n\">" << fmtInt(rp.cost.steps) << "</td>";
    o << "<td class=\"n\"><div class=\"bv\" title=\"" << fmtInt(rp.cost.peak_ws) << " of " << fmtInt(c.p.capacity)
      << "\"><div class=\"bar\"><span class=\"" << (occ > 1 ? "over" : "occb") << "\" style=\"width:" << fmtFixed(100 * std::min(1.0, occ), 1)
      << "%\"></span></div><em>" << fmtShort(static_cast<double>(rp.cost.peak_ws)) << " &middot; " << fmtFixed(100 * occ, 0)
      << "%</em></div></td>";
    o << "<td>" << traversalName(sg.trav.kind) << "</td><td class=\"ret\">" << (sg.retain.empty() ? "" : esc(tensorsText(c.p, sg.retain)))
      << "</td></tr>\n";
  }
  o << "</tbody></table>\n";
  return o.str();
}

std::string renderPage(const Ctx& c, const std::vector<TracePoint>* trace) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>mlsys report: " << esc(c.p.name) << " &mdash; " << fmtNum(c.ev.total) << (c.ev.valid ? "" : " (INVALID)")
    << "</title>\n<style>" << kCss << "</style></head><body>\n";
  o << renderHeader(c);
  o << "<section><h2>Timeline</h2><p class=\"note\">Subgraphs in execution order; width is proportional to latency; rows wrap "
       "like lines of text (the number left of a row is its start time). Hover for details, click to jump to the table row.</p>"
    << "<div class=\"legend\"><span><i class=\"sw cb\"></i>compute-bound (every step: compute &ge; load+store)</span>"
       "<span><i class=\"sw mb\"></i>memory-bound (every step)</span><span><i class=\"sw mx\"></i>mixed</span>"
       "<span><i class=\"sw bad\"></i>invalid</span></div>\n"
    << renderTimeline(c) << "</section>\n";
  o << "<section><h2>Fast-memory occupancy</h2><p class=\"note\">Peak working set of each subgraph (by index) as a share of the "
       "fast-memory capacity. Dark part: tensors retained into or out of the subgraph, resident for its whole run.</p>"
    << "<div class=\"legend\"><span><i class=\"sw\" style=\"background:var(--ret)\"></i>retained tensors</span>"
       "<span><i class=\"sw\" style=\"background:var(--ws)\"></i>tile slices and outputs</span>"
       "<span><i class=\"sw bad\"></i>over capacity</span></div>\n"
    << renderOccupancy(c) << "</section>\n";
  if (trace)
    o << "<section><h2>Convergence</h2><p class=\"note\">Best latency found over time (log scale), one step line per worker.</p>\n"
      << renderConvergence(c, *trace) << "</section>\n";
  if (!c.warnings.empty()) {
    o << "<section><h2 class=\"warn\">Warnings (" << c.warnings.size() << ")</h2><details" << (c.warnings.size() <= 10 ? " open" : "")
      << "><summary>show</summary><ul>\n";
    for (const auto& w : c.warnings) o << "<li>" << esc(w) << "</li>\n";
    o << "</ul></details></section>\n";
  }
  o << "<section><h2>Subgraphs</h2><p class=\"note\">Latency bars are relative to the slowest subgraph; "
       "occupancy bars to the capacity. Ops are listed in execution order (MM = MatMul, PW = Pointwise).</p>\n"
    << renderTable(c) << "</section>\n</main>\n";
  o << "<footer>Generated by mlsys " << MLSYS_VERSION << " (git " << MLSYS_GIT_HASH << ") &middot; model " << esc(c.ev.model.describe())
    << " &middot; exact total " << formatDouble(c.ev.total) << "</footer>\n</body></html>\n";
  return o.str();
}

}  // namespace

int cmdReport(int argc, char** argv) {
  cxxopts::Options o("mlsys report", "Write a self-contained HTML picture of a schedule (timeline, occupancy, table).");
  o.add_options()("o,output", "Output HTML file", cxxopts::value<std::string>())(
      "trace", "CSV from 'mlsys solve --trace' (seconds,worker,latency): adds a convergence plot", cxxopts::value<std::string>())(
      "h,help", "Show help")("positional", "", cxxopts::value<std::vector<std::string>>());
  addModelOption(o);
  o.parse_positional({"positional"});
  o.positional_help("PROBLEM.json SOLUTION.json -o report.html");
  const char* usage = "mlsys report PROBLEM.json SOLUTION.json -o report.html [--trace trace.csv] [--model K=V]...";
  auto r = parseOrThrow(o, argc, argv);
  if (r.count("help")) {
    std::cout << o.help()
              << "\nThe page is written even for an invalid schedule (the violated rule is shown at the top).\n"
                 "Exit codes: 0 report written for a valid schedule, 1 bad input or invalid schedule, 2 usage.\n";
    return 0;
  }
  std::vector<std::string> files = positionals(r, 2, usage);
  if (!r.count("output")) throw UsageError(std::string("missing -o/--output FILE\nusage: ") + usage);
  std::string out = r["output"].as<std::string>();
  if (out.empty()) throw UsageError(std::string("empty -o/--output\nusage: ") + usage);
  ModelOptions m = modelFrom(r);
  Problem p = parseProblemFile(files[0]);
  Schedule s = parseScheduleFile(files[1], p);
  std::vector<TracePoint> trace;
  if (r.count("trace")) trace = readTrace(r["trace"].as<std::string>());
  Evaluation ev = evaluateSchedule(p, s, m);

  Ctx c{p, s, ev, lowerBound(p, m), {}, ev.warnings, files[0], files[1]};
  std::vector<SubgraphReport> prefix;  // exact start times: rational prefix sums, rounded once
  prefix.reserve(ev.subgraphs.size());
  for (size_t i = 0; i < ev.subgraphs.size(); ++i) {
    const auto& cost = ev.subgraphs[i].cost;
    SgView v;
    v.index = static_cast<int>(i);
    v.start = exactTotal(prefix);
    v.latency = cost.valid ? cost.latency : 0;
    prefix.push_back(ev.subgraphs[i]);
    v.bound = boundOf(cost);
    auto addSizes = [&](const std::vector<TensorId>& ts) {
      for (TensorId x : ts) v.retained_ws += p.size(x);
    };
    if (i > 0) addSizes(s.subgraphs[i - 1].retain);
    addSizes(s.subgraphs[i].retain);
    c.sg.push_back(v);
  }
  for (std::string& w : reportedLatencyWarnings(s, ev)) c.warnings.push_back(std::move(w));
  writeFileAtomic(out, renderPage(c, r.count("trace") ? &trace : nullptr));
  std::cerr << "mlsys report: wrote " << out << " (" << p.name << ", " << s.subgraphs.size() << " subgraphs, latency "
            << formatDouble(ev.total) << (ev.valid ? "" : ", INVALID rule " + std::string(ruleName(ev.rule))) << ")\n";
  if (!ev.valid) std::cerr << "mlsys: invalid schedule (rule " << ruleName(ev.rule) << "): " << ev.reason << "\n";
  return ev.valid ? 0 : 1;
}

}  // namespace mlsys
