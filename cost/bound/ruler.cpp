// The bound's skeleton (bound.h, lowerBound): the global floors, the fusion components, each
// component's floor from its groups, the share bound, the priced passes, the linear relaxations.
//
// Fusion components: a subgraph's ops are linked by tensors made and read inside it (V4); an edge
// no valid subgraph keeps inside (a Pointwise making the operand of a MatMul with K > N: V9,
// compute_floor.cpp's fusableEdge) links nothing, so every subgraph lies in one component of the
// remaining edges, and the bound is the sum over components of what each one's subgraphs pay at
// least (and at least the global floors). Cuts: cutting the edges whose edge floor is at least
// theta splits a component into groups; either no subgraph keeps a cut edge inside (each lies in
// one group: the groups' floors add up) or one does and pays at least theta: so min(sum of the
// groups, theta) is a floor, for every theta; the best of a few is kept.
#include "cost/bound/ruler.h"

#include <algorithm>

namespace mlsys::bound_detail {

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
    if (stopNow()) {  // the caller is ending: not a value (componentsBound takes the quick floors)
      bc.value = -1;
      return bc;
    }
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
                          const std::vector<char>* touched, bool publishing) {
  LD total = 0;
  std::map<std::vector<OpId>, BoundGroup> groupCache;
  out.clear();
  LD running = 0;  // (publishing) the components done at the larger of both figures, the rest at their quick floors
  for (int r = 0; r < no_; ++r)
    if (!members_[r].empty()) running += quick_[r];
  for (int r = 0; r < no_; ++r) {
    if (members_[r].empty()) continue;
    const size_t i = out.size();
    bool reuse = previous != nullptr;
    for (OpId o : members_[r]) reuse = reuse && !(*touched)[o];
    BoundComponent best;
    if (reuse) best = (*previous)[i];
    else if (!stopNow()) best = componentBound(members_[r], groupCache);
    // The caller is ending (before or during it): the component at its quick floors.
    if (!reuse && (best.ops.empty() || best.value < static_cast<double>(quick_[r])) && stopNow()) {
      best = BoundComponent{};
      best.ops = members_[r], best.value = static_cast<double>(quick_[r]);
    }
    total += best.value;
    if (publishing) {
      running += std::max<LD>(0, static_cast<LD>(best.value) - quick_[r]);
      publishedParts_ = running;
      publish(static_cast<double>(running * (1 - 1e-12L)));
    }
    out.push_back(std::move(best));
  }
  return total;
}

void Ruler::quickFloors() {
  quick_.assign(no_, 0);
  LD total = 0;
  for (int r = 0; r < no_; ++r)
    if (!members_[r].empty()) total += quick_[r] = floors(members_[r]);
  publishedParts_ = total;
  publish(static_cast<double>(total * (1 - 1e-12L)));
}

