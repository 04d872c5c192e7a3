// `mlsys report PROBLEM A.json B.json -o cmp.html`: two schedules of one problem side by side.
// Both totals and their difference; the difference split into the subgraphs the two share (the
// same op set: matched in execution order) and those only one of them has; both timelines; with
// --trace / --stats each run's convergence and statistics.
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "engine/report/report_format.h"
#include "engine/report/report_page.h"
#include "engine/search/run_state.h"

namespace mlsys {
namespace {

struct Match {
  int a = -1, b = -1;  // subgraph indices; -1: only in the other schedule
};

// Pairs the subgraphs of A and B that run the same set of ops (the k-th occurrence of a set in A
// with the k-th in B); the rest are unmatched.
std::vector<Match> matchSubgraphs(const Schedule& a, const Schedule& b, std::vector<int>& onlyA,
                                  std::vector<int>& onlyB) {
  auto key = [](const SubgraphSched& sg) {
    std::vector<OpId> k = sg.ops;
    std::sort(k.begin(), k.end());
    return k;
  };
  std::map<std::vector<OpId>, std::vector<int>> inB;
  for (size_t j = b.subgraphs.size(); j-- > 0;)
    inB[key(b.subgraphs[j])].push_back(static_cast<int>(j));  // back() = first
  std::vector<char> usedB(b.subgraphs.size(), 0);
  std::vector<Match> m;
  for (size_t i = 0; i < a.subgraphs.size(); ++i) {
    auto it = inB.find(key(a.subgraphs[i]));
    if (it == inB.end() || it->second.empty()) {
      onlyA.push_back(static_cast<int>(i));
      continue;
    }
    m.push_back({static_cast<int>(i), it->second.back()});
    usedB[static_cast<size_t>(it->second.back())] = 1;
    it->second.pop_back();
  }
  for (size_t j = 0; j < b.subgraphs.size(); ++j)
    if (!usedB[j]) onlyB.push_back(static_cast<int>(j));
  return m;
}

std::string granText(const Granularity& g) { return fmt::format("[{},{},{}]", g.w, g.h, g.k); }

// b - a with its sign, and (with `share`) as a share of a: "&minus;1,234.5 (&minus;2.1%)".
std::string deltaText(double a, double b, bool share = true) {
  const double d = b - a;
  const std::string sign = d > 0 ? "+" : d < 0 ? "&minus;" : "";
  std::string s = sign + humanNumber(std::fabs(d));
  if (share && a > 0) s += " (" + sign + humanPercent(std::fabs(d) / a, 2) + ")";
  return s;
}

const char* deltaClass(double a, double b) {
  double tol = 1e-9 * std::max(1.0, std::fabs(a));
  return b < a - tol ? "better" : b > a + tol ? "worse" : "";
}

double latencyOf(const ScheduleView& v, int i) { return v.sg[static_cast<size_t>(i)].latency; }

std::string moved(const SgView& g) {
  return g.traffic.known ? humanNumber(g.traffic.loaded) + " / " + humanNumber(g.traffic.stored) : "&mdash;";
}

// The subgraphs each op runs in (ascending), built once per table: building it per row made a
// table of n unmatched subgraphs quadratic.
using OpSubgraphs = std::map<OpId, std::vector<int>>;
OpSubgraphs subgraphsOfOps(const Schedule& s) {
  OpSubgraphs at;
  for (size_t j = 0; j < s.subgraphs.size(); ++j)
    for (OpId o : s.subgraphs[j].ops) at[o].push_back(static_cast<int>(j));
  return at;
}

// Where the ops of subgraph `i` of `from` run in the other schedule (`at`: its subgraphsOfOps):
// "#3, #7".
std::string whereInOther(const ScheduleView& from, int i, const OpSubgraphs& at, const std::string& anchor) {
  std::vector<int> where;
  for (OpId o : from.s.subgraphs[static_cast<size_t>(i)].ops)
    if (auto it = at.find(o); it != at.end()) where.insert(where.end(), it->second.begin(), it->second.end());
  std::sort(where.begin(), where.end());
  where.erase(std::unique(where.begin(), where.end()), where.end());
  std::string s;
  for (int j : where)
    s += (s.empty() ? "" : ", ") + std::string("<a href=\"#") + anchor + "sg-" + std::to_string(j) + "\">#" +
         std::to_string(j) + "</a>";
  return s.empty() ? "&mdash;" : s;
}

std::string unmatchedTable(const Problem& p, const ScheduleView& v, const std::vector<int>& idx,
                           const std::string& anchor, const ScheduleView& other, const std::string& otherAnchor,
                           const std::string& otherName) {
  if (idx.empty()) return "<p class=\"note\">none</p>\n";
  const OpSubgraphs at = subgraphsOfOps(other.s);
  std::ostringstream o;
  o << "<div class=\"scroll\"><table class=\"wide\"><thead><tr><th class=\"n\">#</th><th>ops (id:type)</th><th class=\"n\">[w,h,k]</th>"
       "<th class=\"n\">latency</th><th class=\"n\">loaded / stored</th><th>retained out</th><th>its ops in "
    << otherName << "</th></tr></thead><tbody>\n";
  for (int i : idx) {
    const auto& sg = v.s.subgraphs[static_cast<size_t>(i)];
    o << "<tr id=\"" << anchor << "sg-" << i << "\"><td class=\"n\">" << i << "</td><td>" << opChips(p, sg.ops)
      << "</td><td class=\"n\">" << granText(sg.gran) << "</td><td class=\"n\">" << humanNumber(latencyOf(v, i))
      << "</td><td class=\"n\">" << moved(v.sg[static_cast<size_t>(i)]) << "</td><td class=\"ret\">"
      << (sg.retain.empty() ? "" : esc(tensorsText(p, sg.retain))) << "</td><td>" << whereInOther(v, i, at, otherAnchor)
      << "</td></tr>\n";
  }
  o << "</tbody></table></div>\n";
  return o.str();
}

// The section of the shared subgraphs, largest difference first, side by side.
std::string sharedSection(const Problem& p, const ScheduleView& A, const ScheduleView& B, std::vector<Match> matched) {
  std::ostringstream o;
  std::stable_sort(matched.begin(), matched.end(), [&](const Match& x, const Match& y) {
    return std::fabs(latencyOf(B, x.b) - latencyOf(A, x.a)) > std::fabs(latencyOf(B, y.b) - latencyOf(A, y.a));
  });
  o << "<section><h2>Shared subgraphs (" << matched.size()
    << ")</h2><p class=\"note\">Subgraphs of A and B that run the same set "
       "of ops, largest difference first; &ldquo;same&rdquo; when granularity, traversal and retention agree too. Loaded / stored "
       "count elements moved from and to slow memory.</p>\n";
  if (matched.empty()) {
    o << "<p class=\"note\">none</p>\n";
  } else {
    o << "<div class=\"scroll\"><table class=\"wide\" id=\"matched\"><thead><tr><th>ops (id:type)</th><th class=\"n\">A #</th><th class=\"n\">B #</th>"
         "<th class=\"n\">A [w,h,k]</th><th class=\"n\">B [w,h,k]</th><th class=\"n\">A latency</th><th class=\"n\">B latency</th>"
         "<th class=\"n\">B &minus; A</th><th class=\"n\">A loaded / stored</th><th class=\"n\">B loaded / stored</th>"
         "<th>A retained out</th><th>B retained out</th><th></th></tr></thead><tbody>\n";
    for (const Match& mt : matched) {
      const auto& sa = A.s.subgraphs[static_cast<size_t>(mt.a)];
      const auto& sb = B.s.subgraphs[static_cast<size_t>(mt.b)];
      const double la = latencyOf(A, mt.a), lbt = latencyOf(B, mt.b);
      const bool same = sa.gran == sb.gran && sa.trav.kind == sb.trav.kind && sa.trav.order == sb.trav.order &&
                        sa.retain == sb.retain;
      o << "<tr id=\"a-sg-" << mt.a << "\"><td><span id=\"b-sg-" << mt.b << "\"></span>" << opChips(p, sa.ops)
        << "</td><td class=\"n\">" << mt.a << "</td><td class=\"n\">" << mt.b << "</td><td class=\"n\">"
        << granText(sa.gran) << "</td><td class=\"n\">" << granText(sb.gran) << "</td><td class=\"n\">"
        << humanNumber(la) << "</td><td class=\"n\">" << humanNumber(lbt) << "</td><td class=\"n "
        << deltaClass(la, lbt) << "\">" << deltaText(la, lbt) << "</td><td class=\"n\">"
        << moved(A.sg[static_cast<size_t>(mt.a)]) << "</td><td class=\"n\">" << moved(B.sg[static_cast<size_t>(mt.b)])
        << "</td><td class=\"ret\">" << (sa.retain.empty() ? "" : esc(tensorsText(p, sa.retain)))
        << "</td><td class=\"ret\">" << (sb.retain.empty() ? "" : esc(tensorsText(p, sb.retain))) << "</td><td>"
        << (same ? "same" : "") << "</td></tr>\n";
    }
    o << "</tbody></table></div>\n";
  }
  o << "</section>\n";
  return o.str();
}

}  // namespace

std::string renderComparePage(const Problem& p, const std::string& problem_path, const LowerBound& lb,
                              const std::string& boundNote, const std::vector<const ScheduleView*>& views,
                              const std::vector<const Trace*>& traces, const std::vector<const Stats*>& stats,
                              TimeAxis timeAxis) {
  const ScheduleView& A = *views[0];
  const ScheduleView& B = *views[1];
  std::vector<int> onlyA, onlyB;
  std::vector<Match> matched = matchSubgraphs(A.s, B.s, onlyA, onlyB);
  double sumMatchedA = 0, sumMatchedB = 0, sumOnlyA = 0, sumOnlyB = 0;
  for (const Match& mt : matched) {
    sumMatchedA += latencyOf(A, mt.a);
    sumMatchedB += latencyOf(B, mt.b);
  }
  for (int i : onlyA) sumOnlyA += latencyOf(A, i);
  for (int j : onlyB) sumOnlyB += latencyOf(B, j);
  const double lbv = lb.value();
  std::ostringstream o;
  // An invalid schedule has no total (the contest scores it 0): "invalid" wherever a total would be.
  auto totalText = [](const ScheduleView& v) { return v.ev.valid ? humanNumber(v.ev.total) : std::string("invalid"); };
  const bool bothValid = A.ev.valid && B.ev.valid;
  o << pageStart("mlsys comparison: " + esc(p.name) + " &mdash; " + totalText(A) + " vs " + totalText(B));
  o << "<header><h1>mlsys comparison &mdash; " << esc(p.name) << "</h1><div class=\"sub\">problem " << esc(problem_path)
    << " &middot; A " << esc(A.path) << " &middot; B " << esc(B.path) << " &middot; model "
    << esc(A.ev.model.describe()) << "</div></header>\n<main>\n";
  for (const auto& [name, v] : {std::pair<const char*, const ScheduleView*>{"A", &A}, {"B", &B}})
    if (!v->ev.valid)
      o << "<div class=\"banner\"><b>" << name << " is INVALID &mdash; rule " << esc(ruleName(v->ev.rule))
        << "</b> &middot; " << violationsText(v->ev) << "<br>" << esc(v->ev.reason) << "</div>\n";
  auto totalCard = [&](const char* name, const ScheduleView& v) {
    std::string detail =
        esc(v.path) + " &middot; " + humanNumber(static_cast<i64>(v.s.subgraphs.size())) + " subgraphs";
    if (!v.ev.valid)
      return card("no", std::string(name) + " total latency", "invalid", violationsText(v.ev) + " &middot; " + detail);
    if (lbv > 0) detail += " &middot; gap " + humanPercent(gapOf(v.ev.total, lbv), 2);
    return card("", std::string(name) + " total latency", humanNumber(v.ev.total), detail);
  };
  o << "<div class=\"cards\">\n" << totalCard("A", A) << totalCard("B", B);
  if (bothValid)
    o << card(deltaClass(A.ev.total, B.ev.total), "difference B &minus; A", deltaText(A.ev.total, B.ev.total),
              B.ev.total < A.ev.total   ? "B is faster"
              : B.ev.total > A.ev.total ? "B is slower"
                                        : "equal totals");
  else
    o << card("no", "difference B &minus; A", "n/a",
              std::string(A.ev.valid   ? "B"
                          : B.ev.valid ? "A"
                                       : "A and B") +
                  " invalid: no total to compare");
  o << card("", "lower bound", humanNumber(lbv),
            "the same for both" + (boundNote.empty() ? "" : " &middot; " + esc(boundNote)));
  o << card("", "shared subgraphs", humanNumber(static_cast<i64>(matched.size())),
            "same op set in both; " + humanNumber(static_cast<i64>(onlyA.size())) + " only in A, " +
                humanNumber(static_cast<i64>(onlyB.size())) + " only in B");
  o << "</div>\n";
  o << "<section><h2>Where the difference comes from</h2><table class=\"kv\" id=\"decomposition\"><tbody>\n"
    << "<tr><td>shared subgraphs (" << matched.size() << "): B &minus; A</td><td class=\"n "
    << deltaClass(sumMatchedA, sumMatchedB) << "\">" << deltaText(sumMatchedA, sumMatchedB) << "</td></tr>\n"
    << "<tr><td>only in A (" << onlyA.size() << "): their latency, gone in B</td><td class=\"n\">"
    << deltaText(sumOnlyA, 0, false) << "</td></tr>\n"
    << "<tr><td>only in B (" << onlyB.size() << "): their latency, new in B</td><td class=\"n\">"
    << deltaText(0, sumOnlyB, false) << "</td></tr>\n"
    << "<tr><td><b>total B &minus; A</b></td><td class=\"n " << (bothValid ? deltaClass(A.ev.total, B.ev.total) : "")
    << "\"><b>" << (bothValid ? deltaText(A.ev.total, B.ev.total) : "n/a (invalid)")
    << "</b></td></tr>\n</tbody></table></section>\n";
  o << "<section><h2>Timelines</h2><p class=\"note\">Each schedule's subgraphs in execution order (each on its own scale); click a "
       "subgraph to jump to its row below.</p><div class=\"legend\"><span><i class=\"sw cb\"></i>compute-bound</span><span><i class=\"sw "
       "mb\"></i>memory-bound</span><span><i class=\"sw mx\"></i>mixed</span><span><i class=\"sw bad\"></i>invalid</span></div>\n"
    << "<h3>A &mdash; " << totalText(A) << "</h3>\n"
    << renderTimeline(p, A, "timeline-a", "a-") << "<h3>B &mdash; " << totalText(B) << "</h3>\n"
    << renderTimeline(p, B, "timeline-b", "b-") << "</section>\n";
  if (!traces.empty()) {
    std::vector<TraceRun> runs;
    double horizon = 0;
    for (size_t i = 0; i < traces.size(); ++i) {
      runs.push_back({i == 0 ? "A" : "B", traces[i]});
      horizon = std::max(horizon, traceHorizon(*traces[i], i < stats.size() ? stats[i] : nullptr));
    }
    o << "<section><h2>Convergence</h2><p class=\"note\">Best latency over each run (log scale); diamonds: first schedule, baseline, "
         "exact solver.</p>\n"
      << renderConvergence(runs, lbv, horizon, timeAxis) << "</section>\n";
  }
  if (!stats.empty()) {
    std::vector<std::string> labels;
    for (size_t i = 0; i < stats.size(); ++i) labels.push_back(i == 0 ? "A" : "B");
    o << "<section><h2>Solver statistics</h2>\n" << renderStats(stats, labels) << "</section>\n";
  }
  std::vector<std::string> warnings;
  for (const auto& w : A.warnings) warnings.push_back("A: " + w);
  for (const auto& w : B.warnings) warnings.push_back("B: " + w);
  o << renderWarnings(warnings);
  o << sharedSection(p, A, B, matched);
  o << "<section><h2>Only in A (" << onlyA.size() << ")</h2>\n"
    << unmatchedTable(p, A, onlyA, "a-", B, "b-", "B") << "</section>\n";
  o << "<section><h2>Only in B (" << onlyB.size() << ")</h2>\n"
    << unmatchedTable(p, B, onlyB, "b-", A, "a-", "A") << "</section>\n";
  o << "</main>\n" << pageEnd(A.ev.model.describe(), "");
  return o.str();
}

}  // namespace mlsys
