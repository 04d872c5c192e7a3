// The HTML report's room: the inputs it reads (schedules, --trace, --stats), the page frame, the
// SVG charts and the two pages. The command (options, budget, writing) is engine/cli/report_command.cpp.
//   report_page.cpp     the inputs, the frame, the parts both pages use
//   report_schedule.cpp the page of one schedule (and its occupancy chart)
//   report_charts.cpp   timeline and convergence charts
//   report_compare.cpp  the comparison page of two schedules
//   report_format.*     numbers (humanNumber), escaping
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/pricing/evaluator.h"
#include "engine/report/schedule_facts.h"

namespace mlsys {

// ---------------------------------------------------------------- inputs

// A `solve --trace` CSV (engine/search/run_state.h, TraceFile): seconds,worker,latency.
struct TracePoint {
  double seconds = 0;
  std::string worker;
  double latency = 0;
};
struct Trace {
  std::vector<TracePoint> points;       // every row but `end`, in file order
  double end_s = -1, end_latency = -1;  // the `end` row (traces of older versions have none)
  std::string instance;                 // from the `# instance: NAME` line ("" in older traces)
};
// Throws InputError naming the file and line of a malformed row.
Trace readTrace(const std::string& path, const ReadLimits& lim = {});
// Rows written before the search starts (first schedule, baseline, exact solver), not by a worker.
bool isConstructionRow(const std::string& worker);
// Rows of a constructor inside the search ("chain", "greedy": engine/search/beam.cpp builds one
// schedule each at the start of a beam worker): drawn as a point at the time it was built and
// labelled "constructor NAME", not as a worker's step line.
bool isConstructorRow(const std::string& worker);

// A `solve --stats` JSON (engine/cli/json_out.h, SolveStats): its members in file order, each
// value as HTML for people: numbers through humanNumber, seconds with their unit, the gap as a
// percentage, an array of objects (`workers`) as a small table with an index column, an object
// (`non_default`) as key = value lines, an empty array or object as "none".
struct Stats {
  std::string path;
  std::vector<std::pair<std::string, std::string>> fields;  // key, value as HTML (escaped)
  std::string instance;
  double best_latency = -1, elapsed_s = -1;
};
// Throws InputError if the file is not JSON or not an object with best_latency.
Stats readStats(const std::string& path, const ReadLimits& lim = {});

// One subgraph as the pages show it.
struct SgView {
  double start = 0, latency = 0;
  SubgraphBound bound = SubgraphBound::Compute;
  i64 retained_ws = 0;  // sum |t| of tensors retained into and out of the subgraph
  SubgraphTraffic traffic;
};

// One schedule, read and evaluated.
struct ScheduleView {
  std::string path;
  Schedule s;
  Evaluation ev;
  std::vector<SgView> sg;
  std::vector<std::string> warnings;  // the evaluator's, reported latencies that differ, --stats mismatches
  double loaded = 0, stored = 0, compute = 0, memory = 0;  // sums over the subgraphs whose traffic is known
  bool traffic_known = true;                               // every subgraph's
};
// Throws InputError if the file is not a schedule of `p` (naming both files).
ScheduleView viewSchedule(const Problem& p, const std::string& problem_path, const ModelOptions& m,
                          const std::string& path, const ReadLimits& lim = {});
// The stats belong to another instance or another schedule: warnings on the view.
void checkStats(const Problem& p, const Stats& st, ScheduleView& v);
// The same for a --trace: a warning on the view when it names another instance.
void checkTrace(const Problem& p, const Trace& t, const std::string& path, ScheduleView& v);

// ---------------------------------------------------------------- page parts

const char* boundClass(SubgraphBound b);
const char* boundLabel(SubgraphBound b);
const char* opTypeShort(OpType t);
// "t3 (128×256), t7 (64×64)" or "none".
std::string tensorsText(const Problem& p, const std::vector<TensorId>& ts);
// Op chips (MM/PW with a tooltip each) of a list of ops.
std::string opChips(const Problem& p, const std::vector<OpId>& ops);
// A header card: a key, a big value, a detail line.
std::string card(const std::string& cls, const std::string& key, const std::string& value, const std::string& detail);
// <!DOCTYPE html> ... <body>, with the stylesheet; and the footer (version, model, `extra`) ... </html>.
std::string pageStart(const std::string& title);
std::string pageEnd(const std::string& model, const std::string& extra);
// The table of `solve --stats` files, one column per file.
std::string renderStats(const std::vector<const Stats*>& stats, const std::vector<std::string>& labels);
// The warnings section ("" if none).
std::string renderWarnings(const std::vector<std::string>& warnings);

// ---------------------------------------------------------------- charts (report_charts.cpp)

// Subgraphs in execution order, width proportional to latency, wrapped into rows; `id` of the
// <svg>; each subgraph links to the table row "#<anchor>sg-<i>".
std::string renderTimeline(const Problem& p, const ScheduleView& v, const std::string& id, const std::string& anchor);
// Peak fast-memory working set per subgraph against the capacity (links to "#sg-<i>";
// report_schedule.cpp).
std::string renderOccupancy(const Problem& p, const ScheduleView& v);
// Best latency over time, up to `horizon` seconds, log latency axis, the lower bound dashed.
// One labelled run: a step line per search worker, the overall best underneath, construction
// rows (first, baseline, exact) as diamonds, constructor rows as triangles. Several runs (a
// comparison): one best line per run. Round ticks on both axes (axisTicks, logAxisTicks).
struct TraceRun {
  std::string label;  // "" for the only run
  const Trace* trace;
};
// The time axis of the convergence plot (`mlsys report --time-axis`): linear from 0, logarithmic
// from the round value (1, 2, 5 x 10^n) at or below the first row after 0 s, or chosen by logTimeAxis.
enum class TimeAxis { Auto, Linear, Log };
// "auto", "linear", "log"; false for anything else.
bool parseTimeAxis(const std::string& text, TimeAxis& out);
// Improvements cluster early when the median time of a run's rows (but `end`; of any run on a
// comparison) is below kEarlyShare of the plot's end (the horizon, or the last row): a linear axis
// would squeeze them into its first tenth. Auto is logarithmic then; Linear and Log are what they
// say. Never logarithmic without a row after 0 s.
inline constexpr double kEarlyShare = 0.1;
bool logTimeAxis(const std::vector<TraceRun>& runs, double horizon, TimeAxis mode);
std::string renderConvergence(const std::vector<TraceRun>& runs, double lowerBound, double horizon,
                              TimeAxis timeAxis = TimeAxis::Auto);
// Which vertices of a step line of a running minimum to draw (a trace of a long run can have a
// million improvements; the plot is 260 px high). `y`: the vertices' y coordinates in px, in time
// order, monotone (a non-increasing best on the latency axis). Up to `maxExact` vertices, all of
// them (indices 0..n-1); beyond, the first, the last, and each vertex at least `minStepPx` above
// or below the last one kept. The line drawn through the kept vertices is then within `minStepPx`
// of the exact line at every time, and a monotone line of height H px keeps at most
// H / minStepPx + 2 vertices.
std::vector<size_t> thinSteps(const std::vector<double>& y, double minStepPx, size_t maxExact);
inline constexpr double kMinStepPx = 0.1;            // the convergence plot's thinning resolution
inline constexpr size_t kMaxExactSteps = 2000;       // step lines up to this many vertices are not thinned
inline constexpr size_t kMaxConstructionMarks = 50;  // construction rows drawn per run
// The x range of a convergence plot: the `end` row's time, else the stats' elapsed time, else
// the last row's time plus 3%.
double traceHorizon(const Trace& t, const Stats* st);

// ---------------------------------------------------------------- the pages

// The page of one schedule (report_schedule.cpp); `trace` and `stats` may be null. An invalid
// schedule's cards show no total and no gap: "invalid" and its violations instead.
std::string renderSchedulePage(const Problem& p, const std::string& problem_path, const LowerBound& lb,
                               const std::string& boundNote, const ScheduleView& v, const Trace* trace,
                               const Stats* stats, TimeAxis timeAxis = TimeAxis::Auto);
// The comparison page of two or more schedules (report_compare.cpp).
std::string renderComparePage(const Problem& p, const std::string& problem_path, const LowerBound& lb,
                              const std::string& boundNote, const std::vector<const ScheduleView*>& views,
                              const std::vector<const Trace*>& traces, const std::vector<const Stats*>& stats,
                              TimeAxis timeAxis = TimeAxis::Auto);
// "1 violation" / "3 violations (rules V8, V2)" of an invalid schedule: its cards and banner.
std::string violationsText(const Evaluation& ev);

}  // namespace mlsys
