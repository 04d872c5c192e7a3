// The brute-force reference (brute_force.h): candidate lists, the pricing of one subgraph over
// them, and the Dijkstra over whole schedules. Only the law prices anything (planSubgraph,
// costSubgraph, evaluateSchedule); this file only enumerates and compares exact rationals.
#include "tests/soundness/brute_force.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "cost/pricing/subgraph.h"
#include "tests/soundness/random_problem.h"

namespace mlsys::soundness {
namespace {

using Clock = std::chrono::steady_clock;

template <class T>
void shuffle(std::vector<T>& v, std::mt19937_64& g) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(g, i)]);
}

// a/b < c/d for positive denominators, exactly (long double if the products overflow).
bool less(i128 a, i128 b, i128 c, i128 d) {
  i128 x, y;
  if (!__builtin_mul_overflow(a, d, &x) && !__builtin_mul_overflow(c, b, &y)) return x < y;
  return static_cast<long double>(a) / static_cast<long double>(b) <
         static_cast<long double>(c) / static_cast<long double>(d);
}

struct Rat {
  i128 n = 0, d = 1;
  bool operator<(const Rat& o) const { return less(n, d, o.n, o.d); }
  Rat plus(i128 n2, i128 d2) const {
    const i128 g = gcd128(d, d2);
    i128 l, a, b, s;
    if (__builtin_mul_overflow(d / g, d2, &l) || __builtin_mul_overflow(n, l / d, &a) ||
        __builtin_mul_overflow(n2, l / d2, &b) || __builtin_add_overflow(a, b, &s))
      throw std::overflow_error("brute force: the exact total left the 128-bit range");
    const i128 h = gcd128(s, l);
    return h > 1 ? Rat{s / h, l / h} : Rat{s, l};
  }
};

