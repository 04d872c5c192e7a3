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
//    lambda is tried at 0, 1/4, 1/2, 3/4 and 1, the best total kept.
#include <algorithm>
#include <limits>
#include <set>

#include "cost/bound_internal.h"

namespace mlsys::bound_detail {

namespace {

constexpr long kMaxPartFloors = 4000;       // partFloor calls per component
constexpr long kMaxPressureWork = 4000000;  // op visits of the pressure test per component

bool isMatMul(const Problem& p, OpId o) { return p.ops[o].type == OpType::MatMul; }

// Upward closed: S holds a MatMul q whose operand u is a graph input larger than the capacity, a
// MatMul c in S reading q's output as the other operand, and a MatMul in S reading c's output.
// Then c is upstream (E2: its output feeds a MatMul inside S) and does its full reduction (E3):
// as LHS it needs rows x [0, K_c) of q's output, all of q's columns, so q (upstream too) needs
// its RHS [0, K_q) x [0, W_q), all of it; as RHS it needs [0, K_c) x columns, all of q's rows, so
// q needs its whole LHS. Either way u is in the working set whole in every step: > C (V11).
// Adding ops to S keeps q, c and the MatMul after c inside, so every superset fails too.
bool forcedInvalid(const Problem& p, const std::vector<char>& in, const std::vector<OpId>& S) {
  for (OpId q : S) {
    if (!isMatMul(p, q)) continue;
    const Op& Q = p.ops[q];
    for (int side = 0; side < 2; ++side) {
      const TensorId u = Q.inputs[side];
      if (!p.is_graph_input[u] || p.size(u) <= p.capacity) continue;
      for (TensorId out : Q.outputs)
        for (OpId c : p.consumers[out]) {
          // u = RHS of q (side 1) is needed whole when c reads q's output as its LHS; u = LHS
          // (side 0) when c reads it as its RHS.
          if (!in[c] || !isMatMul(p, c) || p.ops[c].inputs[side == 1 ? 0 : 1] != out) continue;
          for (TensorId co : p.ops[c].outputs)
            for (OpId d : p.consumers[co])
              if (in[d] && isMatMul(p, d)) return true;
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
  const std::function<bool()>& giveUp;
  int maxParts;

  std::vector<char> inComp, open, in;
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

  // Per open op, the elements of graph-input loads attributed to it.
  std::vector<LD> attributions(int& pressured) {
    std::vector<LD> t(p.numOps(), 0);
    std::vector<TensorId> inputs;
    for (OpId o : ops)
      if (open[o])
        for (TensorId u : p.ops[o].inputs)
          if (p.is_graph_input[u]) inputs.push_back(u);
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
    const std::vector<LD> traffic = attributions(res.pressure_inputs);
    const LD B = static_cast<LD>(p.bandwidth);
    for (int step = 0; step <= 4; ++step) {
      const LD lambda = static_cast<LD>(step) / 4;
      std::vector<LD> y(p.numOps(), 0);
      for (OpId o : ops)
        if (open[o]) y[o] = lambda * opCompute[o] + (1 - lambda) * traffic[o] / B;
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
      if (total > res.value) {
        res.value = total;
        res.lambda = static_cast<double>(lambda);
      }
    }
    res.part_floors = floorsPriced;
    return res;
  }
};

}  // namespace

ShareBound shareBound(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                      const std::vector<std::vector<std::pair<OpId, LD>>>& adj, const std::vector<LD>& opCompute,
                      const std::function<bool()>& giveUp, int maxParts) {
  return Shares{p, m, ops, adj, opCompute, giveUp, maxParts, {}, {}, {}, {}, 0}.run();
}

}  // namespace mlsys::bound_detail
