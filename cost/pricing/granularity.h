// Choosing the granularity [w,h,k] (and the traversal) of one subgraph: the one place that
// knows the candidate values, the reduction limit of a subgraph and how to pick among priced
// candidates. Every caller picks with chooseCheapest() and differs only in its candidates and
// its pricing function:
//   firstFitting           the halvings of the native size, exact cost: the first valid one
//   bestGranularity        every candidate x traversal, exact cost (the baseline)
//   bestGranularityCached  trimmed candidates, the search's cache read (beam, greedy fusion)
//   repairGranularity      a granularity and its halvings, cached cost (moves)
#pragma once
#include <limits>
#include <type_traits>
#include <vector>

#include "cost/pricing/incremental.h"

namespace mlsys {

// V8: the largest k a subgraph allows, min(N, K of each of its MatMuls); 0 if it has no MatMul
// (k is then ignored, and written as 1).
i64 reductionLimit(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops);

// The smallest side with as many tiles over `dim` as `side` has: ceil(dim / ceil(dim / side)),
// the "balanced" size that wastes least.
i64 balancedSide(i64 dim, i64 side);

// Candidate values for a tile side over a dimension of length `dim` (all <= min(N, dim)),
// largest first: powers of two, min(N, dim), and "balanced" sizes ceil(dim / ceil(dim / v)) that
// avoid waste.
std::vector<i64> sideCandidates(i64 dim, i64 N);

// The k values above N worth trying (k_limit=reduction lets k reach the smallest K of the
// subgraph's MatMuls; empty under the spec and when that K <= N): for each MatMul's K and each
// k-step count n, the smallest k with that count, ceil(K / n), where it lies in (N, kmax]. Larger
// first, at most `most`. A heuristic set, not a dominance claim: a larger k with the same step
// count has the same number of steps, larger strips (fewer tile sides fit, V11) and a shorter
// last step (L6). The exact solver does not use it (it tries every k, engine/exact).
std::vector<i64> kAboveNative(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                              size_t most = std::numeric_limits<size_t>::max());

// The k values a chooser tries for a subgraph: the side candidates of min(N, kmax) (at most
// `most` of them; {1} without a MatMul), then kAboveNative (at most `most`). Under
// k_limit=reduction it holds every value it holds under the spec, so the permissive search
// never looks at fewer schedules.
std::vector<i64> kChoices(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                          size_t most = std::numeric_limits<size_t>::max());

// Every [w,h,k] of the side candidates of a W x H grid and the k values `ks`, k outermost, then
// w, then h; keeping at most `most_wh` values of w and of h.
std::vector<Granularity> granularityCandidates(i64 W, i64 H, const std::vector<i64>& ks, i64 N,
                                               size_t most_wh = std::numeric_limits<size_t>::max());

// The largest v in [1, top] with fits(v), for a predicate that holds up to some value and not
// above it (V11: the working set grows with each tile side and with k); 0 if fits(1) fails.
// Binary search: about log2(top) calls.
template <class F>
i64 largestFitting(i64 top, F&& fits) {
  i64 lo = 0, hi = top;  // fits(lo) holds (lo = 0: none yet); every v > hi fails
  while (lo < hi) {
    const i64 mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// g, then up to n times the largest side halved (rounded up; k first on ties, as it leaves the
// grid unchanged), ending early at [1,1,1].
std::vector<Granularity> halvings(Granularity g, int n);

// Values the granularity move draws a side from (repeats weight them): powers of two up to
// `top`, `top`, and the balanced sizes ceil(dim / t) <= top for t = 1..64 tiles.
std::vector<i64> niceSides(i64 dim, i64 top);

// The chooser. Prices the candidates in order with price(c), which returns anything with
// `bool valid` and `double latency`, and keeps the cheapest valid one (the first among equals).
// After each candidate, stop(c, its price, the best so far) may end the scan.
template <class C, class P>
struct Chosen {
  bool found = false;
  C cand{};
  P price{};
};

struct NeverStop {
  template <class... A>
  bool operator()(const A&...) const {
    return false;
  }
};

template <class C, class PriceFn, class StopFn = NeverStop>
auto chooseCheapest(const std::vector<C>& cands, PriceFn&& price, StopFn&& stop = {}) {
  using P = std::decay_t<std::invoke_result_t<PriceFn&, const C&>>;
  Chosen<C, P> best;
  for (const C& c : cands) {
    P pr = price(c);
    if (pr.valid && (!best.found || pr.latency < best.price.latency)) best = {true, c, pr};
    if (stop(c, pr, best)) break;
  }
  return best;
}

// A cached cost as the chooser sees it (CachedPrice: cost/pricing/incremental.h).
inline CachedPrice priceOf(const CachedCost& c) { return {c.valid, c.rule, c.latency}; }

// The first valid granularity for op o alone (nothing retained) among the halvings of the
// largest one, [min(N, W), min(N, H), min(N, K)], by exact cost; [1,1,1] if none is.
Granularity firstFitting(const Problem& p, const ModelOptions& m, OpId o);

struct GranChoice {
  bool found = false;
  Granularity g;
  Traversal trav;
  SubgraphCost cost;
};

// Best valid granularity and traversal (raster, row-snake, col-snake) for a subgraph with the
// given retained-in / retained-out sets, by exact cost, over every candidate. `stop` (when set)
// is polled before each candidate and within a step walk: past it, the best priced so far.
GranChoice bestGranularity(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                           const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                           const std::function<bool()>& stop = {});

// The same choice by descent over the same candidate lists (sides and k in decreasing order): from
// the first valid point of the largest-side-first path, moves of one list position on one side or
// on w and h together, to the cheapest neighbour while it lowers the latency. Dozens of pricings
// instead of thousands, a local optimum of the same space: the baseline's walk on large graphs
// (search.baseline_full_walk_ops).
GranChoice bestGranularityDescent(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                                  const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                                  const std::function<bool()>& stop = {});

// The same choice in the context of a search (costs read from the worker's cache, not added to
// it: IncrementalEvaluator::peek), over trimmed
// candidate sets (4 w x 4 h x kChoices(5), after `extra`; for each k above N also the two
// largest w, each with the largest h that fits, and that h balanced) in raster order, then the
// snakes for the winner. False if none is valid; otherwise sets sg.gran and sg.trav.
bool bestGranularityCached(IncrementalEvaluator& ev, SubgraphSched& sg, const std::vector<TensorId>& rin,
                           const std::vector<Granularity>& extra = {});

// Best valid granularity among cheap variants of sg.gran (k clamped to the reduction limit, six
// halvings, the limit itself) at sg's traversal, by cached cost; stops early at a rule no
// granularity fixes and once candidates get much smaller than the best. False if none is
// valid. Updates sg.gran.
bool repairGranularity(IncrementalEvaluator& ev, SubgraphSched& sg, const std::vector<TensorId>& rin);

}  // namespace mlsys
