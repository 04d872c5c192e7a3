// Argument "edge-floors": what a subgraph pays to keep a MatMul -> MatMul edge inside.
#include "cost/bound/ruler.h"

namespace mlsys::bound_detail {

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

}  // namespace mlsys::bound_detail
