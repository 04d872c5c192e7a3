// The share bound's working state (internal to cost/bound): shares.cpp states the argument and runs
// it; share_claims.cpp holds its claims (joint floors' sides, pressure, forced stores, classes).
#pragma once
#include <map>
#include <optional>
#include <vector>

#include "cost/bound/internal.h"
#include "cost/model/connected_sets.h"

namespace mlsys::bound_detail {

constexpr long kMaxPartFloors = 4000;       // partFloor calls per component
constexpr long kMaxPressureWork = 4000000;  // op visits of the pressure test per component

struct Shares {
  const Problem& p;
  const ModelOptions& m;
  const std::vector<OpId>& ops;
  const std::vector<std::vector<std::pair<OpId, LD>>>& adj;
  const std::vector<LD>& opCompute;
  const std::vector<char>& jointEligible;           // its output feeds no MatMul of a valid S where it accumulates
  const std::vector<LD>& upstreamCompute;           // its compute floor in any S where it is upstream (inf: none)
  const std::vector<UpstreamReads>& upstreamReads;  // its grid's tiles and its output's roles there
  const std::vector<char>& feedsNoMatMul;           // !OpComputeFloor::may_feed_matmul
  const std::function<bool()>& giveUp;
  int maxParts;
  BoundArgs args;  // the arguments switched off (args.h)
  ShareMemo& memo;

  std::vector<char> inComp, open, in;
  std::vector<char> claimed;               // per tensor: its loads belong to a joint floor
  std::vector<std::vector<OpId>> claimer;  // per claimed tensor: its joint ops, no two in one valid S
  std::vector<char> spread;  // per claimed tensor: under shared-claims (each claimer's strips over its readers)
  std::vector<std::vector<std::vector<OpId>>> parts;  // per op (closed ones): its listed parts
  long floorsPriced = 0;

  std::vector<char> shapesKnown;
  std::vector<std::optional<std::vector<Shape>>> shapes;  // per op, forcedShapes (once)
  std::map<std::pair<OpId, i64>, std::optional<std::vector<Shape>>> splitShapes;
  std::vector<char> outputsKnown;
  std::vector<std::optional<std::vector<TensorId>>> outputs;  // per op, forcedOutputs (once)

  bool stop() const { return giveUp && giveUp(); }
  // Mid-way through a loop over the component: past the stop, abandon the share bound (shareBound
  // catches it and gives the component no shares).
  void poll() const {
    if (stop()) throw SharesStopped{};
  }

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

  // Every part containing o that forcedInvalid does not rule out (the one enumerator:
  // cost/model/connected_sets.h, grown along the component's fusable edges), or false when there
  // are more than maxParts of them.
  bool listParts(OpId o, std::vector<std::vector<OpId>>& out) {
    out.clear();
    auto nb = [&](int32_t v, auto f) {
      for (const auto& e : adj[v])
        if (inComp[e.first]) f(e.first);
    };
    auto keep = [&](const std::vector<OpId>& S) {
      if (S.size() == 1) return true;
      for (OpId v : S) in[v] = 1;
      const bool invalid = forcedInvalid(p, in, S);
      for (OpId v : S) in[v] = 0;
      return !invalid;
    };
    auto visit = [&](const std::vector<OpId>& S) {
      out.push_back(S);
      return static_cast<int>(out.size()) <= maxParts;
    };
    return forEachConnectedSet(listSets(nb), {{o}}, keep, visit, long{1} << 22) == Enumerated::All;
  }

  // Whether the pressure attribution holds for graph input u (see the top of the file).
  bool pressure(TensorId u, const std::vector<OpId>& readers, long& work);

  // Whether side s of the open MatMul o is always loaded for it: its operand, or a tensor that
  // Pointwise ops make it from (each needs its inputs with the region it makes, E3), is produced
  // outside every valid open S holding o and those ops (a graph input, made by a closed op or
  // outside the component, or by an op that forcedInvalid keeps out of any part holding o and
  // the chain, or by a Pointwise whose edge into the chain is not fusable: fusableEdge, V9), each tensor on the way too
  // large to be retained (V6 needs |t| <= C in W1), so in every such S one of them is loaded with the operand's region.
  // Marks them claimed. 0: no; 1: yes, each tensor read by the chain only, or also by ops that can never share a valid
  // subgraph with o and nk > 1 (their forced output shapes at k < K are disjoint: mayShareSubgraph,
  // forcedShapes with kSplit = K; shared only changes o's nk > 1 loads); 2: yes, but some
  // tensor also has another reader that might, whose slices of it could coincide with o's k-strips
  // in another step (jointFrontier then counts that side's nk > 1 loads once).
  int claimSide(OpId o, int s);

