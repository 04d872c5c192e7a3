#include "cost/subgraph.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <sstream>

#include "cost/types.h"

namespace mlsys {
namespace {

bool contains(const std::vector<TensorId>& sorted, TensorId t) {
  return std::binary_search(sorted.begin(), sorted.end(), t);
}

std::vector<TensorId> sortedUnique(std::vector<TensorId> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

struct Fail {
  std::string rule, reason;
};

// Shared analysis of a subgraph's ops: membership, produced/consumed sets and outputs.
struct OpSets {
  std::vector<OpId> sorted_ops;
  std::vector<TensorId> produced, consumed, ephemeral, outputs;  // P, consumed, E, O
  bool inS(OpId o) const { return std::binary_search(sorted_ops.begin(), sorted_ops.end(), o); }
};

OpSets opSets(const Problem& p, const std::vector<OpId>& ops) {
  OpSets s;
  s.sorted_ops = ops;
  std::sort(s.sorted_ops.begin(), s.sorted_ops.end());
  for (OpId o : ops) {
    for (TensorId t : p.ops[o].outputs) s.produced.push_back(t);
    for (TensorId t : p.ops[o].inputs) s.consumed.push_back(t);
  }
  s.produced = sortedUnique(std::move(s.produced));
  s.consumed = sortedUnique(std::move(s.consumed));
  for (TensorId t : s.produced) (contains(s.consumed, t) ? s.ephemeral : s.outputs).push_back(t);
  return s;
}

// Non-ephemeral outputs: O(S) plus retained tensors consumed inside S.
std::vector<TensorId> nonEphemeral(const OpSets& s, const std::vector<TensorId>& rout) {
  std::vector<TensorId> ne = s.outputs;
  for (TensorId t : rout)
    if (contains(s.ephemeral, t)) ne.push_back(t);
  return sortedUnique(std::move(ne));
}

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
        if (out[j].rows == sl.rows && out[j].cols == sl.cols) { sl.dup = true; break; }
      }
    }
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
          if (q.full || (q.rows == s.rows && q.cols == s.cols)) { resident = true; break; }
        }
      if (!resident) load += sz;
    }
    Iv rho = iv(Ext::Rho, true, 0, cur), gam = iv(Ext::Gamma, false, 0, cur);
    i64 tile = rho.len() * gam.len();
    ws += pl_.ws_const + tile * (pl_.n_store + (pl_.nk > 1 ? pl_.n_acc : 0));
    i64 store = last ? tile * pl_.n_store : 0;
    i128 kap = pl_.mm_coef ? iv(Ext::Kappa, true, 0, cur).len() : 0;
    i128 compute = static_cast<i128>(pl_.mm_coef) * kap +
                   static_cast<i128>(pl_.pw_every + (last ? pl_.pw_last : 0)) * pl_.D;
    i128 c = compute * p_.bandwidth;
    i128 m = static_cast<i128>(load + store) * pl_.D;
    return {std::max(c, m), ws, c >= m};
  }

 private:
  const Problem& p_;
  const SubgraphPlan& pl_;
  std::vector<std::vector<int>> group_;
};

bool isPermutation(const std::vector<int32_t>& o, i64 n, std::string& why) {
  if (static_cast<i64>(o.size()) != n) {
    why = "has " + std::to_string(o.size()) + " entries but the grid has " + std::to_string(n) + " tiles";
    return false;
  }
  std::vector<char> seen(static_cast<size_t>(n), 0);
  for (size_t i = 0; i < o.size(); ++i) {
    if (o[i] < 0 || o[i] >= n) {
      why = "entry " + std::to_string(i) + " is tile " + std::to_string(o[i]) + ", outside [0, " + std::to_string(n - 1) + "]";
      return false;
    }
    if (seen[static_cast<size_t>(o[i])]++) {
      why = "tile " + std::to_string(o[i]) + " appears twice";
      return false;
    }
  }
  return true;
}

}  // namespace

double toDouble(i128 num, i128 den) {
  return static_cast<double>(static_cast<long double>(num) / static_cast<long double>(den));
}

std::pair<i64, i64> subgraphGrid(const Problem& p, const SubgraphSched& sg) {
  OpSets s = opSets(p, sg.ops);
  auto ne = nonEphemeral(s, sortedUnique(sg.retain));
  if (ne.empty()) return {1, 1};
  TensorId t = ne.front();
  i64 w = std::max<i64>(1, sg.gran.w), h = std::max<i64>(1, sg.gran.h);
  return {(p.widths[t] + w - 1) / w, (p.heights[t] + h - 1) / h};
}

