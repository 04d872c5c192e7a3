#include "cost/bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "cost/granularity.h"
#include "cost/subgraph.h"

namespace mlsys {

namespace {

using LD = long double;
constexpr double kInf = std::numeric_limits<double>::infinity();

// A tensor is *retainable* when some schedule could keep it in fast memory across a boundary:
// only produced tensors (V6: never graph inputs), never graph outputs (V7), and only if it fits
// (W1 counts a retained tensor in full). The bound lets every retainable tensor cross every
// boundary for free (no store in its producer's subgraph, no load in its consumer's): a
// relaxation, so sound; it costs tightness only where capacity allows retention.
bool retainable(const Problem& p, TensorId t) {
  return !p.is_graph_input[t] && !p.is_graph_output[t] && p.size(t) <= p.capacity;
}

// V9 (decision 10): a Pointwise producing an operand of a MatMul inside one subgraph needs
// w >= K or h >= K when k < K; with w, h <= N and k <= N that is impossible when K > N. Such an
// edge never links two ops of one subgraph. Under k_limit=reduction k may equal K: no such edge.
bool fusableEdge(const Problem& p, const ModelOptions& m, OpId producer, OpId consumer) {
  if (p.ops[consumer].type != OpType::MatMul || p.ops[producer].type != OpType::Pointwise) return true;
  if (m.k_limit == ModelOptions::KLimit::Reduction) return true;
  return p.ops[consumer].K <= p.native;
}

// Floors of one plan class (the slice templates of E3 do not depend on w, h, k within a class:
// nk > 1, or nk = 1).
struct ClassFloor {
  const Problem& p;
  const SubgraphPlan& pl;
  bool multiK;  // nk > 1 class: k free in [1, kHi]
  i64 kHi;      // largest k of the class
  // Per tensor: its templates (canonicalised per (w,h,k) below).
  struct Tensor {
    TensorId t;
    bool free;
    std::vector<std::pair<Ext, Ext>> tpl;
  };
  std::vector<Tensor> tensors;

  ClassFloor(const Problem& p_, const SubgraphPlan& pl_, bool multiK_, i64 kHi_)
      : p(p_), pl(pl_), multiK(multiK_), kHi(kHi_) {
    for (const SliceTpl& s : pl.slices) {
      auto it = std::find_if(tensors.begin(), tensors.end(), [&](const Tensor& x) { return x.t == s.t; });
      if (it == tensors.end()) {
        tensors.push_back({s.t, retainable(p, s.t), {}});
        it = tensors.end() - 1;
      }
      it->tpl.push_back({s.rk, s.ck});
    }
    buildCanons();
  }

  struct Grid {
    i64 w, h, k, ntw, nth, nk;
    i64 rowLast, colLast;  // the smallest row band / column band (the clipped last one)
  };

