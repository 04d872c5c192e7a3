// Argument "compute-floor" and "traffic-floor" (and a group's "floors"): what every schedule pays
// whatever its subgraphs.
//
// Compute: every op runs in at least one subgraph (V2), and each run costs base_cost per native
// tile of the grid it is charged on (L5: a Pointwise pays full base_cost per spatial tile of any
// size up to N, a MatMul base_cost per output tile over its k-steps), which has at least the
// fewest native tiles of any grid the op can be charged on (compute_floor.cpp states why).
// Traffic: every graph input is read from slow memory at least once (never produced, so never
// ephemeral, never retained: V6), every graph output written at least once (V7); transfers cost
// elements / B (L3, L4) and a subgraph pays at least its transfers / B (L1, L2).
// A group's floors: its subgraphs pay its ops' compute, and load each tensor it reads from outside
// once and store each it makes for outside once, unless retainable (then free: a relaxation).
#include <limits>

#include "cost/bound/ruler.h"

namespace mlsys::bound_detail {

// split-joint: under k_limit native, a MatMul o with K_o > N has nk = ceil(K_o / k) >= 2 in every
// S where it accumulates (K_acc = K_o, decision 2; k <= N, V8 and decision 9). A MatMul q of S
// that its output reaches through Pointwise ops (which pass regions on, E3) needs a region of it
// with a k-strip or a full reduction extent (rho x kappa, kappa x gamma, rho x [0, K), [0, K) x
// gamma), never the tile rho x gamma the accumulator holds complete only after the last k-step:
// the evaluator rejects that S (E2, plan.cpp requiredRegions). So o feeds no MatMul of any valid S
// where it accumulates, whatever MatMuls it reaches, which is what upstream-joint asks of a
// joint op (feeds_matmul_accumulating proves it only for reached MatMuls of another K).
bool splitJoint(const Problem& p, const ModelOptions& m, OpId o) {
  return p.ops[o].type == OpType::MatMul && m.k_limit == ModelOptions::KLimit::Native && p.ops[o].K > p.native;
}

LD computePerTile(const Problem& p, const ModelOptions& m, const OpComputeFloor& f, OpId o) {
  const Op& op = p.ops[o];
  LD per = static_cast<LD>(op.base_cost);
  if (op.type == OpType::MatMul && m.matmul_compute == ModelOptions::MatmulCompute::NativeDepth)
    per = per * static_cast<LD>(f.min_k[o]) / static_cast<LD>(p.native);
  return per;
}

// Step 1: the compute floor, and each op's share of it (opCompute_): base_cost per tile of the
// fewest native tiles the op can be charged on (opComputeFloor, compute_floor.cpp), x K/N for
// the least K at or downstream of a MatMul under native_depth.
LD Ruler::computeFloor() {
  const OpComputeFloor f = opComputeFloor(p_, m_);
  opCompute_.assign(no_, 0);
  plainEligible_.assign(no_, 0);
  jointEligible_.assign(no_, 0);
  upstreamCompute_.assign(no_, std::numeric_limits<LD>::infinity());
  noUpstream_ = upstreamCompute_;
  upstreamReads_.assign(no_, {});
  for (int o = 0; o < no_; ++o) {
    plainEligible_[o] = !f.may_feed_matmul[o];
    jointEligible_[o] = !f.feeds_matmul_accumulating[o] || (bo_.args.on(BoundArg::SplitJoint) && splitJoint(p_, m_, o));
    if (!f.always_accumulates[o] && f.min_tiles_upstream[o] < std::numeric_limits<i64>::max())
      upstreamCompute_[o] = static_cast<LD>(f.min_tiles_upstream[o]) * computePerTile(p_, m_, f, o);
    if (f.min_tiles_upstream[o] < std::numeric_limits<i64>::max())
      upstreamReads_[o] = {f.min_tiles_upstream[o], f.upstream_roles[o]};
  }
  if (!bo_.args.on(BoundArg::ComputeFloor)) return 0;
  LD compute = 0;
  for (int o = 0; o < no_; ++o) {
    const LD per = computePerTile(p_, m_, f, o);
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

}  // namespace mlsys::bound_detail
