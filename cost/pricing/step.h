// One step of a subgraph (internal to cost/): the slices it needs and its price. The walk
// (walk.cpp) calls it for every step, the step classes (step_classes.cpp) for one
// representative step per class; both sum what it returns.
//
// A step (tile r,c; k-step j) needs every slice template of the plan at that step's intervals
// (E3; identical slices count once). A slice is loaded unless the previous step of the same
// subgraph needed the identical slice or the full tensor (L3). Its working set is the distinct
// slices plus the tile of every written output and split-K accumulator plus the retained
// tensors (W1). Its latency is max(compute, load + store) (L1, L4, L5), kept as the exact
// numerator max(c*B, m*D) over the plan's denominator D*B.
#pragma once
#include <algorithm>
#include <functional>
#include <vector>

#include "cost/pricing/subgraph.h"

namespace mlsys::step {

// The exact sum of step prices num_i / den (den = D * B), kept as a whole part and a remainder
// below den, so that a sum whose value fits 128 bits never overflows because of its denominator
// (B = 2^40 with K = 2^24 gives den = 2^64: num alone would leave 128 bits at 2^64 latency).
// finish() reduces the sum to lowest terms; `overflow` only where that reduced fraction does not
// fit (then the subgraph is refused with Rule::Range, never priced approximately).
class LatencySum {
 public:
  explicit LatencySum(i128 den) : den_(den) {}
  // Adds `cnt` steps of price v / den (v >= 0, cnt >= 0).
  void add(i128 v, i64 cnt) {
    const i128 q = v / den_;
    const u128 r = static_cast<u128>(v % den_), d = static_cast<u128>(den_);
    u128 rc;
    i128 qc;
    if (__builtin_mul_overflow(r, static_cast<u128>(cnt), &rc) || __builtin_mul_overflow(q, i128{cnt}, &qc) ||
        __builtin_add_overflow(whole_, qc, &whole_) ||
        __builtin_add_overflow(whole_, static_cast<i128>(rc / d), &whole_)) {
      overflow_ = true;
      return;
    }
    rem_ += rc % d;
    if (rem_ >= d) {
      rem_ -= d;
      if (__builtin_add_overflow(whole_, i128{1}, &whole_)) overflow_ = true;
    }
  }
  // Writes the sum to sc.num / sc.den in lowest terms (sc.overflow when it does not fit).
  void finish(SubgraphCost& sc) const {
    const i128 rem = static_cast<i128>(rem_);
    const i128 g = rem == 0 ? den_ : gcd128(rem, den_);
    sc.den = den_ / g;
    if (overflow_ || __builtin_mul_overflow(whole_, sc.den, &sc.num) ||
        __builtin_add_overflow(sc.num, rem / g, &sc.num))
      sc.overflow = true;
  }

 private:
  i128 den_;
  i128 whole_ = 0;
  u128 rem_ = 0;
  bool overflow_ = false;
};

struct Iv {
  i64 lo, hi;
  i64 len() const { return hi - lo; }
  bool operator==(const Iv&) const = default;
};

struct StepIdx {
  i64 r, c, j;
};

struct Slice {
  TensorId t;
  Iv rows, cols;
  bool full;
  bool dup;
};

class StepPricer {
 public:
  StepPricer(const Problem& p, const SubgraphPlan& pl) : p_(p), pl_(pl) {
    // Templates grouped by tensor: slices of different tensors never coincide, so identity and
    // residency checks compare only within a group.
    const size_t n = pl.slices.size();
    group_.assign(n, {});
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        if (pl.slices[i].t == pl.slices[j].t) group_[i].push_back(static_cast<int>(j));
  }

  // The interval of kind `e` at step s (E1 tile rows/columns, E2 k-strip, or the whole axis).
  Iv iv(Ext e, bool rowAxis, TensorId t, const StepIdx& s) const {
    const auto& g = pl_.g;
    switch (e) {
      case Ext::Rho: return {s.r * g.h, std::min((s.r + 1) * g.h, pl_.H)};
      case Ext::Gamma: return {s.c * g.w, std::min((s.c + 1) * g.w, pl_.W)};
      case Ext::Kappa: return {s.j * g.k, std::min((s.j + 1) * g.k, pl_.Kacc)};
      case Ext::Full: return {0, rowAxis ? p_.heights[t] : p_.widths[t]};
    }
    return {0, 0};
  }

