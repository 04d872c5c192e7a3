#include "cost/pricing/evaluator.h"

#include <algorithm>
#include <numeric>

namespace mlsys {
namespace {

// A running sum of subgraph latencies: num/den exactly with a common denominator while 128 bits
// suffice (`ok`), and the same sum in long double, in the same order, for when they do not.
// Once `ok` is false it stays false: a longer sum overflows at the same term.
struct ExactSum {
  i128 num = 0, den = 1;
  bool ok = true;
  long double approx = 0;
  void add(const SubgraphReport& r) {
    approx += r.cost.latency;
    if (!ok) return;
    i128 d = r.cost.den, n = r.cost.num;
    if (d <= 0) {
      ok = false;
      return;
    }
    i128 g = gcd128(den, d);
    i128 l;
    if (__builtin_mul_overflow(den / g, d, &l)) {
      ok = false;
      return;
    }
    i128 a, b;
    // den starts at 1 and is only ever set to l >= 1.
    if (__builtin_mul_overflow(num, l / den, &a) ||  // NOLINT(clang-analyzer-core.DivideZero)
        __builtin_mul_overflow(n, l / d, &b) || __builtin_add_overflow(a, b, &num)) {
      ok = false;
      return;
    }
    den = l;
    i128 h = gcd128(num, den);
    if (h > 1) {
      num /= h;
      den /= h;
    }
  }
  double value() const {
    if (ok) return static_cast<double>(static_cast<long double>(num) / static_cast<long double>(den));
    return static_cast<double>(approx);
  }
};

}  // namespace

double exactTotal(const std::vector<SubgraphReport>& sg) {
  // Sum num/den exactly with a common denominator; fall back to doubles if 128 bits would overflow.
  ExactSum s;
  for (const auto& r : sg) s.add(r);
  return s.value();
}

std::vector<double> exactPrefixTotals(const std::vector<SubgraphReport>& sg) {
  std::vector<double> out;
  out.reserve(sg.size() + 1);
  ExactSum s;
  out.push_back(s.value());
  for (const auto& r : sg) {
    s.add(r);
    out.push_back(s.value());
  }
  return out;
}

Evaluation evaluateSchedule(const Problem& p, const Schedule& s, const ModelOptions& m, CostMethod method,
                            StopToken stop, const std::function<bool()>& give_up) {
  Evaluation ev;
  ev.model = m;
  auto fail = [&](int sg, Rule rule, const std::string& why) {
    ev.violations.push_back({rule, sg, (sg >= 0 ? "subgraph " + std::to_string(sg) + ": " : std::string()) + why});
    if (!ev.valid) return;  // rule / reason: the first violation
    ev.valid = false;
    ev.rule = rule;
    ev.bad_subgraph = sg;
    ev.reason = ev.violations.back().reason;
  };
  const int n = static_cast<int>(s.subgraphs.size());
  if (n == 0) fail(-1, Rule::V1, "the schedule has no subgraphs");
  std::vector<char> written(p.numTensors(), 0), covered(p.numOps(), 0);
  bool prevBad = false;  // the previous subgraph had an index out of range (its retain list is not read)
  static const std::vector<TensorId> kNone;
  for (int i = 0; i < n; ++i) {
    if ((i & 63) == 63 && (stop.stopRequested() || (give_up && give_up()))) {
      fail(-1, Rule::Interrupted, "the evaluation was interrupted by a signal");
      ev.interrupted = true;
      return ev;
    }
    const SubgraphSched& sg = s.subgraphs[i];
    // Indices out of range (a schedule built in code: the readers check theirs): V1, not a crash.
    std::string bad;
    for (size_t j = 0; j < sg.ops.size() && bad.empty(); ++j)
      if (sg.ops[j] < 0 || sg.ops[j] >= p.numOps())
        bad = "op index " + std::to_string(sg.ops[j]) + " at subgraphs[" + std::to_string(i) + "][" +
              std::to_string(j) + "] is out of range [0, " + std::to_string(p.numOps()) + ")";
    for (size_t j = 0; j < sg.retain.size() && bad.empty(); ++j)
      if (sg.retain[j] < 0 || sg.retain[j] >= p.numTensors())
        bad = "tensor index " + std::to_string(sg.retain[j]) + " at tensors_to_retain[" + std::to_string(i) + "][" +
              std::to_string(j) + "] is out of range [0, " + std::to_string(p.numTensors()) + ")";
    if (!bad.empty()) {
      fail(i, Rule::V1, bad);
      SubgraphReport rep;
      rep.cost.valid = false;
      rep.cost.rule = Rule::V1;
      rep.cost.reason = bad;
      ev.subgraphs.push_back(std::move(rep));
      prevBad = true;
      continue;
    }
    const auto& rin = i > 0 && !prevBad ? s.subgraphs[i - 1].retain : kNone;
    prevBad = false;
    SubgraphPlan pl = planSubgraph(p, m, sg.ops, sg.gran, rin, sg.retain);
    SubgraphReport rep;
    rep.cost = costSubgraph(p, pl, sg.trav, method, give_up);
    if (rep.cost.interrupted) {
      fail(-1, Rule::Interrupted, "the evaluation was interrupted (a stop request or the deadline)");
      ev.interrupted = true;
      return ev;
    }
    rep.ntw = pl.ntw;
    rep.nth = pl.nth;
    rep.nk = pl.nk;
    rep.warnings = pl.warnings;
    for (const auto& w : pl.warnings) ev.warnings.push_back("subgraph " + std::to_string(i) + ": " + w);
    if (!rep.cost.valid) fail(i, rep.cost.rule, rep.cost.reason);
    for (OpId o : sg.ops)
      if (o >= 0 && o < p.numOps()) covered[o] = 1;
    if (pl.valid) {
      // V5: every boundary input is available.
      for (TensorId t : pl.boundary_inputs) {
        if (p.producer[t] < 0) continue;                                  // (a) graph input
        if (std::find(rin.begin(), rin.end(), t) != rin.end()) continue;  // (b)
        if (written[t]) continue;                                         // (c)
        // The first subgraph has no predecessor to retain from (no "subgraph -1" in the message).
        std::string why = "tensor " + std::to_string(t) + " (produced by op " + std::to_string(p.producer[t]) +
                          ") is needed but not available: it is not a graph input, " +
                          (i == 0 ? std::string("and no subgraph runs before the first one to produce it")
                                  : "not retained by subgraph " + std::to_string(i - 1) +
                                        ", and no earlier subgraph wrote it to slow memory");
        fail(i, Rule::V5, why);
      }
      for (TensorId t : pl.written) written[t] = 1;
    }
    ev.subgraphs.push_back(std::move(rep));
  }
  for (int o = 0; o < p.numOps(); ++o)
    if (!covered[o]) {
      fail(-1, Rule::V2, "op " + std::to_string(o) + " appears in no subgraph");
      break;
    }
  for (int t = 0; t < p.numTensors(); ++t)
    if (p.is_graph_output[t] && !written[t]) {
      fail(-1, Rule::V7,
           "graph output tensor " + std::to_string(t) +
               " never reaches slow memory (it is never a non-retained output)");
      break;
    }
  ev.total = exactTotal(ev.subgraphs);
  return ev;
}

}  // namespace mlsys
