#include "engine/search/window.h"

#include <algorithm>
#include <iterator>

#include "moves/moves.h"

namespace mlsys {

SubProblem extractSubProblem(const Problem& p, const std::vector<OpId>& ops) {
  SubProblem w;
  std::vector<OpId> sorted = ops;
  std::sort(sorted.begin(), sorted.end(), [&](OpId a, OpId b) { return p.topo_pos[a] < p.topo_pos[b]; });
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (OpId o : sorted) w.sub_op.emplace(o, static_cast<OpId>(w.op_of.size())), w.op_of.push_back(o);
  auto tensor = [&](TensorId t) {
    auto [it, fresh] = w.sub_tensor.emplace(t, static_cast<TensorId>(w.tensor_of.size()));
    if (fresh) {
      w.tensor_of.push_back(t);
      w.p.widths.push_back(p.widths[t]);
      w.p.heights.push_back(p.heights[t]);
    }
    return it->second;
  };
  for (OpId o : sorted) {
    Op op = p.ops[o];
    for (TensorId& t : op.inputs) t = tensor(t);
    for (TensorId& t : op.outputs) t = tensor(t);
    w.p.ops.push_back(std::move(op));
  }
  w.p.capacity = p.capacity;
  w.p.bandwidth = p.bandwidth;
  w.p.native = p.native;
  w.p.name = p.name + "[window]";
  finalizeProblem(w.p, w.p.name);
  // Tensors the rest of the schedule needs in slow memory become graph outputs of the window.
  for (size_t st = 0; st < w.tensor_of.size(); ++st) {
    const TensorId t = w.tensor_of[st];
    if (p.producer[t] < 0 || !w.sub_op.count(p.producer[t])) continue;
    bool needed = p.is_graph_output[t];
    for (OpId c : p.consumers[t]) needed |= !w.sub_op.count(c);
    if (needed) w.p.is_graph_output[st] = true;
  }
  return w;
}

Schedule toFull(const SubProblem& w, const Schedule& s) {
  Schedule out;
  out.subgraphs.reserve(s.subgraphs.size());
  for (const SubgraphSched& sg : s.subgraphs) {
    SubgraphSched f = sg;
    for (OpId& o : f.ops) o = w.op_of[o];
    for (TensorId& t : f.retain) t = w.tensor_of[t];
    std::sort(f.retain.begin(), f.retain.end());
    out.subgraphs.push_back(std::move(f));
  }
  return out;
}

Schedule toSub(const SubProblem& w, const Schedule& s, const std::vector<int>& idx) {
  Schedule out;
  for (size_t j = 0; j < idx.size(); ++j) {
    SubgraphSched sg = s.subgraphs[idx[j]];
    for (OpId& o : sg.ops) o = w.sub_op.at(o);
    std::vector<TensorId> keep;
    if (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1)
      for (TensorId t : sg.retain) {
        auto it = w.sub_tensor.find(t);
        if (it != w.sub_tensor.end() && !w.p.is_graph_output[it->second]) keep.push_back(it->second);
      }
    std::sort(keep.begin(), keep.end());
    sg.retain = std::move(keep);
    out.subgraphs.push_back(std::move(sg));
  }
  return out;
}

Splice bestSplice(const Problem& p, IncrementalEvaluator& ev, const std::vector<int>& idx,
                  const std::vector<SubgraphSched>& block) {
  const Schedule& cur = ev.schedule();
  const int a = std::max(0, idx.front() - 1), b = idx.back();
  const int n = ev.size();
  Splice best;
  for (int place = 0; place < 2; ++place) {
    Change c;
    c.first = a;
    c.count = b - a + 1;
    int at = -1;
    for (int i = a; i <= b; ++i) {
      const bool inWindow = std::binary_search(idx.begin(), idx.end(), i);
      if (place == 0 && i == idx.front())
        at = static_cast<int>(c.repl.size()), c.repl.insert(c.repl.end(), block.begin(), block.end());
      if (!inWindow) c.repl.push_back(cur.subgraphs[i]);
    }
    if (place == 1) at = static_cast<int>(c.repl.size()), c.repl.insert(c.repl.end(), block.begin(), block.end());
    for (size_t j = 0; j < c.repl.size(); ++j) {
      std::vector<TensorId>& ret = c.repl[j].retain;
      if (ret.empty()) continue;
      const SubgraphSched* next =
          j + 1 < c.repl.size() ? &c.repl[j + 1] : (b + 1 < n ? &cur.subgraphs[b + 1] : nullptr);
      std::vector<TensorId> keep;
      if (next) {
        const std::vector<TensorId> in = boundaryInputs(p, next->ops);
        std::set_intersection(ret.begin(), ret.end(), in.begin(), in.end(), std::back_inserter(keep));
      }
      ret = std::move(keep);
    }
    // The subgraph before the window may retain a tensor into it that the block cannot hold beside
    // its own (the window's sub-problem loads what it reads from outside): also without those.
    const bool before = place == 0 && a < idx.front() && !c.repl[0].retain.empty();
    for (int drop = 0; drop <= (before ? 1 : 0); ++drop) {
      Change v = c;
      if (drop) v.repl[0].retain.clear();
      DeltaEval d = ev.evaluate(v);
      if (d.valid && (!best.delta.valid || d.delta < best.delta.delta))
        best.delta = std::move(d), best.change = std::move(v), best.block_at = a + at;
    }
    if (idx.back() - idx.front() + 1 == static_cast<int>(idx.size())) break;  // consecutive: one placement
  }
  return best;
}

void retainAcross(IncrementalEvaluator& ev, int s) {
  if (s < 0 || s + 1 >= ev.size()) return;
  for (TensorId t : retainableIntoNext(ev, s)) {
    const SubgraphSched& S = ev.schedule().subgraphs[s];
    if (std::find(S.retain.begin(), S.retain.end(), t) != S.retain.end()) continue;
    Change c = Change::replaceOne(s, S);
    c.repl[0].retain.push_back(t);
    std::sort(c.repl[0].retain.begin(), c.repl[0].retain.end());
    DeltaEval d = ev.evaluate(c);
    if (d.valid && d.delta < 0) ev.apply(c, d);
  }
}

}  // namespace mlsys