SubgraphPlan planSubgraph(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                          const Granularity& g, const std::vector<TensorId>& retained_in,
                          const std::vector<TensorId>& retained_out) {
  SubgraphPlan pl;
  pl.g = g;
  auto fail = [&](const char* rule, const std::string& why) {
    pl.valid = false;
    pl.rule = rule;
    pl.reason = why;
    return pl;
  };
  auto opName = [&](OpId o) {
    return "op " + std::to_string(o) + " (" + (p.ops[o].type == OpType::MatMul ? "MatMul" : "Pointwise") + ")";
  };
  if (ops.empty()) return fail("V1", "the subgraph has no ops");
  OpSets s = opSets(p, ops);
  for (size_t i = 1; i < s.sorted_ops.size(); ++i)
    if (s.sorted_ops[i] == s.sorted_ops[i - 1])
      return fail("V3", "op " + std::to_string(s.sorted_ops[i]) + " is listed twice in the subgraph");
  // V3: listed order is topological.
  for (size_t i = 0; i < ops.size(); ++i)
    for (TensorId t : p.ops[ops[i]].inputs) {
      OpId pr = p.producer[t];
      if (pr >= 0 && s.inS(pr)) {
        auto pos = std::find(ops.begin(), ops.end(), pr) - ops.begin();
        if (static_cast<size_t>(pos) > i)
          return fail("V3", opName(ops[i]) + " consumes tensor " + std::to_string(t) + " produced by op " +
                                std::to_string(pr) + ", which is listed after it (list order must be topological)");
      }
    }
  // V4: connected through tensors produced and consumed inside S.
  {
    std::vector<int> parent(ops.size());
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](int x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (size_t i = 0; i < ops.size(); ++i)
      for (TensorId t : p.ops[ops[i]].inputs) {
        OpId pr = p.producer[t];
        if (pr >= 0 && s.inS(pr)) {
          int a = find(static_cast<int>(i)), b = find(static_cast<int>(std::find(ops.begin(), ops.end(), pr) - ops.begin()));
          parent[a] = b;
        }
      }
    for (size_t i = 1; i < ops.size(); ++i)
      if (find(static_cast<int>(i)) != find(0))
        return fail("V4", "ops " + std::to_string(ops[0]) + " and " + std::to_string(ops[i]) +
                              " are not connected through tensors produced and consumed inside the subgraph");
  }
  std::vector<TensorId> rin = sortedUnique(retained_in), rout = sortedUnique(retained_out);
  // V6/V7: what may be retained.
  for (TensorId t : rout) {
    if (!contains(s.produced, t))
      return fail("V6", "tensor " + std::to_string(t) + " is retained but not produced by this subgraph" +
                            (p.producer[t] < 0 ? " (it is a graph input; inputs can never be retained)" : ""));
    if (p.is_graph_output[t])
      return fail("V7", "tensor " + std::to_string(t) + " is a graph output and must not be retained (it must reach slow memory)");
  }
  std::vector<TensorId> ne = nonEphemeral(s, rout);
  // Decision 7: one shape for all non-ephemeral outputs.
  TensorId ref = ne.front();
  for (TensorId t : ne)
    if (p.widths[t] != p.widths[ref] || p.heights[t] != p.heights[ref]) {
      std::ostringstream os;
      os << "outputs of different shapes in one subgraph: tensor " << ref << " is " << p.heights[ref] << "x"
         << p.widths[ref] << " (HxW) but tensor " << t << " is " << p.heights[t] << "x" << p.widths[t];
      return fail("A-6", os.str());
    }
  pl.W = p.widths[ref];
  pl.H = p.heights[ref];
  // V8: granularity limits.
  const i64 N = p.native;
  {
    if (g.w < 1 || g.h < 1 || g.k < 1 || g.w > N || g.h > N || g.k > N) {
      std::ostringstream os;  // only on failure: this runs for every priced subgraph
      if (g.w < 1 || g.h < 1 || g.k < 1) os << "w, h and k must be positive, got [" << g.w << "," << g.h << "," << g.k << "]";
      else if (g.w > N) os << "w = " << g.w << " exceeds the native size N = " << N;
      else if (g.h > N) os << "h = " << g.h << " exceeds the native size N = " << N;
      else os << "k = " << g.k << " exceeds the native size N = " << N;
      return fail("V8", os.str());
    }
    for (OpId o : ops)
      if (p.ops[o].type == OpType::MatMul && g.k > p.ops[o].K)
        return fail("V8", "k = " + std::to_string(g.k) + " exceeds K = " + std::to_string(p.ops[o].K) + " of " + opName(o));
  }
  // Accumulating MatMuls: output reaches a non-ephemeral output through Pointwise ops only.
  std::vector<char> flows(ops.size(), 0);  // by position
  auto posOf = [&](OpId o) { return static_cast<size_t>(std::find(ops.begin(), ops.end(), o) - ops.begin()); };
  for (size_t i = ops.size(); i-- > 0;) {
    const Op& op = p.ops[ops[i]];
    bool f = false;
    for (TensorId t : op.outputs) {
      if (contains(ne, t)) f = true;
      for (OpId c : p.consumers[t])
        if (s.inS(c) && p.ops[c].type == OpType::Pointwise && flows[posOf(c)]) f = true;
    }
    flows[i] = f;
  }
  std::vector<char> accumulating(ops.size(), 0);
  bool anyMM = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = p.ops[ops[i]];
    if (op.type != OpType::MatMul) continue;
    anyMM = true;
    if (!flows[i]) continue;
    accumulating[i] = 1;
    if (pl.Kacc == 0) pl.Kacc = op.K;
    else if (pl.Kacc != op.K)
      return fail("E2", "accumulating MatMuls with different K in one subgraph (K = " + std::to_string(pl.Kacc) +
                            " and K = " + std::to_string(op.K) + " at " + opName(ops[i]) + "): the k-loop is undefined");
  }
  if (anyMM && pl.Kacc == 0) return fail("E2", "the subgraph has MatMuls but none reaches its outputs");
  pl.nk = pl.Kacc ? (pl.Kacc + g.k - 1) / g.k : 1;
  pl.D = anyMM ? (m.matmul_compute == ModelOptions::MatmulCompute::NativeDepth ? N : pl.Kacc) : 1;
  // V9: a Pointwise producing a MatMul operand inside S needs w (LHS) or h (RHS) >= K when k < K.
  for (OpId o : ops) {
    const Op& op = p.ops[o];
    if (op.type != OpType::MatMul || g.k >= op.K) continue;
    for (int side = 0; side < 2; ++side) {
      OpId pr = p.producer[op.inputs[side]];
      if (pr < 0 || !s.inS(pr) || p.ops[pr].type != OpType::Pointwise) continue;
      i64 need = op.K, have = side == 0 ? g.w : g.h;
      if (have < need)
        return fail("V9", "op " + std::to_string(pr) + " (Pointwise) produces the " + (side == 0 ? "LHS" : "RHS") + " of " +
                              opName(o) + " with k = " + std::to_string(g.k) + " < K = " + std::to_string(op.K) + "; this needs " +
                              (side == 0 ? "w" : "h") + " >= " + std::to_string(need) + ", got " + std::to_string(have));
    }
  }
  // Demand propagation (E3), consumers before producers.
  struct Need {
    Ext rk, ck;
    bool operator==(const Need&) const = default;
  };
  std::vector<std::vector<Need>> needs(ops.size());  // demanded regions of each op's output(s)
  auto addNeed = [&](std::vector<Need>& v, Need n) {
    if (std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
  };
  for (size_t i = 0; i < ops.size(); ++i)
    for (TensorId t : p.ops[ops[i]].outputs)
      if (contains(ne, t)) addNeed(needs[i], {Ext::Rho, Ext::Gamma});
  auto dependsOnJ = [&](Need n) { return pl.nk > 1 && (n.rk == Ext::Kappa || n.ck == Ext::Kappa); };
  auto needInput = [&](TensorId t, Need n) -> void {
    OpId pr = p.producer[t];
    if (pr >= 0 && s.inS(pr)) {
      addNeed(needs[posOf(pr)], n);
    } else if (!contains(rin, t)) {
      SliceTpl st{t, n.rk, n.ck};
      if (std::find(pl.slices.begin(), pl.slices.end(), st) == pl.slices.end()) pl.slices.push_back(st);
    }
  };
  for (size_t i = ops.size(); i-- > 0;) {
    const Op& op = p.ops[ops[i]];
    for (const Need& n : needs[i]) {
      if (op.type == OpType::Pointwise) {
        for (TensorId t : op.inputs) needInput(t, n);
        (dependsOnJ(n) ? pl.pw_every : pl.pw_last) += op.base_cost;
      } else if (accumulating[i]) {
        if (pl.nk > 1 && !(n.rk == Ext::Rho && n.ck == Ext::Gamma))
          return fail("E2", opName(ops[i]) + " accumulates over k-steps but is also an operand of another MatMul in the "
                              "subgraph (its output would be needed before its reduction is complete)");
        needInput(op.inputs[0], {n.rk, Ext::Kappa});
        needInput(op.inputs[1], {Ext::Kappa, n.ck});
        pl.mm_coef += op.base_cost;
      } else {
        needInput(op.inputs[0], {n.rk, Ext::Full});
        needInput(op.inputs[1], {Ext::Full, n.ck});
        pl.mm_coef += op.base_cost;
      }
    }
    if (needs[i].empty())
      return fail("E3", opName(ops[i]) + " computes nothing the subgraph needs");  // unreachable for valid sets
  }
  // Chains of three or more MatMuls: literal pricing, with a warning (decision 3).
  {
    int upstreamFeedingUpstream = 0;
    for (size_t i = 0; i < ops.size(); ++i)
      if (p.ops[ops[i]].type == OpType::MatMul && !accumulating[i])
        for (TensorId t : p.ops[ops[i]].outputs)
          for (OpId c : p.consumers[t])
            if (s.inS(c) && p.ops[c].type == OpType::MatMul && !accumulating[posOf(c)]) ++upstreamFeedingUpstream;
    if (upstreamFeedingUpstream && m.matmul_chains == ModelOptions::MatmulChains::Reject)
      return fail("chains", "a chain of three or more MatMuls in one subgraph (rejected under model option "
                            "matmul_chains=reject)");
    if (upstreamFeedingUpstream)
      pl.warnings.push_back("a chain of three or more MatMuls is priced literally (E3/L5); the price is likely optimistic");
  }
  // Outputs, stores, accumulators, constant working set.
  for (TensorId t : s.outputs)
    if (!contains(rout, t)) pl.written.push_back(t);
  pl.n_store = static_cast<i64>(pl.written.size());
  for (size_t i = 0; i < ops.size(); ++i)
    if (accumulating[i])
      for (TensorId t : p.ops[ops[i]].outputs)
        if (!contains(ne, t)) ++pl.n_acc;
  for (TensorId t : rin) pl.ws_const += p.size(t);
  for (TensorId t : rout) pl.ws_const += p.size(t);
  for (TensorId t : s.consumed)
    if (!contains(s.produced, t)) pl.boundary_inputs.push_back(t);
  pl.produced = s.produced;
  pl.ntw = (pl.W + g.w - 1) / g.w;
  pl.nth = (pl.H + g.h - 1) / g.h;
  // The closed form prices one representative step per class; that is exact when, for every
  // two templates of one tensor, whether they coincide is the same in every step. Per axis the
  // two interval kinds are equal ("always"), decided by the grid ("always"/"never": a Full axis
  // against a kind with one interval or several), or value-dependent ("maybe", e.g. rows vs
  // k-strip). A pair is safe if some axis is "never" or no axis is "maybe".
  auto count = [&](Ext e) { return e == Ext::Rho ? pl.nth : e == Ext::Gamma ? pl.ntw : pl.nk; };
  auto extent = [&](Ext e) { return e == Ext::Rho ? pl.H : e == Ext::Gamma ? pl.W : pl.Kacc; };
  enum Rel { Always, Never, Maybe };
  auto rel = [&](Ext x, Ext y, i64 dim) {
    if (x == y) return Always;
    if (y == Ext::Full) std::swap(x, y);
    if (x != Ext::Full) return Maybe;
    if (count(y) > 1) return Never;
    return extent(y) == dim ? Always : Never;
  };
  for (size_t a = 0; a < pl.slices.size() && pl.fast_ok; ++a)
    for (size_t b = a + 1; b < pl.slices.size(); ++b) {
      const SliceTpl &x = pl.slices[a], &y = pl.slices[b];
      if (x.t != y.t) continue;
      Rel r1 = rel(x.rk, y.rk, p.heights[x.t]), r2 = rel(x.ck, y.ck, p.widths[x.t]);
      if (r1 == Never || r2 == Never) continue;
      if (r1 == Maybe || r2 == Maybe) { pl.fast_ok = false; break; }
    }
  return pl;
}

