// The bound's sequence arguments (bound.h): the ops a cover part counts for (forced ops), and the
// balance of retention that the priced passes of bound.cpp follow.
#include <algorithm>
#include <tuple>

#include "cost/bound.h"
#include "cost/bound_internal.h"

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
std::vector<Mask> coverMasksOf(const Problem& p, const std::vector<OpId>& ops, const std::vector<Mask>& parts) {
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
    const Mask S = parts[i];
    Mask forced = 0;
    for (const Between& b : between)
      if (!(b.self & S) && (b.anc & S) && (b.desc & S)) forced |= b.anc & S;
    masks[i] = S & ~forced;
  }
  return masks;
}

}  // namespace

std::vector<uint32_t> coverMasks(const Problem& p, const std::vector<OpId>& ops, const std::vector<uint32_t>& parts) {
  return coverMasksOf(p, ops, parts);
}
std::vector<uint64_t> coverMasks(const Problem& p, const std::vector<OpId>& ops, const std::vector<uint64_t>& parts) {
  return coverMasksOf(p, ops, parts);
}

// Who serves each reader (availability, V5). An op o of the group whose one output t cannot be
// retained (V6, W1) and has two readers or more: the first subgraph to run a reader d needs t,
// so it runs o too, or loads t, written (c) by an earlier subgraph that runs o and no reader of
// t (t in O(S): a tensor consumed inside S is ephemeral, never written). So each pair (o, d) is
// served by a part holding o and d, or o and no reader (readers outside the group never share a
// subgraph with o: one bit for all of them). A bit per pair, beyond the ops' n bits, while
// n + bits <= maxBits; per part the bits it serves (a part holding o serves them whether o is
// forced there or not). Returns how many bits.
int readerMasks(const Problem& p, const std::vector<OpId>& ops, const std::vector<uint32_t>& parts, int maxBits,
                std::vector<uint32_t>& served) {
  const int n = static_cast<int>(ops.size());
  served.assign(parts.size(), 0);
  int bits = 0;
  for (int j = 0; j < n; ++j) {
    const Op& O = p.ops[ops[j]];
    if (O.outputs.size() != 1 || retainable(p, O.outputs[0])) continue;
    std::vector<OpId> readers = p.consumers[O.outputs[0]];
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    if (readers.size() < 2) continue;
    uint32_t inside = 0;  // the readers in the group, as op bits
    bool outside = false;
    for (OpId d : readers) {
      const auto at = std::find(ops.begin(), ops.end(), d);
      if (at == ops.end()) outside = true;
      else inside |= 1u << (at - ops.begin());
    }
    const int mine = __builtin_popcount(inside) + (outside ? 1 : 0);
    if (n + bits + mine > maxBits) continue;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!(parts[i] >> j & 1)) continue;
      const uint32_t in = parts[i] & inside;
      int b = n + bits;  // this op's first bit
      for (int d = 0; d < n; ++d) {
        if (!(inside >> d & 1)) continue;
        if (in == 0 || (in >> d & 1)) served[i] |= 1u << b;
        ++b;
      }
      if (outside && in == 0) served[i] |= 1u << b;
    }
    bits += mine;
  }
  return bits;
}

// Retention in (+1) and out (-1) per tensor over the cover parts of `components`: the
// subgradient of the bound in the prices (bound.h, RetentionPrices).
std::vector<int> keptBalance(const Problem& p, const std::vector<BoundComponent>& components) {
  std::vector<int> g(p.numTensors(), 0);
  for (const BoundComponent& c : components)
    for (const BoundGroup& grp : c.groups)
      for (const CoverPart& part : grp.cover)
        for (TensorId t : part.floor.retained)
          g[t] += std::find(part.ops.begin(), part.ops.end(), p.producer[t]) == part.ops.end() ? 1 : -1;
  return g;
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
