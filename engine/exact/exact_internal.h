// Internal to the exact solver (engine/exact/exact.cpp: setup, incumbents, answer;
// engine/exact/exact_search.cpp: the A* search; engine/exact/exact_gran.cpp: the granularity
// search): exact arithmetic over one common denominator, the granularity search for one (ops,
// retained-in, retained-out), and the solver.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <queue>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cost/pricing/incremental.h"
#include "cost/pricing/subgraph.h"
#include "engine/construct/construct.h"
#include "engine/exact/exact.h"

namespace mlsys::exact_detail {

using u64 = uint64_t;
using Cost = i128;  // a latency times the common denominator L (exact), or rounded (see Scale)
constexpr Cost kInf = Cost(1) << 125;
constexpr Cost kMaxValue = Cost(1) << 118;  // larger values: switch to rounded arithmetic

struct Overflow {};  // thrown when exact arithmetic would leave its range
struct Stopped {};   // thrown when `stop` fires inside a granularity search

inline int popcount(u64 x) { return __builtin_popcountll(x); }

// Latencies num/den (den = D*B, D = K_acc, N or 1) as integers over one common denominator L.
struct Scale {
  bool exact = true;
  i128 L = 1;
  static constexpr long double kApprox = 4294967296.0L;  // 2^32 when rounded

