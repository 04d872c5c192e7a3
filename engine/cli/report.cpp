// `mlsys report`: one self-contained HTML page (inline CSS + SVG, no scripts, no network) that
// shows a schedule as a person wants to read it: the headline numbers, a timeline of subgraphs
// with widths proportional to latency, the fast-memory occupancy of each subgraph, a table of
// every subgraph (time, traffic, retention), with --trace the convergence of the search, with
// --stats the solver's statistics. With two schedules, a comparison page (report_compare.cpp).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cost/json_util.h"
#include "engine/cli/commands.h"
#include "engine/report/report_format.h"
#include "engine/report/report_page.h"
#include "engine/base/deadline.h"
#include "engine/io/files.h"
#include "engine/search/run_state.h"

namespace mlsys {

// Defined in report_compare.cpp.
std::string renderComparePage(const Problem& p, const std::string& problem_path, const LowerBound& lb, const std::string& boundNote,
                              const std::vector<const ScheduleView*>& views, const std::vector<const Trace*>& traces,
                              const std::vector<const Stats*>& stats);

// What drawing and writing the page is expected to take: a multiple of what reading and evaluating
// the schedules took (both linear in their subgraphs and ops; measured 4-6 on 20k-100k subgraphs),
// plus a multiple of what reading the traces took (measured 0.45 on 1M rows).
constexpr double kDrawPerScheduleRead = 6.0, kDrawPerTraceRead = 0.5;

// ---------------------------------------------------------------- inputs

bool isConstructionRow(const std::string& worker) {
  return worker == traceTagName(TraceTag::First) || worker == traceTagName(TraceTag::Baseline) || worker == traceTagName(TraceTag::Exact);
}

Trace readTrace(const std::string& path, const ReadLimits& lim) {
  std::string text = readTextFile(path, "trace", lim);
  std::istringstream in(text);
  std::string line;
  Trace t;
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
    if (f.size() != 3) fail("expected 3 columns seconds,worker,latency, got " + std::to_string(f.size()));
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
    if (tp.worker == traceTagName(TraceTag::End)) {
      t.end_s = tp.seconds;
      t.end_latency = tp.latency;
    } else {
      t.points.push_back(tp);
    }
  }
  return t;
}

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "best_found_s" -> "best found", "evals_per_s" -> "evals per second", "best_latency" -> "best latency".
std::string keyLabel(std::string k) {
  if (endsWith(k, "_per_s")) k = k.substr(0, k.size() - 2) + " second";
  else if (endsWith(k, "_s")) k.resize(k.size() - 2);
  std::replace(k.begin(), k.end(), '_', ' ');
  return k;
}

// A --stats value for people: seconds with their unit, the gap as a percentage.
std::string statsValue(const std::string& key, const rapidjson::Value& v) {
  const std::string unit = endsWith(key, "_per_s") ? "" : endsWith(key, "_s") ? " s" : "";
  if (v.IsBool()) return v.GetBool() ? "yes" : "no";
  if (v.IsString()) return v.GetString();
  if (key == "gap" && v.IsNumber()) return humanPercent(v.GetDouble(), 2);
  if (v.IsInt64()) return humanNumber(static_cast<i64>(v.GetInt64())) + unit;
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  if (v.IsNumber()) return humanNumber(v.GetDouble(), unit.empty() ? 4 : 3) + unit;
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

}  // namespace

Stats readStats(const std::string& path, const ReadLimits& lim) {
  const std::string text = readTextFile(path, "stats", lim);
  rapidjson::Document d = parseJsonText(text, "stats '" + path + "'");
  const std::string c = "stats '" + path + "'";
  if (!d.IsObject()) throw InputError(c + ": top level must be a JSON object (the file 'mlsys solve --stats' writes)");
  if (!d.HasMember("best_latency") || !d["best_latency"].IsNumber())
    throw InputError(c + ": no number \"best_latency\": not a file written by 'mlsys solve --stats'");
  Stats st;
  st.path = path;
  for (const auto& m : d.GetObject()) {
    std::string key(m.name.GetString(), m.name.GetStringLength());
    st.fields.emplace_back(key, statsValue(key, m.value));
  }
  st.best_latency = d["best_latency"].GetDouble();
  if (d.HasMember("elapsed_s") && d["elapsed_s"].IsNumber()) st.elapsed_s = d["elapsed_s"].GetDouble();
  if (d.HasMember("instance") && d["instance"].IsString()) st.instance = d["instance"].GetString();
  return st;
}

