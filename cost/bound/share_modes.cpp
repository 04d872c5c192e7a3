// The shares' mixtures of compute and loads (internal.h, bestShareTotal; the share bound
// itself is argued at the top of shares.cpp).
//
// A subgraph S of open ops pays, at its one granularity g, latency(S) >= max(compute(S),
// traffic(S) / B) >= lambda compute(S) + (1 - lambda) traffic(S) / B for any lambda in [0, 1], and
// lambda may depend on g: the subgraph has one granularity, so all its ops see the same lambda.
// Open ops are priced per *class*: joint MatMuls (joint_floors.cpp) that may share a valid subgraph
// are in one class (mayShareSubgraph, forced_shapes.cpp: two joint ops in different classes never
// meet in a valid S), and each class takes its own mode:
// - a constant lambda in 0, 1/10, ..., 1: a joint op's share is the least over its frontier of
//   lambda x compute + (1 - lambda) x (loads + attributed loads) / B;
// - *max* (a class whose joint ops all have one frontier, so one point means one granularity for
//   all of them): lambda(g) = 1 where the class's first op computes at least what it loads at g,
//   else 0; each op's share is the least over the frontier of compute or loads, whichever that
//   rule picks, which for the first op is the least of max(compute, loads);
// - *step* (one frontier too): the m ops of the class in S compute and load alike in every step
//   (the same tiles, traversal and band sizes; claimed tensors are nobody else's), so S pays at
//   least m times the frontier's step floor (joint_floors.cpp), attributed loads left out; the
//   Pointwise ops that may meet the class then take what S pays beyond that for their compute
//   (besideStepShare, joint_floors.cpp), the other open ops nothing.
// A joint op that may be upstream in some S (upstream-joint, shares.cpp) takes the least of its
// mode's value and, for the S where it is upstream (then it is not one of the class's accumulating
// ops, and S is beside one of the classes it may meet there, or none), its mixture of its
// upstream compute and loads at the free lambda and at each such class's lambda (both ends for a
// max class; 0 beside a class in step mode, which pays its class ops and Pointwise ops only); its
// class has no step mode (its ops would not all compute alike step by step).
// Ops that are not joint (their compute floor and attributed loads do not depend on g) take the
// least of their mixture over the lambdas of the classes they may meet (a max class uses 0 and 1)
// and of a free lambda common to all of them, and of their share beside a class in step mode:
// in any S they are at most their mixture at the lambda of the joint ops beside them, or at the
// free lambda if there are none (their compute floor there: besideCompute, beside.cpp).
// Beside a class in a constant-lambda or max mode, a Pointwise that forces a joint op of it to
// nk = 1 (besideFed) adds that op's excess at nk = 1 over its share: the op's own mixture at its
// granularity is at least its least over the nk = 1 classes, and nobody else claims the
// difference but the Pointwise ops that make its operands, among which it is split. Closed ops
// then take their least part floor minus the others' shares. The modes are chosen by coordinate
// ascent on the total from the best single constant lambda (which is the bound without classes),
// so the total never falls.
#include <algorithm>
#include <limits>
#include <set>

#include "cost/bound/internal.h"

