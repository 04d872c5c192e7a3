#include "engine/search/window.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <queue>

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

namespace {

// Keeps each subgraph's retained tensors only where the next subgraph (of `repl`, then `after`)
// reads them.
void keepReadRetentions(const Problem& p, std::vector<SubgraphSched>& repl, const SubgraphSched* after) {
  for (size_t j = 0; j < repl.size(); ++j) {
    std::vector<TensorId>& ret = repl[j].retain;
    if (ret.empty()) continue;
    const SubgraphSched* next = j + 1 < repl.size() ? &repl[j + 1] : after;
    std::vector<TensorId> keep;
    if (next) {
      const std::vector<TensorId> in = boundaryInputs(p, next->ops);
      std::set_intersection(ret.begin(), ret.end(), in.begin(), in.end(), std::back_inserter(keep));
    }
    ret = std::move(keep);
  }
}

// Calls f for each tensor subgraph sg writes to slow memory: made there, read by none of its ops
// and not retained (O(S) less the retained, L4).
template <class F>
void forWritten(const Problem& p, const SubgraphSched& sg, F f) {
  for (OpId o : sg.ops)
    for (TensorId t : p.ops[o].outputs) {
      bool inside = false;
      for (OpId c : p.consumers[t]) inside = inside || std::find(sg.ops.begin(), sg.ops.end(), c) != sg.ops.end();
      if (!inside && !std::binary_search(sg.retain.begin(), sg.retain.end(), t)) f(t);
    }
}

}  // namespace

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
    keepReadRetentions(p, c.repl, b + 1 < n ? &cur.subgraphs[b + 1] : nullptr);
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

namespace {

// The subgraphs of a range (the rest, nodes 0..nr-1, in their order) and a block's (nodes nr..):
// their orders that tensors allow, for interleavedSplice.
class RangeOrder {
 public:
  RangeOrder(const Problem& p, const Schedule& cur, int a, std::vector<const SubgraphSched*> node, int nr)
      : node_(std::move(node)), nr_(nr), nn_(static_cast<int>(node_.size())), reads_(nn_), unitOf_(nn_) {
    for (int v = 0; v < nn_; ++v) reads_[v] = boundaryInputs(p, node_[v]->ops);
    // Units: a subgraph and the next of its own part (rest or block) that reads a tensor it retains
    // stay together (the tensor may be read inside the first, then it is written nowhere: V5).
    for (int v = 0; v < nn_; ++v) {
      const bool glued = v != 0 && v != nr_ && [&] {
        const std::vector<TensorId>& ret = node_[v - 1]->retain;
        for (TensorId t : reads_[v])
          if (std::binary_search(ret.begin(), ret.end(), t)) return true;
        return false;
      }();
      if (!glued) head_.push_back(v);
      unitOf_[v] = static_cast<int>(head_.size()) - 1;
    }
    nu_ = static_cast<int>(head_.size());
    // Per tensor, the first node writing it (the rest first, in order; a tensor in slow memory
    // before the range has none); an edge from it to each unit reading it.
    std::vector<char> before(p.numTensors(), 0);
    for (int i = 0; i < a; ++i) forWritten(p, cur.subgraphs[i], [&](TensorId t) { before[t] = 1; });
    writer_.assign(p.numTensors(), -1);
    for (int v = 0; v < nn_; ++v)
      forWritten(p, *node_[v], [&](TensorId t) {
        if (!before[t] && writer_[t] < 0) writer_[t] = v;
      });
    succ_.resize(nu_);
    indeg_.assign(nu_, 0);
    for (int v = 0; v < nn_; ++v)
      for (TensorId t : reads_[v])
        if (writer_[t] >= 0 && unitOf_[writer_[t]] != unitOf_[v]) succ_[unitOf_[writer_[t]]].push_back(unitOf_[v]);
    for (auto& s : succ_) {
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
      for (int u : s) ++indeg_[u];
    }
  }

  // Kahn's order, the smallest key first: the rest at its own positions, each block unit as early
  // as its inputs allow (just after the last rest unit it reads from) or, `late`, as late as its
  // readers allow (just before the first rest unit reading what it writes). The nodes in that
  // order; empty if there is none (a cycle).
  std::vector<int> order(bool late) const {
    std::vector<double> key(nu_);
    for (int u = 0; u < nu_; ++u) key[u] = head_[u] < nr_ ? u : blockKey(u, late) + 1e-6 * (head_[u] - nr_);
    std::vector<int> deg = indeg_, out;
    using Item = std::pair<double, int>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
    for (int u = 0; u < nu_; ++u)
      if (deg[u] == 0) ready.emplace(key[u], u);
    while (!ready.empty()) {
      const int u = ready.top().second;
      ready.pop();
      for (int v = head_[u]; v < nn_ && unitOf_[v] == u; ++v) out.push_back(v);
      for (int x : succ_[u])
        if (--deg[x] == 0) ready.emplace(key[x], x);
    }
    return static_cast<int>(out.size()) == nn_ ? out : std::vector<int>{};
  }

