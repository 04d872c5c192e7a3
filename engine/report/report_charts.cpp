// The report's SVG charts: the timeline of subgraphs, the convergence of a search (or of two, on a
// comparison page). Every number through humanNumber. (The occupancy chart, only on the page of
// one schedule, is in report_schedule.cpp.)
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "engine/report/report_format.h"
#include "engine/report/report_page.h"

namespace mlsys {
namespace {

const char* opTypeName(OpType t) { return t == OpType::MatMul ? "MatMul" : "Pointwise"; }

// A chart label that must stay short: no decimals from 1,000 on.
std::string shortLabel(double v) { return humanNumber(v, std::fabs(v) >= 1000 ? 0 : std::fabs(v) >= 10 ? 1 : 3); }

// Multi-line tooltip of one subgraph (the content of an SVG <title>).
std::string tooltip(const Problem& p, const ScheduleView& v, size_t i) {
  const auto& sg = v.s.subgraphs[i];
  const auto& rp = v.ev.subgraphs[i];
  const SgView& sv = v.sg[i];
  std::ostringstream o;
  o << "subgraph " << i << " (" << boundLabel(sv.bound) << ")\n";
  o << "ops: ";
  for (size_t j = 0; j < sg.ops.size(); ++j) {
    if (j && j % 8 == 0) o << "\n     ";
    o << (j % 8 ? ", " : "") << sg.ops[j] << " " << opTypeName(p.ops[sg.ops[j]].type);
  }
  o << "\n[w,h,k] = [" << sg.gran.w << "," << sg.gran.h << "," << sg.gran.k << "]";
  o << "\ntiles " << humanNumber(rp.ntw) << " x " << humanNumber(rp.nth) << ", k-steps " << humanNumber(rp.nk)
    << ", steps " << humanNumber(rp.cost.steps);
  o << "\nlatency " << humanNumber(rp.cost.latency);
  if (v.ev.total > 0) o << " (" << humanPercent(rp.cost.latency / v.ev.total) << " of total)";
  o << "\nstart " << humanNumber(sv.start);
  if (sv.traffic.known)
    o << "\ncompute " << humanNumber(sv.traffic.compute) << ", memory " << humanNumber(sv.traffic.memory) << "\nloaded "
      << humanNumber(sv.traffic.loaded) << ", stored " << humanNumber(sv.traffic.stored) << " elements";
  o << "\npeak working set " << humanNumber(rp.cost.peak_ws) << " / " << humanNumber(p.capacity) << " ("
    << humanPercent(static_cast<double>(rp.cost.peak_ws) / static_cast<double>(p.capacity)) << ")";
  o << "\ncompute-bound steps " << humanNumber(rp.cost.compute_bound_steps) << ", memory-bound steps "
    << humanNumber(rp.cost.memory_bound_steps);
  if (i > 0 && !v.s.subgraphs[i - 1].retain.empty())
    o << "\nretained in " << tensorsText(p, v.s.subgraphs[i - 1].retain);
  if (!sg.retain.empty()) o << "\nretains out " << tensorsText(p, sg.retain);
  if (!rp.cost.valid) o << "\nINVALID (" << ruleName(rp.cost.rule) << "): " << rp.cost.reason;
  return esc(o.str());
}

const char* kPalette[] = {"#2f6fd0", "#e07b24", "#2ca02c", "#d62728", "#8e5cc7",
                          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

}  // namespace

// Timeline: subgraphs in execution order, width proportional to latency, wrapped into rows that
// each cover about the same span of time (like lines of text), so that even ~150 subgraphs stay
// legible. One <rect class="sg"> per subgraph.
std::string renderTimeline(const Problem& p, const ScheduleView& v, const std::string& id, const std::string& anchor) {
  const int n = static_cast<int>(v.sg.size());
  const double W = 1400, left = 72, right = 16, rowH = 40, gapH = 22, top = 8;
  const double plotW = W - left - right;
  double total = 0;
  for (const auto& g : v.sg) total += g.latency;
  bool equal = !(total > 0);  // nothing to scale by: equal widths
  auto lat = [&](int i) { return equal ? 1.0 : v.sg[i].latency; };
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
    if (remap[r] >= 0) {
      rs[remap[r]] = rowStart[r];
      re[remap[r]] = rowEnd[r];
      maxSpan = std::max(maxSpan, rowEnd[r] - rowStart[r]);
    }
  double scale = maxSpan > 0 ? plotW / maxSpan : 0;
  double H = top + used * (rowH + gapH) + 4;
  std::ostringstream o;
  o << "<svg id=\"" << id << "\" viewBox=\"0 0 " << px(W) << " " << px(H)
    << "\" role=\"img\" aria-label=\"timeline\">\n";
  for (int r = 0; r < used; ++r) {
    double y = top + r * (rowH + gapH);
    double x1 = left + (re[r] - rs[r]) * scale;
    o << "<text x=\"" << px(left - 6) << "\" y=\"" << px(y + rowH / 2 + 4)
      << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#667085\">" << (equal ? "#" : "")
      << (equal ? std::to_string(static_cast<int>(rs[r])) : shortLabel(rs[r])) << "</text>\n";
    o << "<line x1=\"" << px(left) << "\" x2=\"" << px(x1) << "\" y1=\"" << px(y + rowH + 3) << "\" y2=\""
      << px(y + rowH + 3) << "\" stroke=\"#cfd5de\"/>\n";
    o << "<text x=\"" << px(x1) << "\" y=\"" << px(y + rowH + 15)
      << "\" text-anchor=\"end\" font-size=\"10.5\" fill=\"#667085\">" << (equal ? "" : shortLabel(re[r]))
      << "</text>\n";
  }
  t = 0;
  std::ostringstream labels;
  for (int i = 0; i < n; ++i) {
    int r = remap[row[i]];
    double y = top + r * (rowH + gapH);
    double x = left + (t - rs[r]) * scale, w = lat(i) * scale;
    t += lat(i);
    const SgView& g = v.sg[i];
    double wDraw = std::max(w, g.bound == SubgraphBound::Invalid ? 4.0 : 0.8);
    o << "<a href=\"#" << anchor << "sg-" << i << "\"><rect class=\"sg " << boundClass(g.bound)
      << (i == v.ev.bad_subgraph ? " badsg" : "") << "\" data-sg=\"" << i << "\" x=\"" << px(x) << "\" y=\"" << px(y)
      << "\" width=\"" << px(wDraw) << "\" height=\"" << px(rowH) << "\"><title>"
      << tooltip(p, v, static_cast<size_t>(i)) << "</title></rect></a>\n";
    std::string lab = std::to_string(i);
    if (w >= 7.0 * static_cast<double>(lab.size()) + 4)
      labels << "<text x=\"" << px(x + w / 2) << "\" y=\"" << px(y + rowH / 2 + 4)
             << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#fff\" pointer-events=\"none\">" << lab
             << "</text>\n";
    if (g.bound == SubgraphBound::Invalid)
      labels << "<path d=\"M" << px(x + wDraw / 2 - 6) << " " << px(y - 8) << " h12 l-6 7 z\" fill=\"#d62728\"/>\n";
  }
  o << labels.str() << "</svg>\n";
  return o.str();
}

std::vector<size_t> thinSteps(const std::vector<double>& y, double minStepPx, size_t maxExact) {
  std::vector<size_t> keep;
  if (y.size() <= maxExact) {
    keep.resize(y.size());
    for (size_t k = 0; k < y.size(); ++k) keep[k] = k;
    return keep;
  }
  keep.push_back(0);
  for (size_t k = 1; k + 1 < y.size(); ++k)
    if (std::fabs(y[k] - y[keep.back()]) >= minStepPx) keep.push_back(k);
  keep.push_back(y.size() - 1);
  return keep;
}

double traceHorizon(const Trace& t, const Stats* st) {
  if (t.end_s >= 0) return t.end_s;
  if (st && st->elapsed_s > 0) return st->elapsed_s;
  double last = 0;
  for (const auto& tp : t.points) last = std::max(last, tp.seconds);
  return last * 1.03;
}

namespace {

// Every row's time (all runs, `end` excluded), and the first one after 0 s (0 if none).
std::vector<double> rowTimes(const std::vector<TraceRun>& runs, double& firstPositive) {
  std::vector<double> t;
  firstPositive = 0;
  for (const TraceRun& r : runs)
    for (const auto& tp : r.trace->points) {
      t.push_back(tp.seconds);
      if (tp.seconds > 0 && (firstPositive == 0 || tp.seconds < firstPositive)) firstPositive = tp.seconds;
    }
  return t;
}

// The median of `t` (the upper one of an even count); 0 when empty.
double medianOf(std::vector<double> t) {
  if (t.empty()) return 0;
  std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
  return t[t.size() / 2];
}

// The smallest of the runs' median row times (each run's own; runs without rows aside; 1e300
// when none has rows): on a comparison, one run squeezed against the left edge is one too many.
double earliestMedian(const std::vector<TraceRun>& runs) {
  double earliest = 1e300;
  for (const TraceRun& r : runs) {
    double firstPositive = 0;
    const std::vector<double> t = rowTimes({r}, firstPositive);
    if (!t.empty()) earliest = std::min(earliest, medianOf(t));
  }
  return earliest;
}

// The x range of the plot: the horizon, or the last row when later; 1 s when both are 0.
double plotEnd(const std::vector<TraceRun>& runs, double horizon) {
  double xmax = horizon;
  for (const TraceRun& r : runs)
    for (const auto& tp : r.trace->points) xmax = std::max(xmax, tp.seconds);
  return xmax > 0 ? xmax : 1;
}

}  // namespace

bool logTimeAxis(const std::vector<TraceRun>& runs, double horizon, TimeAxis mode) {
  double firstPositive = 0;
  rowTimes(runs, firstPositive);
  if (mode == TimeAxis::Linear || firstPositive <= 0) return false;
  if (mode == TimeAxis::Log) return true;
  return earliestMedian(runs) < kEarlyShare * plotEnd(runs, horizon);
}

namespace {

// The convergence plot's frame and scales: time from 0 to xmax (or, on a log time axis, from t0,
// the value 1, 2 or 5 x 10^n at or below the first row after 0 s; earlier rows at its left edge), latency on
// a log axis from 10^ly0 to 10^ly1; the lower bound lbv is drawn when showLb.
struct ConvPlot {
  static constexpr double W = 1400, left = 92, right = 120, top = 14, plotH = 260, bottom = 34;
  static constexpr double plotW = W - left - right;
  double xmax = 0, ly0 = 0, ly1 = 0, lbv = 0;
  bool showLb = false, logX = false;
  double t0 = 0, lx0 = 0, lx1 = 0;  // the log time axis: t0 = 10^lx0, xmax = 10^lx1
  double X(double s) const {
    if (!logX) return left + plotW * s / xmax;
    return left + plotW * (std::log10(std::max(s, t0)) - lx0) / (lx1 - lx0);
  }
  double Y(double v) const { return top + plotH * (1 - (std::log10(v) - ly0) / (ly1 - ly0)); }
};

// What the runs' lines add up to, for the final label, the legend and the note.
struct ConvTotals {
  int series = 0;
  double overallBest = 1e300;
  size_t improvements = 0, constructed = 0;
  std::map<std::string, int> workers;
};

// The ranges: time up to the horizon or the last row, latency over every row (and the lower
// bound when it is within a factor 20 of them), padded by 6% in log space.
ConvPlot convergenceRange(const std::vector<TraceRun>& runs, double lbv, double horizon, TimeAxis mode) {
  ConvPlot c;
  double ymin = 1e300, ymax = 0;
  for (const TraceRun& r : runs)
    for (const auto& tp : r.trace->points) {
      ymin = std::min(ymin, tp.latency);
      ymax = std::max(ymax, tp.latency);
    }
  c.lbv = lbv;
  c.showLb = lbv > 0 && lbv >= ymin / 20;
  if (c.showLb) ymin = std::min(ymin, lbv);
  c.xmax = plotEnd(runs, horizon);
  c.logX = logTimeAxis(runs, horizon, mode);
  if (c.logX) {
    double firstPositive = 0;
    rowTimes(runs, firstPositive);
    // The round value 1, 2 or 5 x 10^n at or below the first row after 0 s: the axis starts on a tick.
    const double p10 = std::pow(10.0, std::floor(std::log10(firstPositive)));
    c.t0 = firstPositive >= 5 * p10 ? 5 * p10 : firstPositive >= 2 * p10 ? 2 * p10 : p10;
    if (c.t0 >= c.xmax) c.t0 = std::pow(10.0, std::floor(std::log10(c.xmax)) - 1);
    c.lx0 = std::log10(c.t0);
    c.lx1 = std::log10(c.xmax);
  }
  double ly0 = std::log10(ymin), ly1 = std::log10(ymax);
  if (ly1 - ly0 < 1e-3) {
    ly0 -= 0.01;
    ly1 += 0.01;
  }
  double pad = (ly1 - ly0) * 0.06;
  c.ly0 = ly0 - pad;
  c.ly1 = ly1 + pad;
  return c;
}

// The <svg> start, the plot frame, the latency and time ticks (round values: logAxisTicks,
// axisTicks) with their grid lines, and the lower bound line.
void convergenceAxes(std::ostringstream& o, const ConvPlot& c) {
  const double left = c.left, top = c.top, plotW = c.plotW, plotH = c.plotH;
  o << "<svg id=\"convergence\" viewBox=\"0 0 " << px(c.W) << " " << px(top + plotH + c.bottom)
    << "\" role=\"img\" aria-label=\"convergence\">\n";
  o << "<rect x=\"" << px(left) << "\" y=\"" << px(top) << "\" width=\"" << px(plotW) << "\" height=\"" << px(plotH)
    << "\" fill=\"#fbfcfd\" stroke=\"#cfd5de\"/>\n";
  const std::vector<double> yt = logAxisTicks(std::pow(10, c.ly0), std::pow(10, c.ly1), 7);
  const int dec = tickDecimals(yt);
  for (double v : yt)
    o << "<line class=\"ytick\" x1=\"" << px(left) << "\" x2=\"" << px(left + plotW) << "\" y1=\"" << px(c.Y(v))
      << "\" y2=\"" << px(c.Y(v)) << "\" stroke=\"#eceff3\"/><text x=\"" << px(left - 6) << "\" y=\"" << px(c.Y(v) + 4)
      << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#667085\">" << humanNumber(v, dec) << "</text>\n";
  const std::vector<double> xt = c.logX ? logAxisTicks(c.t0, c.xmax, 10) : axisTicks(0, c.xmax, 10);
  const int xdec = tickDecimals(xt);
  for (double s : xt)
    o << "<line class=\"xtick\" x1=\"" << px(c.X(s)) << "\" x2=\"" << px(c.X(s)) << "\" y1=\"" << px(top) << "\" y2=\""
      << px(top + plotH) << "\" stroke=\"#eceff3\"/><text x=\"" << px(c.X(s)) << "\" y=\"" << px(top + plotH + 15)
      << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#667085\">" << humanNumber(s, s == 0 ? 0 : xdec)
      << "</text>\n";
  o << "<text x=\"" << px(left + plotW / 2) << "\" y=\"" << px(top + plotH + 30)
    << "\" text-anchor=\"middle\" font-size=\"11.5\" fill=\"#667085\">" << (c.logX ? "seconds (log scale)" : "seconds")
    << "</text>\n";
  if (c.showLb)
    o << "<line x1=\"" << px(left) << "\" x2=\"" << px(left + plotW) << "\" y1=\"" << px(c.Y(c.lbv)) << "\" y2=\""
      << px(c.Y(c.lbv)) << "\" stroke=\"#157a3b\" stroke-dasharray=\"6 4\"/><text x=\"" << px(left + plotW + 6)
      << "\" y=\"" << px(c.Y(c.lbv) + 14) << "\" font-size=\"11\" fill=\"#157a3b\">LB " << humanNumber(c.lbv)
      << "</text>\n";
}

// A running-minimum step line up to `until` seconds, and the best it reaches; its vertices
// thinned by thinSteps (a no-op up to kMaxExactSteps improvements).
std::pair<std::string, double> stepPath(const ConvPlot& c, std::vector<TracePoint> v, double until) {
  std::stable_sort(v.begin(), v.end(), [](const TracePoint& a, const TracePoint& b) { return a.seconds < b.seconds; });
  std::vector<const TracePoint*> steps;  // the improvements of the running minimum
  double best = 1e300;
  for (const auto& tp : v)
    if (tp.latency < best) {
      steps.push_back(&tp);
      best = tp.latency;
    }
  std::vector<double> ys;
  ys.reserve(steps.size());
  for (const TracePoint* tp : steps) ys.push_back(c.Y(tp->latency));
  std::string d;
  for (size_t k : thinSteps(ys, kMinStepPx, kMaxExactSteps)) {
    // Appended piece by piece: "M" + px(..) + .. trips GCC 12's false -Wrestrict (bug 105329).
    const bool first = d.empty();
    d.append(first ? "M" : " H").append(px(c.X(steps[k]->seconds))).append(first ? " " : " V").append(px(ys[k]));
  }
  d += " H" + px(c.X(std::max(until, v.empty() ? 0.0 : v.back().seconds)));
  return std::make_pair(d, best);
}

// The only run: its overall best as a wide pale line, then a step line per search worker (with
// its points when the trace is small) and a triangle per constructor schedule (chain, greedy: one
// schedule each, not a line across the run; at most kMaxConstructionMarks), a legend entry each
// (the first 24).
void singleRunLines(std::ostringstream& o, std::ostringstream& legend, const ConvPlot& c, const Trace& tr, double until,
                    size_t rows, ConvTotals& t) {
  auto overall = stepPath(c, tr.points, until);
  t.overallBest = std::min(t.overallBest, overall.second);
  o << "<path d=\"" << overall.first
    << "\" fill=\"none\" stroke=\"#1d2433\" stroke-opacity=\".18\" stroke-width=\"7\"/>\n";
  std::map<std::string, std::vector<TracePoint>> byWorker, byConstructor;
  for (const auto& tp : tr.points)
    if (isConstructorRow(tp.worker)) byConstructor[tp.worker].push_back(tp);
    else if (!isConstructionRow(tp.worker)) byWorker[tp.worker].push_back(tp);
  auto legendEntry = [&](const char* col, const std::string& label, bool triangle) {
    if (t.series < 24)
      legend << "<span><i class=\"" << (triangle ? "tri\" style=\"color:" : "sw\" style=\"background:") << col
             << "\"></i>" << esc(label) << "</span>";
    ++t.series;
  };
  for (const auto& [name, v] : byWorker) {
    const char* col = kPalette[t.series % 10];
    auto sp = stepPath(c, v, until);
    o << "<path d=\"" << sp.first << "\" fill=\"none\" stroke=\"" << col << "\" stroke-width=\"1.6\"><title>worker "
      << esc(name) << ": best " << humanNumber(sp.second) << "</title></path>\n";
    if (rows <= 600)
      for (const auto& tp : v)
        o << "<circle cx=\"" << px(c.X(tp.seconds)) << "\" cy=\"" << px(c.Y(tp.latency)) << "\" r=\"2\" fill=\"" << col
          << "\"/>";
    legendEntry(col, "worker " + name, false);
    t.improvements += v.size();
    t.workers[name] = 1;
  }
  size_t marks = 0;
  for (const auto& [name, v] : byConstructor) {
    const char* col = kPalette[t.series % 10];
    for (const auto& tp : v) {
      if (++marks > kMaxConstructionMarks) break;
      const double x = c.X(tp.seconds), y = c.Y(tp.latency);
      o << "<path class=\"ctor\" d=\"M" << px(x) << " " << px(y - 6) << " l6 10 h-12 z\" fill=\"" << col
        << "\" stroke=\"#fff\" stroke-width=\"1\"><title>constructor " << esc(name) << " at " << humanNumber(tp.seconds)
        << " s: " << humanNumber(tp.latency) << "</title></path>\n";
    }
    legendEntry(col, "constructor " + name, true);
    t.constructed += v.size();
  }
  if (t.series > 24) legend << "<span>+" << t.series - 24 << " more workers and constructors</span>";
}

// One run of a comparison: its best as one labelled line, and a legend entry.
void comparedRunLine(std::ostringstream& o, std::ostringstream& legend, const ConvPlot& c, const TraceRun& run,
                     size_t ri, double until, ConvTotals& t) {
  auto overall = stepPath(c, run.trace->points, until);
  t.overallBest = std::min(t.overallBest, overall.second);
  const char* col = kPalette[ri % 10];
  o << "<path d=\"" << overall.first << "\" fill=\"none\" stroke=\"" << col << "\" stroke-width=\"2.2\"><title>"
    << esc(run.label) << ": best " << humanNumber(overall.second) << "</title></path>\n";
  legend << "<span><i class=\"sw\" style=\"background:" << col << "\"></i>" << esc(run.label) << ": best "
         << humanNumber(overall.second) << "</span>";
}

// A run's construction rows and its end: a diamond each, named in its tooltip (and labelled on a
// single run). A run writes at most three (first, baseline, exact); past kMaxConstructionMarks
// the rest are not drawn (a hand-made trace cannot grow the page without bound). Then a dotted
// line at the `end` row.
void runMarks(std::ostringstream& marks, const ConvPlot& c, const TraceRun& run, bool single) {
  const Trace& tr = *run.trace;
  size_t constructionMarks = 0;
  for (const auto& tp : tr.points) {
    if (!isConstructionRow(tp.worker) || ++constructionMarks > kMaxConstructionMarks) continue;
    double cx = c.X(tp.seconds), cy = c.Y(tp.latency);
    marks << "<path class=\"cons\" d=\"M" << px(cx) << " " << px(cy - 5)
          << " l5 5 l-5 5 l-5 -5 z\" fill=\"#fff\" stroke=\"#1d2433\" "
          << "stroke-width=\"1.3\"><title>" << esc((single ? "" : run.label + ": ") + tp.worker) << " at "
          << humanNumber(tp.seconds) << " s: " << humanNumber(tp.latency) << "</title></path>";
    if (single)
      marks << "<text x=\"" << px(cx + 8) << "\" y=\"" << px(cy - 6) << "\" font-size=\"10.5\" fill=\"#667085\">"
            << esc(tp.worker) << "</text>";
    marks << "\n";
  }
  if (tr.end_s >= 0)
    marks << "<line x1=\"" << px(c.X(tr.end_s)) << "\" x2=\"" << px(c.X(tr.end_s)) << "\" y1=\"" << px(c.top)
          << "\" y2=\"" << px(c.top + c.plotH) << "\" stroke=\"#1d2433\" stroke-dasharray=\"2 3\"><title>"
          << esc(single ? std::string("the run") : run.label) << " ended at " << humanNumber(tr.end_s)
          << " s; on disk: " << humanNumber(tr.end_latency) << "</title></line>\n";
}

// Final best, inside the plot at its right end: below the line (every other line is above it),
// unless that would collide with the bottom edge or the lower-bound line.
void finalBestLabel(std::ostringstream& o, const ConvPlot& c, double overallBest) {
  double yb = c.Y(overallBest), by = yb + 17;
  if (by > c.top + c.plotH - 4 || (c.showLb && std::fabs(by - 4 - c.Y(c.lbv)) < 12)) by = yb - 7;
  o << "<text x=\"" << px(c.left + c.plotW - 6) << "\" y=\"" << px(by)
    << "\" text-anchor=\"end\" font-size=\"12\" font-weight=\"600\" fill=\"#1d2433\">best " << humanNumber(overallBest)
    << "</text>\n";
}

// Which time axis the plot has, and why (a sentence for the note; "" on a linear axis by choice of Auto).
std::string timeAxisNote(const std::vector<TraceRun>& runs, const ConvPlot& c, TimeAxis mode) {
  if (mode == TimeAxis::Linear) return "Time axis linear (--time-axis linear).";
  if (!c.logX) return "";
  if (mode == TimeAxis::Log) return "Time axis logarithmic (--time-axis log).";
  return std::string("Time axis logarithmic: the improvements cluster early (half of ") +
         (runs.size() == 1 ? "them" : "one run's improvements") + " by " + humanNumber(earliestMedian(runs), 3) +
         " s of " + humanNumber(c.xmax, 3) + " s); --time-axis linear for a linear one.";
}

// The legend above the plot, the plot, and a note: the time axis, and on a single run its improvements.
std::string convergenceFigure(const std::string& legend, const std::string& svg, const std::vector<TraceRun>& runs,
                              bool showLb, const ConvTotals& t, const std::string& axisNote) {
  const bool single = runs.size() == 1;
  std::ostringstream o;
  o << "<div class=\"legend\">" << legend;
  if (single) o << "<span><i class=\"sw\" style=\"background:#1d2433;opacity:.25\"></i>best over all workers</span>";
  o << "<span><i class=\"sw\" style=\"background:#fff;border:1.3px solid #1d2433\"></i>first schedule, baseline, exact solver</span>"
    << (showLb ? "<span><i class=\"sw\" style=\"background:#157a3b\"></i>lower bound (dashed)</span>" : "")
    << "</div>\n"
    << svg;
  if (single) {
    const Trace& tr = *runs[0].trace;
    const std::string ctors = humanNumber(static_cast<i64>(t.constructed)) + " constructor schedule(s)";
    o << "<p class=\"note\">";
    if (!t.workers.empty())
      o << humanNumber(static_cast<i64>(t.improvements))
        << (t.improvements == 1 ? " improvement from " : " improvements from ") << t.workers.size() << " worker(s)"
        << (t.constructed > 0 ? " and " + ctors : "");
    else if (t.constructed > 0) o << ctors << " and no improvement from a search worker";
    else o << "No improvement from a search worker";
    o << "; first " << humanNumber(tr.points.front().latency) << " &rarr; best " << humanNumber(t.overallBest);
    if (tr.end_s >= 0)
      o << "; the run ended at " << humanNumber(tr.end_s, 2) << " s with " << humanNumber(tr.end_latency) << " on disk";
    else o << "; the trace has no end row (written by an older version, or the run was killed)";
    o << ". " << axisNote << "</p>\n";
  } else if (!axisNote.empty()) {
    o << "<p class=\"note\">" << axisNote << "</p>\n";
  }
  return o.str();
}

}  // namespace

// Best latency over time: a step line per search worker (running minimum of its improvements)
// and the overall best underneath, or one best line per run on a comparison; construction rows
// (first schedule, baseline, exact) as labelled points, constructor rows as triangles; log-scaled
// latency axis; time from 0 (or log-scaled, logTimeAxis) to the horizon; the lower bound dashed.
std::string renderConvergence(const std::vector<TraceRun>& runs, double lbv, double horizon, TimeAxis timeAxis) {
  size_t rows = 0;
  for (const TraceRun& r : runs) rows += r.trace->points.size();
  if (rows == 0) return "<p class=\"note\">The trace has no rows.</p>\n";
  const bool single = runs.size() == 1;
  const ConvPlot c = convergenceRange(runs, lbv, horizon, timeAxis);
  std::ostringstream o, legend, marks;
  convergenceAxes(o, c);
  ConvTotals t;
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    const Trace& tr = *runs[ri].trace;
    const double until = tr.end_s >= 0 ? tr.end_s : c.xmax;
    if (single) singleRunLines(o, legend, c, tr, until, rows, t);
    else comparedRunLine(o, legend, c, runs[ri], ri, until, t);
    runMarks(marks, c, runs[ri], single);
  }
  o << marks.str();
  finalBestLabel(o, c, t.overallBest);
  o << "</svg>\n";
  return convergenceFigure(legend.str(), o.str(), runs, c.showLb, t, timeAxisNote(runs, c, timeAxis));
}

}  // namespace mlsys
