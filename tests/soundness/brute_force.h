// A brute-force reference optimum over a documented finite space of schedules
// (tests/soundness/README.md). It shares no code with the lower bound: it only enumerates
// candidates and prices each with the law (planSubgraph + costSubgraph), and re-checks the
// schedule it returns with evaluateSchedule. Every number it reports is the cost of a valid
// schedule, so a sound lower bound can never exceed it.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "cost/model/model.h"
#include "cost/model/problem.h"
#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"

namespace mlsys::soundness {

struct Space {
  // Sides tried for w (from the grid width W), h (from the grid height H) and k (from each K of
  // the subgraph's MatMuls; k = 1 without MatMul), all within [1, cap] (cap = N for w and h; for
  // k, N and every MatMul's K, or only the K under k_limit=reduction):
  //  - for the first `tile_counts` tile counts c (from the least, ceil(dim / cap)): the smallest
  //    and the largest side with ceil(dim / side) = c (cap itself for c = 1);
  //  - with `divisors`, every divisor of dim up to cap;
  //  - the values of `fixed_sides` up to cap, cap itself, dim if <= cap;
  //  - `random_sides` values drawn uniformly in [1, cap].
  int tile_counts = 3;
  bool divisors = true;
  std::vector<i64> fixed_sides = {128, 64, 32, 16, 8};
  int random_sides = 2;
  // At most this many (w, h, k) triples per subgraph (beyond it: half the budget on triples of
  // near-equal sides, the other half drawn from the rest, seeded), plus with `with_ci` every
  // triple of Space::ci() (so that this space's granularities include ci()'s).
  int max_grans = 400;
  bool with_ci = false;
  // Orders, in this order (duplicates dropped): raster, the row and column snakes, column-major
  // and the reverses of all four, with `corners` the same eight from the other three corners,
  // then `random_orders` random permutations, or every permutation when the grid has at most
  // `all_orders_up_to` tiles. Explicit orders (all but raster and the snakes) only up to
  // `max_custom_tiles` tiles.
  int all_orders_up_to = 6;
  int random_orders = 3;
  bool corners = true;
  i64 max_custom_tiles = 4096;
  // A plan whose step classes are not exact is priced by walking every step: such a plan is
  // skipped above `max_walk_steps` steps, and priced in the first max(1, walk_budget / steps) of
  // its orders only (raster first, then the snakes, ...).
  i64 max_walk_steps = 1 << 18;
  i64 walk_budget = i64{1} << 40;
  // Whole schedules: at most this many tensors in one tensors_to_retain list.
  int max_retained = 64;
  uint64_t seed = 1;

  static Space ci();    // cheap: thousands of small graphs in a CI test
  static Space deep();  // rich: long sweeps and the fuzzer
};

inline Space Space::ci() {
  Space s;
  s.tile_counts = 2;
  s.divisors = false;
  s.fixed_sides = {64, 32, 16, 8};
  s.random_sides = 0;
  s.max_grans = 80;
  s.all_orders_up_to = 3;
  s.random_orders = 0;
  s.corners = false;
  s.max_custom_tiles = 256;
  s.max_walk_steps = 1 << 11;
  s.walk_budget = 1 << 12;
  s.max_retained = 2;
  return s;
}

inline Space Space::deep() {
  Space s;
  s.tile_counts = 4;
  s.max_grans = 400;
  s.with_ci = true;
  s.all_orders_up_to = 6;
  s.random_orders = 3;
  s.max_walk_steps = 1 << 13;
  s.walk_budget = 1 << 14;
  return s;
}

// The cheapest (granularity, order) of one subgraph with given retained sets, or of one op set
// over every retained-in / retained-out set (bestSubgraph).
struct SubgraphBest {
  bool valid = false;  // false: no candidate of the space is valid
  double latency = std::numeric_limits<double>::infinity();
  i128 num = 0, den = 1;  // latency = num / den exactly
  std::vector<OpId> ops;  // topological order
  Granularity gran;
  Traversal trav;
  std::vector<TensorId> retained_in, retained_out;  // sorted
  long long cost_calls = 0;                         // costSubgraph calls made
};

// The cheapest price of `ops` (any order; listed topologically) with exactly these retained sets,
// over the space's granularities and orders.
SubgraphBest priceSubgraph(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                           const std::vector<TensorId>& retained_in, const std::vector<TensorId>& retained_out,
                           const Space& space);

// The same, also over every retained-in set (any subset of the boundary inputs that some op
// produces and that are not graph outputs) and every retained-out set (any subset of the tensors
// the ops produce that are not graph outputs).
SubgraphBest bestSubgraph(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops, const Space& space);

struct GraphBest {
  bool found = false;     // a complete valid schedule was found (then it is the space's cheapest)
  bool finished = false;  // the search ended within its time limit
  double total = std::numeric_limits<double>::infinity();
  i128 num = 0, den = 1;  // total = num / den exactly
  Schedule schedule;      // re-checked by evaluateSchedule: valid, the same total
  std::vector<double> latencies;
  long long states = 0, transitions = 0, priced = 0, cost_calls = 0;
  double seconds = 0;
};

// The cheapest complete valid schedule of the space: Dijkstra over (ops covered, tensors written
// to slow memory, tensors retained by the last subgraph); a step is any connected op set whose
// inputs are available, with any retained-out set, at its cheapest (granularity, order) with the
// previous retained set as retained-in. time_limit_s <= 0: no limit; past it the search stops
// with finished = found = false. Throws std::invalid_argument for graphs past 20 ops or 64
// tensors, and std::logic_error if evaluateSchedule disagrees with the schedule it found.
GraphBest bestSchedule(const Problem& p, const ModelOptions& m, const Space& space, double time_limit_s);

// The candidate lists (exposed for tests).
std::vector<i64> sideCandidates(i64 dim, i64 cap, const Space& space, uint64_t salt);
std::vector<Granularity> granularityCandidates(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                                               const Space& space);
std::vector<Traversal> orderCandidates(i64 ntw, i64 nth, const Space& space);

}  // namespace mlsys::soundness
