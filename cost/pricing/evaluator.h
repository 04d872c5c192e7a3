// The full evaluator: every validity rule of the spec (V1-V11, E2, A-6) and the exact latency
// of every subgraph. This is the oracle the search and the writer re-check against.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cost/model/stop.h"
#include "cost/pricing/subgraph.h"

namespace mlsys {

struct SubgraphReport {
  SubgraphCost cost;
  i64 ntw = 0, nth = 0, nk = 1;
  std::vector<std::string> warnings;
};

// One violated rule and where: the subgraph (-1: the schedule as a whole) and why.
struct Violation {
  Rule rule = Rule::None;
  int subgraph = -1;
  std::string reason;  // "subgraph 3: tensor 7 is not available: ..."
};

struct Evaluation {
  bool valid = true;
  Rule rule = Rule::None;  // first violated rule
  std::string reason;      // "subgraph 3: tensor 7 is not available: ..."
  int bad_subgraph = -1;
  // Every violation, in the order found: per subgraph in order (the first rule each breaks, then
  // each unavailable input), then the schedule-wide ones (an op in no subgraph, a graph output
  // never written). violations[0] is rule / reason / bad_subgraph.
  std::vector<Violation> violations;
  std::vector<SubgraphReport> subgraphs;
  double total = 0;  // exact sum of the subgraph rationals, rounded once
  std::vector<std::string> warnings;
  ModelOptions model;
  bool interrupted = false;  // abandoned on a stop request (cost/model/stop.h): not a verdict
};

// `stop` is checked every 64 subgraphs: on a request the evaluation is abandoned (interrupted), so
// that a run on a 200,000-op graph ends within milliseconds of a signal. `give_up` (a deadline,
// when set) likewise, and within a subgraph's step walk.
Evaluation evaluateSchedule(const Problem& p, const Schedule& s, const ModelOptions& m,
                            CostMethod method = CostMethod::Auto, StopToken stop = {},
                            const std::function<bool()>& give_up = {});

// Sum of exact subgraph latencies as a double (exact rational sum where it fits 128 bits).
double exactTotal(const std::vector<SubgraphReport>& sg);
// The exact totals of every prefix in one linear pass: out[i] == exactTotal(the first i subgraphs)
// for i = 0..sg.size() (n + 1 values; out[0] = 0), bit for bit. The start times of a schedule.
std::vector<double> exactPrefixTotals(const std::vector<SubgraphReport>& sg);

}  // namespace mlsys