namespace {

SubgraphCost walk(const Problem& p, const SubgraphPlan& pl, const std::vector<int32_t>& order) {
  SubgraphCost sc;
  StepPricer pr(p, pl);
  std::vector<Slice> prev, cur;
  for (int32_t tile : order) {
    i64 r = tile / pl.ntw, c = tile % pl.ntw;
    for (i64 j = 0; j < pl.nk; ++j) {
      StepIdx s{r, c, j};
      pr.slicesAt(s, cur);
      auto res = pr.price(s, cur, prev);
      if (__builtin_add_overflow(sc.num, res.num, &sc.num)) sc.overflow = true;
      sc.peak_ws = std::max(sc.peak_ws, res.ws);
      (res.compute_bound ? sc.compute_bound_steps : sc.memory_bound_steps) += 1;
      std::swap(prev, cur);
    }
  }
  return sc;
}

// Tile transitions grouped by (row is last, col is last, row changed, col changed, first tile).
struct TileClasses {
  std::array<i64, 32> n{};
  void add(bool rl, bool cl, bool dr, bool dc, bool first, i64 cnt) {
    if (cnt > 0) n[(rl ? 1 : 0) | (cl ? 2 : 0) | (dr ? 4 : 0) | (dc ? 8 : 0) | (first ? 16 : 0)] += cnt;
  }
};

// Row-major raster over an R x C grid.
void rasterClasses(i64 R, i64 C, TileClasses& tc) {
  tc.add(R == 1, C == 1, false, false, true, 1);
  if (C >= 2) {
    tc.add(false, false, false, true, false, (R - 1) * (C - 2));
    tc.add(false, true, false, true, false, R - 1);
    tc.add(true, false, false, true, false, C - 2);
    tc.add(true, true, false, true, false, 1);
  }
  if (R >= 2) {
    tc.add(false, C == 1, true, C > 1, false, R - 2);
    tc.add(true, C == 1, true, C > 1, false, 1);
  }
}

// Rows in order, columns alternating direction; `add` takes (rl, cl, dr, dc, first, n).
template <class Add>
void snakeClasses(i64 R, i64 C, Add add) {
  add(R == 1, C == 1, false, false, true, 1);
  if (C >= 2) {
    i64 evenNonLast = R / 2, oddNonLast = (R - 1) / 2;  // rows 0..R-2
    add(false, false, false, true, false, evenNonLast * (C - 2) + oddNonLast * (C - 1));
    add(false, true, false, true, false, evenNonLast);
    if ((R - 1) % 2 == 0) {
      add(true, false, false, true, false, C - 2);
      add(true, true, false, true, false, 1);
    } else {
      add(true, false, false, true, false, C - 1);
    }
  }
  if (R >= 2) {
    // Entering row r (1..R-2) keeps the column: C-1 after an even row, 0 after an odd one.
    i64 oddR = (R - 1) / 2, evenR = (R - 2) / 2;  // counts of odd / even r in [1, R-2]
    add(false, true, true, false, false, oddR);
    add(false, C == 1, true, false, false, evenR);
    add(true, (R - 2) % 2 == 0 ? true : C == 1, true, false, false, 1);
  }
}

// Any explicit order: classify each transition by which of row/column changed.
void orderClasses(const std::vector<int32_t>& order, i64 R, i64 C, TileClasses& tc) {
  i64 pr = -1, pc = -1;
  for (size_t i = 0; i < order.size(); ++i) {
    i64 r = order[i] / C, c = order[i] % C;
    tc.add(r == R - 1, c == C - 1, i > 0 && r != pr, i > 0 && c != pc, i == 0, 1);
    pr = r;
    pc = c;
  }
}

SubgraphCost fastCost(const Problem& p, const SubgraphPlan& pl, const Traversal& trav) {
  TileClasses tc;
  const i64 R = pl.nth, C = pl.ntw;
  const TraversalKind kind = trav.kind;
  if (kind == TraversalKind::Custom) orderClasses(trav.order, R, C, tc);
  else if (kind == TraversalKind::Raster) rasterClasses(R, C, tc);
  else if (kind == TraversalKind::RowSnake)
    snakeClasses(R, C, [&](bool rl, bool cl, bool dr, bool dc, bool f, i64 n) { tc.add(rl, cl, dr, dc, f, n); });
  else
    snakeClasses(C, R, [&](bool cl, bool rl, bool dc, bool dr, bool f, i64 n) { tc.add(rl, cl, dr, dc, f, n); });
  SubgraphCost sc;
  StepPricer pr(p, pl);
  std::vector<Slice> prevSl, curSl;
  auto account = [&](const StepIdx& cur, const StepIdx* prev, i64 cnt) {
    if (cnt <= 0) return;
    if (prev) pr.slicesAt(*prev, prevSl);
    else prevSl.clear();
    pr.slicesAt(cur, curSl);
    auto res = pr.price(cur, curSl, prevSl);
    i128 part;
    if (__builtin_mul_overflow(res.num, static_cast<i128>(cnt), &part) || __builtin_add_overflow(sc.num, part, &sc.num))
      sc.overflow = true;
    sc.peak_ws = std::max(sc.peak_ws, res.ws);
    (res.compute_bound ? sc.compute_bound_steps : sc.memory_bound_steps) += cnt;
  };
  std::array<i64, 4> perTile{};  // tiles by (rl, cl), for the k-steps after the first
  for (int key = 0; key < 32; ++key) {
    i64 cnt = tc.n[key];
    if (!cnt) continue;
    bool rl = key & 1, cl = key & 2, dr = key & 4, dc = key & 8, first = key & 16;
    i64 r = rl ? R - 1 : 0, c = cl ? C - 1 : 0;
    i64 pr_ = dr ? (r == 0 ? 1 : r - 1) : r, pc = dc ? (c == 0 ? 1 : c - 1) : c;
    StepIdx cur{r, c, 0}, prev{pr_, pc, pl.nk - 1};
    account(cur, first ? nullptr : &prev, cnt);
    perTile[(rl ? 1 : 0) | (cl ? 2 : 0)] += cnt;
  }
  for (int f = 0; f < 4; ++f) {
    i64 cnt = perTile[f];
    if (!cnt || pl.nk < 2) continue;
    i64 r = (f & 1) ? R - 1 : 0, c = (f & 2) ? C - 1 : 0;
    StepIdx mid{r, c, 1}, mid0{r, c, 0};
    if (pl.nk >= 3) account(mid, &mid0, cnt * (pl.nk - 2));
    StepIdx lst{r, c, pl.nk - 1}, lst0{r, c, pl.nk - 2};
    account(lst, &lst0, cnt);
  }
  sc.fast = true;
  return sc;
}

}  // namespace