std::vector<OpId> topoSorted(const Problem& p, std::vector<OpId> ops) {
  std::sort(ops.begin(), ops.end(), [&](OpId a, OpId b) { return p.topo_pos[a] < p.topo_pos[b]; });
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

std::vector<TensorId> sortedUnique(std::vector<TensorId> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// P(S), the consumed tensors, boundary inputs (consumed, not produced) and O(S) (produced, not
// consumed) of an op set; sorted.
struct Sets {
  std::vector<TensorId> produced, consumed, boundary, outputs;
};

Sets setsOf(const Problem& p, const std::vector<OpId>& ops) {
  Sets s;
  for (OpId o : ops) {
    for (TensorId t : p.ops[o].outputs) s.produced.push_back(t);
    for (TensorId t : p.ops[o].inputs) s.consumed.push_back(t);
  }
  s.produced = sortedUnique(s.produced);
  s.consumed = sortedUnique(s.consumed);
  std::set_difference(s.consumed.begin(), s.consumed.end(), s.produced.begin(), s.produced.end(),
                      std::back_inserter(s.boundary));
  std::set_difference(s.produced.begin(), s.produced.end(), s.consumed.begin(), s.consumed.end(),
                      std::back_inserter(s.outputs));
  return s;
}

// Side candidates for every dim of `dims` (the union), with a priority: 0 tile-count sides, cap,
// dim; 1 divisors and fixed sides; 2 random.
std::vector<std::pair<i64, int>> sidesRanked(const std::vector<i64>& dims, i64 cap, const Space& sp, uint64_t salt) {
  std::map<i64, int> got;
  auto add = [&](i64 v, int prio) {
    if (v < 1 || v > cap) return;
    auto [it, fresh] = got.emplace(v, prio);
    if (!fresh) it->second = std::min(it->second, prio);
  };
  for (i64 dim : dims) {
    if (cap < 1 || dim < 1) continue;
    const i64 c0 = (dim + cap - 1) / cap;  // the least tile count
    for (i64 c = c0; c < c0 + sp.tile_counts && c <= dim; ++c) {
      add((dim + c - 1) / c, 0);                                          // the smallest side with ceil(dim / side) = c
      add(c == 1 ? cap : std::min(cap, (dim + c - 2) / (c - 1) - 1), 0);  // the largest
    }
    add(cap, 0);
    if (dim <= cap) add(dim, 0);
    if (sp.divisors)
      for (i64 v = 1; v <= cap && v <= dim; ++v)
        if (dim % v == 0) add(v, 1);
    for (i64 v : sp.fixed_sides) add(v, 1);
    std::mt19937_64 g(mix64(sp.seed ^ mix64(salt ^ static_cast<uint64_t>(dim) * 0x100000001b3ULL)));
    for (int i = 0; i < sp.random_sides; ++i) add(1 + static_cast<i64>(below(g, static_cast<uint64_t>(cap))), 2);
  }
  return std::vector<std::pair<i64, int>>(got.begin(), got.end());
}

}  // namespace

std::vector<Granularity> granularityCandidates(const Problem& p, const ModelOptions& m, const std::vector<OpId>& listed,
                                               const Space& sp) {
  const std::vector<OpId> ops = topoSorted(p, listed);
  std::vector<Granularity> out;
  if (sp.with_ci) out = granularityCandidates(p, m, ops, Space::ci());
  const Sets s = setsOf(p, ops);
  struct RankedGran {
    Granularity g;
    int prio;
  };
  if (s.outputs.empty()) return out;
  const TensorId ref = s.outputs.front();
  uint64_t salt = 0x51ed;
  for (OpId o : ops) salt = mix64(salt ^ static_cast<uint64_t>(o));
  const i64 N = p.native;
  std::vector<i64> ks;
  for (OpId o : ops)
    if (p.ops[o].type == OpType::MatMul) ks.push_back(p.ops[o].K);
  std::vector<std::pair<i64, int>> kc{{1, 0}};
  if (!ks.empty()) {
    i64 kcap = *std::min_element(ks.begin(), ks.end());
    if (m.k_limit == ModelOptions::KLimit::Native) kcap = std::min(kcap, N);
    kc = sidesRanked(ks, kcap, sp, salt + 3);
  }
  const auto wc = sidesRanked({p.widths[ref]}, N, sp, salt + 1), hc = sidesRanked({p.heights[ref]}, N, sp, salt + 2);
  std::vector<RankedGran> all;
  for (auto [w, pw] : wc)
    for (auto [h, ph] : hc)
      for (auto [k, pk] : kc) all.push_back({{w, h, k}, std::max({pw, ph, pk})});
  if (static_cast<i64>(all.size()) > sp.max_grans) {
    // Half the budget: the triples of near-equal sides first (they cover every memory size, from
    // the smallest tiles up), without random sides; the other half drawn from the rest.
    std::mt19937_64 g(mix64(sp.seed ^ salt));
    shuffle(all, g);
    auto spread = [&](const RankedGran& r) {
      const i64 k = ks.empty() ? r.g.w : r.g.k, hi = std::max({r.g.w, r.g.h, k}), lo = std::min({r.g.w, r.g.h, k});
      int e = 0;
      while (lo << (e + 1) <= hi) ++e;
      return (r.prio >= 2 ? 64 : 0) + e;
    };
    std::vector<RankedGran> ranked = all, kept;
    std::stable_sort(ranked.begin(), ranked.end(), [&](auto& a, auto& b) { return spread(a) < spread(b); });
    const size_t budget = static_cast<size_t>(std::max(sp.max_grans, 1)), half = (budget + 1) / 2;
    std::set<std::array<i64, 3>> seen;
    for (const std::vector<RankedGran>* src : {&ranked, &all})
      for (size_t i = 0; i < src->size() && kept.size() < (src == &ranked ? half : budget); ++i)
        if (const Granularity& x = (*src)[i].g; seen.insert({x.w, x.h, x.k}).second) kept.push_back((*src)[i]);
    all = std::move(kept);
  }
  for (const auto& r : all)
    if (std::find(out.begin(), out.end(), r.g) == out.end()) out.push_back(r.g);
  return out;
}

std::vector<Traversal> orderCandidates(i64 ntw, i64 nth, const Space& sp) {
  const i64 T = ntw * nth;
  std::vector<Traversal> out{Traversal{}};
  if (T <= 1) return out;
  std::set<std::vector<int32_t>> seen{traversalOrder(Traversal{}, ntw, nth)};
  auto addOrder = [&](Traversal t) {
    if (seen.insert(t.kind == TraversalKind::Custom ? t.order : traversalOrder(t, ntw, nth)).second)
      out.push_back(std::move(t));
  };
  addOrder({TraversalKind::RowSnake, {}});
  addOrder({TraversalKind::ColSnake, {}});
  if (T > sp.max_custom_tiles) return out;
  std::vector<int32_t> colMajor;
  for (i64 c = 0; c < ntw; ++c)
    for (i64 r = 0; r < nth; ++r) colMajor.push_back(static_cast<int32_t>(r * ntw + c));
  std::vector<std::vector<int32_t>> walks{traversalOrder(Traversal{}, ntw, nth),
                                          traversalOrder({TraversalKind::RowSnake, {}}, ntw, nth),
                                          traversalOrder({TraversalKind::ColSnake, {}}, ntw, nth), colMajor};
  for (int corner = 0; corner < (sp.corners ? 4 : 1); ++corner)  // the four walks and their reverses first
    for (bool rev : {false, true})
      for (const auto& w : walks)
        addOrder({TraversalKind::Custom, mirroredOrder(w, ntw, nth, corner & 1, corner & 2, rev)});
  std::mt19937_64 g(mix64(sp.seed ^ mix64(static_cast<uint64_t>(ntw) << 32 ^ static_cast<uint64_t>(nth))));
  std::vector<int32_t> perm = walks[0];
  for (int i = 0; i < sp.random_orders && T > sp.all_orders_up_to; ++i) {
    shuffle(perm, g);
    addOrder({TraversalKind::Custom, perm});
  }
  std::sort(perm.begin(), perm.end());
  if (T <= sp.all_orders_up_to)  // the rest of the permutations, after the walks
    while (std::next_permutation(perm.begin(), perm.end())) addOrder({TraversalKind::Custom, perm});
  return out;
}

namespace {

// Prices subgraphs over the space, with caches of the candidate lists and a deadline.
class Pricer {
 public:
  Pricer(const Problem& p, const ModelOptions& m, const Space& sp, Clock::time_point deadline, bool limited)
      : p_(p), m_(m), sp_(sp), deadline_(deadline), limited_(limited) {}

  bool timed_out = false;
  long long cost_calls = 0;

  SubgraphBest price(const std::vector<OpId>& ops, const std::vector<TensorId>& rin,
                     const std::vector<TensorId>& rout) {
    SubgraphBest b;
    b.ops = ops;
    b.retained_in = sortedUnique(rin);
    b.retained_out = sortedUnique(rout);
    const long long calls0 = cost_calls;
    auto git = grans_.find(ops);
    if (git == grans_.end()) git = grans_.emplace(ops, granularityCandidates(p_, m_, ops, sp_)).first;
    for (const Granularity& g : git->second) {
      if (limited_ && Clock::now() > deadline_) {
        timed_out = true;
        break;
      }
      const SubgraphPlan pl = planSubgraph(p_, m_, ops, g, b.retained_in, b.retained_out);
      const Rule r = pl.rule;  // these are checked before the granularity is read (plan.cpp): no g fixes them
      if (r == Rule::V1 || r == Rule::V3 || r == Rule::V4 || r == Rule::V6 || r == Rule::V7 || r == Rule::A6) break;
      if (!pl.valid) continue;
      if (!pl.fast_ok && pl.steps() > sp_.max_walk_steps) continue;
      priceOrders(pl, b);
    }
    b.cost_calls = cost_calls - calls0;
    return b;
  }

 private:
  void priceOrders(const SubgraphPlan& pl, SubgraphBest& b) {
    auto oit = orders_.find({pl.ntw, pl.nth});
    if (oit == orders_.end())
      oit = orders_.emplace(std::make_pair(pl.ntw, pl.nth), orderCandidates(pl.ntw, pl.nth, sp_)).first;
    const auto& os = oit->second;
    size_t n = os.size();
    if (!pl.fast_ok) n = std::clamp<size_t>(static_cast<size_t>(sp_.walk_budget / std::max<i64>(1, pl.steps())), 1, n);
    for (size_t i = 0; i < n; ++i) {
      const SubgraphCost c = costSubgraph(p_, pl, os[i]);
      ++cost_calls;
      if (!c.valid) {
        // The working set of a step does not depend on the step before it (W1, W2): a capacity
        // overflow in raster order is one in every order.
        if (i == 0 && c.rule == Rule::V11) return;
        continue;
      }
      if (!b.valid || less(c.num, c.den, b.num, b.den))
        std::tie(b.valid, b.num, b.den, b.latency, b.gran, b.trav) =
            std::tuple(true, c.num, c.den, c.latency, pl.g, os[i]);
    }
  }

  const Problem& p_;
  const ModelOptions& m_;
  const Space& sp_;
  Clock::time_point deadline_;
  bool limited_;
  std::map<std::vector<OpId>, std::vector<Granularity>> grans_;
  std::map<std::pair<i64, i64>, std::vector<Traversal>> orders_;
};

std::vector<TensorId> maskToList(uint64_t mask) {
  std::vector<TensorId> v;
  for (TensorId t = 0; mask; ++t, mask >>= 1)
    if (mask & 1) v.push_back(t);
  return v;
}

// A step of the Dijkstra: a connected op set (V4) whose non-ephemeral outputs share one shape
// no granularity or retained set makes it valid otherwise), as tensor masks.
struct Subset {
  std::vector<OpId> ops;  // topological
  uint32_t opmask = 0;
  uint64_t boundary = 0, outputs = 0, retainable = 0;
};

std::vector<Subset> connectedSubsets(const Problem& p) {
  auto maskOf = [](const std::vector<TensorId>& v) {
    return std::accumulate(v.begin(), v.end(), uint64_t{0},
                           [](uint64_t m, TensorId t) { return m | uint64_t{1} << t; });
  };
  const int n = p.numOps();
  std::vector<Subset> out;
  for (uint32_t mask = 1; mask < (uint32_t{1} << n); ++mask) {
    std::vector<OpId> ops;
    for (OpId o = 0; o < n; ++o)
      if (mask >> o & 1) ops.push_back(o);
    ops = topoSorted(p, ops);
    // V4: linked through tensors produced and consumed inside the set (a shared input does not link).
    uint32_t seen = uint32_t{1} << ops.front(), grown = 0;
    while (grown != seen) {
      grown = seen;
      for (OpId o : ops)
        for (TensorId t : p.ops[o].inputs) {
          const OpId pr = p.producer[t];
          if (pr >= 0 && (mask >> pr & 1) && ((seen >> o & 1) || (seen >> pr & 1)))
            seen |= (uint32_t{1} << o) | (uint32_t{1} << pr);
        }
    }
    if (seen != mask) continue;
    const Sets s = setsOf(p, ops);
    bool oneShape = true;
    for (TensorId t : s.outputs)
      oneShape = oneShape && p.widths[t] == p.widths[s.outputs[0]] && p.heights[t] == p.heights[s.outputs[0]];
    if (!oneShape) continue;
    Subset sub{ops, mask, maskOf(s.boundary), maskOf(s.outputs), 0};
    for (TensorId t : s.produced)
      if (!p.is_graph_output[t]) sub.retainable |= uint64_t{1} << t;
    out.push_back(std::move(sub));
  }
  return out;
}

struct State {  // ops covered, tensors written to slow memory, tensors retained by the last subgraph
  uint32_t covered = 0;
  uint64_t written = 0, retained = 0;
  bool operator==(const State&) const = default;
};
struct Key {  // a priced step: the subset, its retained-in and retained-out sets
  int subset;
  uint64_t rin, rout;
  bool operator==(const Key&) const = default;
};
struct Hash {
  size_t operator()(const State& s) const { return mix64(mix64(s.covered ^ mix64(s.written)) ^ s.retained); }
  size_t operator()(const Key& k) const {
    return mix64(mix64(static_cast<uint64_t>(k.subset) ^ mix64(k.rin)) ^ k.rout);
  }
};
struct Node {
  State s;
  Rat dist;
  int parent = -1, subset = -1;
  bool done = false;
};

// Rebuilds the schedule from the goal's parents and re-checks it with evaluateSchedule.
void finish(const Problem& p, const ModelOptions& m, const std::vector<Node>& nodes,
            const std::unordered_map<Key, SubgraphBest, Hash>& cache, int goal, GraphBest& out) {
  std::vector<const SubgraphBest*> steps;
  for (int i = goal; nodes[i].parent >= 0; i = nodes[i].parent)
    steps.push_back(&cache.at({nodes[i].subset, nodes[nodes[i].parent].s.retained, nodes[i].s.retained}));
  std::reverse(steps.begin(), steps.end());
  for (const SubgraphBest* b : steps) {
    out.schedule.subgraphs.push_back({b->ops, b->gran, b->trav, b->retained_out});
    out.latencies.push_back(b->latency);
  }
  std::tie(out.found, out.num, out.den) = std::tuple(true, nodes[goal].dist.n, nodes[goal].dist.d);
  out.total = toDouble(out.num, out.den);
  const Evaluation ev = evaluateSchedule(p, out.schedule, m);
  bool same = ev.valid && ev.subgraphs.size() == steps.size();
  for (size_t i = 0; same && i < steps.size(); ++i) {
    const SubgraphCost& c = ev.subgraphs[i].cost;
    same = !less(c.num, c.den, steps[i]->num, steps[i]->den) && !less(steps[i]->num, steps[i]->den, c.num, c.den);
  }
  if (!same || std::abs(ev.total - out.total) > 1e-9 * std::max(1.0, out.total))
    throw std::logic_error(
        "brute force: evaluateSchedule disagrees with the reference's schedule on '" + p.name +
        "': " + (ev.valid ? "total " + std::to_string(ev.total) + " vs " + std::to_string(out.total) : ev.reason));
}

}  // namespace

std::vector<i64> sideCandidates(i64 dim, i64 cap, const Space& space, uint64_t salt) {
  std::vector<i64> v;
  for (auto [side, prio] : sidesRanked({dim}, cap, space, salt)) v.push_back(side);
  return v;
}

SubgraphBest priceSubgraph(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                           const std::vector<TensorId>& retained_in, const std::vector<TensorId>& retained_out,
                           const Space& space) {
  Pricer pr(p, m, space, Clock::now(), false);
  return pr.price(topoSorted(p, ops), retained_in, retained_out);
}

SubgraphBest bestSubgraph(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops, const Space& space) {
  const std::vector<OpId> sorted = topoSorted(p, ops);
  const Sets s = setsOf(p, sorted);
  std::vector<TensorId> inCand, outCand;
  for (TensorId t : s.boundary)
    if (p.producer[t] >= 0 && !p.is_graph_output[t]) inCand.push_back(t);
  for (TensorId t : s.produced)
    if (!p.is_graph_output[t]) outCand.push_back(t);
  if (inCand.size() + outCand.size() > 20) throw std::invalid_argument("bestSubgraph: too many retained-set choices");
  auto pick = [](const std::vector<TensorId>& from, uint64_t mask) {
    std::vector<TensorId> v;
    for (size_t i = 0; i < from.size(); ++i)
      if (mask >> i & 1) v.push_back(from[i]);
    return v;
  };
  Pricer pr(p, m, space, Clock::now(), false);
  SubgraphBest best;
  best.ops = sorted;
  long long calls = 0;
  for (uint64_t a = 0; a < (uint64_t{1} << inCand.size()); ++a)
    for (uint64_t b = 0; b < (uint64_t{1} << outCand.size()); ++b) {
      SubgraphBest c = pr.price(sorted, pick(inCand, a), pick(outCand, b));
      calls += c.cost_calls;
      if (c.valid && (!best.valid || less(c.num, c.den, best.num, best.den))) best = std::move(c);
    }
  best.cost_calls = calls;
  return best;
}

GraphBest bestSchedule(const Problem& p, const ModelOptions& m, const Space& space, double time_limit_s) {
  if (p.numOps() > 20 || p.numTensors() > 64)
    throw std::invalid_argument("bestSchedule: at most 20 ops and 64 tensors, got " + std::to_string(p.numOps()) +
                                " and " + std::to_string(p.numTensors()));
  const auto t0 = Clock::now();
  const bool limited = time_limit_s > 0;
  Pricer pr(p, m, space, t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit_s)),
            limited);
  const std::vector<Subset> subs = connectedSubsets(p);
  uint64_t inputs = 0, outputs = 0;
  for (TensorId t = 0; t < p.numTensors(); ++t) {
    if (p.producer[t] < 0) inputs |= uint64_t{1} << t;
    if (p.is_graph_output[t]) outputs |= uint64_t{1} << t;
  }
  const uint32_t all = static_cast<uint32_t>((uint64_t{1} << p.numOps()) - 1);
  GraphBest out;
  std::unordered_map<Key, SubgraphBest, Hash> cache;
  std::vector<Node> nodes{Node{}};
  std::unordered_map<State, int, Hash> index{{State{}, 0}};
  using Item = std::pair<Rat, int>;
  auto later = [](const Item& a, const Item& b) {
    return b.first < a.first || (!(a.first < b.first) && a.second > b.second);
  };
  std::priority_queue<Item, std::vector<Item>, decltype(later)> pq(later);
  pq.push({Rat{}, 0});
  int goal = -1;
  bool aborted = false;
  while (!pq.empty() && goal < 0 && !aborted) {
    const auto [d, i] = pq.top();
    pq.pop();
    if (nodes[i].done || nodes[i].dist < d) continue;
    nodes[i].done = true;
    ++out.states;
    const State s = nodes[i].s;
    if (s.covered == all && (s.written & outputs) == outputs) goal = i;
    if (goal >= 0 || (limited && Clock::now() > t0 + std::chrono::duration<double>(time_limit_s))) {
      aborted = goal < 0;
      break;
    }
    const uint64_t avail = inputs | s.written | s.retained;
    for (int k = 0; k < static_cast<int>(subs.size()) && !aborted; ++k) {
      const Subset& sub = subs[k];
      if (sub.boundary & ~avail) continue;                                         // V5
      for (uint64_t rout = 0;; rout = (rout - sub.retainable) & sub.retainable) {  // ascending submasks
        const State ns{s.covered | sub.opmask, s.written | (sub.outputs & ~rout), rout};
        if (!(ns == s) && std::popcount(rout) <= space.max_retained) {
          ++out.transitions;
          auto it = cache.find({k, s.retained, rout});
          if (it == cache.end()) {
            SubgraphBest b = pr.price(sub.ops, maskToList(s.retained), maskToList(rout));
            if ((aborted = pr.timed_out)) break;
            ++out.priced;
            it = cache.emplace(Key{k, s.retained, rout}, std::move(b)).first;
          }
          if (it->second.valid) {
            const Rat nd = d.plus(it->second.num, it->second.den);
            auto [jt, fresh] = index.emplace(ns, static_cast<int>(nodes.size()));
            if (fresh) nodes.push_back({ns, nd, i, k, false});
            Node& nj = nodes[jt->second];
            if (fresh || (!nj.done && nd < nj.dist)) {
              nj.dist = nd;
              nj.parent = i;
              nj.subset = k;
              pq.push({nd, jt->second});
            }
          }
        }
        if (rout == sub.retainable) break;
      }
    }
  }
  out.cost_calls = pr.cost_calls;
  out.finished = !aborted;
  if (goal >= 0) finish(p, m, nodes, cache, goal, out);
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

}  // namespace mlsys::soundness
