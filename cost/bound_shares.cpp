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
//    test is upward closed (forcedInvalid, bound_shapes.cpp): if it holds for S, it holds for every S' that
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
//      pays, m >= 2 readers below T |u|; or, when the readers are alike, the larger share that
//      counts whole tile rows (gridPressure);
//    - otherwise |u| / (its open readers in the component): u is loaded at least once.
//    A *joint* open MatMul (no valid subgraph carries its output to a MatMul, so it accumulates
//    on its own grid in every one) with a side always loaded for it (claimSide: the operand, or
//    what Pointwise ops make it from, produced where no valid open S holding it can reach, and
//    too large to retain) takes, instead of its compute floor and those loads apart, the least
//    over every tile and k class of lambda x its compute + (1 - lambda) x those loads / B
//    (bound_joint.cpp): at the subgraph's own granularity both terms are its share of the sums,
//    so the least is below them. Claimed tensors are nobody else's.
//    An open op also takes a *forced store* (forcedStores): every valid S holding it writes one
//    of the tensors forcedOutputs lists (bound_shapes.cpp), none of which can be retained, so at
//    least the least of them; those tensors are then nobody else's.
//    How each op mixes compute and loads (one lambda, or one per granularity, or step by step,
//    per class of joint ops that may share a subgraph) is chosen in bound_share_modes.cpp; what
//    the other open ops take beside a class (their compute floor there, the excess of a joint op
//    they force to nk = 1) is in bound_beside.cpp.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "cost/bound_internal.h"

namespace mlsys::bound_detail {

namespace {

constexpr long kMaxPartFloors = 4000;       // partFloor calls per component
constexpr long kMaxPressureWork = 4000000;  // op visits of the pressure test per component

struct Shares {
  const Problem& p;
  const ModelOptions& m;
  const std::vector<OpId>& ops;
  const std::vector<std::vector<std::pair<OpId, LD>>>& adj;
  const std::vector<LD>& opCompute;
  const std::vector<char>& mayFeedMatMul;
  const std::function<bool()>& giveUp;
  int maxParts;
  BoundArgs args;  // the arguments switched off (bound_args.h)

  std::vector<char> inComp, open, in;
  std::vector<char> claimed;                          // per tensor: its loads belong to a joint floor
  std::vector<OpId> claimer;                          // per claimed tensor: that joint op
  std::vector<std::vector<std::vector<OpId>>> parts;  // per op (closed ones): its listed parts
  long floorsPriced = 0;

  std::vector<char> shapesKnown;
  std::vector<std::optional<std::vector<Shape>>> shapes;  // per op, forcedShapes (once)
  std::map<std::pair<OpId, i64>, std::optional<std::vector<Shape>>> splitShapes;
  std::vector<char> outputsKnown;
  std::vector<std::optional<std::vector<TensorId>>> outputs;  // per op, forcedOutputs (once)

  bool stop() const { return giveUp && giveUp(); }

  const std::optional<std::vector<Shape>>& shapesOf(OpId v) {
    if (!shapesKnown[v]) {
      shapes[v] = stop() ? std::nullopt : forcedShapes(p, v);  // out of time: any shape (merges classes)
      shapesKnown[v] = 1;
    }
    return shapes[v];
  }

  // forcedShapes(v, kSplit), once per pair.
  const std::optional<std::vector<Shape>>& splitShapesOf(OpId v, i64 kSplit) {
    auto [it, fresh] = splitShapes.try_emplace({v, kSplit});
    if (fresh) it->second = stop() ? std::nullopt : forcedShapes(p, v, kSplit);
    return it->second;
  }