  // |v| for a joint MatMul d whose RHS v its frontier claims for it alone, when its output fits
  // one tile row (H <= N) and its one-row point (h = H, w = min(N, W), nk > 1) fits and computes
  // at most |v| / B: then its share in every mode is at most that point's, which loads v once
  // (gridPressure). Else 0.
  LD rowReload(OpId d, const std::vector<const JointFrontier*>& joint) const;

  // epilogue-tiles (joint_floors.cpp states the argument): on where no valid subgraph can retain
  // o's output, and the tiles a step holds where it is ephemeral: the accumulator, an output tile,
  // and the least over its Pointwise readers r of the tensors r's other inputs need.
  JointEpilogue epilogueOf(OpId o);
  // Per joint op with epilogue points, the store its written points add (SharePricing::written_store):
  // its output's, less its forced store (which, taken by it, is its output or another it writes); or,
  // with none, its output's if no forced store took it (then it is taken); -1 for the ops whose
  // share gridPressure needs at most its one-row point (rowReloaded), and the others.
  std::vector<LD> writtenStores(const std::vector<const JointFrontier*>& joint, const std::vector<char>& rowReloaded,
                                const std::vector<LD>& forced, std::vector<char>& taken);

  // Per open op, the elements of graph-input loads attributed to it.
  // rowReloaded: the joint ops whose rowReload gridPressure asked for and got (> 0).
  std::vector<LD> attributions(int& pressured, const std::vector<const JointFrontier*>& joint,
                               std::vector<char>& rowReloaded);

  // Per open op (joint ones first), a forced store (forcedOutputs: S holding it writes or retains one
  // of them; none retainable: at least the least), when none is another op's. Returns how many.
  // forced: per op, the elements given; taken: per tensor, in a given op's set.
  int forcedStores(std::vector<LD>& traffic, const std::vector<const JointFrontier*>& joint, std::vector<LD>& forced,
                   std::vector<char>& taken);

  // Whether every valid S holding o writes an output in each step: forcedOutputs lists tensors
  // none of which can be retained (V6, W1), and S's outputs share its grid.
  bool storesAlways(OpId o);

  // The elements a joint op o that may be upstream loads of its claimed sides (l, r: claimSide) in
  // any valid S where it is upstream: each side whole at least once (it makes its whole output).
  // upstream-reloads: where the first MatMul d of S that o's output reaches (through Pointwise ops,
  // which pass regions on: E3) reads it as its LHS, each of S's tiles (d's output tile: d
  // accumulates, so S's grid is d's output shape, at least `tiles` native tiles) needs rows x
  // [0, K_d) of o's output over its k-steps, hence o's RHS whole, strip [0, K_o) x kappa_j in step j
  // (E3). When that side is claimed for o alone (claimSide 1: no other reader shares a valid S
  // with it at nk > 1) and larger than C, no step holds it whole (so d has nk > 1 and no slice of
  // it is ever a full-tensor slice) and the strips of one tile differ step by step, as do the last
  // strip of a tile and the first of the next: L3 reloads it whole in every tile. As d's RHS, the
  // same for o's LHS. Over the roles o's output may take, the least.
  LD upstreamSideLoads(OpId o, int l, int r) const {
    const Op& op = p.ops[o];
    const LD sizes[2] = {l ? static_cast<LD>(p.size(op.inputs[0])) : 0, r ? static_cast<LD>(p.size(op.inputs[1])) : 0};
    const LD once = sizes[0] + sizes[1];
    const UpstreamReads& u = upstreamReads[o];
    if (!args.on(BoundArg::UpstreamReloads) || u.roles == 0) return once;
    LD least = std::numeric_limits<LD>::infinity();
    for (int role = 0; role < 2; ++role) {
      if (!(u.roles >> role & 1)) continue;
      const int side = 1 - role;  // made as d's LHS: o's RHS whole per tile; as d's RHS: its LHS
      const int claim = side == 0 ? l : r;
      const bool reloaded =
          (claim == 1 || (claim == 2 && sharedReload(o, side))) && p.size(op.inputs[side]) > p.capacity;
      least = std::min(least, reloaded ? once + static_cast<LD>(u.tiles - 1) * sizes[side] : once);
    }
    return least;
  }

