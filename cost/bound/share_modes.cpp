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
// - *split* (step-mixtures): latency(S) >= sum over steps of lambda_j compute_j + (1 - lambda_j)
//   transfer_j with lambda_j = lambda_k in the k-steps before each tile's last (0 or 1) and
//   lambda_last in the last. A joint op of the class at nk > 1 computes base_cost |k_j| / D and
//   loads its claimed strips (h + w) |k_j| (the sides nobody shares) in step j, so a fraction f =
//   |k_last| / K <= f_max (jointFrontier) of both falls in the last step: its share is the least
//   over the nk > 1 points and f in {0, f_max} (the mixture is linear in f) of (1 - f) mix(lambda_k)
//   + f mix(lambda_last), plus its shared sides' and attributed loads at 1 - max(lambda_k,
//   lambda_last) (they may fall in any step), and over the nk = 1 points (every step a last one)
//   of mix(lambda_last). Beside the class a Pointwise that no valid S carries to a MatMul
//   (last_only) computes in the last k-step only: lambda_last x its compute; any other op
//   min(lambda_k, lambda_last); every op's loads 1 - max(lambda_k, lambda_last). An upstream op's
//   cap takes the same weakest weights. Split modes are also tried as starts, every class with
//   nk > 1 points at once and the others at lambda_last: a Pointwise beside several classes rises
//   only when all of them move.
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
// Beside a class in a constant-lambda, max or split mode, a Pointwise that forces a joint op of it to
// nk = 1 (besideFed) adds that op's excess at nk = 1 over its share: the op's own mixture at its
// granularity is at least its least over the nk = 1 classes (every step a last one), and nobody else claims the
// difference but the Pointwise ops that make its operands, among which it is split. Closed ops
// then take their least part floor minus the others' shares. The modes are chosen by coordinate
// ascent on the total from the best single constant lambda (which is the bound without classes)
// or split start, so the total never falls. A trial of the ascent reprices only the ops that the
// changed mode reaches, and the closed ops (any modes give a valid total, so the ascent's choices
// need no proof); the value returned is the whole total of the modes it ends at.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include "cost/bound/internal.h"