  // num/den * L; `down`: rounded down when inexact (lower bounds), else to nearest.
  Cost of(i128 num, i128 den, bool down) const {
    if (exact) {
      if (den <= 0 || L % den != 0) throw Overflow{};
      i128 r;
      if (__builtin_mul_overflow(num, L / den, &r) || r > kMaxValue) throw Overflow{};
      return r;
    }
    long double v = static_cast<long double>(num) / static_cast<long double>(den) * kApprox;
    if (v > static_cast<long double>(kMaxValue)) v = static_cast<long double>(kMaxValue);
    return static_cast<Cost>(down ? std::floor(v) : std::nearbyint(v));
  }
  double toDouble(Cost c) const {
    if (exact) return mlsys::toDouble(c, L);
    return static_cast<double>(static_cast<long double>(c) / kApprox);
  }
};

inline Cost addCost(Cost a, Cost b) {
  if (a >= kInf || b >= kInf) return kInf;
  Cost r = a + b;
  if (r > kMaxValue) throw Overflow{};
  return r;
}

// Distinct values ceil(dim / n), n >= 1, that are <= limit: for every achievable count of
// intervals the smallest side giving it. O(sqrt(dim)).
inline std::vector<i64> smallestSides(i64 dim, i64 limit) {
  std::vector<i64> v;
  i64 n = 1;
  while (n <= dim) {
    i64 s = (dim + n - 1) / n;
    if (s <= limit) v.push_back(s);
    if (s == 1) break;
    n = (dim + (s - 1) - 1) / (s - 1);  // smallest n with ceil(dim / n) <= s - 1
  }
  return v;
}

inline void addSide(std::vector<i64>& v, i64 s, i64 limit) {
  if (s >= 1 && s <= limit && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

// ---------------------------------------------------------------------------------------------
// The granularity search for one (ops, retained-in, retained-out).

struct PriceEntry {
  Cost best = kInf;    // best price found (an upper bound; exact when `exact`)
  bool exact = false;  // `best` is the minimum over the granularity space (kInf: invalid)
  // The least any configuration of the space can cost, when `exact` (== best, except in the
  // full space, where orders that are not priced are bounded by their any-order floor).
  Cost floor = kInf;
  Cost lb = 0;  // when not exact: every configuration costs >= lb
  Granularity g;
  TraversalKind tk = TraversalKind::Raster;
  uint8_t flip = 0;            // exactTraversal's mirror bits
  std::vector<int32_t> order;  // tk Custom (full space, small grids): the tile order
};

// The orders the solver prices, by index (kind | flip << 2 in a candidate).
inline constexpr TraversalKind kKinds[3] = {TraversalKind::Raster, TraversalKind::RowSnake, TraversalKind::ColSnake};

// Grids of at most this many tiles also try the traversals from the other corners.
inline constexpr i64 kMaxMirroredTiles = 4096;

// The traversal the solver means by (kind, flip) on an nw x nh grid: the named order when flip
// is 0, else that order mirrored (bit 0: columns, bit 1: rows), written out.
inline Traversal exactTraversal(TraversalKind tk, int flip, i64 nw, i64 nh) {
  if (flip == 0) return Traversal{tk, {}};
  return Traversal{TraversalKind::Custom,
                   mirroredOrder(traversalOrder({tk, {}}, nw, nh), nw, nh, flip & 1, flip & 2, false)};
}

// The same for a subgraph `ops` at granularity g (its grid is derived only for a mirrored start).
inline Traversal exactTraversal(const Problem& p, const std::vector<OpId>& ops, Granularity g, TraversalKind tk,
                                int flip) {
  if (flip == 0) return Traversal{tk, {}};
  SubgraphSched sg;
  sg.ops = ops;
  sg.gran = g;
  const auto [nw, nh] = subgraphGrid(p, sg);
  return exactTraversal(tk, flip, nw, nh);
}

class GranSearch {
 public:
  GranSearch(const Problem& p, const ModelOptions& m, const ExactOptions& o, const Scale& sc, ExactStats& st,
             const std::function<bool()>& stop)
      : p_(p), m_(m), o_(o), sc_(sc), st_(st), stop_(stop) {}

  // Searches until the best price is exact or proven >= cap. `ops` in topological order.
  // Returns false when the subgraph is invalid at every granularity (e then exact with kInf).
  void run(const std::vector<OpId>& ops, const std::vector<TensorId>& rin, const std::vector<TensorId>& rout, Cost cap,
           PriceEntry& e);
  // The same over the spec's whole space (ExactOptions::full_space; exact_full.cpp): e.floor
  // is final when e.exact; e.best is the best priced configuration (kInf when none is).
  void runFull(const std::vector<OpId>& ops, const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
               Cost cap, PriceEntry& e);
  bool ignoreStop = false;  // while building the first incumbent (it must be complete)
  // Before each costSubgraph: ExactOptions::take_pricing refused throws Stopped, ignoreStop or not.
  void takePricing() const {
    if (o_.take_pricing && !o_.take_pricing()) throw Stopped{};
  }

 private:
  struct Tensor {
    TensorId t;
    i64 size, Ht, Wt;
    std::vector<std::pair<Ext, Ext>> tpl;
  };
  struct Cand {
    Cost lb;
    uint16_t wi, hi, ki;
    uint8_t tk;
    bool wsPruned;  // verify mode: the capacity bound says it cannot fit
    bool operator<(const Cand& o) const { return lb < o.lb; }
  };

  struct Grid {
    i64 w, h, k, nw, nh, nk;
  };
  // The granularity space of one subgraph and the facts its lower bounds use (set by the first
  // steps of run, then read only).
  struct Space {
    i64 W = 0, H = 0;        // the grid shape (of any output of S: A-6)
    i64 wTop = 0, hTop = 0;  // the largest sides: min(N, W) and min(N, H), or a V9 side up to N
    i64 kmax = 0;            // the largest k (V8; 1 without a MatMul)
    bool anyMM = false;
    std::vector<i64> extraW, extraH;  // sides that V9 may need (K of a MatMul fed by a Pointwise)
    std::vector<i64> ws, hs, ks;      // the sides tried, largest first
    i64 Kacc = 0, D = 0, B = 0;
    i128 den = 1;                // D * B: the denominator of every bound (before the scale)
    std::vector<Tensor> tens;    // slice templates grouped by tensor
    i128 cTile = 0, stores = 0;  // compute of one tile and elements stored, at least
    i64 wsConst = 0, nStore = 0, nAcc = 0;
  };
  // What pricing has seen so far in one run.
  struct Pricing {
    Pricing(const std::vector<OpId>& ops_, const std::vector<TensorId>& rin_, const std::vector<TensorId>& rout_,
            PriceEntry& e_)
        : ops(ops_), rin(rin_), rout(rout_), e(e_), best(e_.best) {}
    const std::vector<OpId>& ops;
    const std::vector<TensorId>& rin;
    const std::vector<TensorId>& rout;
    PriceEntry& e;
    Cost best;  // e.best, lowered by pricing
    u64 attempts = 0;
    std::unordered_map<u64, SubgraphPlan> plans;
    std::unordered_set<u64> priced;
  };

  // The steps of run (exact_gran.cpp says what each does).
  bool probeSpace(const std::vector<OpId>& ops, const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                  Space& s, SubgraphPlan& probe, PriceEntry& e);
  bool shapeOf(const std::vector<OpId>& ops, Space& s) const;
  void listSides(const SubgraphPlan& probe, Space& s) const;
  void boundFacts(const SubgraphPlan& probe, Space& s) const;
  Grid gridOf(const Space& s, size_t wi, size_t hi, size_t ki) const;
  i128 loads(const Space& s, const Tensor& x, const Grid& g, TraversalKind tk, int flip) const;
  i128 firstWs(const Space& s, const Grid& g) const;
  Cost lbOf(const Space& s, const Grid& g, TraversalKind tk, int flip) const;
  template <class Fn>
  void forEach(const Space& s, Cost limit, Fn&& fn) const;
  void price(const Space& s, Pricing& pr, const Cand& c);
  void seedPass(const Space& s, Pricing& pr, Cost cap);
  void fullPass(const Space& s, Pricing& pr, Cost cap);
  // The full space's steps (exact_full.cpp).
  Cost anyOrderWeak(const Space& s, const Grid& g) const;
  Cost gridFloor(const Space& s, Pricing& pr, const Grid& g);
  Cost classFloor(const Space& s, Pricing& pr, const Grid& lo, const Grid& hi);
  void priceOrders(const Space& s, Pricing& pr, const Grid& g);
  bool priceEveryOrder(Pricing& pr, const Grid& g);
  const SubgraphPlan& planAt(Pricing& pr, const Grid& g);
  void priceOrder(Pricing& pr, const SubgraphPlan& pl, const Grid& g, int tk, Cost lb, bool wsPruned);

  // Verify mode: a subgraph rejected at the largest granularity must be invalid at every
  // granularity of the space (k over the k-step counts of every MatMul's K); counts violations.
  void verifyInvalid(const std::vector<OpId>& ops, const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                     const Space& s);

  const Problem& p_;
  const ModelOptions& m_;
  const ExactOptions& o_;
  const Scale& sc_;
  ExactStats& st_;
  const std::function<bool()>& stop_;
};

// ---------------------------------------------------------------------------------------------
// The shortest-path search.

struct SubInfo {
  u64 ops = 0;
  std::vector<OpId> list;  // topological order
  u64 produced = 0, outputs = 0, retainable = 0, need = 0, go = 0;
  i64 giElems = 0, goElems = 0;
  Cost computeLb = 0;
};

struct StateKey {
  u64 cov, wr, ret;
  bool operator==(const StateKey&) const = default;
};
// Hash of three 64-bit words (state and price keys).
inline size_t hash3(u64 a, u64 b, u64 c) {
  u64 h = a * 0x9E3779B97F4A7C15ULL;
  h ^= (b + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2));
  h ^= (c * 0xC2B2AE3D27D4EB4FULL + (h << 6) + (h >> 2));
  return static_cast<size_t>(h ^ (h >> 31));
}
struct StateHash {
  size_t operator()(const StateKey& k) const { return hash3(k.cov, k.wr, k.ret); }
};
struct PriceKey {
  int s;
  u64 rin, rout;
  bool operator==(const PriceKey&) const = default;
};
struct PriceHash {
  size_t operator()(const PriceKey& k) const { return hash3(static_cast<u64>(k.s), k.rin, k.rout); }
};

struct Edge {
  int s;
  u64 rin, rout;
};

class Solver {
 public:
  Solver(const Problem& p, const ModelOptions& m, const ExactOptions& o, const std::function<bool()>& stop,
         ExactResult& res, i128 L)
      : p_(p), m_(m), o_(o), stop_(stop), res_(res), gs_(p, m, o, sc_, res.stats, stop) {
    sc_.exact = L > 0;
    sc_.L = L > 0 ? L : 1;
  }
  void run();

 private:
  struct Node {
    StateKey key;
    Cost d;  // distance over the transitions' floors
    Cost b;  // the price of the same path (its transitions' best prices; kInf if one has none)
    Cost h;
    int parent;
    Edge edge;
    bool closed;
  };
  struct QItem {
    Cost f, d;
    int id;
    bool operator<(const QItem& o) const { return f != o.f ? f > o.f : d < o.d; }  // min f, then max d
  };

  // What one appended subgraph shares over its retained-out choices, from the expanded state.
  struct Step {
    int from;      // the expanded node
    StateKey k;    // its state
    Cost d;        // its distance
    int si;        // the subgraph (subs_)
    i128 retSize;  // elements retained into it
    i128 loadEl;   // elements it must load (graph inputs, tensors not retained in)
    Cost lbS;      // its price, at least (before choosing what it retains)
    u64 cov2;      // the ops covered after it
    Cost h2;       // the heuristic after it
  };
  // How the A* search ended.
  struct SearchEnd {
    bool proven = false, stopped = false;
    bool bounded = false;    // full space: a goal's floor path popped below the incumbent
    Cost relaxed = kInf;     // its floor distance: the least any schedule costs
    Cost frontierLb = kInf;  // bound on what an interrupted expansion could still reach
  };

  // setup's steps, then run's (exact.cpp and exact_search.cpp say what each does).
  void setup();
  void indexTensors();
  void opFloors();
  void enumerateSubgraphs();
  bool describeSubgraph(u64 mask, SubInfo& s) const;
  Cost subgraphComputeLb(const SubInfo& s, TensorId ref) const;
  void offer(const Schedule& s);
  void offerIncumbents();
  void chainIncumbent();
  SearchEnd search();
  void expand(int curId);
  void appendSubgraph(const Step& x);
  std::vector<u64> subsetScratch_;  // appendSubgraph's retained-out sets (reused)
  std::vector<int> bitScratch_;
  void reach(const Step& x, const StateKey& nk, const Edge& e, Cost nd, Cost nb);
  void answer(const SearchEnd& end);
  Cost heuristic(u64 cov, u64 wr) const;
  Cost hOf(u64 cov, u64 wr) const { return o_.verify ? Cost(0) : heuristic(cov, wr); }  // none in verify mode
  Cost price(const Edge& e, Cost cap);
  const PriceEntry& entry(const Edge& e) { return memo_[PriceKey{e.s, e.rin, e.rout}]; }
  std::vector<TensorId> tensorsOf(u64 bits) const;
  std::vector<Edge> pathTo(int id) const;
  Schedule build(const std::vector<Edge>& path);
  bool goal(const StateKey& k) const { return k.cov == allOps_ && (goMask_ & ~k.wr) == 0; }
  Cost traffic(i128 elems) const { return sc_.of(elems, p_.bandwidth, true); }

  const Problem& p_;
  const ModelOptions& m_;
  const ExactOptions& o_;
  const std::function<bool()>& stop_;
  ExactResult& res_;
  Scale sc_;
  GranSearch gs_;

  int n_ = 0;
  u64 allOps_ = 0, goMask_ = 0;
  std::vector<int> bitOf_;  // tensor -> bit (produced tensors), -1 otherwise
  std::vector<TensorId> tensorOfBit_;
  std::vector<i64> bitSize_;
  std::vector<Cost> opLb_;                        // heuristic compute per uncovered op
  std::vector<std::pair<u64, i64>> graphInputs_;  // (consumer ops mask, size)
  std::vector<SubInfo> subs_;
  std::unordered_map<PriceKey, PriceEntry, PriceHash> memo_;

  std::vector<Node> nodes_;
  std::unordered_map<StateKey, int, StateHash> index_;
  std::priority_queue<QItem> pq_;  // the A* open list
  Cost ub_ = kInf;
  std::vector<Edge> incPath_;
  bool incIsPath_ = false;  // else incSched_
  Schedule incSched_;       // an incumbent from outside the search (the user's, greedy fusion)
};

}  // namespace mlsys::exact_detail