  // shared-reloads: upstream-reloads where other readers of o's swept operand t (side) may share S
  // with o (claimSide 2: t is o's claim alone, theirs none). With K_o > N (k <= N: k_limit native),
  // o's strip of t in step j is [0, K_o) x kappa_j (side 1; kappa_j x [0, K_o) for side 0), more
  // than N rows (columns) and never all of t (nk > 1). Every other need of t in S has at most N
  // rows (columns: tiles, k-strips; all of t, > C, is no valid need), except that of an upstream
  // MatMul r reading t on the same side: all of t's rows
  // (columns) x r's output columns (rows). Where r's output is an LHS (RHS for side 0) of the first
  // MatMuls it reaches, those are kappa_j in step j, the same strip o needs then; where it is the
  // other role they are the tile's, constant over its steps, and could keep o's strip resident
  // from one tile to the next: then no. A Pointwise reader cannot need it: making an upstream
  // MatMul's RHS (LHS) needs h (w) >= K > N (V9, V8). So a load of one of o's strips is never
  // resident at o's next need of it (nk - 1 >= 1 steps apart, L3), and o's T |t| needs are T |t|
  // loads, however the other readers share them. t is o's direct operand (made by no open op of
  // the component), read once by o.
  bool sharedReload(OpId o, int side) const {
    const Op& op = p.ops[o];
    const TensorId t = op.inputs[side];
    if (!args.on(BoundArg::SharedReloads) || m.k_limit != ModelOptions::KLimit::Native || op.K <= p.native ||
        op.inputs[0] == op.inputs[1])
      return false;
    const OpId pr = p.producer[t];
    if (pr >= 0 && inComp[pr] && open[pr]) return false;
    for (OpId r : p.consumers[t])
      if (r != o && isMatMul(p, r) && p.ops[r].inputs[side] == t &&
          upstreamCompute[r] < std::numeric_limits<LD>::infinity() && (upstreamReads[r].roles >> side & 1))
        return false;
    return true;
  }

  // Per joint op that may be upstream (sideLoads >= 0: its claimed sides' sizes), its compute floor
  // and loads where it is upstream (upstream-joint, shares.cpp); inf for the others.
  void upstreamPrices(SharePricing& sp, const std::vector<LD>& sideLoads) const {
    sp.up_compute.assign(p.numOps(), std::numeric_limits<LD>::infinity());
    sp.up_loads.assign(p.numOps(), std::numeric_limits<LD>::infinity());
    sp.up_meets.assign(p.numOps(), {});
    for (OpId o : ops)
      if (sp.joint[o] && sideLoads[o] >= 0)
        sp.up_compute[o] = upstreamCompute[o], sp.up_loads[o] = (sideLoads[o] + sp.traffic[o]) / sp.B;
  }

  // Joint ops in classes: two that may share a valid subgraph (by their forced output shapes) in
  // one class (share_modes.cpp says why).
  void jointClasses(SharePricing& sp);
  // class-reach: per class, 1 for each op that may share a valid subgraph with one of the class's
  // ops: reached from them along fusable edges through such ops only (shares.cpp); all 1 when the
  // argument is off.
  std::vector<std::vector<char>> classReach(const SharePricing& sp);

  std::vector<PricedTensor> pricedReaders, claimedReaders;  // retentionPrices, closedLoads (share_prices.cpp)

  // The closed ops (every part holding them listed), within kMaxPartFloors parts in all; their
  // parts in floorOf (priced later). Returns how many.
  int closeOps(std::map<std::vector<OpId>, LD>& floorOf) {
    int closed = 0;
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
      ++closed;
    }
    return closed;
  }