ScheduleView viewSchedule(const Problem& p, const std::string& problem_path, const ModelOptions& m, const std::string& path,
                          const ReadLimits& lim) {
  ScheduleView v;
  v.path = path;
  try {
    v.s = parseScheduleFile(path, p, lim);
  } catch (const InputError& e) {
    std::string what = e.what();
    if (what.find("(op index)") != std::string::npos || what.find("(tensor index)") != std::string::npos)
      throw InputError(what + "; is it a schedule of another problem? '" + problem_path + "' has " + std::to_string(p.numOps()) +
                       " ops and " + std::to_string(p.numTensors()) + " tensors");
    throw;
  }
  v.ev = evaluateSchedule(p, v.s, m);
  std::vector<std::string> differ = reportedLatencyWarnings(v.s, v.ev);
  if (!differ.empty() && 2 * differ.size() >= v.ev.subgraphs.size())  // first: it explains the rest
    v.warnings.push_back(std::to_string(differ.size()) + " of " + std::to_string(v.ev.subgraphs.size()) +
                         " subgraphs have reported latencies that differ from the computed ones: is the schedule for another "
                         "problem or another model (--model)?");
  v.warnings.insert(v.warnings.end(), v.ev.warnings.begin(), v.ev.warnings.end());
  for (std::string& w : differ) v.warnings.push_back(std::move(w));
  std::vector<SubgraphTraffic> traffic = subgraphTraffic(p, v.s, v.ev);
  // Exact start times: rational prefix sums, each rounded once, in one pass (exactTotal of each
  // prefix gives the same values in quadratic time: 13 s at 20k subgraphs).
  const std::vector<double> starts = exactPrefixTotals(v.ev.subgraphs);
  v.sg.reserve(v.ev.subgraphs.size());
  for (size_t i = 0; i < v.ev.subgraphs.size(); ++i) {
    const auto& cost = v.ev.subgraphs[i].cost;
    SgView g;
    g.start = starts[i];
    g.latency = cost.valid ? cost.latency : 0;
    g.bound = boundOf(cost);
    if (i > 0)
      for (TensorId x : v.s.subgraphs[i - 1].retain) g.retained_ws += p.size(x);
    for (TensorId x : v.s.subgraphs[i].retain) g.retained_ws += p.size(x);
    g.traffic = traffic[i];
    if (g.traffic.known) {
      v.loaded += static_cast<double>(g.traffic.loaded);
      v.stored += static_cast<double>(g.traffic.stored);
      v.compute += g.traffic.compute;
      v.memory += g.traffic.memory;
    } else {
      v.traffic_known = false;
    }
    v.sg.push_back(g);
  }
  return v;
}

void checkStats(const Problem& p, const Stats& st, ScheduleView& v) {
  if (!st.instance.empty() && st.instance != p.name)
    v.warnings.push_back("--stats '" + st.path + "' is for instance '" + st.instance + "', the problem is '" + p.name + "'");
  if (st.best_latency > 0 && std::abs(st.best_latency - v.ev.total) > 1e-9 * std::max(1.0, v.ev.total))
    v.warnings.push_back("--stats '" + st.path + "' reports best latency " + humanNumber(st.best_latency) + ", the schedule '" +
                         v.path + "' has " + humanNumber(v.ev.total));
}

// ---------------------------------------------------------------- page parts

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

const char* opTypeShort(OpType t) { return t == OpType::MatMul ? "MM" : "PW"; }

std::string tensorsText(const Problem& p, const std::vector<TensorId>& ts) {
  if (ts.empty()) return "none";
  std::string o;
  for (size_t i = 0; i < ts.size(); ++i)
    o += (i ? ", " : "") + std::string("t") + std::to_string(ts[i]) + " (" + humanNumber(p.widths[ts[i]]) + "\xC3\x97" +
         humanNumber(p.heights[ts[i]]) + ")";
  return o;
}

std::string opChips(const Problem& p, const std::vector<OpId>& ops) {
  std::ostringstream o;
  for (OpId op : ops) {
    const Op& opd = p.ops[op];
    TensorId out = opd.outputs.empty() ? -1 : opd.outputs[0];
    o << "<span class=\"chip " << opTypeShort(opd.type) << "\" title=\"op " << op << " "
      << (opd.type == OpType::MatMul ? "MatMul" : "Pointwise");
    if (out >= 0) o << " &rarr; t" << out << " (" << humanNumber(p.widths[out]) << "&times;" << humanNumber(p.heights[out]) << ")";
    o << ", base cost " << humanNumber(opd.base_cost) << "\">" << op << ":" << opTypeShort(opd.type) << "</span>";
  }
  return o.str();
}

