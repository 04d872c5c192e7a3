// The share bound's claims (shares.h; the argument is at the top of shares.cpp): which sides of an
// open MatMul are always loaded for it (joint floors), which graph inputs its readers' tiles must
// reload (pressure), which stores every subgraph holding an op writes (forced stores), and the
// classes of joint ops.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "cost/bound/shares.h"

namespace mlsys::bound_detail {

bool Shares::pressure(TensorId u, const std::vector<OpId>& readers, long& work) {
  if (readers.size() < 2 || p.size(u) <= p.capacity || !args.on(BoundArg::Pressure)) return false;
  std::vector<OpId> next(readers.size());
  std::set<TensorId> lhs;
  for (size_t i = 0; i < readers.size(); ++i) {
    const Op& c = p.ops[readers[i]];
    if (c.type != OpType::MatMul || c.inputs[1] != u || c.outputs.size() != 1) return false;
    const std::vector<OpId>& cons = p.consumers[c.outputs[0]];
    if (cons.size() != 1 || !isMatMul(p, cons[0]) || p.ops[cons[0]].inputs[0] != c.outputs[0]) return false;
    next[i] = cons[0];
    const OpId made = p.producer[c.inputs[0]];
    if (made >= 0 && inComp[made] && open[made]) return false;
    if (!lhs.insert(c.inputs[0]).second) return false;
  }
  std::vector<char> reader(p.numOps(), 0), mark(p.numOps(), 0);
  for (OpId c : readers) reader[c] = 1;
  for (size_t i = 0; i < readers.size(); ++i) {
    std::vector<OpId> stack = {readers[i]};
    Marks seen(mark, readers[i]);
    bool alone = true;
    while (!stack.empty() && alone) {
      const OpId v = stack.back();
      stack.pop_back();
      for (const auto& e : adj[v]) {
        const OpId nb = e.first;
        if (!inComp[nb] || !open[nb] || (v == readers[i] && nb == next[i]) || !seen.add(nb)) continue;
        if (reader[nb]) alone = false;
        stack.push_back(nb);
      }
      if ((work += 1) > kMaxPressureWork) alone = false;
      if ((work & 1023) == 0) poll();
    }
    if (!alone) return false;
  }
  return true;
}

int Shares::claimSide(OpId o, int s) {
  std::vector<TensorId> chain;
  std::vector<OpId> members = {o};
  TensorId t = p.ops[o].inputs[s];
  const i64 K = p.ops[o].K;  // sharing matters with nk > 1 only: k < K
  bool shared = false;
  // Whether reader r may share a valid S with o at nk > 1 (their forced shapes, and those at k < K).
  // A reader in another fusion component never does: every valid subgraph lies in one component
  // (V4 along fusable edges, ruler.cpp), so only the component's readers share o's loads of t.
  auto sharesWith = [&](OpId r) {
    return inComp[r] && mayShareSubgraph(shapesOf(o), shapesOf(r)) &&
           mayShareSubgraph(splitShapesOf(o, K), splitShapesOf(r, K));
  };
  // chain-claims and shared-claims: nk > 1 in every S holding o (k <= N < K), and o never upstream.
  const bool alwaysSplit = m.k_limit == ModelOptions::KLimit::Native && K > p.native &&
                           !(upstreamCompute[o] < std::numeric_limits<LD>::infinity());
  // A tensor claimed already may be claimed again by an op that shares no valid subgraph with any
  // of its claimers (disjoint forced output shapes: A-6, decision 7): every S then holds at most
  // one of them, whose joint floor alone counts the tensor's loads there (a claim is "nobody
  // else's in any S", shares.cpp).
  auto apart = [&](TensorId x) {
    return std::none_of(claimer[x].begin(), claimer[x].end(),
                        [&](OpId c) { return mayShareSubgraph(shapesOf(o), shapesOf(c)); });
  };
  auto usable = [&](TensorId x) {
    return (!claimed[x] || (args.on(BoundArg::ApartClaims) && apart(x))) && !retainable(p, x) &&
           std::find(chain.begin(), chain.end(), x) == chain.end();  // never resident at S's start
  };
  // shared-claims (shares.cpp): o's strips of t over the readers of t that may share S with o.
  const bool spreadable = args.on(BoundArg::SharedClaims) && alwaysSplit && p.size(t) > p.capacity;
  auto readersWith = [&] {
    i64 n = 1;
    for (OpId r : p.consumers[t]) n += r != o && sharesWith(r) ? 1 : 0;
    return n;
  };
  if (spread[t]) {
    if (!spreadable) return 0;
    const i64 n = readersWith();
    claimer[t].push_back(o);
    return n > 1 ? static_cast<int>(n + 1) : 1;
  }
  if (!usable(t)) return 0;
  OpId reader = o;  // the op of o's chain that reads t
  for (;;) {
    chain.push_back(t);
    for (OpId r : p.consumers[t]) shared = shared || (r != reader && sharesWith(r));
    const OpId pr = p.producer[t];
    if (pr < 0 || !inComp[pr] || !open[pr]) break;
    // pr never shares a valid subgraph with the chain where it is a Pointwise making the operand of
    // o when K_o > N (k_limit native): with pr in S, k < K_o and V9 needs w or h >= K_o > N, which
    // V8 forbids (fusableEdge); nor where forcedInvalid keeps it out of any part holding them.
    if (!fusableEdge(p, m, pr, reader)) break;
    members.push_back(pr);
    for (OpId x : members) in[x] = 1;
    const bool kept = forcedInvalid(p, in, members);
    for (OpId x : members) in[x] = 0;
    if (kept) break;
    const Op& P = p.ops[pr];
    // chain-claims: o's operand t made by a MatMul pr (shares.cpp states the argument): claimed
    // with pr's operand u that o's k-steps sweep (pr's RHS for o's LHS, its LHS for o's RHS).
    if (P.type == OpType::MatMul && reader == o && args.on(BoundArg::ChainClaims)) {
      const TensorId u = P.inputs[s == 0 ? 1 : 0];
      if (shared || !alwaysSplit || P.K < p.native || P.outputs.size() != 1 || !p.is_graph_input[u] || !usable(u))
        return 0;
      for (OpId r : p.consumers[u])
        if (r != pr && sharesWith(r)) return 0;
      chain.push_back(u);
      break;
    }
    if (P.type != OpType::Pointwise || P.outputs.size() != 1) return 0;
    TensorId next = -1;
    for (TensorId u : P.inputs)
      if (next < 0 && usable(u)) next = u;
    if (next < 0) return 0;
    t = next;
    reader = pr;
  }
  // shared-claims where it counts more than the band once: t's first claimer, each tile's strips
  // over n readers, with at least ceil(W / N) tile columns (LHS; rows for the RHS).
  if (shared && spreadable && chain.size() == 1 && claimer[t].empty()) {
    const Op& op = p.ops[o];
    const i64 side = s == 0 ? p.widths[op.outputs[0]] : p.heights[op.outputs[0]];
    const i64 n = readersWith();
    if ((side + p.native - 1) / p.native > n && n < std::numeric_limits<int>::max() - 1) {
      claimed[t] = 1, spread[t] = 1, claimer[t].push_back(o);
      return static_cast<int>(n + 1);
    }
  }
  for (TensorId x : chain) claimed[x] = 1, claimer[x].push_back(o);
  return shared ? 2 : 1;
}

LD Shares::rowReload(OpId d, const std::vector<const JointFrontier*>& joint) const {
  const JointFrontier* f = joint[d];
  if (!open[d] || !f || !f->claimed[1] || f->shared[1]) return 0;
  const bool claimL = f->claimed[0];
  const Op& D = p.ops[d];
  const i64 N = p.native, W = p.widths[D.outputs[0]], H = p.heights[D.outputs[0]];
  const i64 h = H, w = std::min(N, W);
  if (H > N || (claimL ? h : 0) + w + h * w > p.capacity || D.K < 2) return 0;
  LD perTile = static_cast<LD>(D.base_cost);
  if (m.matmul_compute == ModelOptions::MatmulCompute::NativeDepth)
    perTile = perTile * static_cast<LD>(D.K) / static_cast<LD>(N);
  const LD v = static_cast<LD>(p.size(D.inputs[1]));
  return perTile * static_cast<LD>((W + w - 1) / w) <= v / static_cast<LD>(p.bandwidth) ? v : 0;
}

std::vector<LD> Shares::attributions(int& pressured, const std::vector<const JointFrontier*>& joint,
                                     std::vector<char>& rowReloaded) {
  std::vector<LD> t(p.numOps(), 0);
  std::vector<TensorId> inputs;
  for (OpId o : ops)
    if (open[o])
      for (TensorId u : p.ops[o].inputs)
        if (p.is_graph_input[u] && !claimed[u]) inputs.push_back(u);
  std::sort(inputs.begin(), inputs.end());
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  long work = 0;
  for (TensorId u : inputs) {
    poll();
    std::vector<OpId> readers;
    for (OpId c : p.consumers[u])
      if (inComp[c] && open[c] && std::find(readers.begin(), readers.end(), c) == readers.end()) readers.push_back(c);
    const LD size = static_cast<LD>(p.size(u));
    if (readers.size() == 1) {
      t[readers[0]] += size;
    } else if (pressure(u, readers, work)) {
      ++pressured;
      const LD grid = gridPressure(p, readers, [&](OpId d) {
        const LD v = rowReload(d, joint);
        if (v > 0) rowReloaded[d] = 1;
        return v;
      });
      for (OpId c : readers)
        t[c] +=
            size *
            std::max(grid, std::min<LD>(1, static_cast<LD>(p.size(p.ops[c].inputs[0])) / static_cast<LD>(p.capacity)));
    } else {
      for (OpId c : readers) t[c] += size / static_cast<LD>(readers.size());
    }
  }
  return t;
}

JointEpilogue Shares::epilogueOf(OpId o) {
  if (!args.on(BoundArg::EpilogueTiles) || p.ops[o].outputs.size() != 1) return {};
  const TensorId t = p.ops[o].outputs[0];
  if (retainable(p, t)) return {};
  // Another input u of a Pointwise reader needs R_0 too: a graph input (a slice, never retained),
  // or made by a MatMul q (loaded or retained in; or made in S: u in O(S), or ephemeral, where q
  // accumulates too and holds its accumulator), each its own tensor; one made by a Pointwise
  // before o in the topological order (not reachable from o's output) is its own tile or slice,
  // or ephemeral, where its maker needs its inputs, which are such tensors again: at least one.
  i64 least = -1;
  std::vector<TensorId> terminal;
  for (OpId x : p.consumers[t]) {
    if (p.ops[x].type != OpType::Pointwise) continue;
    terminal.clear();
    bool other = false;
    for (TensorId u : p.ops[x].inputs) {
      if (u == t) continue;
      const OpId q = p.producer[u];
      if (q < 0 || p.ops[q].type == OpType::MatMul) {
        terminal.push_back(u);
        other = true;
      } else if (p.topo_pos[q] < p.topo_pos[o]) {
        other = true;
      }
    }
    std::sort(terminal.begin(), terminal.end());
    const i64 distinct = std::unique(terminal.begin(), terminal.end()) - terminal.begin();
    const i64 c = std::max<i64>(distinct, other ? 1 : 0);
    least = least < 0 ? c : std::min(least, c);
  }
  return {true, least < 0 ? 0 : 2 + least};
}

std::vector<LD> Shares::writtenStores(const std::vector<const JointFrontier*>& joint,
                                      const std::vector<char>& rowReloaded, const std::vector<LD>& forced,
                                      std::vector<char>& taken) {
  std::vector<LD> res(p.numOps(), -1);
  for (OpId o : ops) {
    if (!joint[o] || joint[o]->points_written.empty() || rowReloaded[o]) continue;
    const TensorId t = p.ops[o].outputs[0];
    const LD size = static_cast<LD>(p.size(t));
    const std::optional<std::vector<TensorId>>& F = outputsOf(o);
    if (forced[o] > 0) {
      // S writes one of F (forced[o] at the least); where it writes t, t's whole store
      res[o] = F && std::find(F->begin(), F->end(), t) != F->end() ? size - forced[o] : 0;
    } else if (!taken[t]) {
      res[o] = size;
      taken[t] = 1;
    } else {
      res[o] = 0;
    }
  }
  return res;
}

int Shares::forcedStores(std::vector<LD>& traffic, const std::vector<const JointFrontier*>& joint,
                         std::vector<LD>& forced, std::vector<char>& taken) {
  int count = 0;
  if (!args.on(BoundArg::ForcedStores)) return 0;
  for (int pass = 0; pass < 2; ++pass)
    for (OpId o : ops) {
      poll();
      if (!open[o] || (pass == 0) != (joint[o] != nullptr) || stop()) continue;
      const std::optional<std::vector<TensorId>>& F = outputsOf(o);
      if (!F || F->empty()) continue;
      i64 least = std::numeric_limits<i64>::max();
      bool free = true;
      for (TensorId t : *F) {
        least = std::min(least, retainable(p, t) ? 0 : p.size(t));
        free = free && !taken[t];
      }
      if (!free || least <= 0) continue;
      for (TensorId t : *F) taken[t] = 1;
      traffic[o] += static_cast<LD>(least);
      forced[o] = static_cast<LD>(least);
      ++count;
    }
  return count;
}

bool Shares::storesAlways(OpId o) {
  if (!args.on(BoundArg::ForcedStores)) return false;
  const std::optional<std::vector<TensorId>>& F = outputsOf(o);
  if (!F || F->empty()) return false;
  for (TensorId t : *F)
    if (retainable(p, t)) return false;
  return true;
}

void Shares::jointClasses(SharePricing& sp) {
  // A class holds the joint ops that may accumulate together in a valid S: they have one K (E2,
  // decision 2) and S's output shape, which is among each one's forced shapes; for one that may be
  // upstream elsewhere, the shape of its own output (it accumulates only where a Pointwise path
  // carries its output to O(S), F3, and all of O(S) has one shape, A-6). Where it is upstream it
  // is in no class's context (SharePricing::contextClass). One K a class.
  std::map<std::pair<i64, std::optional<std::vector<Shape>>>, std::vector<OpId>> bySet;
  for (OpId o : ops)
    if (sp.joint[o]) {
      std::optional<std::vector<Shape>> set = shapesOf(o);
      if (sp.upstreamCapable(o))
        set = std::vector<Shape>{{p.widths[p.ops[o].outputs[0]], p.heights[p.ops[o].outputs[0]]}};
      bySet[{p.ops[o].K, set}].push_back(o);
    }
  std::vector<const std::pair<i64, std::optional<std::vector<Shape>>>*> sets;
  for (const auto& e : bySet) sets.push_back(&e.first);
  std::vector<int> root(sets.size());
  for (size_t i = 0; i < root.size(); ++i) root[i] = static_cast<int>(i);
  auto find = [&](int i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  for (size_t i = 0; i < sets.size(); ++i)
    for (size_t j = i + 1; j < sets.size(); ++j)
      if (sets[i]->first == sets[j]->first && mayShareSubgraph(sets[i]->second, sets[j]->second))
        root[find(static_cast<int>(i))] = find(static_cast<int>(j));
  std::map<int, int> classOf;  // root set -> class
  size_t s = 0;
  std::vector<std::vector<const std::optional<std::vector<Shape>>*>> classSets;
  for (const auto& e : bySet) {
    const int r = find(static_cast<int>(s++));
    const auto [it, fresh] = classOf.emplace(r, static_cast<int>(classOf.size()));
    if (fresh) {
      sp.class_first.push_back(e.second.front());
      sp.class_single_kind.push_back(1);
      sp.class_step.push_back(1);
      classSets.emplace_back();
    }
    classSets[it->second].push_back(&e.first.second);
    for (OpId o : e.second) {
      sp.joint_class[o] = it->second;
      if (sp.upstreamCapable(o)) sp.class_step[it->second] = 0;
      if (sp.joint[o]->kind != sp.joint[sp.class_first[it->second]]->kind) sp.class_single_kind[it->second] = 0;
    }
  }
  // class-reach (shares.cpp states the argument): per class, the ops that may share a valid
  // subgraph with one of its ops at all; without it, every op.
  std::vector<std::vector<char>> reach = classReach(sp);
  // The classes each upstream-capable joint op may share a valid subgraph with (there it may be
  // upstream: its forced shapes, all of them).
  for (OpId o : ops) {
    if (!sp.joint[o] || !sp.upstreamCapable(o)) continue;
    for (size_t c = 0; c < classSets.size(); ++c)
      for (const auto* set : classSets[c])
        if (reach[c][o] && mayShareSubgraph(shapesOf(o), *set)) {
          sp.up_meets[o].push_back(static_cast<int>(c));
          break;
        }
  }
  // The classes each other open op may share a valid subgraph with.
  sp.meets.assign(p.numOps(), {});
  for (OpId x : ops) {
    if (!open[x] || sp.joint[x]) continue;
    for (size_t c = 0; c < classSets.size(); ++c)
      for (const auto* set : classSets[c])
        if (reach[c][x] && mayShareSubgraph(shapesOf(x), *set)) {
          sp.meets[x].push_back(static_cast<int>(c));
          break;
        }
  }
}

std::vector<std::vector<char>> Shares::classReach(const SharePricing& sp) {
  const size_t classes = sp.class_first.size();
  std::vector<std::vector<OpId>> members(classes);
  for (OpId o : ops)
    if (sp.joint[o] && sp.joint_class[o] >= 0) members[sp.joint_class[o]].push_back(o);
  std::vector<std::vector<char>> reach(classes, std::vector<char>(p.numOps(), 1));
  if (!args.on(BoundArg::ClassReach)) return reach;
  for (size_t c = 0; c < classes; ++c) {
    // The members' forced shapes, each set once.
    std::vector<const std::optional<std::vector<Shape>>*> memberShapes;
    for (OpId o : members[c])
      if (std::none_of(memberShapes.begin(), memberShapes.end(), [&](const auto* x) { return *x == shapesOf(o); }))
        memberShapes.push_back(&shapesOf(o));
    const bool accumulates =
        std::none_of(members[c].begin(), members[c].end(), [&](OpId o) { return sp.upstreamCapable(o); });
    const i64 K = p.ops[members[c].front()].K;
    auto admits = [&](OpId v) {
      if (accumulates && isMatMul(p, v) && feedsNoMatMul[v] && p.ops[v].K != K) return false;
      return std::any_of(memberShapes.begin(), memberShapes.end(),
                         [&](const auto* x) { return mayShareSubgraph(shapesOf(v), *x); });
    };
    std::vector<char>& r = reach[c];  // 1 reached, 0 not (yet), 2 admits nothing
    std::fill(r.begin(), r.end(), 0);
    std::vector<OpId> stack = members[c];
    for (OpId o : stack) r[o] = 1;
    while (!stack.empty()) {
      const OpId v = stack.back();
      stack.pop_back();
      poll();
      for (const auto& e : adj[v]) {
        const OpId x = e.first;
        if (!inComp[x] || r[x]) continue;
        r[x] = admits(x) ? 1 : 2;
        if (r[x] == 1) stack.push_back(x);
      }
    }
    for (char& x : r) x = x == 1;
  }
  return reach;
}

}  // namespace mlsys::bound_detail
