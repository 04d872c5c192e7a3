// Argument "forced-ops": the ops a cover part counts for (cover.cpp, lp_relaxation.cpp).
#include <algorithm>
#include <functional>
#include <tuple>

#include "cost/bound/bound.h"
#include "cost/bound/internal.h"

namespace mlsys {

namespace bound_detail {

// What each part counts as covering: its ops less the *forced* ones. If a path leaves a part S
// and comes back (o in S -> x not in S -> ... -> o' in S), o' reads the result of the path's last
// op outside S as a boundary input, available only if that op ran in an earlier subgraph (V5:
// produced earlier, or retained by the one just before); that op needed its predecessor's result
// in turn (V5, or made in its own subgraph), and so on back to o: every schedule that runs S ran o
// in an earlier subgraph too. So the first subgraph that runs an op never has it forced, every op
// is covered by the unforced ops of the subgraph that first runs it, and the cover below may
// count each part for its unforced ops only (it still pays the part's whole floor).
// The ops between (reachable from the group and reaching it) lie between the group's first and
// last op in topological order; a window past kMaxWindow ops, or past kMaxPairs distinct
// (ancestors, descendants) pairs, keeps the plain masks (sound, only weaker).
namespace {

template <class Mask>
std::vector<Mask> coverMasksOf(const Problem& p, const std::vector<OpId>& ops, const std::vector<Mask>& parts,
                               const std::function<bool()>& stop) {
  constexpr int kMaxWindow = 1 << 16;
  constexpr size_t kMaxPairs = 4096;
  int lo = p.numOps(), hi = -1;
  for (OpId o : ops) {
    lo = std::min(lo, p.topo_pos[o]);
    hi = std::max(hi, p.topo_pos[o]);
  }
  if (hi - lo + 1 > kMaxWindow) return parts;
  std::vector<Mask> self(hi - lo + 1, 0), anc(hi - lo + 1, 0), desc(hi - lo + 1, 0);
  for (size_t j = 0; j < ops.size(); ++j) self[p.topo_pos[ops[j]] - lo] = Mask{1} << j;
  for (int q = lo; q <= hi; ++q) {  // anc: the group's ops that reach this op (itself included)
    Mask a = self[q - lo];
    for (TensorId t : p.ops[p.topo[q]].inputs) {
      const OpId pr = p.producer[t];
      if (pr >= 0 && p.topo_pos[pr] >= lo) a |= anc[p.topo_pos[pr] - lo];
    }
    anc[q - lo] = a;
  }
  for (int q = hi; q >= lo; --q) {  // desc: the group's ops this op reaches (itself included)
    Mask d = self[q - lo];
    for (TensorId t : p.ops[p.topo[q]].outputs)
      for (OpId c : p.consumers[t])
        if (p.topo_pos[c] <= hi) d |= desc[p.topo_pos[c] - lo];
    desc[q - lo] = d;
  }
  struct Between {
    Mask self, anc, desc;
    bool operator<(const Between& o) const { return std::tie(self, anc, desc) < std::tie(o.self, o.anc, o.desc); }
    bool operator==(const Between& o) const { return self == o.self && anc == o.anc && desc == o.desc; }
  };
  std::vector<Between> between;
  for (int q = 0; q <= hi - lo; ++q) {
    const Mask a = anc[q] & ~self[q], d = desc[q] & ~self[q];
    if (a && d) between.push_back({self[q], a, d});
  }
  std::sort(between.begin(), between.end());
  between.erase(std::unique(between.begin(), between.end()), between.end());
  if (between.size() > kMaxPairs) return parts;
  std::vector<Mask> masks(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    if ((i & 1023) == 0 && stop && stop()) return parts;  // the plain masks: sound, only weaker
    const Mask S = parts[i];
    Mask forced = 0;
    for (const Between& b : between)
      if (!(b.self & S) && (b.anc & S) && (b.desc & S)) forced |= b.anc & S;
    masks[i] = S & ~forced;
  }
  return masks;
}

}  // namespace

std::vector<uint32_t> coverMasks(const Problem& p, const std::vector<OpId>& ops, const std::vector<uint32_t>& parts,
                                 const std::function<bool()>& stop) {
  return coverMasksOf(p, ops, parts, stop);
}
std::vector<uint64_t> coverMasks(const Problem& p, const std::vector<OpId>& ops, const std::vector<uint64_t>& parts,
                                 const std::function<bool()>& stop) {
  return coverMasksOf(p, ops, parts, stop);
}

std::vector<std::vector<int32_t>> coverMasks(const Problem& p, const std::vector<OpId>& ops,
                                             const std::vector<std::vector<int32_t>>& parts,
                                             const std::function<bool()>& stop) {
  // forcedOps's search per part, inside the part's topological window [lo, hi]: an op reached from
  // the part lies after lo, one reaching it before hi, so nothing outside the window is between.
  // Marks are the part's index (no clearing between parts).
  const int n = p.numOps();
  std::vector<int64_t> in(n, -1), down(n, -1), up(n, -1), back(n, -1);
  std::vector<OpId> stack, reached;
  std::vector<std::vector<int32_t>> out(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    if ((i & 1023) == 0 && stop && stop()) return parts;  // the plain parts: sound, only weaker
    const auto st = static_cast<int64_t>(i);
    int lo = n, hi = -1;
    for (int32_t j : parts[i]) {
      const OpId o = ops[j];
      in[o] = st;
      lo = std::min(lo, p.topo_pos[o]);
      hi = std::max(hi, p.topo_pos[o]);
    }
    reached.clear();
    for (int32_t j : parts[i]) stack.push_back(ops[j]);
    while (!stack.empty()) {  // down: reached from the part by one edge or more
      const OpId o = stack.back();
      stack.pop_back();
      for (TensorId t : p.ops[o].outputs)
        for (OpId c : p.consumers[t])
          if (p.topo_pos[c] <= hi && down[c] != st) down[c] = st, reached.push_back(c), stack.push_back(c);
    }
    for (int32_t j : parts[i]) stack.push_back(ops[j]);
    while (!stack.empty()) {  // up: reaching the part by one edge or more
      const OpId o = stack.back();
      stack.pop_back();
      for (TensorId t : p.ops[o].inputs)
        if (const OpId pr = p.producer[t]; pr >= 0 && p.topo_pos[pr] >= lo && up[pr] != st)
          up[pr] = st, stack.push_back(pr);
    }
    for (OpId x : reached)  // back: the ancestors of the ops between
      if (in[x] != st && up[x] == st) stack.push_back(x);
    while (!stack.empty()) {
      const OpId o = stack.back();
      stack.pop_back();
      for (TensorId t : p.ops[o].inputs)
        if (const OpId pr = p.producer[t]; pr >= 0 && p.topo_pos[pr] >= lo && back[pr] != st)
          back[pr] = st, stack.push_back(pr);
    }
    for (int32_t j : parts[i])
      if (back[ops[j]] != st) out[i].push_back(j);
  }
  return out;
}

}  // namespace bound_detail

std::vector<OpId> forcedOps(const Problem& p, const std::vector<OpId>& part) {
  std::vector<char> in(p.numOps(), 0), down(p.numOps(), 0), up(p.numOps(), 0), back(p.numOps(), 0);
  for (OpId o : part) in[o] = 1;
  // down: reachable from the part by one edge or more; up: reaching it likewise.
  std::vector<OpId> stack(part.begin(), part.end());
  while (!stack.empty()) {
    const OpId o = stack.back();
    stack.pop_back();
    for (TensorId t : p.ops[o].outputs)
      for (OpId c : p.consumers[t])
        if (!down[c]) down[c] = 1, stack.push_back(c);
  }
  stack.assign(part.begin(), part.end());
  while (!stack.empty()) {
    const OpId o = stack.back();
    stack.pop_back();
    for (TensorId t : p.ops[o].inputs)
      if (const OpId pr = p.producer[t]; pr >= 0 && !up[pr]) up[pr] = 1, stack.push_back(pr);
  }
  // back: the ancestors of the ops outside the part that lie between (down and up).
  for (int x = 0; x < p.numOps(); ++x)
    if (!in[x] && down[x] && up[x]) stack.push_back(x);
  while (!stack.empty()) {
    const OpId o = stack.back();
    stack.pop_back();
    for (TensorId t : p.ops[o].inputs)
      if (const OpId pr = p.producer[t]; pr >= 0 && !back[pr]) back[pr] = 1, stack.push_back(pr);
  }
  std::vector<OpId> forced;
  for (OpId o : part)
    if (back[o]) forced.push_back(o);
  std::sort(forced.begin(), forced.end());
  return forced;
}

}  // namespace mlsys