  // The joint ops' frontiers (joint), and for those that may be upstream their claimed sides' loads
  // there (sideLoads); marks their claimed tensors. Returns how many.
  int jointFloors(std::vector<const JointFrontier*>& joint, std::vector<LD>& sideLoads) {
    claimed.assign(p.numTensors(), 0);
    claimer.assign(p.numTensors(), {});
    spread.assign(p.numTensors(), 0);
    int count = 0;
    // Frontiers depend on the op only through these: computed once per kind (generated graphs
    // repeat shapes).
    auto& frontiers = memo.frontiers;
    for (OpId o : ops) {
      poll();
      if (!open[o] || !isMatMul(p, o) || !jointEligible[o] || p.ops[o].outputs.size() != 1 || stop() ||
          !args.on(BoundArg::JointFloors))
        continue;
      const int l = claimSide(o, 0), r = claimSide(o, 1);
      if (!l && !r) continue;
      const Op& op = p.ops[o];
      const bool stores = storesAlways(o);
      const JointEpilogue epilogue = epilogueOf(o);
      const auto kindKey =
          std::make_tuple(p.widths[op.outputs[0]], p.heights[op.outputs[0]], op.K, op.base_cost, l, r, stores);
      const auto key = std::tuple_cat(kindKey, std::make_tuple(epilogue));
      auto it = frontiers.find(key);
      if (it == frontiers.end()) {
        it = frontiers
                 .emplace(key, jointFrontier(p, m, o, {l > 0, r > 0}, {l >= 2, r >= 2}, stores,
                                             {l >= 3 ? l - 1 : 1, r >= 3 ? r - 1 : 1}, epilogue))
                 .first;
        it->second.kind = memo.kinds.emplace(kindKey, static_cast<int>(memo.kinds.size())).first->second;
      }
      if (it->second.points.empty()) continue;  // never fits: no valid subgraph holds o
      joint[o] = &it->second;
      ++count;
      if (upstreamCompute[o] < std::numeric_limits<LD>::infinity()) sideLoads[o] = upstreamSideLoads(o, l, r);
    }
    return count;
  }

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
    std::map<std::vector<OpId>, LD> floorOf;
    res.closed = closeOps(floorOf);
    auto priceParts = [&](const RetentionPrices* prices, const std::vector<char>* touched = nullptr) {
      for (auto& [S, floor] : floorOf) {
        if (stop()) break;  // a floor left at 0 is still a floor
        if (touched && std::none_of(S.begin(), S.end(), [&](OpId v) { return (*touched)[v]; })) continue;
        std::vector<OpId> topo = S;
        std::sort(topo.begin(), topo.end(), [&](OpId a, OpId b) { return p.topo_pos[a] < p.topo_pos[b]; });
        floor = static_cast<LD>(partFloor(p, m, topo, prices, args, giveUp ? &giveUp : nullptr).value);
      }
    };
    priceParts(nullptr);
    // With the prices: the parts a priced tensor crosses (its maker's, a reader's) floored again.
    RetentionPrices prices =
        args.on(BoundArg::RetentionPrices) ? retentionPrices(p, ops, open, inComp, pricedReaders) : RetentionPrices{};
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
    std::vector<const JointFrontier*> joint(p.numOps(), nullptr);
    std::vector<LD> sideLoads(p.numOps(), -1);  // per joint op that may be upstream: its claimed sides' sizes
    res.joint_ops = jointFloors(joint, sideLoads);
    std::vector<char> rowReloaded(p.numOps(), 0), taken(p.numTensors(), 0);
    std::vector<LD> traffic = attributions(res.pressure_inputs, joint, rowReloaded), forced(p.numOps(), 0);
    if (args.on(BoundArg::ClosedLoads)) closedLoads(p, ops, open, inComp, claimed, pricedReaders, claimedReaders);
    attributePrices(p, pricedReaders, traffic, 1);
    res.store_ops = forcedStores(traffic, joint, forced, taken);
    std::vector<LD> written = writtenStores(joint, rowReloaded, forced, taken);
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
                    {},
                    {},
                    {},
                    {},
                    {},
                    {}};
    sp.written_store = std::move(written);
    sp.last_only.assign(p.numOps(), 0);  // a Pointwise computing in a tile's last k-step only
    for (OpId o : ops) sp.last_only[o] = p.ops[o].type == OpType::Pointwise && feedsNoMatMul[o];
    sp.stop = giveUp;
    sp.split_modes = args.on(BoundArg::StepMixtures);
    sp.forced_split = sp.split_modes ? args.step_mixtures_forced : -1;
    sp.check_trials = args.check_share_trials;
    upstreamPrices(sp, sideLoads);
    jointClasses(sp);
    besideFed(p, ops, inComp, sp, [&](OpId v) -> const std::optional<std::vector<Shape>>& { return shapesOf(v); });
    besideStep(
        p, m, ops, claimed, claimer, sp, [&] { return stop(); }, memo);
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

}  // namespace mlsys::bound_detail