  const std::optional<std::vector<TensorId>>& outputsOf(OpId v) {
    if (!outputsKnown[v]) {
      outputs[v] = stop() ? std::nullopt : forcedOutputs(p, v);  // out of time: unknown (no store)
      outputsKnown[v] = 1;
    }
    return outputs[v];
  }

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
      }
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
  // 1: yes, each tensor read by the chain only, or also by ops that can never share a valid
  // subgraph with o and nk > 1 (their forced output shapes at k < K are disjoint: mayShareSubgraph,
  // forcedShapes with kSplit = K; shared only changes o's nk > 1 loads); 2: yes, but some
  // tensor also has another reader that might, whose slices of it could coincide with o's k-strips
  // in another step (jointFrontier then counts that side's nk > 1 loads once).
  int claimSide(OpId o, int s) {
    std::vector<TensorId> chain;
    std::vector<OpId> members = {o};
    TensorId t = p.ops[o].inputs[s];
    const i64 K = p.ops[o].K;  // sharing matters with nk > 1 only: k < K
    bool shared = false;
    auto usable = [&](TensorId x) {
      return !claimed[x] && (p.is_graph_input[x] || p.size(x) > p.capacity) &&
             std::find(chain.begin(), chain.end(), x) == chain.end();
    };
    if (!usable(t)) return 0;
    OpId reader = o;  // the op of o's chain that reads t
    for (;;) {
      chain.push_back(t);
      for (OpId r : p.consumers[t])
        shared = shared || (r != reader && mayShareSubgraph(shapesOf(o), shapesOf(r)) &&
                            mayShareSubgraph(splitShapesOf(o, K), splitShapesOf(r, K)));
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
      reader = pr;
    }
    for (TensorId x : chain) claimed[x] = 1, claimer[x] = o;
    return shared ? 2 : 1;
  }

  // |v| for a joint MatMul d whose RHS v its frontier claims for it alone, when its output fits
  // one tile row (H <= N) and its one-row point (h = H, w = min(N, W), nk > 1) fits and computes
  // at most |v| / B: then its share in every mode is at most that point's, which loads v once
  // (gridPressure). Else 0.
  LD rowReload(OpId d, const std::vector<const JointFrontier*>& joint) const {
    const JointFrontier* f = joint[d];
    if (!open[d] || !f || !f->claimed[1] || f->shared[1]) return 0;
    const Op& D = p.ops[d];
    const i64 N = p.native, W = p.widths[D.outputs[0]], H = p.heights[D.outputs[0]];
    const i64 h = H, w = std::min(N, W);
    if (H > N || (f->claimed[0] ? h : 0) + w + h * w > p.capacity || D.K < 2) return 0;
    LD perTile = static_cast<LD>(D.base_cost);
    if (m.matmul_compute == ModelOptions::MatmulCompute::NativeDepth)
      perTile = perTile * static_cast<LD>(D.K) / static_cast<LD>(N);
    const LD v = static_cast<LD>(p.size(D.inputs[1]));
    return perTile * static_cast<LD>((W + w - 1) / w) <= v / static_cast<LD>(p.bandwidth) ? v : 0;
  }

