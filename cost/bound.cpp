// The lower bound (bound.h): the global floors (compute, traffic) and the sum over fusion
// components of their groups' floors (the cheapest cover by parts, or "floors"). The floor of one
// part is in bound_part.cpp.
#include "cost/bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include "cost/bound_internal.h"

namespace mlsys {

namespace {

using bound_detail::LD;
using bound_detail::retainable;

// The root of x in a union-find forest, halving the path on the way.
int findRoot(std::vector<int>& uf, int x) {
  while (uf[x] != x) x = uf[x] = uf[uf[x]];
  return x;
}

// lowerBound, step by step: the global floors, the fusion components, then each component's
// floor from the floors of its groups.
class Ruler {
 public:
  Ruler(const Problem& p, const ModelOptions& m, const BoundOptions& bo)
      : p_(p), m_(m), bo_(bo), N_(p.native), no_(p.numOps()) {}

  LowerBound run() {
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    LowerBound lb;
    auto t = Clock::now();
    lb.compute = static_cast<double>(computeFloor());
    lb.traffic = static_cast<double>(trafficFloor());
    buildComponents();
    lb.timing.floors_s = since(t);
    t = Clock::now();
    LD total = componentsBound(lb.components);
    lb.timing.components_s = since(t);
    t = Clock::now();
    LD withShares = sharesOf(lb.components);
    lb.timing.shares_s = since(t);
    const std::vector<BoundComponent> unpriced = withShares > total ? lb.components : std::vector<BoundComponent>{};
    t = Clock::now();
    lb.timing.price_passes = tieRetention(lb.components, total);
    lb.timing.prices_s = since(t);
    // The share bounds hold without prices: the unpriced floors raised by them, or the priced
    // total, whichever is larger (each is a lower bound alone).
    if (withShares > total) {
      total = withShares;
      lb.components = unpriced;
      for (BoundComponent& c : lb.components)
        if (c.shares > c.value) {
          c.value = c.shares;
          c.by_shares = true;
        }
    }
    t = Clock::now();
    total += relaxedCovers(lb.components);
    lb.timing.lp_s = since(t);
    // Floating point: the parts are long double sums of exact-rational floors; the evaluator sums
    // doubles. Rounding down by 1e-12 relative keeps the bound below a schedule that equals it.
    lb.parts = static_cast<double>(total * (1 - 1e-12L));
    return lb;
  }

 private:
  i64 nativeTiles(TensorId t) const { return bound_detail::nativeTiles(p_, t); }
  // Whether edge e links its ops at the current theta (edges with a floor >= theta are cut).
  bool linked(const std::pair<OpId, LD>& e) const { return !(e.second > 0 && e.second >= theta_); }

  LD computeFloor();
  LD trafficFloor() const;
  LD edgeFloor(OpId q, OpId c, TensorId t) const;
  void buildComponents();
  LD floors(const std::vector<OpId>& ops);
  bool connectedParts(const std::vector<OpId>& ops, std::vector<uint32_t>& parts);
  // Per op of a group (bit j: ops[j]), its neighbours in the group: along the edges linked at the
  // current theta (linkedOnly), or along all of them.
  template <class Mask>
  std::vector<Mask> neighbours(const std::vector<OpId>& ops, bool linkedOnly) {
    const int n = static_cast<int>(ops.size());
    for (int i = 0; i < n; ++i) idx_[ops[i]] = i;
    std::vector<Mask> nb(n, 0);
    for (int i = 0; i < n; ++i)
      for (const auto& e : adj_[ops[i]])
        if (idx_[e.first] >= 0 && (!linkedOnly || linked(e))) nb[i] |= Mask{1} << idx_[e.first];
    for (int i = 0; i < n; ++i) idx_[ops[i]] = -1;
    return nb;
  }
  bool cheapestCover(const std::vector<OpId>& ops, const std::vector<uint32_t>& parts, BoundGroup& bg) const;
  BoundGroup groupBound(const std::vector<OpId>& ops);
  std::vector<LD> thetasOf(const std::vector<OpId>& ops) const;
  BoundComponent cutAt(const std::vector<OpId>& ops, LD th, std::map<std::vector<OpId>, BoundGroup>& groupCache);
  BoundComponent componentBound(const std::vector<OpId>& ops, std::map<std::vector<OpId>, BoundGroup>& groupCache);
  LD componentsBound(std::vector<BoundComponent>& out, const std::vector<BoundComponent>* previous = nullptr,
                     const std::vector<char>* touched = nullptr);
  int tieRetention(std::vector<BoundComponent>& components, LD& total);
  LD sharesOf(std::vector<BoundComponent>& components) const;
  LD relaxedCovers(std::vector<BoundComponent>& components);

