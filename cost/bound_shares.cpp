// The share bound of a fusion component (bound_internal.h, shareBound): a dual argument that
// needs no enumeration of the component's parts, for components too large for the exact cover.
//
// The argument. Give every op o a share y_o >= 0 such that every valid subgraph S pays at least
// the shares of its ops: latency(S) >= sum over o in S of y_o. Every op runs in at least one
// subgraph of the component, so the component's subgraphs cost at least sum over o of y_o (the
// dual of the cover relaxation: y is feasible for every column at once). Two kinds of ops:
//
// 1. *Closed* ops: those for which every connected part containing them can be listed (at most
//    BoundOptions::share_parts). Parts that can never be valid are left out, which only works because the
//    test is upward closed (forcedInvalid below): if it holds for S, it holds for every S' that
//    contains S, so growing parts one adjacent op at a time from {o} reaches every valid one. For a
//    closed op, y_o = max(0, min over its listed parts S of partFloor(S) - y(S \ {o})), with the
//    other shares as they stand; processing closed ops one after another, the last of a part's
//    closed ops sees the final shares of all the others, so every part containing a closed op
//    meets its constraint.
// 2. The others (*open* ops): a subgraph S made of open ops only pays
//      latency(S) >= max(compute(S), traffic(S) / B) >= lambda compute(S) + (1 - lambda) traffic(S) / B
//    for any lambda in [0, 1]. compute(S) >= sum of the ops' compute floors (bound_compute.cpp), and
//    traffic(S) >= sum over graph inputs u read in S of u's loads (a graph input is never resident
//    at a subgraph's first step: V6 forbids retaining one, L3). Each op takes an attribution of
//    the loads of its graph inputs, such that for every u the attributions of u's readers in S
//    never exceed u's loads in S:
//    - u read by one open op of the component (its other readers are closed, so not in S, or in
//      other components): every S with that op loads u whole at least once: |u|;
//    - *pressure*: u larger than the capacity and the RHS of each open reader c, whose only
//      consumer is a MatMul d_c reading c's output as its LHS, whose LHS cannot be produced inside
//      an open S (a graph input, or made by a closed op or outside the component), the LHSs
//      distinct, and every path from c to another reader going through the edge c -> d_c. Then an
//      S holding m >= 2 readers holds every d_c, so each c is an upstream MatMul (E2), which needs
//      its LHS rows x [0, K_c) in every step (E3): with r_c rows of c's output made in a tile, the
//      working set is >= sum_c r_c K_c <= C (W1, V11). Every row of c's output is made in some tile,
//      so sum over tiles of r_c >= H_c, and the number of tiles T >= sum_c H_c K_c / C = sum_c
//      |LHS_c| / C. d_c cannot be upstream (c would need u whole: > C), so it accumulates, and c
//      makes rows x kappa_j, reading u's strip [0, K_c) x kappa_j in step j; nk = 1 would again need
//      u whole, so the strips change every step and u is loaded whole in every tile: loads >= T |u|.
//      Each reader takes |u| min(1, |LHS_c| / C): a lone reader is below the one load it always
//      pays, m >= 2 readers below T |u|;
//    - otherwise |u| / (its open readers in the component): u is loaded at least once.
//    A *joint* open MatMul (no valid subgraph carries its output to a MatMul, so it accumulates
//    on its own grid in every one) with a side always loaded for it (claimSide: the operand, or
//    what Pointwise ops make it from, produced where no valid open S holding it can reach, and
//    too large to retain) takes, instead of its compute floor and those loads apart, the least
//    over every tile and k class of lambda x its compute + (1 - lambda) x those loads / B
//    (bound_joint.cpp): at the subgraph's own granularity both terms are its share of the sums,
//    so the least is below them. Claimed tensors are nobody else's.
//    lambda is tried at 0, 1/10, ..., 1, the best total kept.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "cost/bound_internal.h"

