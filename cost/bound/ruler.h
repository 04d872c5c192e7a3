// The combination of the bound's arguments (internal to cost/bound): Ruler runs lowerBound step by
// step. Its steps live with their arguments: the global floors (global_floors.cpp), the edge
// floors (edge_floors.cpp), the exact cover (cover.cpp), the fusion components and their cuts
// (ruler.cpp), the retention prices (retention_prices.cpp), the share bound per component
// (ruler.cpp, calling shares.cpp) and the linear relaxation per group (lp_relaxation.cpp).
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/bound/internal.h"

namespace mlsys::bound_detail {

// The root of x in a union-find forest, halving the path on the way.
inline int findRoot(std::vector<int>& uf, int x) {
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
    publish(std::max(lb.compute, lb.traffic));
    buildComponents();
    quickFloors();
    lb.timing.floors_s = since(t);
    t = Clock::now();
    LD total = componentsBound(lb.components, nullptr, nullptr, true);
    lb.timing.components_s = since(t);
    if (stopNow()) return ended(lb, total);
    t = Clock::now();
    std::vector<size_t> deferred;  // large components' upstream-joint pricings, done last
    LD withShares = sharesOf(lb.components, deferred);
    publish(static_cast<double>(std::max(total, withShares) * (1 - 1e-12L)));
    lb.timing.shares_s = since(t);
    if (stopNow()) return ended(lb, total);
    // The share branch whole, before the priced passes: the components raised by their shares,
    // step 7's linear relaxations, the deferred upstream-joint pricings and step 9, the large
    // components' relaxations, each published as it ends. None of it depends on the prices, and
    // on large graphs the passes take seconds and add little (random-n5000: 2.4 s for 15,500 of
    // 2.38e9), while a run's bound has a few seconds: there its later steps now land in them.
    // The branch's figures are kept for the end, so the final value is never below pricing first's.
    t = Clock::now();
    std::vector<BoundComponent> view = lb.components;  // the share branch
    for (BoundComponent& c : view)
      if (c.shares > c.value) {
        c.value = c.shares;
        c.by_shares = true;
      }
    LD viewTotal = withShares + relaxedCovers(view);
    publish(static_cast<double>(viewTotal * (1 - 1e-12L)));
    lb.timing.lp_s = since(t);
    if (!deferred.empty()) {
      t = Clock::now();
      viewTotal += lateShares(view, deferred);
      publish(static_cast<double>(viewTotal * (1 - 1e-12L)));
      lb.timing.shares_s += since(t);
    }
    const LD viewTotalBeforeLarge = viewTotal;
    t = Clock::now();
    if (!stopNow()) viewTotal += largeCovers(view, viewTotal);
    lb.timing.lp_s += since(t);
    if (stopNow()) {
      if (viewTotal > total) {
        total = viewTotal;
        lb.components = std::move(view);
      }
      return ended(lb, total);
    }
    t = Clock::now();
    lb.timing.price_passes = tieRetention(lb.components, total);
    lb.timing.prices_s = since(t);
    // The share bounds hold without prices: the share branch (the unpriced floors raised by them),
    // or the priced total, whichever is larger (each is a lower bound alone).
    auto takeView = [&] {
      total = viewTotal;
      lb.components = std::move(view);
    };
    if (withShares > total) {
      takeView();
    } else {
      publish(static_cast<double>(total * (1 - 1e-12L)));
      t = Clock::now();
      total += relaxedCovers(lb.components);
      lb.timing.lp_s += since(t);
      // The priced total won: the share branch where larger, before step 9 (with deferred
      // pricings, as before this order) or after step 9 on both.
      if (!deferred.empty() && viewTotalBeforeLarge > total) {
        takeView();
      } else {
        publish(static_cast<double>(total * (1 - 1e-12L)));
        t = Clock::now();
        if (!stopNow()) total += largeCovers(lb.components, total);
        lb.timing.lp_s += since(t);
        if (viewTotal > total) takeView();
      }
    }
    // Each component at least its quick floors (a bound alone, published first).
    total = std::max(total, publishedParts_);
    // Floating point: the parts are long double sums of exact-rational floors; the evaluator sums
    // doubles. Rounding down by 1e-12 relative keeps the bound below a schedule that equals it.
    lb.parts = static_cast<double>(total * (1 - 1e-12L));
    publish(lb.value());
    return lb;
  }

 private:
  bool stopNow() const { return bo_.stop_now && bo_.stop_now(); }
  // The caller is ending (BoundOptions::stop_now): the components as they stand, each at least
  // its quick floors.
  LowerBound ended(LowerBound& lb, LD total) {
    lb.parts = static_cast<double>(std::max(total, publishedParts_) * (1 - 1e-12L));
    publish(lb.value());
    return std::move(lb);
  }
  // The anytime bound (BoundOptions::on_value): each value proven so far, when it rises.
  void publish(double v) {
    if (bo_.on_value && v > published_) {
      published_ = v;
      bo_.on_value(v);
    }
  }
  // Every component's quick floors (its ops' compute and its unretainable traffic), published as
  // the first bound of the parts; the first pass then replaces them one component at a time.
  void quickFloors();
  double published_ = 0;
  LD publishedParts_ = 0;  // the parts' running total published by the first pass
  std::vector<LD> quick_;  // per component root: its quick floors