  // Canonical kind: an axis with one interval covering the tensor's whole axis is Full.
  static Ext canon(Ext e, bool oneK, bool oneRow, bool oneCol) {
    if (e == Ext::Kappa && oneK) return Ext::Full;
    if (e == Ext::Rho && oneRow) return Ext::Full;
    if (e == Ext::Gamma && oneCol) return Ext::Full;
    return e;
  }
  // Two distinct canonical templates of one tensor can never be identical slices when on some
  // axis one is Full and the other is not (a non-Full canonical axis has several intervals, none
  // of them whole). Otherwise they might coincide in some step (then only the larger is counted).
  static bool neverEqual(std::pair<Ext, Ext> a, std::pair<Ext, Ext> b) {
    return (a.first == Ext::Full) != (b.first == Ext::Full) || (a.second == Ext::Full) != (b.second == Ext::Full);
  }
  // Per tensor and per grid case (nk = 1?, nth = 1?, ntw = 1?): its distinct canonical templates.
  struct Canon {
    std::vector<std::pair<Ext, Ext>> tpl;  // canonical kinds
    bool allNever = true, whole = false;
  };
  std::vector<Canon> canons[8];
  const std::vector<Canon>& canonFor(const Grid& g) const {
    return canons[(g.nk == 1 ? 1 : 0) | (g.nth == 1 ? 2 : 0) | (g.ntw == 1 ? 4 : 0)];
  }
  void buildCanons() {
    for (int f = 0; f < 8; ++f)
      for (const Tensor& x : tensors) {
        Canon c;
        for (auto [r, k] : x.tpl) {
          std::pair<Ext, Ext> ct{canon(r, f & 1, f & 2, f & 4), canon(k, f & 1, f & 2, f & 4)};
          if (std::find(c.tpl.begin(), c.tpl.end(), ct) != c.tpl.end()) continue;
          for (auto& o : c.tpl) c.allNever = c.allNever && neverEqual(o, ct);
          c.tpl.push_back(ct);
          c.whole = c.whole || (ct.first == Ext::Full && ct.second == Ext::Full);
        }
        canons[f].push_back(std::move(c));
      }
  }
  // Length of an axis of canonical kind e in step (0,0,0) (the largest step: every interval
  // starts at 0).
  i64 len0(Ext e, i64 axisLen, const Grid& g) const {
    switch (e) {
      case Ext::Rho: return std::min(g.h, pl.H);
      case Ext::Gamma: return std::min(g.w, pl.W);
      case Ext::Kappa: return std::min(g.k, pl.Kacc);
      case Ext::Full: return axisLen;
    }
    return axisLen;
  }

  // Working set of step (0,0,0), W1, with no retention; a retainable tensor counts at most |t|
  // (if retained into S it counts |t| instead of its slices). A retained-out output counts |t|
  // >= its tile. So every valid schedule of this part at (w,h,k) has WS >= this at that step.
  i64 ws(const Grid& g) const {
    i64 total = 0;
    const std::vector<Canon>& canon = canonFor(g);
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& x = tensors[i];
      i64 sum = 0, mx = 0;
      for (auto [r, k] : canon[i].tpl) {
        const i64 sz = len0(r, p.heights[x.t], g) * len0(k, p.widths[x.t], g);
        sum += sz;
        mx = std::max(mx, sz);
      }
      i64 v = canon[i].allNever ? sum : mx;
      if (x.free) v = std::min(v, p.size(x.t));
      total += v;
    }
    const i64 tile = std::min(g.w, pl.W) * std::min(g.h, pl.H);
    total += tile * (pl.n_store + (g.nk > 1 ? pl.n_acc : 0));
    return total;
  }

