// An exact solver for small graphs: the cheapest schedule over a stated space, with a proof
// (the search completed) or, when stopped, the best complete schedule found so far and a lower
// bound over the same space.
//
// THE SPACE. A schedule is a sequence of subgraphs. Each subgraph is
//   - a set of ops, connected through tensors produced and consumed inside it (V4), listed in
//     topological order (V3), whose boundary inputs are available (V5: a graph input, retained
//     by the previous subgraph, or written to slow memory by an earlier subgraph). Ops may repeat
//     across subgraphs (recomputation, V2) WITHOUT LIMIT (the search state below makes a limit
//     unnecessary); `max_subgraph_ops` can cap the size of one subgraph (default: no cap);
//   - retaining ANY subset of the tensors it produces that the spec allows (V6; never a graph
//     output, V7/A-9), including tensors consumed inside it and tensors nobody reads later;
//   - at granularity (w, h, k) where w ranges over {ceil(W/n) : n >= 1, ceil(W/n) <= min(N, W)},
//     i.e. for every achievable count of tile columns the SMALLEST side giving that count, and
//     likewise h over the rows and k over ceil(K_acc/n) <= min(N, K of every MatMul in the
//     subgraph) (every k-step count); plus, so that V9 can be met, w = K (h = K) of every MatMul
//     whose LHS (RHS) a Pointwise in the subgraph produces, when <= N (beyond W it still gives
//     one tile column, clipped to W, E1: until 2026-11-29 such a side was left out, and with it
//     every subgraph that needs it, a false certificate), and the largest k, min(N, K of every
//     MatMul). Pointwise-only subgraphs use k = 1. Not a
//     trimmed list: every tile count and every k-step count is tried (pruned only by sound lower
//     bounds, below).
//     RESTRICTION: among sides with the same count only the smallest (and the K values above) is
//     tried; e.g. for W = 256, w = 100 (3 columns of 100, 100, 56) is not, w = 86 (86, 86, 84) is.
//     The sides of one count differ only in the clipped last tile, but that can matter (edge
//     tiles change the per-step max and the working set). `every_side` lifts the restriction:
//     then the space has every (w, h, k) that V8 allows.
//   - in traversal order raster, row-snake or column-snake (the snakes only on grids of at least
//     2x2 tiles, where they differ from raster, and of at most 2^20 tiles, like the search),
//     each from the first tile or (`mirrors`, grids of at most 4096 tiles) mirrored along an
//     axis whose last tile is clipped (mirroring along an axis of equal tiles maps the grid onto
//     itself with the same tile sizes: the same price);
//   - excluded: subgraphs that need the step walk (SubgraphPlan::fast_ok false) with more than
//     2^16 steps (the search's limit, cost/pricing/incremental.h kMaxSearchWalkSteps).
//
// EXACTNESS. The cost of a subgraph depends only on (ops, w, h, k, traversal, retained-in set,
// retained-out set): fast memory is flushed between subgraphs except the retained tensors (spec
// L3), so planSubgraph + costSubgraph see nothing else. The validity of the rest of a sequence
// depends only on the ops covered so far (V2), the tensors in slow memory (V5c, V7) and the set
// retained by the last subgraph (V5b, and it is the next subgraph's retained-in set). So the
// cheapest schedule is a shortest path over states (ops covered at least once, tensors written,
// tensors retained by the last subgraph) from (none, none, none) to any state covering every op
// with every graph output written, where a transition appends one subgraph S with retained-out
// set R' and costs min over (w, h, k, traversal) of the exact price of (S, R, R'). Recomputation
// is a transition that covers nothing new; the state space is finite and the costs are >= 0, so
// the shortest path exists without bounding repetitions.
//
// ALGORITHM. A* over those states with a consistent heuristic (remaining unavoidable compute of
// the uncovered ops, or the remaining graph-input loads plus graph-output stores, whichever is
// larger), pruned by an incumbent (the best complete schedule so far: `incumbent` if given, the
// engine's greedy construction (baseline + greedy and MatMul-chain fusion, engine/construct/construct.h),
// and the chain of single ops in topological order, each at its best granularity). A goal
// reached on a transition becomes the incumbent at once, so a stopped search returns the best
// schedule found. An incumbent from outside the search may lie outside the space; the result is
// then the better of it and the space's optimum, and "proven" means nothing in the space beats it.
// Transition prices are memoised per (S, R, R'); each is the exact minimum over the granularity
// space, enumerated in order of a sound per-(w, h, k, traversal) lower bound (compute of every
// tile, reloads of every slice template a single-template tensor must do under that traversal,
// stores, and the capacity at the first step) and priced with planSubgraph + costSubgraph until
// the bound reaches the best price (or what the transition could still afford under the
// incumbent). A subgraph that planSubgraph rejects at the largest granularity is invalid at
// every granularity (V8/V9/E2 only get harder with smaller w, h, k), so it is dropped at once.
// All arithmetic is exact (latencies are rationals over a common denominator, 128-bit), unless
// that denominator does not fit (then `exact_arithmetic` is false and comparisons are rounded).
//
// Every returned schedule has been re-checked by the full evaluator (evaluateSchedule); its
// latency is the evaluator's.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "cost/pricing/evaluator.h"
#include "engine/base/limits.h"

