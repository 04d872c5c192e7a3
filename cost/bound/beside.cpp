// What the ops that are not joint take beside a class of joint MatMuls (internal.h; the
// share bound is argued at the top of shares.cpp, the mixtures in share_modes.cpp). Wherever the
// presence of a joint op in S is read as telling S's class, SharePricing::contextClass is used:
// a joint op that may be upstream (upstream-joint) may be in S beside any class.
// their share beside a class in step mode, their compute floor beside each class, and the
// joint ops they force to nk = 1 when they are in S together.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "cost/bound/internal.h"

namespace mlsys::bound_detail {

namespace {

constexpr size_t kMaxBesideWork = 4000;  // ops visited per op and search

}  // namespace

// What besideStepShare reads of Pointwise x beside class c (whose first op is f). When x's output
// has f's grid, every tensor feeding it through Pointwise ops with that grid has it too, so each
// one S does not make is a boundary input whose first tile's slice, h x w, is in the working set
// (W1; a tensor retained into S counts whole, more). Per k, the least number of such slices with
// at most k of c's ops in S: a tensor costs 1 (loaded), or 0 when S makes it: by an op of c (one
// of the k), or by a Pointwise with the grid, in S, at the cost of its own inputs. Graph inputs
// and tensors made by joint ops of other classes (never beside c) cost 1; claimed ones, and those
// made by any other op, 0 (they might be resident or made, unknown). A tensor met twice, or a
// tree deeper than kMaxSliceDepth: no slices known.
// And which ops S needs for x to take no slice at all (Beside::needs): a tensor costs 0 only when
// S makes it (its producer, a class op or a Pointwise with the grid at the cost of its own
// inputs) or, claimed, when its claimer is in S (only then is its band in the class's working
// set); one made by any other op might cost 0 with none of them (Beside::free).
Beside besideOf(const Problem& p, OpId x, int c, OpId f, const std::vector<char>& claimed,
                const std::vector<std::vector<OpId>>& claimer, const SharePricing& sp, LD cref) {
  constexpr int kMaxSliceDepth = 4;
  constexpr i64 kMaxSlots = 8;  // k beyond: as many as the tree's class-made tensors
  Beside b{static_cast<LD>(p.ops[x].base_cost), cref, {}, {}, false, {}};
  const TensorId grid = p.ops[f].outputs[0];
  auto gridShaped = [&](OpId v) {
    const Op& V = p.ops[v];
    return V.type == OpType::Pointwise && V.outputs.size() == 1 && p.widths[V.outputs[0]] == p.widths[grid] &&
           p.heights[V.outputs[0]] == p.heights[grid];
  };
  if (!gridShaped(x)) return b;
  // A MatMul q outside the classes that must load an operand (a graph input, or made by a joint
  // op of another class: neither is ever resident at a subgraph's start, nor retained into it,
  // V6) that no op of the class reads (so its slice is none of the class's bands): at nk = 1
  // (k >= K_f) that slice spans min(K_f, K_q) >= N >= w along the reduction and at least the
  // tile's rows or columns (E3), at least a tile, so q is in no S where no tile slice fits.
  auto loadsWide = [&](OpId q) {
    const Op& Q = p.ops[q];
    if (Q.type != OpType::MatMul || std::min(Q.K, p.ops[f].K) < p.native) return false;
    return std::any_of(Q.inputs.begin(), Q.inputs.end(), [&](TensorId v) {
      const OpId r = p.producer[v];
      const bool loaded = r < 0 || (sp.contextClass(r) >= 0 && sp.contextClass(r) != c);
      return loaded &&
             std::none_of(p.consumers[v].begin(), p.consumers[v].end(), [&](OpId d) { return sp.joint_class[d] == c; });
    });
  };
  std::vector<TensorId> seen;
  bool repeated = false;
  // The least slices per number of class slots (index 0..kMaxSlots) to make all of v's inputs;
  // free: each of them might cost 0 with no op in S (else one of b.needs must be in S).
  std::function<std::vector<i64>(OpId, int, bool&)> inputsOf = [&](OpId v, int depth, bool& free) {
    std::vector<i64> total(kMaxSlots + 1, 0);
    std::vector<TensorId> mine;
    free = true;
    for (TensorId u : p.ops[v].inputs) {
      if (std::find(mine.begin(), mine.end(), u) != mine.end()) continue;
      mine.push_back(u);
      if (std::find(seen.begin(), seen.end(), u) != seen.end()) repeated = true;
      seen.push_back(u);
      std::vector<i64> one(kMaxSlots + 1, 0);  // this tensor, per slots
      const OpId q = p.producer[u];
      bool uFree = false;
      if (claimed[u]) b.needs.insert(b.needs.end(), claimer[u].begin(), claimer[u].end());
      if (q >= 0 && sp.joint_class[q] == c) b.needs.push_back(q);
      if (claimed[u]) {
        // 0: it may be in the class's bands
        if (q >= 0 && sp.contextClass(q) < 0 && !(gridShaped(q) && depth < kMaxSliceDepth)) uFree = !loadsWide(q);
        else if (q >= 0 && sp.contextClass(q) < 0) inputsOf(q, depth + 1, uFree);
      } else if (q < 0 || (sp.contextClass(q) >= 0 && sp.contextClass(q) != c)) {
        std::fill(one.begin(), one.end(), 1);
      } else if (sp.joint_class[q] == c) {
        one[0] = 1;
      } else if (gridShaped(q) && depth < kMaxSliceDepth) {
        const std::vector<i64> made = inputsOf(q, depth + 1, uFree);
        for (i64 k = 0; k <= kMaxSlots; ++k) one[k] = std::min<i64>(1, made[k]);
      } else {
        uFree = !loadsWide(q);
      }
      free = free && uFree;
      std::vector<i64> sum(kMaxSlots + 1, std::numeric_limits<i64>::max());
      for (i64 a = 0; a <= kMaxSlots; ++a)
        for (i64 k = 0; a + k <= kMaxSlots; ++k) sum[a + k] = std::min(sum[a + k], total[a] + one[k]);
      for (i64 k = 1; k <= kMaxSlots; ++k) sum[k] = std::min(sum[k], sum[k - 1]);
      total = std::move(sum);
    }
    return total;
  };
  bool free = false;
  std::vector<i64> slices = inputsOf(x, 0, free);
  if (repeated) return b;
  b.free = free;
  std::sort(seen.begin(), seen.end());
  b.tree = std::move(seen);
  std::sort(b.needs.begin(), b.needs.end());
  b.needs.erase(std::unique(b.needs.begin(), b.needs.end()), b.needs.end());
  // Slots beyond kMaxSlots: the tree has at most as many class-made tensors as it has tensors.
  if (static_cast<i64>(b.tree.size()) > kMaxSlots) slices.push_back(0);
  b.slices = std::move(slices);
  return b;
}

// Per open Pointwise op and class of one frontier it may meet: its share beside that class in
// step mode (besideStepShare; 0 for other ops and classes).
// The count n of besideStepShare, where s tile slices fit beside the class (Crowd). A Pointwise
// op of S that takes no slice (with the m <= M ops of the class in S) needs, unless it is free,
// one op of its Beside::needs in S (needs outside the class: counted as free): at most M x (the
// most such ops needing one class op) + the free ones (and the ones whose slices are unknown).
// One that takes a slice has a tensor of its input tree (Beside::tree, what besideOf visits: a
// slice it takes is one of them) loaded, a tile slice in the first step's working set (W1; its
// h x w region, or whole if retained: at least a tile) beside the class's bands and output tile:
// at most s such tensors, each in the trees of at most perSlot such ops. (With s = 0: none.)
// And at nk > 1 (k < K), none of those that force a class op to nk = 1 (besideFed: every S
// holding one and an op of the class holds such a fed op, V9): at most n - nkOne.
void besideStep(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops, const std::vector<char>& claimed,
                const std::vector<std::vector<OpId>>& claimer, SharePricing& sp, const std::function<bool()>& stop,
                ShareMemo& shareMemo) {
  const size_t classes = sp.class_first.size();
  std::vector<i64> pointwise(classes, 0), cref(classes, std::numeric_limits<i64>::max());
  for (OpId x : ops) {
    sp.poll();
    if (sp.open[x] && !sp.joint[x] && !isMatMul(p, x))
      for (int c : sp.meets[x]) ++pointwise[c], cref[c] = std::min(cref[c], p.ops[x].base_cost);
  }
  std::vector<std::vector<Beside>> besides(p.numOps());
  std::vector<Crowd> crowd(classes);
  std::vector<std::vector<std::map<OpId, i64>>> needing(classes);
  std::vector<std::map<TensorId, i64>> readers(classes);  // per tensor: the known ops whose trees hold it
  for (OpId x : ops) {
    sp.poll();
    if (!sp.open[x] || sp.joint[x] || isMatMul(p, x)) continue;
    for (int c : sp.meets[x]) {
      if (!sp.class_single_kind[c] || !sp.class_step[c] || stop()) {
        besides[x].push_back({});
        continue;
      }
      Beside b = besideOf(p, x, c, sp.class_first[c], claimed, claimer, sp, static_cast<LD>(cref[c]));
      b.nkOne = !sp.fed[x][besides[x].size()].empty();
      crowd[c].nkOne += b.nkOne ? 1 : 0;
      const bool outside = std::any_of(b.needs.begin(), b.needs.end(), [&](OpId q) { return sp.joint_class[q] != c; });
      Crowd& cr = crowd[c];
      cr.most.resize(Crowd::kSlots, 0), cr.free.resize(Crowd::kSlots, 0), needing[c].resize(Crowd::kSlots);
      if (b.slices.empty()) {
        ++cr.unknown;
      } else {
        for (TensorId u : b.tree) cr.perSlot = std::max(cr.perSlot, ++readers[c][u]);
        for (size_t k = 0; k < Crowd::kSlots; ++k)  // with at most k ops of the class in S
          if (b.slicesAt(static_cast<i64>(k)) > 0) continue;
          else if (b.free || outside || b.needs.empty()) ++cr.free[k];
          else
            for (OpId q : b.needs) cr.most[k] = std::max(cr.most[k], ++needing[c][k][q]);
      }
      besides[x].push_back(std::move(b));
    }
  }
  // By frontier (it fixes everything besideStepShare reads of the class), count and what it
  // reads of the Pointwise op (Beside: the reference cost is the class's least base cost).
  // The ops not in the memo are priced one class at a time (besideStepRows lists its
  // granularities once: tens of thousands of rows, so only one class's are held at once).
  auto& memo = shareMemo.beside;
  sp.beside_step.assign(p.numOps(), {});
  using ClassKey = std::tuple<const JointFrontier*, i64, decltype(Crowd{}.key()), LD>;
  std::map<ClassKey, std::vector<std::pair<OpId, size_t>>> pending;
  for (OpId x : ops) {
    sp.poll();
    if (!sp.open[x] || sp.joint[x]) continue;
    sp.beside_step[x].assign(sp.meets[x].size(), 0);
    for (size_t i = 0; i < sp.meets[x].size(); ++i) {
      const int c = sp.meets[x][i];
      if (isMatMul(p, x) || !sp.class_single_kind[c] || !sp.class_step[c]) continue;
      const OpId f = sp.class_first[c];
      const Beside& b = besides[x][i];
      auto it = memo.find(std::make_tuple(sp.joint[f], pointwise[c], crowd[c].key(), b.key()));
      if (it != memo.end()) sp.beside_step[x][i] = it->second;
      else pending[{sp.joint[f], pointwise[c], crowd[c].key(), b.cref}].emplace_back(x, i);
    }
  }
  for (const auto& [classKey, list] : pending) {
    const int c = sp.meets[list.front().first][list.front().second];
    const OpId f = sp.class_first[c];
    const BesideStepRows rows = besideStepRows(p, m, f, *sp.joint[f], std::get<3>(classKey), pointwise[c], crowd[c]);
    for (const auto& [x, i] : list) {
      sp.poll();
      const Beside& b = besides[x][i];
      auto [it, fresh] = memo.try_emplace(std::make_tuple(sp.joint[f], pointwise[c], crowd[c].key(), b.key()), 0);
      if (fresh) it->second = besideStepShare(p, rows, b);
      sp.beside_step[x][i] = it->second;
    }
  }
}

// Per open op that is not joint, its compute floor beside each class it may meet and with no
// joint op beside it. A Pointwise x is charged on a grid smaller than its own output's only when
// S holds a MatMul that x reaches through Pointwise ops of S (compute_floor.cpp: without one, x's
// region flows to O(S) through Pointwise ops, which keep its shape, F3, so the grid is x's
// output, at most N x N a tile). When every such MatMul of the component is joint, none is in an
// S without joint ops, nor in one beside a class they are not in (classes never meet).
void besideCompute(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& inComp, SharePricing& sp) {
  sp.meets_compute.assign(p.numOps(), {});
  sp.free_compute.assign(p.numOps(), 0);
  std::vector<char> mark(p.numOps(), 0);
  for (OpId x : ops) {
    sp.poll();
    if (!sp.open[x] || sp.joint[x]) continue;
    const LD c = sp.compute[x];
    sp.free_compute[x] = c;
    sp.meets_compute[x].assign(sp.meets[x].size(), c);
    if (isMatMul(p, x)) continue;
    std::vector<OpId> stack = {x};
    Marks seen(mark, x);
    std::set<int> classesAhead;
    bool allJoint = true;
    while (!stack.empty() && allJoint) {
      const OpId v = stack.back();
      stack.pop_back();
      for (TensorId t : p.ops[v].outputs)
        for (OpId d : p.consumers[t]) {
          if (!inComp[d] || !seen.add(d)) continue;
          if (seen.size() > kMaxBesideWork) allJoint = false;
          if (!isMatMul(p, d)) stack.push_back(d);
          else if (sp.contextClass(d) >= 0) classesAhead.insert(sp.contextClass(d));
          else allJoint = false;
        }
    }
    if (!allJoint) continue;
    i64 tiles = std::numeric_limits<i64>::max();
    for (TensorId t : p.ops[x].outputs) tiles = std::min(tiles, nativeTiles(p, t));
    const LD alone = std::max(c, static_cast<LD>(tiles) * static_cast<LD>(p.ops[x].base_cost));
    sp.free_compute[x] = alone;
    for (size_t i = 0; i < sp.meets[x].size(); ++i)
      if (!classesAhead.count(sp.meets[x][i])) sp.meets_compute[x][i] = alone;
  }
}

// Per open op that is not joint, the loads of its inputs (elements) it takes with no joint op
// beside it, and beside each class it may meet (a context: which joint ops may be in S). An input
// u too large to be retained (V6, W1: never resident at S's first step; no graph input: those are
// attributed; not claimed: joint floors count those) is needed whole (every element of an input
// is used) and loaded in every S that reads it and does not make it; once for all its readers
// there, so each reader takes |u| / readers(u) (times w(u) below). Its maker q:
// - a joint op that always accumulates: in S only beside q's class; elsewhere u is loaded (w = 1),
//   beside it nobody takes u (one that may be upstream, upstream-joint, may be in S anywhere:
//   SharePricing::contextClass treats it as not joint, and it takes nothing, so w = 0);
// - an open op that is not joint: q may be in S, and then u is not loaded; so q gives back what
//   its readers there could take, w(u) |u| (its open readers that are not joint and may be in S in
//   this context) / readers(u), out of what its own inputs give it, and w(u) is the most that
//   keeps q's take >= 0 (at most 1). Summed over an S, each tensor u that S reads is taken by
//   its readers in S at most w(u) |u|, which S loads when q is not in S and q gave back when it
//   is (a maker never in S in this context, as one that does not meet the class: w = 1);
// - any other op (closed: closedLoads counts its outputs): nobody takes u (w = 0).
// So the takes of the ops of any S in the context add up to at most its loads of such tensors,
// and each is >= 0. (Until the sixth session of 2026-11-25 only an input made by a joint op and read by this op
// alone counted: a residual add of two adds took nothing where it ran with no MatMul.)
void besideLoads(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& claimed, SharePricing& sp) {
  sp.free_loads.assign(p.numOps(), 0);
  sp.meets_loads.assign(p.numOps(), {});
  auto takes = [&](OpId d) { return d >= 0 && d < p.numOps() && sp.open[d] && !sp.joint[d]; };
  auto meetsClass = [&](OpId d, int c) {
    return c < 0 || std::find(sp.meets[d].begin(), sp.meets[d].end(), c) != sp.meets[d].end();
  };
  auto distinctReaders = [&](TensorId t) {
    std::vector<OpId> r = p.consumers[t];
    std::sort(r.begin(), r.end());
    return static_cast<LD>(std::unique(r.begin(), r.end()) - r.begin());
  };
  // w per (tensor made by an open op that is not joint, context): -1 no joint op, else the class.
  std::map<std::pair<TensorId, int>, LD> given;
  auto weight = [&](TensorId u, int c) -> LD {
    const OpId q = p.producer[u];
    if (q < 0 || claimed[u] || retainable(p, u)) return 0;
    if (sp.contextClass(q) >= 0) return sp.contextClass(q) != c ? 1 : 0;
    if (!takes(q)) return 0;
    if (!meetsClass(q, c)) return 1;
    auto it = given.find({u, c});
    return it == given.end() ? 0 : it->second;
  };
  for (OpId x : ops) {
    sp.poll();  // topological order: makers first
    if (!takes(x)) continue;
    sp.meets_loads[x].assign(sp.meets[x].size(), 0);
    std::vector<TensorId> ins = p.ops[x].inputs;
    std::sort(ins.begin(), ins.end());
    ins.erase(std::unique(ins.begin(), ins.end()), ins.end());
    for (size_t i = 0; i <= sp.meets[x].size(); ++i) {
      const int c = i < sp.meets[x].size() ? sp.meets[x][i] : -1;
      LD avail = 0, need = 0;
      for (TensorId u : ins) avail += weight(u, c) * static_cast<LD>(p.size(u)) / distinctReaders(u);
      std::vector<TensorId> outs;
      for (TensorId t : p.ops[x].outputs) {
        if (claimed[t] || retainable(p, t)) continue;
        LD n = 0;
        for (OpId d : p.consumers[t]) n += takes(d) && meetsClass(d, c) ? 1 : 0;
        if (n > 0) need += static_cast<LD>(p.size(t)) * n / static_cast<LD>(p.consumers[t].size()), outs.push_back(t);
      }
      const LD w = need > 0 ? std::min<LD>(1, avail / need) : 1;
      for (TensorId t : outs) given[{t, c}] = w;
      const LD take = std::max<LD>(0, avail - w * need);
      (i < sp.meets[x].size() ? sp.meets_loads[x][i] : sp.free_loads[x]) = take;
    }
  }
}

// Per open Pointwise x and class c it may meet: the joint ops of c that x feeds directly, with
// K > N, when every valid S holding x and an op of c holds one of them (else none). In such an S
// the op o that x feeds runs at k >= K_o (V9: with k < K_o a Pointwise producing its operand
// needs w or h >= K_o > N), so at nk = 1. S is connected through tensors made and read inside it
// (V4), so a path from x to the op of c avoids the fed ops only through ops that may share S with
// x (forced shapes) and are not joint ops of another class (classes never meet): when no such
// path reaches c, every S with x and c holds a fed op. Each fed op o is listed with the number
// of Pointwise ops that make its operands (each of them may claim o's excess at nk = 1).
void besideFed(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& inComp, SharePricing& sp,
               const std::function<const std::optional<std::vector<Shape>>&(OpId)>& shapesOf) {
  sp.fed.assign(p.numOps(), {});
  std::vector<char> mark(p.numOps(), 0);
  for (OpId x : ops) {
    sp.poll();
    if (!sp.open[x] || sp.joint[x]) continue;
    sp.fed[x].assign(sp.meets[x].size(), {});
    if (isMatMul(p, x)) continue;
    for (size_t i = 0; i < sp.meets[x].size(); ++i) {
      const int c = sp.meets[x][i];
      std::vector<OpId> fed;
      for (TensorId t : p.ops[x].outputs)
        for (OpId o : p.consumers[t])
          if (isMatMul(p, o) && sp.joint_class[o] == c && !sp.upstreamCapable(o) && p.ops[o].K > p.native &&
              std::find(fed.begin(), fed.end(), o) == fed.end())
            fed.push_back(o);
      if (fed.empty()) continue;
      std::vector<OpId> stack = {x}, nbs;
      Marks seen(mark, x);
      for (OpId o : fed) seen.add(o);
      bool proven = true;
      while (!stack.empty() && proven) {
        const OpId v = stack.back();
        stack.pop_back();
        nbs.clear();
        for (TensorId t : p.ops[v].outputs)
          for (OpId d : p.consumers[t]) nbs.push_back(d);
        for (TensorId t : p.ops[v].inputs)
          if (p.producer[t] >= 0) nbs.push_back(p.producer[t]);
        for (OpId nb : nbs) {
          if (!inComp[nb] || !seen.add(nb)) continue;
          if (seen.size() > kMaxBesideWork || sp.joint_class[nb] == c) proven = false;
          if (sp.contextClass(nb) >= 0 || !mayShareSubgraph(shapesOf(x), shapesOf(nb))) continue;
          stack.push_back(nb);
        }
      }
      if (!proven) continue;
      for (OpId o : fed) {
        std::set<OpId> makers;
        for (TensorId u : p.ops[o].inputs)
          if (p.producer[u] >= 0 && !isMatMul(p, p.producer[u])) makers.insert(p.producer[u]);
        sp.fed[x][i].push_back({o, static_cast<int>(makers.size())});
      }
    }
  }
}

}  // namespace mlsys::bound_detail
