// `mlsys report` (report.cpp): the command. Reads the problem, the schedules and the --trace and
// --stats files, prices the lower bound within what -s leaves after drawing, and writes the page
// of one schedule (report_schedule.cpp) or the comparison of two (report_compare.cpp).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "cost/model/json_util.h"
#include "engine/base/deadline.h"
#include "engine/cli/commands.h"
#include "engine/io/files.h"
#include "engine/report/report_format.h"
#include "engine/report/report_page.h"

namespace mlsys {

// What drawing and writing the page is expected to take: a multiple of what reading and evaluating
// the schedules took (both linear in their subgraphs and ops; measured 4-6 on 20k-100k subgraphs),
// plus a multiple of what reading the traces took (measured 0.45 on 1M rows).
constexpr double kDrawPerScheduleRead = 6.0, kDrawPerTraceRead = 0.5;

// After the page is written: one line with the latencies on stderr, the first warnings and the
// invalid schedules' rules. True when every schedule is valid.
static bool reportWritten(const std::string& out, const Problem& p, const std::vector<ScheduleView>& views) {
  bool allValid = true;
  std::string summary;
  for (const auto& v : views) {
    // An invalid schedule has no total (as on the page).
    summary += (summary.empty() ? "" : " vs ") +
               (v.ev.valid ? humanNumber(v.ev.total) : "INVALID rule " + std::string(ruleName(v.ev.rule)));
    allValid &= v.ev.valid;
  }
  std::cerr << "mlsys report: wrote " << out << " (" << printable(p.name) << ", latency " << summary << ")\n";
  for (const auto& v : views) {
    const size_t shown = std::min<size_t>(v.warnings.size(), 5);  // all of them are on the page
    for (size_t i = 0; i < shown; ++i) std::cerr << "warning: " << v.warnings[i] << "\n";
    if (v.warnings.size() > shown)
      std::cerr << "warning: ... and " << v.warnings.size() - shown << " more (see the page)\n";
    if (!v.ev.valid)
      std::cerr << "mlsys: invalid schedule '" << v.path << "' (rule " << ruleName(v.ev.rule) << "): " << v.ev.reason
                << "\n";
  }
  return allValid;
}

// The notes of `mlsys report --help`, after the options.
static const char* kReportHelp =
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
    "2,000 improvements is thinned to the vertices 0.1 px apart in height (at most about 2,600).\n"
    "Convergence plot: latency on a log axis; time on a linear axis from 0, or with --time-axis log on a log axis\n"
    "from the first improvement. The default, --time-axis auto, takes the log axis when half of a run's improvements\n"
    "come in the first 10% of the run (a linear axis would squeeze them against its left edge). Constructors\n"
    "(greedy, chain) are drawn as triangles at the time they built their schedule, search workers as step lines.\n"
    "Numbers are shown to at most 8 significant digits; 'mlsys evaluate --json' gives exact values.\n"
    "Examples:\n"
    "  mlsys report P.json S.json -o report.html --trace t.csv --stats s.json\n"
    "  mlsys report P.json A.json B.json -o compare.html --trace a.csv --trace b.csv\n";

int cmdReport(int argc, char** argv) {
  cxxopts::Options o(
      "mlsys report",
      "Write a self-contained HTML picture of a schedule (timeline, occupancy, per-subgraph table), or with two "
      "schedules a comparison page.");
  o.add_options()("o,output", "Output HTML file", cxxopts::value<std::string>())(
      "trace",
      "CSV from 'mlsys solve --trace': adds a convergence plot (with two schedules: once per schedule, in order)",
      cxxopts::value<std::vector<std::string>>())(
      "stats",
      "JSON from 'mlsys solve --stats': adds the solver statistics (with two schedules: once per schedule, in order)",
      cxxopts::value<std::vector<std::string>>())(
      "s,seconds",
      "Time budget of the command: the lower bound's exact covers stop early enough to write the page by then, and the "
      "remaining components get their quick floors, as with 'mlsys bound -s'",
      cxxopts::value<std::string>()->default_value("10"))(
      "time-axis",
      "Time axis of the convergence plot: log, linear, or auto (log when the improvements cluster early: their median "
      "time is below 10% of the run)",
      cxxopts::value<std::string>()->default_value("auto"))("h,help", "Show help");
  const char* usage =
      "mlsys report PROBLEM.json SOLUTION.json [SOLUTION_B.json] -o report.html [-s S] [--trace T.csv]... [--stats S.json]... [--time-axis log|linear|auto] [-c CONFIG] [--set model.K=V]... [--model K=V]...";
  auto r = parseFileCommand(o, argc, argv, "PROBLEM.json SOLUTION.json [SOLUTION_B.json] -o report.html", true);
  if (r.count("help")) return printHelp(o, "report", kReportHelp);
  std::vector<std::string> files;
  if (r.count("positional")) files = r["positional"].as<std::vector<std::string>>();
  if (files.size() < 2 || files.size() > 3)
    throw UsageError("expected 2 or 3 file arguments (a problem and one or two schedules), got " +
                     std::to_string(files.size()) + "\nusage: " + usage);
  if (!r.count("output")) throw UsageError(std::string("missing -o/--output FILE\nusage: ") + usage);
  const double seconds = parseSecondsText(r["seconds"].as<std::string>(), "--seconds");
  TimeAxis timeAxis = TimeAxis::Auto;
  if (!parseTimeAxis(r["time-axis"].as<std::string>(), timeAxis))
    throw UsageError("--time-axis must be log, linear or auto, got '" + r["time-axis"].as<std::string>() +
                     "'\nusage: " + usage);
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
    throw UsageError(std::to_string(tracePaths.size()) + " --trace files for " + std::to_string(nSched) +
                     " schedule(s)");
  if (statsPaths.size() > nSched)
    throw UsageError(std::to_string(statsPaths.size()) + " --stats files for " + std::to_string(nSched) +
                     " schedule(s)");
  std::vector<std::string> inputs = files;
  inputs.insert(inputs.end(), tracePaths.begin(), tracePaths.end());
  inputs.insert(inputs.end(), statsPaths.begin(), statsPaths.end());
  for (const std::string& in : inputs)
    if (sameFile(in, out))
      throw UsageError("-o/--output '" + out + "' is the input '" + in + "': it would be overwritten");
  ModelOptions m = modelFromConfigAndFlags(r);
  // A FIFO or pipe is waited for until the budget; inputs past --max-input-mb are refused.
  const ReadLimits lim = readLimits(r, dl.remaining());
  Problem p = parseProblemFile(files[0], lim);
  std::vector<ScheduleView> views;
  for (size_t i = 1; i < files.size(); ++i) views.push_back(viewSchedule(p, files[0], m, files[i], lim));
  const double scheduleRead = dl.elapsed();
  std::vector<Trace> traces;
  for (size_t i = 0; i < tracePaths.size(); ++i) {
    traces.push_back(readTrace(tracePaths[i], lim));
    checkTrace(p, traces.back(), tracePaths[i], views[i]);
  }
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
  if (quickFloors)
    std::cerr << "mlsys report: lower bound: " << boundNote
              << "; 'mlsys bound' with more time can give a tighter one\n";
  std::string html;
  if (views.size() == 1) {
    html = renderSchedulePage(p, files[0], lb, boundNote, views[0], traces.empty() ? nullptr : &traces[0],
                              stats.empty() ? nullptr : &stats[0], timeAxis);
  } else {
    std::vector<const ScheduleView*> vp;
    for (const auto& v : views) vp.push_back(&v);
    std::vector<const Trace*> tp;
    for (const auto& t : traces) tp.push_back(&t);
    std::vector<const Stats*> sp;
    for (const auto& s : stats) sp.push_back(&s);
    html = renderComparePage(p, files[0], lb, boundNote, vp, tp, sp, timeAxis);
  }
  writeFileAtomic(out, html);
  return reportWritten(out, p, views) ? 0 : 1;
}

}  // namespace mlsys
