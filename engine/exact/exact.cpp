// The exact solver (see exact.h for the space, the exactness argument and the algorithm).
#include "engine/exact/exact.h"

#include "cost/model/connected_sets.h"
#include "engine/exact/exact_internal.h"

namespace mlsys {
namespace exact_detail {

i64 nativeTiles(const Problem& p, TensorId t) {
  const i64 N = p.native;
  return ((p.widths[t] + N - 1) / N) * ((p.heights[t] + N - 1) / N);
}

// Solver::setup, step by step: the tensor bits, the per-op floors of the heuristic, the connected
// subgraphs.
void Solver::setup() {
  n_ = p_.numOps();
  allOps_ = n_ == 64 ? ~u64{0} : (u64{1} << n_) - 1;
  indexTensors();
  opFloors();
  enumerateSubgraphs();
  res_.stats.connected_subgraphs = static_cast<int>(subs_.size());
}

// A bit per produced tensor (bitOf_, tensorOfBit_, bitSize_), and the graph outputs' (goMask_).
void Solver::indexTensors() {
  bitOf_.assign(p_.numTensors(), -1);
  for (TensorId t = 0; t < p_.numTensors(); ++t)
    if (p_.producer[t] >= 0) {
      bitOf_[t] = static_cast<int>(tensorOfBit_.size());
      tensorOfBit_.push_back(t);
      bitSize_.push_back(p_.size(t));
      if (p_.is_graph_output[t]) goMask_ |= u64{1} << bitOf_[t];
    }
}

// What the heuristic counts: each op's compute (opLb_) and each graph input's consumers and
// size (graphInputs_).
void Solver::opFloors() {
  const bool native = m_.matmul_compute == ModelOptions::MatmulCompute::NativeDepth;
  i64 minK = 0;
  for (const Op& op : p_.ops)
    if (op.type == OpType::MatMul) minK = minK ? std::min(minK, op.K) : op.K;
  // Per op, the compute it costs wherever it runs: base_cost per tile of its subgraph's grid,
  // at least one tile (the whole grid of its output when that is a graph output); MatMuls under
  // native_depth scale by K_acc/N >= (smallest K)/N (or its own K when it accumulates into a
  // graph output).
  opLb_.assign(n_, 0);
  for (OpId o = 0; o < n_; ++o) {
    const Op& op = p_.ops[o];
    i64 tiles = 1;
    bool goOut = false;
    for (TensorId t : op.outputs)
      if (p_.is_graph_output[t]) {
        tiles = std::max(tiles, nativeTiles(p_, t));
        goOut = true;
      }
    i128 num = static_cast<i128>(op.base_cost) * tiles, den = 1;
    if (native && op.type == OpType::MatMul) {
      num *= goOut ? op.K : minK;
      den = p_.native;
    }
    opLb_[o] = sc_.of(num, den, true);
  }
  for (TensorId t = 0; t < p_.numTensors(); ++t)
    if (p_.producer[t] < 0 && !p_.consumers[t].empty()) {
      u64 cm = 0;
      for (OpId c : p_.consumers[t]) cm |= u64{1} << c;
      graphInputs_.push_back({cm, p_.size(t)});
    }
}

// Every connected op set (V4: linked through tensors produced and consumed inside) that can be a
// subgraph, into subs_, in increasing mask order (the one enumerator: cost/model/connected_sets.h;
// a size limit is upward closed).
void Solver::enumerateSubgraphs() {
  std::vector<u64> adj(n_, 0);
  for (OpId o = 0; o < n_; ++o)
    for (TensorId t : p_.ops[o].inputs)
      if (OpId pr = p_.producer[t]; pr >= 0 && pr != o) {
        adj[o] |= u64{1} << pr;
        adj[pr] |= u64{1} << o;
      }
  std::vector<u64> starts, masks;
  for (int v = 0; v < n_; ++v) starts.push_back(MaskSets::single(v));
  forEachConnectedSet(
      MaskSets{adj}, starts,
      [&](u64 mask) { return o_.max_subgraph_ops <= 0 || popcount(mask) <= o_.max_subgraph_ops; },
      [&](u64 mask) {
        masks.push_back(mask);
        return true;
      },
      std::numeric_limits<long>::max());
  std::sort(masks.begin(), masks.end());
  for (u64 mask : masks) {
    SubInfo s;
    if (describeSubgraph(mask, s)) subs_.push_back(std::move(s));
  }
}

// The facts of the subgraph `mask` (connected): its ops, what it produces, needs and outputs,
// its loads and stores of graph tensors, its compute. False when its outputs do not share one
// shape or it has none.
bool Solver::describeSubgraph(u64 mask, SubInfo& s) const {
  s.ops = mask;
  for (OpId o : p_.topo)
    if (mask >> o & 1) s.list.push_back(o);
  u64 consumedInside = 0;
  std::vector<TensorId> gis;
  for (OpId o : s.list) {
    for (TensorId t : p_.ops[o].outputs) s.produced |= u64{1} << bitOf_[t];
    for (TensorId t : p_.ops[o].inputs) {
      if (bitOf_[t] >= 0) consumedInside |= u64{1} << bitOf_[t];
      else if (std::find(gis.begin(), gis.end(), t) == gis.end()) gis.push_back(t);
    }
  }
  s.need = consumedInside & ~s.produced;
  s.outputs = s.produced & ~consumedInside;
  s.go = s.outputs & goMask_;
  s.retainable = s.produced & ~goMask_;
  for (TensorId t : gis) s.giElems += p_.size(t);
  // the outputs (always non-ephemeral) must share one shape, whatever is retained.
  TensorId ref = -1;
  bool shapeOk = true;
  for (u64 b = s.outputs; b; b &= b - 1) {
    TensorId t = tensorOfBit_[__builtin_ctzll(b)];
    if (ref < 0) ref = t;
    else if (p_.widths[t] != p_.widths[ref] || p_.heights[t] != p_.heights[ref]) shapeOk = false;
    if (p_.is_graph_output[t]) s.goElems += p_.size(t);
  }
  if (!shapeOk || ref < 0) return false;
  s.computeLb = subgraphComputeLb(s, ref);
  return true;
}

// Compute of S, at least: every op costs its base_cost (times K_acc/N >= min K/N under
// native_depth) on every tile of the grid, which has at least the native tiling of O(S) (`ref`,
// one of its outputs).
Cost Solver::subgraphComputeLb(const SubInfo& s, TensorId ref) const {
  const bool native = m_.matmul_compute == ModelOptions::MatmulCompute::NativeDepth;
  i64 minKs = 0;
  for (OpId o : s.list)
    if (p_.ops[o].type == OpType::MatMul) minKs = minKs ? std::min(minKs, p_.ops[o].K) : p_.ops[o].K;
  i128 base = 0;
  for (OpId o : s.list) base += p_.ops[o].base_cost;
  i128 num = base * nativeTiles(p_, ref), den = 1;
  if (native && minKs) {
    // Pointwise ops are not scaled; bound the MatMuls and Pointwise parts separately.
    i128 mm = 0, pw = 0;
    for (OpId o : s.list) (p_.ops[o].type == OpType::MatMul ? mm : pw) += p_.ops[o].base_cost;
    num = (mm * minKs + pw * p_.native) * nativeTiles(p_, ref);
    den = p_.native;
  }
  return sc_.of(num, den, true);
}

Cost Solver::heuristic(u64 cov, u64 wr) const {
  Cost comp = 0;
  for (u64 b = allOps_ & ~cov; b; b &= b - 1) comp += opLb_[__builtin_ctzll(b)];
  i128 el = 0;
  for (u64 b = goMask_ & ~wr; b; b &= b - 1) el += bitSize_[__builtin_ctzll(b)];
  for (const auto& [cm, sz] : graphInputs_)
    if (cm & ~cov) el += sz;
  return std::max(comp, traffic(el));
}

std::vector<TensorId> Solver::tensorsOf(u64 bits) const {
  std::vector<TensorId> v;
  for (; bits; bits &= bits - 1) v.push_back(tensorOfBit_[__builtin_ctzll(bits)]);
  std::sort(v.begin(), v.end());
  return v;
}

Cost Solver::price(const Edge& e, Cost cap) {
  PriceEntry& en = memo_[PriceKey{e.s, e.rin, e.rout}];
  if (!en.exact && cap > en.lb) {
    if (o_.full_space) gs_.runFull(subs_[e.s].list, tensorsOf(e.rin), tensorsOf(e.rout), cap, en);
    else gs_.run(subs_[e.s].list, tensorsOf(e.rin), tensorsOf(e.rout), cap, en);
  }
  return en.exact && en.floor < cap ? en.floor : kInf;
}

std::vector<Edge> Solver::pathTo(int id) const {
  std::vector<Edge> path;
  for (; id >= 0 && nodes_[id].parent >= 0; id = nodes_[id].parent) path.push_back(nodes_[id].edge);
  std::reverse(path.begin(), path.end());
  return path;
}

Schedule Solver::build(const std::vector<Edge>& path) {
  Schedule s;
  for (const Edge& e : path) {
    const PriceEntry& en = entry(e);
    SubgraphSched sg;
    sg.ops = subs_[e.s].list;
    sg.gran = en.g;
    sg.trav = en.tk == TraversalKind::Custom ? Traversal{TraversalKind::Custom, en.order}
                                             : exactTraversal(p_, sg.ops, en.g, en.tk, en.flip);
    sg.retain = tensorsOf(e.rout);
    s.subgraphs.push_back(std::move(sg));
  }
  return s;
}

// Solver::run, step by step: the incumbents, the A* search (exact_search.cpp), the answer.
void Solver::run() {
  setup();
  offerIncumbents();
  chainIncumbent();
  answer(search());
}

// A complete schedule from outside the search becomes the incumbent if it is valid and cheaper.
void Solver::offer(const Schedule& s) {
  Evaluation ev = evaluateSchedule(p_, s, m_);
  if (!ev.valid) return;
  Cost tot = 0;
  for (const auto& r : ev.subgraphs) tot = addCost(tot, sc_.of(r.cost.num, r.cost.den, false));
  if (tot < ub_) {
    ub_ = tot;
    incSched_ = s;
    incIsPath_ = false;
  }
}

// Incumbents: the user's schedule, the engine's greedy construction (baseline, greedy and
// MatMul-chain fusion; milliseconds), and (chainIncumbent) every op alone in topological order.
void Solver::offerIncumbents() {
  if (o_.incumbent) offer(*o_.incumbent);
  if (o_.greedy_incumbent) {
    IncrementalEvaluator ev(p_, m_);
    ev.reset(baselineSchedule(p_, m_));
    auto never = [] { return false; };  // fast, and it must finish to give a schedule
    greedyFusion(ev, never);
    chainFusion(ev, never);
    offer(ev.schedule());
  }
}

// The chain of single ops in topological order, each at its best granularity.
// The chain must be complete when it is the only incumbent; with another one it may be cut
// short by `stop` (pricing one op over the whole granularity space can take seconds on huge
// tensors, and the search workers run this with their deadline).
void Solver::chainIncumbent() {
  try {
    gs_.ignoreStop = ub_ >= kInf;
    std::vector<Edge> chain;
    Cost tot = 0;
    for (OpId o : p_.topo) {
      int s = -1;
      for (size_t i = 0; i < subs_.size(); ++i)
        if (subs_[i].ops == u64{1} << o) s = static_cast<int>(i);
      Edge e{s, 0, 0};
      Cost c = s >= 0 && price(e, kInf) < kInf ? entry(e).best : kInf;  // the price, not the floor
      if (c >= kInf) {
        tot = kInf;
        break;
      }
      tot = addCost(tot, c);
      chain.push_back(e);
    }
    if (tot < ub_) {
      ub_ = tot;
      incPath_ = chain;
      incIsPath_ = true;
    }
  } catch (const Stopped&) {
  }
  gs_.ignoreStop = false;
}

// The answer: the incumbent, re-checked and re-priced by the full evaluator, and the lower bound
// (the incumbent's price when proven, else the least f left on the open list).
void Solver::answer(const SearchEnd& end) {
  ExactStats& st = res_.stats;
  res_.exact_arithmetic = sc_.exact;
  if (ub_ >= kInf) {
    res_.found = false;
    res_.status = end.stopped ? ExactStatus::Stopped : ExactStatus::NoSchedule;
    return;
  }
  Schedule best = incIsPath_ ? build(incPath_) : incSched_;
  Evaluation ev = evaluateSchedule(p_, best, m_);
  if (!ev.valid) {
    res_.found = false;
    std::ostringstream os;  // the rule prints as its name (string or enum)
    os << "internal error: the schedule found is invalid (" << ev.rule << ": " << ev.reason << ")";
    res_.status = ExactStatus::Error;
    res_.message = os.str();
    return;
  }
  Cost tot = 0;
  for (const auto& r : ev.subgraphs) tot = addCost(tot, sc_.of(r.cost.num, r.cost.den, false));
  if (sc_.exact && tot != ub_) {
    res_.found = false;
    res_.status = ExactStatus::Error;
    res_.message = "internal error: the evaluator prices the schedule found differently";
    return;
  }
  res_.found = true;
  res_.schedule = std::move(best);
  res_.latency = ev.total;
  res_.proven_optimal = end.proven && st.lb_violations == 0;
  Cost lb = ub_;
  if (end.bounded) {
    lb = std::min(lb, end.relaxed);
  } else if (!end.proven) {
    Cost qmin = end.frontierLb;
    while (!pq_.empty()) {
      qmin = std::min(qmin, pq_.top().f);
      pq_.pop();
    }
    lb = std::min(lb, qmin);
  }
  res_.lower_bound = res_.proven_optimal ? ev.total : sc_.toDouble(lb);
  res_.status = res_.proven_optimal ? ExactStatus::Optimal : end.bounded ? ExactStatus::Bounded : ExactStatus::Stopped;
}

}  // namespace exact_detail

using exact_detail::Overflow;
using exact_detail::Solver;

GranResult exactGranularity(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                            const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                            const std::function<bool()>& stop, bool snakes, bool mirrors) {
  using namespace exact_detail;
  GranResult out;
  ExactOptions o;
  o.snakes = snakes;
  o.mirrors = mirrors;
  ExactStats st;
  // One common denominator for this subgraph: B * lcm of its compute denominators.
  i128 lcmD = m.matmul_compute == ModelOptions::MatmulCompute::NativeDepth ? p.native : 1;
  bool exactArith = true;
  for (OpId op : ops)
    if (p.ops[op].type == OpType::MatMul && exactArith) {
      i128 g = gcd128(lcmD, p.ops[op].K);
      if (__builtin_mul_overflow(lcmD / g, static_cast<i128>(p.ops[op].K), &lcmD) || lcmD > (i128(1) << 60))
        exactArith = false;
    }
  for (int attempt = 0; attempt < 2; ++attempt) {
    Scale sc;
    sc.exact = exactArith;
    sc.L = exactArith ? lcmD * p.bandwidth : 1;
    GranSearch gs(p, m, o, sc, st, stop);
    PriceEntry e;
    try {
      gs.run(ops, rin, rout, kInf, e);
    } catch (const Overflow&) {
      exactArith = false;
      continue;
    } catch (const Stopped&) {
    }
    out.configs_priced = st.configs_priced;
    if (e.best < kInf) {
      out.found = true;
      out.proven = e.exact;
      out.g = e.g;
      out.trav = exactTraversal(p, ops, e.g, e.tk, e.flip);
      out.latency = sc.toDouble(e.best);
    }
    break;
  }
  return out;
}

ExactResult solveExact(const Problem& p, const ModelOptions& m, const ExactOptions& opt,
                       const std::function<bool()>& stop) {
  const auto t0 = std::chrono::steady_clock::now();
  ExactResult res;
  auto finish = [&] {
    res.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
  };
  int produced = 0;
  for (TensorId t = 0; t < p.numTensors(); ++t) produced += p.producer[t] >= 0;
  if (p.numOps() > std::min(opt.max_ops, 63) || produced > 64) {
    res.status = ExactStatus::TooLarge;
    if (opt.incumbent) {
      Evaluation ev = evaluateSchedule(p, *opt.incumbent, m);
      if (ev.valid) {
        res.found = true;
        res.schedule = *opt.incumbent;
        res.latency = ev.total;
      }
    }
    return finish();
  }
  // The common denominator: B * lcm of every compute denominator D (K of a MatMul, N, 1).
  i128 lcmD = 1;
  bool exactArith = true;
  auto mulLcm = [&](i128 d) {
    i128 g = gcd128(lcmD, d);
    if (__builtin_mul_overflow(lcmD / g, d, &lcmD) || lcmD > (i128(1) << 60)) exactArith = false;
  };
  if (m.matmul_compute == ModelOptions::MatmulCompute::NativeDepth) mulLcm(p.native);
  else
    for (const Op& op : p.ops)
      if (op.type == OpType::MatMul && exactArith) mulLcm(op.K);
  const i128 L = exactArith ? lcmD * p.bandwidth : 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    res = ExactResult{};
    try {
      Solver s(p, m, opt, stop, res, exactArith ? L : 0);
      s.run();
      break;
    } catch (const Overflow&) {
      exactArith = false;  // start again with rounded arithmetic
    }
  }
  return finish();
}

}  // namespace mlsys
