// The cost of one subgraph: the single place in the code that defines it (spec sections 3-6).
//
// planSubgraph() analyses a subgraph once for a given op list, granularity and retained-in /
// retained-out sets: it checks the subgraph-local validity rules (V3, V4, V6, V7 retention,
// V8, V9, E2, A-6) and reduces the step semantics of E3/W1/L3-L5 to a small "plan": the slice
// templates each step loads (a tensor plus, per axis, which interval of the step it covers),
// the compute coefficients and the per-tile store. costSubgraph() then prices the plan either
// by walking every step (the oracle) or by evaluating one representative step per step class
// (first tile, same row, row change, first/middle/last k-step, edge tiles) and multiplying by
// the class size. Exact: within a class the slices reloaded and their sizes are identical.
// Files: plan.cpp (planSubgraph, one function per rule group), step.h (one step's slices and
// price), walk.cpp (the walk), step_classes.cpp (the classes), subgraph.cpp (costSubgraph).
//
// Latencies are exact rationals: a subgraph with denominator D (K of its accumulating MatMul,
// N under native_depth, 1 without MatMul) has step latencies max(c/D, m/B) = max(c*B, m*D)/(D*B).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cost/model/model.h"
#include "cost/model/rule.h"
#include "cost/model/schedule.h"

namespace mlsys {

// Which interval of the current step an axis of a slice covers.
enum class Ext : uint8_t {
  Rho,    // rows of the output tile  [r*h, min((r+1)h, H))
  Gamma,  // cols of the output tile  [c*w, min((c+1)w, W))
  Kappa,  // current k-strip          [j*k, min((j+1)k, K_acc))
  Full    // the whole axis of the tensor
};

struct SliceTpl {
  TensorId t;
  Ext rk, ck;  // row interval kind, column interval kind
  bool operator==(const SliceTpl&) const = default;
};

struct SubgraphPlan {
  bool valid = true;
  Rule rule = Rule::None;
  std::string reason;  // precise, names ops/tensors/numbers
  std::vector<std::string> warnings;

  Granularity g;
  i64 W = 0, H = 0;              // grid tensor shape (all non-ephemeral outputs share it)
  i64 ntw = 0, nth = 0;          // tiles across, down
  i64 nk = 1, Kacc = 0;          // k-steps per tile, reduction length of the accumulating MatMul(s)
  i64 D = 1;                     // compute denominator
  std::vector<SliceTpl> slices;  // boundary-input slices loaded each step (not retained-in)
  // Compute (L5, A-14: an op runs once per distinct region of its output needed in a step). The
  // coefficients count, per op, the regions that are distinct in every step (all of them when no
  // two of its needed regions can coincide in some steps and differ in others); `regions` lists
  // the ops whose regions coincide in some steps only, priced step by step (step.h).
  i64 mm_coef = 0;   // sum of MatMul base costs: per-step compute numerator mm_coef*|k_j|
  i64 pw_every = 0;  // Pointwise base costs charged every k-step (k-strip prologues)
  i64 pw_last = 0;   // Pointwise base costs charged once per tile, in the last k-step
  struct Region {
    TensorId t;  // the op's output (its axis lengths for Full)
    Ext rk, ck;
  };
  struct OpRegions {
    i64 cost = 0;                 // the op's base cost
    bool matmul = false;          // x |k_j| / D per region (MatMul), else x 1 per region (Pointwise)
    bool every = false;           // charged in every k-step (MatMul, k-strip Pointwise), else in the last one
    i64 counted = 0;              // regions already in the coefficients above
    std::vector<Region> regions;  // its needed regions in that phase (two or more, some may coincide)
  };
  std::vector<OpRegions> regions;
  // Every op with two or more kinds of regions in a phase (whatever their relation here), with
  // `counted` its count in the coefficients at this granularity: at another granularity the same
  // op set may count fewer (regions that differ here may coincide there).
  std::vector<OpRegions> multi_regions;
  // The coefficients with each op of multi_regions counted once per phase: the least compute of
  // these ops at any granularity (an op runs at least once per step of its phase).
  struct Coefs {
    i64 mm = 0, every = 0, last = 0;
  };
  Coefs leastCoefs() const {
    Coefs c{mm_coef, pw_every, pw_last};
    for (const OpRegions& o : multi_regions) (o.matmul ? c.mm : o.every ? c.every : c.last) -= o.cost * (o.counted - 1);
    return c;
  }
  i64 n_store = 0;                        // outputs written per tile (non-retained O(S))
  i64 n_acc = 0;                          // ephemeral split-K accumulators (counted when nk > 1)
  i64 ws_const = 0;                       // sum |t| over retained-in and retained-out tensors
  bool fast_ok = true;                    // step classes are exact: no two slice templates of a tensor, nor two
                                          // regions of an op, coincide in some steps and differ in others
  std::vector<TensorId> written;          // O(S) minus retained-out: land in slow memory
  std::vector<TensorId> boundary_inputs;  // consumed, not produced in S (sorted, unique)
  std::vector<TensorId> produced;         // P(S) (sorted, unique)

  i64 tiles() const { return ntw * nth; }
  i64 steps() const {  // saturating: ntw * nth * nk can exceed 64 bits on absurd inputs
    i128 s = static_cast<i128>(ntw) * nth * nk;
    return s > INT64_MAX ? INT64_MAX : static_cast<i64>(s);
  }
};

struct SubgraphCost {
  bool valid = true;
  Rule rule = Rule::None;
  std::string reason;
  i128 num = 0;  // latency = num / den exactly
  i128 den = 1;
  double latency = 0;
  i64 steps = 0;
  i64 peak_ws = 0;
  i64 compute_bound_steps = 0;  // compute >= load + store
  i64 memory_bound_steps = 0;
  bool fast = false;         // priced by step classes (true) or by the walk
  bool overflow = false;     // the exact sum left the 128-bit range (then valid = false, Rule::Range)
  bool interrupted = false;  // the caller's stop ended a step walk (then valid = false, Rule::Interrupted)
};

// The step walk is refused above this many steps (Rule::Range); step classes have no limit.
inline constexpr i64 kMaxWalkSteps = i64{1} << 30;

enum class CostMethod : uint8_t { Auto, Walk, Fast };

SubgraphPlan planSubgraph(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops, const Granularity& g,
                          const std::vector<TensorId>& retained_in, const std::vector<TensorId>& retained_out);

// The tensors the ops consume and do not produce (SubgraphPlan::boundary_inputs without a
// plan): sorted, unique.
std::vector<TensorId> boundaryInputs(const Problem& p, const std::vector<OpId>& ops);

// Prices a plan. Invalid plans, invalid traversals (V10) and capacity overflow (V11) give
// valid=false with the rule and reason. CostMethod::Fast/Auto fall back to the walk only where
// the classes are not exact (a tensor with two slice templates that may coincide by value).
// `stop` (when set) is polled during a step walk (about every 4,096 steps): a walk it ends gives
// valid=false with Rule::Interrupted. The step classes need no polling (a handful of steps).
SubgraphCost costSubgraph(const Problem& p, const SubgraphPlan& plan, const Traversal& trav,
                          CostMethod method = CostMethod::Auto, const std::function<bool()>& stop = {});

double toDouble(i128 num, i128 den);

}  // namespace mlsys