  const Problem& p_;
  const ModelOptions& m_;
  const BoundOptions& bo_;
  const i64 N_;
  const int no_;
  std::vector<LD> opCompute_;                          // each op's compute floor
  std::vector<char> mayFeedMatMul_;                    // OpComputeFloor::may_feed_matmul
  std::vector<std::vector<std::pair<OpId, LD>>> adj_;  // fusable neighbours, edge floor
  std::vector<std::vector<OpId>> members_;             // per component root: its ops, topological
  LD theta_ = std::numeric_limits<LD>::infinity();     // edges with a floor >= theta are cut
  std::vector<char> inGroup_;                          // scratch: members of the group being priced
  std::vector<char> tensorMark_;                       // scratch: tensors counted
  std::vector<int> idx_;                               // scratch: position in the group being covered
  std::vector<int> sub_;                               // scratch: union-find inside one component
  RetentionPrices prices_;                             // empty, or a priced pass's (tieRetention)
  mutable std::vector<TensorId> negativeOut_;          // kept by a part whose priced floor fell below 0
  mutable long partsPriced_ = 0;                       // partFloor calls so far (the priced passes' budget)
};

// Step 1: the compute floor, and each op's share of it (opCompute_): base_cost per tile of the
// fewest native tiles the op can be charged on (opComputeFloor, bound_compute.cpp), x K/N for
// the least K at or downstream of a MatMul under native_depth.
LD Ruler::computeFloor() {
  const OpComputeFloor f = opComputeFloor(p_, m_);
  opCompute_.assign(no_, 0);
  mayFeedMatMul_ = f.may_feed_matmul;
  if (!bo_.args.on(BoundArg::ComputeFloor)) return 0;
  LD compute = 0;
  for (int o = 0; o < no_; ++o) {
    const Op& op = p_.ops[o];
    LD per = static_cast<LD>(op.base_cost);
    if (op.type == OpType::MatMul && m_.matmul_compute == ModelOptions::MatmulCompute::NativeDepth)
      per = per * static_cast<LD>(f.min_k[o]) / static_cast<LD>(N_);
    opCompute_[o] = static_cast<LD>(f.min_tiles[o]) * per;  // each run (the shares' unit)
    compute += static_cast<LD>(f.total_tiles[o]) * per;     // all its runs together
  }
  return compute;
}

// Step 2: the traffic floor. Every graph input is read from slow memory at least once (it is
// never produced, so never ephemeral, and never retained: V6), and every graph output is written
// at least once (V7). Transfers are elements / B (L3, L4).
LD Ruler::trafficFloor() const {
  if (!bo_.args.on(BoundArg::TrafficFloor)) return 0;
  LD elems = 0;
  for (int t = 0; t < p_.numTensors(); ++t)
    if (p_.is_graph_input[t] || p_.is_graph_output[t]) elems += p_.size(t);
  return elems / p_.bandwidth;
}

// The edge floor of the fusable edge q -> c through tensor t (0 when none is proven).
// A MatMul q whose output t is an operand of a MatMul c in the same subgraph: let u be q's other
// operand (its RHS when t is c's LHS, its LHS when t is c's RHS), a graph input (never
// ephemeral, never retained: V6) larger than the capacity. c needs t over its whole reduction
// axis, a k-strip of it per step (E3):
//  - with one k-step (k >= the accumulating K; always possible under k_limit=reduction, and
//    under the spec when K_c <= N), or when c is itself upstream (t needed across K_c whole), q
//    must produce t's whole span along K_c in one step, which needs all of u in that step
//    (q upstream: {Full, strip}; q accumulating, allowed only with one step by E2: its k-strip
//    is all of K_q): a working set above the capacity (V11), so no such subgraph is valid;
//  - otherwise (several k-steps) q makes k-strips of t, each needing a strip of u across its
//    whole reduction axis, a different one in every k-step, so each tile loads all of u.
// So a valid subgraph keeping the edge has traffic of at least tiles x |u| / B, the tiles being
// those of c's output (c accumulates there; the grid is the shape of c's output, which reaches
// O(S) through Pointwise ops only: E1, A-6), at least its native tiles. This holds whatever K_c
// is and under both k_limit readings (before, it was used only when K_c > N forced several
// k-steps, which left mlsys-2026-13 under k_limit=reduction with no edge floor at all).
LD Ruler::edgeFloor(OpId q, OpId c, TensorId t) const {
  const Op &Q = p_.ops[q], &Cc = p_.ops[c];
  if (Q.type != OpType::MatMul || Cc.type != OpType::MatMul || !bo_.args.on(BoundArg::EdgeFloors)) return 0;
  const TensorId u = t == Cc.inputs[0] ? Q.inputs[1] : t == Cc.inputs[1] ? Q.inputs[0] : -1;
  if (u < 0 || !p_.is_graph_input[u] || p_.size(u) <= p_.capacity) return 0;
  return static_cast<LD>(nativeTiles(Cc.outputs[0])) * static_cast<LD>(p_.size(u)) / static_cast<LD>(p_.bandwidth);
}

// Step 3: the fusion components: union of fusable producer -> consumer edges, each with its edge
// floor (adj_), and the ops of each (members_); sizes the scratch of the later steps.
void Ruler::buildComponents() {
  std::vector<int> comp(no_);
  std::iota(comp.begin(), comp.end(), 0);
  adj_.assign(no_, {});
  for (int o = 0; o < no_; ++o)
    for (TensorId t : p_.ops[o].outputs)
      for (OpId c : p_.consumers[t])
        if (bound_detail::fusableEdge(p_, m_, o, c)) {
          comp[findRoot(comp, o)] = findRoot(comp, c);
          const LD x = edgeFloor(o, c, t);
          adj_[o].push_back({c, x});
          adj_[c].push_back({o, x});
        }
  members_.assign(no_, {});
  for (OpId o : p_.topo) members_[findRoot(comp, o)].push_back(o);  // topological order inside each

  inGroup_.assign(no_, 0);
  tensorMark_.assign(p_.numTensors(), 0);
  idx_.assign(no_, -1);
  sub_.resize(no_);
  std::iota(sub_.begin(), sub_.end(), 0);
}

// A group's "floors": every subgraph of the group pays its ops' compute (above) and the group as
// a whole loads each tensor it consumes from outside once and stores each tensor it produces for
// outside (or as a graph output) once, unless retainable; its subgraphs cost at least the larger
// of the two sums.
LD Ruler::floors(const std::vector<OpId>& ops) {
  for (OpId o : ops) inGroup_[o] = 1;
  LD c = 0, e = 0;
  std::vector<TensorId> loaded;  // marked in tensorMark_, cleared below
  for (OpId o : ops) {
    c += opCompute_[o];
    for (TensorId t : p_.ops[o].inputs) {
      OpId pr = p_.producer[t];
      if ((pr < 0 || !inGroup_[pr]) && !retainable(p_, t) && !tensorMark_[t]) {
        tensorMark_[t] = 1;
        loaded.push_back(t);
        e += p_.size(t);
      }
    }
    for (TensorId t : p_.ops[o].outputs) {
      bool outside = p_.is_graph_output[t];
      for (OpId cns : p_.consumers[t]) outside = outside || !inGroup_[cns];
      if (outside && !retainable(p_, t)) e += p_.size(t);
    }
  }
  for (OpId o : ops) inGroup_[o] = 0;
  for (TensorId t : loaded) tensorMark_[t] = 0;
  return std::max(c, e / p_.bandwidth);
}

// The connected parts of a group (bit j: ops[j]), each once: grow sets by one adjacent op,
// remembering those seen. False when there are more than BoundOptions::max_parts.
bool Ruler::connectedParts(const std::vector<OpId>& ops, std::vector<uint32_t>& parts) {
  const int n = static_cast<int>(ops.size());
  const std::vector<uint32_t> nb = neighbours<uint32_t>(ops, true);
  bool tooMany = false;
  std::vector<char> seen(size_t{1} << n, 0);
  for (int v = 0; v < n; ++v) {
    seen[1u << v] = 1;
    parts.push_back(1u << v);
  }
  for (size_t i = 0; i < parts.size() && !tooMany; ++i) {
    uint32_t around = 0;
    for (int j = 0; j < n; ++j)
      if (parts[i] >> j & 1) around |= nb[j];
    around &= ~parts[i];
    while (around) {
      const uint32_t np = parts[i] | (around & -around);
      around &= around - 1;
      if (seen[np]) continue;
      seen[np] = 1;
      parts.push_back(np);
      if (static_cast<long>(parts.size()) > bo_.max_parts) {
        tooMany = true;
        break;
      }
    }
  }
  return !tooMany;
}

// The cheapest cover of a group's ops by its connected parts (parts may overlap:
// recomputation), each priced by partFloor and counted for its unforced ops (coverMasks) and the
// readers it serves (readerMasks): a dp over covered sets, where the lowest uncovered bit is
// covered next. Sets bg's method, value, parts and cover; false when no cover is finite.
bool Ruler::cheapestCover(const std::vector<OpId>& ops, const std::vector<uint32_t>& parts, BoundGroup& bg) const {
  constexpr int kMaxCoverBits = 20;  // ops and readers served: the dp's states (2^bits)
  const int n = static_cast<int>(ops.size());
  auto opsOf = [&](uint32_t mask) {
    std::vector<OpId> part;
    for (int j = 0; j < n; ++j)
      if (mask >> j & 1) part.push_back(ops[j]);  // topological, as ops is
    return part;
  };
  std::vector<PartFloor> f(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) f[i] = partFloor(p_, m_, opsOf(parts[i]), &prices_, bo_.args);
  partsPriced_ += static_cast<long>(parts.size());
  // Under prices a part that keeps a priced tensor out earns its price, and could go below 0:
  // then a schedule could run it again and again (recomputation), earning each time, and the
  // cover, which counts each op's first run only, would be above it. Such prices prove nothing
  // (tieRetention drops the pass and lowers them).
  if (!prices_.empty())
    for (size_t i = 0; i < parts.size(); ++i)
      if (f[i].value < 0)
        for (TensorId t : f[i].retained) negativeOut_.push_back(t);
  std::vector<uint32_t> covers = bo_.args.on(BoundArg::ForcedOps) ? bound_detail::coverMasks(p_, ops, parts) : parts,
                        served(parts.size(), 0);
  const int bits =
      n + (bo_.args.on(BoundArg::Readers) ? bound_detail::readerMasks(p_, ops, parts, kMaxCoverBits, served) : 0);
  for (size_t i = 0; i < parts.size(); ++i) covers[i] |= served[i];
  std::vector<std::vector<int>> byLow(bits);
  for (size_t i = 0; i < parts.size(); ++i)
    if (std::isfinite(f[i].value))
      for (int j = 0; j < bits; ++j)
        if (covers[i] >> j & 1) byLow[j].push_back(static_cast<int>(i));
  const uint32_t full = bits == 32 ? ~0u : (1u << bits) - 1;
  std::vector<LD> dp(size_t{full} + 1, std::numeric_limits<LD>::infinity());
  std::vector<int> how(size_t{full} + 1, -1);
  std::vector<uint32_t> from(size_t{full} + 1, 0);
  dp[0] = 0;
  for (uint32_t mask = 0; mask < full; ++mask) {
    if (!std::isfinite(static_cast<double>(dp[mask]))) continue;
    const int low = __builtin_ctz(~mask);
    for (int i : byLow[low]) {
      const uint32_t nm = mask | covers[i];
      const LD v = dp[mask] + f[i].value;
      if (v < dp[nm]) {
        dp[nm] = v;
        how[nm] = i;
        from[nm] = mask;
      }
    }
  }
  if (!std::isfinite(static_cast<double>(dp[full]))) return false;
  bg.method = BoundMethod::Cover;
  bg.parts = static_cast<long>(parts.size());
  bg.value = static_cast<double>(dp[full]);
  for (uint32_t mask = full; mask && how[mask] >= 0; mask = from[mask]) {
    const int i = how[mask];
    std::vector<OpId> recomputed = opsOf(parts[i] & ~covers[i]);
    std::sort(recomputed.begin(), recomputed.end());
    bg.cover.push_back({opsOf(parts[i]), f[i], std::move(recomputed)});
  }
  return true;
}

// The floor of a group of ops that every subgraph of theirs stays inside: its cheapest cover
// when the group is small enough (and time remains) and every part can be enumerated, else its
// "floors".
BoundGroup Ruler::groupBound(const std::vector<OpId>& ops) {
  BoundGroup bg;
  bg.ops = ops;
  const int n = static_cast<int>(ops.size());
  bool covered = false;
  if (n <= bo_.max_cover_ops && bo_.args.on(BoundArg::Cover) && !(bo_.give_up && bo_.give_up())) {
    std::vector<uint32_t> parts;
    if (connectedParts(ops, parts)) covered = cheapestCover(ops, parts, bg);
  }
  if (!covered) {
    bg.method = BoundMethod::Floors;
    bg.value = static_cast<double>(floors(ops));
  }
  return bg;
}

// The thetas a component is cut at: infinity (no cut), and for a component too large for the
// exact cover the distinct edge floors, at most 9 of them (1 once give_up fires).
std::vector<LD> Ruler::thetasOf(const std::vector<OpId>& ops) const {
  std::vector<LD> thetas = {std::numeric_limits<LD>::infinity()};
  if (static_cast<int>(ops.size()) > bo_.max_cover_ops)
    for (OpId o : ops)
      for (const auto& e : adj_[o])
        if (e.second > 0) thetas.push_back(e.second);
  std::sort(thetas.begin(), thetas.end());
  thetas.erase(std::unique(thetas.begin(), thetas.end()), thetas.end());
  // Any choice of thetas is sound; a few spread over the range keep large graphs linear.
  if (thetas.size() > 9 || (bo_.give_up && bo_.give_up() && thetas.size() > 1)) {
    std::vector<LD> few;
    const size_t want = bo_.give_up && bo_.give_up() ? 1 : 9;
    for (size_t i = 0; i < want; ++i)
      few.push_back(thetas[thetas.size() - 1 - i * (thetas.size() - 1) / std::max<size_t>(1, want - 1)]);
    std::sort(few.begin(), few.end());
    few.erase(std::unique(few.begin(), few.end()), few.end());
    thetas = few;
  }
  return thetas;
}

// The component's floor when the edges with a floor >= th are cut: min(sum of its groups'
// floors, th). Groups are priced once (groupCache).
BoundComponent Ruler::cutAt(const std::vector<OpId>& ops, LD th, std::map<std::vector<OpId>, BoundGroup>& groupCache) {
  theta_ = th;
  for (OpId o : ops) sub_[o] = o;
  for (OpId o : ops)
    for (const auto& e : adj_[o])
      if (linked(e)) sub_[findRoot(sub_, o)] = findRoot(sub_, e.first);
  std::map<int, std::vector<OpId>> groups;
  for (OpId o : ops) groups[findRoot(sub_, o)].push_back(o);
  BoundComponent bc;
  bc.ops = ops;
  LD sum = 0;
  for (auto& [root, g] : groups) {
    auto it = groupCache.find(g);
    if (it == groupCache.end()) it = groupCache.emplace(g, groupBound(g)).first;
    bc.groups.push_back(it->second);
    sum += it->second.value;
  }
  bc.edge_floor = static_cast<double>(th);
  bc.value = static_cast<double>(std::min(sum, th));
  return bc;
}

// Step 4, per component: the best of its cuts.
// A component small enough for the exact cover is one group (the cover prices every part
// with a floored edge directly). A larger one is split by cutting the edges whose floor is
// at least theta: either no subgraph keeps a cut edge inside (each then lies in one group,
// the groups' floors add up) or one does and pays at least the least cut floor. Every theta
// among the edge floors is tried; the best is kept.
BoundComponent Ruler::componentBound(const std::vector<OpId>& ops,
                                     std::map<std::vector<OpId>, BoundGroup>& groupCache) {
  BoundComponent best;
  best.value = -1;
  for (LD th : thetasOf(ops)) {
    BoundComponent bc = cutAt(ops, th, groupCache);
    if (bc.value > best.value) best = std::move(bc);
  }
  return best;
}

// Step 5: every component's floor (one pass, under prices_), summed. With `previous` (the first
// pass's components, in the same order), a component none of whose ops makes or reads a priced
// tensor (touched[op] == 0) is taken from it as it was.
LD Ruler::componentsBound(std::vector<BoundComponent>& out, const std::vector<BoundComponent>* previous,
                          const std::vector<char>* touched) {
  LD total = 0;
  std::map<std::vector<OpId>, BoundGroup> groupCache;
  out.clear();
  for (int r = 0; r < no_; ++r) {
    if (members_[r].empty()) continue;
    const size_t i = out.size();
    bool reuse = previous != nullptr;
    for (OpId o : members_[r]) reuse = reuse && !(*touched)[o];
    BoundComponent best = reuse ? (*previous)[i] : componentBound(members_[r], groupCache);
    total += best.value;
    out.push_back(std::move(best));
  }
  return total;
}

// Step 5b: the share bound (bound_shares.cpp) of every component the exact cover did not price;
// returns the total with each such component at the larger of its floor and its shares.
LD Ruler::sharesOf(std::vector<BoundComponent>& components) const {
  using Clock = std::chrono::steady_clock;
  LD total = 0;
  for (BoundComponent& c : components) {
    const bool cover = c.groups.size() == 1 && c.groups[0].method == BoundMethod::Cover;
    if (!cover && bo_.args.on(BoundArg::Shares) && !(bo_.give_up && bo_.give_up())) {
      const auto t = Clock::now();
      const bound_detail::ShareBound sb = bound_detail::shareBound(p_, m_, c.ops, adj_, opCompute_, mayFeedMatMul_,
                                                                   bo_.give_up, bo_.share_parts, bo_.args);
      c.shares = static_cast<double>(sb.value);
      c.closed_ops = sb.closed;
      c.pressure_inputs = sb.pressure_inputs;
      c.joint_ops = sb.joint_ops;
      c.store_ops = sb.store_ops;
      c.op_shares.assign(sb.op_shares.begin(), sb.op_shares.end());
      c.shares_s = std::chrono::duration<double>(Clock::now() - t).count();
    }
    total += std::max<LD>(c.value, c.shares);
  }
  return total;
}

// Step 7: the cover's linear relaxation (bound_lp.cpp) for each group of 21 to 64 ops that has
// only its floors, last so that it never takes the time of the steps above. A component's value
// stays min(sum of its groups, edge floor) with the raised groups (or its shares, if larger); the
// groups hold their subgraphs whatever edges link their ops, so the parts are grown along all of
// them. Returns how much the total rose. (A component that step 6 re-priced is never one of
// these: prices go to tensors of exact covers only.)
LD Ruler::relaxedCovers(std::vector<BoundComponent>& components) {
  LD rise = 0;
  for (BoundComponent& c : components) {
    bool raised = false;
    for (BoundGroup& g : c.groups) {
      const int n = static_cast<int>(g.ops.size());
      if (g.method != BoundMethod::Floors || (n <= bo_.max_cover_ops && bo_.args.on(BoundArg::Cover)) || n > 64 ||
          !bo_.args.on(BoundArg::Lp) || (bo_.give_up && bo_.give_up()))
        continue;
      const bound_detail::LpCover lp = bound_detail::lpCover(p_, m_, g.ops, neighbours<uint64_t>(g.ops, false),
                                                             opCompute_, bo_.lp_parts, bo_.give_up, bo_.args);
      if (!lp.done || !(static_cast<double>(lp.value) > g.value)) continue;
      g.method = BoundMethod::Lp;
      g.value = static_cast<double>(lp.value);
      g.parts = lp.parts;
      for (const auto& part : lp.cover)
        g.cover.push_back({part.ops, partFloor(p_, m_, part.ops, nullptr, bo_.args),
                           bo_.args.on(BoundArg::ForcedOps) ? forcedOps(p_, part.ops) : std::vector<OpId>{},
                           part.weight});
      raised = true;
    }
    if (!raised) continue;
    LD sum = 0;
    for (const BoundGroup& g : c.groups) sum += static_cast<LD>(g.value);
    const LD value = std::min(sum, static_cast<LD>(c.edge_floor));
    if (value > static_cast<LD>(c.value)) {
      rise += value - static_cast<LD>(c.value);
      c.value = static_cast<double>(value);
      c.by_shares = false;
    }
  }
  return rise;
}

// Step 6: tie the two sides of retention (bound.h, RetentionPrices). For any prices >= 0 the
// bound stays a lower bound; this looks for good ones by subgradient steps from 0: a tensor the
// covers keep in more often than out gets dearer, one kept out more often cheaper (a first move
// of |t| / B, then per tensor twice its last while the subgradient keeps its sign and half of it
// when it turns: keeping a tensor in can be worth several of its loads), for at most kTieSteps
// passes and at most half the first pass's work (or kTieParts parts), keeping the best total. Prices go only to tensors
// whose producer and consumers all lie in components priced by one exact cover: there every part's price is the minimum
// over its choices of floor + prices, so the cover is a lower bound on the subgraphs' floors plus their price terms,
// whose sum is <= 0 in every schedule. (A component priced by "floors" or an edge floor ignores the terms: right for
// the +price of a tensor kept in, which only lowers it, but it could not answer for the -price of
// one kept out.) A pass in which the time runs out (a component's method changes) is dropped.
// So is a pass in which some part's priced floor is below 0 (issue 50: the cover counts each op's
// first run only, which is below the schedule's whole sum only when every other run pays >= 0;
// a part keeping its output out for a later one earned the price on each of its runs), and the
// prices that part earns are halved.
int Ruler::tieRetention(std::vector<BoundComponent>& components, LD& total) {
  constexpr int kTieSteps = 12;
  constexpr long kTieParts = 600;  // parts the priced passes may price in any case
  if (!bo_.args.on(BoundArg::RetentionPrices)) return 0;
  std::vector<int> g = bound_detail::keptBalance(p_, components);
  std::vector<char> exact(no_, 0), touched(no_, 0);
  for (const BoundComponent& c : components)
    for (OpId o : c.ops) exact[o] = c.groups.size() == 1 && c.groups[0].method == BoundMethod::Cover;
  std::vector<TensorId> eligible;
  for (int t = 0; t < p_.numTensors(); ++t) {
    const OpId pr = p_.producer[t];
    if (pr < 0 || !retainable(p_, t) || !exact[pr]) continue;
    bool all = true;
    for (OpId c : p_.consumers[t]) all = all && exact[c];
    if (!all) continue;
    eligible.push_back(t);
    touched[pr] = 1;
    for (OpId c : p_.consumers[t]) touched[c] = 1;
  }
  if (eligible.empty()) return 0;
  const std::vector<BoundComponent> first = components;
  prices_.assign(p_.numTensors(), 0);
  // Work budget: the priced passes together price at most half as many parts as the first pass
  // did (deterministic, unlike a clock, so seeded runs stay reproducible).
  const long budget = partsPriced_ + std::max<long>(partsPriced_ / 2, kTieParts);
  long lastStep = 0;
  int passes = 0;
  std::vector<double> stride(p_.numTensors(), 0);  // per tensor: its last move (signed)
  for (int step = 0; step < kTieSteps && !(bo_.give_up && bo_.give_up()); ++step) {
    if (partsPriced_ + lastStep > budget) break;
    const long before = partsPriced_;
    bool moved = false;
    for (TensorId t : eligible) {
      if (g[t] == 0) continue;
      const double unit = static_cast<double>(p_.size(t)) / static_cast<double>(p_.bandwidth);
      // The move doubles while the subgradient keeps its sign and halves when it turns.
      const double last = stride[t], dir = g[t] > 0 ? 1.0 : -1.0;
      const double size = last == 0 ? unit : (last * dir > 0 ? 2 * std::abs(last) : std::abs(last) / 2);
      const double next = std::max(0.0, prices_[t] + dir * size * std::abs(g[t]));
      stride[t] = dir * size;
      moved = moved || next != prices_[t];
      prices_[t] = next;
    }
    if (!moved) break;  // a zero subgradient: these prices are the best
    std::vector<BoundComponent> pass;
    negativeOut_.clear();
    const LD passTotal = componentsBound(pass, &first, &touched);
    ++passes;
    lastStep = partsPriced_ - before;
    if (!negativeOut_.empty()) {  // a part below 0 (cheapestCover): not a bound; halve those prices
      for (TensorId t : negativeOut_) {
        prices_[t] /= 2;
        stride[t] = -std::abs(stride[t]) / 2;
      }
      continue;
    }
    bool sameMethods = true;
    for (size_t i = 0; sameMethods && i < pass.size(); ++i)
      sameMethods = pass[i].groups.size() == first[i].groups.size() &&
                    (pass[i].groups.size() != 1 || pass[i].groups[0].method == first[i].groups[0].method);
    if (!sameMethods) break;
    g = bound_detail::keptBalance(p_, pass);
    if (passTotal > total) {
      total = passTotal;
      components = std::move(pass);
    }
  }
  prices_.clear();
  return passes;
}

}  // namespace

double LowerBound::value() const { return std::max({compute, traffic, parts}); }

bool meetsBound(double latency, double bound) { return bound > 0 && latency <= bound * (1 + 1e-9); }

LowerBound lowerBound(const Problem& p, const ModelOptions& m, const BoundOptions& bo) { return Ruler(p, m, bo).run(); }

}  // namespace mlsys