  // The slice of every template at step s (index = template); `dup` marks a slice identical to
  // an earlier template's in the same step (identical slices count once, E3).
  void slicesAt(const StepIdx& s, std::vector<Slice>& out) const {
    const size_t n = pl_.slices.size();
    out.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const SliceTpl& st = pl_.slices[i];
      Slice& sl = out[i];
      sl.t = st.t;
      sl.rows = iv(st.rk, true, st.t, s);
      sl.cols = iv(st.ck, false, st.t, s);
      sl.full = sl.rows.lo == 0 && sl.rows.hi == p_.heights[st.t] && sl.cols.lo == 0 && sl.cols.hi == p_.widths[st.t];
      sl.dup = false;
      for (int j : group_[i]) {
        if (static_cast<size_t>(j) >= i) break;
        if (out[j].rows == sl.rows && out[j].cols == sl.cols) {
          sl.dup = true;
          break;
        }
      }
    }
  }

  // how many distinct regions of an op's output (SubgraphPlan::regions) step s needs.
  i64 distinctRegions(const SubgraphPlan::OpRegions& o, const StepIdx& s) const {
    i64 d = 0;
    for (size_t a = 0; a < o.regions.size(); ++a) {
      const auto& x = o.regions[a];
      const Iv r = iv(x.rk, true, x.t, s), c = iv(x.ck, false, x.t, s);
      bool seen = false;
      for (size_t b = 0; b < a && !seen; ++b) {
        const auto& y = o.regions[b];
        seen = iv(y.rk, true, y.t, s) == r && iv(y.ck, false, y.t, s) == c;
      }
      d += seen ? 0 : 1;
    }
    return d;
  }

  struct Result {
    i128 num;
    i64 ws;
    bool compute_bound;
  };

  // Prices step `cur`, given the slices of the previous step of this subgraph (empty at the first).
  Result price(const StepIdx& cur, const std::vector<Slice>& curSl, const std::vector<Slice>& prevSl) const {
    const bool last = cur.j == pl_.nk - 1;
    i64 load = 0, ws = 0;
    for (size_t i = 0; i < curSl.size(); ++i) {
      const Slice& s = curSl[i];
      if (s.dup) continue;
      i64 sz = s.rows.len() * s.cols.len();
      ws += sz;
      bool resident = false;
      if (!prevSl.empty())
        for (int j : group_[i]) {
          const Slice& q = prevSl[j];
          if (q.full || (q.rows == s.rows && q.cols == s.cols)) {
            resident = true;
            break;
          }
        }
      if (!resident) load += sz;
    }
    Iv rho = iv(Ext::Rho, true, 0, cur), gam = iv(Ext::Gamma, false, 0, cur);
    i64 tile = rho.len() * gam.len();
    ws += pl_.ws_const + tile * (pl_.n_store + (pl_.nk > 1 ? pl_.n_acc : 0));
    i64 store = last ? tile * pl_.n_store : 0;
    i64 mm = pl_.mm_coef, pw = pl_.pw_every + (last ? pl_.pw_last : 0);
    for (const SubgraphPlan::OpRegions& o : pl_.regions)
      if (o.every || last) (o.matmul ? mm : pw) += o.cost * (distinctRegions(o, cur) - o.counted);
    i128 kap = mm ? iv(Ext::Kappa, true, 0, cur).len() : 0;
    i128 compute = static_cast<i128>(mm) * kap + static_cast<i128>(pw) * pl_.D;
    i128 c = compute * p_.bandwidth;
    i128 m = static_cast<i128>(load + store) * pl_.D;
    return {std::max(c, m), ws, c >= m};
  }

 private:
  const Problem& p_;
  const SubgraphPlan& pl_;
  std::vector<std::vector<int>> group_;
};

// Every step in the tile order `order` (the oracle). Fills num, peak_ws and the bound counts.
// `stop` (when set) is polled about every 4,096 steps: then interrupted (no price).
SubgraphCost walkSteps(const Problem& p, const SubgraphPlan& pl, const std::vector<int32_t>& order,
                       const std::function<bool()>& stop = {});

// One representative step per step class times the class size (exact when pl.fast_ok).
SubgraphCost classSteps(const Problem& p, const SubgraphPlan& pl, const Traversal& trav);

}  // namespace mlsys::step