  // Per open op, the elements of graph-input loads attributed to it.
  std::vector<LD> attributions(int& pressured, const std::vector<const JointFrontier*>& joint) {
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
        const LD grid = gridPressure(p, readers, [&](OpId d) { return rowReload(d, joint); });
        for (OpId c : readers)
          t[c] += size * std::max(grid, std::min<LD>(1, static_cast<LD>(p.size(p.ops[c].inputs[0])) /
                                                            static_cast<LD>(p.capacity)));
      } else {
        for (OpId c : readers) t[c] += size / static_cast<LD>(readers.size());
      }
    }
    return t;
  }

  // Per open op (joint ones first), a forced store (forcedOutputs: S holding it writes or retains one
  // of them; none retainable: at least the least), when none is another op's. Returns how many.
  int forcedStores(std::vector<LD>& traffic, const std::vector<const JointFrontier*>& joint) {
    std::vector<char> taken(p.numTensors(), 0);
    int count = 0;
    if (!args.on(BoundArg::ForcedStores)) return 0;
    for (int pass = 0; pass < 2; ++pass)
      for (OpId o : ops) {
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
        ++count;
      }
    return count;
  }

  // Whether every valid S holding o writes an output in each step: forcedOutputs lists tensors
  // none of which can be retained (V6, W1), and S's outputs share its grid.
  bool storesAlways(OpId o) {
    if (!args.on(BoundArg::ForcedStores)) return false;
    const std::optional<std::vector<TensorId>>& F = outputsOf(o);
    if (!F || F->empty()) return false;
    for (TensorId t : *F)
      if (retainable(p, t)) return false;
    return true;
  }

  // Joint ops in classes: two that may share a valid subgraph (by their forced output shapes) in
  // one class (bound_share_modes.cpp says why).
  void jointClasses(SharePricing& sp) {
    // Joint ops accumulate in every valid S; two of different K never share one (E2): one K a class.
    std::map<std::pair<i64, std::optional<std::vector<Shape>>>, std::vector<OpId>> bySet;
    for (OpId o : ops)
      if (sp.joint[o]) bySet[{p.ops[o].K, shapesOf(o)}].push_back(o);
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
        classSets.emplace_back();
      }
      classSets[it->second].push_back(&e.first.second);
      for (OpId o : e.second) {
        sp.joint_class[o] = it->second;
        if (sp.joint[o] != sp.joint[sp.class_first[it->second]]) sp.class_single_kind[it->second] = 0;
      }
    }
    // The classes each other open op may share a valid subgraph with.
    sp.meets.assign(p.numOps(), {});
    for (OpId x : ops) {
      if (!open[x] || sp.joint[x]) continue;
      for (size_t c = 0; c < classSets.size(); ++c)
        for (const auto* set : classSets[c])
          if (mayShareSubgraph(shapesOf(x), *set)) {
            sp.meets[x].push_back(static_cast<int>(c));
            break;
          }
    }
  }

  std::vector<PricedTensor> pricedReaders, claimedReaders;  // retentionPrices, closedLoads (bound_share_prices.cpp)

  ShareBound run() {
    ShareBound res;
    inComp.assign(p.numOps(), 0);
    open.assign(p.numOps(), 0);
    in.assign(p.numOps(), 0);
    parts.assign(p.numOps(), {});
    shapesKnown.assign(p.numOps(), 0);
    shapes.assign(p.numOps(), std::nullopt);
    outputsKnown.assign(p.numOps(), 0);
    outputs.assign(p.numOps(), std::nullopt);
    for (OpId o : ops) inComp[o] = open[o] = 1;
    // Closed ops, and their parts' floors (each part priced once, with the retention prices).
    std::map<std::vector<OpId>, LD> floorOf;
    for (OpId o : ops) {
      if (stop()) break;
      std::vector<std::vector<OpId>> listed;
      if (!listParts(o, listed)) continue;
      long fresh = 0;
      for (const std::vector<OpId>& S : listed) fresh += floorOf.count(S) ? 0 : 1;
      if (floorsPriced + fresh > kMaxPartFloors) break;
      floorsPriced += fresh;
      for (const std::vector<OpId>& S : listed) floorOf.emplace(S, 0);
      open[o] = 0;
      parts[o] = std::move(listed);
      ++res.closed;
    }
    auto priceParts = [&](const RetentionPrices* prices, const std::vector<char>* touched = nullptr) {
      for (auto& [S, floor] : floorOf) {
        if (stop()) break;  // a floor left at 0 is still a floor
        if (touched && std::none_of(S.begin(), S.end(), [&](OpId v) { return (*touched)[v]; })) continue;
        std::vector<OpId> topo = S;
        std::sort(topo.begin(), topo.end(), [&](OpId a, OpId b) { return p.topo_pos[a] < p.topo_pos[b]; });
        floor = static_cast<LD>(partFloor(p, m, topo, prices, args).value);
      }
    };
    priceParts(nullptr);
    // With the prices: the parts a priced tensor crosses (its maker's, a reader's) floored again.
    RetentionPrices prices = args.on(BoundArg::RetentionPrices) ? retentionPrices(p, ops, open, inComp, pricedReaders)
                                                                 : RetentionPrices{};
    std::map<std::vector<OpId>, LD> plain;
    if (!prices.empty()) {
      plain = floorOf;
      std::vector<char> touched(p.numOps(), 0);
      for (const auto& [t, readers] : pricedReaders) {
        touched[p.producer[t]] = 1;
        for (OpId r : p.consumers[t]) touched[r] = 1;
      }
      priceParts(&prices, &touched);
      if (stop()) {  // a part left with its plain floor may not earn a price it keeps out: none
        floorOf = plain;
        prices.clear();
        pricedReaders.clear();
      }
    }
    // Open MatMuls that accumulate in every subgraph, with a claimed side: their joint floors.
    claimed.assign(p.numTensors(), 0);
    claimer.assign(p.numTensors(), -1);
    std::vector<const JointFrontier*> joint(p.numOps(), nullptr);
    // Frontiers depend on the op only through these: computed once per kind (generated graphs
    // repeat shapes).
    std::map<std::tuple<i64, i64, i64, i64, int, int, bool>, JointFrontier> frontiers;  // stable addresses
    for (OpId o : ops) {
      if (!open[o] || !isMatMul(p, o) || mayFeedMatMul[o] || p.ops[o].outputs.size() != 1 || stop() ||
          !args.on(BoundArg::JointFloors))
        continue;
      const int l = claimSide(o, 0), r = claimSide(o, 1);
      if (!l && !r) continue;
      const Op& op = p.ops[o];
      const bool stores = storesAlways(o);
      const auto key =
          std::make_tuple(p.widths[op.outputs[0]], p.heights[op.outputs[0]], op.K, op.base_cost, l, r, stores);
      auto it = frontiers.find(key);
      if (it == frontiers.end())
        it = frontiers.emplace(key, jointFrontier(p, m, o, {l > 0, r > 0}, {l == 2, r == 2}, stores)).first;
      if (it->second.points.empty()) continue;  // never fits: no valid subgraph holds o
      joint[o] = &it->second;
      ++res.joint_ops;
    }
    std::vector<LD> traffic = attributions(res.pressure_inputs, joint);
    if (args.on(BoundArg::ClosedLoads)) closedLoads(p, ops, open, inComp, claimed, pricedReaders, claimedReaders);
    attributePrices(p, pricedReaders, traffic, 1);
    res.store_ops = forcedStores(traffic, joint);
    SharePricing sp{ops,
                    static_cast<LD>(p.bandwidth),
                    open,
                    opCompute,
                    std::move(traffic),
                    joint,
                    std::vector<int>(p.numOps(), -1),
                    {},
                    {},
                    {},
                    {},
                    std::vector<std::vector<std::pair<LD, std::vector<OpId>>>>(p.numOps()),
                    {},
                    {},
                    {},
                    {},
                    {}};
    jointClasses(sp);
    besideFed(p, ops, inComp, sp, [&](OpId v) -> const std::optional<std::vector<Shape>>& { return shapesOf(v); });
    besideStep(p, m, ops, claimed, claimer, sp, [&] { return stop(); });
    besideCompute(p, ops, inComp, sp);
    besideLoads(p, ops, claimed, sp);
    closedClaimedLoads(p, claimedReaders, claimer, sp, 1);
    for (OpId o : ops)
      for (const std::vector<OpId>& S : parts[o]) sp.parts[o].push_back({floorOf.at(S), S});
    res.value = bestShareTotal(sp, &res.op_shares);
    if (!pricedReaders.empty() || !claimedReaders.empty()) {
      // A part holding a priced (or closedLoads') tensor's maker and readers pays their shares only
      // through the closed op's, never below 0: where that is not enough, none. Prices move value
      // from the maker's parts to the readers: the shares without them count if larger.
      const bool paid = partsPaid(p, ops, parts, res.op_shares, floorOf);
      attributePrices(p, pricedReaders, sp.traffic, -1);
      closedClaimedLoads(p, claimedReaders, claimer, sp, -1);
      for (OpId o : ops)
        for (auto& [floor, S] : sp.parts[o]) floor = prices.empty() ? floor : plain.at(S);
      std::vector<LD> shares;
      const LD value = bestShareTotal(sp, &shares);
      if (!paid || value >= res.value) res.value = value, res.op_shares = std::move(shares);
    }
    return res;
  }
};

}  // namespace

ShareBound shareBound(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                      const std::vector<std::vector<std::pair<OpId, LD>>>& adj, const std::vector<LD>& opCompute,
                      const std::vector<char>& mayFeedMatMul, const std::function<bool()>& giveUp, int maxParts,
                      const BoundArgs& args) {
  return Shares{p,  m,  ops, adj, opCompute, mayFeedMatMul, giveUp, maxParts, args, {}, {}, {}, {}, {}, {}, 0, {},
                {}, {}, {}, {},  {},  {}}
      .run();
}

}  // namespace mlsys::bound_detail