  // Elements every traversal must load and store at (w,h,k) (L3, L4):
  // - a slice that depends on the k-step (nk > 1) differs from the previous step's in every step
  //   (the k-strip moves within a tile, and j restarts at 0 on the next tile): loaded every step;
  // - a slice depending on both the tile row and column is new in every tile;
  // - a slice depending on the row only (a row band) is reloaded whenever the row changes, one on
  //   the column only whenever the column changes; a traversal of R x C tiles makes x row changes
  //   and y column changes with x >= R-1, y >= C-1, x + y >= RC-1, so beyond loading every band
  //   once it reloads (R-1)(C-1) bands of the cheaper kind at least (each at least the smallest);
  // - a slice depending on neither is loaded once; a tensor needed whole in every step once.
  // A tensor with templates that might coincide by value counts only its largest template.
  // Retainable tensors (retained in) load nothing. Outputs are stored once (tile regions sum to
  // |t|) unless retainable.
  LD traffic(const Grid& g) const {
    LD total = 0, rowPool = 0, colPool = 0, rowMin = 0, colMin = 0;
    auto axisSum = [&](Ext e, i64 axisLen) -> LD {  // sum of the axis lengths over its index
      switch (e) {
        case Ext::Rho: return static_cast<LD>(pl.H);
        case Ext::Gamma: return static_cast<LD>(pl.W);
        case Ext::Kappa: return static_cast<LD>(pl.Kacc);
        case Ext::Full: return static_cast<LD>(axisLen);
      }
      return 0;
    };
    const std::vector<Canon>& canon = canonFor(g);
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& x = tensors[i];
      if (x.free) continue;
      const i64 Ht = p.heights[x.t], Wt = p.widths[x.t];
      const std::vector<std::pair<Ext, Ext>>& c = canon[i].tpl;
      const bool allNever = canon[i].allNever;
      if (canon[i].whole) {  // loaded once, then every other slice of it lies inside the previous step's
        total += static_cast<LD>(p.size(x.t));
        continue;
      }
      LD best = 0;
      for (auto [r, k] : c) {
        const bool usesR = r == Ext::Rho, usesC = k == Ext::Gamma, usesJ = r == Ext::Kappa || k == Ext::Kappa;
        const LD rs = axisSum(r, Ht), cs = axisSum(k, Wt);
        LD own = 0;
        if (usesJ) {
          own = rs * cs * (usesR ? 1 : g.nth) * (usesC ? 1 : g.ntw);
        } else if (usesR && usesC) {
          own = rs * cs;
        } else if (usesR) {
          own = rs * cs;
          if (allNever) {
            rowPool += own;
            rowMin += static_cast<LD>(g.rowLast) * cs;
            continue;
          }
        } else if (usesC) {
          own = rs * cs;
          if (allNever) {
            colPool += own;
            colMin += rs * static_cast<LD>(g.colLast);
            continue;
          }
        } else {
          own = rs * cs;
        }
        if (allNever) total += own;
        else best = std::max(best, own);
      }
      total += best;
    }
    total += rowPool + colPool;
    if (rowPool > 0 && colPool > 0)
      total += static_cast<LD>(g.nth - 1) * static_cast<LD>(g.ntw - 1) * std::min(rowMin, colMin);
    for (TensorId t : pl.written)
      if (!retainable(p, t)) total += static_cast<LD>(p.size(t));
    return total;
  }

  // L5: total compute at (w,h,k): MatMuls base_cost per tile over the k-steps (x Kacc / D),
  // k-strip Pointwise every k-step, epilogue Pointwise once per tile.
  LD compute(const Grid& g) const {
    const LD T = static_cast<LD>(g.ntw) * static_cast<LD>(g.nth);
    LD per = static_cast<LD>(pl.pw_every) * static_cast<LD>(g.nk) + static_cast<LD>(pl.pw_last);
    if (pl.mm_coef) per += static_cast<LD>(pl.mm_coef) * static_cast<LD>(pl.Kacc) / static_cast<LD>(pl.D);
    return T * per;
  }

  // min over every w <= N, h <= N and k of the class that fits of max(compute, traffic / B).
  // Within the class the floor does not increase with k (the k-strip loads sum to K whatever k
  // is; strip Pointwise run nk times) while the working set does not decrease: the largest k
  // that fits is the best one, found by bisection.
  // Tile sides with the same tile count form a class [lo, hi]: compute and every traffic term
  // depend on the side only through the count, except the smallest band (the clipped last one),
  // smallest at hi; the working set grows with the side, least at lo. So a class is priced at hi
  // and admitted if it fits at lo (a relaxation of every side in it).
  struct SideClass {
    i64 count, lo, hi;
  };
  static std::vector<SideClass> sideClasses(i64 dim, i64 N) {
    std::vector<SideClass> v;  // largest sides first
    for (i64 x = std::min(N, dim); x >= 1; --x) {
      const i64 c = (dim + x - 1) / x;
      if (!v.empty() && v.back().count == c) v.back().lo = x;
      else v.push_back({c, x, x});
    }
    return v;
  }

