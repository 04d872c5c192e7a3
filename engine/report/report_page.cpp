// `mlsys report`: one self-contained HTML page (inline CSS + SVG, no scripts, no network) that
// shows a schedule as a person wants to read it: the headline numbers, a timeline of subgraphs
// with widths proportional to latency, the fast-memory occupancy of each subgraph, a table of
// every subgraph (time, traffic, retention), with --trace the convergence of the search, with
// --stats the solver's statistics. With two schedules, a comparison page (report_compare.cpp).
// This file: the inputs (schedules, --trace, --stats) and the parts of the pages (frame, cards,
// chips, the stats table, the warnings); the command is report_command.cpp, the page of one
// schedule report_schedule.cpp.
#include "engine/report/report_page.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cost/model/json_util.h"
#include "engine/io/files.h"
#include "engine/report/report_format.h"
#include "engine/search/run_state.h"

namespace mlsys {

// ---------------------------------------------------------------- inputs

bool isConstructionRow(const std::string& worker) {
  return worker == traceTagName(TraceTag::First) || worker == traceTagName(TraceTag::Baseline) ||
         worker == traceTagName(TraceTag::Exact);
}

bool isConstructorRow(const std::string& worker) { return worker == "chain" || worker == "greedy"; }

bool parseTimeAxis(const std::string& text, TimeAxis& out) {
  if (text == "auto") out = TimeAxis::Auto;
  else if (text == "linear") out = TimeAxis::Linear;
  else if (text == "log") out = TimeAxis::Log;
  else return false;
  return true;
}

std::string violationsText(const Evaluation& ev) {
  const size_t n = std::max<size_t>(1, ev.violations.size());
  std::vector<std::string> rules;  // distinct, in the order found
  for (const Violation& x : ev.violations)
    if (std::find(rules.begin(), rules.end(), ruleName(x.rule)) == rules.end()) rules.push_back(ruleName(x.rule));
  if (rules.empty()) rules.push_back(ruleName(ev.rule));
  std::string s = humanNumber(static_cast<i64>(n)) + (n == 1 ? " violation" : " violations");
  s += rules.size() == 1 ? " (rule " : " (rules ";
  for (size_t i = 0; i < rules.size() && i < 6; ++i) s += (i ? ", " : "") + esc(rules[i]);
  return s + (rules.size() > 6 ? ", &hellip;)" : ")");
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
    static const std::string kInstance = "# instance: ";
    if (line.rfind(kInstance, 0) == 0) t.instance = line.substr(kInstance.size());
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

// A --stats value for people, as HTML: seconds with their unit, the gap as a percentage, arrays
// and objects as small tables (below `depth` 3; deeper, their JSON text).
std::string statsValue(const std::string& key, const rapidjson::Value& v, int depth = 0) {
  const std::string unit = endsWith(key, "_per_s") ? "" : endsWith(key, "_s") ? " s" : "";
  if (v.IsBool()) return v.GetBool() ? "yes" : "no";
  if (v.IsString()) return v.GetStringLength() == 0 ? "&mdash;" : esc(std::string(v.GetString(), v.GetStringLength()));
  if (key == "gap" && v.IsNumber()) return humanPercent(v.GetDouble(), 2);
  if (v.IsInt64()) return humanNumber(static_cast<i64>(v.GetInt64())) + unit;
  if (v.IsNumber()) return humanNumber(v.GetDouble(), unit.empty() ? 4 : 3) + unit;  // past i64: a double
  if (v.IsNull()) return "&mdash;";
  if ((v.IsArray() && v.Empty()) || (v.IsObject() && v.ObjectEmpty())) return "none";
  if (depth >= 3) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return "<code>" + esc(buf.GetString()) + "</code>";
  }
  std::ostringstream o;
  if (v.IsObject()) {  // key = value lines
    o << "<table class=\"mini\"><tbody>";
    for (const auto& m : v.GetObject()) {
      const std::string k(m.name.GetString(), m.name.GetStringLength());
      o << "<tr><td>" << esc(k) << "</td><td>" << statsValue(k, m.value, depth + 1) << "</td></tr>";
    }
    o << "</tbody></table>";
    return o.str();
  }
  bool objects = true;
  for (const auto& x : v.GetArray()) objects &= x.IsObject();
  if (!objects) {  // a list
    std::string s;
    for (const auto& x : v.GetArray()) s += (s.empty() ? "" : ", ") + statsValue(key, x, depth + 1);
    return s;
  }
  // Objects: one row each, an index column ("worker" for `workers`), a column per member name
  // (right-aligned when every value of it is a number).
  std::vector<std::string> cols;
  std::vector<char> numeric;  // per column
  std::map<std::string, size_t> colOf;
  for (const auto& x : v.GetArray())
    for (const auto& m : x.GetObject()) {
      auto [it, added] = colOf.emplace(std::string(m.name.GetString(), m.name.GetStringLength()), cols.size());
      if (added) cols.push_back(it->first), numeric.push_back(1);
      numeric[it->second] &= m.value.IsNumber();
    }
  o << "<table class=\"mini\"><thead><tr><th class=\"n\">" << (key == "workers" ? "worker" : "#") << "</th>";
  for (size_t c = 0; c < cols.size(); ++c)
    o << (numeric[c] ? "<th class=\"n\">" : "<th>") << esc(keyLabel(cols[c])) << "</th>";
  o << "</tr></thead><tbody>";
  size_t i = 0;
  for (const auto& x : v.GetArray()) {
    std::vector<const rapidjson::Value*> cells(cols.size(), nullptr);
    for (const auto& m : x.GetObject()) {
      const size_t c = colOf[std::string(m.name.GetString(), m.name.GetStringLength())];
      if (!cells[c]) cells[c] = &m.value;  // the first of a repeated name
    }
    o << "<tr><td class=\"n\">" << i++ << "</td>";
    for (size_t c = 0; c < cols.size(); ++c)
      o << (numeric[c] ? "<td class=\"n\">" : "<td>")
        << (cells[c] ? statsValue(cols[c], *cells[c], depth + 1) : "&mdash;") << "</td>";
    o << "</tr>";
  }
  o << "</tbody></table>";
  return o.str();
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

ScheduleView viewSchedule(const Problem& p, const std::string& problem_path, const ModelOptions& m,
                          const std::string& path, const ReadLimits& lim) {
  ScheduleView v;
  v.path = path;
  try {
    v.s = parseScheduleFile(path, p, lim);
  } catch (const InputError& e) {
    std::string what = e.what();
    if (what.find("(op index)") != std::string::npos || what.find("(tensor index)") != std::string::npos)
      throw InputError(what + "; is it a schedule of another problem? '" + problem_path + "' has " +
                       std::to_string(p.numOps()) + " ops and " + std::to_string(p.numTensors()) + " tensors");
    throw;
  }
  v.ev = evaluateSchedule(p, v.s, m);
  std::vector<std::string> differ = reportedLatencyWarnings(v.s, v.ev);
  if (!differ.empty() && 2 * differ.size() >= v.ev.subgraphs.size())  // first: it explains the rest
    v.warnings.push_back(
        std::to_string(differ.size()) + " of " + std::to_string(v.ev.subgraphs.size()) +
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
  // The name as --stats wrote it (valid UTF-8; a newline or escape survives the JSON round trip).
  if (!st.instance.empty() && st.instance != validUtf8(p.name))
    v.warnings.push_back("--stats '" + st.path + "' is for instance '" + printable(st.instance) +
                         "', the problem is '" + printable(p.name) + "'");
  if (st.best_latency > 0 && std::abs(st.best_latency - v.ev.total) > 1e-9 * std::max(1.0, v.ev.total))
    v.warnings.push_back("--stats '" + st.path + "' reports best latency " + humanNumber(st.best_latency) +
                         ", the schedule '" + v.path + "' has " + humanNumber(v.ev.total));
}

void checkTrace(const Problem& p, const Trace& t, const std::string& path, ScheduleView& v) {
  if (!t.instance.empty() && t.instance != p.name && t.instance != validUtf8(p.name) && t.instance != printable(p.name))
    v.warnings.push_back("--trace '" + path + "' is for instance '" + printable(t.instance) + "', the problem is '" +
                         printable(p.name) + "'");
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

// A model node's name as a chip shows it: its last 2 path parts ("/layer1/0/conv1/Conv" ->
// "conv1/Conv"), at most 28 characters (the full name is in the chip's tooltip).
static std::string shortName(const std::string& name) {
  std::string s = name;
  size_t cut = s.size(), slashes = 0;
  while (cut > 0 && slashes < 2) {
    --cut;
    if (s[cut] == '/' && cut + 1 < s.size()) ++slashes;
  }
  if (slashes == 2) s = s.substr(cut + 1);
  if (s.size() > 28) s = "\xE2\x80\xA6" + s.substr(s.size() - 27);
  return s;
}

std::string opChips(const Problem& p, const std::vector<OpId>& ops) {
  std::ostringstream o;
  for (OpId op : ops) {
    const Op& opd = p.ops[op];
    TensorId out = opd.outputs.empty() ? -1 : opd.outputs[0];
    o << "<span class=\"chip " << opTypeShort(opd.type) << "\" title=\"op " << op << " "
      << (opd.type == OpType::MatMul ? "MatMul" : "Pointwise");
    // The model node it comes from (`op_names`, from `mlsys import`), in full in the tooltip.
    if (!p.op_names.empty()) o << " " << esc(validUtf8(p.op_names[op]));
    if (out >= 0)
      o << " &rarr; t" << out << " (" << humanNumber(p.widths[out]) << "&times;" << humanNumber(p.heights[out]) << ")";
    o << ", base cost " << humanNumber(opd.base_cost) << "\">" << op << ":" << opTypeShort(opd.type);
    if (!p.op_names.empty()) o << " <span class=\"nm\">" << esc(validUtf8(shortName(p.op_names[op]))) << "</span>";
    o << "</span> ";
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
.tri{display:inline-block;width:0;height:0;border-left:6px solid transparent;border-right:6px solid transparent;border-bottom:11px solid currentColor;vertical-align:-1px;margin-right:5px}
.cb{fill:var(--cb);background:var(--cb)}.mb{fill:var(--mb);background:var(--mb)}.mx{fill:var(--mx);background:var(--mx)}.bad{fill:var(--bad);background:var(--bad)}
rect.sg{stroke:#fff;stroke-width:.6}rect.sg:hover{stroke:#000;stroke-width:1.5}
rect.sg.badsg{stroke:#000;stroke-width:2}
rect.occ:hover,rect.occr:hover{opacity:.75}
table{border-collapse:collapse;width:100%;font-size:12.5px;font-variant-numeric:tabular-nums}
th{position:sticky;top:0;background:#eef1f5;text-align:left;font-weight:600;padding:5px 6px;border-bottom:1px solid #cfd5de;white-space:nowrap}
th.n{text-align:right}
td{padding:4px 6px;border-bottom:1px solid var(--line);vertical-align:top}
td.n{text-align:right;white-space:nowrap}
table.kv{width:auto}table.kv>tbody>tr>td:first-child{color:var(--mute);padding-right:18px}
table.wide{font-size:11.5px}table.wide th{white-space:normal;padding:4px 4px;vertical-align:bottom}table.wide td{padding:3px 4px}
table.wide td.ret{min-width:70px}table.wide td.ops{min-width:90px}
table.mini{width:auto;font-size:12px}table.mini th{position:static;background:none;padding:0 14px 1px 0;border-bottom:1px solid #cfd5de;color:var(--mute);font-weight:500}
table.mini td{padding:1px 14px 1px 0;border-bottom:0}
tr:target{background:#fff7cc}
tr.badrow{background:#ffecec}
.chip{display:inline-block;padding:0 4px;margin:1px 2px 1px 0;border-radius:3px;font-size:11.5px;white-space:nowrap}
.chip.MM{background:#dde8fb;color:#1d4f9c}.chip.PW{background:#e3f4e6;color:#1f6a33}
.chip .nm{font-weight:400;opacity:.8}
.tag{display:inline-block;padding:0 6px;border-radius:9px;font-size:11px;color:#fff}
.bv{display:flex;flex-direction:column-reverse;gap:2px}
.bv em{font-style:normal;text-align:right}
.bar{position:relative;height:5px;background:#eef1f5;border-radius:2px}
.bar span{position:absolute;left:0;top:0;bottom:0;border-radius:2px}
.split{display:flex;height:5px;border-radius:2px;overflow:hidden;background:#eef1f5}
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
  return "<div class=\"card " + cls + "\"><div class=\"k\">" + key + "</div><div class=\"v\">" + value +
         "</div><div class=\"d\">" + detail + "</div></div>\n";
}

std::string pageStart(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, "
         "initial-scale=1\">\n<title>" +
         title + "</title>\n<style>" + kCss + "</style></head><body>\n";
}

std::string pageEnd(const std::string& model, const std::string& extra) {
  return std::string("<footer>Generated by mlsys ") + MLSYS_VERSION + " (git " + MLSYS_GIT_HASH + ") &middot; model " +
         esc(model) + extra + "</footer>\n</body></html>\n";
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
      o << "<td>" << (it == vals.end() ? "&mdash;" : *it->second) << "</td>";
    }
    o << "</tr>\n";
  }
  o << "</tbody></table></div>\n";
  return o.str();
}

std::string renderWarnings(const std::vector<std::string>& warnings) {
  if (warnings.empty()) return "";
  std::ostringstream o;
  o << "<section><h2 class=\"warn\">Warnings (" << warnings.size() << ")</h2><details"
    << (warnings.size() <= 10 ? " open" : "") << "><summary>show</summary><ul>\n";
  for (const auto& w : warnings) o << "<li>" << esc(w) << "</li>\n";
  o << "</ul></details></section>\n";
  return o.str();
}

}  // namespace mlsys