SubgraphCost costSubgraph(const Problem& p, const SubgraphPlan& pl, const Traversal& trav, CostMethod method) {
  SubgraphCost sc;
  if (!pl.valid) {
    sc.valid = false;
    sc.rule = pl.rule;
    sc.reason = pl.reason;
    return sc;
  }
  const i64 T = pl.tiles();
  if (trav.kind == TraversalKind::Custom) {
    std::string why;
    if (!isPermutation(trav.order, T, why)) {
      sc.valid = false;
      sc.rule = "V10";
      sc.reason = "traversal order " + why;
      return sc;
    }
  }
  bool useFast = method != CostMethod::Walk && pl.fast_ok;
  if (!useFast && pl.steps() > kMaxWalkSteps) {
    sc.valid = false;
    sc.rule = "range";
    sc.reason = "pricing this subgraph needs a step walk of " + std::to_string(pl.steps()) + " steps (more than " +
                std::to_string(kMaxWalkSteps) + "); it cannot be priced exactly in reasonable time";
    sc.steps = pl.steps();
    return sc;
  }
  if (useFast) sc = fastCost(p, pl, trav);
  else sc = walk(p, pl, traversalOrder(trav, pl.ntw, pl.nth));
  sc.den = static_cast<i128>(pl.D) * p.bandwidth;
  sc.steps = pl.steps();
  sc.latency = toDouble(sc.num, sc.den);
  if (sc.overflow) {
    sc.valid = false;
    sc.rule = "range";
    sc.reason = "the subgraph's latency exceeds the exact 128-bit range of the evaluator (" + std::to_string(pl.steps()) +
                " steps); it cannot be priced exactly";
    return sc;
  }
  if (sc.peak_ws > p.capacity) {
    sc.valid = false;
    sc.rule = "V11";
    sc.reason = "working set " + std::to_string(sc.peak_ws) + " exceeds fast_memory_capacity " +
                std::to_string(p.capacity) + " at granularity [" + std::to_string(pl.g.w) + "," + std::to_string(pl.g.h) +
                "," + std::to_string(pl.g.k) + "]";
  }
  return sc;
}

}  // namespace mlsys
