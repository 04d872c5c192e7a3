// `mlsys report`'s page of one schedule: the header and its cards, the timeline, the occupancy,
// with --trace the convergence, with --stats the solver's statistics, the warnings, and the
// table of every subgraph.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "cost/json_util.h"
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
    o << "<div class=\"banner\"><b>INVALID schedule &mdash; rule " << esc(ruleName(ev.rule)) << "</b><br>"
      << esc(ev.reason);
    if (ev.bad_subgraph >= 0)
      o << " <a href=\"#sg-" << ev.bad_subgraph << "\">(go to subgraph " << ev.bad_subgraph << ")</a>";
    o << "<br><small>Latencies below are what the cost model computes for each subgraph; the contest would score this "
         "schedule 0.</small></div>\n";
  }
  double lbv = c.lb.value();
  o << "<div class=\"cards\">\n";
  o << card(ev.valid ? "ok" : "no", "validity", ev.valid ? "valid" : "INVALID (" + esc(ruleName(ev.rule)) + ")",
            ev.valid ? "all rules V1&ndash;V11 hold" : "first violated rule");
  o << card("", "total latency", humanNumber(ev.total),
            humanNumber(static_cast<i64>(c.v.s.subgraphs.size())) + " subgraphs");
  o << card("", "lower bound", humanNumber(lbv),
            "compute " + humanNumber(c.lb.compute) + " &middot; traffic " + humanNumber(c.lb.traffic) +
                (c.bound_note.empty() ? "" : " &middot; " + esc(c.bound_note)));
  o << card("", "gap to bound", lbv > 0 ? humanPercent(gapOf(ev.total, lbv), 2) : "n/a",
            lbv > 0 ? "(latency &minus; bound) / latency; latency / bound = " + humanNumber(ev.total / lbv, 3) : "");
  double tc = 0, tm = 0, tx = 0;
  for (const auto& g : c.v.sg)
    (g.bound == SubgraphBound::Compute ? tc : g.bound == SubgraphBound::Memory ? tm : tx) += g.latency;
  double tot = ev.total > 0 ? ev.total : 1;
  o << card(
      "", "time by bound",
      "<span style=\"color:var(--cb)\">" + humanPercent(tc / tot, 0) + "</span> / <span style=\"color:var(--mb)\">" +
          humanPercent(tm / tot, 0) + "</span>",
      "in compute- / memory-bound subgraphs" + (tx > 0 ? ", " + humanPercent(tx / tot, 0) + " mixed" : std::string()));
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
  o << "<div class=\"scroll\"><table id=\"subgraphs\"><thead><tr><th class=\"n\">#</th><th class=\"n\">start</th><th class=\"n\">latency</th>"
       "<th>bound</th><th class=\"n\">compute</th><th class=\"n\">memory</th><th class=\"n\">loaded</th><th class=\"n\">stored</th>"
       "<th>ops (id:type)</th><th class=\"n\">[w,h,k]</th><th class=\"n\">tiles</th><th class=\"n\">k-steps</th><th class=\"n\">steps</th>"
       "<th class=\"n\">peak working set</th><th>traversal</th><th>retained in</th><th>retained out</th></tr></thead><tbody>\n";
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
    o << "<td>" << opChips(c.p, sg.ops) << "</td><td class=\"n\">[" << sg.gran.w << "," << sg.gran.h << "," << sg.gran.k
      << "]</td><td class=\"n\">" << (rp.ntw > 0 ? humanNumber(rp.ntw) + "&times;" + humanNumber(rp.nth) : "&mdash;")
      << "</td><td class=\"n\">" << humanNumber(rp.nk) << "</td><td class=\"n\">" << humanNumber(rp.cost.steps)
      << "</td>";
    o << barCell(occ > 1 ? "over" : "occb", occ, humanNumber(rp.cost.peak_ws) + " &middot; " + humanPercent(occ, 0),
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

std::string renderSchedulePage(const Problem& p, const std::string& problem_path, const LowerBound& lb,
                               const std::string& boundNote, const ScheduleView& v, const Trace* trace,
                               const Stats* stats) {
  const Ctx c{p, v, lb, problem_path, boundNote};
  std::ostringstream o;
  o << pageStart("mlsys report: " + esc(c.p.name) + " &mdash; " + humanNumber(c.v.ev.total) +
                 (c.v.ev.valid ? "" : " (INVALID)"));
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
         "baseline, then one step line per search worker, up to the end of the run.</p>\n"
      << renderConvergence({{"", trace}}, c.lb.value(), traceHorizon(*trace, stats)) << "</section>\n";
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
  o << pageEnd(c.v.ev.model.describe(), " &middot; exact total " + formatDouble(c.v.ev.total));
  return o.str();
}

}  // namespace mlsys
