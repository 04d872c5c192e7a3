#include "engine/construct.h"

#include <algorithm>

#include "engine/granularity.h"

namespace mlsys {

void regranulate(const Problem& p, const ModelOptions& m, Schedule& s, bool exhaustive) {
  static const std::vector<TensorId> kNone;
  for (size_t i = 0; i < s.subgraphs.size(); ++i) {
    auto& sg = s.subgraphs[i];
    const auto& rin = i ? s.subgraphs[i - 1].retain : kNone;
    GranChoice c = bestGranularity(p, m, sg.ops, rin, sg.retain, exhaustive);
    if (c.found) {
      sg.gran = c.g;
      sg.trav = c.trav;
    }
  }
}

Schedule quickSchedule(const Problem& p, const ModelOptions& m) {
  Schedule s;
  static const std::vector<TensorId> kNone;
  for (OpId o : p.topo) {
    SubgraphSched sg;
    sg.ops = {o};
    TensorId out = p.ops[o].outputs[0];
    Granularity g{std::min(p.native, p.widths[out]), std::min(p.native, p.heights[out]),
                  p.ops[o].type == OpType::MatMul ? std::min(p.native, p.ops[o].K) : 1};
    // Halve the largest side until the op fits (it fits at [1,1,1], checked by the parser).
    for (int guard = 0; guard < 200; ++guard) {
      SubgraphPlan pl = planSubgraph(p, m, sg.ops, g, kNone, kNone);
      if (pl.valid && costSubgraph(p, pl, {}).valid) break;
      if (g.k >= g.w && g.k >= g.h && g.k > 1) g.k = (g.k + 1) / 2;
      else if (g.w >= g.h && g.w > 1) g.w = (g.w + 1) / 2;
      else if (g.h > 1) g.h = (g.h + 1) / 2;
      else break;
    }
    sg.gran = g;
    s.subgraphs.push_back(std::move(sg));
  }
  return s;
}

Schedule baselineSchedule(const Problem& p, const ModelOptions& m, const Deadline* dl) {
  Schedule s = quickSchedule(p, m);
  static const std::vector<TensorId> kNone;
  auto timeUp = [&] { return dl && dl->expired(); };
  for (auto& sg : s.subgraphs) {
    if (timeUp()) return s;
    GranChoice c = bestGranularity(p, m, sg.ops, kNone, kNone);
    if (c.found) {
      sg.gran = c.g;
      sg.trav = c.trav;
    }
  }
  // Retention: keep an output resident into the next subgraph when all its consumers are there.
  for (size_t i = 0; i + 1 < s.subgraphs.size(); ++i) {
    if (timeUp()) return s;
    auto& a = s.subgraphs[i];
    auto& b = s.subgraphs[i + 1];
    for (TensorId t : p.ops[a.ops[0]].outputs) {
      if (p.is_graph_output[t] || p.consumers[t].empty()) continue;
      bool allNext = std::all_of(p.consumers[t].begin(), p.consumers[t].end(), [&](OpId c) {
        return std::find(b.ops.begin(), b.ops.end(), c) != b.ops.end();
      });
      if (!allNext) continue;
      const auto& rinA = i ? s.subgraphs[i - 1].retain : kNone;
      std::vector<TensorId> rout = a.retain;
      rout.push_back(t);
      GranChoice ca = bestGranularity(p, m, a.ops, rinA, rout);
      GranChoice cb = bestGranularity(p, m, b.ops, rout, b.retain);
      if (!ca.found || !cb.found) continue;
      SubgraphCost oldA = costSubgraph(p, planSubgraph(p, m, a.ops, a.gran, rinA, a.retain), a.trav);
      SubgraphCost oldB = costSubgraph(p, planSubgraph(p, m, b.ops, b.gran, a.retain, b.retain), b.trav);
      if (ca.cost.latency + cb.cost.latency < oldA.latency + oldB.latency) {
        a.retain = rout;
        a.gran = ca.g;
        a.trav = ca.trav;
        b.gran = cb.g;
        b.trav = cb.trav;
      }
    }
  }
  return s;
}

}  // namespace mlsys
