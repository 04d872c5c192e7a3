// Forced outputs (internal.h, forcedOutputs, forcedShapes and mayShareSubgraph): tensors
// one of which a valid subgraph holding an op must output, and so which ops can never be in one
// valid subgraph, by the same-shape rule.
//
// The argument. The outputs of S are O(S) = P(S) \ E(S), E(S) the tensors produced and consumed
// inside S (section 2; a reader outside S is served by recomputation or retention, V5, so it
// does not make a tensor an output). Take an op v in S and one of its outputs t. Either no reader
// of t is in S, and t is in O(S), or some reader d is. A reader that cannot join the ops already
// known to be in S (forcedInvalid, below: upward closed, so no superset is valid
// either) is not in S; for each other reader d, S holding d has, by the same argument applied to d
// with the known set grown by d, an output in F(d). So S has an output in
// F(v) = {t} united with F(d) over every reader d of t that can join.
// forcedOutputs gives that set (over v's outputs, the one whose least store is largest: a tensor
// that can be retained, V6/V7 and W1, stores nothing); forcedShapes their shapes (the output with
// the fewest). A-6 (decision 7) lets a valid subgraph have one shape only for all its outputs, so
// two ops whose shape sets are disjoint never share a valid subgraph. forcedShapes with
// kSplit > 0 holds for the valid subgraphs with k < kSplit only: there a Pointwise of S never
// feeds a MatMul d of S with K_d > N and K_d >= kSplit (V9: with k < K_d it would need w or
// h >= K_d > N, against V8), so such a reader cannot join either. The recursion stops at a depth
// and a work limit; beyond them the set is unknown (any tensor, any shape).
#include <algorithm>
#include <functional>
#include <limits>

#include "cost/bound/internal.h"

