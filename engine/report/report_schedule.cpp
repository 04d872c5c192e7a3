// `mlsys report`'s page of one schedule: the header and its cards, the timeline, the occupancy chart,
// with --trace the convergence, with --stats the solver's statistics, the warnings, and the
// table of every subgraph.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "cost/model/json_util.h"
#include "engine/report/report_format.h"
#include "engine/report/report_page.h"
#include "engine/search/run_state.h"

namespace mlsys {

namespace {

struct Ctx {
  const Problem& p;
  const ScheduleView& v;
  const LowerBound& lb;
  std::string problem_path;
  std::string bound_note;  // "" when the bound got its exact covers, else what degraded it
};

std::string renderHeader(const Ctx& c) {
  const Evaluation& ev = c.v.ev;
  std::ostringstream o;
  int mm = 0;
  for (const auto& op : c.p.ops) mm += op.type == OpType::MatMul;
  o << "<header><h1>mlsys report &mdash; " << esc(c.p.name) << "</h1><div class=\"sub\">problem " << esc(c.problem_path)
    << " &middot; schedule " << esc(c.v.path) << " &middot; model " << esc(ev.model.describe())
    << "</div></header>\n<main>\n";
  if (!ev.valid) {
    o << "<div class=\"banner\"><b>INVALID schedule &mdash; rule " << esc(ruleName(ev.rule)) << "</b> &middot; "
      << violationsText(ev) << "<br>" << esc(ev.reason);
    if (ev.bad_subgraph >= 0)
      o << " <a href=\"#sg-" << ev.bad_subgraph << "\">(go to subgraph " << ev.bad_subgraph << ")</a>";
    o << "<br><small>Latencies below are what the cost model computes for each valid subgraph; the schedule has no "
         "total, and the contest would score it 0.</small></div>\n";
  }
  double lbv = c.lb.value();
  o << "<div class=\"cards\">\n";
  // An invalid schedule has no total (the contest scores it 0) and so no gap: its cards say
  // "invalid" and count its violations instead.
  if (ev.valid) {
    o << card("ok", "validity", "valid", "all rules V1&ndash;V11 hold");
    o << card("", "total latency", humanNumber(ev.total),
              humanNumber(static_cast<i64>(c.v.s.subgraphs.size())) + " subgraphs");
  } else {
    o << card("no", "validity", "INVALID", violationsText(ev));
    o << card("no", "total latency", "invalid",
              "no total: the contest scores an invalid schedule 0 &middot; " +
                  humanNumber(static_cast<i64>(c.v.s.subgraphs.size())) + " subgraphs");
  }
  o << card("", "lower bound", humanNumber(lbv),
            "compute " + humanNumber(c.lb.compute) + " &middot; traffic " + humanNumber(c.lb.traffic) +
                (c.bound_note.empty() ? "" : " &middot; " + esc(c.bound_note)));
  if (ev.valid)
    o << card("", "gap to bound", lbv > 0 ? humanPercent(gapOf(ev.total, lbv), 2) : "n/a",
              lbv > 0 ? "(latency &minus; bound) / latency; latency / bound = " + humanNumber(ev.total / lbv, 3) : "");
  double tc = 0, tm = 0, tx = 0;
  for (const auto& g : c.v.sg)
    (g.bound == SubgraphBound::Compute ? tc : g.bound == SubgraphBound::Memory ? tm : tx) += g.latency;
  const double tot = tc + tm + tx > 0 ? tc + tm + tx : 1;  // of the valid subgraphs' time
  o << card("", "time by bound",
            "<span style=\"color:var(--cb)\">" + humanPercent(tc / tot, 0) +
                "</span> / <span style=\"color:var(--mb)\">" + humanPercent(tm / tot, 0) + "</span>",
            "in compute- / memory-bound subgraphs" +
                (tx > 0 ? ", " + humanPercent(tx / tot, 0) + " mixed" : std::string()) +
                (ev.valid ? "" : " (valid subgraphs)"));
  std::string partial = c.v.traffic_known ? "" : " (valid subgraphs)";
  o << card("", "compute / memory time", humanNumber(c.v.compute, 0) + " / " + humanNumber(c.v.memory, 0),
            "sums over the subgraphs" + partial + "; each step costs the larger of the two");
  o << card("", "elements moved", humanNumber(c.v.loaded + c.v.stored, 0),
            "loaded " + humanNumber(c.v.loaded, 0) + " &middot; stored " + humanNumber(c.v.stored, 0) + partial);
  o << card("", "problem", humanNumber(c.p.numOps()) + " ops",
            humanNumber(mm) + " MatMul, " + humanNumber(c.p.numOps() - mm) + " Pointwise, " +
                humanNumber(c.p.numTensors()) + " tensors");
  o << card(
      "", "machine", humanNumber(c.p.capacity),
      "capacity &middot; bandwidth " + humanNumber(c.p.bandwidth) + " &middot; native " + humanNumber(c.p.native));
  o << "</div>\n";
  return o.str();
}

// A right-aligned number with a bar of `frac` (0..1) of the cell's bar width.
std::string barCell(const std::string& barClass, double frac, const std::string& text, const std::string& title) {
  return "<td class=\"n\"><div class=\"bv\" title=\"" + title + "\"><div class=\"bar\"><span class=\"" + barClass +
         "\" style=\"width:" + px(100 * std::clamp(frac, 0.0, 1.0)) + "%\"></span></div><em>" + text +
         "</em></div></td>";
}

std::string renderTable(const Ctx& c) {
  const ScheduleView& v = c.v;
  std::ostringstream o;
  double maxLat = 0;
  for (const auto& g : v.sg) maxLat = std::max(maxLat, g.latency);
  // Fits 1400 px (issue 35): a smaller font, numbers over thin bars, wrapping op and tensor lists.
  o << "<div class=\"scroll\"><table class=\"wide\" id=\"subgraphs\"><thead><tr><th class=\"n\">#</th><th class=\"n\">start</th>"
       "<th class=\"n\">latency</th><th>bound</th><th class=\"n\">compute</th><th class=\"n\">memory</th><th class=\"n\">loaded</th>"
       "<th class=\"n\">stored</th><th>ops (id:type)</th><th class=\"n\">[w,h,k]</th><th class=\"n\">tiles</th><th class=\"n\">k&#8209;steps</th>"
       "<th class=\"n\">steps</th><th class=\"n\">peak working set</th><th>traversal</th><th>retained&nbsp;in</th><th>retained&nbsp;out</th>"
       "</tr></thead><tbody>\n";
  for (size_t i = 0; i < v.sg.size(); ++i) {
    const auto& sg = v.s.subgraphs[i];
    const auto& rp = v.ev.subgraphs[i];
    const SgView& g = v.sg[i];
    const SubgraphTraffic& tr = g.traffic;
    double share = v.ev.total > 0 ? g.latency / v.ev.total : 0;
    double occ = static_cast<double>(rp.cost.peak_ws) / static_cast<double>(c.p.capacity);
    o << "<tr id=\"sg-" << i << "\"" << (rp.cost.valid ? "" : " class=\"badrow\"") << "><td class=\"n\">" << i
      << "</td><td class=\"n\">" << humanNumber(g.start) << "</td>"
      << barCell("lat", maxLat > 0 ? g.latency / maxLat : 0, rp.cost.valid ? humanNumber(g.latency) : "&mdash;",
                 humanPercent(share, 2) + " of total");
    o << "<td><span class=\"tag " << boundClass(g.bound) << "\">" << boundLabel(g.bound) << "</span>";
    if (g.bound == SubgraphBound::Mixed)
      o << " <small>" << humanNumber(rp.cost.compute_bound_steps) << "/" << humanNumber(rp.cost.steps)
        << " compute</small>";
    if (!rp.cost.valid) o << "<br><small>" << esc(ruleName(rp.cost.rule)) << ": " << esc(rp.cost.reason) << "</small>";
    o << "</td>";
    if (tr.known) {
      double both = tr.compute + tr.memory;
      o << "<td class=\"n\"><div class=\"bv\" title=\"compute " << humanPercent(both > 0 ? tr.compute / both : 0)
        << " of compute + memory\"><div class=\"split\"><span class=\"cb\" style=\"width:"
        << px(both > 0 ? 100 * tr.compute / both : 0)
        << "%\"></span><span class=\"mb\" style=\"width:" << px(both > 0 ? 100 * tr.memory / both : 0)
        << "%\"></span></div><em>" << humanNumber(tr.compute) << "</em></div></td><td class=\"n\">"
        << humanNumber(tr.memory) << "</td><td class=\"n\">" << humanNumber(tr.loaded) << "</td><td class=\"n\">"
        << humanNumber(tr.stored) << "</td>";
    } else {
      o << "<td class=\"n\">&mdash;</td><td class=\"n\">&mdash;</td><td class=\"n\">&mdash;</td><td class=\"n\">&mdash;</td>";
    }
    o << "<td class=\"ops\">" << opChips(c.p, sg.ops) << "</td><td class=\"n\">[" << sg.gran.w << "," << sg.gran.h
      << "," << sg.gran.k << "]</td><td class=\"n\">"
      << (rp.ntw > 0 ? humanNumber(rp.ntw) + "&times;" + humanNumber(rp.nth) : "&mdash;") << "</td><td class=\"n\">"
      << humanNumber(rp.nk) << "</td><td class=\"n\">" << humanNumber(rp.cost.steps) << "</td>";
    o << barCell(occ > 1 ? "over" : "occb", occ,
                 humanNumber(rp.cost.peak_ws) + " &middot;&nbsp;" + humanPercent(occ, 0),
                 humanNumber(rp.cost.peak_ws) + " of " + humanNumber(c.p.capacity));
    const auto& rin = i > 0 ? v.s.subgraphs[i - 1].retain : std::vector<TensorId>{};
    o << "<td>" << traversalName(sg.trav.kind) << "</td><td class=\"ret\">"
      << (rin.empty() ? "" : esc(tensorsText(c.p, rin))) << "</td><td class=\"ret\">"
      << (sg.retain.empty() ? "" : esc(tensorsText(c.p, sg.retain))) << "</td></tr>\n";
  }
  o << "</tbody></table></div>\n";
  return o.str();
}

}  // namespace

// Peak fast-memory working set of each subgraph against the capacity, in subgraph order; the
// darker part is tensors retained into or out of the subgraph (resident for its whole run).
std::string renderOccupancy(const Problem& p, const ScheduleView& v) {
  const int n = static_cast<int>(v.sg.size());
  const double W = 1400, left = 72, right = 16, top = 14, plotH = 130, bottom = 26;
  const double plotW = W - left - right;
  const double cap = static_cast<double>(p.capacity);
  double maxFrac = 1;
  for (int i = 0; i < n; ++i) maxFrac = std::max(maxFrac, static_cast<double>(v.ev.subgraphs[i].cost.peak_ws) / cap);
  double yTop = maxFrac > 1 ? maxFrac * 1.05 : 1.0;
  auto Y = [&](double frac) { return top + plotH * (1 - frac / yTop); };
  double bw = plotW / std::max(1, n);
  std::ostringstream o;
  o << "<svg id=\"occupancy\" viewBox=\"0 0 " << px(W) << " " << px(top + plotH + bottom)
    << "\" role=\"img\" aria-label=\"occupancy\">\n";
  for (double f : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    o << "<line x1=\"" << px(left) << "\" x2=\"" << px(W - right) << "\" y1=\"" << px(Y(f)) << "\" y2=\"" << px(Y(f))
      << "\" stroke=\"" << (f == 1.0 ? "#1d2433" : "#e4e7ec") << "\"" << (f == 1.0 ? " stroke-dasharray=\"5 3\"" : "")
      << "/>\n";
    o << "<text x=\"" << px(left - 6) << "\" y=\"" << px(Y(f) + 4)
      << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#667085\">" << humanPercent(f, 0) << "</text>\n";
  }
  for (int i = 0; i < n; ++i) {
    const auto& cost = v.ev.subgraphs[i].cost;
    double frac = static_cast<double>(cost.peak_ws) / cap;
    double rfrac = std::min(frac, static_cast<double>(v.sg[i].retained_ws) / cap);
    double x = left + i * bw + (bw > 3 ? 0.5 : 0), w = std::max(0.6, bw - (bw > 3 ? 1 : 0));
    std::string tip = "subgraph " + std::to_string(i) + ": peak working set " + humanNumber(cost.peak_ws) + " of " +
                      humanNumber(p.capacity) + " (" + humanPercent(frac) + ")";
    if (v.sg[i].retained_ws > 0) tip += "\nretained tensors resident: " + humanNumber(v.sg[i].retained_ws);
    o << "<a href=\"#sg-" << i << "\"><g><title>" << esc(tip) << "</title>";
    o << "<rect class=\"" << (frac > 1 ? "over" : "occ") << "\" x=\"" << px(x) << "\" y=\"" << px(Y(frac))
      << "\" width=\"" << px(w) << "\" height=\"" << px(Y(0) - Y(frac)) << "\"/>";
    if (rfrac > 0)
      o << "<rect class=\"occr\" x=\"" << px(x) << "\" y=\"" << px(Y(rfrac)) << "\" width=\"" << px(w) << "\" height=\""
        << px(Y(0) - Y(rfrac)) << "\"/>";
    if (!cost.valid)
      o << "<text x=\"" << px(x + w / 2) << "\" y=\"" << px(Y(0) - 4)
        << "\" text-anchor=\"middle\" font-size=\"12\" font-weight=\"700\" fill=\"#d62728\">&#215;</text>";
    o << "</g></a>\n";
  }
  o << "<text x=\"" << px(W - right) << "\" y=\"" << px(Y(1) - 4)
    << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#1d2433\">capacity " << humanNumber(p.capacity) << "</text>\n";
  int step = std::max(1, n / 20);
  for (int nice : {1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000})
    if (nice >= step) {
      step = nice;
      break;
    }
  for (int i = 0; i < n; i += step)
    o << "<text x=\"" << px(left + (i + 0.5) * bw) << "\" y=\"" << px(Y(0) + 15)
      << "\" text-anchor=\"middle\" font-size=\"10.5\" fill=\"#667085\">" << i << "</text>\n";
  o << "</svg>\n";
  return o.str();
}

std::string renderSchedulePage(const Problem& p, const std::string& problem_path, const LowerBound& lb,
                               const std::string& boundNote, const ScheduleView& v, const Trace* trace,
                               const Stats* stats, TimeAxis timeAxis) {
  const Ctx c{p, v, lb, problem_path, boundNote};
  std::ostringstream o;
  o << pageStart("mlsys report: " + esc(c.p.name) + " &mdash; " +
                 (c.v.ev.valid ? humanNumber(c.v.ev.total) : "INVALID"));
  o << renderHeader(c);
  o << "<section><h2>Timeline</h2><p class=\"note\">Subgraphs in execution order; width is proportional to latency; rows wrap "
       "like lines of text (the number left of a row is its start time). Hover for details, click to jump to the table row.</p>"
    << "<div class=\"legend\"><span><i class=\"sw cb\"></i>compute-bound (every step: compute &ge; load+store)</span>"
       "<span><i class=\"sw mb\"></i>memory-bound (every step)</span><span><i class=\"sw mx\"></i>mixed</span>"
       "<span><i class=\"sw bad\"></i>invalid</span></div>\n"
    << renderTimeline(c.p, c.v, "timeline", "") << "</section>\n";
  o << "<section><h2>Fast-memory occupancy</h2><p class=\"note\">Peak working set of each subgraph (by index) as a share of the "
       "fast-memory capacity. Dark part: tensors retained into or out of the subgraph, resident for its whole run.</p>"
    << "<div class=\"legend\"><span><i class=\"sw\" style=\"background:var(--ret)\"></i>retained tensors</span>"
       "<span><i class=\"sw\" style=\"background:var(--ws)\"></i>tile slices and outputs</span>"
       "<span><i class=\"sw bad\"></i>over capacity</span></div>\n"
    << renderOccupancy(c.p, c.v) << "</section>\n";
  if (trace)
    o << "<section><h2>Convergence</h2><p class=\"note\">Best latency over the whole run (log scale): the first schedule, the "
         "baseline, the constructors' schedules, then one step line per search worker, up to the end of the run.</p>\n"
      << renderConvergence({{"", trace}}, c.lb.value(), traceHorizon(*trace, stats), timeAxis) << "</section>\n";
  if (stats)
    o << "<section><h2>Solver statistics</h2><p class=\"note\">From " << esc(stats->path)
      << " (<code>mlsys solve --stats</code>).</p>\n"
      << renderStats({stats}, {"value"}) << "</section>\n";
  o << renderWarnings(c.v.warnings);
  o << "<section><h2>Subgraphs</h2><p class=\"note\">Latency bars are relative to the slowest subgraph, occupancy bars to the "
       "capacity. Compute and memory are the subgraph's summed step compute and (load + store) / bandwidth (the split bar: their "
       "ratio); each step costs the larger, so the latency lies between the larger sum and both. Loaded and stored count elements "
       "moved from and to slow memory. Ops are listed in execution order (MM = MatMul, PW = Pointwise).</p>\n"
    << renderTable(c) << "</section>\n</main>\n";
  o << pageEnd(c.v.ev.model.describe(), "");
  return o.str();
}

}  // namespace mlsys