  void minimise(PartFloor& best) const {
    const i64 N = p.native;
    const LD B = static_cast<LD>(p.bandwidth);
    const std::vector<SideClass> ws_ = sideClasses(pl.W, N), hs_ = sideClasses(pl.H, N);
    // Largest tiles first: they give the least compute, so the pruning below bites early.
    for (const SideClass& cw : ws_)
      for (const SideClass& ch : hs_) {
        Grid g{cw.lo, ch.lo, 1, cw.count, ch.count, 1, 0, 0};
        g.rowLast = pl.H - (g.nth - 1) * ch.hi;
        g.colLast = pl.W - (g.ntw - 1) * cw.hi;
        if (multiK) {
          auto at = [&](i64 k) {
            Grid x = g;
            x.k = k;
            x.nk = (pl.Kacc + k - 1) / k;
            return x;
          };
          // Compute only grows as h shrinks (more tile rows): nothing below can beat the best.
          if (compute(at(kHi)) >= best.value) break;
          if (ws(at(1)) > p.capacity) continue;
          i64 lo = 1, hi = kHi;  // ws(at(lo)) fits
          while (lo < hi) {
            i64 mid = lo + (hi - lo + 1) / 2;
            if (ws(at(mid)) <= p.capacity) lo = mid;
            else hi = mid - 1;
          }
          g = at(lo);
        } else {
          g.k = kHi;
          if (compute(g) >= best.value) break;
          if (ws(g) > p.capacity) continue;
        }
        const LD c = compute(g), m = traffic(g) / B;
        const double v = static_cast<double>(std::max(c, m));
        if (v < best.value) best = {v, static_cast<double>(c), static_cast<double>(m), {cw.hi, ch.hi, g.k}};
      }
  }
};

}  // namespace

PartFloor partFloor(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops) {
  PartFloor best{kInf, kInf, kInf, {}};
  const i64 N = p.native;
  const i64 kmax = reductionLimit(p, m, ops);  // V8 (0: no MatMul)
  static const std::vector<TensorId> kNone;
  // The templates depend on the granularity only through nk > 1 or nk = 1, and validity only
  // through V9 (which fails at w = h = N, the most permissive sides, exactly when it fails for
  // every w, h of the class) and capacity (checked per (w,h,k) above). Retention changes the plan
  // only by removing retained-in slices and stores (relaxed above) or by making a tensor consumed
  // inside S non-ephemeral (rule 11.7), which keeps every op's charge per tile and only adds
  // demanded regions, so the plan without retention gives the floor.
  SubgraphPlan multi = planSubgraph(p, m, ops, {N, N, 1}, kNone, kNone);
  if (multi.valid && multi.nk > 1) ClassFloor(p, multi, true, std::min(kmax, multi.Kacc - 1)).minimise(best);
  const i64 kOne = kmax ? kmax : 1;
  SubgraphPlan one = multi.valid && multi.nk == 1 ? multi : planSubgraph(p, m, ops, {N, N, kOne}, kNone, kNone);
  if (one.valid && one.nk == 1) ClassFloor(p, one, false, one.Kacc ? one.Kacc : 1).minimise(best);
  return best;
}

double LowerBound::value() const { return std::max({compute, traffic, parts}); }

bool meetsBound(double latency, double bound) { return bound > 0 && latency <= bound * (1 + 1e-9); }