namespace mlsys::bound_detail {

namespace {

constexpr long kMaxPartFloors = 4000;       // partFloor calls per component
constexpr int kLambdaSteps = 10;            // lambda in 0, 1/10, ..., 1
constexpr long kMaxPressureWork = 4000000;  // op visits of the pressure test per component

bool isMatMul(const Problem& p, OpId o) { return p.ops[o].type == OpType::MatMul; }

// Whether c's output reaches a MatMul inside S through Pointwise ops of S.
bool flowsToMatMul(const Problem& p, const std::vector<char>& in, OpId c) {
  std::vector<OpId> stack = {c}, seen = {c};
  while (!stack.empty()) {
    const OpId v = stack.back();
    stack.pop_back();
    for (TensorId t : p.ops[v].outputs)
      for (OpId d : p.consumers[t]) {
        if (!in[d] || std::find(seen.begin(), seen.end(), d) != seen.end()) continue;
        if (isMatMul(p, d)) return true;
        seen.push_back(d);
        stack.push_back(d);
      }
  }
  return false;
}

// Upward closed: S holds a MatMul q whose operand u is a graph input larger than the capacity,
// and a MatMul c in S that reads q's output (directly or through Pointwise ops of S, which pass
// regions on unchanged) as its other operand and needs that operand's whole reduction axis in
// every step: c's output reaches a MatMul in S (then c is upstream and does its full reduction,
// E3, or it accumulates with nk = 1, its k-strip being all of K_c, since with nk > 1 an
// accumulating MatMul may not feed another: E2), or a Pointwise of S feeds c and K_c > N (V9:
// k >= K_c). As LHS, c then needs rows x [0, K_c) of q's output, all of q's columns, so q needs
// its RHS [0, K_q) x [0, W_q), all of it (upstream, or accumulating with nk = 1: an accumulating
// q with nk > 1 may not feed c); as RHS, all of q's rows, so q needs its whole LHS. Either way u
// is in the working set whole in every step: > C (V11). Adding ops to S keeps q, the path and
// what makes c need its whole axis inside, so every superset fails too.
bool forcedInvalid(const Problem& p, const std::vector<char>& in, const std::vector<OpId>& S) {
  for (OpId q : S) {
    if (!isMatMul(p, q)) continue;
    const Op& Q = p.ops[q];
    for (int side = 0; side < 2; ++side) {
      const TensorId u = Q.inputs[side];
      if (!p.is_graph_input[u] || p.size(u) <= p.capacity) continue;
      // u = RHS of q (side 1) is needed whole when c reads q's output as its LHS; u = LHS
      // (side 0) when c reads it as its RHS.
      std::vector<std::pair<TensorId, bool>>
          stack;  // a tensor carrying q's output region, and whether a Pointwise made it
      for (TensorId out : Q.outputs) stack.push_back({out, false});
      std::vector<OpId> seen;
      while (!stack.empty()) {
        const auto [t, viaPointwise] = stack.back();
        stack.pop_back();
        for (OpId c : p.consumers[t]) {
          if (!in[c] || std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
          const Op& Cc = p.ops[c];
          if (Cc.type == OpType::Pointwise) {
            seen.push_back(c);
            for (TensorId o : Cc.outputs) stack.push_back({o, true});
          } else if (Cc.inputs[side == 1 ? 0 : 1] == t &&
                     ((viaPointwise && Cc.K > p.native) || flowsToMatMul(p, in, c))) {
            return true;
          }
        }
      }
    }
  }
  return false;
}

struct Shares {
  const Problem& p;
  const ModelOptions& m;
  const std::vector<OpId>& ops;
  const std::vector<std::vector<std::pair<OpId, LD>>>& adj;
  const std::vector<LD>& opCompute;
  const std::vector<char>& mayFeedMatMul;
  const std::function<bool()>& giveUp;
  int maxParts;

  std::vector<char> inComp, open, in;
  std::vector<char> claimed;                          // per tensor: its loads belong to a joint floor
  std::vector<std::vector<std::vector<OpId>>> parts;  // per op (closed ones): its listed parts
  long floorsPriced = 0;

  bool stop() const { return giveUp && giveUp(); }

  // Every part containing o that forcedInvalid does not rule out, or false when there are more
  // than maxParts of them.
  bool listParts(OpId o, std::vector<std::vector<OpId>>& out) {
    std::set<std::vector<OpId>> seen;
    out.assign(1, {o});
    seen.insert({o});
    for (size_t i = 0; i < out.size(); ++i) {
      const std::vector<OpId> S = out[i];
      for (OpId v : S) in[v] = 1;
      bool tooMany = false;
      for (size_t a = 0; a < S.size() && !tooMany; ++a)
        for (const auto& e : adj[S[a]]) {
          const OpId nb = e.first;
          if (!inComp[nb] || in[nb]) continue;
          std::vector<OpId> grown = S;
          grown.insert(std::upper_bound(grown.begin(), grown.end(), nb), nb);
          if (!seen.insert(grown).second) continue;
          in[nb] = 1;
          const bool invalid = forcedInvalid(p, in, grown);
          in[nb] = 0;
          if (invalid) continue;
          out.push_back(std::move(grown));
          if (static_cast<int>(out.size()) > maxParts) {
            tooMany = true;
            break;
          }
        }
      for (OpId v : S) in[v] = 0;
      if (tooMany) return false;
    }
    return true;
  }

  // Whether the pressure attribution holds for graph input u (see the top of the file).
  bool pressure(TensorId u, const std::vector<OpId>& readers, long& work) {
    if (readers.size() < 2 || p.size(u) <= p.capacity) return false;
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
    std::vector<char> reader(p.numOps(), 0), seen(p.numOps(), 0);
    for (OpId c : readers) reader[c] = 1;
    for (size_t i = 0; i < readers.size(); ++i) {
      std::vector<OpId> stack = {readers[i]}, visited = {readers[i]};
      seen[readers[i]] = 1;
      bool alone = true;
      while (!stack.empty() && alone) {
        const OpId v = stack.back();
        stack.pop_back();
        for (const auto& e : adj[v]) {
          const OpId nb = e.first;
          if (!inComp[nb] || !open[nb] || seen[nb] || (v == readers[i] && nb == next[i])) continue;
          if (reader[nb]) alone = false;
          seen[nb] = 1;
          visited.push_back(nb);
          stack.push_back(nb);
        }
        if ((work += 1) > kMaxPressureWork) alone = false;
      }
      for (OpId v : visited) seen[v] = 0;
      if (!alone) return false;
    }
    return true;
  }

  // Whether side s of the open MatMul o is always loaded for it: its operand, or a tensor that
  // Pointwise ops make it from (each needs its inputs with the region it makes, E3), is produced
  // outside every valid open S holding o and those ops (a graph input, made by a closed op or
  // outside the component, or by an op that forcedInvalid keeps out of any part holding o and
  // the chain), each tensor on the way too large to be retained (V6 needs |t| <= C in W1), so in
  // every such S one of them is loaded with the operand's region. Marks them claimed. 0: no;
  // 1: yes, each tensor read by the chain only; 2: yes, but some tensor also has other readers,
  // whose slices of it could coincide with o's k-strips in another step (jointFrontier then counts
  // that side's nk > 1 loads once).
  int claimSide(OpId o, int s) {
    std::vector<TensorId> chain;
    std::vector<OpId> members = {o};
    TensorId t = p.ops[o].inputs[s];
    bool shared = false;
    auto usable = [&](TensorId x) {
      return !claimed[x] && (p.is_graph_input[x] || p.size(x) > p.capacity) &&
             std::find(chain.begin(), chain.end(), x) == chain.end();
    };
    if (!usable(t)) return 0;
    for (;;) {
      chain.push_back(t);
      shared = shared || p.consumers[t].size() != 1;
      const OpId pr = p.producer[t];
      if (pr < 0 || !inComp[pr] || !open[pr]) break;
      members.push_back(pr);
      for (OpId x : members) in[x] = 1;
      const bool kept = forcedInvalid(p, in, members);
      for (OpId x : members) in[x] = 0;
      if (kept) break;  // pr never shares a valid subgraph with o and the chain
      const Op& P = p.ops[pr];
      if (P.type != OpType::Pointwise || P.outputs.size() != 1) return 0;
      TensorId next = -1;
      for (TensorId u : P.inputs)
        if (next < 0 && usable(u)) next = u;
      if (next < 0) return 0;
      t = next;
    }
    for (TensorId x : chain) claimed[x] = 1;
    return shared ? 2 : 1;
  }

  // Per open op, the elements of graph-input loads attributed to it.
  std::vector<LD> attributions(int& pressured) {
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
      std::vector<OpId> readers;
      for (OpId c : p.consumers[u])
        if (inComp[c] && open[c] && std::find(readers.begin(), readers.end(), c) == readers.end()) readers.push_back(c);
      const LD size = static_cast<LD>(p.size(u));
      if (readers.size() == 1) {
        t[readers[0]] += size;
      } else if (pressure(u, readers, work)) {
        ++pressured;
        for (OpId c : readers)
          t[c] += size * std::min<LD>(1, static_cast<LD>(p.size(p.ops[c].inputs[0])) / static_cast<LD>(p.capacity));
      } else {
        for (OpId c : readers) t[c] += size / static_cast<LD>(readers.size());
      }
    }
    return t;
  }

  ShareBound run() {
    ShareBound res;
    inComp.assign(p.numOps(), 0);
    open.assign(p.numOps(), 0);
    in.assign(p.numOps(), 0);
    parts.assign(p.numOps(), {});
    for (OpId o : ops) inComp[o] = open[o] = 1;
    // Closed ops, and their parts' floors (each part priced once).
    std::map<std::vector<OpId>, LD> floorOf;
    for (OpId o : ops) {
      if (stop()) break;
      std::vector<std::vector<OpId>> listed;
      if (!listParts(o, listed)) continue;
      bool priced = true;
      for (const std::vector<OpId>& S : listed) {
        if (floorOf.count(S)) continue;
        if (++floorsPriced > kMaxPartFloors) {
          priced = false;
          break;
        }
        std::vector<OpId> topo = S;
        std::sort(topo.begin(), topo.end(), [&](OpId a, OpId b) { return p.topo_pos[a] < p.topo_pos[b]; });
        floorOf[S] = static_cast<LD>(partFloor(p, m, topo).value);
      }
      if (!priced) break;
      open[o] = 0;
      parts[o] = std::move(listed);
      ++res.closed;
    }
    // Open MatMuls that accumulate in every subgraph, with a claimed side: their joint floors.
    claimed.assign(p.numTensors(), 0);
    std::vector<std::vector<JointPoint>> joint(p.numOps());
    // Frontiers depend on the op only through these: computed once per kind (generated graphs
    // repeat shapes).
    std::map<std::tuple<i64, i64, i64, i64, int, int>, std::vector<JointPoint>> frontiers;
    for (OpId o : ops) {
      if (!open[o] || !isMatMul(p, o) || mayFeedMatMul[o] || p.ops[o].outputs.size() != 1 || stop()) continue;
      const int l = claimSide(o, 0), r = claimSide(o, 1);
      if (!l && !r) continue;
      const Op& op = p.ops[o];
      const auto key = std::make_tuple(p.widths[op.outputs[0]], p.heights[op.outputs[0]], op.K, op.base_cost, l, r);
      auto it = frontiers.find(key);
      if (it == frontiers.end())
        it = frontiers.emplace(key, jointFrontier(p, m, o, {l > 0, r > 0}, {l == 2, r == 2})).first;
      joint[o] = it->second;
      ++res.joint_ops;
    }
    const std::vector<LD> traffic = attributions(res.pressure_inputs);
    const LD B = static_cast<LD>(p.bandwidth);
    for (int step = 0; step <= kLambdaSteps; ++step) {
      const LD lambda = static_cast<LD>(step) / kLambdaSteps;
      std::vector<LD> y(p.numOps(), 0);
      for (OpId o : ops) {
        if (!open[o]) continue;
        if (joint[o].empty()) {
          y[o] = lambda * opCompute[o] + (1 - lambda) * traffic[o] / B;
          continue;
        }
        LD least = std::numeric_limits<LD>::infinity();
        for (const JointPoint& x : joint[o]) least = std::min(least, lambda * x.compute + (1 - lambda) * x.loads / B);
        y[o] = least + (1 - lambda) * traffic[o] / B;
      }
      for (OpId o : ops) {  // topological order
        if (open[o]) continue;
        LD least = std::numeric_limits<LD>::infinity();
        for (const std::vector<OpId>& S : parts[o]) {
          LD v = floorOf.at(S);
          if (!(v < std::numeric_limits<LD>::infinity())) continue;  // never valid
          for (OpId x : S)
            if (x != o) v -= y[x];
          least = std::min(least, v);
        }
        y[o] = least < std::numeric_limits<LD>::infinity() ? std::max<LD>(0, least) : 0;
      }
      LD total = 0;
      for (OpId o : ops) total += y[o];
      res.value = std::max(res.value, total);
    }
    return res;
  }
};

}  // namespace

ShareBound shareBound(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                      const std::vector<std::vector<std::pair<OpId, LD>>>& adj, const std::vector<LD>& opCompute,
                      const std::vector<char>& mayFeedMatMul, const std::function<bool()>& giveUp, int maxParts) {
  return Shares{p, m, ops, adj, opCompute, mayFeedMatMul, giveUp, maxParts, {}, {}, {}, {}, {}, 0}.run();
}

}  // namespace mlsys::bound_detail