// Step 5b: the share bound (shares.cpp) of every component the exact cover did not price;
// returns the total with each such component at the larger of its floor and its shares.
// upstream-joint: more joint ops, but the classes and contexts change with them, so the total may
// fall; each is a bound, the larger counts (only when some op is new to it). A component of more
// than kUpstreamLarge ops, where a pricing takes seconds, is priced again only when at least a
// tenth of its ops are new (random-n5000's 1,908-op component, with 7%, took 7 s more for nothing;
// mixer-n5000's 3,997, with 25%, rose by half), and then later (lateShares, into `deferred`), after
// the relaxations and before step 9 (Ruler::run): with split-joint random-n5000's took 1.4 s more,
// and in a 30 s run (7.5 s for the bound beside two workers) the steps after it no longer ended.
LD Ruler::sharesOf(std::vector<BoundComponent>& components, std::vector<size_t>& deferred) const {
  using Clock = std::chrono::steady_clock;
  constexpr size_t kUpstreamLarge = 1000;
  LD total = 0;
  deferred.clear();
  for (size_t i = 0; i < components.size(); ++i) {
    BoundComponent& c = components[i];
    const bool cover = c.groups.size() == 1 && c.groups[0].method == BoundMethod::Cover;
    if (!cover && bo_.args.on(BoundArg::Shares) && !(bo_.give_up && bo_.give_up())) {
      const auto t = Clock::now();
      bound_detail::ShareMemo memo;  // frontiers and step shares, priced once for both
      const bool alone = bo_.args.upstream_joint_alone && bo_.args.on(BoundArg::UpstreamJoint);
      const auto fresh = static_cast<size_t>(
          std::count_if(c.ops.begin(), c.ops.end(), [&](OpId o) { return jointEligible_[o] && !plainEligible_[o]; }));
      const bool large = c.ops.size() > kUpstreamLarge;
      const bool worth = fresh > 0 && (!large || 10 * fresh >= c.ops.size());
      bound_detail::ShareBound sb = alone ? bound_detail::ShareBound{} : componentShares(c, false, memo);
      if (bo_.args.on(BoundArg::UpstreamJoint) && (alone || worth)) {
        if (large && !alone) {
          deferred.push_back(i);
        } else {
          bound_detail::ShareBound up = componentShares(c, true, memo);
          if (alone || up.value > sb.value) sb = std::move(up);
        }
      }
      keepShares(c, sb, std::chrono::duration<double>(Clock::now() - t).count());
    }
    total += std::max<LD>(c.value, c.shares);
  }
  return total;
}

bound_detail::ShareBound Ruler::componentShares(const BoundComponent& c, bool upstream,
                                                bound_detail::ShareMemo& memo) const {
  return bound_detail::shareBound(p_, m_, c.ops, adj_, opCompute_, upstream ? jointEligible_ : plainEligible_,
                                  upstream ? upstreamCompute_ : noUpstream_, upstreamReads_, plainEligible_,
                                  bo_.give_up, bo_.share_parts, memo, bo_.args);
}

void Ruler::keepShares(BoundComponent& c, const bound_detail::ShareBound& sb, double seconds) {
  c.shares = static_cast<double>(sb.value);
  c.closed_ops = sb.closed;
  c.pressure_inputs = sb.pressure_inputs;
  c.joint_ops = sb.joint_ops;
  c.store_ops = sb.store_ops;
  c.op_shares.assign(sb.op_shares.begin(), sb.op_shares.end());
  c.shares_s += seconds;
}

// The deferred upstream-joint pricings (sharesOf), on components whose total is the sum of their
// values (run(): the share branch's, or the unpriced view beside a priced total; never priced
// values, which are not bounds alone): each raises its component to its shares where larger, which
// the sum then holds (each component's value is a bound of it alone). Returns the rise.
LD Ruler::lateShares(std::vector<BoundComponent>& components, const std::vector<size_t>& deferred) const {
  using Clock = std::chrono::steady_clock;
  LD rise = 0;
  for (size_t i : deferred) {
    if (bo_.give_up && bo_.give_up()) break;
    BoundComponent& c = components[i];
    const auto t = Clock::now();
    bound_detail::ShareMemo memo;
    const bound_detail::ShareBound up = componentShares(c, true, memo);
    const double seconds = std::chrono::duration<double>(Clock::now() - t).count();
    if (up.value > static_cast<LD>(c.value)) {
      rise += up.value - static_cast<LD>(c.value);
      c.value = static_cast<double>(up.value);
      c.by_shares = true;
      keepShares(c, up, seconds);
    } else {
      c.shares_s += seconds;
    }
  }
  return rise;
}

}  // namespace mlsys::bound_detail

namespace mlsys {

double LowerBound::value() const { return std::max({compute, traffic, parts}); }

bool meetsBound(double latency, double bound) { return bound > 0 && latency <= bound * (1 + 1e-9); }

LowerBound lowerBound(const Problem& p, const ModelOptions& m, const BoundOptions& bo) {
  return bound_detail::Ruler(p, m, bo).run();
}

}  // namespace mlsys