namespace mlsys {

struct ExactOptions {
  int max_ops = kExactMaxOps;  // larger problems are not attempted (only `incumbent` is returned)
  int max_subgraph_ops = 0;    // most ops in one subgraph (0 = no limit)
  bool snakes = true;          // also try row-snake and column-snake orders
  // Also start each order from the other corners (mirrored) along an axis whose last tile is
  // clipped, on grids of at most 4096 tiles: the clipped tile first, or the snakes' turns on
  // the full rows (columns) instead of the clipped one.
  bool mirrors = true;
  // Widen the granularity space to EVERY w <= min(N, W), h <= min(N, H), k <= min(N, K...)
  // (not only the smallest side per count): the full V8 range, slower.
  bool every_side = false;
  // THE SPEC'S WHOLE SPACE (a certificate): every (w, h, k) that V8 allows (sides beyond the
  // output's W or H up to N give the same grid and tiles as W or H, and only V9 can tell them
  // apart: the V9 sides are in; k up to K under
  // k_limit=reduction) and EVERY tile order (V10), for any number of steps. Raster, snakes and
  // mirrored starts are priced; every other order is bounded by cost/bound/any_order.h's floor, so
  // a transition carries two figures: the best price found (achievable) and a floor (no
  // configuration of the space costs less). The A* runs on the floors; `proven_optimal` then
  // means optimal over the spec's whole space, and when a cheaper floor path completes first
  // the result is Bounded: the best schedule found and `lower_bound`, the least any schedule
  // can cost. Granularities are visited by tile counts (nw, nh, nk), each count's bound
  // shared by all its sides, and a count's sides are expanded only while it can beat the best.
  // `every_side` and `verify` are ignored in this mode.
  bool full_space = false;
  const Schedule* incumbent = nullptr;  // optional valid schedule to start from (e.g. from solve)
  bool greedy_incumbent = true;         // also start from the engine's greedy construction (construct.h)
  // For tests: no pruning by lower bounds anywhere (every configuration of every transition is
  // priced, the search is Dijkstra without the heuristic); every bound the normal mode prunes
  // with is checked against the exact prices instead, and each failure counts in lb_violations.
  bool verify = false;
  // Asked before each configuration is priced (one costSubgraph call, a configs_priced): false
  // stops the search as `stop` does, even while the first incumbent is built (the search's
  // --max-evals budget: SearchRun::takeEvaluations). Empty: every pricing is allowed.
  std::function<bool()> take_pricing;
};

struct ExactStats {
  int64_t states_generated = 0;  // distinct search states reached
  int64_t states_expanded = 0;
  int64_t transitions = 0;        // (state, subgraph, retained-out) pairs considered
  int64_t subgraphs_priced = 0;   // distinct (subgraph, retained-in, retained-out) granularity searches
  int64_t plans = 0;              // planSubgraph calls
  int64_t configs_priced = 0;     // costSubgraph calls (one granularity and traversal each)
  int64_t incumbent_updates = 0;  // improvements found during the search
  int64_t lb_violations = 0;      // exact prices below a bound used for pruning (must stay 0)
  int connected_subgraphs = 0;    // connected op sets enumerated
  double seconds = 0;
};

// How the exact solver ended.
enum class ExactStatus {
  Optimal,     // the search completed: nothing in the space is cheaper
  Stopped,     // `stop` fired first (the best found so far is returned)
  TooLarge,    // more than ExactOptions::max_ops ops: not attempted
  NoSchedule,  // the space holds no valid schedule
  Bounded,     // full_space: the search completed with a gap (lower_bound < latency)
  Error,       // an internal error (ExactResult::message says which)
};
// "optimal", "stopped", "too_large", "no_schedule", "error": the name in --json outputs.
inline const char* exactStatusName(ExactStatus s) {
  switch (s) {
    case ExactStatus::Optimal: return "optimal";
    case ExactStatus::Stopped: return "stopped";
    case ExactStatus::TooLarge: return "too_large";
    case ExactStatus::NoSchedule: return "no_schedule";
    case ExactStatus::Bounded: return "bounded";
    case ExactStatus::Error: return "error";
  }
  return "?";
}

struct ExactResult {
  bool found = false;  // a schedule is returned (false only for an invalid problem)
  Schedule schedule;
  double latency = 0;           // the full evaluator's total for `schedule`
  bool proven_optimal = false;  // the search completed: nothing in the space is cheaper
  double lower_bound = 0;       // no schedule in the space is cheaper (== latency when proven)
  bool exact_arithmetic = true;
  ExactStatus status = ExactStatus::Stopped;
  std::string message;  // for Error: what went wrong ("" otherwise)
  ExactStats stats;
};

ExactResult solveExact(const Problem& p, const ModelOptions& m, const ExactOptions& opt,
                       const std::function<bool()>& stop);

// The granularity chooser over the full range: the cheapest (w, h, k, traversal) of ONE subgraph
// (ops in topological order, retained-in and retained-out sets) over the space above - every
// tile count and k-step count (the smallest side per count, plus the V9 sides), raster or snake
// - enumerated in order of a sound lower bound and priced exactly until the bound reaches the
// best price; nothing is trimmed. found: a valid granularity was priced (false if the subgraph
// is invalid at every granularity); proven: it is the minimum (false when `stop` cut it short).
// `mirrors` adds the mirrored starts (ExactOptions::mirrors); off by default, as the order-aware
// beam calls it (its candidate library: not yet measured with them).
struct GranResult {
  bool found = false;
  bool proven = false;  // the minimum over the space
  Granularity g;
  Traversal trav;
  double latency = 0;
  int64_t configs_priced = 0;
};
GranResult exactGranularity(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                            const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
                            const std::function<bool()>& stop, bool snakes = true, bool mirrors = false);

}  // namespace mlsys
