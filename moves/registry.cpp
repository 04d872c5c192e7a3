#include <algorithm>
#include <functional>
#include <map>
#include <string_view>

#include "moves/move.h"
#include "moves/moves.h"

namespace mlsys {

namespace {
const std::map<std::string, std::function<std::unique_ptr<Move>()>>& factories() {
  static const std::map<std::string, std::function<std::unique_ptr<Move>()>> f = {
      {"merge", [] { return std::make_unique<MergeMove>(); }},
      {"split", [] { return std::make_unique<SplitMove>(); }},
      {"move-op", [] { return std::make_unique<MoveOpMove>(); }},
      {"recompute", [] { return std::make_unique<RecomputeMove>(); }},
      {"uncompute", [] { return std::make_unique<UncomputeMove>(); }},
      {"granularity", [] { return std::make_unique<GranularityMove>(); }},
      {"traversal", [] { return std::make_unique<TraversalMove>(); }},
      {"retain", [] { return std::make_unique<RetainMove>(); }},
      {"reorder", [] { return std::make_unique<ReorderMove>(); }},
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

bool repairGranularity(IncrementalEvaluator& ev, SubgraphSched& sg, const std::vector<TensorId>& rin) {
  const Problem& p = ev.problem();
  i64 kmax = p.native;
  bool anyMM = false;
  for (OpId o : sg.ops)
    if (p.ops[o].type == OpType::MatMul) { anyMM = true; kmax = std::min(kmax, p.ops[o].K); }
  Granularity g0 = sg.gran;
  g0.k = anyMM ? std::min(std::max<i64>(g0.k, 1), kmax) : 1;
  std::vector<Granularity> cands = {g0};
  Granularity g = g0;
  for (int i = 0; i < 6; ++i) {
    // Halve the largest side (k first on ties: it does not change the tile count).
    if (anyMM && g.k >= g.w && g.k >= g.h && g.k > 1) g.k = (g.k + 1) / 2;
    else if (g.w >= g.h && g.w > 1) g.w = (g.w + 1) / 2;
    else if (g.h > 1) g.h = (g.h + 1) / 2;
    cands.push_back(g);
  }
  if (anyMM && g0.k != kmax) cands.push_back({g0.w, g0.h, kmax});
  bool found = false;
  double best = 0;
  Granularity bestG = g0;
  for (const auto& c : cands) {
    sg.gran = c;
    const CachedCost& cc = ev.cost(sg, rin);
    if (cc.valid && (!found || cc.latency < best)) { found = true; best = cc.latency; bestG = c; }
    // Failures that no granularity can fix: order, connectivity, retention, output shapes.
    if (!cc.valid) {
      std::string_view r = cc.rule;
      if (r == "V3" || r == "V4" || r == "V6" || r == "V7" || r == "A-6" || r == "E3" || r == "chains") break;
    }
    if (found && c.w * c.h < bestG.w * bestG.h / 4) break;
  }
  sg.gran = bestG;
  return found;
}

}  // namespace mlsys