namespace mlsys::bound_detail {

namespace {

// Whether c's output reaches a MatMul inside S through Pointwise ops of S.
bool flowsToMatMul(const Problem& p, const std::vector<char>& in, OpId c) {
  std::vector<OpId> stack = {c}, seen = {c};
  while (!stack.empty()) {
    const OpId v = stack.back();
    stack.pop_back();
    for (TensorId t : p.ops[v].outputs)
      for (OpId d : p.consumers[t]) {
        if (!in[d] || std::find(seen.begin(), seen.end(), d) != seen.end()) continue;
        if (isMatMul(p, d)) return true;
        seen.push_back(d);
        stack.push_back(d);
      }
  }
  return false;
}

}  // namespace

// Upward closed: S holds a MatMul q whose operand u is a graph input larger than the capacity,
// and a MatMul c in S that reads q's output (directly or through Pointwise ops of S, which pass
// regions on unchanged) as its other operand and needs that operand's whole reduction axis in
// every step: c's output reaches a MatMul in S (then c is upstream and does its full reduction,
// E3, or it accumulates with nk = 1, its k-strip being all of K_c, since with nk > 1 an
// accumulating MatMul may not feed another: E2), or a Pointwise of S feeds c and K_c > N (V9:
// k >= K_c). As LHS, c then needs rows x [0, K_c) of q's output, all of q's columns, so q needs
// its RHS [0, K_q) x [0, W_q), all of it (upstream, or accumulating with nk = 1: an accumulating
// q with nk > 1 may not feed c); as RHS, all of q's rows, so q needs its whole LHS. Either way u
// is in the working set whole in every step: > C (V11). Adding ops to S keeps q, the path and
// what makes c need its whole axis inside, so every superset fails too.
bool forcedInvalid(const Problem& p, const std::vector<char>& in, const std::vector<OpId>& S) {
  for (OpId q : S) {
    if (!isMatMul(p, q)) continue;
    const Op& Q = p.ops[q];
    for (int side = 0; side < 2; ++side) {
      const TensorId u = Q.inputs[side];
      if (!p.is_graph_input[u] || p.size(u) <= p.capacity) continue;
      // u = RHS of q (side 1) is needed whole when c reads q's output as its LHS; u = LHS
      // (side 0) when c reads it as its RHS.
      std::vector<std::pair<TensorId, bool>>
          stack;  // a tensor carrying q's output region, and whether a Pointwise made it
      for (TensorId out : Q.outputs) stack.push_back({out, false});
      std::vector<OpId> seen;
      while (!stack.empty()) {
        const auto [t, viaPointwise] = stack.back();
        stack.pop_back();
        for (OpId c : p.consumers[t]) {
          if (!in[c] || std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
          const Op& Cc = p.ops[c];
          if (Cc.type == OpType::Pointwise) {
            seen.push_back(c);
            for (TensorId o : Cc.outputs) stack.push_back({o, true});
          } else if (Cc.inputs[side == 1 ? 0 : 1] == t &&
                     ((viaPointwise && Cc.K > p.native) || flowsToMatMul(p, in, c))) {
            return true;
          }
        }
      }
    }
  }
  return false;
}

namespace {

constexpr int kMaxDepth = 24;
constexpr long kMaxVisits = 20000;  // recursion calls per query

// The tensors one of which any valid S holding the known ops writes or retains, by the
// recursion above; `score` ranks the candidate sets (higher is better).
struct OutputSearch {
  const Problem& p;
  std::function<i64(const std::vector<TensorId>&)> score;
  std::vector<char> in;  // the ops known to be in S
  std::vector<OpId> known;
  i64 kSplit = 0;  // > 0: only subgraphs with k < kSplit (forcedShapes says why)
  long visits = 0;

  // Whether d, reading an output of v (in S), cannot be in S at k < kSplit.
  bool splitOut(OpId v, OpId d) const {
    const Op& D = p.ops[d];
    return kSplit > 0 && p.ops[v].type == OpType::Pointwise && D.type == OpType::MatMul && D.K > p.native &&
           D.K >= kSplit;
  }

  std::optional<std::vector<TensorId>> phi(OpId v, int depth) {
    if (++visits > kMaxVisits || depth > kMaxDepth) return std::nullopt;
    std::optional<std::vector<TensorId>> best;
    for (TensorId t : p.ops[v].outputs) {
      std::optional<std::vector<TensorId>> set = std::vector<TensorId>{t};
      for (OpId d : p.consumers[t]) {
        if (in[d] || splitOut(v, d)) continue;  // in[d] never: the known ops lie on a path into v
        in[d] = 1;
        known.push_back(d);
        std::optional<std::vector<TensorId>> sub;
        const bool out = forcedInvalid(p, in, known);  // d cannot be in S
        if (!out) sub = phi(d, depth + 1);
        known.pop_back();
        in[d] = 0;
        if (out) continue;
        if (!sub) {
          set.reset();
          break;
        }
        set->insert(set->end(), sub->begin(), sub->end());
      }
      if (set) {
        std::sort(set->begin(), set->end());
        set->erase(std::unique(set->begin(), set->end()), set->end());
        if (!best || score(*set) > score(*best)) best = std::move(set);
      }
    }
    return best;
  }
};

std::optional<std::vector<TensorId>> outputsOf(const Problem& p, OpId v,
                                               std::function<i64(const std::vector<TensorId>&)> score, i64 kSplit = 0) {
  OutputSearch s{p, std::move(score), std::vector<char>(p.numOps(), 0), {v}, kSplit};
  s.in[v] = 1;
  return s.phi(v, 0);
}

std::vector<Shape> shapesOf(const Problem& p, const std::vector<TensorId>& ts) {
  std::vector<Shape> out;
  for (TensorId t : ts) out.push_back({p.widths[t], p.heights[t]});
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::optional<std::vector<Shape>> forcedShapes(const Problem& p, OpId v, i64 kSplit) {
  const std::optional<std::vector<TensorId>> ts = outputsOf(
      p, v, [&](const std::vector<TensorId>& x) { return -static_cast<i64>(shapesOf(p, x).size()); }, kSplit);
  if (!ts) return std::nullopt;
  return shapesOf(p, *ts);
}

std::optional<std::vector<TensorId>> forcedOutputs(const Problem& p, OpId v) {
  return outputsOf(p, v, [&](const std::vector<TensorId>& x) {
    i64 least = std::numeric_limits<i64>::max();
    for (TensorId t : x) least = std::min(least, retainable(p, t) ? 0 : p.size(t));
    return least;
  });
}

bool mayShareSubgraph(const std::optional<std::vector<Shape>>& a, const std::optional<std::vector<Shape>>& b) {
  if (!a || !b) return true;
  for (const Shape& x : *a)
    if (std::binary_search(b->begin(), b->end(), x)) return true;
  return false;
}

}  // namespace mlsys::bound_detail