namespace mlsys::bound_detail {

namespace {

constexpr int kLambdaSteps = 10;             // lambda in 0, 1/10, ..., 1
constexpr int kMaxMode = kLambdaSteps + 1;   // the mode index of "max"
constexpr int kStepMode = kLambdaSteps + 2;  // the mode index of "step"
// step-mixtures: kSplitMode + s, s < 2 (kLambdaSteps + 1): lambda_k = s / (kLambdaSteps + 1) (0 or 1)
// in the k-steps before a tile's last, lambda_last = s % (kLambdaSteps + 1) / kLambdaSteps in the last.
constexpr int kSplitMode = kStepMode + 1;
constexpr int kModes = kSplitMode + 2 * (kLambdaSteps + 1);
constexpr int kAscentPasses = 2;
constexpr long kMaxAscentWork = 50'000'000;  // op visits of the coordinate ascent
constexpr long kMinSplitWork = 1'000'000;    // op visits the split modes' ascent may take at least

LD lambdaOf(int mode) { return static_cast<LD>(mode) / kLambdaSteps; }
bool isSplit(int mode) { return mode >= kSplitMode; }
// The lambdas of a constant or split mode: {before the last k-step, in it}.
std::pair<LD, LD> lambdasOf(int mode) {
  if (!isSplit(mode)) return {lambdaOf(mode), lambdaOf(mode)};
  const int s = mode - kSplitMode;
  return {static_cast<LD>(s / (kLambdaSteps + 1)), lambdaOf(s % (kLambdaSteps + 1))};
}

// epilogue-tiles (joint_floors.cpp): at a constant lambda each op's share weighs its own point
// alone, so it may be the least over its nk = 1 points, its points with its output written (and
// its store) and those with it ephemeral. (Max mode has one point's rule for its class, so it does
// not take them; nor the step and split modes, whose points are the plain ones.)
LD epilogueValue(const SharePricing& sp, OpId o, LD lambda) {
  const JointFrontier& f = *sp.joint[o];
  LD least = std::numeric_limits<LD>::infinity();
  auto take = [&](const std::vector<JointPoint>& points, LD more) {
    for (const JointPoint& x : points)
      least = std::min(least, lambda * x.compute + (1 - lambda) * (x.loads + more + sp.traffic[o]) / sp.B);
  };
  take(f.points_one, 0);
  take(f.points_written, sp.written_store[o]);
  take(f.points_ephemeral, 0);
  return least;
}

// Per joint op and mode, its share (value), and the same over its nk = 1 points only (value1);
// classSplits: the classes with a joint op with nk > 1 points (those may take split modes).
void jointValues(const SharePricing& sp, std::vector<std::array<LD, kModes>>& value,
                 std::vector<std::array<LD, kModes>>& value1, std::vector<char>& classSplits) {
  const LD inf = std::numeric_limits<LD>::infinity();
  for (OpId o : sp.ops) {
    if (!sp.open[o] || sp.joint_class[o] < 0) continue;
    const OpId ref = sp.class_first[sp.joint_class[o]];
    const JointFrontier& f = *sp.joint[o];
    value[o][kStepMode] = value1[o][kStepMode] = f.step_floor;
    if (sp.split_modes && !f.points_k.empty()) classSplits[sp.joint_class[o]] = 1;
    for (int mode = kSplitMode; mode < kModes; ++mode) {
      const auto [lk, ll] = lambdasOf(mode);
      auto mix = [&](LD l, LD compute, LD loads) { return l * compute + (1 - l) * loads / sp.B; };
      LD least = inf;
      for (const JointPoint& x : f.points_k)
        for (LD last : {LD(0), f.f_max})
          least = std::min(least, (1 - last) * mix(lk, x.compute, x.loads) + last * mix(ll, x.compute, x.loads));
      least += (1 - std::max(lk, ll)) * (f.any_loads + sp.traffic[o]) / sp.B;
      LD one = inf;
      for (const JointPoint& x : f.points_one) one = std::min(one, mix(ll, x.compute, x.loads + sp.traffic[o]));
      value[o][mode] = std::min(least, one);
      value1[o][mode] = one;
    }
    for (auto [front, out] :
         {std::pair{&sp.joint[o]->points, &value[o]}, std::pair{&sp.joint[o]->points_one, &value1[o]}})
      for (int mode = 0; mode <= kMaxMode; ++mode) {
        LD least = inf;
        if (front == &f.points && mode < kMaxMode && !sp.written_store.empty() && sp.written_store[o] >= 0) {
          (*out)[mode] = epilogueValue(sp, o, lambdaOf(mode));
          continue;
        }
        for (const JointPoint& x : *front) {
          const LD loads = (x.loads + sp.traffic[o]) / sp.B;
          if (mode == kMaxMode)
            least = std::min(least, x.compute >= (x.loads + sp.traffic[ref]) / sp.B ? x.compute : loads);
          else least = std::min(least, lambdaOf(mode) * x.compute + (1 - lambdaOf(mode)) * loads);
        }
        (*out)[mode] = least;
      }
  }
}

// A joint op's cap where it may be upstream (modes: the classes', then the free lambda): its
// mixture of its upstream compute and loads at the free lambda and at each class it may meet there.
LD upstreamCap(const SharePricing& sp, OpId o, const std::vector<int>& modes) {
  auto up = [&](int l) {
    const auto [lk, ll] = lambdasOf(l);  // its compute and loads in any k-step
    return std::min(lk, ll) * sp.up_compute[o] + (1 - std::max(lk, ll)) * sp.up_loads[o];
  };
  LD cap = up(modes.back());
  for (int c : sp.up_meets[o])
    cap = std::min(cap, modes[c] == kStepMode  ? LD(0)
                        : modes[c] == kMaxMode ? std::min(up(0), up(kLambdaSteps))
                                               : up(modes[c]));
  return cap;
}

// The closed ops' shares, in topological order: their least part floor less the others' shares.
// First the open ops of each listed part are brought within its floor: an open op's share is
// argued for subgraphs of open ops (shares.cpp), and some of its premises (an operand made by a
// closed op is loaded: claimSide) fail where a closed op shares S with it, so a listed part could
// otherwise hold more open shares than its floor, which no closed share (>= 0) can make up (the
// soundness test, seed 1000478 under k_limit=reduction: {0, 1} with op 0 closed and op 1's joint
// floor, its LHS counted as loaded, 45,982 against the part's 40,775). Scaling shares down never
// breaks another constraint (every S pays at least the shares it held before), so one pass holds.
// `closed`: the component's closed ops, in topological order.
void closedShares(const SharePricing& sp, const std::vector<OpId>& closed, std::vector<LD>& y, long& work) {
  const LD inf = std::numeric_limits<LD>::infinity();
  for (OpId o : closed) {
    for (const auto& [floor, S] : sp.parts[o]) {
      if (!(floor < inf)) continue;
      LD open = 0;
      for (OpId x : S) open += sp.open[x] ? y[x] : 0;
      work += static_cast<long>(S.size());
      if (open <= floor) continue;
      const LD scale = floor > 0 ? floor / open : 0;
      for (OpId x : S)
        if (sp.open[x]) y[x] *= scale;
    }
  }
  for (OpId o : closed) {
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
}

// What a Pointwise x beside its i-th class at a mode other than step adds: the least over the
// joint ops it forces to nk = 1 of their excess there, split among the Pointwise ops that make
// their operands (0 when it forces none).
LD fedExcess(const SharePricing& sp, const std::vector<std::array<LD, kModes>>& value,
             const std::vector<std::array<LD, kModes>>& value1, OpId x, size_t i, int mode) {
  if (sp.fed[x][i].empty()) return LD(0);
  LD least = std::numeric_limits<LD>::infinity();
  for (const auto& [o, makers] : sp.fed[x][i])
    least = std::min(least, (value1[o][mode] - value[o][mode]) / static_cast<LD>(std::max(1, makers)));
  return std::max<LD>(0, least);
}

// The total of the shares at any modes (modes[c] for each class c, and modes[numClasses] the
// lambda of the others when no class constrains them: a constant): whole (total), or as a trial
// that changes one class's mode against the modes it stands at (moveTo). A trial reprices only
// what the change reaches: deps[c], the open ops whose share reads modes[c], then the closed ops'
// pass over `touched` (the open ops in their listed parts, whose shares that pass may scale) and
// the closed ops; the rest of the total stays in `outside_`. A trial's value equals total()'s but
// for the order of its sums. `work` counts op visits.
class ShareTotals {
 public:
  explicit ShareTotals(const SharePricing& sp)
      : sp_(sp),
        numClasses(static_cast<int>(sp.class_single_kind.size())),
        value_(sp.open.size()),
        value1_(sp.open.size()),
        classSplits(numClasses, 0),
        deps_(numClasses + 1),
        touched_(sp.open.size(), 0),
        y_(sp.open.size(), 0),
        scratch_(sp.open.size(), 0) {
    jointValues(sp, value_, value1_, classSplits);
    auto dependsOn = [&](int c, OpId o) {
      if (deps_[c].empty() || deps_[c].back() != o) deps_[c].push_back(o);
    };
    for (OpId o : sp.ops) {
      if (!sp.open[o]) {
        closed_.push_back(o);
        continue;
      }
      if (sp.joint_class[o] >= 0) {
        dependsOn(sp.joint_class[o], o);
        if (!sp.upstreamCapable(o)) continue;
        for (int c : sp.up_meets[o]) dependsOn(c, o);
      } else {
        for (int c : sp.meets[o]) dependsOn(c, o);
      }
      dependsOn(numClasses, o);
    }
    for (OpId o : closed_)
      for (const auto& part : sp.parts[o])
        for (OpId x : part.second)
          if (sp.open[x] && !touched_[x]) touched_[x] = 1, touchedOps_.push_back(x);
  }

  LD total(const std::vector<int>& modes, std::vector<LD>* out = nullptr) {
    sp_.poll();
    std::vector<LD> y(sp_.open.size(), 0);
    for (OpId o : sp_.ops)
      if (sp_.open[o]) y[o] = openShare(o, modes);
    closedShares(sp_, closed_, y, work);
    work += static_cast<long>(sp_.ops.size());
    LD sum = 0;
    for (OpId o : sp_.ops) sum += y[o];
    if (out) *out = std::move(y);
    return sum;
  }

  void moveTo(const std::vector<int>& modes) {
    modes_ = modes;
    outside_ = 0;
    for (OpId o : sp_.ops)
      if (sp_.open[o]) {
        y_[o] = openShare(o, modes);
        if (!touched_[o]) outside_ += y_[o];
      }
    work += static_cast<long>(sp_.ops.size());
  }

  LD trial(int c, int mode) {
    sp_.poll();
    const int was = modes_[c];
    modes_[c] = mode;
    LD outside = outside_;
    for (OpId x : touchedOps_) scratch_[x] = y_[x];
    for (OpId o : closed_) scratch_[o] = 0;
    for (OpId o : deps_[c]) {
      const LD v = openShare(o, modes_);
      if (touched_[o]) scratch_[o] = v;
      else outside += v - y_[o];
    }
    closedShares(sp_, closed_, scratch_, work);
    LD sum = outside;
    for (OpId x : touchedOps_) sum += scratch_[x];
    for (OpId o : closed_) sum += scratch_[o];
    work += static_cast<long>(deps_[c].size() + touchedOps_.size() + closed_.size());
    if (sp_.check_trials) {
      const LD whole = total(modes_);
      if (fabsl(whole - sum) > 1e-12L * std::max<LD>(1, fabsl(whole)))
        throw std::logic_error("share ascent: class " + std::to_string(c) + " mode " + std::to_string(mode) +
                               ": the trial prices " + std::to_string(static_cast<double>(sum)) + ", the whole total " +
                               std::to_string(static_cast<double>(whole)));
    }
    modes_[c] = was;
    return sum;
  }

 private:
  // One open op's share at `modes`, before the closed ops' pass.
  LD openShare(OpId o, const std::vector<int>& modes) {
    const SharePricing& sp = sp_;
    if (sp.joint_class[o] >= 0) {
      LD v = value_[o][modes[sp.joint_class[o]]];
      if (sp.upstreamCapable(o)) {  // at most its mixture where it is upstream, in each context there
        v = std::min(v, upstreamCap(sp, o, modes));
        work += static_cast<long>(sp.up_meets[o].size());
      }
      return v;
    }
    auto mix = [&](int l, LD compute, LD loads) {  // a split mode: loads in any k-step, compute too
      const auto [lk, ll] = lambdasOf(l);          // unless o computes in the last one only
      return (sp.last_only[o] ? ll : std::min(lk, ll)) * compute +
             (1 - std::max(lk, ll)) * (sp.traffic[o] + loads) / sp.B;
    };
    auto forcedExcess = [&](size_t i, int mode) { return fedExcess(sp, value_, value1_, o, i, mode); };
    LD least = mix(modes[numClasses], sp.free_compute[o], sp.free_loads[o]);
    for (size_t i = 0; i < sp.meets[o].size(); ++i) {
      const int c = sp.meets[o][i];
      const LD cx = sp.meets_compute[o][i], lx = sp.meets_loads[o][i];
      if (modes[c] == kStepMode) least = std::min(least, sp.beside_step[o][i]);
      else if (modes[c] == kMaxMode)
        least = std::min(least, std::min(mix(0, cx, lx), mix(kLambdaSteps, cx, lx)) + forcedExcess(i, kMaxMode));
      else least = std::min(least, mix(modes[c], cx, lx) + forcedExcess(i, modes[c]));
    }
    work += static_cast<long>(sp.meets[o].size());
    return least;
  }

  const SharePricing& sp_;

 public:
  const int numClasses;
  long work = 0;

 private:
  // Per open op and mode, its share (joint ops; the others depend on the set of lambdas in use).
  // value1: the same at nk = 1 only (points_one), for the ops that force it (sp.fed).
  std::vector<std::array<LD, kModes>> value_, value1_;

 public:
  std::vector<char> classSplits;  // the class has a joint op with nk > 1 points

 private:
  std::vector<std::vector<OpId>> deps_;
  std::vector<OpId> closed_;  // in topological order
  std::vector<char> touched_;
  std::vector<OpId> touchedOps_;
  std::vector<int> modes_;  // where the trials stand (moveTo)
  std::vector<LD> y_;       // the open shares there, before the closed ops' pass
  LD outside_ = 0;          // their sum over the open ops not touched
  std::vector<LD> scratch_;
};

}  // namespace

LD bestShareTotal(const SharePricing& sp, std::vector<LD>* shares) {
  const LD inf = std::numeric_limits<LD>::infinity();
  ShareTotals st(sp);
  const int numClasses = st.numClasses;
  const std::vector<char>& classSplits = st.classSplits;
  long& work = st.work;
  auto total = [&](const std::vector<int>& modes, std::vector<LD>* out = nullptr) { return st.total(modes, out); };
  // Coordinate ascent from `from`, one class's mode at a time, until `limit` work; split modes
  // only when `split`.
  auto ascend = [&](std::vector<int>& from, LD& reached, bool split, long limit) {
    if (numClasses == 0) return;
    st.moveTo(from);
    for (int pass = 0; pass < kAscentPasses; ++pass) {
      bool improved = false;
      for (int c = 0; c <= numClasses && work <= limit; ++c) {
        const int last =
            c < numClasses && sp.class_single_kind[c] ? (sp.class_step[c] ? kStepMode : kMaxMode) : kLambdaSteps;
        for (int mode = 0; mode < kModes; ++mode) {
          if (mode == from[c] || (mode > last && !(split && isSplit(mode) && c < numClasses && classSplits[c])))
            continue;
          const LD v = st.trial(c, mode);
          if (v > reached) {
            reached = v, from[c] = mode, improved = true;
            st.moveTo(from);
          }
        }
      }
      if (!improved) break;
    }
  };
  std::vector<int> best(numClasses + 1, 0);
  LD bestValue = -inf;
  for (int mode = 0; mode <= kLambdaSteps; ++mode) {
    std::vector<int> modes(numClasses + 1, mode);
    const LD v = total(modes);
    if (v > bestValue) bestValue = v, best = modes;
  }
  ascend(best, bestValue, false, kMaxAscentWork);
  // step-mixtures, within three times that work (at least kMinSplitWork, at most a fifth of the
  // ascent's limit: with split modes a pass tries 35 modes a class, not 13; when every trial was
  // priced whole, random-n5000's 1,908-op component spent the whole limit on the first ascent,
  // and a second as long, 7 s, gave nothing there): the split modes as starts (an op beside several
  // classes rises only when all of them and the free lambda move together, which the ascent, one
  // class at a time, never sees), every class that has them at once and the others at
  // lambda_last; from the best of them, then from the first ascent's end, the ascent with split
  // modes (each may end higher: transformer-n0200 rose only from the starts).
  if (std::find(classSplits.begin(), classSplits.end(), 1) != classSplits.end()) {
    const long limit = work + std::min(kMaxAscentWork / 5, std::max(3 * work, kMinSplitWork));
    std::vector<int> start;
    LD startValue = -inf;
    for (int mode = kSplitMode; mode < kModes; ++mode) {
      std::vector<int> modes(numClasses + 1, (mode - kSplitMode) % (kLambdaSteps + 1));
      for (int c = 0; c < numClasses; ++c)
        if (classSplits[c]) modes[c] = mode;
      const LD v = total(modes);
      if (v > startValue) startValue = v, start = modes;
    }
    std::vector<int> again = best;  // and the first ascent's end, split modes allowed
    LD againValue = bestValue;
    ascend(start, startValue, true, limit);
    ascend(again, againValue, true, limit);
    for (auto [modes, reached] : {std::pair{&start, startValue}, std::pair{&again, againValue}})
      if (reached > bestValue) bestValue = reached, best = *modes;
  }
  if (sp.forced_split >= 0) {  // test seam (BoundArgs::step_mixtures_forced): this split mode where it applies
    for (int c = 0; c < numClasses; ++c)
      if (classSplits[c]) best[c] = kSplitMode + sp.forced_split;
  }
  std::vector<LD> y;
  bestValue = total(best, &y);  // the trials' sums, in total()'s order
  if (shares) {
    shares->clear();
    for (OpId o : sp.ops) shares->push_back(y[o]);
  }
  return std::max<LD>(0, bestValue);
}

}  // namespace mlsys::bound_detail
