#include <algorithm>
#include <functional>
#include <map>

#include "moves/move.h"
#include "moves/moves.h"

namespace mlsys {

namespace {
const std::map<std::string, std::function<std::unique_ptr<Move>()>>& factories() {
  static const std::map<std::string, std::function<std::unique_ptr<Move>()>> f = {
      {"merge", [] { return std::make_unique<MergeMove>(); }},
      {"fuse", [] { return std::make_unique<FuseMove>(); }},
      {"fuse-far", [] { return std::make_unique<FuseFarMove>(); }},
      {"split", [] { return std::make_unique<SplitMove>(); }},
      {"move-op", [] { return std::make_unique<MoveOpMove>(); }},
      {"recompute", [] { return std::make_unique<RecomputeMove>(); }},
      {"uncompute", [] { return std::make_unique<UncomputeMove>(); }},
      {"granularity", [] { return std::make_unique<GranularityMove>(); }},
      {"traversal", [] { return std::make_unique<TraversalMove>(); }},
      {"retain", [] { return std::make_unique<RetainMove>(); }},
      {"reorder", [] { return std::make_unique<ReorderMove>(); }},
      {"reproduce", [] { return std::make_unique<ReproduceMove>(); }},
  };
  return f;
}
}  // namespace

std::unique_ptr<Move> makeMove(const std::string& name) {
  auto it = factories().find(name);
  return it == factories().end() ? nullptr : it->second();
}

const std::vector<std::string>& moveNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [k, _] : factories()) v.push_back(k);
    return v;
  }();
  return names;
}

std::vector<OpId> uniqueOps(const std::vector<OpId>& ops) {
  std::vector<OpId> out;
  for (OpId o : ops)
    if (std::find(out.begin(), out.end(), o) == out.end()) out.push_back(o);
  return out;
}

void pruneRetain(const Problem& p, SubgraphSched& sg) {
  std::vector<TensorId> keep;
  for (TensorId t : sg.retain) {
    if (p.is_graph_output[t]) continue;
    bool produced = false;
    for (OpId o : sg.ops)
      for (TensorId u : p.ops[o].outputs)
        if (u == t) produced = true;
    if (produced && std::find(keep.begin(), keep.end(), t) == keep.end()) keep.push_back(t);
  }
  sg.retain = std::move(keep);
}

bool proposePair(IncrementalEvaluator& ev, int s, int count, SubgraphSched a, SubgraphSched b, Change& out) {
  pruneRetain(ev.problem(), a);
  pruneRetain(ev.problem(), b);
  if (!repairGranularity(ev, a, ev.retainedInto(s))) return false;
  if (!repairGranularity(ev, b, a.retain)) return false;
  out.first = s;
  out.count = count;
  out.repl = {std::move(a), std::move(b)};
  return true;
}

SubgraphSched unionOf(const Problem& p, const SubgraphSched& a, const SubgraphSched& b, std::vector<TensorId> retain) {
  SubgraphSched m;
  m.ops = a.ops;
  m.ops.insert(m.ops.end(), b.ops.begin(), b.ops.end());
  m.ops = uniqueOps(m.ops);
  m.retain = std::move(retain);
  pruneRetain(p, m);
  return m;
}

std::pair<i64, i64> outputShape(const IncrementalEvaluator& ev, int s) {
  const Problem& p = ev.problem();
  const SubgraphSched& S = ev.schedule().subgraphs[s];
  const auto& w = ev.info(s).written;
  const TensorId ref = !w.empty() ? w[0] : (!S.retain.empty() ? S.retain[0] : p.ops[S.ops.back()].outputs[0]);
  return {p.widths[ref], p.heights[ref]};
}

bool bestRepairedOf(IncrementalEvaluator& ev, SubgraphSched& sg, const std::vector<TensorId>& rin,
                    const std::vector<Granularity>& grans) {
  bool found = false;
  double bestLat = 0;
  Granularity best{};
  for (const Granularity& g : grans) {
    SubgraphSched c = sg;
    c.gran = g;
    if (!repairGranularity(ev, c, rin)) continue;
    const double l = ev.cost(c, rin).latency;
    if (!found || l < bestLat) {
      found = true;
      bestLat = l;
      best = c.gran;
    }
  }
  if (found) sg.gran = best;
  return found;
}

}  // namespace mlsys