LowerBound lowerBound(const Problem& p, const ModelOptions& m, const BoundOptions& bo) {
  LowerBound lb;
  const i64 N = p.native;
  const int no = p.numOps();
  auto nativeTiles = [&](TensorId t) { return ((p.widths[t] + N - 1) / N) * ((p.heights[t] + N - 1) / N); };
  // Compute floor. An op is charged per tile of its subgraph's grid, not of its own output:
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
  std::vector<i64> minTiles(no, std::numeric_limits<i64>::max()), minK(no, std::numeric_limits<i64>::max());
  for (auto it = p.topo.rbegin(); it != p.topo.rend(); ++it) {
    const OpId o = *it;
    const Op& op = p.ops[o];
    if (op.type == OpType::MatMul) minK[o] = op.K;
    for (TensorId t : op.outputs) {
      minTiles[o] = std::min(minTiles[o], nativeTiles(t));
      for (OpId c : p.consumers[t]) {
        if (!fusableEdge(p, m, o, c)) continue;
        minTiles[o] = std::min(minTiles[o], minTiles[c]);
        minK[o] = std::min(minK[o], minK[c]);
      }
    }
  }
  std::vector<LD> opCompute(no);
  LD compute = 0;
  for (int o = 0; o < no; ++o) {
    const Op& op = p.ops[o];
    LD per = static_cast<LD>(op.base_cost);
    if (op.type == OpType::MatMul && m.matmul_compute == ModelOptions::MatmulCompute::NativeDepth)
      per = per * static_cast<LD>(minK[o]) / static_cast<LD>(N);
    opCompute[o] = static_cast<LD>(minTiles[o]) * per;
    compute += opCompute[o];
  }
  // Traffic floor: every graph input is read from slow memory at least once (it is never
  // produced, so never ephemeral, and never retained: V6), and every graph output is written at
  // least once (V7). Transfers are elements / B (L3, L4).
  LD elems = 0;
  for (int t = 0; t < p.numTensors(); ++t)
    if (p.is_graph_input[t] || p.is_graph_output[t]) elems += p.size(t);
  lb.compute = static_cast<double>(compute);
  lb.traffic = static_cast<double>(elems / p.bandwidth);

  // Edge floors. A MatMul q whose output t is an operand of a MatMul c with K_c > kcap (N, or
  // the k limit) in the same subgraph is upstream there (t feeds a MatMul: E2 / decision 1; were
  // it also accumulating, E2 rejects its non-tile region when nk > 1, and nk > 1 is forced). If
  // c accumulates (nk > 1 forced), q makes k-strips of t (E3), so q's other operand u (its RHS
  // when t is c's LHS, its LHS when t is c's RHS) is needed as a strip across its whole reduction
  // axis, a different one in every k-step; if c is upstream, q needs u whole. When u is a graph
  // input (never ephemeral, never retained: V6) larger than the capacity, u is never needed whole
  // (W1) and each tile loads all of u in strips: the subgraph's traffic is at least
  // tiles x |u| / B, the tiles being those of c's output (the grid is the shape of c's output,
  // which reaches O(S) through Pointwise ops only: E1, A-6), at least its native tiles.
  const i64 kcap = m.k_limit == ModelOptions::KLimit::Reduction ? std::numeric_limits<i64>::max() : N;
  auto edgeFloor = [&](OpId q, OpId c, TensorId t) -> LD {
    const Op &Q = p.ops[q], &Cc = p.ops[c];
    if (Q.type != OpType::MatMul || Cc.type != OpType::MatMul || Cc.K <= kcap) return 0;
    const TensorId u = t == Cc.inputs[0] ? Q.inputs[1] : t == Cc.inputs[1] ? Q.inputs[0] : -1;
    if (u < 0 || !p.is_graph_input[u] || p.size(u) <= p.capacity) return 0;
    return static_cast<LD>(nativeTiles(Cc.outputs[0])) * static_cast<LD>(p.size(u)) / static_cast<LD>(p.bandwidth);
  };

  // Fusion components: union of fusable producer -> consumer edges, each with its edge floor
  // (0 when none is proven).
  std::vector<int> comp(no);
  std::iota(comp.begin(), comp.end(), 0);
  auto find = [](std::vector<int>& uf, int x) {
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
  };
  std::vector<std::vector<std::pair<OpId, LD>>> adj(no);  // fusable neighbours, edge floor
  for (int o = 0; o < no; ++o)
    for (TensorId t : p.ops[o].outputs)
      for (OpId c : p.consumers[t])
        if (fusableEdge(p, m, o, c)) {
          comp[find(comp, o)] = find(comp, c);
          const LD x = edgeFloor(o, c, t);
          adj[o].push_back({c, x});
          adj[c].push_back({o, x});
        }
  std::vector<std::vector<OpId>> members(no);
  for (OpId o : p.topo) members[find(comp, o)].push_back(o);  // topological order inside each
  LD theta = std::numeric_limits<LD>::infinity();  // edges with a floor >= theta are cut
  auto linked = [&](const std::pair<OpId, LD>& e) { return !(e.second > 0 && e.second >= theta); };

  std::vector<char> inGroup(no, 0);  // scratch: members of the group being priced
  std::vector<char> tensorMark(p.numTensors(), 0);  // scratch: tensors counted
  std::vector<int> idx(no, -1);      // scratch: position in the group being covered
  std::vector<int> sub(no);          // scratch: union-find inside one component
  std::iota(sub.begin(), sub.end(), 0);
  // The floor of a group of ops that every subgraph of theirs stays inside.
  auto groupBound = [&](const std::vector<OpId>& ops) {
    BoundGroup bg;
    bg.ops = ops;
    const int n = static_cast<int>(ops.size());
    // "floors": every subgraph of the group pays its ops' compute (above) and the group as a
    // whole loads each tensor it consumes from outside once and stores each tensor it produces
    // for outside (or as a graph output) once, unless retainable; its subgraphs cost at least
    // the larger of the two sums.
    auto floors = [&] {
      for (OpId o : ops) inGroup[o] = 1;
      LD c = 0, e = 0;
      std::vector<TensorId> loaded;  // marked in tensorMark, cleared below
      for (OpId o : ops) {
        c += opCompute[o];
        for (TensorId t : p.ops[o].inputs) {
          OpId pr = p.producer[t];
          if ((pr < 0 || !inGroup[pr]) && !retainable(p, t) && !tensorMark[t]) {
            tensorMark[t] = 1;
            loaded.push_back(t);
            e += p.size(t);
          }
        }
        for (TensorId t : p.ops[o].outputs) {
          bool outside = p.is_graph_output[t];
          for (OpId cns : p.consumers[t]) outside = outside || !inGroup[cns];
          if (outside && !retainable(p, t)) e += p.size(t);
        }
      }
      for (OpId o : ops) inGroup[o] = 0;
      for (TensorId t : loaded) tensorMark[t] = 0;
      return std::max(c, e / p.bandwidth);
    };
    if (n <= bo.max_cover_ops && !(bo.give_up && bo.give_up())) {
      for (int i = 0; i < n; ++i) idx[ops[i]] = i;
      std::vector<uint32_t> nb(n, 0);
      for (int i = 0; i < n; ++i)
        for (const auto& e : adj[ops[i]])
          if (idx[e.first] >= 0 && linked(e)) nb[i] |= 1u << idx[e.first];
      for (int i = 0; i < n; ++i) idx[ops[i]] = -1;
      // Every connected part once: grow sets by one adjacent op, remembering those seen.
      std::vector<uint32_t> parts;
      bool tooMany = false;
      std::vector<char> seen(size_t{1} << n, 0);
      for (int v = 0; v < n; ++v) {
        seen[1u << v] = 1;
        parts.push_back(1u << v);
      }
      for (size_t i = 0; i < parts.size() && !tooMany; ++i) {
        uint32_t around = 0;
        for (int j = 0; j < n; ++j)
          if (parts[i] >> j & 1) around |= nb[j];
        around &= ~parts[i];
        while (around) {
          const uint32_t np = parts[i] | (around & -around);
          around &= around - 1;
          if (seen[np]) continue;
          seen[np] = 1;
          parts.push_back(np);
          if (static_cast<long>(parts.size()) > bo.max_parts) { tooMany = true; break; }
        }
      }
      if (!tooMany) {
        std::vector<double> f(parts.size());
        for (size_t i = 0; i < parts.size(); ++i) {
          std::vector<OpId> part;
          for (int j = 0; j < n; ++j)
            if (parts[i] >> j & 1) part.push_back(ops[j]);  // topological, as ops is
          f[i] = partFloor(p, m, part).value;
        }
        // Cheapest cover: dp over covered sets; the lowest uncovered op is covered next.
        std::vector<std::vector<int>> byLow(n);
        for (size_t i = 0; i < parts.size(); ++i)
          if (std::isfinite(f[i]))
            for (int j = 0; j < n; ++j)
              if (parts[i] >> j & 1) byLow[j].push_back(static_cast<int>(i));
        const uint32_t full = n == 32 ? ~0u : (1u << n) - 1;
        std::vector<LD> dp(size_t{full} + 1, std::numeric_limits<LD>::infinity());
        std::vector<int> how(size_t{full} + 1, -1);
        std::vector<uint32_t> from(size_t{full} + 1, 0);
        dp[0] = 0;
        for (uint32_t mask = 0; mask < full; ++mask) {
          if (!std::isfinite(static_cast<double>(dp[mask]))) continue;
          const int low = __builtin_ctz(~mask);
          for (int i : byLow[low]) {
            const uint32_t nm = mask | parts[i];
            const LD v = dp[mask] + f[i];
            if (v < dp[nm]) { dp[nm] = v; how[nm] = i; from[nm] = mask; }
          }
        }
        if (std::isfinite(static_cast<double>(dp[full]))) {
          bg.method = "cover";
          bg.parts = static_cast<long>(parts.size());
          bg.value = static_cast<double>(dp[full]);
          for (uint32_t mask = full; mask && how[mask] >= 0; mask = from[mask]) {
            std::vector<OpId> part;
            for (int j = 0; j < n; ++j)
              if (parts[how[mask]] >> j & 1) part.push_back(ops[j]);
            bg.cover.push_back({part, f[how[mask]]});
          }
        }
      }
    }
    if (bg.method.empty()) {
      bg.method = "floors";
      bg.value = static_cast<double>(floors());
    }
    return bg;
  };

  LD total = 0;
  std::map<std::vector<OpId>, BoundGroup> groupCache;
  for (int r = 0; r < no; ++r) {
    if (members[r].empty()) continue;
    const std::vector<OpId>& ops = members[r];
    // A component small enough for the exact cover is one group (the cover prices every part
    // with a floored edge directly). A larger one is split by cutting the edges whose floor is
    // at least theta: either no subgraph keeps a cut edge inside (each then lies in one group,
    // the groups' floors add up) or one does and pays at least the least cut floor. Every theta
    // among the edge floors is tried; the best is kept.
    std::vector<LD> thetas = {std::numeric_limits<LD>::infinity()};
    if (static_cast<int>(ops.size()) > bo.max_cover_ops)
      for (OpId o : ops)
        for (const auto& e : adj[o])
          if (e.second > 0) thetas.push_back(e.second);
    std::sort(thetas.begin(), thetas.end());
    thetas.erase(std::unique(thetas.begin(), thetas.end()), thetas.end());
    // Any choice of thetas is sound; a few spread over the range keep large graphs linear.
    if (thetas.size() > 9 || (bo.give_up && bo.give_up() && thetas.size() > 1)) {
      std::vector<LD> few;
      const size_t want = bo.give_up && bo.give_up() ? 1 : 9;
      for (size_t i = 0; i < want; ++i) few.push_back(thetas[thetas.size() - 1 - i * (thetas.size() - 1) / std::max<size_t>(1, want - 1)]);
      std::sort(few.begin(), few.end());
      few.erase(std::unique(few.begin(), few.end()), few.end());
      thetas = few;
    }
    BoundComponent best;
    best.value = -1;
    for (LD th : thetas) {
      theta = th;
      for (OpId o : ops) sub[o] = o;
      for (OpId o : ops)
        for (const auto& e : adj[o])
          if (linked(e)) sub[find(sub, o)] = find(sub, e.first);
      std::map<int, std::vector<OpId>> groups;
      for (OpId o : ops) groups[find(sub, o)].push_back(o);
      BoundComponent bc;
      bc.ops = ops;
      LD sum = 0;
      for (auto& [root, g] : groups) {
        auto it = groupCache.find(g);
        if (it == groupCache.end()) it = groupCache.emplace(g, groupBound(g)).first;
        bc.groups.push_back(it->second);
        sum += it->second.value;
      }
      bc.edge_floor = static_cast<double>(th);
      bc.value = static_cast<double>(std::min(sum, th));
      if (bc.value > best.value) best = std::move(bc);
    }
    total += best.value;
    lb.components.push_back(std::move(best));
  }
  // Floating point: the parts are long double sums of exact-rational floors; the evaluator sums
  // doubles. Rounding down by 1e-12 relative keeps the bound below a schedule that equals it.
  lb.parts = static_cast<double>(total * (1 - 1e-12L));
  return lb;
}

}  // namespace mlsys
