// The per-op compute floor of the lower bound (bound.h, opComputeFloor) and the fusable edges it
// follows; the Ruler (ruler.cpp) and the exact solver's heuristic (engine/exact) use it.
#include <algorithm>
#include <limits>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/bound/internal.h"

namespace mlsys {

namespace bound_detail {

// V9 (decision 10): a Pointwise producing an operand of a MatMul inside one subgraph needs
// w >= K or h >= K when k < K; with w, h <= N and k <= N that is impossible when K > N. Such an
// edge never links two ops of one subgraph. Under k_limit=reduction k may equal K: no such edge.
bool fusableEdge(const Problem& p, const ModelOptions& m, OpId producer, OpId consumer) {
  if (p.ops[consumer].type != OpType::MatMul || p.ops[producer].type != OpType::Pointwise) return true;
  if (m.k_limit == ModelOptions::KLimit::Reduction) return true;
  return p.ops[consumer].K <= p.native;
}

}  // namespace bound_detail

// An op is charged per tile of its subgraph's grid, not of its own output:
// Pointwise base_cost per tile (L5, padded), every MatMul base_cost * Kacc / D per tile over its
// k-steps (L5: D = Kacc by default, N under native_depth; an upstream MatMul in a chain is
// charged per tile of the accumulating MatMul's grid, Ex 5B). The grid is the shape of O(S)
// (E1), and O(S) holds a tensor downstream of the op inside S (its own output, or, when that is
// ephemeral, the end of a consumer path inside S, which must reach O(S)); such a path uses only
// fusable edges (fusableEdge). Tiles are at most N x N (V8). So an op costs at least base_cost x
// the fewest native tiles among the tensors reachable from its outputs through fusable edges
// (itself included), and under native_depth a MatMul also x K/N for the least K among itself
// and the MatMuls downstream of it (Kacc is the K of an accumulating MatMul, which is the op
// itself or lies on its path to O(S)). Recomputation only adds compute.
//
// The path must also fit one k (V8, V9): every MatMul q on it needs k <= K_q (and k <= N
// unless k_limit=reduction), and a Pointwise producing an operand of a MatMul M on it needs
// k >= K_M when K_M > N (w, h <= N cannot reach K_M). So a path is usable only if the largest
// such K_M is at most the least K_q (and the model's cap). Under the spec that is fusableEdge;
// under k_limit=reduction it keeps, e.g., a MatMul with K = 256 from being charged on the grid
// of a MatMul with K = 512 that a Pointwise between them feeds. Per op, the Pareto set of
// (tiles at the path's end, k needed, k allowed) over its paths; min_tiles is the least usable.
//
// And the path must fit the fast memory (V11). Along it, what each op must produce per tile
// follows from E3, backwards from the end (its tile): a Pointwise passes its region on; a MatMul
// c does its full reduction when it is upstream (a MatMul lies after it on the path, so its
// output feeds one inside S: E2) or when k >= K_c is forced (a Pointwise just before it on the
// path and K_c > N: V9 under k_limit=reduction), and then needs all of its LHS's columns (all of
// its RHS's rows) in every step. An upstream MatMul q that must produce all columns of its
// output needs its RHS whole, all rows its LHS whole. A graph input needed whole is in the
// working set of every step; the path is unusable when those add up beyond the capacity (a
// tensor read by several ops counts by the largest of them, as the path may meet it twice).
// Any subgraph holding the path needs at least those regions (more consumers only add), so this
// only drops paths that no valid subgraph contains. (mlsys-2026-14 under k_limit=reduction: a
// MatMul two MatMuls upstream of the small grid would need two 512 x 512 weights whole, above
// the capacity of 400,000; it is charged on its own grid.)
// The runs of an op together (total_tiles): min_tiles bounds each run, but an op whose output t
// has several consumers is charged on a small grid only where t is ephemeral, and then its other
// consumers must be served too. Claim, for an op x run inside the runs of an op o (x = o at the
// top): some run of o that holds x has a grid of at least
//   H(x) = max(min_tiles(x), max over x's outputs u of min(T(u), max over u's consumers d of H(d)))
// native tiles, where T(u) is u's own native tiles, and the inner max is infinite when u has no
// consumer (a graph output is written: V7) or a consumer d that no subgraph holds with x
// (fusableEdge). Proof: if some run of x has u non-ephemeral (in O(S): written, or retained,
// which joins the same-shape rule too: decision 7), its grid has u's shape (E1, A-6), at least
// T(u) tiles. Otherwise u is never written nor retained, so every consumer d of u runs only in
// subgraphs that produce u (V5), i.e. in runs of x (and, by the same step one level up, of o);
// by induction the run holding d has at least H(d) tiles. Every run has at least min_tiles(x)
// (opComputeFloor's paths). The op's runs together then cover at least H(o) tiles, each charged
// base_cost per tile (L5), which may exceed what any one run needs: e.g. a residual add whose
// sum feeds a MatMul with K = 512 (charged on its 4-tile grid under k_limit=reduction, fused
// with k = K) and the next residual add (512 wide: 8 tiles) is charged 8 tiles in all.
static std::vector<i64> coveredTiles(const Problem& p, const ModelOptions& m, const std::vector<i64>& minTiles) {
  std::vector<i64> H(minTiles);
  for (auto it = p.topo.rbegin(); it != p.topo.rend(); ++it) {
    const OpId x = *it;
    for (TensorId u : p.ops[x].outputs) {
      i64 served = p.consumers[u].empty() ? std::numeric_limits<i64>::max() : 0;
      for (OpId d : p.consumers[u])
        served = bound_detail::fusableEdge(p, m, x, d) ? std::max(served, H[d]) : std::numeric_limits<i64>::max();
      H[x] = std::max(H[x], std::min(bound_detail::nativeTiles(p, u), served));
    }
  }
  return H;
}

// When a MatMul accumulates (E2, decision 1, A-15: some path from its output to O(S) inside S
// passes through Pointwise ops only), and when it is upstream.
//
// always_accumulates. Call a tensor t *forced* when every valid S that produces t has a path of
// Pointwise ops of S from t to a tensor of O(S). Claim: t is forced when every consumer d of t
// that can share a subgraph with t's producer (fusableEdge) is a Pointwise op with a forced
// output; in particular when t has no such consumer. Proof: take a valid S producing t. If no
// consumer of t is in S, t is not consumed inside S, so t is in O(S) (section 1: O(S) is P(S) less
// E(S)): the empty path. Otherwise some consumer d is in S, and d shares S with t's producer, so
// by the premise d is a Pointwise op whose output u is forced; u is produced in S, so a Pointwise
// path of S leads from u to O(S), and d before it leads from t. A MatMul whose output is forced
// accumulates in every valid S holding it. (A consumer that cannot join is never in S; a
// consumer that could join but need not is taken as joining, which can only make t unforced.)
//
// feeds_matmul_accumulating. In a valid S where a MatMul o accumulates, every accumulating
// MatMul of S has o's K (E2, decision 2: two accumulating MatMuls of different K make S
// invalid). If o's output reaches a MatMul q of S through Pointwise ops of S (or directly), the
// first such q is one of the MatMuls reached from o's output through fusable edges and Pointwise
// ops only; when each of those always accumulates and has a K other than o's, no valid S in which
// o accumulates holds such a path: o's output then feeds no MatMul of S (0). Otherwise 1 (also when
// the walk exceeds its work limit).
//
// upstream_roles. Where o is upstream in S, a path of S leads from its output through Pointwise
// ops to a MatMul of S (E2): its first MatMul is one the walk below reaches, reading the tensor
// the path ends in as its LHS or RHS; the roles of all of them (both when the walks' work limit
// stops it). The walk goes on where feeds_matmul_accumulating already holds: split-joint
// (global_floors.cpp) makes such a MatMul joint, and upstream-reloads and shared-reloads read the
// roles of every MatMul that may be upstream.
//
// min_tiles_upstream. When o is upstream in S, no Pointwise path leads from its output to O(S),
// yet every path of S from it ends in O(S) (S is finite and acyclic; a tensor consumed inside S
// has a consumer there): such a path passes a MatMul, and its end, whose shape is S's grid (E1),
// is among the path ends with a MatMul ahead that opComputeFloor lists (those it drops no valid
// subgraph holds). So the grid has at least the fewest native tiles among them.
static void accumulationRoles(const Problem& p, const ModelOptions& m, OpComputeFloor& f) {
  const int no = p.numOps();
  std::vector<char> forced(p.numTensors(), 0);
  for (auto it = p.topo.rbegin(); it != p.topo.rend(); ++it) {
    const OpId x = *it;
    for (TensorId t : p.ops[x].outputs) {
      bool all = true;
      for (OpId d : p.consumers[t]) {
        if (!bound_detail::fusableEdge(p, m, x, d)) continue;
        bool viaD = false;
        if (p.ops[d].type == OpType::Pointwise)
          for (TensorId u : p.ops[d].outputs) viaD = viaD || forced[u];
        all = all && viaD;
      }
      forced[t] = all;
    }
  }
  f.always_accumulates.assign(no, 0);
  f.feeds_matmul_accumulating.assign(no, 1);
  f.upstream_roles.assign(no, 3);
  for (OpId o = 0; o < no; ++o) {
    if (p.ops[o].type != OpType::MatMul) continue;
    for (TensorId t : p.ops[o].outputs) f.always_accumulates[o] = f.always_accumulates[o] || forced[t];
  }
  constexpr long kMaxWalk = 20'000'000;  // op visits of all the walks together
  long work = 0;
  std::vector<int> seen(no, -1);
  for (OpId o = 0; o < no; ++o) {
    if (p.ops[o].type != OpType::MatMul) continue;
    if (!f.may_feed_matmul[o]) {
      f.feeds_matmul_accumulating[o] = 0;
      continue;
    }
    bool feeds = false, over = false;  // over: the walks' work limit (then both roles)
    unsigned char roles = 0;
    std::vector<OpId> stack = {o};
    seen[o] = o;
    while (!stack.empty() && !over) {
      const OpId v = stack.back();
      stack.pop_back();
      for (TensorId t : p.ops[v].outputs)
        for (OpId d : p.consumers[t]) {
          if (over || !bound_detail::fusableEdge(p, m, v, d)) continue;
          if (p.ops[d].type == OpType::MatMul)  // every role of t in d (a MatMul seen before: another tensor)
            roles |= (p.ops[d].inputs[0] == t ? 1 : 0) | (p.ops[d].inputs[1] == t ? 2 : 0);
          if (seen[d] == o) continue;
          seen[d] = o;
          if (++work > kMaxWalk) over = true;
          else if (p.ops[d].type == OpType::MatMul)
            feeds = feeds || !f.always_accumulates[d] || p.ops[d].K == p.ops[o].K;
          else stack.push_back(d);
        }
    }
    f.feeds_matmul_accumulating[o] = feeds || over;
    f.upstream_roles[o] = over ? 3 : roles;
  }
}

OpComputeFloor opComputeFloor(const Problem& p, const ModelOptions& m) {
  struct PathEnd {
    i64 tiles, need, cap;
    bool mmAhead = false;                   // a MatMul lies after this op on the path
    bool allRows = false, allCols = false;  // this op's output is needed whole along rows / columns per tile
    i64 wsSum = 0, wsMax = 0;  // graph inputs needed whole: private ones summed, shared ones by the largest
  };
  const int no = p.numOps();
  const i64 N = p.native;
  const i64 modelCap = m.k_limit == ModelOptions::KLimit::Reduction ? std::numeric_limits<i64>::max() : N;
  std::vector<std::vector<PathEnd>> ends(no);
  auto add = [&](std::vector<PathEnd>& v, PathEnd e) {
    if (e.need > e.cap) return;                                // no k fits the path
    if (e.wsSum > p.capacity || e.wsMax > p.capacity) return;  // no working set fits it
    auto below = [](const PathEnd& x, const PathEnd& y) {      // x at least as good as y in every respect
      return x.tiles <= y.tiles && x.need <= y.need && x.cap >= y.cap && x.wsSum <= y.wsSum && x.wsMax <= y.wsMax &&
             x.mmAhead == y.mmAhead && x.allRows <= y.allRows && x.allCols <= y.allCols;
    };
    for (const PathEnd& x : v)
      if (below(x, e)) return;
    std::erase_if(v, [&](const PathEnd& x) { return below(e, x); });
    v.push_back(e);
  };
  // The whole operands a MatMul o needs on a path whose state after it is e (o's output needed
  // as e says), added to e's working set.
  auto withOperands = [&](PathEnd e, OpId o) {
    const Op& op = p.ops[o];
    if (op.type != OpType::MatMul || !e.mmAhead) return e;  // not upstream: k-strips (or whatever k)
    for (int side = 0; side < 2; ++side) {
      const TensorId u = op.inputs[side];
      const bool whole = side == 0 ? e.allRows : e.allCols;
      if (!whole || !p.is_graph_input[u]) continue;
      if (p.consumers[u].size() == 1) e.wsSum += p.size(u);
      else e.wsMax = std::max(e.wsMax, p.size(u));
    }
    return e;
  };
  OpComputeFloor f;
  f.min_tiles.assign(no, std::numeric_limits<i64>::max());
  f.min_k.assign(no, std::numeric_limits<i64>::max());
  f.may_feed_matmul.assign(no, 0);
  f.min_tiles_upstream.assign(no, std::numeric_limits<i64>::max());
  for (auto it = p.topo.rbegin(); it != p.topo.rend(); ++it) {
    const OpId o = *it;
    const Op& op = p.ops[o];
    const i64 capO = op.type == OpType::MatMul ? std::min(op.K, modelCap) : modelCap;
    if (op.type == OpType::MatMul) f.min_k[o] = op.K;
    for (TensorId t : op.outputs) {
      add(ends[o], {bound_detail::nativeTiles(p, t), 0, capO});
      for (OpId c : p.consumers[t]) {
        if (bound_detail::fusableEdge(p, m, o, c)) f.min_k[o] = std::min(f.min_k[o], f.min_k[c]);
        const Op& C = p.ops[c];
        const bool v9 = op.type == OpType::Pointwise && C.type == OpType::MatMul && C.K > N;
        for (const PathEnd& e : ends[c]) {
          PathEnd n = e;  // a Pointwise passes its region on
          n.need = std::max(e.need, v9 ? C.K : 0);
          n.cap = std::min(e.cap, capO);
          n.mmAhead = e.mmAhead || C.type == OpType::MatMul;
          if (C.type == OpType::MatMul) {
            const bool fullK = e.mmAhead || v9;  // c upstream, or k >= K_c forced
            const bool lhs = C.inputs[0] == t;
            n.allRows = lhs ? e.allRows : fullK;
            n.allCols = lhs ? fullK : e.allCols;
          }
          add(ends[o], withOperands(n, o));
        }
      }
    }
    for (const PathEnd& e : ends[o]) {
      f.min_tiles[o] = std::min(f.min_tiles[o], e.tiles);
      if (e.mmAhead) f.may_feed_matmul[o] = 1;
      if (e.mmAhead) f.min_tiles_upstream[o] = std::min(f.min_tiles_upstream[o], e.tiles);
    }
  }
  f.total_tiles = coveredTiles(p, m, f.min_tiles);
  accumulationRoles(p, m, f);
  return f;
}

}  // namespace mlsys