  i64 nativeTiles(TensorId t) const { return bound_detail::nativeTiles(p_, t); }
  // Whether edge e links its ops at the current theta (edges with a floor >= theta are cut).
  bool linked(const std::pair<OpId, LD>& e) const { return !(e.second > 0 && e.second >= theta_); }

  LD computeFloor();
  LD trafficFloor() const;
  LD edgeFloor(OpId q, OpId c, TensorId t) const;
  void buildComponents();
  LD floors(const std::vector<OpId>& ops);
  bool connectedParts(const std::vector<OpId>& ops, std::vector<uint32_t>& parts);
  // Calls f(i, j) for each edge from ops[i] to ops[j] inside the group: along the edges linked at
  // the current theta (linkedOnly), or along all of them.
  template <class F>
  void forEachNeighbour(const std::vector<OpId>& ops, bool linkedOnly, F f) {
    const int n = static_cast<int>(ops.size());
    for (int i = 0; i < n; ++i) idx_[ops[i]] = i;
    for (int i = 0; i < n; ++i)
      for (const auto& e : adj_[ops[i]])
        if (idx_[e.first] >= 0 && (!linkedOnly || linked(e))) f(i, idx_[e.first]);
    for (int i = 0; i < n; ++i) idx_[ops[i]] = -1;
  }
  // Per op of a group (bit j: ops[j]), its neighbours in the group (forEachNeighbour).
  template <class Mask>
  std::vector<Mask> neighbours(const std::vector<OpId>& ops, bool linkedOnly) {
    std::vector<Mask> nb(ops.size(), 0);
    forEachNeighbour(ops, linkedOnly, [&nb](int i, int j) { nb[i] |= Mask{1} << j; });
    return nb;
  }
  // The same as lists of local indices, along every edge (groups of any size).
  std::vector<std::vector<int32_t>> neighbourLists(const std::vector<OpId>& ops) {
    std::vector<std::vector<int32_t>> nb(ops.size());
    forEachNeighbour(ops, false, [&nb](int i, int j) { nb[i].push_back(j); });
    return nb;
  }
  bool cheapestCover(const std::vector<OpId>& ops, const std::vector<uint32_t>& parts, BoundGroup& bg) const;
  BoundGroup groupBound(const std::vector<OpId>& ops);
  // The group's linear relaxation (lp_relaxation.cpp): `up` is the group priced by it when that is
  // above g's value (else empty); false when it did not finish (time, or too many parts).
  bool lpRaise(const BoundGroup& g, std::optional<BoundGroup>& up);
  std::vector<LD> thetasOf(const std::vector<OpId>& ops) const;
  BoundComponent cutAt(const std::vector<OpId>& ops, LD th, std::map<std::vector<OpId>, BoundGroup>& groupCache);
  BoundComponent componentBound(const std::vector<OpId>& ops, std::map<std::vector<OpId>, BoundGroup>& groupCache);
  LD componentsBound(std::vector<BoundComponent>& out, const std::vector<BoundComponent>* previous = nullptr,
                     const std::vector<char>* touched = nullptr, bool publishing = false);
  int tieRetention(std::vector<BoundComponent>& components, LD& total);
  LD sharesOf(std::vector<BoundComponent>& components, std::vector<size_t>& deferred) const;
  bound_detail::ShareBound componentShares(const BoundComponent& c, bool upstream, bound_detail::ShareMemo& memo) const;
  static void keepShares(BoundComponent& c, const bound_detail::ShareBound& sb, double seconds);
  LD lateShares(std::vector<BoundComponent>& components, const std::vector<size_t>& deferred) const;
  LD relaxedCovers(std::vector<BoundComponent>& components);
  LD largeCovers(std::vector<BoundComponent>& components, LD total);

  const Problem& p_;
  const ModelOptions& m_;
  const BoundOptions& bo_;
  const i64 N_;
  const int no_;
  std::vector<LD> opCompute_;        // each op's compute floor
  std::vector<char> plainEligible_;  // joint floors' ops: !OpComputeFloor::may_feed_matmul
  std::vector<char> jointEligible_;  // with upstream-joint: !OpComputeFloor::feeds_matmul_accumulating
  std::vector<LD> upstreamCompute_;  // compute floor when upstream (inf: never; computeFloor)
  std::vector<LD> noUpstream_;       // all inf
  std::vector<bound_detail::UpstreamReads> upstreamReads_;  // upstream-reloads (computeFloor)
  std::vector<std::vector<std::pair<OpId, LD>>> adj_;       // fusable neighbours, edge floor
  std::vector<std::vector<OpId>> members_;                  // per component root: its ops, topological
  LD theta_ = std::numeric_limits<LD>::infinity();          // edges with a floor >= theta are cut
  std::vector<char> inGroup_;                               // scratch: members of the group being priced
  std::vector<char> tensorMark_;                            // scratch: tensors counted
  std::vector<int> idx_;                                    // scratch: position in the group being covered
  std::vector<int> sub_;                                    // scratch: union-find inside one component
  RetentionPrices prices_;                                  // empty, or a priced pass's (tieRetention)
  // relaxedCovers' results per group (its ops): the raised group, or none when the relaxation was
  // done and did not raise it; priced once, before the priced passes, and read at step 7.
  std::map<std::vector<OpId>, std::optional<BoundGroup>> lpGroups_;
  mutable std::vector<TensorId> negativeOut_;  // kept by a part whose priced floor fell below 0
  mutable long partsPriced_ = 0;               // partFloor calls so far (the priced passes' budget)
};

}  // namespace mlsys::bound_detail