namespace mlsys::bound_detail {

namespace {

constexpr int kLambdaSteps = 10;             // lambda in 0, 1/10, ..., 1
constexpr int kMaxMode = kLambdaSteps + 1;   // the mode index of "max"
constexpr int kStepMode = kLambdaSteps + 2;  // the mode index of "step"
constexpr int kAscentPasses = 2;
constexpr long kMaxAscentWork = 50'000'000;  // op visits of the coordinate ascent

LD lambdaOf(int mode) { return static_cast<LD>(mode) / kLambdaSteps; }

}  // namespace

LD bestShareTotal(const SharePricing& sp, std::vector<LD>* shares) {
  const std::vector<OpId>& ops = sp.ops;
  const int numClasses = static_cast<int>(sp.class_single_kind.size());
  const LD inf = std::numeric_limits<LD>::infinity();
  // Per open op and mode, its share (joint ops; the others depend on the set of lambdas in use).
  // value1: the same at nk = 1 only (points_one), for the ops that force it (sp.fed).
  std::vector<std::array<LD, kStepMode + 1>> value(sp.open.size()), value1(sp.open.size());
  for (OpId o : ops) {
    if (!sp.open[o] || sp.joint_class[o] < 0) continue;
    const OpId ref = sp.class_first[sp.joint_class[o]];
    value[o][kStepMode] = value1[o][kStepMode] = sp.joint[o]->step_floor;
    for (auto [front, out] :
         {std::pair{&sp.joint[o]->points, &value[o]}, std::pair{&sp.joint[o]->points_one, &value1[o]}})
      for (int mode = 0; mode <= kMaxMode; ++mode) {
        LD least = inf;
        for (const JointPoint& x : *front) {
          const LD loads = (x.loads + sp.traffic[o]) / sp.B;
          if (mode == kMaxMode)
            least = std::min(least, x.compute >= (x.loads + sp.traffic[ref]) / sp.B ? x.compute : loads);
          else least = std::min(least, lambdaOf(mode) * x.compute + (1 - lambdaOf(mode)) * loads);
        }
        (*out)[mode] = least;
      }
  }
  // What a Pointwise beside class c at a mode other than step adds: the least over the joint ops
  // it forces to nk = 1 of their excess there, split among the Pointwise ops that make their
  // operands (0 when it forces none).
  auto forcedExcess = [&](OpId x, size_t i, int mode) {
    if (sp.fed[x][i].empty()) return LD(0);
    LD least = inf;
    for (const auto& [o, makers] : sp.fed[x][i])
      least = std::min(least, (value1[o][mode] - value[o][mode]) / static_cast<LD>(std::max(1, makers)));
    return std::max<LD>(0, least);
  };
  // modes[c] for each class, and modes[numClasses] the lambda of the others when no class
  // constrains them (a constant).
  long work = 0;
  auto total = [&](const std::vector<int>& modes, std::vector<LD>* out = nullptr) {
    sp.poll();
    std::vector<LD> y(sp.open.size(), 0);
    for (OpId o : ops) {
      if (!sp.open[o]) continue;
      if (sp.joint_class[o] >= 0) {
        y[o] = value[o][modes[sp.joint_class[o]]];
        if (sp.upstreamCapable(o)) {  // at most its mixture where it is upstream, in each context there
          auto up = [&](int l) { return lambdaOf(l) * sp.up_compute[o] + (1 - lambdaOf(l)) * sp.up_loads[o]; };
          LD cap = up(modes[numClasses]);
          for (int c : sp.up_meets[o])
            cap = std::min(cap, modes[c] == kStepMode  ? LD(0)
                                : modes[c] == kMaxMode ? std::min(up(0), up(kLambdaSteps))
                                                       : up(modes[c]));
          y[o] = std::min(y[o], cap);
          work += static_cast<long>(sp.up_meets[o].size());
        }
        continue;
      }
      auto mix = [&](int l, LD compute, LD loads) {
        return lambdaOf(l) * compute + (1 - lambdaOf(l)) * (sp.traffic[o] + loads) / sp.B;
      };
      LD least = mix(modes[numClasses], sp.free_compute[o], sp.free_loads[o]);
      for (size_t i = 0; i < sp.meets[o].size(); ++i) {
        const int c = sp.meets[o][i];
        const LD cx = sp.meets_compute[o][i], lx = sp.meets_loads[o][i];
        if (modes[c] == kStepMode) least = std::min(least, sp.beside_step[o][i]);
        else if (modes[c] == kMaxMode)
          least = std::min(least, std::min(mix(0, cx, lx), mix(kLambdaSteps, cx, lx)) + forcedExcess(o, i, kMaxMode));
        else least = std::min(least, mix(modes[c], cx, lx) + forcedExcess(o, i, modes[c]));
      }
      work += static_cast<long>(sp.meets[o].size());
      y[o] = least;
    }
    for (OpId o : ops) {  // topological order
      if (sp.open[o]) continue;
      LD least = inf;
      for (const auto& [floor, S] : sp.parts[o]) {
        if (!(floor < inf)) continue;  // never valid
        LD v = floor;
        for (OpId x : S)
          if (x != o) v -= y[x];
        least = std::min(least, v);
        work += static_cast<long>(S.size());
      }
      y[o] = least < inf ? std::max<LD>(0, least) : 0;
    }
    work += static_cast<long>(ops.size());
    LD sum = 0;
    for (OpId o : ops) sum += y[o];
    if (out) *out = std::move(y);
    return sum;
  };
  std::vector<int> best(numClasses + 1, 0);
  LD bestValue = -inf;
  for (int mode = 0; mode <= kLambdaSteps; ++mode) {
    std::vector<int> modes(numClasses + 1, mode);
    const LD v = total(modes);
    if (v > bestValue) bestValue = v, best = modes;
  }
  for (int pass = 0; pass < kAscentPasses && numClasses > 0; ++pass) {
    bool improved = false;
    for (int c = 0; c <= numClasses && work <= kMaxAscentWork; ++c) {
      std::vector<int> modes = best;
      const int last =
          c < numClasses && sp.class_single_kind[c] ? (sp.class_step[c] ? kStepMode : kMaxMode) : kLambdaSteps;
      for (int mode = 0; mode <= last; ++mode) {
        if (mode == best[c]) continue;
        modes[c] = mode;
        const LD v = total(modes);
        if (v > bestValue) bestValue = v, best = modes, improved = true;
      }
    }
    if (!improved) break;
  }
  if (shares) {
    std::vector<LD> y;
    total(best, &y);
    shares->clear();
    for (OpId o : ops) shares->push_back(y[o]);
  }
  return std::max<LD>(0, bestValue);
}

}  // namespace mlsys::bound_detail