namespace {

const char* kCss = R"CSS(
:root{--cb:#2f6fd0;--mb:#e07b24;--mx:#8e5cc7;--bad:#d62728;--ret:#0f766e;--ws:#5eb8a6;--ink:#1d2433;--mute:#667085;--line:#e4e7ec;--good:#157a3b}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:#f6f7f9}
header{background:#1d2433;color:#fff;padding:18px 28px 14px}
header h1{margin:0;font-size:22px;font-weight:650}
header .sub{color:#b8c0cc;font-size:12.5px;margin-top:3px;word-break:break-all}
main{padding:18px 28px 40px;max-width:1500px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:16px}
.card{flex:1 1 auto;background:#fff;border:1px solid var(--line);border-radius:8px;padding:9px 12px;min-width:150px}
.card .k{font-size:11.5px;text-transform:uppercase;letter-spacing:.04em;color:var(--mute)}
.card .v{font-size:20px;white-space:nowrap;font-weight:650;font-variant-numeric:tabular-nums}
.card .d{font-size:12px;color:var(--mute);overflow-wrap:anywhere}
.card.ok .v{color:var(--good)}.card.no{border-color:var(--bad);background:#fff5f5}.card.no .v{color:var(--bad)}
.card.better .v{color:var(--good)}.card.worse .v{color:var(--bad)}
.banner{border:2px solid var(--bad);background:#fff1f1;color:#8a1111;border-radius:8px;padding:12px 16px;margin-bottom:16px;font-size:15px}
.banner b{font-size:17px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin-bottom:16px}
section h2{font-size:16px;margin:0 0 4px}
section h3{font-size:14px;margin:10px 0 4px}
section p.note{margin:0 0 8px;color:var(--mute);font-size:12.5px}
.scroll{overflow-x:auto}
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
th.n{text-align:right}
td{padding:4px 6px;border-bottom:1px solid var(--line);vertical-align:top}
td.n{text-align:right;white-space:nowrap}
table.kv{width:auto}table.kv td:first-child{color:var(--mute);padding-right:18px}
tr:target{background:#fff7cc}
tr.badrow{background:#ffecec}
.chip{display:inline-block;padding:0 4px;margin:1px 2px 1px 0;border-radius:3px;font-size:11.5px;white-space:nowrap}
.chip.MM{background:#dde8fb;color:#1d4f9c}.chip.PW{background:#e3f4e6;color:#1f6a33}
.tag{display:inline-block;padding:0 6px;border-radius:9px;font-size:11px;color:#fff}
.bv{display:flex;align-items:center;justify-content:flex-end;gap:6px}
.bv em{font-style:normal;min-width:80px;text-align:right}
.bar{position:relative;height:11px;width:72px;flex:none;background:#eef1f5;border-radius:2px}
.bar span{position:absolute;left:0;top:0;bottom:0;border-radius:2px}
.split{display:flex;height:11px;width:72px;flex:none;border-radius:2px;overflow:hidden;background:#eef1f5}
.split span{display:block;height:100%}
.lat{background:#9fb6d9}.occb{background:var(--ws)}.occr{fill:var(--ret)}.occ{fill:var(--ws)}.over{background:var(--bad);fill:var(--bad)}
.ret{color:var(--ret)}
.warn{color:#8a5a00}
.better{color:var(--good)}.worse{color:var(--bad)}
details summary{cursor:pointer;color:var(--mute)}
footer{color:var(--mute);font-size:12px;padding:0 28px 24px}
)CSS";

}  // namespace

std::string card(const std::string& cls, const std::string& key, const std::string& value, const std::string& detail) {
  return "<div class=\"card " + cls + "\"><div class=\"k\">" + key + "</div><div class=\"v\">" + value + "</div><div class=\"d\">" +
         detail + "</div></div>\n";
}

std::string pageStart(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, "
         "initial-scale=1\">\n<title>" +
         title + "</title>\n<style>" + kCss + "</style></head><body>\n";
}

std::string pageEnd(const std::string& model, const std::string& extra) {
  return std::string("<footer>Generated by mlsys ") + MLSYS_VERSION + " (git " + MLSYS_GIT_HASH + ") &middot; model " + esc(model) +
         extra + "</footer>\n</body></html>\n";
}

std::string renderStats(const std::vector<const Stats*>& stats, const std::vector<std::string>& labels) {
  std::vector<std::string> keys;  // in file order, the first file's first
  std::set<std::string> seen;
  for (const Stats* st : stats)
    for (const auto& kv : st->fields)
      if (seen.insert(kv.first).second) keys.push_back(kv.first);
  std::vector<std::map<std::string, const std::string*>> values(stats.size());  // key -> its first value, per file
  for (size_t i = 0; i < stats.size(); ++i)
    for (const auto& kv : stats[i]->fields) values[i].emplace(kv.first, &kv.second);
  std::ostringstream o;
  o << "<div class=\"scroll\"><table class=\"kv\" id=\"stats\"><thead><tr><th></th>";
  for (size_t i = 0; i < stats.size(); ++i) o << "<th>" << esc(labels[i]) << "</th>";
  o << "</tr></thead><tbody>\n";
  for (const std::string& k : keys) {
    o << "<tr><td>" << esc(keyLabel(k)) << "</td>";
    for (const auto& vals : values) {
      auto it = vals.find(k);
      o << "<td>" << (it == vals.end() ? "&mdash;" : esc(*it->second)) << "</td>";
    }
    o << "</tr>\n";
  }
  o << "</tbody></table></div>\n";
  return o.str();
}

std::string renderWarnings(const std::vector<std::string>& warnings) {
  if (warnings.empty()) return "";
  std::ostringstream o;
  o << "<section><h2 class=\"warn\">Warnings (" << warnings.size() << ")</h2><details" << (warnings.size() <= 10 ? " open" : "")
    << "><summary>show</summary><ul>\n";
  for (const auto& w : warnings) o << "<li>" << esc(w) << "</li>\n";
  o << "</ul></details></section>\n";
  return o.str();
}

namespace {

// ---------------------------------------------------------------- the page of one schedule

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
    << " &middot; schedule " << esc(c.v.path) << " &middot; model " << esc(ev.model.describe()) << "</div></header>\n<main>\n";
  if (!ev.valid) {
    o << "<div class=\"banner\"><b>INVALID schedule &mdash; rule " << esc(ruleName(ev.rule)) << "</b><br>" << esc(ev.reason);
    if (ev.bad_subgraph >= 0) o << " <a href=\"#sg-" << ev.bad_subgraph << "\">(go to subgraph " << ev.bad_subgraph << ")</a>";
    o << "<br><small>Latencies below are what the cost model computes for each subgraph; the contest would score this "
         "schedule 0.</small></div>\n";
  }
  double lbv = c.lb.value();
  o << "<div class=\"cards\">\n";
  o << card(ev.valid ? "ok" : "no", "validity", ev.valid ? "valid" : "INVALID (" + esc(ruleName(ev.rule)) + ")",
            ev.valid ? "all rules V1&ndash;V11 hold" : "first violated rule");
  o << card("", "total latency", humanNumber(ev.total), humanNumber(static_cast<i64>(c.v.s.subgraphs.size())) + " subgraphs");
  o << card("", "lower bound", humanNumber(lbv),
            "compute " + humanNumber(c.lb.compute) + " &middot; traffic " + humanNumber(c.lb.traffic) +
                (c.bound_note.empty() ? "" : " &middot; " + esc(c.bound_note)));
  o << card("", "gap to bound", lbv > 0 ? humanPercent(gapOf(ev.total, lbv), 2) : "n/a",
            lbv > 0 ? "(latency &minus; bound) / latency; latency / bound = " + humanNumber(ev.total / lbv, 3) : "");
  double tc = 0, tm = 0, tx = 0;
  for (const auto& g : c.v.sg) (g.bound == SubgraphBound::Compute ? tc : g.bound == SubgraphBound::Memory ? tm : tx) += g.latency;
  double tot = ev.total > 0 ? ev.total : 1;
  o << card("", "time by bound",
            "<span style=\"color:var(--cb)\">" + humanPercent(tc / tot, 0) + "</span> / <span style=\"color:var(--mb)\">" +
                humanPercent(tm / tot, 0) + "</span>",
            "in compute- / memory-bound subgraphs" + (tx > 0 ? ", " + humanPercent(tx / tot, 0) + " mixed" : std::string()));
  std::string partial = c.v.traffic_known ? "" : " (valid subgraphs)";
  o << card("", "compute / memory time", humanNumber(c.v.compute, 0) + " / " + humanNumber(c.v.memory, 0),
            "sums over the subgraphs" + partial + "; each step costs the larger of the two");
  o << card("", "elements moved", humanNumber(c.v.loaded + c.v.stored, 0),
            "loaded " + humanNumber(c.v.loaded, 0) + " &middot; stored " + humanNumber(c.v.stored, 0) + partial);
  o << card("", "problem", humanNumber(c.p.numOps()) + " ops",
            humanNumber(mm) + " MatMul, " + humanNumber(c.p.numOps() - mm) + " Pointwise, " + humanNumber(c.p.numTensors()) + " tensors");
  o << card("", "machine", humanNumber(c.p.capacity),
            "capacity &middot; bandwidth " + humanNumber(c.p.bandwidth) + " &middot; native " + humanNumber(c.p.native));
  o << "</div>\n";
  return o.str();
}

// A right-aligned number with a bar of `frac` (0..1) of the cell's bar width.
std::string barCell(const std::string& barClass, double frac, const std::string& text, const std::string& title) {
  return "<td class=\"n\"><div class=\"bv\" title=\"" + title + "\"><div class=\"bar\"><span class=\"" + barClass + "\" style=\"width:" +
         px(100 * std::clamp(frac, 0.0, 1.0)) + "%\"></span></div><em>" + text + "</em></div></td>";
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
    o << "<tr id=\"sg-" << i << "\"" << (rp.cost.valid ? "" : " class=\"badrow\"") << "><td class=\"n\">" << i << "</td><td class=\"n\">"
      << humanNumber(g.start) << "</td>"
      << barCell("lat", maxLat > 0 ? g.latency / maxLat : 0, rp.cost.valid ? humanNumber(g.latency) : "&mdash;",
                 humanPercent(share, 2) + " of total");
    o << "<td><span class=\"tag " << boundClass(g.bound) << "\">" << boundLabel(g.bound) << "</span>";
    if (g.bound == SubgraphBound::Mixed)
      o << " <small>" << humanNumber(rp.cost.compute_bound_steps) << "/" << humanNumber(rp.cost.steps) << " compute</small>";
    if (!rp.cost.valid) o << "<br><small>" << esc(ruleName(rp.cost.rule)) << ": " << esc(rp.cost.reason) << "</small>";
    o << "</td>";
    if (tr.known) {
      double both = tr.compute + tr.memory;
      o << "<td class=\"n\"><div class=\"bv\" title=\"compute " << humanPercent(both > 0 ? tr.compute / both : 0)
        << " of compute + memory\"><div class=\"split\"><span class=\"cb\" style=\"width:" << px(both > 0 ? 100 * tr.compute / both : 0)
        << "%\"></span><span class=\"mb\" style=\"width:" << px(both > 0 ? 100 * tr.memory / both : 0) << "%\"></span></div><em>"
        << humanNumber(tr.compute) << "</em></div></td><td class=\"n\">" << humanNumber(tr.memory) << "</td><td class=\"n\">"
        << humanNumber(tr.loaded) << "</td><td class=\"n\">" << humanNumber(tr.stored) << "</td>";
    } else {
      o << "<td class=\"n\">&mdash;</td><td class=\"n\">&mdash;</td><td class=\"n\">&mdash;</td><td class=\"n\">&mdash;</td>";
    }
    o << "<td>" << opChips(c.p, sg.ops) << "</td><td class=\"n\">[" << sg.gran.w << "," << sg.gran.h << "," << sg.gran.k
      << "]</td><td class=\"n\">" << (rp.ntw > 0 ? humanNumber(rp.ntw) + "&times;" + humanNumber(rp.nth) : "&mdash;")
      << "</td><td class=\"n\">" << humanNumber(rp.nk) << "</td><td class=\"n\">" << humanNumber(rp.cost.steps) << "</td>";
    o << barCell(occ > 1 ? "over" : "occb", occ, humanNumber(rp.cost.peak_ws) + " &middot; " + humanPercent(occ, 0),
                 humanNumber(rp.cost.peak_ws) + " of " + humanNumber(c.p.capacity));
    const auto& rin = i > 0 ? v.s.subgraphs[i - 1].retain : std::vector<TensorId>{};
    o << "<td>" << traversalName(sg.trav.kind) << "</td><td class=\"ret\">" << (rin.empty() ? "" : esc(tensorsText(c.p, rin)))
      << "</td><td class=\"ret\">" << (sg.retain.empty() ? "" : esc(tensorsText(c.p, sg.retain))) << "</td></tr>\n";
  }
  o << "</tbody></table></div>\n";
  return o.str();
}

std::string renderPage(const Ctx& c, const Trace* trace, const Stats* stats) {
  std::ostringstream o;
  o << pageStart("mlsys report: " + esc(c.p.name) + " &mdash; " + humanNumber(c.v.ev.total) + (c.v.ev.valid ? "" : " (INVALID)"));
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
    o << "<section><h2>Solver statistics</h2><p class=\"note\">From " << esc(stats->path) << " (<code>mlsys solve --stats</code>).</p>\n"
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

}  // namespace

int cmdReport(int argc, char** argv) {
  cxxopts::Options o("mlsys report",
                     "Write a self-contained HTML picture of a schedule (timeline, occupancy, per-subgraph table), or with two "
                     "schedules a comparison page.");
  o.add_options()("o,output", "Output HTML file", cxxopts::value<std::string>())(
      "trace", "CSV from 'mlsys solve --trace': adds a convergence plot (with two schedules: once per schedule, in order)",
      cxxopts::value<std::vector<std::string>>())(
      "stats", "JSON from 'mlsys solve --stats': adds the solver statistics (with two schedules: once per schedule, in order)",
      cxxopts::value<std::vector<std::string>>())(
      "s,seconds",
      "Time budget of the command: the lower bound's exact covers stop early enough to write the page by then, and the "
      "remaining components get their quick floors, as with 'mlsys bound -s'",
      cxxopts::value<std::string>()->default_value("10"))("h,help", "Show help")(
      "positional", "", cxxopts::value<std::vector<std::string>>());
  addConfigOptions(o);
  addModelOption(o);
  addInputLimitOption(o);
  o.parse_positional({"positional"});
  o.positional_help("PROBLEM.json SOLUTION.json [SOLUTION_B.json] -o report.html");
  const char* usage =
      "mlsys report PROBLEM.json SOLUTION.json [SOLUTION_B.json] -o report.html [-s S] [--trace T.csv]... [--stats S.json]... [-c CONFIG] [--set model.K=V]... [--model K=V]...";
  auto r = parseOrThrow(o, argc, argv);
  if (r.count("help"))
    return printHelp(o,
                     "With one schedule: headline numbers, timeline, fast-memory occupancy, per-subgraph table (latency, compute and\n"
                     "memory time, elements loaded and stored, retention), and with --trace / --stats the convergence and the solver's\n"
                     "statistics. With two schedules A and B: both totals and their difference, per-subgraph differences of the\n"
                     "subgraphs with the same op set, and the unmatched subgraphs of each.\n"
                     "The page is written even for an invalid schedule (the violated rule is shown at the top); the exit code is 0\n"
                     "only when every schedule is valid.\n"
                     "Time: reading, evaluating and drawing take time linear in the subgraphs and the trace rows and always\n"
                     "complete (about 2-3 s per 100,000 subgraphs, 1.5 s per million trace rows). -s (default 10) bounds the rest:\n"
                     "the lower bound's exact covers stop when what is left is what drawing is expected to take, and the remaining\n"
                     "components get their quick floors (the lower-bound card then says so). A convergence line of more than\n"
                     "2,000 improvements is thinned to the vertices 0.1 px apart in height (at most about 2,600).\n");
  std::vector<std::string> files;
  if (r.count("positional")) files = r["positional"].as<std::vector<std::string>>();
  if (files.size() < 2 || files.size() > 3)
    throw UsageError("expected 2 or 3 file arguments (a problem and one or two schedules), got " + std::to_string(files.size()) +
                     "\nusage: " + usage);
  if (!r.count("output")) throw UsageError(std::string("missing -o/--output FILE\nusage: ") + usage);
  const double seconds = parseSecondsText(r["seconds"].as<std::string>(), "--seconds");
  Deadline dl = Deadline::sinceProcessStart();  // -s covers the whole command, as a harness measures it
  dl.setBudget(seconds);
  std::string out = r["output"].as<std::string>();
  if (out.empty()) throw UsageError(std::string("empty -o/--output\nusage: ") + usage);
  auto list = [&](const char* key) {
    std::vector<std::string> v;
    if (r.count(key)) v = r[key].as<std::vector<std::string>>();
    return v;
  };
  const std::vector<std::string> tracePaths = list("trace"), statsPaths = list("stats");
  const size_t nSched = files.size() - 1;
  if (tracePaths.size() > nSched)
    throw UsageError(std::to_string(tracePaths.size()) + " --trace files for " + std::to_string(nSched) + " schedule(s)");
  if (statsPaths.size() > nSched)
    throw UsageError(std::to_string(statsPaths.size()) + " --stats files for " + std::to_string(nSched) + " schedule(s)");
  std::vector<std::string> inputs = files;
  inputs.insert(inputs.end(), tracePaths.begin(), tracePaths.end());
  inputs.insert(inputs.end(), statsPaths.begin(), statsPaths.end());
  for (const std::string& in : inputs)
    if (sameFile(in, out)) throw UsageError("-o/--output '" + out + "' is the input '" + in + "': it would be overwritten");
  ModelOptions m = modelFromConfigAndFlags(r);
  // A FIFO or pipe is waited for until the budget; inputs past --max-input-mb are refused.
  const ReadLimits lim = readLimits(r, dl.remaining());
  Problem p = parseProblemFile(files[0], lim);
  std::vector<ScheduleView> views;
  for (size_t i = 1; i < files.size(); ++i) views.push_back(viewSchedule(p, files[0], m, files[i], lim));
  const double scheduleRead = dl.elapsed();
  std::vector<Trace> traces;
  for (const std::string& t : tracePaths) traces.push_back(readTrace(t, lim));
  const double traceRead = dl.elapsed() - scheduleRead;
  std::vector<Stats> stats;
  for (size_t i = 0; i < statsPaths.size(); ++i) {
    stats.push_back(readStats(statsPaths[i], lim));
    checkStats(p, stats.back(), views[i]);
  }
  // The page is drawn after the bound: its exact covers stop when what is left of the budget is what
  // drawing and writing are expected to take; the remaining components get their quick floors.
  const double drawReserve = kDrawPerScheduleRead * scheduleRead + kDrawPerTraceRead * traceRead;
  bool quickFloors = false;
  BoundOptions bo;
  bo.give_up = [&] {
    if (dl.remaining() > drawReserve && !dl.expired()) return false;
    quickFloors = true;
    return true;
  };
  LowerBound lb = lowerBound(p, m, bo);
  const std::string boundNote = quickFloors ? "quick floors past the " + humanNumber(seconds) + " s budget (-s)" : "";
  if (quickFloors) std::cerr << "mlsys report: lower bound: " << boundNote << "; 'mlsys bound' with more time can give a tighter one\n";
  std::string html;
  if (views.size() == 1) {
    Ctx c{p, views[0], lb, files[0], boundNote};
    html = renderPage(c, traces.empty() ? nullptr : &traces[0], stats.empty() ? nullptr : &stats[0]);
  } else {
    std::vector<const ScheduleView*> vp;
    for (const auto& v : views) vp.push_back(&v);
    std::vector<const Trace*> tp;
    for (const auto& t : traces) tp.push_back(&t);
    std::vector<const Stats*> sp;
    for (const auto& s : stats) sp.push_back(&s);
    html = renderComparePage(p, files[0], lb, boundNote, vp, tp, sp);
  }
  writeFileAtomic(out, html);
  bool allValid = true;
  std::string summary;
  for (const auto& v : views) {
    summary += (summary.empty() ? "" : " vs ") + formatDouble(v.ev.total) + (v.ev.valid ? "" : " INVALID rule " + std::string(ruleName(v.ev.rule)));
    allValid &= v.ev.valid;
  }
  std::cerr << "mlsys report: wrote " << out << " (" << p.name << ", latency " << summary << ")\n";
  for (const auto& v : views) {
    const size_t shown = std::min<size_t>(v.warnings.size(), 5);  // all of them are on the page
    for (size_t i = 0; i < shown; ++i) std::cerr << "warning: " << v.warnings[i] << "\n";
    if (v.warnings.size() > shown) std::cerr << "warning: ... and " << v.warnings.size() - shown << " more (see the page)\n";
    if (!v.ev.valid) std::cerr << "mlsys: invalid schedule '" << v.path << "' (rule " << ruleName(v.ev.rule) << "): " << v.ev.reason << "\n";
  }
  return allValid ? 0 : 1;
}

}  // namespace mlsys