  const SubgraphSched& node(int v) const { return *node_[v]; }
  bool inBlock(int v) const { return v >= nr_; }

 private:
  double blockKey(int u, bool late) const {
    double k = late ? nu_ - 0.5 : -0.5;
    for (int v = 0; late && v < nr_; ++v)
      for (TensorId t : reads_[v])
        if (writer_[t] >= 0 && unitOf_[writer_[t]] == u) k = std::min(k, unitOf_[v] - 0.5);
    for (int v = head_[u]; !late && v < nn_ && unitOf_[v] == u; ++v)
      for (TensorId t : reads_[v])
        if (writer_[t] >= 0 && writer_[t] < nr_) k = std::max(k, unitOf_[writer_[t]] + 0.5);
    return k;
  }

  std::vector<const SubgraphSched*> node_;
  int nr_, nn_, nu_ = 0;
  std::vector<std::vector<TensorId>> reads_;
  std::vector<int> unitOf_, head_, writer_, indeg_;
  std::vector<std::vector<int>> succ_;
};

}  // namespace

std::vector<std::pair<int, int>> Splice::runs(int blockSize) const {
  std::vector<std::pair<int, int>> r;
  if (at.empty()) return {{block_at, block_at + blockSize - 1}};
  for (auto it = at.rbegin(); it != at.rend(); ++it) r.emplace_back(*it, *it);
  return r;
}

Splice cheapestSplice(const Problem& p, IncrementalEvaluator& ev, const std::vector<int>& idx,
                      const std::vector<SubgraphSched>& block, bool interleave) {
  Splice sp = bestSplice(p, ev, idx, block);
  if (interleave && idx.back() - idx.front() + 1 != static_cast<int>(idx.size())) {
    Splice mixed = interleavedSplice(p, ev, idx, block);
    if (mixed.delta.valid && (!sp.delta.valid || mixed.delta.delta < sp.delta.delta)) sp = std::move(mixed);
  }
  return sp;
}

Splice interleavedSplice(const Problem& p, IncrementalEvaluator& ev, const std::vector<int>& idx,
                         const std::vector<SubgraphSched>& block) {
  const Schedule& cur = ev.schedule();
  const int a = std::max(0, idx.front() - 1), b = idx.back(), n = ev.size();
  Splice best;
  std::vector<const SubgraphSched*> node;
  for (int i = a; i <= b; ++i)
    if (!std::binary_search(idx.begin(), idx.end(), i)) node.push_back(&cur.subgraphs[i]);
  const int nr = static_cast<int>(node.size());
  for (const SubgraphSched& sg : block) node.push_back(&sg);
  const RangeOrder ro(p, cur, a, std::move(node), nr);
  for (int late = 0; late < 2; ++late) {
    const std::vector<int> order = ro.order(late != 0);
    if (order.empty()) return best;  // a cycle: no order
    Change c;
    c.first = a;
    c.count = b - a + 1;
    std::vector<int> where;
    for (int v : order) {
      if (ro.inBlock(v)) where.push_back(a + static_cast<int>(c.repl.size()));
      c.repl.push_back(ro.node(v));
    }
    keepReadRetentions(p, c.repl, b + 1 < n ? &cur.subgraphs[b + 1] : nullptr);
    // Also priced without the retentions between the block and the rest (a tensor the rest
    // retains into a block subgraph takes room its sub-problem did not count).
    for (int drop = 0; drop < 2; ++drop) {
      Change v = c;
      bool any = false;
      for (size_t i = 0; drop && i + 1 < v.repl.size(); ++i)
        if (ro.inBlock(order[i]) != ro.inBlock(order[i + 1]) && !v.repl[i].retain.empty())
          v.repl[i].retain.clear(), any = true;
      if (drop && !any) break;
      DeltaEval d = ev.evaluate(v);
      if (d.valid && (!best.delta.valid || d.delta < best.delta.delta)) {
        best.delta = std::move(d);
        best.change = std::move(v);
        best.block_at = where.front();
        best.at = where;
      }
    }
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
